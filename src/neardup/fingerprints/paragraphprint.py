"""Pereira, Baeza-Yates & Ziviani's documents as multisets of shingle paragraphs.

Each shingle paragraph (:func:`neardup.features.chunks.shingle_paragraphs`) is hashed exactly, as
text (xxh3, 64 bits; the paper compares the text itself). A document is the *multiset* of its
shingle paragraphs: the k-th repeat of a paragraph in a document is hashed with seed k, so a
document is a set of keys and the number of keys two documents share is the number of shingle
paragraphs they have in common, repeats counted as often as both have them.

This removes the paper's false match (its Section 3): "e. e. e. d. d. d. e. e. e. d. d. d" has the
shingles {e, d, e, d}; every one of them is found in a document with {a, b, d, e}, which has as many
shingles, so the paper's test calls them duplicates. As multisets they share two of four paragraphs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xxhash

from neardup._types import U64
from neardup.config.overlap import ParagraphConfig
from neardup.features.chunks import shingle_paragraphs

__all__ = ["ParagraphPrint", "paragraph_print"]



@dataclass(frozen=True, slots=True)
class ParagraphPrint:
    """A document's shingle-paragraph keys (sorted) and the hash of the whole multiset."""

    keys: U64
    multiset: int

    def __len__(self) -> int:
        return int(self.keys.size)


def paragraph_print(text: str, config: ParagraphConfig) -> ParagraphPrint | None:
    """The shingle paragraphs of ``text`` as keys, or None when the text has ``min_chars``
    characters or fewer (the paper keeps documents longer than 450 characters)."""
    if len(text) <= config.min_chars:
        return None
    seen: dict[str, int] = {}
    keys = []
    for paragraph in shingle_paragraphs(text, config.sentences, config.cut):
        repeat = seen.get(paragraph, 0)
        seen[paragraph] = repeat + 1
        keys.append(xxhash.xxh3_64_intdigest(paragraph.encode("utf-8", "surrogatepass"),
                                             seed=repeat))
    ordered = np.sort(np.array(keys, dtype=np.uint64))
    return ParagraphPrint(ordered, xxhash.xxh3_64_intdigest(ordered.astype("<u8").tobytes()))
