"""The search's options are declared once, in C++ (RELJAC_SEARCH_OPTIONS, src/core/search_options.hpp),
and their Python twin (reljac/ik/search/options.py, the Python backend's) matches them field by
field: the same names, the same defaults (None in Python where the core says -1), handed over by
keyword."""

from __future__ import annotations

import dataclasses

import pytest

from reljac.ik import compiled_available
from reljac.ik.search.options import UNSET, SearchOptions, core_options

pytestmark = pytest.mark.skipif(not compiled_available(), reason="the compiled core is not built")


@pytest.fixture(scope="module")
def core():
    from reljac.ik.solvers.backend import core

    return core()


def test_the_core_declares_every_option_of_the_python_twin_and_no_other(core):
    python = [f.name for f in dataclasses.fields(SearchOptions)] + ["floor"]  # floor: tol^2, a property here
    assert sorted(core.SearchOptions.fields) == sorted(python)


def test_every_default_is_the_same(core):
    made, twin = core.SearchOptions(), SearchOptions()
    for name in core.SearchOptions.fields:
        value = getattr(twin, name)
        expected = -1 if name in UNSET and value is None else value
        assert getattr(made, name) == expected, name
        assert type(getattr(made, name)) is type(expected) or name in ("timeout", "max_step"), name


def test_every_option_is_handed_over_by_keyword(core):
    """Each field set to a value of its own reaches the core's field of the same name."""
    values: dict = {}
    for i, f in enumerate(dataclasses.fields(SearchOptions)):
        whole = isinstance(getattr(SearchOptions(), f.name), int)  # (timeout and max_step: None, numbers)
        values[f.name] = 2**64 - 1 if f.name == "seed" else 7 + i if whole else 0.125 * (i + 1)
    options = SearchOptions(**values)
    made = core_options(options, core)
    for name in values:
        assert getattr(made, name) == values[name], name
    assert made.floor == options.floor == (options.tol * options.weight) ** 2
    unset = core_options(SearchOptions(restarts=None, timeout=None, max_step=None), core)
    assert (unset.restarts, unset.timeout, unset.max_step) == (-1, -1.0, -1.0)


def test_an_unknown_keyword_names_the_valid_ones(core):
    with pytest.raises(TypeError, match="SearchOptions takes these keyword arguments only: tol, max_iters"):
        core.SearchOptions(tolerance=1e-3)
    assert core.SearchOptions(tol=1e-3, restarts=4).tol == 1e-3
