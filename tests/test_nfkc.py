"""NFKC in the canonical form: compatibility forms, combining marks, ligatures, and the fast path
that skips the normalisation agreeing with the full one."""

from __future__ import annotations

import unicodedata

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.features.chunks import _scan, scan_tokens
from neardup.text.canonical import _canonicalize, _code_point_classes, canonical_text
from neardup.text.nfkc import nfkc_casefold, nfkc_casefold_full


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
