"""Broder's estimators over many pairs of sketches at once (the sketches stored as one CSR array).

The same estimates as :func:`neardup.fingerprints.sketch.estimate_resemblance` and
``estimate_containment``, for every pair (a[i], b[i]): a merge walk over the two sorted sketches
per pair, in numba (the walks have per-pair lengths and early stops that numpy cannot express
without materialising every pair's union). MOD sketches are compared under each pair's larger
modulus (the longer document's); MIN sketches have no containment (NaN).
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64, I64, U64
from neardup.config import SketchConfig
from neardup.text.compiled import njit

__all__ = ["estimates_against", "mod_ratios", "pair_estimates"]



@njit(cache=True)
def _min_pairs(flat: U64, offsets: I64, a: I64, b: I64, size: int) -> F64:  # pragma: no cover
    out = np.zeros(a.size, dtype=np.float64)
    for index in range(a.size):
        i, end_i = offsets[a[index]], min(offsets[a[index] + 1], offsets[a[index]] + size)
        j, end_j = offsets[b[index]], min(offsets[b[index] + 1], offsets[b[index]] + size)
        taken, shared = 0, 0
        while taken < size and (i < end_i or j < end_j):
            if i < end_i and j < end_j and flat[i] == flat[j]:
                shared += 1
                i += 1
                j += 1
            elif j >= end_j or (i < end_i and flat[i] < flat[j]):
                i += 1
            else:
                j += 1
            taken += 1
        out[index] = shared / taken if taken else 0.0
    return out


@njit(cache=True)
def _count_under(flat: U64, start: int, end: int, modulus: np.uint64) -> int:
    count = 0
    for k in range(start, end):
        if flat[k] % modulus == 0:
            count += 1
    return count


@njit(cache=True)
def _mod_pairs(flat: U64, offsets: I64, moduli: I64, a: I64,
               b: I64) -> tuple[I64, I64, I64]:  # pragma: no cover - compiled
    shared = np.zeros(a.size, dtype=np.int64)
    size_a = np.zeros(a.size, dtype=np.int64)
    size_b = np.zeros(a.size, dtype=np.int64)
    for index in range(a.size):
        x, y = a[index], b[index]
        modulus = np.uint64(max(moduli[x], moduli[y]))
        i, end_i, j, end_j = offsets[x], offsets[x + 1], offsets[y], offsets[y + 1]
        size_a[index] = _count_under(flat, i, end_i, modulus)
        size_b[index] = _count_under(flat, j, end_j, modulus)
        count = 0
        while i < end_i and j < end_j:
            if flat[i] == flat[j]:
                if flat[i] % modulus == 0:
                    count += 1
                i += 1
                j += 1
            elif flat[i] < flat[j]:
                i += 1
            else:
                j += 1
        shared[index] = count
    return shared, size_a, size_b


def mod_ratios(shared: I64, size_a: I64, size_b: I64) -> tuple[F64, F64, F64]:
    """Resemblance and both containments from sample counts (0 where there is no sample)."""
    counts = shared.astype(np.float64)
    union = (size_a + size_b).astype(np.float64) - counts
    with np.errstate(divide="ignore", invalid="ignore"):
        resemblance = np.where(union > 0, counts / union, 0.0)
        c_ab = np.where(size_a > 0, counts / size_a, 0.0)
        c_ba = np.where(size_b > 0, counts / size_b, 0.0)
    return resemblance, c_ab, c_ba


def pair_estimates(flat: U64, offsets: I64, moduli: I64, a: I64, b: I64,
                   config: SketchConfig) -> tuple[F64, F64, F64]:
    """Estimated r(a, b), c(a, b) and c(b, a) per pair (containments NaN for MIN sketches)."""
    first = np.ascontiguousarray(a, dtype=np.int64)
    second = np.ascontiguousarray(b, dtype=np.int64)
    if config.kind == "min":
        resemblance = _min_pairs(flat, offsets, first, second, config.size)
        nan = np.full(first.size, np.nan)
        return resemblance, nan, nan.copy()
    shared, size_a, size_b = _mod_pairs(flat, offsets, np.ascontiguousarray(moduli, np.int64),
                                        first, second)
    return mod_ratios(shared, size_a, size_b)


def estimates_against(query: U64, query_modulus: int, flat: U64, offsets: I64, moduli: I64,
                      config: SketchConfig) -> tuple[F64, F64, F64]:
    """One query sketch against many stored ones (CSR): estimated r(q, d), c(q, d), c(d, q)."""
    count = offsets.size - 1
    all_flat = np.concatenate([np.asarray(query, np.uint64), np.asarray(flat, np.uint64)])
    all_offsets = np.concatenate([[0], np.asarray(offsets, np.int64) + query.size])
    all_moduli = np.concatenate([[query_modulus], np.asarray(moduli, np.int64)])
    a = np.zeros(count, dtype=np.int64)
    b = np.arange(1, count + 1, dtype=np.int64)
    return pair_estimates(all_flat, all_offsets.astype(np.int64), all_moduli, a, b, config)
