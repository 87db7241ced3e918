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
from typing import TYPE_CHECKING

import numpy as np

from neardup._types import F64, I64
from neardup.config import DedupConfig, KeywordConfig, MethodSpec
from neardup.document import Document
from neardup.methods.prints import Prints
from neardup.methods.scoring import UNIT_CURVE, Rule, ScoredPairs, Scorer
from neardup.methods.sketch import csr
from neardup.methods.unit import FeatureExtractor, NearMethod, NearStage
from neardup.overlap.phases import PhaseMeter

if TYPE_CHECKING:
    from neardup.fingerprints.keywords import KeywordVector

__all__ = ["SPEC", "UNIT", "find_keyword", "keyword_cosines", "keyword_features"]


def keyword_features(config: DedupConfig) -> FeatureExtractor[KeywordVector]:
    """The per-document extractor: the keyword vector of the canonical text."""
    from neardup.fingerprints.keywords import Keywords

    keywords = Keywords(config.of(KeywordConfig))

    def extract(doc: Document, text: str, canonical: bytes) -> KeywordVector:
        return keywords.of_canonical(canonical)

    return extract


def _vector(prints: Prints[KeywordVector]) -> KeywordVector:
    if prints.features is None:
        raise TypeError(f"document {prints.id!r} has no keyword vector")
    return prints.features


def find_keyword(config: DedupConfig, prints: list[Prints[KeywordVector]],
                 survivors: I64) -> NearStage:
    """Pairs of survivors whose keyword vectors have a cosine of at least the threshold."""
    from neardup.cluster.broder import count_shared, drop_common, expand_sorted
    from neardup.fingerprints.keywords import pair_cosines
    from neardup.methods.verify import verified_pairs

    vectors = [_vector(prints[i]) for i in survivors.tolist()]
    meter = PhaseMeter()
    with meter.phase("candidates"):
        flat, offsets = csr([v.terms for v in vectors])
        runs = drop_common(expand_sorted(flat, offsets), config.of(KeywordConfig).drop_common)
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
        "keyword": config.of(KeywordConfig).tag, "threshold": config.threshold,
        "dropped_keywords": int(runs.dropped.size), "below_threshold": int(np.count_nonzero(~keep)),
        "phases": meter.as_dict()}
    return NearStage(scored, int(shared.a.size), rejected + int(np.count_nonzero(~keep)),
                     parameters)


def keyword_cosines(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The cosine of the two documents' keyword vectors (``DedupConfig.keyword``)."""
    from neardup.fingerprints.keywords import Keywords, cosine

    view = documents.text
    keywords = Keywords(config.of(KeywordConfig))
    vectors = [keywords.of_canonical(tokens) for tokens in documents.canonical]
    return np.array([cosine(vectors[i], vectors[j])
                     for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
                    dtype=np.float64)


SPEC = MethodSpec("keyword", lambda c: {"keyword": f"{c.of(KeywordConfig).tag}:cos{c.threshold}"},
                  threshold=True, default_threshold=0.9, params=KeywordConfig)
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[KeywordVector] = NearMethod(
    spec=SPEC, find=find_keyword, features=keyword_features,
    verification="a shared keyword, cosine >= the threshold, then resemblance >= the floor",
    scorer=Scorer("keyword", keyword_cosines,
                  Rule("keyword-vector cosine", "t", curve=UNIT_CURVE,
                       default=SPEC.default_threshold),
                  summary="cosine of the 20 most frequent non-stop-word terms (SMFA's TW "
                          "baseline)"))
