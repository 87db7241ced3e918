"""S&GM98's sort-based all-pairs overlap, external: the pair list may exceed memory.

(1) The FPrint-DocID relation is sorted by fingerprint (:class:`~neardup.overlap.relation.
ChunkRelation`). (2) A scan emits every pair of documents sharing a fingerprint into a buffer of
at most ``memory_limit`` bytes (12 bytes a pair: the 64-bit pair key and, after the sort, a 32-bit
count). (3) Each full buffer is sorted in place and run-length encoded to (pair, count), a sorted
*run*; when the pairs do not fit in one buffer, each run is spilled to a temporary directory.
(4) The runs are merged (a k-way merge by blocks, all runs read in step) and the counts of equal
pairs summed; pairs with ``F >= T`` form the Overlap table. With ``memory_limit=None`` all pairs are
sorted in memory at once: the plain in-memory sort, the reference of the benchmarks.
"""

from __future__ import annotations

import functools
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U32, U64
from neardup.overlap.phases import PhaseMeter
from neardup.overlap.relation import ChunkRelation, PairCursor, split_keys
from neardup.text.compiled import njit

__all__ = ["Overlap", "sort_overlap"]

BYTES_PER_PAIR = 12
MIN_BLOCK = 4096


@dataclass(frozen=True, slots=True)
class Overlap:
    """The Overlap table: pairs (a, b), a < b, sharing ``shared >= T`` fingerprints, sorted by
    (a, b); ``phases`` holds per phase its seconds, peak memory and counts."""

    a: I64
    b: I64
    shared: I64
    phases: dict[str, dict[str, object]] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.a.size)

    @staticmethod
    def from_keys(keys: U64, counts: npt.NDArray[np.integer], phases: dict[str, dict[str, object]]
                  ) -> Overlap:
        a, b = split_keys(keys)
        return Overlap(a, b, counts.astype(np.int64), phases)


@njit(cache=True)
def _run_length(keys: U64, counts: U32) -> int:  # pragma: no cover - compiled
    """Sorted ``keys`` to distinct keys (in place, at the front) and their counts."""
    if keys.size == 0:
        return 0
    out = 0
    counts[0] = 1
    for i in range(1, keys.size):
        if keys[i] == keys[out]:
            counts[out] += 1
        else:
            out += 1
            keys[out] = keys[i]
            counts[out] = 1
    return out + 1


@dataclass(frozen=True, slots=True)
class _Run:
    keys: Path
    counts: Path
    length: int


def _spill(keys: U64, counts: U32, directory: Path, index: int) -> _Run:
    run = _Run(directory / f"run{index}.keys", directory / f"run{index}.counts", int(keys.size))
    keys.tofile(run.keys)
    counts.tofile(run.counts)
    return run


def _sorted_runs(relation: ChunkRelation, capacity: int, directory: Path | None
                 ) -> tuple[list[_Run], tuple[U64, U32] | None, int]:
    """Expand, sort and run-length encode the pairs buffer by buffer; returns the spilled runs,
    or the one run kept in memory when everything fit in a single buffer, and the pair count."""
    cursor = PairCursor(relation)
    buffer = np.empty(capacity, dtype=np.uint64)
    counts = np.empty(capacity, dtype=np.uint32)
    runs: list[_Run] = []
    expanded = 0
    while True:
        filled = cursor.fill(buffer)
        expanded += filled
        view = buffer[:filled]
        view.sort()
        distinct = _run_length(view, counts)
        if not runs and cursor.done:
            return [], (buffer[:distinct], counts[:distinct]), expanded
        assert directory is not None
        runs.append(_spill(buffer[:distinct], counts[:distinct], directory, len(runs)))
        if cursor.done:
            return runs, None, expanded


class _RunReader:
    """Reads a spilled run block by block with plain reads (no memory map, so that the merge's
    memory stays what it holds, not the page cache it maps)."""

    def __init__(self, run: _Run, block: int) -> None:
        self.length, self.block, self.at = run.length, block, 0
        self.keys_file, self.counts_file = run.keys.open("rb"), run.counts.open("rb")
        self._load()

    def _load(self) -> None:
        count = min(self.block, self.length - self.at)
        self.keys_file.seek(self.at * 8)
        self.counts_file.seek(self.at * 4)
        self.keys = np.fromfile(self.keys_file, dtype=np.uint64, count=count)
        self.counts = np.fromfile(self.counts_file, dtype=np.uint32, count=count)

    @property
    def limit(self) -> int | None:
        """The last key of the block, or None when the block reaches the end of the run."""
        return int(self.keys[-1]) if self.at + self.keys.size < self.length else None

    def take(self, limit: int) -> tuple[U64, I64]:
        """The block's keys up to ``limit`` and their counts; reads on when the block is used."""
        take = int(np.searchsorted(self.keys, np.uint64(limit), side="right"))
        keys, counts = self.keys[:take], self.counts[:take].astype(np.int64)
        self.keys, self.counts = self.keys[take:], self.counts[take:]
        self.at += take
        if not self.keys.size and self.at < self.length:
            self._load()
        return keys, counts

    def close(self) -> None:
        self.keys_file.close()
        self.counts_file.close()


def _merge_round(readers: Sequence[_RunReader]) -> tuple[U64, I64]:
    """Take from every run the keys up to the smallest last key of the blocks that do not reach
    their run's end, and sum the counts of equal keys."""
    limits = [r.limit for r in readers if r.limit is not None]
    limit = min(limits) if limits else int(np.iinfo(np.uint64).max)
    parts = [r.take(limit) for r in readers]
    keys = np.concatenate([k for k, _ in parts])
    if not keys.size:
        return keys, np.empty(0, dtype=np.int64)
    order = np.argsort(keys)
    keys, sums = keys[order], np.concatenate([c for _, c in parts])[order]
    starts = np.flatnonzero(np.diff(keys, prepend=~keys[:1]) != 0)
    return keys[starts], np.add.reduceat(sums, starts)


def _merge(runs: list[_Run], threshold: int, budget: int | None) -> tuple[U64, I64]:
    block = max(MIN_BLOCK, (budget or 0) // (3 * BYTES_PER_PAIR * max(len(runs), 1)))
    readers = [_RunReader(r, block) for r in runs if r.length]
    found_k: list[U64] = []
    found_c: list[I64] = []
    try:
        while any(r.at < r.length for r in readers):
            keys, sums = _merge_round(readers)
            keep = sums >= threshold
            found_k.append(keys[keep])
            found_c.append(sums[keep])
    finally:
        for reader in readers:
            reader.close()
    if not found_k:
        return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
    return np.concatenate(found_k), np.concatenate(found_c)


@functools.cache
def _warm_up() -> None:
    """Load the compiled kernels once per process, before anything is measured."""
    _sort(ChunkRelation.from_sets([np.arange(3, dtype=np.uint32)] * 3), 1, None, None)


def sort_overlap(relation: ChunkRelation, threshold: int, memory_limit: int | None = None,
                 spill_dir: str | Path | None = None) -> Overlap:
    """Pairs of documents sharing at least ``threshold`` fingerprints, by the sort-based join;
    at most ``memory_limit`` bytes of pairs in memory (None: all of them)."""
    _warm_up()
    return _sort(relation, threshold, memory_limit, spill_dir)


def _sort(relation: ChunkRelation, threshold: int, memory_limit: int | None,
          spill_dir: str | Path | None) -> Overlap:
    total = relation.pair_total()
    capacity = total if memory_limit is None else min(total, memory_limit // BYTES_PER_PAIR)
    capacity = max(capacity, 1)
    with PhaseMeter() as log, tempfile.TemporaryDirectory(prefix="neardup-sort-",
                                                        dir=spill_dir) as tmp:
        with log.phase("expand_sort_runs") as record:
            runs, memory, expanded = _sorted_runs(relation, capacity, Path(tmp))
            record.update(pairs_expanded=expanded, runs=max(len(runs), 1),
                          spilled_bytes=sum(r.length for r in runs) * BYTES_PER_PAIR,
                          buffer_pairs=capacity)
        with log.phase("merge_count") as record:
            if memory is not None:
                keys, counts = memory
                keep = counts >= threshold
                keys, sums = keys[keep], counts[keep].astype(np.int64)
            else:
                keys, sums = _merge(runs, threshold, memory_limit)
            record.update(overlap_pairs=int(keys.size))
    return Overlap.from_keys(keys, sums, log.phases)
