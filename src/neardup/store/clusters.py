"""Incremental clusters in a store: each batch's matches merge the clusters they touch.

A cluster is named by its smallest document number. Adding documents that match stored ones (or
each other) merges their clusters, so the clusters after any sequence of batches equal the
connected components of every match found, whatever the batch boundaries or the order.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup.store.formats import ROW_COLUMNS
from neardup.store.records import documents_in

__all__ = ["LabelRoots", "merge_clusters"]

I64 = npt.NDArray[np.int64]


class LabelRoots:
    """Union-find over integer labels; a set's root is its smallest label."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, label: int) -> int:
        root = label
        while self.parent.get(root, root) != root:
            root = self.parent[root]
        while label != root:
            label, self.parent[label] = self.parent.get(label, label), root
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


RENAME = (f"UPDATE documents SET cluster=?, "
          f"crc=neardup_crc({ROW_COLUMNS.replace('cluster', '?')}) WHERE cluster=?")
"""Rename a cluster, recomputing each row's checksum (the SQL function of formats)."""


def _clusters_of(db: sqlite3.Connection, path: Path, docs: list[int]) -> dict[int, int]:
    return {row[0]: row[-1] for row in documents_in(db, path, "doc", sorted(set(docs)))}


def merge_clusters(db: sqlite3.Connection, path: Path, docs: I64, matched: I64, stored: I64,
                   pair_a: I64, pair_b: I64) -> I64:
    """The cluster of each new document (``docs``, by batch position).

    ``matched[i]`` (a batch position) matches stored document ``stored[i]``; batch positions
    ``pair_a[i]`` and ``pair_b[i]`` match each other. Stored clusters that merge are renamed in
    ``db`` (inside the caller's transaction).
    """
    roots = LabelRoots()
    existing = _clusters_of(db, path, stored.tolist())
    for position, doc in zip(matched.tolist(), stored.tolist(), strict=True):
        roots.union(int(docs[position]), existing[doc])
    for a, b in zip(pair_a.tolist(), pair_b.tolist(), strict=True):
        roots.union(int(docs[a]), int(docs[b]))
    for cluster in set(existing.values()):
        root = roots.find(cluster)
        if root != cluster:
            db.execute(RENAME, (root, root, cluster))
    return np.array([roots.find(int(d)) for d in docs.tolist()], dtype=np.int64)
