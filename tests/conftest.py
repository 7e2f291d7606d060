from __future__ import annotations

import contextlib
import os
import signal

import numpy as np
import pytest

import reljac

# Subprocesses started by the tests (python -c ..., python -m reljac.apps.cli) run in the
# repository's root: without this, Python would put the working directory first on sys.path and
# import the source tree, which has no compiled core, instead of the installed reljac the tests
# are about.
os.environ["PYTHONSAFEPATH"] = "1"

# A suite started in the background (nohup, or `&` in a script without job control) inherits SIGINT
# ignored, and so would every process the tests start: the Ctrl-C tests' interrupts would never
# land. Ignored signals stay ignored across exec; a handled one is reset to the default there.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def rng():
    return np.random.default_rng(20261121)


# The robots many modules use, one per module (a module may edit its robot: its collision pairs,
# its SRDF; another module gets a fresh one). A module that needs another robot under the same
# name defines its own fixture, which wins over these.
@pytest.fixture(scope="module")
def planar():
    """The bundled two-link planar arm."""
    return reljac.Robot.bundled("planar_2link")


@pytest.fixture(scope="module")
def dual_arm():
    """The bundled dual-arm robot (two 7-joint arms on a torso)."""
    return reljac.Robot.bundled("dual_arm")


@pytest.fixture(scope="module")
def hand():
    """The bundled hand."""
    return reljac.Robot.bundled("hand")


@pytest.fixture(scope="module")
def talos():
    """example-robot-data's Talos (reduced, floating base); the test is skipped without the package."""
    from reljac.robots import example_robot_data_dir

    if example_robot_data_dir() is None:
        pytest.skip("needs example-robot-data")
    return reljac.Robot.load("talos")


@pytest.fixture(scope="module")
def process_client():
    """A Dask LocalCluster of two single-threaded worker processes, its servers on loopback at ports
    the OS picks (``reljac.dask_client.local_servers``); skipped without Dask."""
    distributed = pytest.importorskip("distributed")
    from reljac.dask_client import local_servers

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, **local_servers()) as cluster, \
            distributed.Client(cluster, set_as_default=False) as client:
        yield client


@pytest.fixture(scope="module")
def thread_client():
    """A one-worker Dask cluster in this process (a monkeypatched function runs there too), for the
    tests of how a failing map or solve_many ends; skipped without Dask."""
    distributed = pytest.importorskip("distributed")
    from reljac.dask_client import local_servers

    with distributed.Client(processes=False, n_workers=1, threads_per_worker=1, **local_servers()) as client:
        yield client


@pytest.fixture(scope="session", autouse=True)
def _shared_runs_folder(tmp_path_factory):
    """Where helpers.run_once_per_session keeps its runs' output: the session's temporary folder,
    which pytest-xdist's workers share (pytest-NNN/, above each worker's popen-gwN/)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    os.environ["PYTEST_RELJAC_SHARED_RUNS"] = str(shared / "runs-shared-by-workers")


@pytest.fixture(scope="session")
def chromium():
    """One headless Chromium (test_viz.Browser, 800 x 600) for the browser tests of every module:
    each test opens its own page in it (starting Chromium takes about a second)."""
    from test_viz import CHROMIUM, Browser

    if CHROMIUM is None:
        pytest.skip("needs Chromium (`chromium` on PATH)")
    browser = Browser()
    yield browser
    browser.close()


@pytest.fixture(autouse=True)
def _blank_page_after_a_browser_test(request):
    """After a test that used the shared Chromium, its page is blank: a meshcat page left open keeps
    redrawing its scene in software WebGL (about 8 % of a core for Talos) beside the tests that
    run after it on the worker."""
    yield
    if "chromium" in request.fixturenames:
        with contextlib.suppress(Exception):
            request.getfixturevalue("chromium").open("about:blank")


def pytest_addoption(parser, pluginmanager):
    """pyproject.toml's addopts ask pytest-xdist for a worker per core (--numprocesses=auto
    --dist=loadfile); without it (`-p no:xdist`, to debug in this process, or not installed) the two
    options are accepted and the tests run here, one after the other."""
    if not pluginmanager.has_plugin("xdist"):
        group = parser.getgroup("xdist", "pytest-xdist is not active: the tests run in this process")
        group.addoption("--numprocesses", dest="numprocesses", metavar="N", help="ignored")
        group.addoption("--dist", dest="dist", default="no", metavar="MODE", help="ignored")


REQUIRE_COMPILED = os.environ.get("RELJAC_REQUIRE_COMPILED") == "1"


_STARTED: list[float] = []  # the 1-minute load average when the session started


def pytest_sessionstart(session):
    """With RELJAC_REQUIRE_COMPILED=1 (CI), a missing compiled core fails the run at once."""
    _STARTED[:] = [os.getloadavg()[0]]
    if REQUIRE_COMPILED:
        from reljac.ik import compiled_available

        if not compiled_available():
            raise pytest.UsageError("RELJAC_REQUIRE_COMPILED=1 but reljac.ik._core is not built or does not import")


def pytest_collection_modifyitems(config, items):
    """A test that uses the `chromium` fixture or a module's own `browser` (directly or through
    another fixture) is a `browser` test: `pytest -m "not slow and not browser"` leaves it out.

    The files keep their usual order: running the files with browser tests first made both
    workers draw in Chromium at once (software WebGL on every core), and the suite no faster."""
    for item in items:
        uses = getattr(item, "fixturenames", ())
        if "chromium" in uses or "browser" in uses:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With RELJAC_REQUIRE_COMPILED=1, a test skipped for want of the compiled core (its reason
    says "not built") fails."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_COMPILED and report.skipped and "not built" in str(report.longrepr):
        report.outcome = "failed"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Where the tests ran and the machine's load beside pytest's wall time (its last line): a time
    means little without them (docs/testing.md: the whole suite stays under 5 minutes on 2 idle cores)."""
    if not _STARTED:
        return
    workers = len(getattr(config.option, "tx", None) or []) if getattr(config.option, "dist", "no") != "no" else 0
    where = f"on {workers} pytest-xdist workers" if workers else "in one process"
    terminalreporter.write_line(f"ran {where}; load average {_STARTED[0]:.1f} at the start, "
                                f"{os.getloadavg()[0]:.1f} at the end")
