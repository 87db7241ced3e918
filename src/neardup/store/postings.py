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

import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from neardup._types import I64
from neardup.store.formats import checked_rows

__all__ = ["POSTING_ARRAYS", "PostingDelta", "docs_holding", "log_postings", "merged_runs",
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


def docs_holding(run: Run, wanted: I64) -> I64:
    """The documents of ``run`` holding any of ``wanted`` (sorted distinct values)."""
    values, docs = run
    if not values.size or not wanted.size:
        return np.empty(0, dtype=np.int64)
    begin = np.searchsorted(values, wanted, side="left")
    end = np.searchsorted(values, wanted, side="right")
    hits = [np.asarray(docs[b:e]) for b, e in zip(begin.tolist(), end.tolist(), strict=True)
            if e > b]
    return np.concatenate(hits) if hits else np.empty(0, dtype=np.int64)


class PostingDelta:
    """The postings of the documents not yet in a segment: a sorted run plus the recent
    additions in a hash map (value -> documents), folded into the run once they reach an
    eighth of it (so that each posting is re-sorted O(log n) times). A lookup costs one binary
    search of the run and one map probe per value, however many small adds came before it (a
    crawler adds one page at a time)."""

    def __init__(self) -> None:
        self._run: Run = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        self._recent: dict[int, list[int]] = {}
        self._recent_size = 0

    def __len__(self) -> int:
        return int(self._run[0].size) + self._recent_size

    def add(self, values: I64, docs: I64) -> None:
        if not values.size:
            return
        if values.size >= RECENT_FLOOR:           # a bulk load: straight into the run
            self._fold((values.astype(np.int64), docs.astype(np.int64)))
            return
        recent = self._recent
        for value, doc in zip(values.tolist(), docs.tolist(), strict=True):
            recent.setdefault(value, []).append(doc)
        self._recent_size += int(values.size)
        if self._recent_size >= max(RECENT_FLOOR, self._run[0].size // 8):
            self._fold()

    def _recent_run(self) -> Run:
        values = np.fromiter((v for v, held in self._recent.items() for _ in held),
                             dtype=np.int64, count=self._recent_size)
        docs = np.fromiter((d for held in self._recent.values() for d in held),
                           dtype=np.int64, count=self._recent_size)
        return values, docs

    def _fold(self, *more: Run) -> None:
        self._run = merged_runs([self._run, self._recent_run(), *more])
        self._recent, self._recent_size = {}, 0

    def docs_holding(self, wanted: I64) -> I64:
        found = docs_holding(self._run, wanted)
        if not self._recent:
            return found
        recent = [doc for value in wanted.tolist() for doc in self._recent.get(value, ())]
        return np.concatenate([found, np.array(recent, dtype=np.int64)]) if recent else found

    def freeze(self) -> Run:
        """Every posting as one run; the delta is left empty."""
        self._fold()
        run = self._run
        self._run = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))
        return run


def sketch_postings(rows: Sequence[tuple[Any, ...]]) -> Run:
    """The postings of sketch rows (doc, modulus, sketch bytes, ...), unsorted."""
    values = [np.frombuffer(row[2], dtype="<i8") for row in rows]
    docs = [np.full(v.size, row[0], dtype=np.int64) for v, row in zip(values, rows, strict=True)]
    if not values:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    return np.concatenate(values).astype(np.int64), np.concatenate(docs)


def log_postings(db: sqlite3.Connection, path: Path, first: int) -> Run:
    """The postings of the stored sketches of documents ``first`` and later, every sketch row
    checked against its checksum."""
    return sketch_postings(checked_rows(db.execute(
        "SELECT doc, modulus, data, shingles, crc FROM sketches WHERE doc >= ? ORDER BY doc",
        (first,)).fetchall(), path))
