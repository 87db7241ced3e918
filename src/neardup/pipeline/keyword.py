"""The ``keyword`` near method: keyword vectors compared by cosine (the baseline of SMFA's
comparison, :mod:`neardup.fingerprints.keywords`).

Per document (in the worker processes): its keyword vector. Over the documents that survive the
spine's exact levels: the keywords are expanded to sorted ``(keyword, doc)`` entries; keywords
held by more than ``KeywordConfig.drop_common`` documents are dropped (as Broder drops very
common shingles); every pair of documents sharing a remaining keyword is a candidate
(``shared`` = the keywords they share); its cosine over the full vectors decides: kept at or
above ``DedupConfig.threshold`` (0.9 by default; ``estimate`` holds the cosine). Kept pairs are
verified on the spine's shingle sets like every other method's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from neardup.cluster.broder import count_shared, drop_common, expand_sorted
from neardup.config import DedupConfig
from neardup.document import Document
from neardup.fingerprints.keywords import Keywords, KeywordVector, pair_cosines
from neardup.pipeline.fingerprint import DocumentPrints
from neardup.pipeline.near import NearStage
from neardup.pipeline.phases import PhaseMeter
from neardup.pipeline.sketch_method import csr
from neardup.pipeline.verify import verified_pairs

__all__ = ["find_keyword", "keyword_features"]

I64 = npt.NDArray[np.int64]


def keyword_features(config: DedupConfig) -> Callable[[Document, str, bytes], KeywordVector]:
    """The per-document extractor: the keyword vector of the canonical text."""
    keywords = Keywords(config.keyword)

    def extract(doc: Document, text: str, canonical: bytes) -> KeywordVector:
        return keywords.of_canonical(canonical)

    return extract


def _vector(features: object) -> KeywordVector:
    if not isinstance(features, KeywordVector):
        raise TypeError(f"keyword features expected, got {type(features).__name__}")
    return features


def find_keyword(config: DedupConfig, prints: list[DocumentPrints], survivors: I64) -> NearStage:
    """Pairs of survivors whose keyword vectors have a cosine of at least the threshold."""
    vectors = [_vector(prints[i].features) for i in survivors.tolist()]
    meter = PhaseMeter()
    with meter.phase("candidates"):
        flat, offsets = csr([v.terms for v in vectors])
        runs = drop_common(expand_sorted(flat, offsets), config.keyword.drop_common)
        shared = count_shared(runs, len(vectors))
    with meter.phase("cosine"):
        cosines = pair_cosines(vectors, shared.a, shared.b)
        keep = cosines >= config.threshold - 1e-12
    pairs, rejected = verified_pairs(config, prints, survivors, shared.a[keep], shared.b[keep],
                                     shared.count[keep])
    by_pair = dict(zip(zip(survivors[shared.a[keep]].tolist(), survivors[shared.b[keep]].tolist(),
                           strict=True), cosines[keep].tolist(), strict=True))
    estimate = np.array([by_pair[pair] for pair in zip(pairs.a.tolist(), pairs.b.tolist(),
                                                       strict=True)], dtype=np.float64)
    scored = dataclasses.replace(pairs, estimate=estimate)
    parameters: dict[str, object] = {
        "keyword": config.keyword.tag, "threshold": config.threshold,
        "dropped_keywords": int(runs.dropped.size), "below_threshold": int(np.count_nonzero(~keep)),
        "phases": meter.as_dict()}
    return NearStage(scored, int(shared.a.size), rejected + int(np.count_nonzero(~keep)),
                     parameters)
