"""Canonical Huffman codes over a small alphabet, length-limited, with a table decoder.

The compressed Hamming tables (:mod:`neardup.index.compressed`) code one symbol per fingerprint:
the position of the leading 1-bit of its XOR with the previous one. Only the code *lengths* are
stored; the codes follow canonically (shorter codes first, then by symbol), so a reader rebuilds
exactly the writer's code from the lengths. Lengths are capped at :data:`MAX_CODE_BITS` so that a
decoder can look a code up in one table of ``2**max_length`` entries instead of walking a tree.
"""

from __future__ import annotations

import heapq

import numpy as np
import numpy.typing as npt

from neardup._types import F64, U8, U16, U64
from neardup.errors import CorruptDataError

__all__ = ["MAX_CODE_BITS", "canonical_codes", "check_lengths", "code_lengths", "decode_table"]


MAX_CODE_BITS = 12
"""Longest code: a decode table of at most 4,096 two-byte entries (8 KB, in L1 cache)."""
LENGTH_BITS = 5
"""A decode-table entry is ``symbol << LENGTH_BITS | length``; length 0 marks an invalid code."""


def _huffman_lengths(weights: F64) -> list[int]:
    """Plain Huffman code lengths (unlimited) of the symbols with a positive weight."""
    lengths = [0] * weights.size
    used = [int(s) for s in np.flatnonzero(weights > 0)]
    if len(used) == 1:
        lengths[used[0]] = 1
    heap = [(float(weights[s]), s, [s]) for s in used]
    heapq.heapify(heap)
    while len(heap) > 1:
        w1, t1, group1 = heapq.heappop(heap)
        w2, t2, group2 = heapq.heappop(heap)
        for symbol in group1 + group2:
            lengths[symbol] += 1
        heapq.heappush(heap, (w1 + w2, min(t1, t2), group1 + group2))
    return lengths


def code_lengths(weights: npt.ArrayLike, limit: int = MAX_CODE_BITS) -> U8:
    """Huffman code lengths for symbols with the given weights (0: the symbol is never coded),
    none longer than ``limit``. Deterministic: ties go to the lower symbol.

    When the plain code is too long, rare symbols are given a floor weight that doubles until the
    code fits; this costs a fraction of a bit only on symbols rarer than ``2**-limit``.
    """
    values = np.asarray(weights, dtype=np.float64).ravel()
    used = values > 0
    if int(used.sum()) > 2**limit:
        raise ValueError(f"{int(used.sum())} symbols cannot be coded in {limit} bits")
    floor = float(values.sum()) / 2**limit
    lengths = _huffman_lengths(values)
    while max(lengths, default=0) > limit:
        values = np.where(used, np.maximum(values, floor), 0.0)
        floor *= 2
        lengths = _huffman_lengths(values)
    return np.array(lengths, dtype=np.uint8)


def check_lengths(lengths: U8, limit: int = MAX_CODE_BITS) -> None:
    """Raise :class:`CorruptDataError` unless ``lengths`` form a prefix code within ``limit``."""
    if lengths.size and int(lengths.max()) > limit:
        raise CorruptDataError(f"code lengths up to {int(lengths.max())} bits (limit {limit})")
    used = lengths[lengths > 0].astype(np.int64)
    if int(np.sum(np.left_shift(1, limit - used))) > 2**limit:
        raise CorruptDataError("code lengths do not form a prefix code (Kraft sum above 1)")


def canonical_codes(lengths: U8) -> U64:
    """The canonical code of every symbol (right-aligned in ``lengths[s]`` bits; 0 if unused)."""
    codes = np.zeros(lengths.size, dtype=np.uint64)
    order = sorted((int(n), s) for s, n in enumerate(lengths.tolist()) if n > 0)
    code, previous = 0, 0
    for length, symbol in order:
        code <<= length - previous
        codes[symbol] = code
        code, previous = code + 1, length
    return codes


def decode_table(lengths: U8) -> tuple[U16, int]:
    """A lookup table indexed by the next ``peek`` bits of the stream, and ``peek``.

    Entry ``symbol << LENGTH_BITS | length`` for every bit pattern that starts with a code; 0 for
    patterns that start with no code (possible only in a corrupt stream or a one-symbol code).
    """
    check_lengths(lengths)
    peek = max(int(lengths.max(initial=0)), 1)
    table = np.zeros(2**peek, dtype=np.uint16)
    codes = canonical_codes(lengths)
    for symbol in np.flatnonzero(lengths).tolist():
        length = int(lengths[symbol])
        first = int(codes[symbol]) << (peek - length)
        table[first : first + (1 << (peek - length))] = symbol << LENGTH_BITS | length
    return table, peek
