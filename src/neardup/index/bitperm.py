"""Compiled kernels over 64-bit fingerprints: bit permutations of a table plan, population count,
and the scans behind the Hamming joins and probes.

A table plan (:class:`neardup.index.hamming.TablePlan`) becomes three small arrays so that numba
can apply it: per table the start and width of each bit segment, in the order the table places
them, and the number of segments. Permutations preserve Hamming distance, so every check here
compares permuted values directly and un-permutes only the matches.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from neardup._types import I64, U64
from neardup.text.compiled import njit

if TYPE_CHECKING:
    from neardup.index.hamming import TablePlan

__all__ = ["PlanArrays", "first_found", "permute_values", "plan_arrays", "popcount", "prefix_masks",
           "unpermute_values"]

PlanArrays = tuple[I64, I64, I64, I64]
"""(starts[t, s], widths[t, s], segments[t], prefix_bits[t]) of t tables."""


def plan_arrays(plans: list[TablePlan]) -> PlanArrays:
    """The arrays the kernels read, for a list of table plans."""
    most = max((len(p.segments) for p in plans), default=0)
    starts = np.zeros((len(plans), most), dtype=np.int64)
    widths = np.zeros((len(plans), most), dtype=np.int64)
    for row, plan in enumerate(plans):
        for column, (start, width) in enumerate(plan.segments):
            starts[row, column], widths[row, column] = start, width
    segments = np.array([len(p.segments) for p in plans], dtype=np.int64)
    prefix = np.array([p.prefix_bits for p in plans], dtype=np.int64)
    return starts, widths, segments, prefix


@njit(cache=True, inline="always")
def popcount(x: np.uint64) -> int:  # pragma: no cover - compiled
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return int((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True, inline="always")
def first_found(diff: np.uint64, earlier: U64) -> bool:  # pragma: no cover - compiled
    """Whether two fingerprints differing by ``diff`` share none of the ``earlier`` tables'
    prefixes (masks): the pair is this table's to report, so each pair comes out once."""
    for mask in earlier:  # noqa: SIM110 - a loop numba compiles to straight code
        if (diff & mask) == 0:
            return False
    return True


@njit(cache=True, inline="always")
def _low_mask(width: int) -> np.uint64:  # pragma: no cover - compiled
    if width >= 64:
        return np.uint64(0xFFFFFFFFFFFFFFFF)
    return (np.uint64(1) << np.uint64(width)) - np.uint64(1)


@njit(cache=True, inline="always")
def permute_one(value: np.uint64, starts: I64, widths: I64,
                count: int) -> np.uint64:  # pragma: no cover - compiled
    out = np.uint64(0)
    position = 64
    for s in range(count):
        width = widths[s]
        block = (value >> np.uint64(64 - starts[s] - width)) & _low_mask(width)
        position -= width
        out |= block << np.uint64(position)
    return out


@njit(cache=True, inline="always")
def unpermute_one(value: np.uint64, starts: I64, widths: I64,
                  count: int) -> np.uint64:  # pragma: no cover - compiled
    out = np.uint64(0)
    position = 64
    for s in range(count):
        width = widths[s]
        position -= width
        block = (value >> np.uint64(position)) & _low_mask(width)
        out |= block << np.uint64(64 - starts[s] - width)
    return out


def prefix_masks(arrays: PlanArrays) -> U64:
    """Per table, the mask (in the unpermuted bit order) of the bits that form its prefix."""
    starts, widths, segments, prefix = arrays
    top = np.array([~np.uint64(0) << np.uint64(64 - int(p)) for p in prefix], dtype=np.uint64)
    return np.array([unpermute_one(top[t], starts[t], widths[t], int(segments[t]))
                     for t in range(prefix.size)], dtype=np.uint64)


@njit(cache=True)
def _permute_all(values: U64, starts: I64, widths: I64, count: int,
                 inverse: bool) -> U64:  # pragma: no cover - compiled
    out = np.empty_like(values)
    for i in range(values.size):
        if inverse:
            out[i] = unpermute_one(values[i], starts, widths, count)
        else:
            out[i] = permute_one(values[i], starts, widths, count)
    return out


def permute_values(values: U64, arrays: PlanArrays, table: int) -> U64:
    """``values`` permuted as table ``table`` of the plan arrays permutes them."""
    starts, widths, segments, _ = arrays
    return _permute_all(np.ascontiguousarray(values, dtype=np.uint64), starts[table],
                        widths[table], int(segments[table]), False)


def unpermute_values(values: U64, arrays: PlanArrays, table: int) -> U64:
    """The inverse of :func:`permute_values`."""
    starts, widths, segments, _ = arrays
    return _permute_all(np.ascontiguousarray(values, dtype=np.uint64), starts[table],
                        widths[table], int(segments[table]), True)
