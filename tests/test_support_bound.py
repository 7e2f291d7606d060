"""How near the support region's edge the centre of mass comes (reljac.ik.limits.support's documented bound).

SupportRegion holds, not pushes back, an overshoot of the shrunk edge up to delta = min(OVERSHOOT,
margin); each step's second-order motion eps (what the linear rows do not see) adds up along the
edge until then, and beyond delta the rows take back a fraction `gain` of the excess per step. So
the distance to the region's edge stays above margin - delta - eps_max / gain, and no tighter
bound holds in general. Measured here with Pinocchio alone (tests/balance_helpers.py): the
distance from a brute-force hull, eps from pin.jacobianCenterOfMass at each step.
"""

from __future__ import annotations

import itertools

import numpy as np
import pinocchio as pin
import pytest
from balance_helpers import FEET, bodies_com, contact_points, distance_inside, reaching_run
from helpers import BACKENDS

from reljac import SupportContact
from reljac.ik.limits.support import OVERSHOOT
from reljac.support import convex_hull

# Soles of two lengths: no front or back edge runs along both feet (see the xfail test below).
SOLES = [SupportContact.rectangle(FEET[0], 0.2, 0.1), SupportContact.rectangle(FEET[1], 0.22, 0.1)]


def second_order(model: pin.Model, q: np.ndarray, q_next: np.ndarray) -> float:
    """|c(q_next) - c(q) - J_c (q_next - q)|, x-y [m]: the part of one step's centre-of-mass motion
    the linear rows do not see (Talos has no body welded to the world: Pinocchio's own centre of
    mass is the whole robot's)."""
    data = model.createData()
    J = pin.jacobianCenterOfMass(model, data, q).copy()
    c = data.com[0].copy()
    c_next = pin.centerOfMass(model, data, q_next)
    return float(np.linalg.norm((c_next - c - J @ pin.difference(model, q, q_next))[:2]))


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_the_centre_of_mass_stays_within_the_documented_bound_of_the_margin(talos, backend):
    """com_priority="none": the reach carries the centre of mass to the shrunk edge and keeps
    pressing on it for 2 s."""
    qs, stack = reaching_run(talos, talos, backend, [1.0, 0.0, 0.0], 250, com_priority="none", sole=SOLES)
    support = stack.support
    model = talos.model
    past = np.array([support.margin - distance_inside(contact_points(model, q, stack.contacts), bodies_com(model, q)[1])
                     for q in qs])  # [m] beyond the shrunk edge
    eps = max(second_order(model, a, b) for a, b in itertools.pairwise(qs))
    delta = min(OVERSHOOT, support.margin)
    assert past.max() <= delta + eps / support.gain + 1e-9, (past.max(), eps)
    assert np.count_nonzero(past > 0) > 50  # the edge is reached and pressed on
    assert eps < 1e-5  # micrometres per step: the bound is delta and a few micrometres


def test_two_feet_side_by_side_keep_every_corner_of_their_hull():
    """The Talos soles of tests/test_humanoid.py after 210 steps of the reach: the front corners
    of both feet share x to 1e-13 m. The brute-force hull has 4 corners (0.2 m x 0.27 m)."""
    points = np.array([[0.091153047108579285, 0.13481717115730008], [-0.10884695289142073, 0.1348171711573016],
                       [-0.10884695289142148, 0.034817317020466136], [0.091153047108578536, 0.034817317020464617],
                       [0.091153047108622237, -0.035182828842743818], [-0.10884695289137777, -0.03518282884275039],
                       [-0.1088469528913745, -0.13518268297958586], [0.091153047108625512, -0.13518268297957928]])
    hull = convex_hull(points)
    corners = [[0.0911530471, 0.1348171712], [-0.1088469529, 0.1348171712], [-0.1088469529, -0.135182683],
               [0.0911530471, -0.135182683]]
    assert len(hull) == 4
    for corner in corners:
        assert np.min(np.linalg.norm(hull - corner, axis=1)) < 1e-9, corner
