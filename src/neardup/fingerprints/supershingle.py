"""Broder's super-shingles: shingles of the sorted sketch.

A document's sketch (sorted permuted shingle fingerprints) is cut into every window of ``size``
consecutive values; each window is hashed to one 64-bit super-shingle (the MurmurHash3 finaliser
chained over the window, from a seed-derived start, as for word shingles). A sketch shorter than
``size`` (but not empty) has one super-shingle, of all its values; an empty sketch has none.

Two documents sharing one super-shingle share ``size`` sketch values that are consecutive in both
sorted sketches: likely when they resemble, no pair counting needed. The weaknesses (Broder et al.,
section 5.3): short documents have few sketch values, so few windows to share; and a document
contained in a longer one has the longer one's extra values interleaved with the common ones, so
the windows differ.
"""

from __future__ import annotations

import numpy as np

from neardup._types import U64
from neardup.features.shingles import distinct

__all__ = ["supershingles"]

_START = 0x6A09E667F3BCC909


def _fmix64(h: U64) -> U64:
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xFF51AFD7ED558CCD)
    h = h ^ (h >> np.uint64(33))
    h = h * np.uint64(0xC4CEB9FE1A85EC53)
    return h ^ (h >> np.uint64(33))


def supershingles(sketch: U64, size: int, seed: int = 0) -> U64:
    """The distinct super-shingles of a sorted sketch (windows of ``size`` values), sorted."""
    values = np.asarray(sketch, dtype=np.uint64)
    if values.size == 0:
        return values.copy()
    span = min(size, values.size)
    count = values.size - span + 1
    start = np.full(count, (_START ^ (seed * 0x9E3779B97F4A7C15)) & (2**64 - 1), np.uint64)
    h = _fmix64(start)
    for offset in range(span):
        h = _fmix64(h ^ values[offset : offset + count])
    return distinct(h)
