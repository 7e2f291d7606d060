"""One library's episodes of a `reljac bench ik --peers` case, for counting instructions per step.

Speed on a shared machine moves from minute to minute; instructions do not. Run under callgrind
with collection only inside each library's step (its C++ calls; the Python around them is left
out), then divide the total by the number of steps the tree shows:

    valgrind --tool=callgrind --toggle-collect='reljac::Step::velocity(*' \\
        --toggle-collect='reljac::Step::integrate(*' python benchmarks/peer_episodes.py reljac 0 5
    for PlaCo: --toggle-collect='placo::kinematics::KinematicsSolver::solve(*' \\
        --toggle-collect='placo::model::RobotWrapper::update_kinematics(*'
    callgrind_annotate --tree=caller callgrind.out.<pid> | grep '< .*whole_step'   # (N x): the steps

Arguments: library (reljac, PlaCo, pink), case index in reljac.apps.bench_peers.CASES (0 dual_arm,
1 Baxter, 2 Allegro pinch), number of targets. Needs an unstripped core for reljac's symbols
(the link step of the build without its strip). Not a test.
"""

from __future__ import annotations

import sys
import warnings

from reljac.apps import bench_peers
from reljac.apps.bench_peer_libs import ADAPTERS
from reljac.collision import CollisionModel


def main(library: str, case_index: int, targets: int) -> None:
    warnings.simplefilter("ignore")
    case = bench_peers.CASES[case_index]
    robot = bench_peers.load(case)
    if robot is None:
        raise SystemExit(f"robot '{case.robot_name}' not installed (pip install example-robot-data)")
    model = CollisionModel(robot)
    problems = bench_peers.make_problems(case, robot, model if case.collision else None, targets)
    peer = ADAPTERS[library](robot, bench_peers.DT, None)
    run = bench_peers.run_library(peer, robot, problems, None)
    print(f"{library} on {case.robot_name}: {len(run['times'])} timed steps, top level met in "
          f"{sum(e['top_met'] for e in run['episodes'])} of {targets}")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
