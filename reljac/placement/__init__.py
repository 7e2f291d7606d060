"""Where to stand: base placements for one- and two-arm tasks, from pose maps, checked by IK.

A mobile manipulator, a dual arm on a cart or a humanoid standing must first choose where its
base goes so that every pose of a task is reachable, with every hand, without collision. This
package answers it from maps built once per robot and hands, queried in microseconds per
(placement, pose) pair, and checks the placements the maps rank first with
:func:`reljac.ik.solve_many` and collision avoidance.

=========================================== ===========================================================
:func:`mobile_base`, :class:`MobileBase`    the robot with a base joint in the plane (planar, free-flyer
                                            held upright, or a planar joint added: :func:`with_planar_base`)
:class:`PlacementTask`                      the object's poses (or a path through waypoints) and the grasps
:class:`FloorRegion`                        where the base may stand (x, y, yaw on a grid)
:func:`pose_map`, :class:`PoseMap`          where a hand can be in a frame, position and orientation (.npz)
:func:`placement_maps`, :func:`with_maps`   the maps of a task's hands (built, or loaded and checked)
:func:`reach`                               the maps' answer for (placement, pose) pairs
:func:`place`, :class:`PlacementResult`     ranked placements, the best checked, a configuration per pose
:class:`Witnesses`                          the maps' configurations made exact and tested for collision
:func:`save_maps`, :func:`load_maps`        maps of several hands in one file
=========================================== ===========================================================

Modules: ``base`` (the mobile base), ``task`` (task and floor region), ``orbits`` (a chain's
sweeps and the pose grid), ``posemap`` (the map and its queries), ``posemap_build`` (sampling on
threads or Dask), ``mapfile`` (reading map files that may be corrupted), ``chains`` (the frame
the hands hang from and the shared joints), ``inverse`` (the maps' answer), ``refine`` (unsure
poses decided by a short search per hand), ``witness`` (the maps' configurations made exact per
arm and tested for collision), ``clearance`` (the base's bodies against obstacles),
``check`` (the exact check), ``rank`` (scores), ``place`` (the whole answer).
"""

from .base import MobileBase, mobile_base, with_planar_base
from .check import Checked, Checker
from .inverse import PlacementMaps, Reach, placement_maps, reach, with_maps
from .mapfile import load_maps, load_pose_map, save_maps
from .place import DEFAULT_MARGIN, Candidate, PlacementResult, place
from .posemap import PoseMap
from .posemap_build import pose_map
from .rank import SCORES
from .task import FloorRegion, PlacementTask
from .witness import Witnessed, Witnesses

__all__ = [
    "DEFAULT_MARGIN",
    "SCORES",
    "Candidate",
    "Checked",
    "Checker",
    "FloorRegion",
    "MobileBase",
    "PlacementMaps",
    "PlacementResult",
    "PlacementTask",
    "PoseMap",
    "Reach",
    "Witnessed",
    "Witnesses",
    "load_maps",
    "load_pose_map",
    "mobile_base",
    "place",
    "placement_maps",
    "pose_map",
    "reach",
    "save_maps",
    "with_maps",
    "with_planar_base",
]
