"""Incremental clusters in a store: each batch's matches merge the clusters they touch.

A cluster is named by its smallest document number. Adding documents that match stored ones (or
each other) merges their clusters, so the clusters after any sequence of batches equal the
connected components of every match found, whatever the batch boundaries or the order.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np

from neardup._types import I64
from neardup.cluster.unionfind import label_roots
from neardup.store.formats import ROW_COLUMNS
from neardup.store.records import documents_in

__all__ = ["merge_clusters"]


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
    existing = _clusters_of(db, path, stored.tolist())
    clusters = sorted(set(existing.values()))
    a = np.concatenate([docs[matched], docs[pair_a]])
    b = np.concatenate([np.array([existing[d] for d in stored.tolist()], dtype=np.int64),
                        docs[pair_b]])
    roots = label_roots(a, b, np.concatenate([np.array(clusters, dtype=np.int64), docs]))
    for cluster, root in zip(clusters, roots[:len(clusters)].tolist(), strict=True):
        if root != cluster:
            db.execute(RENAME, (root, root, cluster))
    return roots[len(clusters):].astype(np.int64)
