"""Permuted sorted tables over a fixed set of fingerprints (Manku et al., section 3.1 and 3.3).

:class:`PermutedTables` holds, for one immutable set of 64-bit fingerprints (a store segment),
the fingerprints sorted with their ids, and one sorted table of permuted fingerprints per table
plan. Every array is plain numpy, so a segment can be memory-mapped from disk.

- ``query(q, k)``, online (``query_each(qs, k)``: each of many in one compiled call): per
  table, find the permuted fingerprints sharing the table's prefix with the permuted query
  (interpolation search, then binary search), keep those within ``k`` bits (permutations
  preserve Hamming distance), un-permute the matches and look up their ids.
- ``query_batch(qs, k)``, batch: build the tables over the queries and scan the stored
  fingerprints chunk by chunk, probing the query tables (the paper's MapReduce mapper).

A match is reported by the first table whose prefix it shares, so no match comes out twice.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U16, U64
from neardup.errors import ConfigError, CorruptDataError
from neardup.index.bitperm import (
    PlanArrays,
    first_found,
    permute_one,
    permute_values,
    plan_arrays,
    popcount,
    prefix_masks,
    unpermute_one,
)
from neardup.index.blockcodec import decode_range
from neardup.index.compressed import DEFAULT_BLOCK_BYTES, CompressedTable
from neardup.index.hamming import TablePlan
from neardup.text.compiled import njit

__all__ = ["Matches", "PermutedTables", "brute_force_matches", "scan_each"]

BATCH_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class Matches:
    """Matches of queries against stored fingerprints: query position, stored id, distance."""

    query: I64
    id: I64
    distance: I64

    def __len__(self) -> int:
        return int(self.id.size)

    @staticmethod
    def empty() -> Matches:
        none = np.empty(0, dtype=np.int64)
        return Matches(none, none.copy(), none.copy())

    @staticmethod
    def concat(parts: list[Matches]) -> Matches:
        if not parts:
            return Matches.empty()
        return Matches(*(np.concatenate([getattr(p, f) for p in parts])
                         for f in ("query", "id", "distance")))

    def sorted(self) -> Matches:
        """By query, then distance, then id."""
        order = np.lexsort((self.id, self.distance, self.query))
        return Matches(self.query[order], self.id[order], self.distance[order])


@njit(cache=True, inline="always")
def _lower_bound(row: U64, value: np.uint64) -> int:  # pragma: no cover - compiled
    """First index with row[index] >= value: interpolation steps, then binary search."""
    low, high = 0, row.size
    for _ in range(4):
        if high - low < 64 or row[low] >= value:
            break
        first, last = float(row[low]), float(row[high - 1])
        if value > row[high - 1]:
            return high
        guess = low + int((float(value) - first) / max(last - first, 1.0) * (high - low - 1))
        guess = min(max(guess, low), high - 1)
        if row[guess] < value:
            low = guess + 1
        else:
            high = guess + 1
    while low < high:
        middle = (low + high) // 2
        if row[middle] < value:
            low = middle + 1
        else:
            high = middle
    return low


@njit(cache=True)
def _probe(tables: U64, starts: I64, widths: I64, segments: I64, prefix: I64, masks: U64,
           query: np.uint64, k: int, out: U64) -> int:  # pragma: no cover - compiled
    """Stored fingerprints within k of ``query``, each once; returns how many (``out`` filled
    up to its size)."""
    found = 0
    for t in range(tables.shape[0]):
        permuted = permute_one(query, starts[t], widths[t], segments[t])
        shift = np.uint64(64 - prefix[t])
        low = (permuted >> shift) << shift
        high = low | ((np.uint64(1) << shift) - np.uint64(1))
        row = tables[t]
        i = _lower_bound(row, low)
        while i < row.size and row[i] <= high:
            repeat = i > 0 and row[i] == row[i - 1]
            if not repeat and popcount(row[i] ^ permuted) <= k:
                value = unpermute_one(row[i], starts[t], widths[t], segments[t])
                if first_found(value ^ query, masks[:t]):
                    if found < out.size:
                        out[found] = value
                    found += 1
            i += 1
    return found


@njit(cache=True)
def _scan_against_queries(stored: U64, permuted_queries: U64, query_order: I64, queries: U64,
                          starts: I64, widths: I64, count: int, prefix: int, masks: U64,
                          k: int, out_query: I64, out_stored: I64) -> int:  # pragma: no cover
    """One table of the batch mode: probe the sorted permuted queries with each stored value."""
    found = 0
    shift = np.uint64(64 - prefix)
    for s in range(stored.size):
        permuted = permute_one(stored[s], starts, widths, count)
        low = (permuted >> shift) << shift
        i = _lower_bound(permuted_queries, low)
        while i < permuted_queries.size and (permuted_queries[i] >> shift) == (permuted >> shift):
            q = query_order[i]
            diff = queries[q] ^ stored[s]
            if popcount(diff) <= k and first_found(diff, masks):
                if found < out_query.size:
                    out_query[found], out_stored[found] = q, s
                found += 1
            i += 1
    return found


@njit(cache=True)
def _probe_compressed(words: U64, keys: U64, offsets: I64, table: U16,
                      peek: int, block_words: int, starts: I64, widths: I64, count: int,
                      prefix: int, earlier: U64, query: np.uint64, k: int, out: U64,
                      found: int) -> int:  # pragma: no cover - compiled
    """One compressed table's share of an online probe: decode the blocks that can hold the
    query's prefix, keep values within k that no earlier table reports; returns the new count
    (``out`` filled up to its size), or -1 when a block does not decode."""
    permuted = permute_one(query, starts, widths, count)
    shift = np.uint64(64 - prefix)
    low = (permuted >> shift) << shift
    high = low | ((np.uint64(1) << shift) - np.uint64(1))
    bounds = np.array([low, high], dtype=np.uint64).view(np.int64)  # the bit patterns
    values, status = decode_range(words, keys, offsets, table, peek, block_words, bounds[0],
                                  bounds[1])
    if status:
        return -1
    for i in range(values.size):
        if (i > 0 and values[i] == values[i - 1]) or popcount(values[i] ^ permuted) > k:
            continue
        value = unpermute_one(values[i], starts, widths, count)
        if first_found(value ^ query, earlier):
            if found < out.size:
                out[found] = value
            found += 1
    return found


@njit(cache=True)
def _ids_of(fingerprints: U64, ids: I64, values: U64,
            query: np.uint64) -> tuple[I64, I64]:  # pragma: no cover - compiled
    """Every id stored with one of ``values`` and its distance to ``query``, nearest first
    (interpolation search for each value, then a walk over its repeats)."""
    low = np.empty(values.size, dtype=np.int64)
    high = np.empty(values.size, dtype=np.int64)
    total = 0
    for i in range(values.size):
        low[i] = _lower_bound(fingerprints, values[i])
        end = low[i]
        while end < fingerprints.size and fingerprints[end] == values[i]:
            end += 1
        high[i] = end
        total += end - low[i]
    keys = np.empty(total, dtype=np.int64)
    found = 0
    for i in range(values.size):
        distance = popcount(values[i] ^ query)
        for position in range(low[i], high[i]):
            keys[found] = (np.int64(distance) << 56) | ids[position]
            found += 1
    keys.sort()
    return keys & ((np.int64(1) << 56) - 1), keys >> 56


@njit(cache=True)
def _query_plain_each(tables: U64, starts: I64, widths: I64, segments: I64, prefix: I64,
                      masks: U64, fingerprints: U64, ids: I64, queries: U64, k: int,
                      out_query: I64, out_id: I64,
                      out_distance: I64) -> int:  # pragma: no cover - compiled
    """The online query of each of ``queries`` in one compiled call: fills the out arrays (up
    to their size) with (query position, id, distance), each query's nearest first; returns
    how many there are."""
    values = np.empty(64, dtype=np.uint64)
    found = 0
    for q in range(queries.size):
        count = _probe(tables, starts, widths, segments, prefix, masks, queries[q], k, values)
        if count > values.size:
            values = np.empty(count, dtype=np.uint64)
            _probe(tables, starts, widths, segments, prefix, masks, queries[q], k, values)
        matched, distances = _ids_of(fingerprints, ids, values[:count], queries[q])
        for i in range(matched.size):
            if found < out_id.size:
                out_query[found], out_id[found], out_distance[found] = q, matched[i], \
                    distances[i]
            found += 1
    return found


class PermutedTables:
    """Sorted permuted tables over one immutable set of fingerprints (see the module docstring).

    ``fingerprints`` (sorted) and ``ids`` are parallel; ``tables[t]`` is the sorted permuted
    fingerprints of plan ``t``.
    """

    def __init__(self, plans: list[TablePlan], fingerprints: U64, ids: I64,
                 tables: U64 | list[CompressedTable]) -> None:
        count = fingerprints.size
        if isinstance(tables, list):
            shapes_fit = len(tables) == len(plans) and all(len(t) == count for t in tables)
        else:
            shapes_fit = tables.shape == (len(plans), count)
        if not shapes_fit or ids.shape != fingerprints.shape:
            raise ConfigError(f"tables, ids {ids.shape} do not fit {len(plans)} plans over "
                              f"{count} fingerprints")
        self.plans = plans
        self.fingerprints = fingerprints
        self.ids = ids
        self.tables = tables
        self._arrays: PlanArrays = plan_arrays(plans)
        self._masks = prefix_masks(self._arrays)

    @property
    def compressed(self) -> bool:
        return isinstance(self.tables, list)

    @property
    def nbytes(self) -> int:
        """Bytes of every array (what the segment occupies in memory once paged in)."""
        tables = (sum(t.nbytes for t in self.tables) if isinstance(self.tables, list)
                  else self.tables.nbytes)
        return int(self.fingerprints.nbytes + self.ids.nbytes + tables)

    def compress(self, block_bytes: int = DEFAULT_BLOCK_BYTES) -> PermutedTables:
        """The same segment with each table compressed (Manku, section 3.2)."""
        if isinstance(self.tables, list):
            return self
        tables = [CompressedTable.build(row, block_bytes) for row in self.tables]
        return PermutedTables(self.plans, self.fingerprints, self.ids, tables)

    @classmethod
    def build(cls, plans: list[TablePlan], fingerprints: npt.ArrayLike,
              ids: npt.ArrayLike | None = None) -> PermutedTables:
        values = np.ascontiguousarray(np.asarray(fingerprints, dtype=np.uint64))
        labels = (np.arange(values.size, dtype=np.int64) if ids is None
                  else np.asarray(ids, dtype=np.int64))
        order = np.argsort(values, kind="stable")
        values, labels = values[order], labels[order]
        arrays = plan_arrays(plans)
        tables = np.empty((len(plans), values.size), dtype=np.uint64)
        for t in range(len(plans)):
            tables[t] = np.sort(permute_values(values, arrays, t))
        return cls(plans, values, labels, tables)

    def __len__(self) -> int:
        return int(self.fingerprints.size)

    def matching_values(self, query: int, k: int) -> U64:
        """The distinct stored fingerprints within ``k`` bits of ``query``."""
        if isinstance(self.tables, list):
            return self._compressed_matches(self.tables, query, k)
        starts, widths, segments, prefix = self._arrays
        out = np.empty(64, dtype=np.uint64)
        q = np.uint64(query)
        found = _probe(self.tables, starts, widths, segments, prefix, self._masks, q, k, out)
        if found > out.size:
            out = np.empty(found, dtype=np.uint64)
            _probe(self.tables, starts, widths, segments, prefix, self._masks, q, k, out)
        return out[:found]

    def _compressed_matches(self, tables: list[CompressedTable], query: int, k: int) -> U64:
        starts, widths, segments, prefix = self._arrays
        q = np.uint64(query)
        out = np.empty(64, dtype=np.uint64)
        found = 0
        for t, table in enumerate(tables):
            found = _probe_compressed(*table.decoder(), starts[t], widths[t], int(segments[t]),
                                      int(prefix[t]), self._masks[:t], q, k, out, found)
            if found < 0:
                raise CorruptDataError(f"compressed table {t}: a block does not decode")
            if found > out.size:
                grown = np.empty(2 * found + 64, dtype=np.uint64)
                return self._compressed_matches_into(tables, query, k, grown)
        return out[:found]

    def _compressed_matches_into(self, tables: list[CompressedTable], query: int, k: int,
                                 out: U64) -> U64:
        starts, widths, segments, prefix = self._arrays
        found = 0
        for t, table in enumerate(tables):
            found = _probe_compressed(*table.decoder(), starts[t], widths[t], int(segments[t]),
                                      int(prefix[t]), self._masks[:t], np.uint64(query), k, out,
                                      found)
            if found < 0:
                raise CorruptDataError(f"compressed table {t}: a block does not decode")
        if found > out.size:
            return self._compressed_matches_into(tables, query, k, np.empty(found, np.uint64))
        return out[:found]

    def query(self, query: int, k: int) -> Matches:
        """Ids of stored fingerprints within ``k`` bits of ``query``, nearest first (ids must be
        below 2**56)."""
        if not isinstance(self.tables, list):
            return self.query_each(np.array([query], dtype=np.uint64), k)
        ids, distances = _ids_of(self.fingerprints, self.ids, self.matching_values(query, k),
                                 np.uint64(query))
        return Matches(np.zeros(ids.size, dtype=np.int64), ids, distances)

    def query_each(self, queries: U64, k: int) -> Matches:
        """The online query of each of ``queries`` (their positions in ``Matches.query``),
        nearest first within each: one compiled call for all of them over plain tables."""
        if isinstance(self.tables, list):
            parts = [self.query(int(q), k) for q in queries.tolist()]
            return Matches.concat([Matches(np.full(len(m), position, dtype=np.int64), m.id,
                                           m.distance) for position, m in enumerate(parts)])
        values = np.ascontiguousarray(queries, dtype=np.uint64)
        size = 16 * values.size + 64
        while True:
            out = [np.empty(size, dtype=np.int64) for _ in range(3)]
            found = _query_plain_each(self.tables, *self._arrays, self._masks,
                                      self.fingerprints, self.ids, values, k, *out)
            if found <= size:
                return Matches(*(array[:found] for array in out))
            size = found

    def query_batch(self, queries: npt.ArrayLike, k: int) -> Matches:
        """Every (query position, stored id) within ``k`` bits: tables over the queries, the
        stored fingerprints scanned chunk by chunk."""
        values = np.ascontiguousarray(np.asarray(queries, dtype=np.uint64))
        starts, widths, segments, prefix = self._arrays
        query_arrays = [(permute_values(values, self._arrays, t)) for t in range(len(self.plans))]
        parts: list[Matches] = []
        for t, permuted in enumerate(query_arrays):
            order = np.argsort(permuted, kind="stable").astype(np.int64)
            ordered = permuted[order]
            for begin in range(0, len(self), BATCH_CHUNK):
                chunk = np.ascontiguousarray(self.fingerprints[begin:begin + BATCH_CHUNK])
                q, s = _scan_table(chunk, ordered, order, values, starts[t], widths[t],
                                   int(segments[t]), int(prefix[t]), self._masks[:t], k)
                parts.append(Matches(q, self.ids[s + begin],
                                     np.bitwise_count(values[q] ^ chunk[s]).astype(np.int64)))
        return Matches.concat(parts)


def _scan_table(chunk: U64, ordered: U64, order: I64, queries: U64, starts: I64, widths: I64,
                count: int, prefix: int, masks: U64, k: int) -> tuple[I64, I64]:
    size = 1024 + chunk.size // 8
    while True:
        out_query = np.empty(size, dtype=np.int64)
        out_stored = np.empty(size, dtype=np.int64)
        found = _scan_against_queries(chunk, ordered, order, queries, starts, widths, count,
                                      prefix, masks, k, out_query, out_stored)
        if found <= size:
            return out_query[:found], out_stored[:found]
        size = found


@njit(cache=True)
def _within_each(stored: U64, queries: U64, k: int, out_query: I64, out_position: I64,
                 out_distance: I64) -> int:  # pragma: no cover - compiled
    """Each of ``queries`` against every stored fingerprint in one compiled call: (query
    position, stored position, distance) of those within ``k`` bits, up to the out arrays'
    size; returns how many there are."""
    found = 0
    for q in range(queries.size):
        for i in range(stored.size):
            distance = popcount(stored[i] ^ queries[q])
            if distance <= k:
                if found < out_query.size:
                    out_query[found], out_position[found], out_distance[found] = q, i, distance
                found += 1
    return found


def scan_each(stored: U64, ids: I64, queries: U64, k: int) -> Matches:
    """Each of ``queries`` against unindexed fingerprints (a store's insert log), in one
    compiled scan: (query position, stored id, distance), sorted by query, distance, id."""
    size = 16 * queries.size + 64
    while True:
        out = [np.empty(size, dtype=np.int64) for _ in range(3)]
        found = _within_each(stored, np.ascontiguousarray(queries, dtype=np.uint64), k, *out)
        if found <= size:
            break
        size = found
    query, position, distance = (array[:found] for array in out)
    matches = Matches(query, ids[position], distance)
    return matches.sorted() if found > 1 else matches


def brute_force_matches(stored: npt.ArrayLike, ids: npt.ArrayLike, queries: npt.ArrayLike,
                        k: int) -> Matches:
    """The reference: every query against every stored fingerprint (for tests and small deltas)."""
    s = np.asarray(stored, dtype=np.uint64)
    q = np.asarray(queries, dtype=np.uint64)
    distance = np.bitwise_count(q[:, None] ^ s[None, :]).astype(np.int64)
    qi, si = np.nonzero(distance <= k)
    return Matches(qi.astype(np.int64), np.asarray(ids, dtype=np.int64)[si], distance[qi, si])
