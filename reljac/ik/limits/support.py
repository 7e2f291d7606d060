"""Whole-body balance: the support-region limit (the centre-of-mass task is :mod:`reljac.ik.tasks.com`).

:class:`SupportRegion` keeps the horizontal centre of mass inside the support region of contacts
(:mod:`reljac.support`), shrunk by a margin, as one-sided rows above every task level: for each
edge i of the region (outward normal n_i, offset h_i, in the x-y plane of a reference frame),

    n_i . J_xy v <= d_i,   d_i = gain s_i / dt           inside the shrunk region (s_i >= 0)
                          = 0                        just past it (-delta <= s_i < 0)
                          = gain (s_i + delta) / dt  farther out (s_i < -delta)

with s_i = h_i - margin - n_i . c_xy the distance to the shrunk edge and delta =
min(OVERSHOOT, margin) (0.1 mm). A velocity damper: to first order the centre of mass covers at
most a fraction `gain` of its distance to the shrunk edge in one step and never crosses it. The
rows are linear in v dt, so the true motion may cross the shrunk edge by O(|v dt|^2) (micrometres
at control rates); such an overshoot is not pushed back while it is within delta: rows violated
at v = 0 are met above every level, contacts included, and a micrometre must not move the feet.
A centre of mass farther out (contacts changed under it) is driven back to within delta of the
shrunk edge.

How near the edge it comes: while a level below presses the centre of mass on an edge (a hand
reaching, ``humanoid_stack(..., com_priority="none")``), each step's second-order part adds up
in the band, step after step, until delta; past delta the row takes back a fraction `gain` of the
excess per step. With eps the largest second-order part of one step's centre-of-mass motion,
|c(q + v dt) - c(q) - J_c v dt| (x-y), the distance to every edge of the region stays at least

    margin - delta - eps / gain          (margin - 0.1 mm - 2 eps at the default gain 0.5)

and no tighter bound holds: the margin is kept to within delta + eps / gain, not 1 um. Talos
reaching 1 m forward at 0.3 m/s, 10 ms steps: eps = 2.5 um, the centre of mass 19.898 mm from the
edge of a 20 mm margin after 1.5 s on it (``tests/test_support_bound.py`` pins the bound on both
backends). It is what a long press can reach, not what every run does: ``reljac demo
talos-balance`` (0.15 m/s, the pelvis held over the feet) comes to 19.9991 mm. Holding the margin
to within 1 um would take a smaller OVERSHOOT (a constant of the compiled core too, kOvershoot)
or a second-order correction of d_i.

The region is the hull of the contact points where they are at each step (contacts held by a
top-level task do not move), so adding or removing a contact changes it from the next step on.

**As a level** (issue 29): the region put in a level of a :class:`~reljac.ik.Controller` (or
``region.as_task(gain=...)``) becomes a :class:`SupportRegionTask`: the same edges as one-sided
rows of that level, below the levels above it (the feet held) and above the levels below it (a
hand reaching stops where the centre of mass meets the shrunk edge), at a gain [1/s].
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...exceptions import ConfigurationError, SupportError, TaskError
from ...relative import Kinematics
from ...robot import FrameRef, Robot
from ...support import SupportContact, SupportPolygon, support_polygon
from ...validation import as_float
from ..description import Description, frozen
from ..tasks.com import WORLD, massive_robot
from ..tasks.regions import RegionRowsTask
from .base import Limit, VelocityConstraint, step_fraction

REGION_TASK_GAIN = 20.0  # [1/s]: SupportRegionTask's default gain
OVERSHOOT = 1e-4  # [m] overshoot of the shrunk edge held rather than pushed back (module docstring)


class SupportRegion(Limit, kind="support_region"):
    """The horizontal centre of mass kept inside the support region of `contacts` (module docstring).

    Args:
        robot: the robot (it must have mass).
        contacts: :class:`~reljac.support.SupportContact` objects (frames and points [m]); their
            points must span an area.
        margin: distance kept from every edge of the region [m], >= 0.
        gain: fraction in (0, 1] of the distance to an edge the centre of mass may cover per step.
        frame: the frame whose x-y plane is the horizontal plane (default: the world; z up).

    ``contacts``, ``margin`` and ``gain`` can be changed between steps. Raises SupportError at a
    step where the contact points span no area or the margin leaves nothing of the region.
    """

    name = "support region"

    def __init__(self, robot: Robot, contacts: Sequence[SupportContact], *, margin: float = 0.02,
                 gain: float = 0.5, frame: FrameRef = WORLD) -> None:
        self.robot = massive_robot(robot)
        self._frame = frame
        self.robot.frame_id(frame)
        self.contacts = contacts
        self.margin = margin
        self.gain = gain

    @property
    def contacts(self) -> tuple[SupportContact, ...]:
        """The contacts whose points make the region."""
        return self._contacts

    @contacts.setter
    def contacts(self, contacts: Sequence[SupportContact]) -> None:
        if isinstance(contacts, SupportContact):
            contacts = [contacts]
        if not isinstance(contacts, (list, tuple)) or not contacts or \
                not all(isinstance(c, SupportContact) for c in contacts):
            raise SupportError(f"contacts must be a non-empty list of reljac.SupportContact, got {contacts!r}")
        self._frame_ids = np.array([self.robot.frame_id(c.frame) for c in contacts], dtype=int)
        self._contacts = tuple(contacts)
        self._changed()

    @property
    def margin(self) -> float:
        """Distance kept from every edge [m]."""
        return self._margin

    @margin.setter
    def margin(self, value: float) -> None:
        self._margin = as_float(value, "margin [m]", minimum=0.0, error=ConfigurationError)
        self._changed()

    @property
    def gain(self) -> float:
        """Fraction in (0, 1] of the distance to an edge covered at most per step."""
        return self._gain

    @gain.setter
    def gain(self, value: float) -> None:
        self._gain = step_fraction(value, "gain of the support region")
        self._changed()

    @property
    def frame(self) -> FrameRef:
        """The frame whose x-y plane is the horizontal plane (read-only)."""
        return self._frame

    def points(self, kin: Kinematics) -> np.ndarray:
        """The contact points (k, 3) [m] at kin's configuration, in the reference frame."""
        T_a = kin.placement(self._frame)
        out = []
        for contact, fid in zip(self._contacts, self._frame_ids, strict=True):
            T = kin.data.oMf[int(fid)]
            world = contact.points @ T.rotation.T + T.translation
            out.append((world - T_a.translation) @ T_a.rotation)
        return np.vstack(out)

    def polygon(self, kin: Kinematics) -> SupportPolygon:
        """The support region at kin's configuration, not shrunk (x-y of the reference frame)."""
        return support_polygon(self.points(kin))

    def com_distance(self, kin: Kinematics) -> float:
        """The centre of mass's signed distance [m] to the edge of the support region (not
        shrunk) at kin's configuration, in the x-y plane of the region's frame: the distance to
        the nearest edge's line, > 0 inside, < 0 outside. The limit keeps it at least ``margin``
        (to within the band of the module docstring): ``com_distance(kin) - margin`` is the
        part of the margin left.

        Raises:
            SupportError: the contact points span no area.
        """
        return self.polygon(kin).signed_distance(kin.center_of_mass(self._frame))

    def edges(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray]:
        """(s, C) at kin's configuration: s (k,) [m] the centre of mass's distance to each edge of
        the shrunk region (>= 0 inside), C (k, nv) = n_i . J_xy, with d s_i / dt = -C_i v.

        Raises:
            SupportError: the contact points span no area, or the margin leaves nothing of it.
        """
        region = self.polygon(kin)
        region.shrunk(self._margin)  # SupportError when nothing is left
        c = kin.center_of_mass(self._frame)[:2]
        J = kin.center_of_mass_jacobian(self._frame)[:2]
        return region.offsets - self._margin - region.normals @ c, region.normals @ J

    def constraint(self, kin: Kinematics, dt: float) -> VelocityConstraint:
        to_shrunk, C = self.edges(kin)  # s_i [m]
        delta = min(OVERSHOOT, self._margin)
        d = self._gain * np.where(to_shrunk >= 0, to_shrunk, np.minimum(to_shrunk + delta, 0.0)) / dt
        return VelocityConstraint(C=C, d=d, row_names=tuple(self.held_row_names(len(to_shrunk))))

    def as_task(self, **kwargs: Any) -> SupportRegionTask:
        """This region as a level's rows (:class:`SupportRegionTask`): put the region itself in a
        level of a :class:`~reljac.ik.Controller` for the default gain, or this task for others
        (`kwargs`: gain [1/s], weight, max_speed, name)."""
        return SupportRegionTask(self, **kwargs)

    def held_row_names(self, count: int) -> list[str]:
        """One name per hull edge: 'support region (edge i of count)'."""
        return [f"{self.name} (edge {i + 1} of {count})" for i in range(count)]

    def description(self, robot: Robot) -> Description:
        return Description("SupportRegionDescription", frame=robot.frame_id(self._frame),
                           contact_frames=frozen(self._frame_ids),
                           contact_points=tuple(c.points for c in self._contacts), margin=self._margin, gain=self._gain)

class SupportRegionTask(RegionRowsTask):
    """A :class:`SupportRegion` as one level's rows, below the levels above it (the feet) and
    above those below (the hands), instead of above every level.

    One row per edge i of the region shrunk by the region's margin: e_i = -s_i = n_i . c_xy -
    (h_i - margin) [m] <= 0 (c_xy: the centre of mass in the region's frame, x-y), J_i = n_i .
    J_xy (1, nv). Inside with margin the rows cost nothing; on or past an edge the centre of mass
    may approach it at most at gain x its distance, d s_i / dt >= -gain s_i, and comes back from
    past it at the gain: a velocity damper in continuous time (keep gain dt < 1). No overshoot
    band as for the limit: a level below the feet never moves them to recover a micrometre.

    The region's contacts and margin are read at every step (change them on the region); its
    own ``gain`` (a fraction per step) is the limit's, not used here: this task's gain is [1/s].
    Rows are named "support region[i]" in a level's report, edge i of the hull (``row_names``).

    Args:
        region: the :class:`SupportRegion`.
        gain: [1/s] (default 20: a fifth of the distance to the edge per 10 ms step).
        **kwargs: weight (one number), max_speed [m/s], name (default: the region's).
    """

    def __init__(self, region: SupportRegion, *, gain: float = REGION_TASK_GAIN, **kwargs: Any) -> None:
        if not isinstance(region, SupportRegion):
            raise TaskError(f"SupportRegionTask needs a reljac.ik.SupportRegion, got {region!r}")
        self._region = region
        kwargs.setdefault("name", region.name)
        super().__init__(region.robot, gain=gain, **kwargs)
        region.listen(self)  # the region's changes are this task's (its compiled description holds them)

    @property
    def region(self) -> SupportRegion:
        """The support region the centre of mass is kept in (fixed at construction; its contacts
        and margin can change)."""
        return self._region

    def heard(self, region: Any) -> None:
        """The region changed: this task's description changes with it (an
        :class:`~reljac.ik.description.Observable`'s listener)."""
        self._changed()

    def measure(self, kin: Kinematics) -> tuple[np.ndarray, np.ndarray, list[str]]:
        to_shrunk, C = self.region.edges(kin)
        return -to_shrunk, C, self.region.held_row_names(len(to_shrunk))

    def names_of(self, step: Any, index: int) -> list[str]:
        return self.region.held_row_names(len(step.task_row_sources(index)))

    def description(self, robot: Robot) -> Description:
        """The task for the compiled step: its region's description within."""
        return Description("SupportRegionTaskDescription", region=self.region.description(robot),
                           **self.described_parameters())


__all__ = ["SupportError", "SupportRegion", "SupportRegionTask"]
