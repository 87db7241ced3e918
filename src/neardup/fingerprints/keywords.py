"""Keyword vectors: the vector-space baseline of Wang & Chen's SMFA comparison ("TW", the
WebGather system's keyword method).

A document's vector holds its ``keywords`` most frequent terms: the canonical tokens
(:mod:`neardup.text.canonical`) without stop words, optionally stemmed, hashed to 64 bits; ties in
frequency go to the smaller hash, so the choice is deterministic. The weights are the term
frequencies scaled to unit length, so the cosine of two documents is the dot product over the
keywords they share.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup._types import F64, I64, U64
from neardup.config import KeywordConfig
from neardup.features.shingles import shingle_hashes
from neardup.text.compiled import njit
from neardup.text.stemming import filter_terms, stemmer
from neardup.text.stopwords import stop_words

__all__ = ["KeywordVector", "Keywords", "cosine", "pair_cosines"]



@dataclass(frozen=True, slots=True)
class KeywordVector:
    """Keyword hashes, sorted, and their weights (unit length; empty for a text without terms)."""

    terms: U64
    weights: F64


class Keywords:
    """Computes :class:`KeywordVector` for one configuration."""

    def __init__(self, config: KeywordConfig | None = None) -> None:
        config = config or KeywordConfig()
        self.config = config
        if config.stop_words is not None:
            stop_words(config.stop_words)  # an unknown language fails here, not per document
        if config.stemming is not None:
            stemmer(config.stemming)

    def of_canonical(self, canonical: bytes) -> KeywordVector:
        config = self.config
        terms = filter_terms(canonical, config.stop_words, config.stemming)
        hashes = shingle_hashes(terms, 1, config.seed) if terms else np.empty(0, np.uint64)
        values, counts = np.unique(hashes, return_counts=True)
        if values.size > config.keywords:  # most frequent first, smaller hash on ties
            order = np.lexsort((values, -counts))[: config.keywords]
            values, counts = values[order], counts[order]
            ranked = np.argsort(values)
            values, counts = values[ranked], counts[ranked]
        weights = counts.astype(np.float64)
        norm = float(np.sqrt(np.dot(weights, weights)))
        return KeywordVector(values, weights / norm if norm else weights)


def cosine(a: KeywordVector, b: KeywordVector) -> float:
    """The cosine of two keyword vectors (0 when either is empty)."""
    _, ia, ib = np.intersect1d(a.terms, b.terms, assume_unique=True, return_indices=True)
    return min(float(np.dot(a.weights[ia], b.weights[ib])), 1.0)


@njit(cache=True)
def _pair_cosines(terms: U64, weights: F64, offsets: I64, a: I64,
                  b: I64) -> F64:  # pragma: no cover - compiled
    out = np.zeros(a.size, dtype=np.float64)
    for k in range(a.size):
        i, end_i = offsets[a[k]], offsets[a[k] + 1]
        j, end_j = offsets[b[k]], offsets[b[k] + 1]
        total = 0.0
        while i < end_i and j < end_j:
            if terms[i] < terms[j]:
                i += 1
            elif terms[i] > terms[j]:
                j += 1
            else:
                total += weights[i] * weights[j]
                i += 1
                j += 1
        out[k] = min(total, 1.0)  # rounding can pass 1 by an ulp
    return out


def pair_cosines(vectors: list[KeywordVector], a: I64, b: I64) -> F64:
    """The cosine of ``vectors[a[k]]`` and ``vectors[b[k]]`` for every k (a merge per pair)."""
    offsets = np.zeros(len(vectors) + 1, dtype=np.int64)
    np.cumsum([v.terms.size for v in vectors], out=offsets[1:])
    terms = np.concatenate([v.terms for v in vectors]) if vectors else np.empty(0, np.uint64)
    weights = np.concatenate([v.weights for v in vectors]) if vectors else np.empty(0)
    return _pair_cosines(terms.astype(np.uint64), weights.astype(np.float64), offsets,
                         a.astype(np.int64), b.astype(np.int64))
