"""Chunkers: cut a document's text into the units S&GM98 fingerprints, and Pereira's shingle
paragraphs.

Every chunk is a run of the document's canonical tokens (:mod:`neardup.text.canonical`: NFKC,
case folded, punctuation and layout ignored), so two chunks are equal when their words are. One pass
over the text (numba) gives each token its hash (the same as
:func:`neardup.features.shingles.token_hashes`) and the line, sentence and paragraph it belongs to:

- **lines**: the lines of the extracted text that hold at least one token (resiliparse puts every
  block element on a line of its own; plain text keeps its line breaks); ``lines:n`` groups n
  consecutive such lines, without overlap;
- **sentences**: a sentence ends at ``.``, ``!``, ``?`` or ``…`` followed by white space (NFKC's
  spaces included), the end, or (``.!?``, which NFKC makes of the fullwidth U+FF0E, U+FF01,
  U+FF1F) a Han or Kana character (``…`` as ``...``, its NFKC form); at the ideographic full
  stop U+3002, and at every line break (in extracted HTML a line is a block, and a sentence
  never spans blocks; for hard-wrapped plain text prefer paragraphs);
- **paragraphs**: runs of lines separated by a line without tokens (a blank line, or a rule such as
  ``-----``);
- **words**: ``words:n`` groups n consecutive tokens, without overlap;
- **document**: the whole document, one chunk;
- **shingle-paragraphs**: Pereira's shingle paragraphs (:func:`shingle_paragraphs`), each a chunk.

Chunks without tokens do not exist. The last group of ``lines:n`` or ``words:n`` may be shorter.

**Shingle paragraphs** (Pereira, Baeza-Yates & Ziviani, Definition 1): consecutive groups of three
sentences (:func:`neardup.text.segment.pereira_sentences`), without overlap: six sentences give
two shingle paragraphs. The paper leaves the tail open; here a last group of one or two sentences
is a shingle paragraph too (shorter), so no text is left out of the comparison. The paper keeps
only documents longer than 450 characters "to guarantee that at least one complete shingle
paragraph would represent the document".
"""

from __future__ import annotations

import numpy as np

from neardup._types import BOOL, I64, U8, U64
from neardup.config.overlap import ChunkConfig
from neardup.features.shingles import _FNV_OFFSET, _FNV_PRIME, _SEED_BASE, fmix64
from neardup.text.canonical import SEPARATOR, STANDALONE, WORD, _class_at, _code_point_classes
from neardup.text.compiled import njit
from neardup.text.nfkc import nfkc_casefold
from neardup.text.segment import pereira_sentences

__all__ = ["TokenChunks", "chunk_hashes", "chunk_tokens", "scan_tokens", "shingle_paragraphs"]

TokenChunks = tuple[U64, I64]
"""(token hashes in document order, chunk id of each token: non-decreasing, dense from 0)."""
_NEWLINE = 10


@njit(cache=True, inline="always")
def _is_space(byte: int) -> bool:
    return byte == 32 or 9 <= byte <= 13


@njit(cache=True)
def _space_at(buf: U8, j: int) -> bool:  # pragma: no cover - compiled
    """White space at ``buf[j]`` (or the end): ASCII, or one of the spaces NFKC maps to an ASCII
    space (U+00A0, U+2000..U+200A, U+202F, U+205F, U+3000), so that a sentence end does not
    depend on whether the text was normalised."""
    if j >= buf.size:
        return True
    lead = buf[j]
    if lead < 0x80:
        return _is_space(lead)
    if lead == 0xC2:
        return bool(j + 1 < buf.size and buf[j + 1] == 0xA0)
    if j + 2 >= buf.size:
        return False
    if lead == 0xE2 and buf[j + 1] == 0x80:
        return bool(0x80 <= buf[j + 2] <= 0x8A or buf[j + 2] == 0xAF)
    if lead == 0xE2 and buf[j + 1] == 0x81:
        return bool(buf[j + 2] == 0x9F)
    return bool(lead == 0xE3 and buf[j + 1] == 0x80 and buf[j + 2] == 0x80)


@njit(cache=True)
def _ends_sentence(buf: U8, i: int, length: int,
                   classes: U8) -> bool:  # pragma: no cover - compiled
    lead = buf[i]
    if length == 1:
        if lead == 46 or lead == 33 or lead == 63:  # . ! ? (and NFKC's U+FF0E, U+FF01, U+FF1F)
            return _space_at(buf, i + 1) or _class_at(buf, i + 1, classes)[0] == STANDALONE
        return False
    if length == 3 and lead == 0xE2 and buf[i + 1] == 0x80 and buf[i + 2] == 0xA6:  # U+2026 …
        return _space_at(buf, i + 3) or _class_at(buf, i + 3, classes)[0] == STANDALONE
    if length == 3 and lead == 0xE3:  # U+3002 ideographic full stop
        return bool(buf[i + 1] == 0x80 and buf[i + 2] == 0x82)
    if length == 3 and lead == 0xEF and buf[i + 1] == 0xBC:  # U+FF01, U+FF1F fullwidth ! ?
        return bool(buf[i + 2] == 0x81 or buf[i + 2] == 0x9F)
    return False


@njit(cache=True, inline="always")
def _boundary(buf: U8, i: int, length: int, ids: I64, used: BOOL,
              classes: U8) -> bool:  # pragma: no cover - compiled
    """At a separator: a line break ends the line and the sentence, a full stop the sentence
    (ids move on only past a unit that holds tokens). True at the end of a line without tokens."""
    empty_line = False
    if buf[i] == _NEWLINE:
        empty_line = not used[0]
        ids[0] += used[0]
        ids[1] += used[1]
        used[0] = False
        used[1] = False
    elif used[1] and _ends_sentence(buf, i, length, classes):
        ids[1] += 1
        used[1] = False
    return empty_line


@njit(cache=True)
def _scan(buf: U8, classes: U8) -> tuple[U64, I64, I64, I64]:  # pragma: no cover - compiled
    hashes = np.empty(buf.size + 1, dtype=np.uint64)
    where = np.empty((3, buf.size + 1), dtype=np.int64)  # line, sentence, paragraph of each token
    ids = np.zeros(3, dtype=np.int64)
    used = np.zeros(3, dtype=np.bool_)
    count, blank, i, h, in_token = 0, False, 0, _FNV_OFFSET, False
    while i < buf.size:
        cls, length = _class_at(buf, i, classes)
        if in_token and cls != WORD:  # the token ends
            hashes[count] = fmix64(h)
            count += 1
            in_token = False
        if cls == SEPARATOR:
            if _boundary(buf, i, length, ids, used, classes):
                blank = True
        else:
            if not in_token:  # a token starts
                if blank and used[2]:
                    ids[2] += 1
                blank, h, in_token = False, _FNV_OFFSET, True
                where[0, count], where[1, count], where[2, count] = ids[0], ids[1], ids[2]
                used[0], used[1], used[2] = True, True, True
            for j in range(length):
                h = (h ^ np.uint64(buf[i + j])) * _FNV_PRIME
            if cls == STANDALONE:  # a character that is a token of its own
                hashes[count] = fmix64(h)
                count += 1
                in_token = False
        i += length
    if in_token:
        hashes[count] = fmix64(h)
        count += 1
    return hashes[:count], where[0, :count].copy(), where[1, :count].copy(), where[2, :count].copy()


@njit(cache=True)
def _chunk_hashes(tokens: U64, ids: I64, seed: np.uint64) -> U64:  # pragma: no cover - compiled
    if tokens.size == 0:
        return np.empty(0, dtype=np.uint64)
    out = np.empty(ids[-1] + 1, dtype=np.uint64)
    start = fmix64(seed ^ _SEED_BASE)
    h, current = start, ids[0]
    for k in range(tokens.size):
        if ids[k] != current:
            out[current] = h
            current = ids[k]
            h = start
        h = fmix64(h ^ tokens[k])
    out[current] = h
    return out


def scan_tokens(text: str) -> tuple[U64, I64, I64, I64]:
    """Token hashes of ``text`` and, per token, its line, sentence and paragraph (dense ids)."""
    raw = nfkc_casefold(text)
    return _scan(np.frombuffer(raw, dtype=np.uint8), _code_point_classes())


def shingle_paragraphs(text: str, sentences: int = 3, cut: int = 150) -> list[str]:
    """Pereira's shingle paragraphs: groups of ``sentences`` sentences without overlap, each the
    sentences joined by one space; a last, shorter group is kept (see the module docstring)."""
    found = pereira_sentences(text, cut)
    return [" ".join(found[i:i + sentences]) for i in range(0, len(found), sentences)]


def chunk_tokens(text: str, chunk: ChunkConfig) -> TokenChunks:
    """The tokens of ``text`` and the chunk each belongs to, for the chunking ``chunk``."""
    if chunk.kind == "shingle-paragraphs":
        text = "\n".join(shingle_paragraphs(text))
    tokens, line, sentence, paragraph = scan_tokens(text)
    if chunk.kind == "lines":
        ids = line // chunk.size
    elif chunk.kind == "shingle-paragraphs":
        ids = line
    elif chunk.kind == "sentences":
        ids = sentence
    elif chunk.kind == "paragraphs":
        ids = paragraph
    elif chunk.kind == "words":
        ids = np.arange(tokens.size, dtype=np.int64) // chunk.size
    else:
        ids = np.zeros(tokens.size, dtype=np.int64)
    return tokens, ids


def chunk_hashes(text: str, chunk: ChunkConfig) -> U64:
    """A 64-bit hash per chunk, in document order: the hash of the shingle made of the chunk's
    tokens (:func:`neardup.features.shingles.shingle_hashes` with the chunk's length as width)."""
    tokens, ids = chunk_tokens(text, chunk)
    return _chunk_hashes(tokens, ids, np.uint64(chunk.seed))
