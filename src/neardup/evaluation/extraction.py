"""How close an extractor's text is to a page's true main text: token precision and recall.

Both texts are put in canonical form (:mod:`neardup.text.canonical`) and compared as bags of
tokens (a token counts as often as it appears in both): precision is the share of the extracted
tokens that belong to the main text, recall the share of the main text's tokens extracted. This
is the measure of the extraction benchmarks (Zyte's article benchmark, trafilatura's own).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from neardup.text.canonical import canonical_text

__all__ = ["TokenOverlap", "token_overlap"]


@dataclass(frozen=True, slots=True)
class TokenOverlap:
    extracted: int
    truth: int
    shared: int

    @property
    def precision(self) -> float:
        return self.shared / self.extracted if self.extracted else 0.0

    @property
    def recall(self) -> float:
        return self.shared / self.truth if self.truth else 1.0

    @property
    def f1(self) -> float:
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


def token_overlap(extracted: str, truth: str) -> TokenOverlap:
    """The bag-of-tokens overlap of an extracted text with the true main text."""
    mine = Counter(canonical_text(extracted).split())
    real = Counter(canonical_text(truth).split())
    shared = sum((mine & real).values())
    return TokenOverlap(sum(mine.values()), sum(real.values()), shared)
