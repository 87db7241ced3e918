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

Two more savings, for text that is not ASCII (most web text: a quote mark or an accent is
enough). The case folding is compiled too: ``str.casefold`` maps each code point on its own (no
context), so a table of the code points it changes (planes 0 and 1; it changes none past them)
folds the UTF-8 bytes in the same pass that looks for unstable code points (``str.casefold``
cost about 14 ns a character, more than the rest of the canonical form). And text with unstable
code points is normalised only around them: NFKC never acts across the start of an ASCII
character (ASCII has combining class 0, is NFKC-stable and composes with nothing before it),
and case folding maps each character alone, so the text cut before each ASCII character
normalises piece by piece. Each *dirty* piece (an ASCII character or the start, then the
non-ASCII characters up to the next ASCII one, holding an unstable code point) is normalised in
full; the rest is folded. Text with more than ``MAX_DIRTY`` dirty pieces (Devanagari, Arabic
with vowel marks, where every word has one) is normalised in full at once.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass

import numpy as np

from neardup._types import I32, I64, U8
from neardup.text.compiled import njit
from neardup.text.kepttables import Tables, kept_tables

__all__ = ["MAX_DIRTY", "nfkc_casefold", "nfkc_casefold_full", "unstable_code_points"]

_TABLE = 0x20000  # the BMP and plane 1 (emoji, historic scripts, mathematical letters)
_CJK_COMPATIBILITY = (0x2F800, 0x2FA1F)  # the only code points past plane 1 NFKC changes
_ELLIPSIS = "\u2026"  # "...": the chunkers end a sentence at it as they do at "..."
_BOUNDARIES = frozenset(".!?\n\r\x0b\x0c")
_HANGUL_VOWELS_AND_FINALS = (0x1160, 0x11FF)
_FOLD_BLOCK = 256
MAX_DIRTY = 32
"""Dirty pieces normalised one by one at most; text with more is normalised whole."""
_kept: Tables | None = None
_folding: FoldTable | None = None


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
    full path (built once, about 80 ms, and kept on disk: :mod:`neardup.text.kepttables`)."""
    return _tables()["unstable"]


def _tables() -> Tables:
    """This module's tables: the unstable code points and the folding table's arrays."""
    global _kept
    if _kept is None:
        _kept = kept_tables("nfkc", __file__, _built_tables)
    return _kept


def _built_unstable() -> U8:
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
    return table


@dataclass(frozen=True, slots=True)
class FoldTable:
    """``str.casefold`` per code point of planes 0 and 1, for the compiled scan: code point
    ``cp`` folds to ``pool[start[cp]:start[cp] + length[cp]]`` (UTF-8) when ``length[cp]`` is
    not 0, else to itself; ``dirty[cp]`` is 1 when its folded form holds an unstable code
    point (see :func:`unstable_code_points`)."""

    start: I32
    length: U8
    pool: U8
    dirty: U8


def _changed_by_casefold() -> list[int]:
    """The code points of planes 0 and 1 that ``str.casefold`` changes (whole blocks compared
    first: most blocks have none)."""
    found = []
    for low in range(0, _TABLE, _FOLD_BLOCK):
        block = "".join(map(chr, range(low, low + _FOLD_BLOCK)))
        if block.casefold() != block:
            found += [cp for cp in range(low, low + _FOLD_BLOCK) if chr(cp).casefold() != chr(cp)]
    return found


def fold_table() -> FoldTable:
    """The case folding table (built once, about 30 ms, and kept on disk with the unstable
    code points)."""
    global _folding
    if _folding is None:
        tables = _tables()
        _folding = FoldTable(tables["start"], tables["length"], tables["pool"], tables["dirty"])
    return _folding


def _built_tables() -> Tables:
    unstable = _built_unstable()
    start = np.zeros(_TABLE, dtype=np.int32)
    length = np.zeros(_TABLE, dtype=np.uint8)
    dirty = unstable.copy()
    pool = bytearray()
    for cp in _changed_by_casefold():
        folded = chr(cp).casefold()
        start[cp], length[cp] = len(pool), len(folded.encode("utf-8", "surrogatepass"))
        pool += folded.encode("utf-8", "surrogatepass")
        dirty[cp] = any(unstable[ord(c)] for c in folded)
    return {"unstable": unstable, "start": start, "length": length,
            "pool": np.frombuffer(bytes(pool), dtype=np.uint8), "dirty": dirty}


@njit(cache=True, interpretable=True)
def _code_point(buf: U8, i: int,
                lead: np.int64) -> tuple[np.int64, int]:  # pragma: no cover - compiled
    """(code point, length in bytes) of the UTF-8 character at ``buf[i]``, not ASCII."""
    if lead < 0xE0:
        return ((lead & 0x1F) << 6) | (np.int64(buf[i + 1]) & 0x3F), 2
    if lead < 0xF0:
        cp = ((lead & 0x0F) << 12) | ((np.int64(buf[i + 1]) & 0x3F) << 6)
        return cp | (np.int64(buf[i + 2]) & 0x3F), 3
    cp = ((lead & 0x07) << 18) | ((np.int64(buf[i + 1]) & 0x3F) << 12)
    return cp | ((np.int64(buf[i + 2]) & 0x3F) << 6) | (np.int64(buf[i + 3]) & 0x3F), 4


@njit(cache=True, interpretable=True)
def _copy(source: U8, at: int, size: int, out: U8, n: int) -> int:  # pragma: no cover
    for j in range(size):
        out[n + j] = source[at + j]
    return n + size


@njit(cache=True, interpretable=(0,))  # the folding tables are not work
def _fold(buf: U8, start: I32, length: U8, pool: U8, dirty: U8,
          pieces: I64) -> tuple[U8, int]:  # pragma: no cover - compiled
    """The case-folded bytes of ``buf`` and the number of dirty pieces, whose bounds (input
    start and end, output start and end) go to the rows of ``pieces`` (neighbours merged);
    ``pieces.shape[0] + 1`` when there are more than it holds."""
    out = np.empty(buf.size * 3, dtype=np.uint8)
    n = count = i = piece_in = piece_out = 0
    piece_dirty = False
    while i < buf.size:
        lead = np.int64(buf[i])
        if lead < 0x80:
            if piece_dirty:
                count = _close(pieces, count, piece_in, i, piece_out, n)
                piece_dirty = False
            piece_in, piece_out = i, n
            out[n] = lead + 32 if 65 <= lead <= 90 else lead
            n += 1
            i += 1
            continue
        cp, size = _code_point(buf, i, lead)
        if cp < _TABLE:
            piece_dirty = piece_dirty or dirty[cp] != 0
            if length[cp]:
                n = _copy(pool, start[cp], int(length[cp]), out, n)  # int(): n + uint8
                i += size
                continue
        elif _CJK_COMPATIBILITY[0] <= cp <= _CJK_COMPATIBILITY[1]:
            piece_dirty = True
        n = _copy(buf, i, size, out, n)
        i += size
    if piece_dirty:
        count = _close(pieces, count, piece_in, buf.size, piece_out, n)
    return out[:n], count


@njit(cache=True, interpretable=True)
def _close(pieces: I64, count: int, in_start: int, in_end: int, out_start: int,
           out_end: int) -> int:  # pragma: no cover - compiled
    """Record one dirty piece (merged with the last when they touch); the new count."""
    if count and count <= pieces.shape[0] and pieces[count - 1, 1] == in_start:
        pieces[count - 1, 1], pieces[count - 1, 3] = in_end, out_end
        return count
    if count < pieces.shape[0]:
        pieces[count, 0], pieces[count, 1] = in_start, in_end
        pieces[count, 2], pieces[count, 3] = out_start, out_end
    return count + 1 if count <= pieces.shape[0] else count


def _full_bytes(text: str) -> bytes:
    return nfkc_casefold_full(text).encode("utf-8", "surrogatepass")


def nfkc_casefold(text: str) -> bytes:
    """``text`` in NFKC and case-folded, as UTF-8 bytes (``surrogatepass``)."""
    raw = text.encode("utf-8", "surrogatepass")
    if text.isascii():
        return raw.lower()
    table = fold_table()
    pieces = np.empty((MAX_DIRTY, 4), dtype=np.int64)
    folded, count = _fold(np.frombuffer(raw, dtype=np.uint8), table.start, table.length,
                          table.pool, table.dirty, pieces)
    if count == 0:
        return folded.tobytes()
    if count > MAX_DIRTY:
        return _full_bytes(text)
    parts, last = [], 0
    for in_start, in_end, out_start, out_end in pieces[:count].tolist():
        parts += [folded[last:out_start].tobytes(),
                  _full_bytes(raw[in_start:in_end].decode("utf-8", "surrogatepass"))]
        last = out_end
    parts.append(folded[last:].tobytes())
    return b"".join(parts)
