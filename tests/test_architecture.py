"""The import rules of ARCHITECTURE.md, read from the source with ast (every import, also the ones
inside functions): which room may import what."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "reljac"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def package_of(path: Path) -> str:
    """The package a module's relative imports start from."""
    return module_name(path) if path.name == "__init__.py" else module_name(path).rpartition(".")[0]


def source_module(node: ast.ImportFrom, package: str) -> str:
    """The absolute name of the module a `from ... import` reads from (relative ones resolved)."""
    if not node.level:
        return node.module or ""
    base = package.split(".")[: len(package.split(".")) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


@functools.cache  # each module is read once for all the rules
def imports(path: Path) -> set[str]:
    """Absolute names of the modules `path` imports (`from x import y` gives x and x.y)."""
    package = package_of(path)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = source_module(node, package)
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


# ---------------------------------------------------------------------------- no import circles
@functools.cache
def module_imports(path: Path) -> set[tuple[str, bool]]:
    """(module, deferred) for each reljac module `path` imports: `from P import n` is P.n when that
    is a module, else P; deferred: inside a function's body (run on a call, not on import), not
    under `if TYPE_CHECKING:` (which mypy reads as a module-level import)."""
    name, package = module_name(path), package_of(path)
    found: set[tuple[str, bool]] = set()

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.update((alias.name, deferred) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                module = source_module(child, package)
                for alias in child.names:
                    found.add((f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module, deferred))
            visit(child, deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(encoding="utf-8")), False)
    return {(m, d) for m, d in found if m in MODULES and m != name}


# The only imports that point up the layers, each deferred to a call: what they reach is built on
# first use, from a room below the one that defines it.
DEFERRED_UPWARD = {
    ("reljac.robot", "reljac.collision"): "Robot.collisions builds the robot's CollisionModel on first use",
    ("reljac.robot", "reljac.collision.state"): "a copied or pickled Robot keeps and restores robot.collisions' edits",
}


def import_graph() -> dict[str, set[str]]:
    """Every reljac module -> the reljac modules it imports, but for the deferred imports of
    DEFERRED_UPWARD."""
    return {name: {m for m, deferred in module_imports(path) if not (deferred and (name, m) in DEFERRED_UPWARD)}
            for name, path in MODULES.items()}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_circle_finder_finds_circles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == [["a", "b", "c"]]
    assert circles({**graph, "c": set()}) == []


def test_the_graph_sees_deferred_and_type_checking_imports():
    robot = module_imports(MODULES["reljac.robot"])
    assert ("reljac.collision", True) in robot  # Robot.collisions, inside the property
    assert ("reljac.srdf", False) in robot


def test_no_reljac_module_imports_itself_back_through_others():
    """No circle among reljac's modules, counting module-level, TYPE_CHECKING and deferred imports
    alike (a circle is a pair of rooms that cannot be understood, tested or moved apart), but for
    the named DEFERRED_UPWARD imports."""
    found = circles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize("edge", sorted(DEFERRED_UPWARD))
def test_each_allowed_upward_import_exists_and_is_deferred(edge):
    name, imported = edge
    assert (imported, True) in module_imports(MODULES[name]), edge
    assert (imported, False) not in module_imports(MODULES[name]), edge


def test_importing_the_robot_loads_no_collision_package():
    import subprocess
    import sys

    code = "import sys, reljac.robot; print(sorted(m for m in sys.modules if m.startswith('reljac.collision')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
