"""Pair values of the chunk-overlap methods, for the scorers of :mod:`.scorers`.

- ``chunks``: the number of distinct chunk fingerprints the two documents share (S&GM98's F,
  with ``DedupConfig.chunks``; ``dedup`` pairs them when F >= T);
- ``smfa``: 1 when the two pages have the same SMFA fingerprint, else 0 (raw HTML needed);
- ``keyword``: the cosine of the two documents' keyword vectors (``DedupConfig.keyword``);
- ``shingle-paragraphs``: the percentage of identical shingle paragraphs, relative to both
  documents (``100 * shared / max(n_a, n_b)``, Pereira's near-duplicate level); 0 when either
  document is not longer than ``DedupConfig.paragraphs.min_chars`` characters.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig
from neardup.evaluation.documents import PairDocuments
from neardup.fingerprints.chunkprint import chunk_fingerprints
from neardup.fingerprints.keywords import Keywords, cosine
from neardup.fingerprints.paragraphprint import paragraph_print
from neardup.fingerprints.smfa import smfa_fingerprint
from neardup.text.html import html_blocks

__all__ = ["keyword_cosines", "paragraph_percentages", "shared_chunks", "smfa_equal"]

F64 = npt.NDArray[np.float64]


def shared_chunks(documents: PairDocuments, config: DedupConfig) -> F64:
    view = documents.text
    prints = [chunk_fingerprints(text, config.chunks) for text in view.texts]
    return np.array([np.intersect1d(prints[i], prints[j], assume_unique=True).size
                     for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
                    dtype=np.float64)


def smfa_equal(documents: PairDocuments, config: DedupConfig) -> F64:
    view = documents.html
    prints = [smfa_fingerprint(html_blocks(raw, charset="utf-8"), config.smfa)
              for raw in view.raw]
    return np.array([float(prints[i] is not None and prints[j] is not None
                           and prints[i].digest == prints[j].digest)
                     for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
                    dtype=np.float64)


def paragraph_percentages(documents: PairDocuments, config: DedupConfig) -> F64:
    view = documents.text
    prints = [paragraph_print(text, config.paragraphs) for text in view.texts]
    values = []
    for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True):
        a, b = prints[i], prints[j]
        if a is None or b is None or not len(a) or not len(b):
            values.append(0.0)
            continue
        shared = np.intersect1d(a.keys, b.keys, assume_unique=True).size
        values.append(100.0 * shared / max(len(a), len(b)))
    return np.array(values, dtype=np.float64)


def keyword_cosines(documents: PairDocuments, config: DedupConfig) -> F64:
    view = documents.text
    keywords = Keywords(config.keyword)
    vectors = [keywords.of_canonical(tokens) for tokens in documents.canonical]
    return np.array([cosine(vectors[i], vectors[j])
                     for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
                    dtype=np.float64)
