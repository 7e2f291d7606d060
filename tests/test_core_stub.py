"""The type stub of the compiled core committed at reljac/ik/_core.pyi (the one mypy checks) is the
one pybind11-stubgen generates from the core in use, as the build does (CMakeLists.txt), and the
build installed its stub beside the core.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from reljac.ik import compiled_available

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")

COMMITTED = Path(__file__).resolve().parents[1] / "reljac" / "ik" / "_core.pyi"
REFRESH = ("after a change to the bindings, copy the stub the build generated (reljac/ik/_core.pyi "
           "beside the installed core) to the source tree, or run "
           "`python -m pybind11_stubgen -o STUBS reljac.ik._core` and copy STUBS/reljac/ik/_core.pyi")


def test_the_committed_stub_is_the_one_generated_from_the_core(tmp_path: Path) -> None:
    pytest.importorskip("pybind11_stubgen", reason="needs pybind11-stubgen (the test extra)")
    run = subprocess.run([sys.executable, "-m", "pybind11_stubgen", "-o", str(tmp_path), "reljac.ik._core"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    generated = (tmp_path / "reljac" / "ik" / "_core.pyi").read_text()
    assert "class Step" in generated  # the core's bindings, not an empty module
    assert COMMITTED.read_text() == generated, f"reljac/ik/_core.pyi is out of date: {REFRESH}"


def test_the_build_installed_the_stub_beside_the_core() -> None:
    from reljac.ik import _core

    beside = Path(_core.__file__).with_name("_core.pyi")
    assert beside.is_file(), f"no stub beside {_core.__file__}"
    assert beside.read_text() == COMMITTED.read_text(), f"reljac/ik/_core.pyi is out of date: {REFRESH}"
