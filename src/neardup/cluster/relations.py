"""Graded relations between two documents, strongest first, and set overlap scores.

``identical`` (same raw bytes) > ``lexical`` (same canonical text) > ``shingle-equivalent`` (same
shingle set) > ``near`` (found by a near-duplicate method and verified on the shingle sets) >
``contained`` (one document lies mostly inside the other: Broder's containment, estimated from MOD
sketches; the direction is in the pair's ``containment_ab`` / ``containment_ba``). New relations go
at the end so that the codes of the others keep their meaning.
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64, I64, U64
from neardup.text.compiled import njit

__all__ = ["RELATIONS", "overlap_counts", "overlap_scores"]

RELATIONS = ("identical", "lexical", "shingle-equivalent", "near", "contained")



@njit(cache=True)
def _intersection_size(flat: U64, start_a: int, end_a: int, start_b: int, end_b: int) -> int:
    i, j, shared = start_a, start_b, 0
    while i < end_a and j < end_b:
        x, y = flat[i], flat[j]
        if x == y:
            shared += 1
            i += 1
            j += 1
        elif x < y:
            i += 1
        else:
            j += 1
    return shared


@njit(cache=True)
def _overlaps(flat: U64, offsets: I64, a: I64, b: I64) -> I64:  # pragma: no cover - compiled
    out = np.empty(a.size, dtype=np.int64)
    for index in range(a.size):
        x, y = a[index], b[index]
        out[index] = _intersection_size(
            flat, offsets[x], offsets[x + 1], offsets[y], offsets[y + 1]
        )
    return out


def overlap_counts(flat: U64, offsets: I64, a: I64, b: I64) -> I64:
    """|S(a) ∩ S(b)| for each pair, the sets stored sorted and concatenated (CSR ``offsets``)."""
    return _overlaps(flat, offsets, np.ascontiguousarray(a), np.ascontiguousarray(b))


def overlap_scores(flat: U64, offsets: I64, a: I64, b: I64) -> tuple[F64, F64, F64]:
    """Resemblance r(a,b) and containments c(a,b) = |∩|/|S(a)|, c(b,a) = |∩|/|S(b)| per pair.

    Two empty sets have resemblance 1 (they are equal); containment of an empty set is 1.
    """
    shared = overlap_counts(flat, offsets, a, b).astype(np.float64)
    sizes = np.diff(offsets).astype(np.float64)
    size_a, size_b = sizes[a], sizes[b]
    union = size_a + size_b - shared
    with np.errstate(divide="ignore", invalid="ignore"):
        resemblance = np.where(union > 0, shared / union, 1.0)
        contain_ab = np.where(size_a > 0, shared / size_a, 1.0)
        contain_ba = np.where(size_b > 0, shared / size_b, 1.0)
    return resemblance, contain_ab, contain_ba
