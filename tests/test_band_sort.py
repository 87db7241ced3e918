"""A bucket of band keys sorts by (band, key, doc), whatever order its rows came in."""

from __future__ import annotations

import numpy as np
import pytest

from neardup.engine.candidates import BAND_ROW
from neardup.engine.keystore import sort_by_band


def _rows(bands: int, docs: int, distinct: int, seed: int) -> np.ndarray:
    """Each partition's rows band after band, documents in order (as the writer adds them);
    ``distinct`` keys, so that many documents share a key."""
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, docs, 50):
        for band in range(bands):
            rows = np.empty(min(50, docs - start), dtype=BAND_ROW)
            rows["band"], rows["doc"] = band, np.arange(start, start + rows.size)
            rows["key"] = rng.integers(0, distinct, rows.size).astype(np.uint64) * np.uint64(
                0x9E3779B97F4A7C15)
            parts.append(rows)
    return np.concatenate(parts)


def _full(rows: np.ndarray) -> np.ndarray:
    return rows[np.lexsort((rows["doc"], rows["key"], rows["band"]))]


@pytest.mark.parametrize("bands", [1, 14, 300])
def test_rows_in_document_order(bands: int) -> None:
    rows = _rows(bands, 400, 40, seed=bands)
    assert np.array_equal(sort_by_band(rows), _full(rows))


def test_rows_out_of_order_are_sorted_in_full() -> None:
    rows = _rows(14, 400, 40, seed=3)
    shuffled = rows[np.random.default_rng(4).permutation(rows.size)]
    assert np.array_equal(sort_by_band(shuffled), _full(rows))


def test_empty_bucket() -> None:
    assert sort_by_band(np.empty(0, dtype=BAND_ROW)).size == 0
