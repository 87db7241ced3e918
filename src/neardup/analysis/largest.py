"""The largest clusters of a run: their members, their kept copy and why it was kept.

Everything here is bounded by the number of clusters asked for, not by the run: the sizes come
from one ``bincount`` over the cluster labels, and only the members of the chosen clusters
(at most ``member_limit`` each, the kept copy first) are gathered.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup._types import I8, I64
from neardup.analysis.dedupdir import DedupRun, column_array
from neardup.analysis.pages import KINDS, PageKind
from neardup.analysis.servers import host_numbers
from neardup.features.shingles import distinct

__all__ = ["ClusterEntry", "host_codes", "keep_reason", "kept_docs", "largest_clusters"]

_KEEP_REASONS = {"first": "first in input order", "longest": "longest payload",
                 "earliest": "earliest fetch date", "shortest-url": "shortest URL"}


def keep_reason(reason: str | None) -> str:
    """Why a document was kept, in words (``kept:first`` -> ``first in input order``)."""
    policy = (reason or "").removeprefix("kept:")
    return _KEEP_REASONS.get(policy, policy or "n/a")


@dataclass(frozen=True, slots=True)
class ClusterEntry:
    """One cluster: its label and size, its kept document, its members (kept first, at most
    the member limit) and the kind of its kept page."""

    cluster: int
    size: int
    hosts: int
    kept: int
    kind: PageKind
    members: tuple[int, ...]


def host_codes(run: DedupRun) -> I64:
    """Each document's host as a number (equal hosts, equal numbers; -1: no host)."""
    return host_numbers(run.documents.column("host"))[0]


def kept_docs(run: DedupRun) -> I64:
    """Each document's kept copy: the ``kept_doc`` column, or (runs without it) the kept
    member of its cluster, else the cluster's first member."""
    if "kept_doc" in run.clusters.column_names:
        return column_array(run.clusters, "kept_doc").astype(np.int64)
    labels = run.cluster
    docs = np.arange(labels.size, dtype=np.int64)
    kept = column_array(run.clusters, "kept").astype(bool)
    chosen = np.full(int(labels.max(initial=-1)) + 1, labels.size, dtype=np.int64)
    np.minimum.at(chosen, labels, docs)
    chosen[labels[kept]] = docs[kept]
    return chosen[labels]


def _order(labels: I64, sizes: I64, count: int) -> I64:
    """The labels of the ``count`` largest clusters (2+ documents), largest first, ties by
    label."""
    candidates = np.flatnonzero(sizes >= 2)
    if candidates.size > count:
        cut = np.partition(sizes[candidates], candidates.size - count)[candidates.size - count]
        candidates = candidates[sizes[candidates] >= cut]
    order = np.lexsort((candidates, -sizes[candidates]))
    return np.asarray(candidates[order][:count], dtype=np.int64)


def largest_clusters(run: DedupRun, kinds: I8, count: int,
                     member_limit: int) -> list[ClusterEntry]:
    """The ``count`` largest clusters of ``run`` (``kinds``: each document's page kind, an
    index into :data:`~.pages.KINDS`)."""
    labels = run.cluster
    if labels.size == 0:
        return []
    sizes = np.bincount(labels)
    chosen = _order(labels, sizes, count)
    members = np.flatnonzero(np.isin(labels, chosen))
    grouped = members[np.argsort(labels[members], kind="stable")]
    starts = np.searchsorted(labels[grouped], chosen)
    kept_doc = kept_docs(run)
    hosts = host_codes(run)
    entries = []
    for label, start in zip(chosen.tolist(), starts.tolist(), strict=True):
        docs = grouped[start:start + int(sizes[label])]
        kept = int(kept_doc[docs[0]])
        others = [int(d) for d in docs.tolist() if d != kept][: max(0, member_limit - 1)]
        entries.append(ClusterEntry(
            cluster=label, size=int(sizes[label]),
            hosts=int(distinct(hosts[docs]).size - (hosts[docs] < 0).any()), kept=kept,
            kind=KINDS[int(kinds[kept])], members=(kept, *others)))
    return entries
