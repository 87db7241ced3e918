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
from typing import TypeAlias

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neardup._types import I64
from neardup.features.shingles import distinct

__all__ = [
    "MAX_SERVERS_PER_CLUSTER",
    "Column",
    "ReplicatedCollection",
    "ServerPair",
    "as_arrow",
    "collections_by_servers",
    "first_urls",
    "host_numbers",
    "mirrored_servers",
    "server_cluster_pairs",
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


Column: TypeAlias = "Sequence[str | None] | pa.Array | pa.ChunkedArray"
"""A column of strings: a list, or an Arrow array as read from a run's tables."""


def as_arrow(values: Column) -> pa.Array:
    """A column of strings as one Arrow array (lists converted, chunks joined)."""
    if isinstance(values, pa.ChunkedArray):
        if pa.types.is_dictionary(values.type):
            values = values.unify_dictionaries()
        return values.combine_chunks()
    return values if isinstance(values, pa.Array) else pa.array(values, pa.string())


def host_numbers(hosts: Column) -> tuple[I64, list[str]]:
    """Each document's server as a number (-1: no host, or an empty one) and the names, numbered
    in order of first appearance."""
    column = as_arrow(hosts)
    if not pa.types.is_dictionary(column.type):
        column = pc.cast(column, pa.string())
        column = pc.if_else(pc.equal(column, ""), pa.scalar(None, pa.string()), column)
        column = pc.dictionary_encode(column)
    encoded = _without_empty(column)
    codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, [str(name) for name in encoded.dictionary.to_pylist()]


def _without_empty(encoded: pa.DictionaryArray) -> pa.DictionaryArray:
    """A dictionary array whose empty-string entry (if any) reads as null."""
    values = encoded.dictionary.to_pylist()
    if "" not in values:
        return encoded
    empty = values.index("")
    indices = pc.if_else(pc.equal(encoded.indices, empty), None, encoded.indices)
    return pa.DictionaryArray.from_arrays(indices, encoded.dictionary)


def server_cluster_pairs(labels: I64, hosts: Column) -> tuple[I64, I64, list[str]]:
    """The distinct (cluster, server) pairs of documents that have a host, sorted by cluster."""
    server, names = host_numbers(hosts)
    known = server >= 0
    if not names or not known.any():
        return np.empty(0, np.int64), np.empty(0, np.int64), names
    keys = distinct(labels[known].astype(np.int64) * len(names) + server[known])
    return keys // len(names), keys % len(names), names


def first_urls(labels: I64, wanted: I64, server: I64, urls: Column, examples: int,
               one_per_server: bool) -> list[list[str]]:
    """Per label of ``wanted``, up to ``examples`` URLs of its documents (with a server and a
    URL), in document order, from distinct servers when ``one_per_server``."""
    column = as_arrow(urls)
    docs = np.flatnonzero(np.isin(labels, wanted) & (server >= 0))
    docs = docs[pc.is_valid(column.take(pa.array(docs))).to_numpy(zero_copy_only=False)]
    found: dict[int, dict[int, str]] = {int(w): {} for w in wanted.tolist()}
    texts = column.take(pa.array(docs)).to_pylist()
    for doc, url in zip(docs.tolist(), texts, strict=True):
        chosen = found[int(labels[doc])]
        key = int(server[doc]) if one_per_server else len(chosen)
        if url and key not in chosen and len(chosen) < examples:
            chosen[key] = url
    return [list(found[int(w)].values()) for w in wanted.tolist()]


def _pair(names: list[str], contents: I64, a: int, b: int, count: int) -> ServerPair:
    if names[b] < names[a]:
        a, b = b, a
    return ServerPair(names[a], names[b], count, int(contents[a]), int(contents[b]))


def collections_by_servers(labels: I64, hosts: Column, urls: Column, top: int = 10,
                           examples: int = 3) -> list[ReplicatedCollection]:
    """The ``top`` clusters spanning the most distinct servers (at least two), most first; ties
    go to the larger cluster, then to the smaller label."""
    cluster, _, _ = server_cluster_pairs(labels, hosts)
    ids, spans = np.unique(cluster, return_counts=True)
    sizes = np.bincount(labels) if labels.size else np.empty(0, dtype=np.int64)
    wide = spans >= 2
    ids, spans = ids[wide], spans[wide]
    order = np.lexsort((ids, -sizes[ids], -spans))[:top]
    server, _ = host_numbers(hosts)
    shown = first_urls(labels, ids[order], server, urls, examples, one_per_server=True)
    return [ReplicatedCollection(int(ids[i]), int(spans[i]), int(sizes[ids[i]]), tuple(found))
            for i, found in zip(order.tolist(), shown, strict=True)]


def mirrored_servers(labels: I64, hosts: Column, top: int = 10,
                     min_shared: int = 1) -> list[ServerPair]:
    """The ``top`` server pairs sharing the most contents (at least ``min_shared``), most first;
    ties go to the higher overlap, then to the names."""
    cluster, server, names = server_cluster_pairs(labels, hosts)
    contents = np.bincount(server, minlength=len(names))
    shared: Counter[tuple[int, int]] = Counter()
    _, starts, spans = np.unique(cluster, return_index=True, return_counts=True)
    wide = (spans >= 2) & (spans <= MAX_SERVERS_PER_CLUSTER)
    for start, span in zip(starts[wide].tolist(), spans[wide].tolist(), strict=True):
        members = server[start:start + span]
        shared.update(itertools.combinations(sorted(members.tolist()), 2))
    found = [_pair(names, contents, a, b, count) for (a, b), count in shared.items()
             if count >= min_shared]
    found.sort(key=lambda p: (-p.shared, -p.overlap, p.a, p.b))
    return found[:top]
