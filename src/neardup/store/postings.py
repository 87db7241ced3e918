"""Sketch postings (sketch value -> documents) as sorted runs, written with the segments.

A store answers "which documents hold any of these sketch values" from sorted runs of
(value, doc) pairs, never from a B-tree of random keys: an index on random values dirties one
page per posting at every commit once it outgrows the commit, so the bytes written per document
grow with the store. Here each segment carries its postings as two arrays sorted by (value, doc)
(``postings.values``, ``postings.docs``, checksummed like the segment's other files), merged
when the segments merge (each byte rewritten O(log N) times). The postings of the insert log
stay in memory (:class:`PostingDelta`), rebuilt on open from the log's checked sketch rows:
the ``sketches`` table, appended in document order, is what makes them durable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from neardup._types import I64
from neardup.text.compiled import njit

__all__ = ["POSTING_ARRAYS", "PostingDelta", "docs_holding", "merged_runs",
           "sketch_postings", "sorted_run"]

POSTING_ARRAYS = ("postings.values", "postings.docs")
"""The arrays of a segment that hold its postings: values (int64) and their documents."""

Run = tuple[I64, I64]
"""(values, docs), sorted by value then doc."""

RECENT_FLOOR = 4_096


def sorted_run(values: I64, docs: I64) -> Run:
    """``(values, docs)`` sorted by (value, doc)."""
    order = np.lexsort((docs, values))
    return values[order], docs[order]


def merged_runs(runs: list[Run]) -> Run:
    """One run holding every posting of ``runs``."""
    if not runs:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return sorted_run(np.concatenate([r[0] for r in runs]).astype(np.int64, copy=False),
                      np.concatenate([r[1] for r in runs]).astype(np.int64, copy=False))


@njit(cache=True)
def _holding(values: I64, docs: I64, wanted: I64, out: I64) -> int:  # pragma: no cover
    """Fill ``out`` (up to its size) with the documents of the sorted run (``values``,
    ``docs``) holding any of ``wanted``; returns how many there are."""
    found = 0
    for value in wanted:
        at = np.searchsorted(values, value)
        while at < values.size and values[at] == value:
            if found < out.size:
                out[found] = docs[at]
            found += 1
            at += 1
    return found


def docs_holding(run: Run, wanted: I64) -> I64:
    """The documents of ``run`` holding any of ``wanted`` (sorted distinct values): one
    compiled binary search per value."""
    values, docs = run
    size = 64
    while True:
        out = np.empty(size, dtype=np.int64)
        found = _holding(values, docs, wanted, out)
        if found <= size:
            return out[:found]
        size = found


class PostingDelta:
    """The postings of the documents not yet in a segment: sorted runs, the newest merged
    into the one before it while it is at least half its size (O(log n) runs, each posting
    re-sorted O(log n) times), and the latest small additions in a hash map (value ->
    documents) until they make a run of :data:`RECENT_FLOOR`. A lookup costs a binary search
    per run and a map probe per value, however many one-page adds (a crawler's) came before."""

    def __init__(self) -> None:
        self._runs: list[Run] = []
        self._recent: dict[int, list[int]] = {}
        self._recent_size = 0

    def __len__(self) -> int:
        return sum(int(run[0].size) for run in self._runs) + self._recent_size

    def add(self, values: I64, docs: I64) -> None:
        if not values.size:
            return
        if values.size >= RECENT_FLOOR:           # a batch: a run of its own
            self._push(sorted_run(values.astype(np.int64), docs.astype(np.int64)))
            return
        recent = self._recent
        for value, doc in zip(values.tolist(), docs.tolist(), strict=True):
            recent.setdefault(value, []).append(doc)
        self._recent_size += int(values.size)
        if self._recent_size >= RECENT_FLOOR:
            self._push(self._recent_run())

    def _recent_run(self) -> Run:
        values = np.fromiter((v for v, held in self._recent.items() for _ in held),
                             dtype=np.int64, count=self._recent_size)
        docs = np.fromiter((d for held in self._recent.values() for d in held),
                           dtype=np.int64, count=self._recent_size)
        self._recent, self._recent_size = {}, 0
        return sorted_run(values, docs)

    def _push(self, run: Run) -> None:
        self._runs.append(run)
        while len(self._runs) > 1 and 2 * self._runs[-1][0].size >= self._runs[-2][0].size:
            last = self._runs.pop()
            self._runs[-1] = merged_runs([self._runs[-1], last])

    def docs_holding(self, wanted: I64) -> I64:
        found = [docs_holding(run, wanted) for run in self._runs]
        recent = [doc for value in wanted.tolist() for doc in self._recent.get(value, ())]
        found.append(np.array(recent, dtype=np.int64))
        return np.concatenate(found)

    def freeze(self) -> Run:
        """Every posting as one run; the delta is left empty."""
        run = merged_runs([*self._runs, self._recent_run()])
        self._runs = []
        return run


def sketch_postings(rows: Sequence[tuple[Any, ...]]) -> Run:
    """The postings of sketch rows (doc, modulus, sketch bytes, ...), unsorted."""
    values = [np.frombuffer(row[2], dtype="<i8") for row in rows]
    docs = [np.full(v.size, row[0], dtype=np.int64) for v, row in zip(values, rows, strict=True)]
    if not values:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(values).astype(np.int64), np.concatenate(docs)
