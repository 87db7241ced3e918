"""How much is replicated: replicas per document (S&GM98 Figure 1) and cluster sizes (Pereira
Figures 2-4, Broder section 7).

Every function takes *group labels*: one non-negative integer per document, equal for documents
of the same group (a cluster, or a group of identical documents). A document's number of
replicas counts itself, as in S&GM98 ("64% of pages have one replica: itself"); a cluster is a
group of two documents or more, its first document the original and every other a duplicate
(Pereira's definitions 3 and 4).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from dataclasses import dataclass

import numpy as np

from neardup._types import I64

__all__ = [
    "REPLICA_BINS",
    "ClusterStats",
    "cluster_stats",
    "dense_labels",
    "replica_bin_counts",
    "replicas_per_document",
    "size_distribution",
]


#: S&GM98 Figure 1's classes of replicas per document: (name, smallest count in the class).
#: "10-100" holds 11 to 100 replicas, ">100" 101 and more.
REPLICA_BINS: tuple[tuple[str, int], ...] = (("1", 1), ("2", 2), ("3-10", 3), ("10-100", 11),
                                             (">100", 101))


def dense_labels(keys: Iterable[Hashable]) -> I64:
    """Group labels 0, 1, ... for equal keys, numbered in order of first appearance."""
    index: dict[Hashable, int] = {}
    return np.array([index.setdefault(key, len(index)) for key in keys], dtype=np.int64)


def replicas_per_document(labels: I64) -> I64:
    """For each document, the number of documents in its group (itself included)."""
    if labels.size == 0:
        return np.empty(0, dtype=np.int64)
    return np.bincount(labels)[labels].astype(np.int64)


def replica_bin_counts(labels: I64) -> I64:
    """The number of documents in each class of :data:`REPLICA_BINS`."""
    lowest = np.array([low for _, low in REPLICA_BINS], dtype=np.int64)
    classes = np.searchsorted(lowest, replicas_per_document(labels), side="right") - 1
    return np.bincount(classes, minlength=len(REPLICA_BINS)).astype(np.int64)


def size_distribution(labels: I64, smallest: int = 2) -> tuple[I64, I64]:
    """Sizes of the groups of at least ``smallest`` documents, and how many groups have each
    size (ascending sizes): the points of a documents-per-cluster plot."""
    if labels.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    sizes = np.bincount(labels)
    sizes, counts = np.unique(sizes[sizes >= smallest], return_counts=True)
    return sizes.astype(np.int64), counts.astype(np.int64)


@dataclass(frozen=True, slots=True)
class ClusterStats:
    """Clusters (groups of two or more) by size and by composition."""

    documents: int
    clusters: int
    clustered_documents: int
    largest: int
    identical_only_clusters: int
    identical_only_documents: int
    pair_clusters: int
    small_clusters: int
    small_cluster_documents: int
    small_limit: int = 10

    @property
    def duplicates(self) -> int:
        """Clustered documents other than each cluster's original."""
        return self.clustered_documents - self.clusters

    @property
    def mixed_clusters(self) -> int:
        return self.clusters - self.identical_only_clusters

    @property
    def mixed_documents(self) -> int:
        return self.clustered_documents - self.identical_only_documents

    @property
    def pair_share_of_clusters(self) -> float:
        return self.pair_clusters / self.clusters if self.clusters else 0.0

    @property
    def pair_share_of_duplicates(self) -> float:
        """Clusters of two hold one duplicate each (Pereira: 63% of clusters, 19% of duplicates)."""
        return self.pair_clusters / self.duplicates if self.duplicates else 0.0

    @property
    def small_share_of_duplicates(self) -> float:
        """Share of the duplicates held by clusters of at most ``small_limit`` documents."""
        small = self.small_cluster_documents - self.small_clusters
        return small / self.duplicates if self.duplicates else 0.0


def cluster_stats(labels: I64, identical: I64, small_limit: int = 10) -> ClusterStats:
    """Statistics of the clusters of ``labels``; ``identical`` labels the groups of identical
    documents, so that a cluster whose members all share one identical label holds "only
    identical documents" (Broder: 2.1M of 3.6M clusters), the others are mixed."""
    if labels.size == 0:
        return ClusterStats(0, 0, 0, 0, 0, 0, 0, 0, 0, small_limit)
    sizes = np.bincount(labels)
    in_cluster = sizes[labels] >= 2
    pairs = np.unique(np.stack([labels[in_cluster], identical[in_cluster]]), axis=1)
    kinds = np.bincount(pairs[0], minlength=sizes.size)
    only_identical = (kinds == 1) & (sizes >= 2)
    clustered = sizes[sizes >= 2]
    small = clustered[clustered <= small_limit]
    return ClusterStats(
        documents=int(labels.size), clusters=int(clustered.size),
        clustered_documents=int(clustered.sum()), largest=int(sizes.max()),
        identical_only_clusters=int(np.count_nonzero(only_identical)),
        identical_only_documents=int(sizes[only_identical].sum()),
        pair_clusters=int(np.count_nonzero(clustered == 2)),
        small_clusters=int(small.size), small_cluster_documents=int(small.sum()),
        small_limit=small_limit)
