"""Pairs on disk: one record type for every pair a stage finds (exact, revisit, near).

The fields are those of :class:`neardup.methods.pairs.Pairs`, so a bucket of records converts to
and from it without loss.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.methods.pairs import VIEWS, Pairs

__all__ = ["PAIR", "from_records", "to_records", "view_counts"]

PAIR = np.dtype([("a", "<i8"), ("b", "<i8"), ("method", "i1"), ("relation", "i1"),
                 ("hamming", "<i8"), ("estimate", "<f8"), ("resemblance", "<f8"),
                 ("containment_ab", "<f8"), ("containment_ba", "<f8"), ("shared", "<i8"),
                 ("view", "i1"), ("other_resemblance", "<f8")])


def to_records(pairs: Pairs) -> npt.NDArray[Any]:
    records = np.empty(len(pairs), dtype=PAIR)
    for name in Pairs.__slots__:
        records[name] = getattr(pairs, name)
    return records


def from_records(records: npt.NDArray[Any]) -> Pairs:
    return Pairs(**{name: np.ascontiguousarray(records[name]) for name in Pairs.__slots__})


def view_counts(path: Path, views: tuple[str, ...]) -> dict[str, int]:
    """The pairs of the record file ``path`` per view they stand on (read a block at a time)."""
    counts = np.zeros(len(VIEWS), dtype=np.int64)
    total = path.stat().st_size // PAIR.itemsize
    for start in range(0, total, 1 << 20):
        block = np.fromfile(path, dtype=PAIR, count=min(1 << 20, total - start),
                            offset=start * PAIR.itemsize)
        found = block["view"][block["view"] >= 0]
        counts += np.bincount(found, minlength=len(VIEWS))
    return {view: int(counts[VIEWS.index(view)]) for view in views}
