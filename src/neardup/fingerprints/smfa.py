"""SMFA (Wang & Chen): one MD5 fingerprint per page from its longest HTML block segments.

The paper's steps, on the block segments of :func:`neardup.text.html.html_blocks` (the text runs
between block tags, ``<p>`` and the other block elements, in document order):

1. sort the segments by length (characters, longest first; equal lengths keep document order);
2. take the ``n`` longest (n = 3) and concatenate them (longest first, one space between, so that
   words of two segments do not run together);
3. remove stop words (:mod:`neardup.text.stopwords`, compared case-insensitively), punctuation
   and white space: the words (runs of letters, digits and marks) are joined with nothing between;
   the case of the remaining words is kept, as the paper does not fold it;
4. the MD5 of the result (UTF-8) is the page's fingerprint; equal fingerprints are near-replicas.

A page with no segment, or whose longest segments hold only stop words and punctuation, has no
fingerprint (it would make every such page a near-replica of every other).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from neardup.config.overlap import SmfaConfig
from neardup.text.stopwords import ENGLISH_STOP_WORDS

__all__ = ["SmfaPrint", "smfa_fingerprint", "smfa_text"]

_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True, slots=True)
class SmfaPrint:
    """A page's SMFA fingerprint (16 bytes of MD5) and the number of segments behind it."""

    digest: bytes
    segments: int


def smfa_text(blocks: Sequence[str], config: SmfaConfig) -> tuple[str, int]:
    """The filtered concatenation of the ``config.segments`` longest blocks, and how many."""
    longest = sorted(blocks, key=len, reverse=True)[: config.segments]
    words = _WORD.findall(" ".join(longest))
    if config.stop_words:
        words = [w for w in words if w.casefold() not in ENGLISH_STOP_WORDS]
    return "".join(words), len(longest)


def smfa_fingerprint(blocks: Sequence[str], config: SmfaConfig) -> SmfaPrint | None:
    """The SMFA fingerprint of a page given its block segments, or None (see the module doc)."""
    text, used = smfa_text(blocks, config)
    if not text:
        return None
    return SmfaPrint(hashlib.md5(text.encode("utf-8", "surrogatepass")).digest(), used)
