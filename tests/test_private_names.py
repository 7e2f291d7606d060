"""No room reads another room's private names (ARCHITECTURE.md: "nothing reads another module's
private names (`_x`): add a public name instead"), read from the source with ast: reljac's modules,
and the measurement scripts of benchmarks/ (code users run beside ``reljac bench``), which use
reljac's public names only.

A private name is one with a single leading underscore (``_x``; dunders are Python's). A module
(a room) may read:

* its own object's: ``self._x``, ``cls._x``, ``super()._x``, ``type(self)._x``;
* the private names it defines: its module-level ``_names``, the methods, classes and class
  attributes it defines, the attributes it sets on ``self`` or ``cls`` (``obj._x`` of another
  object of a class it defines: ``other._step`` in the Controller's module);
* the names it sets on an object it made (``kin._data = ...`` then read), as long as no other
  module defines or sets that name: a name another room defines, set from outside it, is a write
  into that room (a monkeypatch) and counts as a read.

The members a ``Protocol`` lists are not its module's own: a protocol of another room's private
members is still a read of them. ``getattr``/``setattr``/``hasattr`` with a private name, and
``x.__dict__["_x"]`` / ``vars(x)["_x"]`` / ``x.__dict__.get("_x")``, count as reads of x's.
Importing a private name of a reljac module (``from .x import _y``) is a read too.

What ast cannot see: reads are matched by name, so a room that reads another object's ``_x``
while defining an ``_x`` of its own is not caught.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "reljac"
BENCHMARKS = ROOT.parent / "benchmarks"

# Reads that stay for now, each with its reason.
KNOWN: dict[tuple[str, str], str] = {}
# Names of the standard library that are public despite their underscore.
ALLOWED = {
    "os._exit": "exit without cleanup (documented: the child of a fork, an interrupted start)",
    "sys._getframe": "the caller's frame (documented; CPython)",
}


def private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


@dataclass(frozen=True)
class Read:
    module: str  # the file, relative to the repository
    line: int
    what: str  # the expression read (ast.unparse), or the import

    def __str__(self) -> str:
        return f"{self.module}:{self.line}: {self.what}"


def _is_protocol(node: ast.ClassDef) -> bool:
    return any((isinstance(b, ast.Name) and b.id == "Protocol") or (isinstance(b, ast.Attribute) and b.attr == "Protocol")
               for b in node.bases)


def _own_object(node: ast.expr) -> bool:
    """self, cls, super() or type(self): the object whose class the module defines."""
    if isinstance(node, ast.Name):
        return node.id in ("self", "cls")
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("super", "type")
            and all(isinstance(a, ast.Name) and a.id in ("self", "cls") for a in node.args))


def definitions(tree: ast.Module) -> tuple[set[str], set[str]]:
    """(private names the module defines, private names it only sets on other objects)."""
    defined: set[str] = set()

    def visit(node: ast.AST, scope: str) -> None:  # scope: "module", "class", "protocol" or "function"
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if private(child.name) and scope != "protocol":
                    defined.add(child.name)
                inner = ("protocol" if _is_protocol(child) else "class") if isinstance(child, ast.ClassDef) \
                    else "function"
                visit(child, inner)
                continue
            if scope in ("module", "class"):
                targets: list[ast.expr] = []
                if isinstance(child, ast.Assign):
                    targets = child.targets
                elif isinstance(child, (ast.AnnAssign, ast.AugAssign)):
                    targets = [child.target]
                elif isinstance(child, (ast.Import, ast.ImportFrom)):
                    defined.update(a.asname for a in child.names if a.asname and private(a.asname))
                for target in targets:
                    defined.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name) and private(n.id))
            visit(child, scope)

    visit(tree, "module")
    set_elsewhere: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and private(node.attr):
            (defined if _own_object(node.value) else set_elsewhere).add(node.attr)
    return defined, set_elsewhere - defined


def _accesses(tree: ast.Module) -> list[tuple[int, ast.expr, str, str]]:
    """(line, the object, the private name, the expression) of each private access on an object."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and private(node.attr):
            found.append((node.lineno, node.value, node.attr, ast.unparse(node)))
        elif isinstance(node, ast.Call) and node.args:
            func, args = node.func, node.args
            name = args[1] if len(args) > 1 else None
            if isinstance(func, ast.Name) and func.id in ("getattr", "setattr", "hasattr", "delattr") and \
                    isinstance(name, ast.Constant) and isinstance(name.value, str) and private(name.value):
                found.append((node.lineno, args[0], name.value, ast.unparse(node)))
            key = args[0]
            if isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault") and \
                    isinstance(key, ast.Constant) and isinstance(key.value, str) and private(key.value):
                holder = _dict_of(func.value)
                if holder is not None:
                    found.append((node.lineno, holder, key.value, ast.unparse(node)))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
                isinstance(node.slice.value, str) and private(node.slice.value):
            holder = _dict_of(node.value)
            if holder is not None:
                found.append((node.lineno, holder, node.slice.value, ast.unparse(node)))
    return found


def _dict_of(node: ast.expr) -> ast.expr | None:
    """x for ``x.__dict__`` or ``vars(x)``, else None."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and node.args:
        return node.args[0]
    return None


def private_reads(sources: dict[str, str]) -> list[Read]:
    """Every read of another room's private name in `sources` ({file: its text}; a file's
    package is its folder, as for reljac's files)."""
    trees = {path: ast.parse(text) for path, text in sources.items()}
    defs = {path: definitions(tree) for path, tree in trees.items()}
    claimed: dict[str, set[str]] = {}  # name -> the modules that define it or set it on an object
    for path, (defined, set_elsewhere) in defs.items():
        for name in defined | set_elsewhere:
            claimed.setdefault(name, set()).add(path)
    found = []
    for path, tree in sorted(trees.items()):
        defined, set_elsewhere = defs[path]
        own = defined | {n for n in set_elsewhere if claimed[n] == {path}}
        for line, obj, name, what in _accesses(tree):
            if not _own_object(obj) and name not in own:
                found.append(Read(path, line, what))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0] == "reljac"):
                found.extend(Read(path, node.lineno, f"from {'.' * node.level}{node.module or ''} import {a.name}")
                             for a in node.names if private(a.name))
    return sorted(found, key=lambda r: (r.module, r.line, r.what))


@functools.cache
def reljac_reads() -> tuple[Read, ...]:
    """The reads in reljac's modules and in benchmarks/ (read together: a benchmark that sets a
    name of reljac's on its object writes into reljac's room)."""
    files = sorted(ROOT.rglob("*.py")) + sorted(BENCHMARKS.rglob("*.py"))
    sources = {str(p.relative_to(ROOT.parent)): p.read_text(encoding="utf-8") for p in files}
    return tuple(private_reads(sources))


def test_the_benchmarks_are_read_too():
    modules = {r.module for r in private_reads({"benchmarks/b.py": "from reljac.apps import bench\nbench._lazy\n"})}
    assert modules == {"benchmarks/b.py"}
    assert any(p.name == "performance_page.py" for p in BENCHMARKS.rglob("*.py"))


def test_no_room_reads_another_rooms_private_names():
    found = [r for r in reljac_reads() if (r.module, r.what) not in KNOWN and r.what not in ALLOWED]
    assert not found, f"{len(found)} reads of another room's private names (give the owner a public name):\n" + \
        "\n".join(map(str, found))


def test_each_known_exception_is_still_a_read():
    """A known read that is gone is taken off KNOWN (the list only shrinks)."""
    seen = {(r.module, r.what) for r in reljac_reads()}
    assert not set(KNOWN) - seen, set(KNOWN) - seen


# ---------------------------------------------------------------------------- the rule itself
OWNER = '''
from typing import Protocol

_LIMIT = 3


class Step:
    _shared = 0

    def __init__(self):
        self._solve = None

    def _prepare(self):
        return self._solve

    def same_class(self, other):
        return other._solve, other._prepare(), type(self)._shared, super()._x


class _Helper:
    pass


def made_here():
    kin = object.__new__(Step)
    kin._cache = {}
    return kin._cache
'''

READER = '''
from .owner import Step, _Helper
from . import owner


class Seen(Protocol):
    _solve: object

    def _prepare(self): ...


def reads(step, kin):
    step._solve = print              # a monkeypatch: Step's, set from outside
    return (step._prepare(), owner._LIMIT, getattr(step, "_solve"), vars(step)["_solve"],
            step.__dict__.get("_solve"), kin._cache, step.public, sys._getframe)
'''


def test_the_rule_sees_planted_reads_and_nothing_else():
    found = private_reads({"pkg/owner.py": OWNER, "pkg/reader.py": READER})
    assert all(r.module == "pkg/reader.py" for r in found), [str(r) for r in found if r.module != "pkg/reader.py"]
    assert sorted(r.what for r in found) == sorted([
        "from .owner import _Helper", "step._solve", "step._prepare", "owner._LIMIT",
        "getattr(step, '_solve')", "vars(step)['_solve']", "step.__dict__.get('_solve')",
        "kin._cache", "sys._getframe"]), [str(r) for r in found]


def test_a_name_a_module_sets_on_its_own_objects_is_its_own_there_only():
    maker = "def made():\n    x = object()\n    x._note = 1\n    return x._note\n"
    other = "def read(x):\n    return x._note\n"
    assert private_reads({"a.py": maker}) == []
    assert [r.what for r in private_reads({"a.py": maker, "b.py": other})] == ["x._note"]
