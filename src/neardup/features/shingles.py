"""Hashed w-shingles of a canonical text, as numpy arrays of 64-bit values.

Each token of the canonical text (bytes between single spaces, UTF-8) is hashed with 64-bit FNV-1a
followed by the MurmurHash3 finaliser; a w-shingle's hash chains the finaliser over its w token
hashes, starting from a value derived from the seed, so it depends on the order of the tokens. A
text with fewer than w tokens (but at least one) has one shingle: all its tokens. These functions
are the hot path of every fingerprint, hence numba.
"""

from __future__ import annotations

from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from neardup._types import U8, U64
from neardup.text.compiled import njit

__all__ = ["distinct", "fmix64", "shingle_hashes", "shingle_set", "shingle_set_of_tokens",
           "shingles_of_tokens", "token_hashes"]


_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_SEED_BASE = np.uint64(0x9E3779B97F4A7C15)
_SPACE = 32


@njit(cache=True, inline="always", interpretable=True)
def fmix64(h: np.uint64) -> np.uint64:
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h


@njit(cache=True, interpretable=True)
def _token_hashes(buf: U8) -> U64:  # pragma: no cover - compiled
    out = np.empty(buf.size // 2 + 1, dtype=np.uint64)
    count = 0
    h = _FNV_OFFSET
    in_token = False
    for byte in buf:
        if byte == _SPACE:
            if in_token:
                out[count] = fmix64(h)
                count += 1
                h = _FNV_OFFSET
                in_token = False
        else:
            h = (h ^ np.uint64(byte)) * _FNV_PRIME
            in_token = True
    if in_token:
        out[count] = fmix64(h)
        count += 1
    return out[:count]


@njit(cache=True, interpretable=True)
def _shingles(tokens: U64, width: int, seed: np.uint64) -> U64:  # pragma: no cover - compiled
    n = tokens.size
    if n == 0:
        return np.empty(0, dtype=np.uint64)
    span = min(width, n)
    count = n - span + 1
    out = np.empty(count, dtype=np.uint64)
    start = fmix64(seed ^ _SEED_BASE)
    for i in range(count):
        h = start
        for j in range(span):
            h = fmix64(h ^ tokens[i + j])
        out[i] = h
    return out


def token_hashes(canonical: bytes | str) -> U64:
    """64-bit hashes of the tokens of a canonical text (see :mod:`neardup.text.canonical`)."""
    data = canonical.encode("utf-8") if isinstance(canonical, str) else canonical
    return _token_hashes(np.frombuffer(data, dtype=np.uint8))


def shingle_hashes(canonical: bytes | str, width: int, seed: int = 0) -> U64:
    """Hashes of every w-shingle of a canonical text, in order, repeats included."""
    return _shingles(token_hashes(canonical), width, np.uint64(seed))


def shingles_of_tokens(tokens: U64, width: int, seed: int = 0) -> U64:
    """Hashes of every w-shingle, in order, repeats included, from a canonical text's token
    hashes: ``shingle_hashes`` of the text without scanning its bytes again."""
    return _shingles(tokens, width, np.uint64(seed))


Whole = TypeVar("Whole", bound=np.integer[Any])


def distinct(values: npt.NDArray[Whole]) -> npt.NDArray[Whole]:
    """The distinct values of an integer array, sorted: a sort and a neighbour test. Use it
    for integers rather than ``np.unique``, which numpy 2.3 and later answer by hashing every
    value first: 40-50 times slower on 1M distinct 64-bit values, 5 times on 1,000."""
    return _without_neighbours(np.sort(values))


@njit(cache=True, interpretable=True)
def _distinct_prefix(ordered: U64) -> int:  # pragma: no cover - compiled
    """Move the distinct values of a sorted array to its front, in order; their count (one
    compiled pass: a mask, a comparison and a gather cost about three times as much per set)."""
    if ordered.size < 2:
        return ordered.size
    kept = 1
    for i in range(1, ordered.size):
        if ordered[i] != ordered[kept - 1]:
            ordered[kept] = ordered[i]
            kept += 1
    return kept


def _without_neighbours(ordered: npt.NDArray[Whole]) -> npt.NDArray[Whole]:
    """A sorted array without its repeats."""
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=np.bool_)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def shingle_set(canonical: bytes | str, width: int, seed: int = 0) -> U64:
    """The distinct w-shingle hashes of a canonical text, sorted: the set S(D, w)."""
    return distinct(shingle_hashes(canonical, width, seed))


def shingle_set_of_tokens(tokens: U64, width: int, seed: int = 0) -> U64:
    """The set S(D, w) from a canonical text's token hashes (``token_hashes`` of it, or the
    second value of :func:`neardup.features.tokens.canonical_tokens`)."""
    shingles = _shingles(tokens, width, _seed(seed))
    shingles.sort()  # the kernel's own array: sorted and made distinct in place
    return shingles[:_distinct_prefix(shingles)]


_SEEDS: dict[int, np.uint64] = {}


def _seed(seed: int) -> np.uint64:
    """``np.uint64(seed)``, made once per seed (a numpy scalar costs about 0.7 us)."""
    value = _SEEDS.get(seed)
    if value is None:
        value = _SEEDS[seed] = np.uint64(seed)
    return value
