"""The API reference as built (`mkdocs build --strict`, the docs extra) reads as intended (issue 18):
tables render as tables, signatures are wrapped, every public page and method is there."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings_handlers.python")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site")
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)], cwd=ROOT,
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    return out


def page(site: Path, name: str) -> str:
    return (site / "api" / name / "index.html").read_text()


def text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize("name", ["reljac", "ik", "reference", "collision", "maps", "viz", "apps"])
def test_no_page_shows_a_restructuredtext_table(site, name):
    assert "=====" not in text(page(site, name))


def test_the_notation_table_is_a_table(site):
    reljac = page(site, "reljac")
    table = reljac[reljac.index("Notation"):]
    table = table[:table.index("</table>")]
    cells = [text(c).strip() for c in re.findall(r"<td>(.*?)</td>", table, re.S)]
    assert cells[0::2] == ["w", "T_ab", "J_a", "J_ab", "J_ab_in_c", "q, v"]


def test_attribute_tables_name_one_attribute_per_row(site):
    names = re.findall(r'<td><code><span title="([^"]+)">', page(site, "reljac"))
    assert "reljac.robot.Robot.nq" in names and "reljac.robot.Robot.upper_limits" in names
    assert not [n for n in names if "," in n], names


def test_signatures_are_wrapped_by_the_formatter(site):
    """mkdocstrings-python formats separate signatures with ruff (the docs extra installs it)."""
    assert shutil.which("ruff") or (Path(sys.executable).parent / "ruff").exists()
    ik = page(site, "ik")
    signature = text(ik[ik.index('id="reljac.ik.controller.Controller"'):]).split("Controller(", 1)[1].split(")")[0]
    lines = signature.strip("\n").split("\n")
    assert len(lines) > 3 and max(len(line) for line in lines) <= 100, lines


def test_the_ik_page_starts_with_what_a_program_uses_and_documents_set_target(site):
    ik = page(site, "ik")
    ids = re.findall(r'<h2 id="(reljac\.ik\.[\w.]+)"', ik)
    assert ids.index("reljac.ik.search.solve") < ids.index("reljac.ik.tasks.base.Task") < \
        ids.index("reljac.ik.solvers.hierarchy")
    for task in ("frames.RelativeFrameTask", "frames.RelativePositionTask", "frames.RelativeOrientationTask",
                 "posture.PostureTask", "distance.DistanceTask"):
        assert f'id="reljac.ik.tasks.{task}.set_target"' in ik, task
    assert ik.index('id="reljac.ik.tasks.frames.FrameTask"') < ik.index('id="reljac.ik.tasks.base.TaskRows"')
    from reljac.ik.kinds import kinds

    for key, cls in kinds().items():  # every registered kind: in the table, its reference on the page
        assert f"<code>{key}</code>" in ik, key
        assert f'id="{cls.__module__}.{cls.__qualname__}"' in ik or f'id="{cls.__module__}"' in ik, key


def test_the_maps_page_documents_the_maps_api(site):
    maps = page(site, "maps")
    for name in ("capability.capability_map", "result.CapabilityMap", "mapfile.load_map", "seeding.seed_for"):
        assert f'id="reljac.maps.{name}"' in maps, name


def test_install_commands_name_what_pip_can_install():
    """Issue 18: reljac is not on PyPI: `pip install "reljac[scale]"` fails; ".[scale]" (in the
    reljac folder) or the dependency's own name works."""
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *ROOT.glob("examples/*.py"),
             *(ROOT / "reljac").rglob("*.py")]
    for path in files:
        if "maps" in path.parts or path.name == "bench_map.py":
            continue  # the map code is another change's
        assert "reljac[" not in path.read_text(), path
