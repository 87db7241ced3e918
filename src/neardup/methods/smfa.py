"""The ``smfa`` near method: Wang & Chen's single MD5 fingerprint inside ``dedup``.

Per document (in the worker processes): the SMFA fingerprint of its raw HTML
(:mod:`neardup.fingerprints.smfa`; the page is parsed once more for its block segments). Over
the documents that survive the spine's exact levels, equal fingerprints are near-replicas: each
member of a group is paired with the group's first document (a star, so a group of g pages gives
g - 1 pairs, not g(g-1)/2; the clusters are the same), ``shared`` = the number of segments behind
the fingerprint, and every pair is verified on the spine's shingle sets.

SMFA reads HTML block tags, so it works on raw HTML only. Documents that are not HTML (plain-text
files, JSONL or Parquet ``text`` fields, ``text/plain`` responses) get no fingerprint and are
counted in ``summary.json`` (``near.not_html``, with their sources); when *no* document is HTML
the run stops with an error naming the inputs, as SMFA would find nothing.
"""

from __future__ import annotations

from typing import Final, Literal

import numpy as np

from neardup._types import F64
from neardup.config import DedupConfig, MethodSpec, SmfaConfig
from neardup.document import Document
from neardup.fingerprints.smfa import SmfaPrint, smfa_fingerprint
from neardup.methods.joins import SmfaMatches
from neardup.methods.scoring import Rule, ScoredPairs, Scorer
from neardup.methods.unit import FeatureExtractor, NearMethod
from neardup.text.html import html_blocks

__all__ = ["NOT_HTML", "SPEC", "UNIT", "SmfaFeatures", "smfa_equal", "smfa_features"]

NOT_HTML: Final = "not-html"
"""The feature of a document that is not HTML (SMFA cannot fingerprint it)."""
SmfaFeatures = SmfaPrint | Literal["not-html"] | None
"""A document's SMFA fingerprint, NOT_HTML, or None (an HTML page with no text segment)."""


def smfa_features(config: DedupConfig) -> FeatureExtractor[SmfaFeatures]:
    """The per-document extractor: the SMFA fingerprint, None, or NOT_HTML."""
    smfa = config.of(SmfaConfig)

    def extract(doc: Document, text: str, canonical: bytes) -> SmfaFeatures:
        if doc.kind != "html":
            return NOT_HTML
        return smfa_fingerprint(html_blocks(doc.raw, charset=doc.charset), smfa)

    return extract


def smfa_equal(documents: ScoredPairs, config: DedupConfig) -> F64:
    """1 when the two pages have the same SMFA fingerprint, else 0 (raw HTML needed)."""
    view = documents.html
    prints = [smfa_fingerprint(html_blocks(raw, charset="utf-8"), config.of(SmfaConfig))
              for raw in view.raw]
    return np.array([float(prints[i] is not None and prints[j] is not None
                           and prints[i].digest == prints[j].digest)
                     for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
                    dtype=np.float64)


SPEC = MethodSpec("smfa", lambda c: {"smfa": c.of(SmfaConfig).tag}, params=SmfaConfig)
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[SmfaFeatures] = NearMethod(
    join=SmfaMatches(),
    spec=SPEC, features=smfa_features,
    verification="equal SMFA fingerprints, then resemblance >= the floor",
    scorer=Scorer("smfa", smfa_equal,
                  Rule("equal SMFA fingerprints", "equal", grid=(1.0,), integral=True,
                       default=1.0),
                  needs="html", summary="1 when the MD5 of the 3 longest HTML segments are equal"))
