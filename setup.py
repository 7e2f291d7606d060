"""Build of reljac's compiled core (C++17, pybind11) on Pinocchio's and coal's own C++.

The core links the libraries the ``pin`` wheel installs (``libpinocchio_default``, ``libcoal``,
Boost.Python) and compiles against their headers and Eigen's (``cmeel-eigen``), all build
requirements in pyproject.toml, pinned to the versions reljac's runtime requires: the extension
works on the robot's own ``pin.Model`` objects, so it must match the Pinocchio it is loaded with.

The extension is optional: where it cannot be built (no C++ compiler), ``pip install .`` still
succeeds and reljac runs on its Python solver (``reljac info`` names the backend in use; CI
requires the compiled core with ``RELJAC_REQUIRE_COMPILED=1``).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

from pybind11.setup_helpers import ParallelCompile, Pybind11Extension, build_ext, naive_recompile
from setuptools import setup

# Compile definitions of Pinocchio's and coal's CMake configurations (pinocchioTargets.cmake,
# coalTargets.cmake): the headers must see what the libraries were built with.
DEFINES = [
    ("BOOST_MPL_LIMIT_LIST_SIZE", "30"), ("BOOST_MPL_LIMIT_VECTOR_SIZE", "30"),
    ("BOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", None), ("BOOST_FUSION_INVOKE_MAX_ARITY", "12"),
    ("PINOCCHIO_ENABLE_TEMPLATE_INSTANTIATION", None), ("PINOCCHIO_WITH_COLLISION", None),
    ("PINOCCHIO_WITH_HPP_FCL", None), ("COAL_BACKWARD_COMPATIBILITY_WITH_HPP_FCL", None),
    ("COAL_HAS_OCTOMAP", None), ("COAL_HAVE_OCTOMAP", None), ("OCTOMAP_MAJOR_VERSION", "1"),
    ("OCTOMAP_MINOR_VERSION", "10"), ("OCTOMAP_PATCH_VERSION", "0"),
    ("NDEBUG", None), ("EIGEN_DONT_PARALLELIZE", None), ("EIGEN_GEMM_TO_COEFFBASED_THRESHOLD", "64"),
]


def cmeel_prefix() -> Path | None:
    """The ``cmeel.prefix`` folder of the build environment (headers and libraries of the pin,
    coal, Boost and Eigen wheels), or None."""
    candidates = [Path(sysconfig.get_paths()["purelib"]), Path(sysconfig.get_paths()["platlib"]),
                  *map(Path, sys.path)]
    for entry in candidates:
        prefix = entry / "cmeel.prefix"
        if (prefix / "include" / "pinocchio").is_dir() and (prefix / "include" / "eigen3" / "Eigen").is_dir():
            return prefix
    return None


def python_suffix() -> str:
    return f"{sys.version_info.major}{sys.version_info.minor}"


prefix = cmeel_prefix()
include, library, link = [], [], []
if prefix is not None:
    include = ["-isystem", str(prefix / "include"), "-isystem", str(prefix / "include" / "eigen3")]
    library = [str(prefix / "lib")]
    # at run time the libraries are the installed wheels': site-packages/cmeel.prefix/lib, two
    # folders up from reljac/ik/_core*.so (pinocchio is imported first, which loads them anyway)
    link = ["-Wl,-rpath,$ORIGIN/../../cmeel.prefix/lib"]

core = Pybind11Extension(
    "reljac.ik._core",
    sorted(str(p) for p in Path("src/core").glob("*.cpp")),
    depends=sorted(str(p) for p in Path("src/core").glob("*.hpp")),  # rebuild when a header changes
    cxx_std=17,
    define_macros=DEFINES,
    extra_compile_args=["-O3", "-Wno-deprecated-declarations", *include],
    library_dirs=library,
    libraries=["pinocchio_default", "pinocchio_collision", "coal", f"boost_python{python_suffix()}"],
    extra_link_args=link,
)
core.optional = os.environ.get("RELJAC_REQUIRE_COMPILED", "") != "1"  # a failed build: the Python solver

# both cores (each file needs ~1.5 GB); RELJAC_DEV_REBUILD=1 recompiles only the .cpp files newer
# than their objects (development: a changed header then needs its .cpp touched)
ParallelCompile("RELJAC_BUILD_JOBS", default=2,
                needs_recompile=naive_recompile if os.environ.get("RELJAC_DEV_REBUILD") == "1" else None).install()

setup(ext_modules=[core], cmdclass={"build_ext": build_ext})
