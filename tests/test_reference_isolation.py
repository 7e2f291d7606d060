"""The reference kinematics must work where Pinocchio cannot be imported at all."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # Python subprocesses

REPO = Path(__file__).resolve().parents[1]

SCRIPT = textwrap.dedent(
    """
    import sys

    class BlockPinocchio:
        def find_spec(self, name, path=None, target=None):
            if name == "pinocchio" or name.startswith("pinocchio."):
                raise ImportError(f"pinocchio is blocked in this test (import of {name!r})")
            return None

    sys.meta_path.insert(0, BlockPinocchio())
    sys.modules.pop("pinocchio", None)

    import numpy as np
    import reljac.reference
    from reljac.reference import ReferenceRobot

    robot = ReferenceRobot.from_urdf(sys.argv[1], floating_base=True)
    q = robot.random_configuration(np.random.default_rng(0), n=3)
    jacobian = robot.relative_jacobian(q, "link1", "tip", method="cross")
    assert jacobian.shape == (3, 6, robot.nv)
    assert np.abs(jacobian - robot.relative_jacobian(q, "link1", "tip", method="poe")).max() < 1e-10
    loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("pinocchio", "eigenpy", "hppfcl", "coal"))
    assert not loaded, loaded
    print("ok")
    """
)


def test_reference_works_with_pinocchio_blocked():
    urdf = REPO / "tests" / "reference_urdfs" / "planar_2link.urdf"
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(urdf)], cwd=REPO, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


def test_blocking_works():
    """The blocker itself must stop `import pinocchio` (otherwise the test above proves nothing)."""
    script = SCRIPT.split("import numpy as np")[0] + "\nimport pinocchio\n"
    result = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "pinocchio is blocked" in result.stderr
