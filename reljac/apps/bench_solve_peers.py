"""``reljac bench solve --peers``: the IK solvers a user would otherwise reach for, each handed the
same targets, the same seed (the middle of the joint limits) and the same budget as reljac's
:class:`~reljac.ik.Solver` in :mod:`reljac.apps.bench_solve`, and the statistics all share.

* TRAC-IK (``pytracik``): :func:`run_tracik`; its own success criterion (per axis, epsilon).
* pink iterated to convergence: :func:`run_pink`; stopped by the budget.
* ikpy: :func:`run_ikpy`; it has no time limit: each call runs to its end, and success within
  the budget is a success whose call took at most the budget.

Every peer not installed is None (the table leaves it out). A chain a peer cannot reproduce
(its joints, or its forward kinematics against Pinocchio's) is an ``{"error": ...}`` the table
shows in place of figures.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import warnings
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pinocchio as pin

from ..ik import RelativeFrameTask
from ..relative import Kinematics
from ..robot import Robot
from ..robots import resolve

TOL = 1e-5  # [m, rad] the protocol's tolerance on every axis
FK_AGREEMENT = 1e-9  # a peer's forward kinematics equals Pinocchio's to this, or its chain is not the same
FK_SAMPLES = 5

#: how each peer is configured (shown under the table)
CONFIGURED = {
    "trac_ik": "TRAC-IK (pytracik): solver_type Speed, timeout = the budget, epsilon 1e-5 (its per-axis "
               "criterion), joint limits handed over from Pinocchio",
    "pink": "pink: RelativeFrameTask (gain 1, lm_damping 1e-3), ConfigurationLimit (gain 0.5), daqp, dt = 1, "
            "iterated until |e| <= 1e-5 or the budget is spent",
    "ikpy": "ikpy: Chain.from_urdf_file along the URDF links base -> tip (cut at the tip, fixed joints "
            "inactive), its own URDF limits, inverse_kinematics_frame(orientation_mode='all') with its "
            "defaults (scipy least_squares); no timeout: success within the budget = success in a call that "
            "took at most the budget; success measured by reljac's error check at 1e-5",
}


def stats(times: list[float], ok: list[bool], at_all: list[bool], budget: float) -> dict[str, Any]:
    """The share solved within the budget [s] and at all, and the call times' mean, median, p95, p99."""
    t = np.array(times)
    within = [o and s <= budget for o, s in zip(ok, t, strict=True)]
    return {"queries": len(times), "within_budget": float(np.mean(within)),
            "at_all": float(np.mean(at_all)), "mean_s": float(t.mean()), "median_s": float(np.median(t)),
            "p95_s": float(np.percentile(t, 95)), "p99_s": float(np.percentile(t, 99))}


def chain_joints(robot: Robot, base: str, tip: str) -> list[tuple[int, int]]:
    """(q index, nq) of the moving joints between frames base and tip (base to tip), as TRAC-IK's
    chain: nq 1 (revolute, prismatic) or 2 (continuous: cos, sin)."""
    model = robot.model
    below = set(model.supports[model.frames[robot.frame_id(base)].parentJoint])
    chain = [j for j in model.supports[model.frames[robot.frame_id(tip)].parentJoint] if j not in below]
    return [(model.joints[j].idx_q, model.joints[j].nq) for j in chain if model.joints[j].nv == 1]


def chain_angles(q: np.ndarray, joints: list[tuple[int, int]]) -> np.ndarray:
    """The chain's joint angles (or positions) in Pinocchio's q: continuous joints as one angle."""
    return np.array([q[i] if n == 1 else np.arctan2(q[i + 1], q[i]) for i, n in joints])


def with_angles(q0: np.ndarray, joints: list[tuple[int, int]], angles: np.ndarray) -> np.ndarray:
    """q0 with the chain's joints at `angles` (the inverse of :func:`chain_angles`)."""
    q = q0.copy()
    for (i, n), a in zip(joints, angles, strict=True):
        if n == 1:
            q[i] = a
        else:
            q[i], q[i + 1] = np.cos(a), np.sin(a)
    return q


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """C-level writes to file descriptor 1 go to 2 meanwhile (Python's own stdout flushed first)."""
    sys.stdout.flush()
    saved = os.dup(1)
    try:
        os.dup2(2, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)


def run_tracik(robot: Robot, name: str, base: str, tip: str, targets: list[pin.SE3], q0: np.ndarray,
               budget: float) -> dict[str, Any] | None:
    try:
        import pytracik
    except ImportError:
        return None
    with stdout_to_stderr():  # KDL's parser prints its warnings to C's stdout (it would break --json)
        solver = pytracik.TRAC_IK(base, tip, resolve(name).urdf.read_text(), budget, TOL, pytracik.SolveType.Speed)
    joints = chain_joints(robot, base, tip)
    if pytracik.get_num_joints(solver) != len(joints):
        return {"error": f"its chain has {pytracik.get_num_joints(solver)} joints, Pinocchio's {len(joints)}"}
    # continuous joints: an angle in [-pi, pi] (every orientation); the others: Pinocchio's limits
    lower = [float(robot.lower_limits[i]) if n == 1 else -np.pi for i, n in joints]
    upper = [float(robot.upper_limits[i]) if n == 1 else np.pi for i, n in joints]
    pytracik.set_joint_limits(solver, lower, upper)
    seed = chain_angles(q0, joints)
    times, ok = [], []
    for T in targets:
        x, y, z = T.translation
        qx, qy, qz, qw = pin.Quaternion(T.rotation).coeffs()
        start = time.perf_counter()
        r = pytracik.ik(solver, seed, x, y, z, qx, qy, qz, qw)
        times.append(time.perf_counter() - start)
        ok.append(bool(r[0] >= 0))
    return stats(times, ok, ok, budget)


def run_pink(robot: Robot, base: str, tip: str, targets: list[pin.SE3], q0: np.ndarray,
             budget: float) -> dict[str, Any] | None:
    """pink iterated to convergence: its RelativeFrameTask (gain 1: full steps, dt = 1, its
    Levenberg-Marquardt damping 1e-3), its ConfigurationLimit (gain 0.5, as reljac's search), the QP
    solved by daqp; stopped when its error's position and orientation norms are at most tol or when
    the budget is spent (checked every step)."""
    try:
        import pink
        from pink.limits import ConfigurationLimit
        from pink.tasks import RelativeFrameTask as PinkRelativeFrameTask
    except ImportError:
        return None
    model = pin.Model(robot.model)  # pink adds attributes to the model it is given
    data = model.createData()
    task = PinkRelativeFrameTask(tip, base, position_cost=1.0, orientation_cost=1.0, lm_damping=1e-3, gain=1.0)
    limits = [ConfigurationLimit(model, config_limit_gain=0.5)]
    times, ok = [], []
    for T in targets:
        task.set_target(T)
        start = time.perf_counter()
        configuration = pink.Configuration(model, data, q0.copy())
        converged = False
        while time.perf_counter() - start < budget:
            e = task.compute_error(configuration)
            if np.linalg.norm(e[:3]) <= TOL and np.linalg.norm(e[3:]) <= TOL:
                converged = True
                break
            try:
                v = pink.solve_ik(configuration, [task], 1.0, solver="daqp", limits=limits, safety_break=False)
            except pink.exceptions.NoSolutionFound:
                break
            configuration.integrate_inplace(v, 1.0)
        times.append(time.perf_counter() - start)
        ok.append(converged)
    return stats(times, ok, ok, budget)


def urdf_path(urdf: Path, base: str, tip: str) -> tuple[list[str], list[str]]:
    """The URDF's elements from link base to link tip, [base, joint, link, ..., joint, tip]
    (ikpy's base_elements), and the types of those joints."""
    root = ET.parse(urdf).getroot()
    parent = {j.find("child").attrib["link"]: (j.attrib["name"], j.find("parent").attrib["link"],  # type: ignore[union-attr]
                                               j.attrib["type"]) for j in root.findall("joint")}
    elements, link = [tip], tip
    types: list[str] = []
    while link != base:
        if link not in parent:
            raise KeyError(f"link {tip!r} is not below link {base!r} in {urdf.name}")
        joint, link, kind = parent[link]
        elements[:0] = [link, joint]
        types.insert(0, kind)
    return elements, types


def ikpy_chain(robot: Robot, name: str, base: str, tip: str) -> tuple[Any, str]:
    """(the ikpy chain from URDF link base to link tip, a note on how it was checked), or (None,
    why it is not the same chain). Checked: its active joints are Pinocchio's, and its forward
    kinematics equals Pinocchio's T_base_tip to FK_AGREEMENT on FK_SAMPLES random configurations."""
    import ikpy.chain

    urdf = resolve(name).urdf
    try:
        elements, types = urdf_path(urdf, base, tip)
    except KeyError as exc:
        return None, str(exc.args[0])
    mask = [False] + [kind != "fixed" for kind in types]  # ikpy's first link: its origin
    with warnings.catch_warnings():  # ikpy warns that fixed links are active by default: the mask below
        warnings.simplefilter("ignore")
        full = ikpy.chain.Chain.from_urdf_file(str(urdf), base_elements=elements, name=name)
        # past the tip, ikpy follows the first child link (panda_hand -> its TCP): cut there
        chain = ikpy.chain.Chain(full.links[:len(mask)], active_links_mask=mask, name=name)
    joints = chain_joints(robot, base, tip)
    if sum(mask) != len(joints):
        return None, f"its chain has {sum(mask)} moving joints, Pinocchio's {len(joints)}"
    rng = np.random.default_rng(0)
    worst = 0.0
    for _ in range(FK_SAMPLES):
        q = robot.random_configuration(rng)
        H = chain.forward_kinematics(chain.active_to_full(chain_angles(q, joints), np.zeros(len(mask))))
        worst = max(worst, float(np.abs(H - Kinematics(robot, q).relative_placement(base, tip).homogeneous).max()))
    if not worst <= FK_AGREEMENT:
        return None, f"its forward kinematics differs from Pinocchio's by {worst:.2g} (T_{base}_{tip} entries)"
    return chain, f"{len(joints)} joints + {len(types) - len(joints)} fixed, FK = Pinocchio's to {worst:.0e}"


def run_ikpy(robot: Robot, name: str, base: str, tip: str, targets: list[pin.SE3], q0: np.ndarray,
             budget: float) -> dict[str, Any] | None:
    """ikpy's inverse_kinematics_frame on each target from q0's chain angles (see CONFIGURED)."""
    try:
        import ikpy  # noqa: F401 - installed?
    except ImportError:
        return None
    chain, note = ikpy_chain(robot, name, base, tip)
    if chain is None:
        return {"error": f"chain not reproduced: {note}"}
    joints = chain_joints(robot, base, tip)
    seed = chain.active_to_full(chain_angles(q0, joints), np.zeros(len(chain.links)))
    check = RelativeFrameTask(base, tip)
    times, ok = [], []
    for T in targets:
        start = time.perf_counter()
        x = chain.inverse_kinematics_frame(T.homogeneous, initial_position=seed, orientation_mode="all")
        times.append(time.perf_counter() - start)
        check.set_target(T)
        q = with_angles(q0, joints, chain.active_from_full(x))
        ok.append(bool(np.all(np.isfinite(q))) and max(check.error_norms(Kinematics(robot, q)).values()) <= TOL)
    return {**stats(times, ok, ok, budget), "note": note}
