"""Manku's batch mode against a store: many new documents' fingerprints at once.

A batch query takes the prints of many new documents (:class:`QueryPrint`), finds every stored
fingerprint within ``k`` bits of any of them, and resolves those (query, stored document) pairs
into :class:`BatchMatch` rows from the store's checked metadata. The pairs come either from the
store's own index (:func:`local_pairs`, ``HammingIndex.query_batch``) or from any other finder
that scans the stored fingerprints: :func:`stored_chunks` cuts them into slices that separate
processes can read (:func:`chunk_fingerprints`), so that the scan runs in parallel chunks, as in
the paper's MapReduce job. Whatever finds the pairs, :func:`resolve` gives the same rows.

The rows are those a one-by-one ``Store.query`` gives, without its sketch scores: every stored
document within ``k`` bits of the query's simhash (queries with tokens only), plus every stored
document with the query's identical-bytes hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup._types import I64, U64
from neardup.errors import ConfigError, CorruptDataError
from neardup.index.tables import Matches
from neardup.store.formats import ROW_FIELDS, SegmentEntry, read_segment
from neardup.store.records import SIMHASH, documents_in, documents_where, signed, unsigned

if TYPE_CHECKING:
    from neardup.store.collection import Store

__all__ = ["BatchMatch", "QueryPrint", "StoredChunk", "batch_k", "chunk_fingerprints",
           "indexed", "local_pairs", "resolve", "stored_chunks"]

FIELD = {name: ROW_FIELDS.index(name) for name in ROW_FIELDS}


@dataclass(frozen=True, slots=True)
class QueryPrint:
    """What a batch query keeps of one new document (``position``: its place in the input)."""

    position: int
    id: str
    url: str | None
    source: str
    simhash: int
    identical: int
    lexical: int
    tokens: int


@dataclass(frozen=True, slots=True)
class BatchMatch:
    """A stored document that matches a new one."""

    query: int
    """The new document's position in the input (0, 1, ...)."""
    query_id: str
    query_url: str | None
    doc: int
    id: str
    url: str | None
    cluster: int
    distance: int
    relation: str
    """identical (same bytes), lexical (same canonical text) or near."""

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


@dataclass(frozen=True, slots=True)
class StoredChunk:
    """A slice ``[begin, end)`` of one segment's fingerprints, or (``segment`` None) the
    fingerprints of the insert log, carried inline."""

    segment: SegmentEntry | None
    begin: int
    end: int
    values: tuple[int, ...] = ()
    ids: tuple[int, ...] = ()


def batch_k(store: Store, k: int | None) -> int:
    """The distance a batch query uses: ``k``, or the store's ``max_k``; refused past it."""
    k = store.config.max_k if k is None else k
    if not 0 <= k <= store.config.max_k:
        raise ConfigError(f"k={k}: the store {store.root} answers distances "
                          f"0..{store.config.max_k}")
    return k


def indexed(prints: list[QueryPrint]) -> tuple[U64, I64]:
    """The simhashes of the queries that have tokens, and their positions."""
    chosen = [p for p in prints if p.tokens > 0]
    return (np.array([p.simhash for p in chosen], dtype=np.uint64),
            np.array([p.position for p in chosen], dtype=np.int64))


def local_pairs(store: Store, prints: list[QueryPrint], k: int | None = None) -> Matches:
    """(query position, stored doc, distance) for every stored fingerprint within ``k`` bits,
    in Manku's batch mode over the store's segments and its delta, sorted."""
    k = batch_k(store, k)
    values, positions = indexed(prints)
    if not values.size:
        return Matches.empty()
    found = store.index.query_batch(values, k)
    return Matches(positions[found.query], found.id, found.distance).sorted()


def stored_chunks(store: Store, size: int) -> list[StoredChunk]:
    """The store's fingerprints cut into slices of at most ``size``: each segment's, then the
    insert log's (read from the checked rows, as the store loads it on open)."""
    if size < 1:
        raise ConfigError(f"chunk size must be at least 1, got {size}")
    chunks = [StoredChunk(entry, begin, min(begin + size, entry.count))
              for entry in store.segments for begin in range(0, entry.count, size)]
    last = store.segments[-1].last if store.segments else -1
    rows = documents_where(store.db, store.meta_path, "doc > ? AND tokens > 0 ORDER BY doc",
                           (last,))
    for begin in range(0, len(rows), size):
        part = rows[begin:begin + size]
        chunks.append(StoredChunk(None, 0, len(part), tuple(unsigned(r[SIMHASH]) for r in part),
                                  tuple(int(r[0]) for r in part)))
    return chunks


def chunk_fingerprints(root: Path, chunk: StoredChunk) -> tuple[U64, I64]:
    """The fingerprints and document numbers of one chunk: a slice of the segment's
    memory-mapped arrays (its files checked against segment.json and the manifest: sizes, dtype,
    shape), or the log's values."""
    if chunk.segment is None:
        return (np.array(chunk.values, dtype=np.uint64), np.array(chunk.ids, dtype=np.int64))
    arrays = read_segment(root, chunk.segment, verify=False)
    try:
        values, ids = arrays["fingerprints"], arrays["ids"]
    except KeyError as error:
        raise CorruptDataError(f"{root}: segment {chunk.segment.name} lacks {error}") from error
    return (np.ascontiguousarray(values[chunk.begin:chunk.end]),
            np.ascontiguousarray(ids[chunk.begin:chunk.end]))


def _relation(row: tuple[Any, ...], query: QueryPrint) -> str:
    if row[FIELD["identical"]] == signed(query.identical):
        return "identical"
    if row[FIELD["lexical"]] == signed(query.lexical) and query.tokens:
        return "lexical"
    return "near"


def _match(query: QueryPrint, row: tuple[Any, ...]) -> BatchMatch:
    distance = (unsigned(row[FIELD["simhash"]]) ^ query.simhash).bit_count()
    url = row[FIELD["url"]]
    return BatchMatch(query.position, query.id, query.url, int(row[0]), str(row[FIELD["id"]]),
                      None if url is None else str(url), int(row[FIELD["cluster"]]), distance,
                      _relation(row, query))


def resolve(store: Store, prints: list[QueryPrint], pairs: Matches) -> list[BatchMatch]:
    """The matches of ``pairs`` (query position, stored doc) and of the stored documents with a
    query's identical hash, from the store's checked rows, each once, by (query, doc)."""
    by_position = {p.position: p for p in prints}
    wanted = {(int(q), int(d)) for q, d in zip(pairs.query.tolist(), pairs.id.tolist(),
                                               strict=True)}
    rows = {int(r[0]): r for r in documents_in(store.db, store.meta_path, "doc",
                                               sorted({d for _, d in wanted}))}
    by_hash: dict[int, list[int]] = {}
    for p in prints:
        by_hash.setdefault(signed(p.identical), []).append(p.position)
    for row in store.documents_with("identical", sorted(by_hash)):
        rows.setdefault(int(row[0]), row)
        wanted.update((q, int(row[0])) for q in by_hash.get(row[FIELD["identical"]], []))
    missing = sorted(d for _, d in wanted if d not in rows)
    if missing:
        raise CorruptDataError(f"{store.meta_path}: no row for stored document {missing[0]} "
                               "that the fingerprint tables name (damaged)")
    return [_match(by_position[q], rows[d]) for q, d in sorted(wanted)]
