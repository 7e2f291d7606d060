"""Solve medians of the hierarchy with inequality levels: compiled (src/core/inequality.cpp) vs its
Python specification (reljac.ik.solvers.inequality), on a Talos-sized problem (issue 29, item 4).

Run ``python benchmarks/inequality_measure.py [PROBLEMS] [RUNS]`` (needs example-robot-data). The
problems are real ones: Talos by name, whole body (floating base, nv 38), four levels, two of them
holding inequalities: feet held (12 rows) > the grippers' relative pose kept within a box (+-3 cm,
+-0.1 rad: 6 inequality rows, the box starting 5 cm off its target so rows are active) > lead
gripper and horizontal CoM (8 rows) > posture with a joint-centring band (32 rows, masked
floating base), under the joint limits and the support region. The controller steps on the
Python backend (bounded tasks run there) and each solve's arguments, ``(levels, lo, hi, C, d,
policy)``, are recorded for PROBLEMS steps (default 40); every recorded solve is then timed RUNS
times (default 30) by each solver, and the median over all of them is printed, with the load
average (a shared 2-core machine: figures move with it). Three compiled figures: through
``reljac.ik.solvers.backend`` (the Python call, argument conversion and reports included), the binding's
call alone, and the solve inside C++ (``repeat``: solves in a row with one workspace, per solve).
Not a test: speed is measured, not asserted. It also prints the largest |v_python - v_compiled|
over the recorded solves (about 1e-11 since each row's rounding allowance at a level's start is its
own and a level starts from the working set the level above ended with: before, the floating
base's bounds of 1.8e308 made every other hard row count as held at the start, and the backends
differed by up to 5.3 on the band level).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

from reljac.apps.bench_inequality import recorded_solves
from reljac.ik.solvers.backend import core, solver

sys.path.insert(0, str(Path(__file__).resolve().parent))
from step_measure import median_us

python_solve, compiled_solve = solver("python"), solver("compiled")  # (the compiled core is needed)


def talos_problems(count: int) -> tuple[list[tuple], int]:
    """The recorded solves of `count` steps of the bounded Talos stack (the `reljac bench ik`
    table's, reljac.apps.bench_inequality), and nv."""
    made = recorded_solves(count)
    if made is None:
        raise SystemExit("needs Talos (example-robot-data)")
    robot, recorded = made
    return recorded, robot.nv


def main(problems: int = 40, runs: int = 30) -> None:
    recorded, nv = talos_problems(problems)
    levels, *_ = recorded[0]
    rows = [level.rows if level.A is not None else int(np.count_nonzero(level.mask)) for level in levels]
    bounded = sum(level.bounded for level in levels)
    worst = 0.0
    for args in recorded:  # the two agree on what they time
        (v_py, _), (v_c, _) = python_solve(*args), compiled_solve(*args)
        worst = max(worst, float(np.abs(v_py - v_c).max()))
    python = [median_us(lambda a=args: python_solve(*a), max(3, runs // 3)) for args in recorded]
    compiled = [median_us(lambda a=args: compiled_solve(*a), runs) for args in recorded]
    binding, inner = [], []
    for levels, lo, hi, C, d, policy in recorded:
        call = dict(As=[lv.A for lv in levels], bs=[lv.b for lv in levels],
                    identity_scales=[lv.identity_scale or 0.0 for lv in levels], masks=[lv.mask for lv in levels],
                    extra_damping=[lv.extra_damping for lv in levels], lo=lo, hi=hi,
                    C=np.zeros((0, nv)) if C is None else C, d=np.zeros(0) if d is None else d,
                    threshold=policy.threshold, max_damping=policy.max_damping,
                    lowers=[lv.lower for lv in levels], uppers=[lv.upper for lv in levels])
        binding.append(median_us(lambda c=call: core().solve_hierarchy(**c), runs))
        one = median_us(lambda c=call: core().solve_hierarchy(**c, repeat=1), runs)
        many = median_us(lambda c=call: core().solve_hierarchy(**c, repeat=21), max(3, runs // 3))
        inner.append((many - one) / 20.0)
    load = os.getloadavg()
    print(f"Talos whole body, nv {nv}: {len(levels)} levels of {rows} rows, {bounded} bounded; "
          f"{len(recorded)} recorded solves; largest |v_python - v_compiled| {worst:.1e}")
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} (2 cores)")
    print(f"{'solver':44s} {'median [us]':>12s} {'vs Python':>10s}")
    base = float(np.median(python))
    for name, values in (("Python (reljac.ik.solvers.inequality)", python),
                         ("compiled, through reljac.ik.solvers.backend", compiled),
                         ("compiled, the binding's call", binding),
                         ("compiled, inside C++ (repeat)", inner)):
        median = float(np.median(values))
        print(f"{name:44s} {median:12.1f} {base / median:9.1f}x")


if __name__ == "__main__":
    main(*(int(x) for x in sys.argv[1:3]))
