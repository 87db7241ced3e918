"""Replication across servers: the most replicated collections (S&GM98 Table 2) and mirrored
server pairs (S&GM98: "a server is the union of all documents in the site").

A *server* is a document's host. A cluster spans the distinct servers of its documents. Two
servers overlap by the clusters (the distinct contents) found on both; a server's size is the
number of distinct contents it holds, so a server that stores one page twice is not counted
twice.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import I64
from neardup.analysis.replication import dense_labels

__all__ = [
    "MAX_SERVERS_PER_CLUSTER",
    "ReplicatedCollection",
    "ServerPair",
    "collections_by_servers",
    "mirrored_servers",
]


#: Clusters spanning more servers than this (an empty page, a parking page) are left out of the
#: server pairs: they say nothing about mirrors and would add (servers choose 2) pairs each.
MAX_SERVERS_PER_CLUSTER = 200


@dataclass(frozen=True, slots=True)
class ReplicatedCollection:
    """A cluster and the servers it spans, with up to a few example URLs from distinct servers."""

    cluster: int
    servers: int
    documents: int
    examples: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ServerPair:
    """Two servers and the contents (clusters) they share."""

    a: str
    b: str
    shared: int
    contents_a: int
    contents_b: int

    @property
    def overlap(self) -> float:
        """Shared contents over the smaller server's contents (1.0: one mirrors the other)."""
        return self.shared / min(self.contents_a, self.contents_b)


def _server_cluster_pairs(labels: I64, hosts: Sequence[str | None]) -> tuple[I64, I64, list[str]]:
    """The distinct (cluster, server) pairs of documents that have a host, sorted by cluster."""
    known = np.array([h is not None and h != "" for h in hosts], dtype=bool)
    names = [h for h in hosts if h]
    server = dense_labels(names)
    names = list(dict.fromkeys(names))
    pairs = np.unique(np.stack([labels[known], server]), axis=1) if names else np.empty((2, 0))
    return pairs[0].astype(np.int64), pairs[1].astype(np.int64), names


def _pair(names: list[str], contents: I64, a: int, b: int, count: int) -> ServerPair:
    if names[b] < names[a]:
        a, b = b, a
    return ServerPair(names[a], names[b], count, int(contents[a]), int(contents[b]))


def collections_by_servers(labels: I64, hosts: Sequence[str | None], urls: Sequence[str | None],
                           top: int = 10, examples: int = 3) -> list[ReplicatedCollection]:
    """The ``top`` clusters spanning the most distinct servers (at least two), most first; ties
    go to the larger cluster, then to the smaller label."""
    cluster, _, _ = _server_cluster_pairs(labels, hosts)
    ids, spans = np.unique(cluster, return_counts=True)
    sizes = np.bincount(labels) if labels.size else np.empty(0, dtype=np.int64)
    chosen = [(int(s), int(sizes[c]), int(c)) for c, s in zip(ids, spans, strict=True) if s >= 2]
    chosen.sort(key=lambda item: (-item[0], -item[1], item[2]))
    out = []
    for servers, size, label in chosen[:top]:
        seen: dict[str, str] = {}
        for doc in np.flatnonzero(labels == label).tolist():
            host, url = hosts[doc], urls[doc]
            if host and url and host not in seen and len(seen) < examples:
                seen[host] = url
        out.append(ReplicatedCollection(label, servers, size, tuple(seen.values())))
    return out


def mirrored_servers(labels: I64, hosts: Sequence[str | None], top: int = 10,
                     min_shared: int = 1) -> list[ServerPair]:
    """The ``top`` server pairs sharing the most contents (at least ``min_shared``), most first;
    ties go to the higher overlap, then to the names."""
    cluster, server, names = _server_cluster_pairs(labels, hosts)
    contents = np.bincount(server, minlength=len(names))
    shared: Counter[tuple[int, int]] = Counter()
    bounds = np.flatnonzero(np.diff(cluster)) + 1
    for members in np.split(server, bounds) if cluster.size else []:
        if 2 <= members.size <= MAX_SERVERS_PER_CLUSTER:
            shared.update(itertools.combinations(sorted(members.tolist()), 2))
    found = [_pair(names, contents, a, b, count) for (a, b), count in shared.items()
             if count >= min_shared]
    found.sort(key=lambda p: (-p.shared, -p.overlap, p.a, p.b))
    return found[:top]
