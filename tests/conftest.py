from __future__ import annotations

import os

import numpy as np
import pytest

import reljac

# Subprocesses started by the tests (python -c ..., python -m reljac.apps.cli) run in the
# repository's root: without this, Python would put the working directory first on sys.path and
# import the source tree, which has no compiled core, instead of the installed reljac the tests
# are about.
os.environ["PYTHONSAFEPATH"] = "1"


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


REQUIRE_COMPILED = os.environ.get("RELJAC_REQUIRE_COMPILED") == "1"


def pytest_sessionstart(session):
    """With RELJAC_REQUIRE_COMPILED=1 (CI), a missing compiled core fails the run at once."""
    if REQUIRE_COMPILED:
        from reljac.ik import compiled_available

        if not compiled_available():
            raise pytest.UsageError("RELJAC_REQUIRE_COMPILED=1 but reljac.ik._core is not built or does not import")


def pytest_collection_modifyitems(config, items):
    """A test that uses the `chromium` fixture (directly or through another fixture) is a
    `browser` test: `pytest -m "not slow and not browser"` leaves it out."""
    for item in items:
        if "chromium" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """With RELJAC_REQUIRE_COMPILED=1, a test skipped for want of the compiled core (its reason
    says "not built") fails."""
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_COMPILED and report.skipped and "not built" in str(report.longrepr):
        report.outcome = "failed"
