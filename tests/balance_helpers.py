"""Balance tests' helpers: independent oracles (the centre of mass summed body by body with
Pinocchio's forward kinematics, the distance to a support region's edges from a brute-force hull)
and the Talos reaching run several modules use.

The oracles never go through reljac.mass, reljac.relative or reljac.support: they are what the
tests check.
"""

from __future__ import annotations

import itertools

import numpy as np
import pinocchio as pin


def bodies_com(model: pin.Model, q: np.ndarray, extra=()) -> tuple[float, np.ndarray]:
    """(M, c): the mass [kg] and centre of mass (3,) [m] in the world of every body of `model`
    (joint 0's too: the bodies welded to the world), plus `extra` point masses ((m, p_w) pairs),
    as sum m_i c_i / sum m_i with c_i = T_wi * lever_i from pin.forwardKinematics."""
    data = model.createData()
    pin.forwardKinematics(model, data, q)
    masses = [model.inertias[j].mass for j in range(model.njoints)] + [m for m, _ in extra]
    points = [data.oMi[j].act(model.inertias[j].lever) for j in range(model.njoints)] + [p for _, p in extra]
    M = float(np.sum(masses))
    return M, np.einsum("i,ij->j", np.array(masses), np.array(points)) / M


def hull_edges(points: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """(normals (n, 2), offsets (n,)): the outward half-planes n . x <= h of the convex hull of
    points (k, 2), by brute force: the line through two points is an edge's when every point is on
    its inner side (within `tol` [m]). Duplicate lines are kept (harmless for a minimum)."""
    normals, offsets = [], []
    for a, b in itertools.combinations(np.asarray(points, dtype=float)[:, :2], 2):
        d = b - a
        length = np.linalg.norm(d)
        if length < 1e-9:
            continue
        n = np.array([d[1], -d[0]]) / length
        for sign in (1.0, -1.0):
            if np.all(sign * (points[:, :2] @ n) <= sign * (a @ n) + tol):
                normals.append(sign * n)
                offsets.append(sign * (a @ n))
    return np.array(normals), np.array(offsets)


def distance_inside(points: np.ndarray, c: np.ndarray) -> float:
    """[m] the distance from c (x-y used) to the nearest edge line of the hull of points (k, 2 or
    3), > 0 inside."""
    normals, offsets = hull_edges(np.asarray(points)[:, :2])
    return float(np.min(offsets - normals @ np.asarray(c)[:2]))


def contact_points(model: pin.Model, q: np.ndarray, contacts) -> np.ndarray:
    """The world points (k, 3) of SupportContact objects at q, from pin.framesForwardKinematics."""
    data = model.createData()
    pin.framesForwardKinematics(model, data, q)
    out = []
    for contact in contacts:
        T = data.oMf[model.getFrameId(contact.frame)]
        out.append(contact.points @ T.rotation.T + T.translation)
    return np.vstack(out)


FEET = ("left_sole_link", "right_sole_link")
L, R = "gripper_left_base_link", "gripper_right_base_link"


def reaching_run(robot, talos, backend: str, reach, steps: int, **options):
    """Talos (`robot`: Talos or Talos carrying) in humanoid_stack(feet, hands=(L, R), 0.2 x 0.1 m
    soles unless `options` give another sole, **options) with the left gripper's position sent by
    `reach` (3,) [m] from where it is at the reference posture, at most 0.3 m/s, below the hands:
    (q's from the reference posture on, stack)."""
    from reljac import Kinematics
    from reljac.ik import FrameTask, humanoid_stack

    q0 = talos.reference_configuration()
    lead = FrameTask(L, gain=5.0, weight=[1, 1, 1, 0, 0, 0], max_speed=0.3)
    lead.set_target(pin.SE3(np.eye(3), Kinematics(talos, q0).placement(L).translation + np.asarray(reach)))
    options = {"sole": (0.2, 0.1), **options}
    stack = humanoid_stack(robot, q0, feet=FEET, hands=(L, R), tasks=[lead], **options)
    controller = stack.controller(0.01, backend=backend)
    qs = [q0]
    for _ in range(steps):
        qs.append(controller.step(qs[-1]))
    return qs, stack
