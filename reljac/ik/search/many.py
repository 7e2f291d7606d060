"""Many problems in one call (:meth:`reljac.ik.search.solve.Solver.solve_many`): the seeds as rows
and its progress bar (the call works on copies of the tasks: it leaves the caller's as they were)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...exceptions import ConfigurationError
from ...robot import Robot

Progress = Callable[[int], None]  # called with the number of problems finished


def seed_rows_of(robot: Robot, middle: np.ndarray, seeds: Any, n: int) -> np.ndarray:
    """The seeds of n problems as rows (k, nq), each checked (:meth:`Robot.validate_q`): seeds
    None (one row, `middle`), one q (nq,) for all (one row) or (n, nq), one per problem
    (ConfigurationError naming the row that is wrong, or the count)."""
    if seeds is None:
        return middle[None, :]
    try:
        many = np.ndim(seeds) > 1
    except ValueError:  # nested lists of different lengths: rows, one of which is wrong
        many = True
    rows = list(seeds) if many else [seeds]
    if many and len(rows) != n:
        raise ConfigurationError(f"seeds must be None, one q ({robot.nq},) or ({n}, {robot.nq}), "
                                 f"one per target; got {len(rows)} rows")
    return np.array([robot.validate_q(q, name=f"seeds[{i}]" if many else "seeds") for i, q in enumerate(rows)])


def with_progress(n: int, show: bool, run: Callable[[Progress | None], Any]) -> Any:
    """run(progress) for n problems, with a progress bar on standard error when `show` (progress:
    None without one); its result."""
    from tqdm.auto import tqdm

    with tqdm(total=n, disable=not show, unit="pose", desc="solve_many") as bar:
        shown = [0]

        def progress(finished: int) -> None:
            bar.update(finished - shown[0])
            shown[0] = finished

        found = run(progress if show else None)
        progress(n)
    return found
