"""NFKC in the canonical form: compatibility forms, combining marks, ligatures, and the fast path
that skips the normalisation agreeing with the full one."""

from __future__ import annotations

import gzip
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.features.chunks import _scan, scan_tokens
from neardup.text.canonical import _canonicalize, _code_point_classes, canonical_text
from neardup.text.html import decode_payload
from neardup.text.nfkc import (
    MAX_DIRTY,
    _fold,
    fold_table,
    nfkc_casefold,
    nfkc_casefold_full,
    unstable_code_points,
)


def _tokens(data: bytes) -> bytes:
    if not data:
        return b""
    return bytes(_canonicalize(np.frombuffer(data, dtype=np.uint8), _code_point_classes()))


def _agree(text: str) -> bool:
    full = nfkc_casefold_full(text).encode("utf-8", "surrogatepass")
    return _tokens(nfkc_casefold(text)) == _tokens(full)


def test_full_width_forms_read_as_ascii() -> None:
    full_width = "\uff21\uff22\uff23\uff11\uff12\uff13"  # ABC123
    assert canonical_text(full_width) == canonical_text("ABC123") == "abc123"
    hello = "".join(chr(ord(c) + 0xFEE0) for c in "hello")
    assert canonical_text(hello + "\u3000world\uff01") == "hello world"


def test_precomposed_and_decomposed_letters_are_equal() -> None:
    precomposed, decomposed = "caf\u00e9 cr\u00e8me", "cafe\u0301 cre\u0300me"
    assert precomposed != decomposed
    assert canonical_text(precomposed) == canonical_text(decomposed) == "café crème"
    assert canonical_text("\u1100\u1161") == canonical_text("\uac00")  # Hangul jamo compose


def test_ligatures_and_compatibility_characters() -> None:
    assert canonical_text("ﬁne ﬂour, eﬀort") == "fine flour effort"
    compatibility = "\u2168 \u00bd x\u00b2 \u210c"  # roman nine, one half, x squared, black H
    assert canonical_text(compatibility) == canonical_text("IX 1\u20442 x2 H") == "ix 1 2 x2 h"
    bold = "\U0001d401\U0001d428\U0001d425\U0001d41d"  # mathematical letters, beyond the BMP
    assert canonical_text(bold) == "bold"
    assert canonical_text("Straße STRASSE") == "strasse strasse"


def test_ascii_and_already_normal_text_is_unchanged() -> None:
    assert canonical_text("Hello, World!") == "hello world"
    assert canonical_text("naïve Привет 日本") == "naïve привет 日 本"
    assert canonical_text("a\u00a0b … c") == "a b c"  # no-break space, ellipsis: separators


@pytest.mark.slow
def test_fast_path_agrees_with_full_normalisation_on_every_character() -> None:
    contexts = ("{}", "a{}b", "e{}", "\u1100{}", "\uac00{}", "{}\u0301")
    for cp in [*range(0xD800), *range(0xE000, 0x30000)]:
        char = chr(cp)
        for context in contexts:
            text = context.format(char)
            if not _agree(text):
                raise AssertionError(f"U+{cp:04X} in {text!r}")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=40))
def test_fast_path_agrees_on_random_text(text: str) -> None:
    assert _agree(text)
    assert unicodedata.is_normalized("NFKC", canonical_text(text))


BOUNDARY_CHARACTERS = list("ab .!?\n\u2026\uff0e\u3002\ufb01\uff21\u00a0\u3000\u2003\u0301e"
                           "\u2024\uff01\uff1f\u65e5")


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(BOUNDARY_CHARACTERS), max_size=40))
def test_chunk_boundaries_do_not_depend_on_the_fast_path(text: str) -> None:
    full = nfkc_casefold_full(text).encode("utf-8", "surrogatepass")
    expected = _scan(np.frombuffer(full, dtype=np.uint8), _code_point_classes())
    found = scan_tokens(text)
    assert all(a.tolist() == b.tolist() for a, b in zip(found, expected, strict=True))


def _chunk_scan(data: bytes) -> list[bytes]:
    return [part.tobytes() for part in _scan(np.frombuffer(data, dtype=np.uint8),
                                             _code_point_classes())]


def _same_as_full_normalisation(text: str) -> None:
    """The canonical form and the chunk scan read the fast path as they read the full one."""
    full = nfkc_casefold_full(text).encode("utf-8", "surrogatepass")
    fast = nfkc_casefold(text)
    assert _tokens(fast) == _tokens(full), text
    assert _chunk_scan(fast) == _chunk_scan(full), text


def _fold_of(text: str) -> tuple[bytes, int]:
    table = fold_table()
    pieces = np.empty((MAX_DIRTY, 4), dtype=np.int64)
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    folded, count = _fold(raw, table.start, table.length, table.pool, table.dirty, pieces)
    return folded.tobytes(), count


def test_compiled_fold_is_str_casefold_for_every_code_point() -> None:
    unstable = unstable_code_points()
    for low in range(0, 0x110000, 0x100):
        block = "".join(map(chr, range(low, low + 0x100)))
        folded, count = _fold_of(block)
        assert folded == block.casefold().encode("utf-8", "surrogatepass"), hex(low)
        dirty = any((ord(c) < 0x20000 and unstable[ord(c)]) or 0x2F800 <= ord(c) <= 0x2FA1F
                    for c in block.casefold())
        assert (count > 0) == dirty, hex(low)


def test_dirty_pieces_are_normalised_alone_and_many_at_once() -> None:
    assert nfkc_casefold("Caf\u00e9 \u2122 ok") == "café tm ok".encode()
    assert nfkc_casefold("cafe\u0301 x\u00b2 \u00bd!") == "café x2 1\u20442!".encode()
    assert _fold_of("e\u0301 a \u00b2b")[1] == 2
    assert _fold_of("e\u0301\u00b2b")[1] == 1  # touching pieces merge
    many = "a\u0301 " * (MAX_DIRTY + 5)
    assert _fold_of(many)[1] == MAX_DIRTY + 1
    _same_as_full_normalisation(many)
    assert canonical_text(many) == " ".join(["\u00e1"] * (MAX_DIRTY + 5))


TRICKY = [*"aZ9 .,!?\n\t-'",
    "\u00e9", "\u00df", "\u0130", "\u03a3", "\u0301", "\u0308", "\u0327", "\u00a0",
    "\u2026", "\u2122", "\u00b2", "\u00bd", "\u00b4", "\u00ba", "\ufb01", "\uff21",
    "\uff01", "\uff1f", "\u3000", "\u2003", "\u1100", "\u1161", "\u11a8", "\uac00",
    "\u0915", "\u094d", "\u093c", "\u0627", "\u0650", "\u0e38", "\u65e5", "\u212a",
    "\u1e9e", "\u0345", "\u0390", "\U0001d401", "\U0001f600", "\U0002f800", "\U00020000",
    "\u2024", "\u3002", "\uff0e", "\u0384", "\u00a8", "\u2033"]


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(TRICKY), max_size=60))
def test_piecewise_normalisation_agrees_on_tricky_text(text: str) -> None:
    _same_as_full_normalisation(text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=60),
       st.text(alphabet=st.sampled_from(TRICKY), max_size=20))
def test_piecewise_normalisation_agrees_on_any_unicode(text: str, tricky: str) -> None:
    _same_as_full_normalisation(text + tricky + text)


def _real_pages(shared_data: Path, every: int) -> list[Path]:
    folders = [shared_data / "html" / "trafilatura-eval" / "pages",
               shared_data / "html" / "zyte-article-benchmark" / "html"]
    pages = [path for folder in folders for path in sorted(folder.glob("*.html.gz"))]
    assert pages
    return pages[::every]


def _agrees_on_pages(pages: list[Path]) -> None:
    """Every character of the pages, in its context: the whole decoded HTML of each page."""
    dirty = 0
    for path in pages:
        text = decode_payload(gzip.decompress(path.read_bytes()))
        dirty += _fold_of(text)[1] > 0
        _same_as_full_normalisation(text)
    assert dirty > 0  # some pages take the piecewise or the full path


def test_fast_path_agrees_with_full_normalisation_on_some_real_pages(shared_data: Path) -> None:
    _agrees_on_pages(_real_pages(shared_data, every=25))


@pytest.mark.slow
def test_fast_path_agrees_with_full_normalisation_on_every_real_page(shared_data: Path) -> None:
    _agrees_on_pages(_real_pages(shared_data, every=1))
