"""The ``shingle-paragraphs`` near method: Pereira, Baeza-Yates & Ziviani inside ``dedup``.

Per document (in the worker processes): its shingle paragraphs as a multiset of keys
(:mod:`neardup.fingerprints.paragraphprint`), for documents longer than ``min_chars``
characters. Over the documents that survive the spine's exact levels: the paper's iterative
algorithm over ``iterations`` sub-collections (:mod:`neardup.overlap.iterative`), giving clusters
of equal shingle paragraphs, near-duplicates at ``level`` percent, and the growth of clusters and
duplicates after each iteration with the estimate of the final count.

Counts follow the paper: documents longer than ``min_chars`` characters only, every document of
an exact-level group counted (the spine collapses identical and lexically equivalent copies
before this stage; each survivor stands for its group, whose other members are duplicates in its
cluster). Revisit records are not counted. The growth records become the ``growth`` output table
and ``near.growth`` in ``summary.json``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from neardup._types import F64, I64
from neardup.config import DedupConfig, MethodSpec, ParagraphConfig
from neardup.document import Document
from neardup.methods.joins import ParagraphIterations
from neardup.methods.scoring import Rule, ScoredPairs, Scorer
from neardup.methods.unit import FeatureExtractor, NearMethod

if TYPE_CHECKING:
    from neardup.fingerprints.paragraphprint import ParagraphPrint
    from neardup.overlap.iterative import ParagraphSets

__all__ = ["SPEC", "UNIT", "paragraph_features", "paragraph_parameters",
           "paragraph_percentages"]


def paragraph_features(config: DedupConfig) -> FeatureExtractor[ParagraphPrint | None]:
    """The per-document extractor: shingle-paragraph keys, or None for a short document."""
    from neardup.fingerprints.paragraphprint import paragraph_print

    paragraphs = config.of(ParagraphConfig)

    def extract(doc: Document, text: str, canonical: bytes) -> ParagraphPrint | None:
        return paragraph_print(text, paragraphs)

    return extract


def _sets(chosen: list[ParagraphPrint], weights: I64) -> ParagraphSets:
    from neardup.overlap.iterative import ParagraphSets

    offsets = np.zeros(len(chosen) + 1, dtype=np.int64)
    np.cumsum([len(p) for p in chosen], out=offsets[1:])
    flat = (np.concatenate([p.keys for p in chosen]) if chosen
            else np.empty(0, dtype=np.uint64))
    multiset = np.array([p.multiset for p in chosen], dtype=np.uint64)
    return ParagraphSets(flat.astype(np.uint64), offsets, multiset, weights)


def _estimates(growth: list[dict[str, object]], documents: int) -> dict[str, object]:
    """The estimates of the final duplicates after 20% and 50% of the iterations, and their
    errors in percentage points of the documents (the paper's measure)."""
    out: dict[str, object] = {}
    if not growth:
        return out
    final = float(growth[-1]["duplicates"])  # type: ignore[arg-type]
    for share in (20, 50):
        at = max(1, min(len(growth), math.ceil(len(growth) * share / 100 - 1e-9)))
        estimate = float(growth[at - 1]["estimated_duplicates"])  # type: ignore[arg-type]
        error = 100 * (estimate - final) / documents if documents else 0.0
        out[f"estimate_from_{share}pct"] = {"iteration": at, "duplicates": round(estimate, 1),
                                            "error_points": round(error, 2)}
    return out


def _percent(count: object, documents: int) -> float:
    return round(100 * float(count) / documents, 2) if documents else 0.0  # type: ignore[arg-type]


def paragraph_parameters(config: DedupConfig, documents: int, considered: int, too_short: int,
                         growth: list[dict[str, object]]) -> dict[str, object]:
    """The method's ``near`` summary: ``documents`` counted (exact-level groups weighed),
    ``considered`` survivors with shingle paragraphs, ``too_short`` without, and the growth."""
    cfg = config.of(ParagraphConfig)
    last = growth[-1] if growth else {}
    return {
        "paragraphs": cfg.tag, "level": cfg.level, "iterations": cfg.iterations,
        "documents_considered": documents, "survivors_considered": considered,
        "survivors_too_short": too_short,
        "clusters": last.get("clusters", 0), "duplicates": last.get("duplicates", 0),
        "near_clusters": last.get("near_clusters", 0),
        "near_duplicates": last.get("near_duplicates", 0),
        "percent_duplicates": _percent(last.get("duplicates", 0), documents),
        "percent_near_duplicates": _percent(last.get("near_duplicates", 0), documents),
        **_estimates(growth, documents), "growth": growth,
    }


def paragraph_percentages(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The percentage of identical shingle paragraphs, relative to both documents
    (``100 * shared / max(n_a, n_b)``, Pereira's near-duplicate level); 0 when either document
    is not longer than ``DedupConfig.paragraphs.min_chars`` characters."""
    from neardup.fingerprints.paragraphprint import paragraph_print

    view = documents.text
    prints = [paragraph_print(text, config.of(ParagraphConfig)) for text in view.texts]
    values = []
    for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True):
        a, b = prints[i], prints[j]
        if a is None or b is None or not len(a) or not len(b):
            values.append(0.0)
            continue
        shared = np.intersect1d(a.keys, b.keys, assume_unique=True).size
        values.append(100.0 * shared / max(len(a), len(b)))
    return np.array(values, dtype=np.float64)


SPEC = MethodSpec("shingle-paragraphs", lambda c: {"paragraphs": c.of(ParagraphConfig).tag},
                  hint="see --level", params=ParagraphConfig)
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[ParagraphPrint | None] = NearMethod(
    join=ParagraphIterations(),
    spec=SPEC, features=paragraph_features,
    verification="at least level% equal shingle paragraphs, then resemblance >= the floor",
    scorer=Scorer("shingle-paragraphs", paragraph_percentages,
                  Rule("identical shingle paragraphs (%)", "level",
                       grid=(50.0, 70.0, 90.0, 100.0),
                       curve=tuple(float(p) for p in range(0, 101, 5)),
                       default=float(ParagraphConfig().level)),
                  summary="percentage of identical shingle paragraphs of both documents "
                          "(Pereira)"))
