"""One registry of kinds (:mod:`reljac.ik.kinds`, issue 41) read by hierarchy files, the API page
and ``solve_many``: every registered kind a level can hold is read from a hierarchy file, and a
kind defined here, in a test, after reljac was imported (its class statement's ``kind=`` and
nothing else) is a hierarchy file's type, a row of the API page's table and a task whose targets
``solve_many`` sets per problem, without an edit anywhere else."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import reljac
from reljac.apps.hierarchy_file import read_hierarchy
from reljac.ik import Limit, PostureTask, Task, solve, solve_many
from reljac.ik import kinds as kinds_module
from reljac.ik.kinds import kinds
from reljac.ik.tasks.base import TargetedTask, TaskTerms
from reljac.model_index import FrameRef
from reljac.relative import Kinematics

ROOT = Path(__file__).resolve().parent.parent

#: a [[task]] table's own keys for each kind a level can hold (the file's type is the key)
TABLES = {
    "relative": 'frame_a = "left_tool"\nframe_b = "right_tool"',
    "frame": 'frame = "left_tool"',
    "position": 'frame_a = "left_tool"\nframe_b = "right_tool"',
    "orientation": 'frame_a = "universe"\nframe_b = "left_tool"',
    "posture": "",
    "ball": 'frame_a = "torso"\nframe_b = "left_tool"\nradius = 0.05',
    "com": 'axes = "xy"',
    "contact": 'frame = "left_tool"',
    "cone": 'frame_a = "universe"\nframe_b = "left_tool"\nhalf_angle = 0.3\naxis_a = [-1, 0, 0]',
    "half_space": 'frame_a = "universe"\nframe_b = "right_tool"\nnormal = [[1, 0, 0], [0, 1, 0]]\noffset = [2, 2]',
    "distance": 'frame_a = "left_tool"\nframe_b = "right_tool"',
    "support_region": 'contacts = [{frame = "torso", length = 0.3, width = 0.3}]',
    "collision_avoidance": "",
}


def in_a_level(cls: type) -> bool:
    return issubclass(cls, Task) or (issubclass(cls, Limit) and hasattr(cls, "as_task"))


def write(tmp_path: Path, key: str, body: str) -> Path:
    path = tmp_path / f"{key}.toml"
    path.write_text(f'[[task]]\ntype = "{key}"\nname = "the {key}"\n{body}\n', encoding="utf-8")
    return path


def test_every_kind_a_level_can_hold_has_a_table_here():
    missing = sorted(key for key, cls in kinds().items() if in_a_level(cls) and key not in TABLES)
    assert not missing, f"kinds without a hierarchy-file table in {__file__}: {missing}"


@pytest.mark.parametrize("key", sorted(TABLES))
def test_a_hierarchy_file_reads_every_kind(dual_arm, tmp_path, key):
    hierarchy = read_hierarchy(dual_arm, write(tmp_path, key, TABLES[key]))
    [[task]] = hierarchy.controller.levels
    cls = kinds()[key]
    if issubclass(cls, Limit):  # a limit in a level is its task, on a limit of that kind
        assert isinstance(getattr(task, "limit", None) or task.region, cls), (key, type(task))
    else:
        assert isinstance(task, cls), (key, type(task))
    assert task.name == f"the {key}"
    hierarchy.controller.step(hierarchy.q)


@pytest.fixture
def toy_kind(monkeypatch):
    """A kind defined after reljac was imported: the height of a frame's origin above the world's
    x-y plane, z [m] (1 row), registered by its class statement only (in a copy of the registry
    that the test gives back)."""
    monkeypatch.setattr(kinds_module, "_KINDS", dict(kinds()))

    class HeightTask(TargetedTask, kind="toy_height"):
        """Height z [m] of `frame`'s origin in the world: e = z - z_target."""

        size = 1

        def __init__(self, frame: FrameRef, **kwargs: Any) -> None:
            kwargs.setdefault("name", f"height of {frame}")
            super().__init__(**kwargs)
            self.frame = frame

        def set_target(self, z: Any, velocity: Any = None) -> None:
            self._target = np.reshape(np.asarray(z, dtype=float), 1)
            self._set_target_velocity(velocity)
            self._changed()

        def set_target_from_configuration(self, robot: reljac.Robot, q: Any) -> None:
            self.set_target(Kinematics(robot, q).placement(self.frame).translation[2])

        def compute(self, kin: Kinematics) -> TaskTerms:
            z = kin.placement(self.frame).translation[2]
            J = kin.relative_jacobian("universe", self.frame)[2:3]
            return TaskTerms(np.array([z]) - self._require_target(), J, self._target_velocity.copy())

    return HeightTask


def test_a_new_kind_is_a_hierarchy_files_type(dual_arm, tmp_path, toy_kind):
    hierarchy = read_hierarchy(dual_arm, write(tmp_path, "toy_height", 'frame = "left_tool"\ntarget = [1.2]'))
    [[task]] = hierarchy.controller.levels
    assert isinstance(task, toy_kind) and task.target[0] == 1.2
    with pytest.raises(reljac.ConfigurationError, match="toy_height"):  # and among the types a mistake names
        read_hierarchy(dual_arm, write(tmp_path, "nope", ""))


def test_a_new_kind_is_on_the_api_page(toy_kind):
    spec = importlib.util.spec_from_file_location("kinds_hook", ROOT / "docs" / "_hooks" / "kinds.py")
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    page = hook.on_page_markdown("# reljac.ik\n\n<!-- kinds -->\n")
    assert "| `toy_height` | [`HeightTask`]" in page
    assert f"::: {toy_kind.__module__}.{toy_kind.__qualname__}" in page


def test_solve_many_sets_a_new_kinds_targets_per_problem(dual_arm, toy_kind):
    q0 = dual_arm.reference_configuration()
    height = toy_kind("left_tool")
    z0 = Kinematics(dual_arm, q0).placement("left_tool").translation[2]
    height.set_target(z0)
    levels = [[height], [PostureTask(dual_arm, weight=0.01)]]
    targets = [z0 + dz for dz in (-0.1, 0.0, 0.15)]
    results = solve_many(dual_arm, q0, levels, [{height: z} for z in targets], seed=3, max_iters=40)
    for i, (result, z) in enumerate(zip(results, targets, strict=True)):
        assert result.converged, i
        assert abs(Kinematics(dual_arm, result.q).placement("left_tool").translation[2] - z) < 1e-4, i
        height.set_target(z)
        np.testing.assert_allclose(result.q, solve(dual_arm, q0, levels, seed=3 + i, max_iters=40).q, atol=1e-9)
