"""Broder's canonical form: the tokens of a text, ignoring markup, case and punctuation.

The text is first brought to Unicode NFKC and case-folded (NFKC, casefold, NFKC again: Unicode's
NFKC_Casefold up to default-ignorable characters), so that full-width ``ABC123`` (U+FF21...)
reads ``abc123``, a precomposed ``café`` equals a decomposed one, and the ligature ``ﬁ`` is ``fi``
(:mod:`neardup.text.nfkc`; text NFKC would not change skips it).

A token is a maximal run of letters, digits and combining marks (Unicode-aware: Cyrillic, Greek,
Devanagari, Arabic... all tokenise). Scripts written without spaces (Han ideographs, Hiragana,
Katakana) would make a whole sentence one token, so each of their characters is a token of its
own. Everything else (punctuation, symbols, white space, emoji) only
separates tokens. The canonical text is the tokens joined by single spaces; two documents are
*lexically equivalent* when their canonical texts are equal.

The scan runs over UTF-8 bytes in numba with a per-code-point class table, about 20x faster than
``re`` on Unicode text.
"""

from __future__ import annotations

import unicodedata

import numpy as np

from neardup._types import U8
from neardup.text.compiled import njit
from neardup.text.kepttables import kept_tables
from neardup.text.nfkc import nfkc_casefold

__all__ = ["canonical_bytes", "canonical_text", "canonical_tokens"]

SEPARATOR, WORD, STANDALONE = 0, 1, 2
_BMP = 0x10000
_STANDALONE_RANGES = ((0x3040, 0x30FF), (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF))
_ASTRAL_STANDALONE = (0x20000, 0x3FFFF)  # CJK extensions B..H
_classes: U8 | None = None


def _code_point_classes() -> U8:
    """The class of every code point of the Basic Multilingual Plane (built once, ~20 ms, and
    kept on disk: :mod:`neardup.text.kepttables`)."""
    global _classes
    if _classes is None:
        _classes = kept_tables("classes", __file__, _built_classes)["classes"]
    return _classes


def _built_classes() -> dict[str, U8]:
    table = np.zeros(_BMP, dtype=np.uint8)
    for cp in range(_BMP):
        char = chr(cp)
        if char.isalnum() or unicodedata.category(char).startswith("M"):
            table[cp] = WORD
    for low, high in _STANDALONE_RANGES:
        table[low : high + 1] = STANDALONE
    return {"classes": table}


@njit(cache=True, interpretable=True)
def _class_at(
    buf: U8, i: int, classes: U8
) -> tuple[int, int]:
    """(class, length in bytes) of the UTF-8 character starting at ``buf[i]``."""
    lead = int(buf[i])  # int(): a uint8 shifted left wraps when interpreted
    if lead < 0x80:
        return classes[lead], 1
    if lead < 0xE0:
        cp = ((lead & 0x1F) << 6) | (int(buf[i + 1]) & 0x3F)
        return classes[cp], 2
    if lead < 0xF0:
        cp = ((lead & 0x0F) << 12) | ((int(buf[i + 1]) & 0x3F) << 6) | (int(buf[i + 2]) & 0x3F)
        return classes[cp], 3
    cp = ((lead & 0x07) << 18) | ((int(buf[i + 1]) & 0x3F) << 12)
    cp |= ((int(buf[i + 2]) & 0x3F) << 6) | (int(buf[i + 3]) & 0x3F)
    if _ASTRAL_STANDALONE[0] <= cp <= _ASTRAL_STANDALONE[1]:
        return STANDALONE, 4
    return SEPARATOR, 4


@njit(cache=True, interpretable=(0,))  # the class table is not work
def _canonicalize(
    buf: U8, classes: U8
) -> U8:  # pragma: no cover - compiled
    out = np.empty(buf.size * 2, dtype=np.uint8)
    n = 0
    i = 0
    pending_space = False
    while i < buf.size:
        if buf[i] < 0x80:
            cls, length = classes[buf[i]], 1
        else:
            cls, length = _class_at(buf, i, classes)
        if cls == SEPARATOR:
            pending_space = n > 0
        else:
            if pending_space or (cls == STANDALONE and n > 0):
                out[n] = 32
                n += 1
            for j in range(length):
                out[n + j] = buf[i + j]
            n += length
            pending_space = cls == STANDALONE
        i += length
    return out[:n]


def canonical_bytes(text: str) -> bytes:
    """The canonical form of ``text`` as UTF-8 bytes: NFKC, case-folded tokens, single spaces."""
    raw = nfkc_casefold(text)
    if not raw:
        return b""
    buf = np.frombuffer(raw, dtype=np.uint8)
    return _canonicalize(buf, _code_point_classes()).tobytes()


def canonical_text(text: str) -> str:
    """The canonical form of ``text``: case-folded tokens separated by single spaces."""
    return canonical_bytes(text).decode("utf-8", "surrogatepass")


def canonical_tokens(text: str) -> list[str]:
    """The canonical tokens of ``text``, in order."""
    return canonical_text(text).split()
