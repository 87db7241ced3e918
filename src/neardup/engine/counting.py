"""Shared-key counts out of core: which documents share how many keys (S&GM's Overlap table,
Broder's phase 3), within the memory budget.

Input: :data:`neardup.engine.keys.KEYED` rows bucketed by key (every row of one key in one
bucket). Each bucket is sorted by (key, doc); a key held by more than ``limit`` documents is
dropped and counted (Broder's very common shingles; S&GM's ``drop_common``), exactly as the
in-memory phases do. Every other key held by k documents gives its k(k-1)/2 document pairs,
expanded a piece at a time (a key shared by 100,000 documents streams to disk in pieces, never
as one array) and routed by their first document to pair buckets. Each pair bucket is then
reduced alone to ``(a, b, count)`` rows, sorted by (a, b).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket, spread
from neardup.engine.keys import KEYED

__all__ = [
    "PAIR",
    "PIECE",
    "KeyCounts",
    "count_shared",
    "kept_runs",
    "key_runs",
    "run_pairs",
    "run_rows",
    "shared_counts",
    "sorted_keys",
    "star_rows",
]

PAIR = np.dtype([("a", "<i8"), ("b", "<i8")])
PIECE = 1 << 20
"""Pairs expanded at a time (16 MB)."""


@dataclass(slots=True)
class KeyCounts:
    """What the key join saw: entries kept, keys and entries dropped as too common, pairs."""

    entries: int = 0
    dropped: list[U64] = field(default_factory=list)
    dropped_entries: int = 0
    triplets: int = 0

    @property
    def dropped_keys(self) -> U64:
        """The dropped keys, sorted."""
        if not self.dropped:
            return np.empty(0, dtype=np.uint64)
        return np.sort(np.concatenate(self.dropped))


def sorted_keys(folder: Path, bucket: int) -> npt.NDArray[np.void]:
    """One bucket's rows sorted by (key, low, doc). Rows are written in document order, so a
    stable sort by key (and ``low`` when used) is enough; checked, else a full sort."""
    rows = read_bucket(folder, bucket, KEYED)
    if rows["low"].any():
        rows = rows[np.lexsort((rows["low"], rows["key"]))]
    else:
        rows = rows[np.argsort(rows["key"], kind="stable")]
    same = (rows["key"][1:] == rows["key"][:-1]) & (rows["low"][1:] == rows["low"][:-1])
    if np.any(same & (rows["doc"][1:] < rows["doc"][:-1])):
        rows = rows[np.lexsort((rows["doc"], rows["low"], rows["key"]))]
    return rows


def key_runs(rows: npt.NDArray[np.void]) -> tuple[I64, I64]:
    """Start and length of each run of equal (key, low) in sorted rows."""
    if rows.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    change = np.ones(rows.size, dtype=np.bool_)
    change[1:] = (rows["key"][1:] != rows["key"][:-1]) | (rows["low"][1:] != rows["low"][:-1])
    starts = np.flatnonzero(change).astype(np.int64)
    return starts, np.diff(np.append(starts, rows.size)).astype(np.int64)


def star_rows(rows: npt.NDArray[np.void]) -> tuple[I64, I64, int]:
    """In sorted rows, each row with an earlier equal (key, low), and the first row of its run
    (a star per group, as the in-memory methods pair them); also the number of groups."""
    starts, lengths = key_runs(rows)
    starts, lengths = starts[lengths > 1], lengths[lengths > 1]
    heads = np.repeat(starts, lengths - 1)
    within = np.arange(heads.size, dtype=np.int64) - np.repeat(np.cumsum(lengths - 1)
                                                               - (lengths - 1), lengths - 1)
    return heads, heads + 1 + within, int(starts.size)


def kept_runs(rows: npt.NDArray[np.void], limit: int,
               counts: KeyCounts | None) -> tuple[I64, I64]:
    """The runs of keys held by at most ``limit`` documents (all when limit is 0); with
    ``counts``, the entries and what was dropped are added to it."""
    starts, lengths = key_runs(rows)
    common = lengths > limit if limit > 0 else np.zeros(lengths.size, dtype=np.bool_)
    if counts is not None:
        counts.entries += int(lengths[~common].sum())
        counts.dropped.append(rows["key"][starts[common]])
        counts.dropped_entries += int(lengths[common].sum())
    return starts[~common], lengths[~common]


def run_rows(starts: I64, lengths: I64) -> I64:
    """The row numbers of the runs, in order."""
    position = np.arange(int(lengths.sum()), dtype=np.int64)
    return np.repeat(starts - (np.cumsum(lengths) - lengths), lengths) + position


def _expand(docs: I64, starts: I64, lengths: I64) -> tuple[I64, I64]:
    """All (first, second) pairs within each run (documents in run order)."""
    total = int(lengths.sum())
    position = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    entry_doc = docs[np.repeat(starts, lengths) + position]
    entry_len = np.repeat(lengths, lengths)
    firsts, seconds = [np.empty(0, np.int64)], [np.empty(0, np.int64)]
    live = np.arange(total, dtype=np.int64)
    for gap in range(1, int(lengths.max(initial=1))):
        live = live[position[live] + gap < entry_len[live]]
        firsts.append(entry_doc[live])
        seconds.append(entry_doc[live + gap])
    return np.concatenate(firsts), np.concatenate(seconds)


def _big_run(docs: I64, piece: int) -> Iterator[tuple[I64, I64]]:
    """The pairs of one run too large to expand at once, a block of first rows at a time."""
    firsts: list[I64] = []
    seconds: list[I64] = []
    held = 0
    for row in range(docs.size - 1):
        rest = docs[row + 1:]
        firsts.append(np.full(rest.size, docs[row], dtype=np.int64))
        seconds.append(rest)
        held += rest.size
        if held >= piece:
            yield np.concatenate(firsts), np.concatenate(seconds)
            firsts, seconds, held = [], [], 0
    if firsts:
        yield np.concatenate(firsts), np.concatenate(seconds)


def run_pairs(docs: I64, starts: I64, lengths: I64, piece: int = PIECE
              ) -> Iterator[tuple[I64, I64]]:
    """The pairs of every run of at least two documents, about ``piece`` pairs at a time."""
    shared = lengths > 1
    starts, lengths = starts[shared], lengths[shared]
    cumulative = np.cumsum(lengths * (lengths - 1) // 2)
    start = 0
    while start < lengths.size:
        base = int(cumulative[start - 1]) if start else 0
        end = max(start + 1, int(np.searchsorted(cumulative, base + piece, side="right")))
        if end == start + 1 and cumulative[start] - base > piece:
            yield from _big_run(docs[starts[start]:starts[start] + lengths[start]], piece)
        else:
            yield _expand(docs, starts[start:end], lengths[start:end])
        start = end


def count_shared(keys: BucketWriter, folder: Path, budget: int, limit: int,
                 piece: int = PIECE) -> tuple[BucketWriter, KeyCounts]:
    """The document pairs of every shared key, bucketed by first document; and the counts.
    ``keys`` is a closed writer of :data:`KEYED` rows routed by key."""
    triplets = 0
    for bucket in range(keys.count):
        _, lengths = kept_runs(sorted_keys(keys.folder, bucket), limit, None)
        triplets += int(np.sum(lengths * (lengths - 1) // 2))
    pairs = BucketWriter(folder, bucket_count(triplets * 3 * PAIR.itemsize, budget), PAIR)
    counts = KeyCounts(triplets=triplets)
    for bucket in range(keys.count):
        rows = sorted_keys(keys.folder, bucket)
        starts, lengths = kept_runs(rows, limit, counts)
        for first, second in run_pairs(rows["doc"], starts, lengths, piece):
            out = np.empty(first.size, dtype=PAIR)
            out["a"], out["b"] = first, second
            pairs.add(out, spread(first))
    pairs.close()
    return pairs, counts


def shared_counts(pairs: BucketWriter, least: int = 1) -> Iterator[tuple[I64, I64, I64]]:
    """Per pair bucket: (a, b, count) of the pairs sharing at least ``least`` keys, by (a, b)."""
    for bucket in range(pairs.count):
        rows = read_bucket(pairs.folder, bucket, PAIR)
        if rows.size == 0:
            continue
        rows = rows[np.lexsort((rows["b"], rows["a"]))]
        change = np.ones(rows.size, dtype=np.bool_)
        change[1:] = (rows["a"][1:] != rows["a"][:-1]) | (rows["b"][1:] != rows["b"][:-1])
        starts = np.flatnonzero(change)
        count = np.diff(np.append(starts, rows.size)).astype(np.int64)
        keep = count >= least
        yield (rows["a"][starts][keep].astype(np.int64), rows["b"][starts][keep].astype(np.int64),
               count[keep])
