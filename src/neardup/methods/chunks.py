"""The ``chunks`` near method: S&GM98's all-pairs overlap inside ``dedup``.

Per document (in the worker processes): its distinct 32-bit chunk fingerprints
(:mod:`neardup.fingerprints.chunkprint`). Over the documents that survive the spine's exact levels:
the FPrint-DocID relation, optionally without the chunks shared by more than ``drop_common``
documents, then the Overlap table by the sort-based join or by coarse counting
(:mod:`neardup.overlap.sortbased`, :mod:`neardup.overlap.coarse`): every pair sharing at least T
chunks. Each pair is verified on the spine's shingle sets and carries its count F in ``shared``.
``summary.json`` gets, under ``near``, the chunking, T, the relation's size, what
``drop_common`` removed and, per phase, its time, peak memory and counts. With
``write_relations`` the relation and the URL and server maps are written as tables.
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64, I64, U32
from neardup.config import DedupConfig, method_spec
from neardup.document import Document
from neardup.fingerprints.chunkprint import chunk_fingerprints
from neardup.methods.prints import Prints
from neardup.methods.scoring import Rule, ScoredPairs, Scorer
from neardup.methods.unit import FeatureExtractor, NearMethod, NearStage
from neardup.methods.verify import verified_pairs
from neardup.overlap.coarse import coarse_overlap
from neardup.overlap.relation import ChunkRelation
from neardup.overlap.sortbased import Overlap, sort_overlap

__all__ = ["UNIT", "chunk_features", "find_chunks", "relation_tables", "shared_chunks"]


def chunk_features(config: DedupConfig) -> FeatureExtractor[U32]:
    """The per-document extractor: the document's distinct chunk fingerprints, sorted."""
    chunk = config.chunks

    def extract(doc: Document, text: str, canonical: bytes) -> U32:
        return chunk_fingerprints(text, chunk)

    return extract


def _chunk_set(prints: Prints[U32]) -> U32:
    features = prints.features
    return np.empty(0, dtype=np.uint32) if features is None else features


def overlap_of(relation: ChunkRelation, config: DedupConfig) -> Overlap:
    """The Overlap table of ``relation`` by the configured algorithm."""
    overlap = config.overlap
    threshold = overlap.threshold(config.chunks)
    if overlap.algorithm == "coarse":
        return coarse_overlap(relation, threshold, overlap.buckets, overlap.hashes, overlap.pilot,
                              overlap.seed)
    return sort_overlap(relation, threshold, overlap.memory_limit)


def find_chunks(config: DedupConfig, prints: list[Prints[U32]],
                survivors: I64) -> NearStage:
    """Pairs of survivors sharing at least T chunk fingerprints (``--method chunks``)."""
    sets = [_chunk_set(prints[i]) for i in survivors.tolist()]
    relation = ChunkRelation.from_sets(sets)
    rows = len(relation)
    dropped_fprints = dropped_rows = 0
    if config.overlap.drop_common is not None:
        relation, dropped_fprints, dropped_rows = relation.drop_common(config.overlap.drop_common)
    found = overlap_of(relation, config)
    pairs, rejected = verified_pairs(config, prints, survivors, found.a, found.b, found.shared)
    parameters: dict[str, object] = {
        "chunk": config.chunks.spec, "min_shared": config.overlap.threshold(config.chunks),
        "algorithm": config.overlap.algorithm,
        "documents_with_chunks": int(sum(s.size > 0 for s in sets)),
        "fprint_docid_rows": rows,
        "drop_common": {"limit": config.overlap.drop_common, "chunks_dropped": dropped_fprints,
                        "rows_dropped": dropped_rows},
        "overlap_pairs": len(found), "phases": found.phases,
    }
    tables = relation_tables(relation, survivors, prints) if config.write_relations else {}
    return NearStage(pairs, len(found), rejected, parameters, tables)


def relation_tables(relation: ChunkRelation, survivors: I64,
                    prints: list[Prints[U32]]) -> dict[str, list[dict[str, object]]]:
    """S&GM98's relations as tables (``dedup --write-relations``): ``fprint_docid`` (fprint,
    doc: the relation the overlap ran on, after ``drop_common``), ``url_map`` (url, doc) and
    ``server_map`` (server, server_id, documents) over every document with a URL."""
    docs = survivors[relation.docs.astype(np.int64)].tolist()
    fprint_docid = [{"fprint": f, "doc": d} for f, d in zip(relation.fprints.tolist(), docs,
                                                           strict=True)]
    url_map = [{"url": p.url, "doc": doc} for doc, p in enumerate(prints) if p.url]
    servers: dict[str, int] = {}
    for p in prints:
        if p.host:
            servers[p.host] = servers.get(p.host, 0) + 1
    server_map = [{"server": host, "server_id": i, "documents": count}
                  for i, (host, count) in enumerate(sorted(servers.items()))]
    return {"fprint_docid": fprint_docid, "url_map": url_map, "server_map": server_map}


def shared_chunks(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The number of distinct chunk fingerprints the two documents share (S&GM98's F, with
    ``DedupConfig.chunks``; ``dedup`` pairs them when F >= T)."""
    view = documents.text
    prints = [chunk_fingerprints(text, config.chunks) for text in view.texts]
    return np.array([np.intersect1d(prints[i], prints[j], assume_unique=True).size
                     for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
                    dtype=np.float64)


_DEFAULTS = DedupConfig()
UNIT: NearMethod[U32] = NearMethod(
    spec=method_spec("chunks"), find=find_chunks, features=chunk_features,
    verification="at least T shared chunk fingerprints, then resemblance >= the floor",
    scorer=Scorer("chunks", shared_chunks,
                  Rule("shared chunks", "T", integral=True,
                       default=float(_DEFAULTS.overlap.threshold(_DEFAULTS.chunks))),
                  summary="distinct 4-line chunk fingerprints in common (S&GM98; "
                          "DedupConfig.chunks)"))
