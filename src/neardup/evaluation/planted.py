"""Generated shingle-hash sets with planted resemblance and containment (for tests, benchmarks).

Documents are sets of random 64-bit "shingle hashes" (what :mod:`neardup.features.shingles`
produces for text), so millions can be made in seconds without any text:

- :func:`planted_sets`: documents in groups; a group's first member is a random base set and each
  other member is the base with every value replaced, independently, with probability
  ``p = (1 - r) / (1 + r)``, so its resemblance to the base is about r. Group sizes follow a
  repeating ``pattern`` (default: three single documents, then a group of 5). Yields chunks, so
  that a caller can sketch a chunk and drop its shingles before the next one;
- :func:`resembling_pair`: two sets of n values with resemblance exactly r (rounded);
- :func:`containing_pair`: a set of ``inner`` values wholly inside one of ``outer`` values.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from neardup._types import I64, U64
from neardup.errors import ConfigError

__all__ = ["PlantedChunk", "containing_pair", "planted_sets", "resembling_pair"]



@dataclass(frozen=True, slots=True)
class PlantedChunk:
    """Consecutive documents as CSR sets, and each document's planted group (global ids)."""

    flat: U64
    offsets: I64
    group: I64
    first_doc: int


def _random(rng: np.random.Generator, count: int) -> U64:
    return rng.integers(0, 2**64 - 1, count, dtype=np.uint64, endpoint=True)


def _group_ids(first: int, count: int, pattern: tuple[int, ...]) -> I64:
    """The group of documents first..first+count-1 under the repeating size ``pattern``."""
    period = sum(pattern)
    starts = np.cumsum((0, *pattern[:-1]))
    docs = np.arange(first, first + count, dtype=np.int64)
    cycle, offset = np.divmod(docs, period)
    within = np.searchsorted(starts, offset, side="right") - 1
    return (cycle * len(pattern) + within).astype(np.int64)


def planted_sets(documents: int, shingles: int = 500, resemblance: float = 0.8,
                 pattern: tuple[int, ...] = (1, 1, 1, 5), seed: int = 0,
                 chunk: int = 50_000) -> Iterator[PlantedChunk]:
    """``documents`` sets of ``shingles`` values each, in chunks of about ``chunk`` documents."""
    if not 0.0 < resemblance <= 1.0 or shingles < 1 or not pattern or min(pattern) < 1:
        raise ConfigError(f"resemblance={resemblance!r}, shingles={shingles!r}, "
                          f"pattern={pattern!r}: need 0 < r <= 1, shingles >= 1, sizes >= 1")
    replace = (1.0 - resemblance) / (1.0 + resemblance)
    period = sum(pattern)
    step = max(period, chunk - chunk % period)  # chunks end on a group boundary
    for first in range(0, documents, step):
        count = min(step, documents - first)
        group = _group_ids(first, count, pattern)
        rng = np.random.default_rng([seed, first])
        _, leader, inverse = np.unique(group, return_index=True, return_inverse=True)
        base = _random(rng, leader.size * shingles).reshape(leader.size, shingles)
        values = base[inverse]
        swap = rng.random(values.shape) < replace
        swap[leader] = False
        values[swap] = _random(rng, int(swap.sum()))
        offsets = np.arange(count + 1, dtype=np.int64) * shingles
        yield PlantedChunk(values.reshape(-1), offsets, group, first)


def resembling_pair(shingles: int, resemblance: float,
                    rng: np.random.Generator) -> tuple[U64, U64]:
    """Two sets of ``shingles`` values sharing k, with k / (2n - k) as close to r as can be."""
    shared = round(2 * shingles * resemblance / (1 + resemblance))
    values = _random(rng, 2 * shingles - shared)
    return values[:shingles], values[shingles - shared :]


def containing_pair(inner: int, outer: int, rng: np.random.Generator) -> tuple[U64, U64]:
    """A set of ``inner`` values and a set of ``outer`` values holding all of them (shuffled)."""
    values = _random(rng, outer)
    return values[:inner].copy(), rng.permutation(values)
