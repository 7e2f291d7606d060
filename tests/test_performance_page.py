"""docs/performance.md's generated part is what the stored `reljac bench --json` runs give (issue 27).

benchmarks/performance_page.py stores each run of ``reljac bench WHAT --json`` with its date,
command and load in benchmarks/results/, and writes the page's section of `reljac bench` runs from
the newest run of each section, with the bench's own table formatters.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import performance_page as pp
import pytest


def test_the_page_is_what_its_stored_runs_give():
    page = pp.PAGE.read_text()
    assert page.count(pp.START) == 1 and page.count(pp.END) == 1
    assert pp.rendered(page) == page, "docs/performance.md is stale: python benchmarks/performance_page.py render"


@pytest.mark.parametrize("path", sorted(pp.RESULTS.glob("*.json")), ids=lambda p: p.name)
def test_every_stored_run_says_when_how_and_under_what_load(path):
    run = json.loads(path.read_text())
    assert path.name.startswith(run["date"] + "-") and run["started_utc"].startswith(run["date"])
    what = path.stem[len(run["date"]) + 1:].removesuffix("-peers")
    asked = "solve --collision" if what == "solve-collision" else what  # (its section: solve_collision)
    assert run["command"].startswith(f"reljac bench {asked} --json")
    assert len(run["load_average_before"]) == len(run["load_average_after"]) == 3 and run["cores"] >= 1
    assert what.replace("-", "_") in run["document"]["sections"] or what == "all"


def _run(tmp: Path, date: str, seconds: float, load: float) -> None:
    """A stored run of `reljac bench reference` with made-up numbers."""
    document = {"quick": False, "sections": {"reference": {
        "robot": "dual_arm", "configurations": 10, "runs": 3,
        "paths": [{"path": "reference, batched numpy (N at once)", "time_per_configuration_s": seconds,
                   "ratio_to_batched": 1.0},
                  {"path": "Pinocchio layer, Python loop", "time_per_configuration_s": 2 * seconds,
                   "ratio_to_batched": 2.0}]}}}
    run = {"date": date, "started_utc": f"{date} 10:00", "command": "reljac bench reference --json --no-progress",
           "wall_s": 4.0, "load_average_before": [load, 0.5, 0.25], "load_average_after": [load, 0.5, 0.25],
           "cores": 2, "commit": "abc1234", "python": "3.11", "pinocchio": "4.1.0", "numpy": "2.0",
           "document": document}
    (tmp / f"{date}-reference.json").write_text(json.dumps(run))


def test_the_newest_run_of_a_section_is_shown_with_its_date_load_and_table(tmp_path, monkeypatch):
    monkeypatch.setattr(pp, "RESULTS", tmp_path)
    _run(tmp_path, "2026-01-02", 7.25e-6, 1.5)
    _run(tmp_path, "2026-03-04", 3.5e-6, 0.75)
    part = pp.generated()
    assert "2026-03-04" in part and "2026-01-02" not in part
    assert "load average 0.75 0.50 0.25 before" in part and "on 2 cores" in part
    table = part.split("```text\n", 1)[1].split("```", 1)[0]
    rows = {line.split("  ")[0]: line.split()[-2:] for line in table.splitlines()[3:]}
    # microseconds per configuration and the ratio, from the document's seconds
    assert rows == {"reference, batched numpy (N at once)": ["3.500", "1.000"],
                    "Pinocchio layer, Python loop": ["7.000", "2.000"]}


def test_rendering_keeps_the_hand_written_journal(tmp_path, monkeypatch):
    monkeypatch.setattr(pp, "RESULTS", tmp_path)
    _run(tmp_path, "2026-03-04", 3.5e-6, 0.75)
    page = f"# Performance\n\nintro\n\n{pp.START}\nold figures\n{pp.END}\n\n## Journal\n\nkept 1.23 us\n"
    out = pp.rendered(page)
    assert out.startswith("# Performance\n\nintro\n\n") and out.endswith("\n\n## Journal\n\nkept 1.23 us\n")
    assert "old figures" not in out and re.search(r"`reljac bench reference`: 2026-03-04", out)
