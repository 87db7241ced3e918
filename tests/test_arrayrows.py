"""Chosen rows of a work directory's .npy files (engine/arrayrows.py), and the Z-order that
groups verification's blocks by partition (engine/verify.py)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from neardup.engine.arrayrows import array_header, read_rows
from neardup.engine.catalog import COLUMNS
from neardup.engine.kernels import z_order
from neardup.engine.workdir import write_array
from neardup.errors import CorruptDataError


def _saved(path: Path, array: np.ndarray) -> Path:
    write_array(path, array)
    return path


@pytest.mark.parametrize("array", [
    np.arange(1000, dtype=np.uint64),
    np.arange(3000, dtype=np.uint64).reshape(1000, 3),
    np.zeros(1000, dtype=COLUMNS),
])
def test_rows_equal_numpys_own_indexing(tmp_path: Path, array: np.ndarray) -> None:
    if array.dtype == COLUMNS:
        array["simhash"] = np.arange(array.size, dtype=np.uint64) * 7919
    path = _saved(tmp_path / "a.npy", array)
    rows = np.array([0, 5, 6, 500, 999], dtype=np.int64)
    assert np.array_equal(read_rows(path, rows), np.load(path)[rows])
    assert read_rows(path, np.empty(0, np.int64)).shape == (0, *array.shape[1:])


def test_a_replaced_file_is_read_with_its_own_header(tmp_path: Path) -> None:
    path = _saved(tmp_path / "a.npy", np.arange(10, dtype=np.uint64))
    assert read_rows(path, np.array([9]))[0] == 9
    replacement = _saved(tmp_path / "b.npy", np.arange(20, dtype=np.int32) * 2)
    os.replace(replacement, path)  # as the work directory replaces files: a rename
    assert array_header(path).dtype == np.int32
    assert read_rows(path, np.array([19]))[0] == 38


def test_a_cut_file_is_named(tmp_path: Path) -> None:
    path = _saved(tmp_path / "a.npy", np.arange(100, dtype=np.uint64))
    with open(path, "r+b") as cut:
        cut.truncate(path.stat().st_size - 8)
    with pytest.raises(CorruptDataError, match=r"a\.npy"):
        read_rows(path, np.array([0]))


def test_rows_past_the_end_and_missing_files_are_named(tmp_path: Path) -> None:
    path = _saved(tmp_path / "a.npy", np.arange(4, dtype=np.uint64))
    with pytest.raises(CorruptDataError, match="holds 4 rows"):
        read_rows(path, np.array([4]))
    with pytest.raises(CorruptDataError, match="missing"):
        read_rows(tmp_path / "gone.npy", np.array([0]))
    (tmp_path / "junk.npy").write_bytes(b"not an array at all")
    with pytest.raises(CorruptDataError, match=r"junk\.npy"):
        read_rows(tmp_path / "junk.npy", np.array([0]))


def test_z_order_interleaves_the_bits() -> None:
    x = np.array([0, 1, 0, 1, 2, 3, 0xFFFFFFFF], dtype=np.int64)
    y = np.array([0, 0, 1, 1, 0, 3, 0], dtype=np.int64)
    expected = [0, 1, 2, 3, 4, 15, int("01" * 32, 2)]
    assert z_order(x, y).tolist() == expected


def test_consecutive_pairs_on_the_curve_touch_few_partitions() -> None:
    """What the ordering is for: 100 partitions, pairs spread over all of them; blocks of 200
    consecutive pairs touch far fewer partitions in Z-order than in first-document order."""
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 100, 20_000), rng.integers(0, 100, 20_000)
    by_first = np.lexsort((b, a))
    on_curve = np.argsort(z_order(a, b), kind="stable")

    def touched(order: np.ndarray) -> float:
        return float(np.mean([np.unique(np.concatenate([a[block], b[block]])).size
                              for block in np.array_split(order, 100)]))

    assert touched(on_curve) < touched(by_first) / 3
