"""The import rules of ARCHITECTURE.md, read from the source with ast (every import, also the ones
inside functions): which room may import what."""

from __future__ import annotations

import ast
import functools
import re
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
    assert "reljac.validation" in imports(MODULES["reljac.ik.tasks.base"])  # relative imports resolved


@pytest.mark.parametrize("name", [n for n in MODULES if within(n, "reljac.reference")])
def test_the_reference_imports_no_pinocchio_and_only_its_allowed_rooms(name):
    for imported in imports(MODULES[name]):
        assert not within(imported, "pinocchio", "coal", "hppfcl", "meshcat"), (name, imported)
        if within(imported, "reljac"):
            assert within(imported, "reljac.reference", "reljac.exceptions", "reljac.validation"), (name, imported)


@pytest.mark.parametrize("name", [n for n in MODULES if n.startswith("reljac.") and not within(n, "reljac.apps")
                                  and n != "reljac.__main__"])  # (`python -m reljac`: the program itself)
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
def _imported_by_name(call: ast.Call, package: str) -> str | None:
    """The module ``importlib.import_module("name")`` imports (a literal name, or a relative one
    from ``__package__`` / ``__name__``), else None."""
    func = call.func
    if not ((isinstance(func, ast.Attribute) and func.attr == "import_module") or
            (isinstance(func, ast.Name) and func.id == "import_module")):
        return None
    if not call.args or not isinstance(call.args[0], ast.Constant) or not isinstance(call.args[0].value, str):
        return None
    name = call.args[0].value
    if not name.startswith("."):
        return name
    level = len(name) - len(name.lstrip("."))
    base = package.split(".")[: len(package.split(".")) - level + 1]
    return ".".join(base + ([name.lstrip(".")] if name.lstrip(".") else []))


def imports_in(tree: ast.Module, name: str, package: str) -> set[tuple[str, bool]]:
    """(module, deferred) for each module the code of module `name` imports: ``from P import n`` is
    P.n when that is a module, else P; ``importlib.import_module("literal")`` counts; deferred:
    inside a function's body (run on a call, not on import), not under ``if TYPE_CHECKING:``
    (which mypy reads as a module-level import)."""
    found: set[tuple[str, bool]] = set()

    def visit(node: ast.AST, deferred: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.update((alias.name, deferred) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                module = source_module(child, package)
                for alias in child.names:
                    found.add((f"{module}.{alias.name}" if f"{module}.{alias.name}" in MODULES else module, deferred))
            elif isinstance(child, ast.Call):
                by_name = _imported_by_name(child, package)
                if by_name is not None:
                    found.add((by_name, deferred))
            visit(child, deferred or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(tree, False)
    return {(m, d) for m, d in found if m != name}


@functools.cache
def module_imports(path: Path) -> set[tuple[str, bool]]:
    """(module, deferred) for each reljac module `path` imports (see :func:`imports_in`)."""
    found = imports_in(ast.parse(path.read_text(encoding="utf-8")), module_name(path), package_of(path))
    return {(m, d) for m, d in found if m in MODULES}


def import_graph() -> dict[str, set[str]]:
    """Every reljac module -> the reljac modules it imports (deferred or not)."""
    return {name: {m for m, _ in module_imports(path)} for name, path in MODULES.items()}


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


def test_the_graph_sees_deferred_type_checking_and_by_name_imports():
    assert ("reljac.collision", True) in module_imports(MODULES["reljac.ik.limits.collision"])  # in a method
    assert ("reljac.robot", False) in module_imports(MODULES["reljac.collision.state"])  # under TYPE_CHECKING
    assert ("reljac.srdf", False) in module_imports(MODULES["reljac.robot"])
    code = ast.parse("import importlib\ndef f():\n    return importlib.import_module('reljac.ik.controller')\n"
                     "g = importlib.import_module('.relative', __package__)\n")
    assert imports_in(code, "reljac.x", "reljac") >= {("reljac.ik.controller", True), ("reljac.relative", False)}


def test_no_reljac_module_imports_itself_back_through_others():
    """No circle among reljac's modules, counting module-level, TYPE_CHECKING and deferred imports
    alike (a circle is a pair of rooms that cannot be understood, tested or moved apart)."""
    found = circles(import_graph())
    assert not found, "import circles: " + "; ".join(" <-> ".join(c) for c in found)


def test_importing_the_robot_loads_no_collision_package():
    import subprocess
    import sys

    code = "import sys, reljac.robot; print(sorted(m for m in sys.modules if m.startswith('reljac.collision')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_importing_the_packages_loads_no_scipy_dask_or_matplotlib():
    """Every reljac command and every process the tests start pays its imports: scipy.linalg alone
    took a quarter of a second, and came back once through the Python solver's identity level
    (``import reljac.ik`` 0.45 -> 1.1 s). scipy, Dask and matplotlib are imported where they are used."""
    import subprocess
    import sys

    code = ("import sys, reljac, reljac.ik, reljac.collision, reljac.maps, reljac.placement, reljac.viz, "
            "reljac.reference, reljac.apps.cli; "
            "print(sorted(m for m in ('scipy', 'dask', 'distributed', 'matplotlib') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_a_robots_collisions_are_built_by_the_collision_room_without_importing_it_first():
    """robot.collisions works though the robot room imports no collision room: reljac/__init__.py
    registered the builder (reljac.robot_parts), which loads the collision room on first use."""
    import subprocess
    import sys

    code = ("import sys, reljac.robot; robot = reljac.robot.Robot.bundled('dual_arm'); "
            "before = 'reljac.collision' in sys.modules; model = robot.collisions; "
            "print(before, type(model).__module__, model is robot.collisions, len(model.pairs) > 0)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "reljac.collision.model", "True", "True"]

# ---------------------------------------------------------------------------- the layers, in order
ARCHITECTURE = ROOT.parent / "ARCHITECTURE.md"


def layer_table() -> list[tuple[str, list[str]]]:
    """(layer, its rooms: paths under reljac/, a folder ending in /) of ARCHITECTURE.md's layer
    table, top row first."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text[text.index("## Layers"):]
    section = section[:section.index("\n## ", 1)]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("layer", "---"):
            continue
        rows.append((cells[0], re.findall(r"`([^`]+)`", cells[1])))
    return rows


def room_of(path: Path, rooms: dict[str, int]) -> str | None:
    """The most specific room that holds `path` (a file's own row before its folder's)."""
    relative = path.relative_to(ROOT).as_posix()
    holding = [r for r in rooms if relative == r or (r.endswith("/") and relative.startswith(r))]
    return max(holding, key=len) if holding else None


@functools.cache
def layers() -> dict[str, int]:
    """Every reljac module -> the index of its layer (0: the top row of the table)."""
    rooms: dict[str, int] = {}
    for i, (_, paths) in enumerate(layer_table()):
        for room in paths:
            assert room not in rooms, f"room {room} is in two rows of the layer table"
            rooms[room] = i
    out = {}
    for name, path in MODULES.items():
        room = room_of(path, rooms)
        assert room is not None, f"{path.relative_to(ROOT.parent)} is in no layer: add it to ARCHITECTURE.md's table"
        out[name] = rooms[room]
    return out


# Imports up the layers that stay for now, each with its reason.
KNOWN_UPWARD: dict[tuple[str, str], str] = {}


def test_the_layer_table_names_rooms_that_exist():
    rows = layer_table()
    assert [name for name, _ in rows][:2] == ["values", "compiled core"] and rows[-1][0] == "applications", rows
    for name, paths in rows:
        assert paths, name
        for room in paths:
            assert (ROOT / room).is_dir() if room.endswith("/") else (ROOT / room).is_file(), (name, room)


def test_every_module_is_in_one_layer():
    assert set(layers()) == set(MODULES)


@pytest.mark.parametrize("name", list(MODULES))
def test_no_module_imports_a_layer_below_it_in_the_table(name):
    """A room imports only rooms of its own row and of the rows above (ARCHITECTURE.md), also in
    a function or under TYPE_CHECKING."""
    rows = [row for row, _ in layer_table()]
    mine = layers()[name]
    upward = [(m, rows[layers()[m]]) for m, _ in module_imports(MODULES[name])
              if layers()[m] > mine and (name, m) not in KNOWN_UPWARD]
    assert not upward, f"{name} ({rows[mine]}) imports from rows below its own: {upward}"


def test_each_known_upward_import_is_still_there():
    """A known upward import that is gone is taken off KNOWN_UPWARD (the list only shrinks; empty now)."""
    for name, imported in KNOWN_UPWARD:
        assert imported in {m for m, _ in module_imports(MODULES[name])}, (name, imported)


def test_the_layers_are_read_from_the_table():
    rows = {row: i for i, (row, _) in enumerate(layer_table())}
    robot, controller = layers()["reljac.robot"], layers()["reljac.ik.controller"]
    assert robot == rows["robot"] and controller == rows["controller"] and controller > robot
    assert layers()["reljac.ik"] == rows["controller"] and layers()["reljac"] == rows["public API"]
    assert layers()["reljac.ik.tasks.base"] == rows["tasks / limits"]  # its folder's row


def test_the_version_is_pyprojects():
    from reljac.version import __version__

    pyproject = (ROOT.parent / "pyproject.toml").read_text(encoding="utf-8")
    assert re.findall(r'^version = "([^"]+)"$', pyproject, re.M) == [__version__]
