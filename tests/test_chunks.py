"""Chunkers (S&GM98 and Pereira's shingle paragraphs) and 32-bit chunk fingerprints."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config.overlap import ChunkConfig, paper_min_shared
from neardup.errors import ConfigError
from neardup.features.chunks import chunk_hashes, chunk_tokens, scan_tokens, shingle_paragraphs
from neardup.features.shingles import shingle_hashes, token_hashes
from neardup.fingerprints.chunkprint import chunk_fingerprints, fold32
from neardup.text.canonical import canonical_bytes
from neardup.text.segment import pereira_sentences

TEXT = ("The first line of text.\nA second line here!\n\nThird paragraph, one line.\n"
        "Fourth line?")


def ids(text: str, spec: str) -> list[int]:
    return chunk_tokens(text, ChunkConfig.parse(spec))[1].tolist()


def test_chunk_specs_parse_and_refuse() -> None:
    assert ChunkConfig.parse("lines:4") == ChunkConfig("lines", 4)
    assert ChunkConfig.parse("words:8").spec == "words:8"
    assert ChunkConfig.parse("shingle-paragraphs").size == 1
    assert ChunkConfig.parse("lines:2").tag == "chunk:lines:2:s0"
    for bad in ("lines", "lines:x", "sentences:3", "pages", "words:0"):
        with pytest.raises(ConfigError, match="chunk"):
            ChunkConfig.parse(bad)
    assert [paper_min_shared(ChunkConfig.parse(s)) for s in ("lines:4", "lines:2", "document")] \
        == [15, 25, 1]


def test_each_chunking_on_a_hand_made_text() -> None:
    # Tokens: the first line of text | a second line here | third paragraph one line | fourth line
    assert ids(TEXT, "lines:2") == [0] * 9 + [1] * 6
    assert ids(TEXT, "lines:1") == [0] * 5 + [1] * 4 + [2] * 4 + [3] * 2
    assert ids(TEXT, "sentences") == [0] * 5 + [1] * 4 + [2] * 4 + [3] * 2
    assert ids(TEXT, "paragraphs") == [0] * 9 + [1] * 6
    assert ids(TEXT, "words:4") == [0] * 4 + [1] * 4 + [2] * 4 + [3] * 3
    assert ids(TEXT, "document") == [0] * 15


def test_sentences_end_at_terminal_punctuation_and_line_breaks() -> None:
    text = "Pi is 3.14 today. Really? Yes! no end\nnext line e.g.x 日本。語"
    # pi is 3 14 today | really | yes | no end | next line e g x 日 本 | 語
    assert ids(text, "sentences") == [0] * 5 + [1] + [2] + [3] * 2 + [4] * 7 + [5]


def test_paragraphs_break_at_lines_without_tokens() -> None:
    assert ids("a b\nc\n-----\nd\n\n\n\ne", "paragraphs") == [0, 0, 0, 1, 2]
    assert ids("a\n\n", "paragraphs") == [0]


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=200))
@settings(max_examples=200, deadline=None)
def test_scanned_tokens_are_the_canonical_tokens(text: str) -> None:
    tokens, line, sentence, paragraph = scan_tokens(text)
    assert tokens.tolist() == token_hashes(canonical_bytes(text)).tolist()
    for column in (line, sentence, paragraph):  # dense, non-decreasing ids from 0
        assert column.size == 0 or (column[0] == 0 and set(np.diff(column).tolist()) <= {0, 1})


def test_a_chunk_hashes_like_the_shingle_of_its_tokens() -> None:
    lines = chunk_hashes("a b\nc d\ne", ChunkConfig("lines", 2))
    assert lines[0] == shingle_hashes(b"a b c d", 4)[0]
    assert lines[1] == shingle_hashes(b"e", 1)[0]
    whole = chunk_hashes("One, TWO three!", ChunkConfig("document", 1))
    assert whole.tolist() == shingle_hashes(b"one two three", 3).tolist()


def test_chunk_fingerprints_are_pinned() -> None:
    assert [hex(f) for f in chunk_fingerprints(TEXT, ChunkConfig("lines", 2)).tolist()] == \
        ["0xbc5154b1", "0xbfa30f9c"]
    assert [hex(f) for f in chunk_fingerprints(TEXT, ChunkConfig("document", 1)).tolist()] == \
        ["0x359eb66f"]
    prints = chunk_fingerprints("x\ny\nx\ny", ChunkConfig("lines", 1))
    assert prints.dtype == np.uint32 and prints.size == 2  # distinct, sorted
    assert fold32(np.array([0xABCD0123_45678901], dtype=np.uint64)).tolist() == [0xABCD0123]


def test_layout_and_case_do_not_change_fingerprints_but_words_do() -> None:
    chunk = ChunkConfig("lines", 2)
    base = chunk_fingerprints("one two\nthree four\nfive", chunk)
    assert chunk_fingerprints("ONE,  two\n\n three -- four \n\nfive!", chunk).tolist() == \
        base.tolist()
    assert chunk_fingerprints("one two\nthree fours\nfive", chunk).tolist() != base.tolist()


def test_pereira_sentences_end_at_a_period() -> None:
    text = "First sentence. Second   one.\nThird, over\ntwo lines. Tail"
    assert pereira_sentences(text) == ["First sentence.", "Second one.",
                                       "Third, over two lines.", "Tail"]
    assert pereira_sentences("Wow! Really? Yes.") == ["Wow! Really? Yes."]  # only periods
    assert pereira_sentences("Pi is 3.14") == ["Pi is 3.", "14"]
    assert pereira_sentences("   ") == []


def test_pereira_sentences_are_cut_at_150_characters() -> None:
    long = "".join(chr(ord("a") + i % 26) for i in range(400))
    assert [len(s) for s in pereira_sentences(long)] == [150, 150, 100]
    assert pereira_sentences(long)[1][0] == long[150]  # the next starts at character 151
    period_at_150 = "x" * 149 + ". next."
    assert pereira_sentences(period_at_150) == ["x" * 149 + ".", "next."]
    period_at_151 = "x" * 150 + ". next."
    assert pereira_sentences(period_at_151) == ["x" * 150, ".", "next."]


def test_six_sentences_make_two_shingle_paragraphs() -> None:
    six = "s1. s2. s3. s4. s5. s6."
    assert shingle_paragraphs(six) == ["s1. s2. s3.", "s4. s5. s6."]
    assert shingle_paragraphs(six + " s7.") == ["s1. s2. s3.", "s4. s5. s6.", "s7."]
    assert shingle_paragraphs("") == []


def test_shingle_paragraphs_as_s_and_gm98_chunks() -> None:
    six = "s1 a. s2 b. s3 c. s4 d. s5 e. s6 f."
    hashes = chunk_hashes(six, ChunkConfig("shingle-paragraphs", 1))
    assert hashes.tolist() == [chunk_hashes("s1 a s2 b s3 c", ChunkConfig("document", 1))[0],
                               chunk_hashes("s4 d s5 e s6 f", ChunkConfig("document", 1))[0]]
