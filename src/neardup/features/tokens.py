"""The canonical form of a text and the hashes of its tokens, in one compiled pass.

:func:`canonical_tokens` returns what ``canonical_bytes(text)`` and ``token_hashes`` of it
return (:mod:`neardup.text.canonical`, :mod:`neardup.features.shingles`), computed in one scan
over the text's UTF-8 bytes: each character is case-folded (the folding table of
:mod:`neardup.text.nfkc`), classed (word, standalone, separator) and, unless it separates, copied
to the canonical bytes while the FNV-1a hash of its token runs. Text holding a code point that
NFKC could change (about one web document in ten: a combining mark, a full-width or superscript
form) leaves the scan at the first one and takes the two-step path (NFKC around the unstable
pieces, then the token scan); the rest, which NFKC leaves as it is, needs nothing more.

Three passes and two intermediate buffers (folded text, canonical text, token hashes) become one
pass: on the real-text corpus the canonical form and token hashes cost about half as much.
"""

from __future__ import annotations

import numpy as np

from neardup._types import I32, U8, U64
from neardup.features.shingles import _FNV_OFFSET, _FNV_PRIME, fmix64
from neardup.text.canonical import (
    SEPARATOR,
    STANDALONE,
    _class_at,
    _code_point_classes,
)
from neardup.text.compiled import njit
from neardup.text.nfkc import _CJK_COMPATIBILITY, _TABLE, _code_point, fold_table, nfkc_casefold

__all__ = ["canonical_tokens"]

_BMP = 0x10000
_ASTRAL_STANDALONE = (0x20000, 0x3FFFF)  # as text.canonical reads them
_EXPANSION = 6
"""Canonical bytes per input byte at most: case folding at most triples a character's bytes
(U+0390 -> three characters), and a space may precede each character."""


@njit(cache=True, interpretable=True)
def _folded(out: U8, tokens: U64, n: int, count: int, h: np.uint64, pending: bool, pool: U8,
            at: int, end: int, classes: U8) -> tuple[int, int, np.uint64, bool]:  # pragma: no cover
    """Add the case-folded characters ``pool[at:end]`` to the canonical bytes ``out[:n]``
    (the state as :func:`_scan` keeps it: tokens hashed, running hash, a space pending); the
    state after."""
    while at < end:
        cls, size = _class_at(pool, at, classes)
        if cls == SEPARATOR:
            pending = n > 0
        else:
            n, count, h, pending = _character(out, tokens, n, count, h, pending, pool, at,
                                              size, cls)
        at += size
    return n, count, h, pending


@njit(cache=True, inline="always", interpretable=True)
def _character(out: U8, tokens: U64, n: int, count: int, h: np.uint64, pending: bool,
               src: U8, at: int, size: int,
               cls: int) -> tuple[int, int, np.uint64, bool]:  # pragma: no cover
    """Add the word or standalone character ``src[at:at + size]`` (of class ``cls``) to the
    canonical bytes, after the space and the token it ends if one is due; the state after."""
    if pending or (cls == STANDALONE and n > 0):
        out[n] = 32
        n += 1
        tokens[count] = fmix64(h)
        count += 1
        h = _FNV_OFFSET
    for j in range(size):
        out[n] = src[at + j]
        h = (h ^ np.uint64(src[at + j])) * _FNV_PRIME
        n += 1
    return n, count, h, cls == STANDALONE


@njit(cache=True, interpretable=True)
def _class_of(cp: np.int64, classes: U8) -> int:  # pragma: no cover - compiled
    """The class of a code point that is not ASCII (``text.canonical``'s rule)."""
    if cp < _BMP:
        return int(classes[cp])
    if _ASTRAL_STANDALONE[0] <= cp <= _ASTRAL_STANDALONE[1]:
        return STANDALONE
    return SEPARATOR


@njit(cache=True, interpretable=(0,))  # the class and folding tables are not work
def _scan(buf: U8, classes: U8, start: I32, length: U8, pool: U8, dirty: U8,
          fold: bool) -> tuple[U8, U64, bool]:  # pragma: no cover - compiled
    """(canonical bytes, token hashes, True) of the UTF-8 text ``buf`` case-folded by the
    tables (``fold``), or already in NFKC and folded (not ``fold``: the tables are not read);
    (empty, empty, False) when a text to fold holds a code point NFKC could change."""
    out = np.empty(buf.size * _EXPANSION, dtype=np.uint8)
    tokens = np.empty(buf.size * _EXPANSION // 2 + 1, dtype=np.uint64)
    n = count = i = 0
    h = _FNV_OFFSET
    pending = False
    while i < buf.size:
        lead = np.int64(buf[i])
        if lead < 0x80:  # most bytes: folded and classed inline
            byte = lead + 32 if fold and 65 <= lead <= 90 else lead
            if classes[byte] == SEPARATOR:
                pending = n > 0
            else:
                if pending:
                    out[n] = 32
                    n += 1
                    tokens[count] = fmix64(h)
                    count += 1
                    h = _FNV_OFFSET
                    pending = False
                out[n] = byte
                n += 1
                h = (h ^ np.uint64(byte)) * _FNV_PRIME
            i += 1
            continue
        cp, size = _code_point(buf, i, lead)
        if not fold:
            pass
        elif cp < _TABLE:
            if dirty[cp]:
                return out[:0], tokens[:0], False
            if length[cp]:
                n, count, h, pending = _folded(out, tokens, n, count, h, pending, pool,
                                               int(start[cp]), int(start[cp] + length[cp]),
                                               classes)
                i += size
                continue
        elif _CJK_COMPATIBILITY[0] <= cp <= _CJK_COMPATIBILITY[1]:
            return out[:0], tokens[:0], False
        cls = _class_of(cp, classes)
        if cls == SEPARATOR:
            pending = n > 0
        else:
            n, count, h, pending = _character(out, tokens, n, count, h, pending, buf, i, size,
                                              cls)
        i += size
    if n > 0:
        tokens[count] = fmix64(h)
        count += 1
    return out[:n], tokens[:count], True


def canonical_tokens(text: str, utf8: bytes | None = None) -> tuple[bytes, U64]:
    """``canonical_bytes(text)`` and the hashes of its tokens (``token_hashes``); ``utf8``:
    the text's UTF-8 form when the caller has it (a payload that decoded as UTF-8: encoding
    the text again costs more than decoding it)."""
    raw = text.encode("utf-8", "surrogatepass") if utf8 is None else utf8
    if not raw:
        return b"", np.empty(0, dtype=np.uint64)
    table, classes = fold_table(), _code_point_classes()
    canonical, tokens, clean = _scan(np.frombuffer(raw, dtype=np.uint8), classes, table.start,
                                     table.length, table.pool, table.dirty, True)
    if not clean:  # NFKC around the unstable pieces first
        folded = np.frombuffer(nfkc_casefold(text), dtype=np.uint8)
        canonical, tokens, _ = _scan(folded, classes, table.start, table.length, table.pool,
                                     table.dirty, False)
    return canonical.tobytes(), tokens
