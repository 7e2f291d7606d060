"""The import rules of ARCHITECTURE.md, read from the source with ast (every import, also the ones
inside functions): which room may import what."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "reljac"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path) -> set[str]:
    """Absolute names of the modules `path` imports (`from x import y` gives x and x.y)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


MODULES = {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def within(name: str, *packages: str) -> bool:
    return any(name == p or name.startswith(p + ".") for p in packages)


def test_the_rules_see_every_room():
    assert {"reljac.reference.robot", "reljac.apps.cli", "reljac.viz.viewer", "reljac.ik.controller",
            "reljac.validation"} <= set(MODULES)
    assert "reljac.exceptions" in imports(MODULES["reljac.reference.configuration"])
    assert "reljac.validation" in imports(MODULES["reljac.ik.task"])  # relative imports resolved


@pytest.mark.parametrize("name", [n for n in MODULES if within(n, "reljac.reference")])
def test_the_reference_imports_no_pinocchio_and_only_its_allowed_rooms(name):
    for imported in imports(MODULES[name]):
        assert not within(imported, "pinocchio", "coal", "hppfcl", "meshcat"), (name, imported)
        if within(imported, "reljac"):
            assert within(imported, "reljac.reference", "reljac.exceptions", "reljac.validation"), (name, imported)


@pytest.mark.parametrize("name", [n for n in MODULES if n.startswith("reljac.") and not within(n, "reljac.apps")])
def test_the_library_never_imports_the_applications(name):
    assert not any(within(i, "reljac.apps") for i in imports(MODULES[name])), name


# Where the Pinocchio layer and the reference meet (both compare or combine the two layers).
MEETING_POINTS = ("reljac.reference_map", "reljac.workspace")


@pytest.mark.parametrize("name", [n for n in MODULES if not within(n, "reljac.reference", "reljac.apps",
                                                                      *MEETING_POINTS)])
def test_the_pinocchio_layer_does_not_import_the_reference(name):
    assert not any(within(i, "reljac.reference") for i in imports(MODULES[name])), name


@pytest.mark.parametrize("name", list(MODULES))
def test_only_the_viz_package_imports_meshcat(name):
    if within(name, "reljac.viz"):
        return
    assert not any(within(i, "meshcat", "pinocchio.visualize") for i in imports(MODULES[name])), name


def test_validation_is_numpy_only():
    for imported in imports(MODULES["reljac.validation"]):
        assert imported.split(".")[0] in {"__future__", "numbers", "typing", "numpy"} or \
            within(imported, "reljac.exceptions"), imported


@pytest.mark.parametrize("name", [n for n in MODULES if within(n, "reljac.apps")])
def test_the_applications_use_no_private_name_of_the_library(name):
    tree = ast.parse(MODULES[name].read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level >= 2:  # from the library, not from apps
            private = [a.name for a in node.names if a.name.startswith("_")]
            assert not private, (name, node.module, private)
