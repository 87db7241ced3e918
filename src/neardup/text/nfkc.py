"""NFKC with case folding, and the fast path that skips it for text it would not change.

The canonical form reads text in NFKC and case-folded: NFKC, ``str.casefold``, NFKC again
(Unicode's NFKC_Casefold up to default-ignorable characters). Full-width ``ABC123`` (U+FF21...)
becomes ``abc123``, a decomposed ``café`` the precomposed one, the ligature ``ﬁ`` ``fi``.

``unicodedata.normalize`` costs about 1.5x the whole token scan on web text, and almost no
web text needs it. So :func:`nfkc_casefold` case-folds first and scans the folded text's UTF-8
bytes (compiled) against a table of the code points that can change under NFKC: those NFKC
maps to something else (unless they only separate tokens and map to ASCII spaces or
punctuation other than ``.!?`` and line breaks, as the no-break space does; and the ellipsis
``…``, which the chunkers read as they read ``...``), those with a
non-zero combining class (NFKC reorders them), and those that compose with the character before
them (the second half of a canonical decomposition, Hangul vowel and final jamo). Text with
none of these (planes 0 and 1 by the table; past them only the CJK compatibility ideographs
change) is returned as folded; other text is normalised
in full. Tested: for every character of planes 0 to 2, and for composing pairs, both paths agree.
"""

from __future__ import annotations

import unicodedata

import numpy as np
from numba import njit

from neardup._types import U8

__all__ = ["nfkc_casefold", "nfkc_casefold_full", "unstable_code_points"]

_TABLE = 0x20000  # the BMP and plane 1 (emoji, historic scripts, mathematical letters)
_CJK_COMPATIBILITY = (0x2F800, 0x2FA1F)  # the only code points past plane 1 NFKC changes
_ELLIPSIS = "\u2026"  # "...": the chunkers end a sentence at it as they do at "..."
_BOUNDARIES = frozenset(".!?\n\r\x0b\x0c")
_HANGUL_VOWELS_AND_FINALS = (0x1160, 0x11FF)
_unstable: U8 | None = None


def nfkc_casefold_full(text: str) -> str:
    """NFKC, casefold, NFKC: the reference the fast path must equal."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())


def _separator_only(text: str) -> bool:
    return not any(c.isalnum() or unicodedata.category(c).startswith("M") for c in text)


def _ascii_punctuation(text: str) -> bool:
    """ASCII spaces and punctuation that neither ends a sentence nor breaks a line (the chunkers
    read those)."""
    return text.isascii() and not any(c.isalnum() or c in _BOUNDARIES for c in text)


def unstable_code_points() -> U8:
    """1 for each code point of planes 0 and 1 whose presence in folded text sends it to the
    full path (built once, about 50 ms)."""
    global _unstable
    if _unstable is None:
        table = np.zeros(_TABLE, dtype=np.uint8)
        for cp in range(_TABLE):
            char = chr(cp)
            mapped = unicodedata.normalize("NFKC", char)
            if mapped != char and char != _ELLIPSIS and not (
                    _separator_only(char) and _ascii_punctuation(mapped)):
                table[cp] = 1
            if unicodedata.combining(char):
                table[cp] = 1
            parts = unicodedata.decomposition(char).split()
            if len(parts) == 2 and not parts[0].startswith("<"):
                second = int(parts[1], 16)
                if second < _TABLE:
                    table[second] = 1
        table[_HANGUL_VOWELS_AND_FINALS[0] : _HANGUL_VOWELS_AND_FINALS[1] + 1] = 1
        _unstable = table
    return _unstable


@njit(cache=True)
def _needs_full(buf: U8,
                unstable: U8) -> bool:  # pragma: no cover - compiled
    i = 0
    while i < buf.size:
        lead = buf[i]
        if lead < 0x80:
            i += 1
            continue
        if lead < 0xE0:
            cp = ((lead & 0x1F) << 6) | (buf[i + 1] & 0x3F)
            i += 2
        elif lead < 0xF0:
            cp = ((lead & 0x0F) << 12) | ((buf[i + 1] & 0x3F) << 6) | (buf[i + 2] & 0x3F)
            i += 3
        else:
            cp = ((lead & 0x07) << 18) | ((buf[i + 1] & 0x3F) << 12)
            cp |= ((buf[i + 2] & 0x3F) << 6) | (buf[i + 3] & 0x3F)
            i += 4
        if cp >= _TABLE:
            if _CJK_COMPATIBILITY[0] <= cp <= _CJK_COMPATIBILITY[1]:
                return True
        elif unstable[cp]:
            return True
    return False


def nfkc_casefold(text: str) -> bytes:
    """``text`` in NFKC and case-folded, as UTF-8 bytes (``surrogatepass``)."""
    folded = text.casefold()
    raw = folded.encode("utf-8", "surrogatepass")
    if folded.isascii() or not _needs_full(np.frombuffer(raw, dtype=np.uint8),
                                           unstable_code_points()):
        return raw
    return nfkc_casefold_full(text).encode("utf-8", "surrogatepass")
