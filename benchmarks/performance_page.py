"""The performance page (docs/performance.md): runs of ``reljac bench WHAT --json``, kept with their
date and conditions, and the page's generated part written from them.

``python benchmarks/performance_page.py record WHAT [WHAT ...] [--peers]`` runs
``reljac bench WHAT --json`` for each WHAT (jacobian, reference, ik, kinds, map, solve; solve-collision:
``reljac bench solve --collision``) in this Python
and stores its document in ``benchmarks/results/DATE-WHAT.json`` together with the date (UTC), the
command, the load average before and after, the cores, the commit and the versions of Python,
Pinocchio and numpy. ``python benchmarks/performance_page.py render`` rewrites the part of
docs/performance.md between the two ``generated`` markers from the newest stored run of each
section, formatted by ``reljac bench``'s own table formatters; ``check`` exits 1 when the page is
not what ``render`` would write (``tests/test_performance_page.py`` checks the same). The rest of the page
(the journal of figures measured by other means, each with its date) is written by hand.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
PAGE = ROOT / "docs" / "performance.md"
START = "<!-- generated:start (python benchmarks/performance_page.py render; do not edit by hand) -->"
END = "<!-- generated:end -->"
#: the sections of ``reljac bench``'s document, in the page's order
ORDER = ["jacobian", "reference", "ik", "peers", "kinds", "map", "solve", "solve_collision"]
#: what ``reljac bench`` measures (its WHAT argument; solve-collision: ``solve --collision``)
WHATS = ("all", "jacobian", "reference", "ik", "kinds", "map", "solve", "solve-collision")


def _load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def _commit() -> str:
    run = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return run.stdout.strip() + (" (with uncommitted changes)" if dirty else "")


def record(what: str, *, peers: bool = False) -> Path:
    """Run ``reljac bench WHAT --json`` and store its document with the run's conditions."""
    import numpy
    import pinocchio

    asked = ["solve", "--collision"] if what == "solve-collision" else [what]
    command = ["reljac", "bench", *asked, "--json", "--no-progress", *(["--peers"] if peers else [])]
    before, started = _load_average(), datetime.datetime.now(datetime.timezone.utc)
    run = subprocess.run([sys.executable, "-m", "reljac.apps.cli", *command[1:]], cwd=ROOT,
                         capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(f"performance_page: {' '.join(command)} failed (exit {run.returncode}): {run.stderr.strip()}")
    seconds = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    entry = {"date": started.strftime("%Y-%m-%d"), "started_utc": started.strftime("%Y-%m-%d %H:%M"),
             "command": " ".join(command), "wall_s": round(seconds, 1), "load_average_before": before,
             "load_average_after": _load_average(), "cores": os.cpu_count(), "commit": _commit(),
             "python": platform.python_version(), "pinocchio": pinocchio.__version__, "numpy": numpy.__version__,
             "document": json.loads(run.stdout)}
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{entry['date']}-{what}{'-peers' if peers else ''}.json"
    path.write_text(json.dumps(entry, indent=1) + "\n")
    return path


def newest_runs() -> dict[str, dict[str, Any]]:
    """{section: the stored run that measured it last} over benchmarks/results/*.json."""
    runs = sorted((json.loads(p.read_text()) for p in RESULTS.glob("*.json")), key=lambda r: r["started_utc"])
    return {name: run for run in runs for name in run["document"]["sections"]}


def _formatter(section: str):
    from reljac.apps import bench

    return bench.formatter(section)


def generated() -> str:
    """The generated part of the page, markers included."""
    out = [START, ""]
    runs = newest_runs()
    for section in [s for s in ORDER if s in runs] + sorted(set(runs) - set(ORDER)):
        run = runs[section]
        quick = " (`--quick`: fewer repetitions)" if run["document"]["quick"] else ""
        load = " ".join(f"{x:.2f}" for x in run["load_average_before"])
        after = " ".join(f"{x:.2f}" for x in run["load_average_after"])
        heading = "solve --collision" if section == "solve_collision" else section
        out += [f"### `reljac bench {heading}`: {run['date']}", "",
                f"`{run['command']}`{quick}, started {run['started_utc']} UTC, {run['wall_s']:.0f} s; load "
                f"average {load} before, {after} after, on {run['cores']} cores; commit {run['commit']}; "
                f"Python {run['python']}, Pinocchio {run['pinocchio']}, numpy {run['numpy']}.", "",
                "```text", _formatter(section)(run["document"]["sections"][section]).rstrip(), "```", ""]
    if not runs:
        out += ["No run recorded yet: `python benchmarks/performance_page.py record jacobian`.", ""]
    out.append(END)
    return "\n".join(out)


def rendered(page: str) -> str:
    """`page` with its generated part rewritten."""
    head, rest = page.split(START, 1)
    return head + generated() + rest.split(END, 1)[1]


def main(argv: list[str]) -> int:
    if argv[:1] == ["record"] and len(argv) > 1:
        peers, whats = "--peers" in argv, [a for a in argv[1:] if a != "--peers"]
        if unknown := [w for w in whats if w not in WHATS]:
            print(f"performance_page: error: unknown WHAT {unknown[0]!r}; valid: {', '.join(WHATS)}", file=sys.stderr)
            return 2
        for what in whats:
            print(record(what, peers=peers))
        return 0
    if argv == ["render"]:
        PAGE.write_text(rendered(PAGE.read_text()))
        return 0
    if argv == ["check"]:
        page = PAGE.read_text()
        if rendered(page) != page:
            print("docs/performance.md is not what its stored runs give: python benchmarks/performance_page.py render",
                  file=sys.stderr)
            return 1
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
