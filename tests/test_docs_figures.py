"""Every figure a docs page quotes from an example is the example's output (issue 43: the balance
page quoted 326 mm, "edge 7", 0.065 mm where ``examples/talos_balance.py`` printed 339 mm,
"edge 8 of 14", 0.034 mm).

The convention, in the page's Markdown (an HTML comment: nothing shows on the site):

    reach stops there, <!-- output of talos_balance.py --headless: reached (\\d+) mm forward -->339 mm

``output of SCRIPT ARGS: PATTERN`` names an example of ``examples/`` and its arguments, and a
regular expression with one group that finds the figure in what the example prints. The figure
quoted is the first number after the comment; it must be the example's, as written to the
page's precision (339 for 339, 0.034 for 0.0340, 0 for 0.000); a group that is not a number
must appear as it is. A guide page that shows the command ``python examples/SCRIPT`` must
quote it this way. Each example runs once (headless), in a fresh process; those that need
example-robot-data are marked slow.
"""

from __future__ import annotations

import functools
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from helpers import run_once_per_session
from test_examples import NEEDS_ROBOTS

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
PAGES = sorted((ROOT / "docs").rglob("*.md"))
MARKER = re.compile(r"<!-- output of (?P<run>[^:>]+?): (?P<pattern>.+?) -->", re.S)
NUMBER = re.compile(r"[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
SHOWN_RUN = re.compile(r"python examples/(\w+\.py)")


@dataclass(frozen=True)
class Quote:
    page: str  # relative to the repository
    line: int
    run: str  # "talos_balance.py --headless"
    pattern: str
    figure: str | None  # the first number after the marker (None: none)

    def __str__(self) -> str:
        return f"{self.page}:{self.line} ({self.run}: {self.pattern})"


def quotes_in(path: Path) -> list[Quote]:
    text = path.read_text(encoding="utf-8")
    found = []
    for match in MARKER.finditer(text):
        after = NUMBER.search(text, match.end())
        found.append(Quote(str(path.relative_to(ROOT)), text.count("\n", 0, match.start()) + 1,
                           " ".join(match["run"].split()), " ".join(match["pattern"].split()),
                           after.group() if after else None))
    return found


QUOTES = [quote for page in PAGES for quote in quotes_in(page)]
RUNS = sorted({quote.run for quote in QUOTES})


def script(run: str) -> str:
    return shlex.split(run)[0]


@functools.cache
def output(run: str) -> str:
    """What `python examples/RUN` prints (stdout), run once; fails on a non-zero exit."""
    name, *args = shlex.split(run)  # the run tests/test_examples.py checks too: run once for both
    proc = run_once_per_session([sys.executable, str(EXAMPLES / name), *args], timeout=600)
    assert proc.returncode == 0, f"{run} failed:\n{proc.stderr[-2000:]}"
    return proc.stdout


def same_figure(quoted: str, printed: str) -> bool:
    """The page's figure is the printed value as written to the page's precision (a number), or
    the printed text itself."""
    if not NUMBER.fullmatch(printed):
        return quoted == printed
    decimals = len(quoted.split(".")[1]) if "." in quoted and "e" not in quoted.lower() else 0
    if "e" in quoted.lower():
        return float(quoted) == float(f"{float(printed):.{len(quoted.lower().split('e')[0].split('.')[-1])}e}")
    return f"{float(printed):.{decimals}f}" in (quoted, quoted.lstrip("+"))


# ---------------------------------------------------------------------------- the markers themselves
def test_every_marker_names_an_example_a_pattern_with_one_group_and_a_figure():
    assert QUOTES, "no page quotes an example (the balance page does)"
    for quote in QUOTES:
        assert (EXAMPLES / script(quote.run)).is_file(), f"{quote}: no examples/{script(quote.run)}"
        assert re.compile(quote.pattern).groups == 1, f"{quote}: the pattern needs exactly one group"
        assert quote.figure is not None, f"{quote}: no figure after the marker"


def test_a_guide_page_that_shows_an_example_run_quotes_it_by_markers():
    """(The performance page's dated measurements name the runs they timed: not quotes.)"""
    for page in (p for p in PAGES if p.parent.name == "guide"):
        text = page.read_text(encoding="utf-8")
        shown = set(SHOWN_RUN.findall(text))
        quoted = {script(q.run) for q in quotes_in(page)}
        missing = shown - quoted
        assert not missing, (f"{page.relative_to(ROOT)} shows `python examples/{sorted(missing)[0]}` but quotes "
                             "none of its output with an <!-- output of ... --> marker")


def test_figures_compare_at_the_pages_precision():
    assert same_figure("339", "339") and same_figure("0.034", "0.0340") and same_figure("0", "0.000")
    assert same_figure("19.9999", "19.9999") and same_figure("8", "8")
    assert not same_figure("326", "339") and not same_figure("0.065", "0.0340") and not same_figure("7", "8")
    assert not same_figure("0.03", "0.0360") and same_figure("0.04", "0.0360")


# ---------------------------------------------------------------------------- the figures
def _marks(run: str) -> list:
    return [pytest.mark.slow] if script(run) in NEEDS_ROBOTS else []


@pytest.mark.parametrize("run", [pytest.param(run, marks=_marks(run), id=run) for run in RUNS])
def test_quoted_figures_are_the_examples_output(run):
    if script(run) in NEEDS_ROBOTS:
        from reljac.robots import example_robot_data_dir

        if example_robot_data_dir() is None:
            pytest.skip("needs example-robot-data")
    printed = output(run)
    wrong = []
    for quote in (q for q in QUOTES if q.run == run):
        match = re.search(quote.pattern, printed)
        if match is None:
            wrong.append(f"{quote}: the example printed nothing that matches")
        elif not same_figure(quote.figure or "", match.group(1)):
            wrong.append(f"{quote}: the page says {quote.figure}, the example printed {match.group(1)}")
    assert not wrong, "\n".join(wrong) + f"\n\n{run} printed:\n{printed}"


@pytest.mark.slow
def test_an_output_block_of_the_bounds_page_is_the_examples_lines():
    """docs/guide/bounds.md shows what ``examples/talos_bounded_levels.py`` prints in a text block
    (it said "edge 7 of 14" after 1.0 s where the example prints edge 8): each line shown is a
    line the example prints."""
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    text = (ROOT / "docs" / "guide" / "bounds.md").read_text(encoding="utf-8")
    start = text.index("```text\n", text.index("`examples/talos_bounded_levels.py` runs")) + len("```text\n")
    shown = text[start:text.index("```", start)].splitlines()
    printed = set(output("talos_bounded_levels.py --headless").splitlines())
    assert len(shown) >= 5 and not [line for line in shown if line not in printed], [
        line for line in shown if line not in printed]
