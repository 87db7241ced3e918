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

from itertools import accumulate

import numpy as np

from neardup._types import I64
from neardup.text.compiled import njit

__all__ = ["TALLY_ARRAYS", "Asked", "Counts", "Tally", "TallyDelta", "empty_tally", "summed",
           "tally_of", "tally_size"]

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


Asked = list[tuple[int, int, I64]]
"""Groups of counts asked at once: (host, kind, values), a group per host and kind."""


@njit(cache=True)
def _add_pages(hosts: I64, kinds: I64, values: I64, pages: I64, asked_hosts: I64,
               asked_kinds: I64, bounds: I64, wanted: I64,
               total: I64) -> None:  # pragma: no cover - compiled
    """Add to ``total`` (aligned with ``wanted``), for each group g (host ``asked_hosts[g]``,
    kind ``asked_kinds[g]``, values ``wanted[bounds[g]:bounds[g + 1]]``), the pages of the
    host holding each value: binary searches for the (host, kind) rows, then one per value."""
    for g in range(asked_hosts.size):
        begin = np.searchsorted(hosts, asked_hosts[g], side="left")
        end = np.searchsorted(hosts, asked_hosts[g], side="right")
        low = begin + np.searchsorted(kinds[begin:end], asked_kinds[g], side="left")
        high = begin + np.searchsorted(kinds[begin:end], asked_kinds[g], side="right")
        held = values[low:high]
        for i in range(bounds[g], bounds[g + 1]):
            at = np.searchsorted(held, wanted[i])
            if at < held.size and held[at] == wanted[i]:
                total[i] += pages[low + at]


class Counts:
    """The totals of groups asked at once, summed over tallies: one compiled pass per tally
    for every group (not one per group and tally)."""

    def __init__(self, asked: Asked) -> None:
        self.hosts = np.array([host for host, _, _ in asked], dtype=np.int64)
        self.kinds = np.array([kind for _, kind, _ in asked], dtype=np.int64)
        self.bounds = np.array([0, *accumulate(values.size for _, _, values in asked)],
                               dtype=np.int64)
        self.wanted = (np.concatenate([values for _, _, values in asked]).astype(
            np.int64, copy=False) if asked else np.empty(0, dtype=np.int64))
        self.total = np.zeros(self.wanted.size, dtype=np.int64)

    def add(self, tally: Tally) -> None:
        """Add the pages ``tally`` counts."""
        if tally_size(tally) and self.wanted.size:
            _add_pages(*tally, self.hosts, self.kinds, self.bounds, self.wanted, self.total)

    def groups(self) -> list[I64]:
        """The totals of each group, in the order asked."""
        return [self.total[self.bounds[g]:self.bounds[g + 1]] for g in range(self.hosts.size)]


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

    def add_to(self, counts: Counts) -> None:
        """Add the pages the delta counts to ``counts``."""
        for run in self.runs:
            counts.add(run)

    def freeze(self) -> Tally:
        """Every count as one tally; the delta is left empty."""
        tally = summed(self.runs)
        self.runs = []
        return tally
