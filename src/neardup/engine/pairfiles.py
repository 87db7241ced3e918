"""Pairs on disk: one record type for every pair a stage finds (exact, revisit, near).

The fields are those of :class:`neardup.methods.pairs.Pairs`, so a bucket of records converts to
and from it without loss.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.methods.pairs import Pairs

__all__ = ["PAIR", "from_records", "to_records"]

PAIR = np.dtype([("a", "<i8"), ("b", "<i8"), ("method", "i1"), ("relation", "i1"),
                 ("hamming", "<i8"), ("estimate", "<f8"), ("resemblance", "<f8"),
                 ("containment_ab", "<f8"), ("containment_ba", "<f8"), ("shared", "<i8")])


def to_records(pairs: Pairs) -> npt.NDArray[Any]:
    records = np.empty(len(pairs), dtype=PAIR)
    for name in Pairs.__slots__:
        records[name] = getattr(pairs, name)
    return records


def from_records(records: npt.NDArray[Any]) -> Pairs:
    return Pairs(**{name: np.ascontiguousarray(records[name]) for name in Pairs.__slots__})
