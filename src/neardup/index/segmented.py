"""``HammingIndex``: a growing Hamming index made of immutable segments and an in-memory delta.

New fingerprints go to the delta; ``freeze`` turns the delta into a :class:`PermutedTables`
segment, and ``merge`` combines segments (the store persists and memory-maps them). Queries read
every segment and the delta; their results equal a brute-force scan of everything added.

The delta is indexed as it grows, so that a query's cost does not grow with it (a store's insert
log holds up to ``flush_every`` documents, 100,000 by default, and a brute-force scan of them
would cost a query about 80 µs): its newest :data:`DELTA_TAIL` fingerprints at most are scanned
by brute force, compiled; each full tail becomes a run of permuted tables, and the newest run is
merged into the one before it while it is at least half its size (O(log n) runs, each
fingerprint re-sorted O(log n) times), as :class:`neardup.store.postings.PostingDelta` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.errors import ConfigError
from neardup.index.hamming import HammingDesign, TablePlan
from neardup.index.tables import Matches, PermutedTables, scan_each

__all__ = ["DELTA_TAIL", "HammingIndex"]

DELTA_TAIL = 4_096
"""The most fingerprints of the delta scanned by brute force (the rest are in runs)."""


class HammingIndex:
    """Find stored 64-bit fingerprints within Hamming distance k of a query.

    ``plans`` must find every pair within ``max_k`` (a :class:`HammingDesign` with
    ``max_k >= k``, or a planner's tables).
    """

    def __init__(self, design: HammingDesign | list[TablePlan], max_k: int,
                 segments: list[PermutedTables] | None = None) -> None:
        if isinstance(design, HammingDesign):
            if max_k > design.max_k:
                raise ConfigError(f"k={max_k}: design {design} finds pairs only up to "
                                  f"{design.max_k}")
            design = design.plans()
        self.plans = design
        self.max_k = max_k
        self.segments: list[PermutedTables] = list(segments or [])
        self._values: U64 = np.empty(0, dtype=np.uint64)
        self._ids: I64 = np.empty(0, dtype=np.int64)
        self._size = 0
        """The delta: the first ``_size`` entries of buffers that grow by doubling (an add
        copies only what it adds; a query reads a view)."""
        self._runs: list[tuple[int, PermutedTables]] = []
        """Runs of permuted tables over the delta, in order: (first position, tables); the
        entries from the last run's end to ``_size`` are the tail."""

    def __len__(self) -> int:
        return sum(len(s) for s in self.segments) + self._size

    @property
    def delta_size(self) -> int:
        return self._size

    def add(self, fingerprints: npt.ArrayLike, ids: npt.ArrayLike) -> None:
        """Add fingerprints with their ids (any int64 labels; a label may repeat)."""
        values = np.atleast_1d(np.asarray(fingerprints, dtype=np.uint64))
        labels = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        if values.shape != labels.shape:
            raise ConfigError(f"{values.size} fingerprints but {labels.size} ids")
        end = self._size + values.size
        if end > self._values.size:
            capacity = max(end, 2 * self._values.size, 1024)
            self._values = _grown(self._values, self._size, capacity)
            self._ids = _grown(self._ids, self._size, capacity)
        self._values[self._size:end] = values
        self._ids[self._size:end] = labels
        self._size = end
        if self._size - self._indexed() >= DELTA_TAIL:
            self._index_tail()

    def _delta(self) -> tuple[U64, I64]:
        return self._values[:self._size], self._ids[:self._size]

    def _indexed(self) -> int:
        """How many entries of the delta its runs cover (the tail starts there)."""
        return len(self._runs[-1][1]) + self._runs[-1][0] if self._runs else 0

    def _index_tail(self) -> None:
        """Make the tail a run, then merge the newest run into the one before it while it is
        at least half its size."""
        first = self._indexed()
        self._runs.append((first, self._run(first, self._size)))
        while len(self._runs) > 1 and 2 * len(self._runs[-1][1]) >= len(self._runs[-2][1]):
            self._runs.pop()
            first = self._runs.pop()[0]
            self._runs.append((first, self._run(first, self._size)))

    def _run(self, first: int, end: int) -> PermutedTables:
        return PermutedTables.build(self.plans, self._values[first:end], self._ids[first:end])

    def _tail(self) -> tuple[U64, I64]:
        first = self._indexed()
        return self._values[first:self._size], self._ids[first:self._size]

    def _check_k(self, k: int | None) -> int:
        k = self.max_k if k is None else k
        if not 0 <= k <= self.max_k:
            raise ConfigError(f"k={k}: this index finds distances 0..{self.max_k}")
        return k

    def query(self, fingerprint: int, k: int | None = None) -> Matches:
        """Every stored (id, distance) within ``k`` bits of one fingerprint, nearest first."""
        return self.query_each([fingerprint], k)

    def query_each(self, fingerprints: npt.ArrayLike, k: int | None = None) -> Matches:
        """:meth:`query` of each fingerprint, answered together (one compiled call per segment
        and one scan of the delta for all): (query position, id, distance), sorted by query,
        then nearest first."""
        k = self._check_k(k)
        queries = np.atleast_1d(np.asarray(fingerprints, dtype=np.uint64))
        if not queries.size:
            return Matches.empty()
        parts = [tables.query_each(queries, k) for tables in self._tables()]
        values, ids = self._tail()
        if values.size:
            parts.append(scan_each(values, ids, queries, k))
        found = [part for part in parts if len(part)]
        if len(found) <= 1:
            return found[0] if found else Matches.empty()   # each part is sorted
        return Matches.concat(found).sorted()

    def query_batch(self, fingerprints: npt.ArrayLike, k: int | None = None) -> Matches:
        """Every (query position, stored id, distance) within ``k`` bits (Manku's batch mode)."""
        k = self._check_k(k)
        queries = np.atleast_1d(np.asarray(fingerprints, dtype=np.uint64))
        parts = [tables.query_batch(queries, k) for tables in self._tables()]
        values, ids = self._tail()
        if values.size and queries.size:
            delta = PermutedTables.build(self.plans, values, ids)
            parts.append(delta.query_batch(queries, k))
        return Matches.concat(parts).sorted()

    def freeze(self) -> PermutedTables | None:
        """Turn the delta into a new segment (returned, and added to the index); None if empty."""
        values, ids = self._delta()
        if not values.size:
            return None
        segment = PermutedTables.build(self.plans, values, ids)
        self.segments.append(segment)
        self._values = np.empty(0, dtype=np.uint64)
        self._ids = np.empty(0, dtype=np.int64)
        self._size = 0
        self._runs = []
        return segment

    def _tables(self) -> list[PermutedTables]:
        """The segments, then the delta's runs."""
        return [*self.segments, *(tables for _, tables in self._runs)]

    def compress(self) -> None:
        """Compress the tables of every segment (queries then decode blocks as they probe)."""
        self.segments = [segment.compress() for segment in self.segments]

    def merged(self, segments: list[PermutedTables]) -> PermutedTables:
        """One segment holding the fingerprints of ``segments`` (for compaction)."""
        values = np.concatenate([s.fingerprints for s in segments])
        ids = np.concatenate([s.ids for s in segments])
        return PermutedTables.build(self.plans, values, ids)


def _grown(array: npt.NDArray[Any], used: int, capacity: int) -> npt.NDArray[Any]:
    """A buffer of ``capacity`` entries holding the first ``used`` of ``array``."""
    grown = np.empty(capacity, dtype=array.dtype)
    grown[:used] = array[:used]
    return grown
