"""Two texts side by side: their shared shingles marked, their resemblance and containments.

:func:`compare_texts` is the pair view of the report's cluster browser and of the service's
compare route. Both texts are compared in canonical form (case-folded tokens, the form every
fingerprint and every verification reads) with the run's or store's verification shingles: a
token is marked when it lies inside a w-shingle the other text also holds. Scores are those of
the whole shingle sets, as :func:`neardup.cluster.relations.overlap_scores` defines them
(resemblance: shared shingles over all distinct shingles of the two; containment of a in
b: shared shingles over those of a); a batch run that removed its site
templates verified the pair on the sets without them, so its stored scores may differ a little.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.config import ShingleConfig
from neardup.features.shingles import shingle_hashes
from neardup.text.canonical import canonical_text

__all__ = ["PairView", "compare_texts", "marked_tokens", "relation_words", "verification_rule"]


@dataclass(frozen=True, slots=True)
class PairView:
    """The pair view of texts a and b (canonical tokens, a mark per token, the scores)."""

    tokens_a: tuple[str, ...]
    tokens_b: tuple[str, ...]
    marked_a: tuple[bool, ...]
    marked_b: tuple[bool, ...]
    shingles_a: int
    shingles_b: int
    shared: int
    resemblance: float
    containment_ab: float
    containment_ba: float
    shingle_width: int

    def as_dict(self) -> dict[str, object]:
        """The JSON form: scores, then per text its tokens and the indices of marked ones."""
        return {
            "resemblance": self.resemblance, "containment_ab": self.containment_ab,
            "containment_ba": self.containment_ba, "shared_shingles": self.shared,
            "shingles_a": self.shingles_a, "shingles_b": self.shingles_b,
            "shingle_width": self.shingle_width,
            "a": {"tokens": list(self.tokens_a),
                  "marked": [i for i, mark in enumerate(self.marked_a) if mark]},
            "b": {"tokens": list(self.tokens_b),
                  "marked": [i for i, mark in enumerate(self.marked_b) if mark]}}


def marked_tokens(hashes: npt.NDArray[np.uint64], tokens: int, width: int,
                  shared: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    """Per token, whether a shingle in ``shared`` covers it (``hashes`` in text order)."""
    marks = np.zeros(tokens + 1, dtype=np.int64)
    starts = np.flatnonzero(np.isin(hashes, shared))
    span = min(width, tokens)
    np.add.at(marks, starts, 1)
    np.add.at(marks, starts + span, -1)
    return np.asarray(np.cumsum(marks)[:tokens] > 0)


def compare_texts(a: str, b: str, shingles: ShingleConfig | None = None) -> PairView:
    """Compare two texts (any form: they are made canonical first)."""
    config = shingles if shingles is not None else ShingleConfig()
    texts = (canonical_text(a), canonical_text(b))
    tokens = [tuple(text.split(" ")) if text else () for text in texts]
    hashes = [shingle_hashes(text, config.width, config.seed) for text in texts]
    sets = [np.unique(h) for h in hashes]
    shared = np.intersect1d(sets[0], sets[1], assume_unique=True)
    size_a, size_b, both = sets[0].size, sets[1].size, shared.size
    union = size_a + size_b - both
    marks = [marked_tokens(h, len(t), config.width, shared) for h, t in zip(hashes, tokens,
                                                                              strict=True)]
    return PairView(
        tokens_a=tokens[0], tokens_b=tokens[1],
        marked_a=tuple(bool(m) for m in marks[0]), marked_b=tuple(bool(m) for m in marks[1]),
        shingles_a=size_a, shingles_b=size_b, shared=both,
        resemblance=both / union if union else 1.0,
        containment_ab=both / size_a if size_a else 1.0,
        containment_ba=both / size_b if size_b else 1.0,
        shingle_width=config.width)


_RELATION_WORDS = {
    "identical": "identical bytes (same payload hash)",
    "lexical": "same text once in canonical form (same canonical-text hash)",
    "shingle-equivalent": "same set of shingles (same shingle-set hash)",
}


def verification_rule(summary: dict[str, object]) -> str:
    """The rule a run's near pairs passed, in words, from its ``summary.json``."""
    near = summary.get("near")
    verification = near.get("verification") if isinstance(near, dict) else None
    if not isinstance(verification, dict):
        return f"the {summary.get('method', 'run')}'s own rule (summary.json does not state it)"
    rule = str(verification.get("rule", "resemblance"))
    threshold = verification.get("threshold")
    where = f" at least {threshold}" if threshold is not None else ""
    return f"exact {rule} of the shingle sets (site templates removed){where}"


def relation_words(found_by: str, relation: str, rule: str) -> str:
    """Why a verified pair of a run holds: what found it (a method, or a revisit record), its
    relation and the rule it passed."""
    if found_by == "revisit":
        return "a WARC revisit record of the other capture (same payload digest)"
    if relation in _RELATION_WORDS:
        return _RELATION_WORDS[relation]
    return f"{found_by} candidate, {relation}: {rule}"
