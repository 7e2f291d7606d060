"""Build of reljac's optional compiled core (C++17, pybind11, Eigen); everything else is in pyproject.toml.

The extension is optional: where it cannot be built (no C++ compiler), ``pip install .`` still
succeeds and reljac runs on its Python solver (``reljac info`` names the backend in use).
Eigen's headers come from the ``cmeel-eigen`` build requirement.
"""

from __future__ import annotations

import sys
from pathlib import Path

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup


def eigen_include() -> list[str]:
    """Compiler flags naming Eigen's include folder (a system folder: its own warnings stay
    quiet), from the cmeel-eigen wheel of the build environment."""
    for entry in map(Path, sys.path):
        candidate = entry / "cmeel.prefix" / "include" / "eigen3"
        if (candidate / "Eigen" / "Core").is_file():
            return ["-isystem", str(candidate)]
    return []  # the compile fails and the extension is skipped (optional)


core = Pybind11Extension(
    "reljac.ik._core",
    sorted(str(p) for p in Path("src/core").glob("*.cpp")),
    depends=sorted(str(p) for p in Path("src/core").glob("*.hpp")),  # rebuild when a header changes
    cxx_std=17,
    extra_compile_args=["-O3", "-DNDEBUG", "-DEIGEN_DONT_PARALLELIZE", "-DEIGEN_GEMM_TO_COEFFBASED_THRESHOLD=64",
                        *eigen_include()],
)
core.optional = True  # a failed build skips it: reljac then runs on the Python solver

setup(ext_modules=[core], cmdclass={"build_ext": build_ext})
