"""Per-host value counts (how many of a host's pages hold each sketch value or kept shingle) as
sorted runs that are summed, never updated in place.

An upsert per (host, value) at every commit dirties a page of a B-tree keyed by random values
for almost every count once the table outgrows the commit, so the bytes written per document
grow with the store. Here a commit's counts are a :data:`Tally`, four int64 columns (host,
kind, value, pages) sorted by (host, kind, value), one row per key. The tallies of the insert
log stay in memory (:class:`TallyDelta`), rebuilt on open from the log's checked rows (the
documents listed in the ``counted`` table of ``meta.sqlite``, appended in document order); a
flush writes them with the segment (``tallies.*``, checksummed like its other files), and
merging segments sums their tallies (each count rewritten O(log N) times). A count is the sum
of its key's rows over every segment and the delta.
"""

from __future__ import annotations

import numpy as np

from neardup._types import I64
from neardup.text.compiled import njit

__all__ = ["TALLY_ARRAYS", "Tally", "TallyDelta", "add_pages", "empty_tally", "pages_of",
           "summed", "tally_of", "tally_size"]

TALLY_ARRAYS = ("tallies.hosts", "tallies.kinds", "tallies.values", "tallies.pages")
"""The arrays of a segment holding its tally, one per column."""

Tally = tuple[I64, I64, I64, I64]
"""(hosts, kinds, values, pages), sorted by (host, kind, value), each key once."""


def empty_tally() -> Tally:
    return tuple(np.empty(0, dtype=np.int64) for _ in range(4))  # type: ignore[return-value]


def tally_size(tally: Tally) -> int:
    return int(tally[0].size)


def tally_of(hosts: I64, kinds: I64, values: I64) -> Tally:
    """The tally of one page per (host, kind, value) row (rows may repeat)."""
    return summed([(hosts, kinds, values, np.ones(hosts.size, dtype=np.int64))])


def summed(parts: list[Tally]) -> Tally:
    """One tally holding the sum of ``parts`` per key."""
    parts = [part for part in parts if tally_size(part)]
    if not parts:
        return empty_tally()
    hosts, kinds, values, pages = (np.concatenate([np.asarray(p[c]) for p in parts])
                                   .astype(np.int64, copy=False) for c in range(4))
    order = np.lexsort((values, kinds, hosts))
    hosts, kinds, values, pages = hosts[order], kinds[order], values[order], pages[order]
    starts = np.ones(hosts.size, dtype=np.bool_)
    starts[1:] = (hosts[1:] != hosts[:-1]) | (kinds[1:] != kinds[:-1]) | \
        (values[1:] != values[:-1])
    first = np.flatnonzero(starts)
    return hosts[first], kinds[first], values[first], np.add.reduceat(pages, first)


@njit(cache=True)
def _add_pages(hosts: I64, kinds: I64, values: I64, pages: I64, host: int, kind: int,
               wanted: I64, total: I64) -> None:  # pragma: no cover - compiled
    """Add to ``total`` the pages of ``host`` holding each of ``wanted`` (kind ``kind``): binary
    searches for the (host, kind) rows, then one per value among them."""
    begin = np.searchsorted(hosts, host, side="left")
    end = np.searchsorted(hosts, host, side="right")
    low = begin + np.searchsorted(kinds[begin:end], kind, side="left")
    high = begin + np.searchsorted(kinds[begin:end], kind, side="right")
    held = values[low:high]
    for i in range(wanted.size):
        at = np.searchsorted(held, wanted[i])
        if at < held.size and held[at] == wanted[i]:
            total[i] += pages[low + at]


def add_pages(tally: Tally, host: int, kind: int, wanted: I64, total: I64) -> None:
    """Add to ``total`` (aligned with ``wanted``) the pages of ``host`` holding each of
    ``wanted`` (kind ``kind``) in ``tally``."""
    if tally_size(tally) and wanted.size:
        _add_pages(*tally, host, kind, wanted, total)


def pages_of(tally: Tally, host: int, kind: int, wanted: I64) -> I64:
    """The pages of ``host`` holding each of ``wanted`` (kind ``kind``), aligned with it."""
    total = np.zeros(wanted.size, dtype=np.int64)
    add_pages(tally, host, kind, wanted, total)
    return total


class TallyDelta:
    """The tallies of the documents not yet in a segment: sorted runs, the newest merged into
    the one before it while it is at least half its size (O(log n) runs, each count re-summed
    O(log n) times)."""

    def __init__(self) -> None:
        self.runs: list[Tally] = []

    def __len__(self) -> int:
        return sum(tally_size(run) for run in self.runs)

    def add(self, tally: Tally) -> None:
        if not tally_size(tally):
            return
        self.runs.append(tally)
        while len(self.runs) > 1 and \
                2 * tally_size(self.runs[-1]) >= tally_size(self.runs[-2]):
            last = self.runs.pop()
            self.runs[-1] = summed([self.runs[-1], last])

    def pages_of(self, host: int, kind: int, wanted: I64) -> I64:
        total = np.zeros(wanted.size, dtype=np.int64)
        for run in self.runs:
            add_pages(run, host, kind, wanted, total)
        return total

    def freeze(self) -> Tally:
        """Every count as one tally; the delta is left empty."""
        tally = summed(self.runs)
        self.runs = []
        return tally
