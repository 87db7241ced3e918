"""The link graph and Pereira's crawl simulator (section 4.1, Tables 4-6).

Documents link to documents: an out-link whose URL is the URL of one or more documents of the
collection is an edge to each of them (several captures of one URL are all reached by it).
URLs are compared after :func:`normalize_url`. A crawler simulated from seed documents follows
every edge (navigational and external links alike); the documents it reaches are the
*connected* part, the others the *disconnected* part.

Clusters are restricted to a part by keeping their members in it (Pereira: "clusters in a
complete collection can be divided into two other clusters when the collection is divided"); a
cluster left with one member in a part counts there as a unique document.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import numpy as np

from neardup._types import BOOL, I64
from neardup.errors import ConfigError
from neardup.features.shingles import distinct

__all__ = [
    "ConnectedCoverage",
    "LinkGraph",
    "PartStats",
    "connected_coverage",
    "crawl",
    "default_seeds",
    "graph_from_edges",
    "link_graph",
    "normalize_url",
    "part_stats",
    "seeds_for_urls",
]


def normalize_url(url: str | None) -> str | None:
    """Scheme and host lower-cased, fragment dropped, an empty path made ``/``; None for a URL
    that is not http(s) with a host."""
    if not url:
        return None
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc:
        return None
    return urlunsplit((scheme, parts.netloc.lower(), parts.path or "/", parts.query, ""))


@dataclass(frozen=True, slots=True)
class LinkGraph:
    """Edges between documents in compressed rows: the targets of ``doc`` are
    ``targets[indptr[doc]:indptr[doc + 1]]`` (distinct, ascending, no self-links)."""

    indptr: I64
    targets: I64

    @property
    def count(self) -> int:
        return int(self.indptr.size - 1)

    @property
    def edges(self) -> int:
        return int(self.targets.size)

    def in_degree(self) -> I64:
        """The number of distinct documents linking to each document."""
        return np.bincount(self.targets, minlength=self.count).astype(np.int64)


def _url_index(doc_urls: Sequence[str | None]) -> dict[str, list[int]]:
    index: dict[str, list[int]] = {}
    for doc, url in enumerate(doc_urls):
        key = normalize_url(url)
        if key is not None:
            index.setdefault(key, []).append(doc)
    return index


def graph_from_edges(count: int, source: I64, target: I64) -> LinkGraph:
    """The :class:`LinkGraph` of ``count`` documents and the edges ``source -> target``."""
    source, target = np.asarray(source, np.int64), np.asarray(target, np.int64)
    keep = source != target
    codes = distinct(source[keep] * count + target[keep])
    indptr = np.zeros(count + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes // count, minlength=count), out=indptr[1:])
    return LinkGraph(indptr, (codes % count).astype(np.int64))


def link_graph(doc_urls: Sequence[str | None], link_docs: Iterable[int],
               link_urls: Iterable[str | None]) -> LinkGraph:
    """The graph of the out-links ``(link_docs[i], link_urls[i])`` between the documents whose
    URLs are ``doc_urls``; links to URLs outside the collection are dropped."""
    index = _url_index(doc_urls)
    seen: dict[str | None, list[int]] = {}
    source: list[int] = []
    target: list[int] = []
    for doc, url in zip(link_docs, link_urls, strict=True):
        hits = seen.get(url)
        if hits is None:
            hits = seen[url] = index.get(normalize_url(url) or "", [])
        source.extend([doc] * len(hits))
        target.extend(hits)
    return graph_from_edges(len(doc_urls), np.array(source, np.int64), np.array(target, np.int64))


def crawl(graph: LinkGraph, seeds: I64) -> BOOL:
    """The documents reached from ``seeds`` by following links (breadth-first, seeds included)."""
    reached = np.zeros(graph.count, dtype=bool)
    frontier = distinct(np.asarray(seeds, dtype=np.int64))
    reached[frontier] = True
    while frontier.size:
        starts = graph.indptr[frontier]
        counts = graph.indptr[frontier + 1] - starts
        total = int(counts.sum())
        if total == 0:
            break
        block_start = np.cumsum(counts) - counts
        positions = np.repeat(starts - block_start, counts) + np.arange(total)
        found = graph.targets[positions]
        frontier = distinct(found[~reached[found]])
        reached[frontier] = True
    return reached


def default_seeds(graph: LinkGraph, groups: I64) -> I64:
    """Per group (e.g. per input file: one crawl each) its most linked-to document, ties to the
    first; groups whose documents no document links to give no seed."""
    degree = graph.in_degree()
    order = np.lexsort((np.arange(graph.count), -degree, groups))
    first = order[np.r_[True, groups[order][1:] != groups[order][:-1]]] if order.size else order
    return np.sort(first[degree[first] > 0]).astype(np.int64)


def seeds_for_urls(doc_urls: Sequence[str | None], urls: Sequence[str]) -> I64:
    """The documents whose URL is one of ``urls``; raises :class:`ConfigError` for a URL that no
    document has."""
    index = _url_index(doc_urls)
    seeds: list[int] = []
    for url in urls:
        docs = index.get(normalize_url(url) or "")
        if not docs:
            raise ConfigError(f"seed={url!r}: no document of the input has this URL")
        seeds.extend(docs)
    return distinct(np.array(seeds, dtype=np.int64))


@dataclass(frozen=True, slots=True)
class PartStats:
    """Documents, clusters, duplicates and unique documents of one part (Pereira Table 4)."""

    documents: int
    clusters: int
    duplicates: int
    unique: int

    @property
    def duplicate_share(self) -> float:
        return self.duplicates / self.documents if self.documents else 0.0


def part_stats(labels: I64, part: BOOL) -> PartStats:
    """:class:`PartStats` of the documents in ``part``, clusters restricted to the part."""
    sizes = np.bincount(labels[part]) if np.any(part) else np.empty(0, dtype=np.int64)
    clustered = sizes[sizes >= 2]
    return PartStats(documents=int(np.count_nonzero(part)), clusters=int(clustered.size),
                     duplicates=int((clustered - 1).sum()),
                     unique=int(np.count_nonzero(sizes == 1)))


@dataclass(frozen=True, slots=True)
class ConnectedCoverage:
    """What the connected part covers of the whole (Pereira Tables 5 and 6)."""

    clusters: int
    clusters_reached: int
    unique: int
    unique_reached: int

    @property
    def useful(self) -> int:
        """Unique documents plus one per cluster: what a search engine wants."""
        return self.unique + self.clusters

    @property
    def useful_reached(self) -> int:
        return self.unique_reached + self.clusters_reached

    @property
    def useful_share(self) -> float:
        return self.useful_reached / self.useful if self.useful else 0.0


def connected_coverage(labels: I64, reached: BOOL) -> ConnectedCoverage:
    """Clusters of the whole collection with at least one reached member, and unique documents
    of the whole collection that were reached."""
    if labels.size == 0:
        return ConnectedCoverage(0, 0, 0, 0)
    sizes = np.bincount(labels)
    hits = np.bincount(labels[reached], minlength=sizes.size)
    single = sizes[labels] == 1
    return ConnectedCoverage(
        clusters=int(np.count_nonzero(sizes >= 2)),
        clusters_reached=int(np.count_nonzero((sizes >= 2) & (hits > 0))),
        unique=int(np.count_nonzero(single)),
        unique_reached=int(np.count_nonzero(single & reached)))
