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

from neardup._types import F64, U32
from neardup.config import ChunkConfig, ChunkMethod, DedupConfig, MethodSpec, OverlapConfig
from neardup.document import Document
from neardup.methods.joins import ChunkOverlap
from neardup.methods.prints import Prints
from neardup.methods.scoring import Rule, ScoredPairs, Scorer
from neardup.methods.unit import FeatureExtractor, NearMethod

__all__ = ["SPEC", "UNIT", "chunk_features", "shared_chunks"]


def chunk_features(config: DedupConfig) -> FeatureExtractor[U32]:
    """The per-document extractor: the document's distinct chunk fingerprints, sorted."""
    from neardup.fingerprints.chunkprint import chunk_fingerprints

    chunk = config.of(ChunkMethod).chunks

    def extract(doc: Document, text: str, canonical: bytes) -> U32:
        return chunk_fingerprints(text, chunk)

    return extract


def _chunk_set(prints: Prints[U32]) -> U32:
    features = prints.features
    return np.empty(0, dtype=np.uint32) if features is None else features


def shared_chunks(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The number of distinct chunk fingerprints the two documents share (S&GM98's F, with
    ``DedupConfig.chunks``; ``dedup`` pairs them when F >= T)."""
    from neardup.fingerprints.chunkprint import chunk_fingerprints

    view = documents.text
    prints = [chunk_fingerprints(text, config.of(ChunkMethod).chunks) for text in view.texts]
    return np.array([np.intersect1d(prints[i], prints[j], assume_unique=True).size
                     for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
                    dtype=np.float64)


def _tag(method: ChunkMethod) -> str:
    return method.overlap.tag(method.chunks)


SPEC = MethodSpec("chunks", lambda c: {"chunks": _tag(c.of(ChunkMethod))}, params=ChunkMethod,
                  hint="chunks pairs by shared chunks: see --min-shared")
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[U32] = NearMethod(
    join=ChunkOverlap(),
    spec=SPEC, features=chunk_features,
    verification="at least T shared chunk fingerprints, then resemblance >= the floor",
    scorer=Scorer("chunks", shared_chunks,
                  Rule("shared chunks", "T", integral=True,
                       default=float(OverlapConfig().threshold(ChunkConfig()))),
                  summary="distinct 4-line chunk fingerprints in common (S&GM98; "
                          "DedupConfig.chunks)"))
