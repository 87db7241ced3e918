"""The one-pass canonical form and token hashes equal the two-step path (canonical_bytes, then
token_hashes), compiled and interpreted, on every code point, tricky text and real pages."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.features.shingles import (
    shingle_set,
    shingle_set_of_tokens,
    shingles_of_tokens,
    token_hashes,
)
from neardup.features.tokens import _EXPANSION, _scan, canonical_tokens
from neardup.text.canonical import _code_point_classes, canonical_bytes
from neardup.text.compiled import kernel_mode
from neardup.text.html import decode_payload
from neardup.text.nfkc import fold_table

TRICKY = [*"aZ9 .,!?\n\t-'", "\u00e9", "\u00df", "\u0130", "\u03a3", "\u0301", "\u0308",
          "\u00a0", "\u2026", "\u2122", "\u00b2", "\u00bd", "\ufb01", "\uff21", "\u3000",
          "\u1100", "\u1161", "\uac00", "\u0915", "\u094d", "\u0650", "\u65e5", "\u3042",
          "\u212a", "\u1e9e", "\u0345", "\u0390", "\u0149", "\u01c5", "\U0001d401",
          "\U0001f600", "\U0002f800", "\U00020000", "\U00010400", "\ud800"]


def _same(text: str) -> bool:
    """Both paths agree on ``text``; whether the one-pass scan took it whole (no NFKC)."""
    canonical, tokens = canonical_tokens(text)
    expected = canonical_bytes(text)
    assert canonical == expected, text
    given_utf8 = canonical_tokens(text, text.encode("utf-8", "surrogatepass"))
    assert given_utf8[0] == canonical
    np.testing.assert_array_equal(given_utf8[1], tokens)
    assert tokens.dtype == np.uint64
    np.testing.assert_array_equal(tokens, token_hashes(expected))
    table = fold_table()
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    clean: bool = _scan(raw, _code_point_classes(), table.start, table.length, table.pool,
                        table.dirty, True)[2]
    return clean


def test_examples_of_each_path() -> None:
    assert canonical_tokens("")[0] == b"" and canonical_tokens("")[1].size == 0
    assert canonical_tokens("  Hello,   WORLD! ")[0] == b"hello world"
    assert canonical_tokens("Stra\u00dfe \u0130stanbul \u0149")[0] == canonical_bytes(
        "Stra\u00dfe \u0130stanbul \u0149")
    assert canonical_tokens("\u65e5\u672c\u8a9e")[0] == "\u65e5 \u672c \u8a9e".encode()
    assert _same("Stra\u00dfe, \u0414\u043e\u043c \u65e5\u672c")  # folded in the scan
    assert not _same("cafe\u0301 \uff21\uff22 x\u00b2")  # NFKC first
    assert not _same("\U0002f800 a")  # a CJK compatibility ideograph
    assert _same("\ud800 lone surrogate")


def test_every_code_point_alone_and_between_letters() -> None:
    for low in range(0, 0x30000, 0x200):
        block = "".join(chr(cp) for cp in range(low, low + 0x200) if not 0xD800 <= cp < 0xE000)
        _same(block)
        _same(" x".join(block))
        _same("A".join(block))


def test_the_buffers_bound_the_longest_expansion() -> None:
    table = fold_table()
    worst = max(int(table.length[cp]) / len(chr(cp).encode("utf-8", "surrogatepass"))
                for cp in range(0x80, 0x20000) if table.length[cp])
    assert worst * 2 <= _EXPANSION  # folded bytes, each maybe after a space
    _same("\u0390" * 50 + "\u65e5" * 50)


@settings(max_examples=400)
@given(st.text(alphabet=st.sampled_from(TRICKY), max_size=60))
def test_tricky_text(text: str) -> None:
    _same(text)


@settings(max_examples=300)
@given(st.text(max_size=80))
def test_any_text(text: str) -> None:
    _same(text)


def test_shingle_set_of_tokens_is_shingle_set() -> None:
    text = "one two three four five six seven one two three four five six"
    canonical, tokens = canonical_tokens(text)
    for width, seed in ((5, 0), (3, 2**64 - 7), (20, 1)):
        np.testing.assert_array_equal(shingle_set_of_tokens(tokens, width, seed),
                                      shingle_set(canonical, width, seed))


@settings(max_examples=200)
@given(st.lists(st.integers(0, 40), max_size=60), st.integers(1, 6))
def test_shingle_sets_are_sorted_and_distinct_in_both_modes(words: list[int], width: int) -> None:
    tokens = token_hashes(" ".join(f"w{word}" for word in words).encode())
    expected = np.unique(shingles_of_tokens(tokens, width, 3))
    for mode in ("interpret", "compile"):
        with kernel_mode(mode):  # type: ignore[arg-type]
            found = shingle_set_of_tokens(tokens, width, 3)
        np.testing.assert_array_equal(found, expected)


def test_interpreted_scan_is_the_compiled_one() -> None:
    texts = ["Stra\u00dfe \u0130stanbul \u0149 \u65e5\u672c \U0001d401 x", "cafe\u0301 ok", "a"]
    with kernel_mode("interpret"):
        interpreted = [canonical_tokens(text) for text in texts]
    with kernel_mode("compile"):
        compiled = [canonical_tokens(text) for text in texts]
    for (one, hashes), (other, expected) in zip(interpreted, compiled, strict=True):
        assert one == other
        np.testing.assert_array_equal(hashes, expected)


def test_real_pages(shared_data: Path) -> None:
    folders = [shared_data / "html" / "trafilatura-eval" / "pages",
               shared_data / "html" / "zyte-article-benchmark" / "html"]
    pages = [path for folder in folders for path in sorted(folder.glob("*.html.gz"))][::7]
    assert pages
    clean = [_same(decode_payload(gzip.decompress(path.read_bytes()))) for path in pages]
    assert any(clean) and not all(clean)  # both paths are taken
