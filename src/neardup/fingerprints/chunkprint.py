"""S&GM98 chunk fingerprints: each chunk of a document hashed down to 32 bits.

A chunk's fingerprint is the top 32 bits of its 64-bit hash (:func:`neardup.features.chunks.
chunk_hashes`). A document contributes each distinct fingerprint once to the FPrint-DocID relation,
so the overlap F of two documents is the number of distinct chunk fingerprints they share. 32 bits
is the paper's width: with n distinct chunks in a corpus about n^2 / 2^33 pairs of them collide
(a few per million chunks), which adds at most a stray shared chunk to a pair.
"""

from __future__ import annotations

import numpy as np

from neardup._types import U32, U64
from neardup.config.overlap import ChunkConfig
from neardup.features.chunks import chunk_hashes
from neardup.features.shingles import distinct

__all__ = ["chunk_fingerprints", "fold32"]



def fold32(hashes: U64) -> U32:
    """The top 32 bits of 64-bit hashes."""
    return (hashes >> np.uint64(32)).astype(np.uint32)


def chunk_fingerprints(text: str, chunk: ChunkConfig) -> U32:
    """The distinct 32-bit chunk fingerprints of ``text``, sorted."""
    return distinct(fold32(chunk_hashes(text, chunk)))
