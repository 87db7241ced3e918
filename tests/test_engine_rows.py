"""Row selections the engine computes without ``np.unique``/``np.setdiff1d`` (whose first call
imports numpy.ma): the same rows as numpy's functions give."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from neardup.engine.candidates import CANDIDATE, _distinct
from neardup.engine.catalog import Part


@pytest.mark.parametrize("size", [0, 1, 2, 7, 1000])
def test_distinct_pairs_are_numpy_unique(size: int) -> None:
    rng = np.random.default_rng(size)
    rows = np.empty(size, dtype=CANDIDATE)
    rows["a"] = rng.integers(-2, 12, size)
    rows["b"] = rng.integers(0, 12, size)
    found = _distinct(rows)
    expected = np.unique(rows)
    assert found.dtype == expected.dtype
    assert found.tolist() == expected.tolist()


def test_distinct_keeps_one_of_each_repeated_pair() -> None:
    rows = np.array([(3, 4), (1, 2), (3, 4), (1, 5), (1, 2)], dtype=CANDIDATE)
    assert _distinct(rows).tolist() == [(1, 2), (1, 5), (3, 4)]


@pytest.mark.parametrize("dropped", [(), (0,), (4,), (1, 3), (0, 1, 2, 3, 4)])
def test_kept_rows_leave_out_the_dropped(dropped: tuple[int, ...]) -> None:
    part = Part("p", Path("unused"), 0, 5, dropped)
    expected = np.setdiff1d(np.arange(5, dtype=np.int64), np.array(dropped, dtype=np.int64))
    kept = part.kept_rows()
    assert kept.dtype == np.int64
    assert kept.tolist() == expected.tolist()
    assert part.count == kept.size
