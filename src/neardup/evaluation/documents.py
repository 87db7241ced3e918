"""The documents of a list of labeled pairs, as the scorers see them.

A document that appears in several pairs (a source quoted by many answers) is stored, tokenised
and fingerprinted once: a :class:`View` holds the distinct documents and, per pair, the index of
its first and second document, so a scorer computes one fingerprint per document and compares
them by indexing (``prints[view.first]`` against ``prints[view.second]``).

Two views: ``text`` (the pair's text, or the text extracted from its HTML with resiliparse) and
``html`` (the raw HTML; only pairs that have it). Text becomes the token sequence the fingerprints
read ("canonical bytes": tokens joined by single spaces) by Broder's canonical form (default) or,
for text that is already tokenised, lower-cased and stemmed (``tokenize="whitespace"``), by
splitting on white space only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Literal

import numpy as np

from neardup._types import I64, U64
from neardup.config import Extractor
from neardup.errors import ConfigError
from neardup.evaluation.labeled import LabeledPair
from neardup.features.shingles import shingle_set
from neardup.text.canonical import canonical_bytes
from neardup.text.extract import extract as extract_html

__all__ = ["TOKENIZERS", "PairDocuments", "Tokenize", "View", "tokenize"]

Tokenize = Literal["canonical", "whitespace"]
TOKENIZERS: tuple[Tokenize, ...] = ("canonical", "whitespace")


def tokenize(text: str, how: Tokenize = "canonical") -> bytes:
    """The tokens of ``text`` joined by single spaces, as UTF-8 bytes."""
    if how == "whitespace":
        return " ".join(text.split()).encode("utf-8", "surrogatepass")
    if how == "canonical":
        return canonical_bytes(text)
    raise ConfigError(f"tokenize={how!r}: one of {', '.join(TOKENIZERS)}")


@dataclass(frozen=True, slots=True)
class View:
    """Distinct documents (``texts``; ``raw``: the bytes they came from) and each pair's two."""

    texts: list[str]
    raw: list[bytes]
    first: I64
    second: I64


class _Interner:
    def __init__(self, extractor: Extractor = "full") -> None:
        self.extractor: Extractor = extractor
        self.index: dict[tuple[str, str | None], int] = {}
        self.texts: list[str] = []
        self.raw: list[bytes] = []

    def add(self, text: str, html: str | None, extract: bool) -> int:
        key = (text, html)
        if key not in self.index:
            self.index[key] = len(self.texts)
            source = html if html is not None else text
            self.texts.append(extract_html(source.encode("utf-8", "surrogatepass"),
                                           self.extractor, "utf-8") if extract else text)
            self.raw.append(source.encode("utf-8", "surrogatepass"))
        return self.index[key]


class PairDocuments:
    """The pairs' documents, tokenised and shingled once each (results cached)."""

    def __init__(self, pairs: Sequence[LabeledPair], tokenize: Tokenize = "canonical",
                 extractor: Extractor = "full") -> None:
        if tokenize not in TOKENIZERS:
            raise ConfigError(f"tokenize={tokenize!r}: one of {', '.join(TOKENIZERS)}")
        self.extractor: Extractor = extractor
        self.pairs = tuple(pairs)
        self.tokenize: Tokenize = tokenize
        self._shingles: dict[tuple[int, int], tuple[U64, I64]] = {}

    def __len__(self) -> int:
        return len(self.pairs)

    @cached_property
    def text(self) -> View:
        """Text documents: the pair's text fields, else the text of its HTML fields (by the
        extractor)."""
        interner = _Interner(self.extractor)
        first, second = [], []
        for pair in self.pairs:
            texts = pair.documents("text")
            if texts is not None:
                first.append(interner.add(texts[0], None, extract=False))
                second.append(interner.add(texts[1], None, extract=False))
            else:
                html = pair.documents("html")
                assert html is not None  # a LabeledPair has text or HTML
                first.append(interner.add("", html[0], extract=True))
                second.append(interner.add("", html[1], extract=True))
        return View(interner.texts, interner.raw, np.array(first, dtype=np.int64),
                    np.array(second, dtype=np.int64))

    @cached_property
    def html(self) -> View:
        """Raw HTML documents; ConfigError if a pair has no ``html_a``/``html_b``."""
        interner = _Interner()
        first, second = [], []
        for pair in self.pairs:
            html = pair.documents("html")
            if html is None:
                raise ConfigError(f"pair {pair.pair_id}: this method needs html_a and html_b")
            first.append(interner.add(html[0], None, extract=False))
            second.append(interner.add(html[1], None, extract=False))
        return View(interner.texts, interner.raw, np.array(first, dtype=np.int64),
                    np.array(second, dtype=np.int64))

    @cached_property
    def canonical(self) -> list[bytes]:
        """The token sequence of each text document (same order as ``text.texts``)."""
        return [tokenize(text, self.tokenize) for text in self.text.texts]

    def shingle_sets(self, width: int, seed: int = 0) -> tuple[U64, I64]:
        """Every text document's sorted distinct w-shingles, concatenated, and CSR offsets."""
        key = (width, seed)
        if key not in self._shingles:
            sets = [shingle_set(tokens, width, seed) for tokens in self.canonical]
            offsets = np.zeros(len(sets) + 1, dtype=np.int64)
            np.cumsum([s.size for s in sets], out=offsets[1:])
            flat = np.concatenate(sets) if sets else np.empty(0, dtype=np.uint64)
            self._shingles[key] = (flat, offsets)
        return self._shingles[key]
