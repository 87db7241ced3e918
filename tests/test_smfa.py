"""SMFA (Wang & Chen): the longest block segments, filtered, MD5; equal fingerprints pair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.config import DedupConfig, SmfaConfig
from neardup.document import Document
from neardup.errors import ConfigError
from neardup.fingerprints.smfa import smfa_fingerprint, smfa_text
from neardup.pipeline import find_duplicates
from neardup.text.html import html_blocks

MAIN = ("<h1>The title of it</h1><p>This is the longest paragraph of the page, with the main text "
        "in it.</p><p>A shorter one, for the record.</p><div>Footer text of all pages here</div>")


def page(nav: str, main: str = MAIN) -> bytes:
    return f"<html><body><nav>{nav}</nav>{main}</body></html>".encode()


def test_the_three_longest_segments_without_stop_words_punctuation_and_spaces() -> None:
    blocks = html_blocks(page("Home | About"))
    assert blocks[0] == "Home | About" and len(blocks) == 5
    text, used = smfa_text(blocks, SmfaConfig())
    assert (text, used) == ("longestparagraphpagemaintextshorteronerecordFootertextpages", 3)
    kept_stop_words, _ = smfa_text(blocks, SmfaConfig(segments=1, stop_words=False))
    assert kept_stop_words == "Thisisthelongestparagraphofthepagewiththemaintextinit"


def test_equal_lengths_keep_document_order() -> None:
    assert smfa_text(["bb", "aa", "c"], SmfaConfig(segments=1))[0] == "bb"
    assert smfa_text(["x", "aa", "bb"], SmfaConfig(segments=2))[0] == "aabb"


def test_fingerprint_is_pinned_and_ignores_short_segments() -> None:
    print_a = smfa_fingerprint(html_blocks(page("Home | About")), SmfaConfig())
    print_b = smfa_fingerprint(html_blocks(page("Start, Contact us, Imprint")), SmfaConfig())
    assert print_a is not None and print_b is not None
    assert print_a.digest.hex() == "d4f427df697729613b0475c6146822c6"
    assert print_a == print_b  # different navigation, same three longest segments
    changed = smfa_fingerprint(html_blocks(page("Home", MAIN.replace("main", "whole"))),
                               SmfaConfig())
    assert changed is not None and changed.digest != print_a.digest


def test_pages_without_content_get_no_fingerprint() -> None:
    assert smfa_fingerprint([], SmfaConfig()) is None
    assert smfa_fingerprint(["the of and", "!!!"], SmfaConfig()) is None


def html_doc(doc_id: str, raw: bytes) -> Document:
    return Document(id=doc_id, raw=raw, kind="html", source=f"{doc_id}.html")


def test_dedup_pairs_equal_fingerprints_in_a_star() -> None:
    docs = [html_doc("a", page("Home")), html_doc("b", page("Start | Contact")),
            html_doc("c", page("Menu")), html_doc("d", page("x", "<p>Something else.</p>"))]
    result = find_duplicates(docs, DedupConfig(method="smfa"))
    assert result.cluster.tolist() == [0, 0, 0, 3]
    assert list(zip(result.pairs.a.tolist(), result.pairs.b.tolist(), strict=True)) == \
        [(0, 1), (0, 2)]
    assert result.pairs.method_names() == ["smfa", "smfa"]
    assert result.pairs.shared.tolist() == [3, 3]
    assert (result.pairs.resemblance > 0.5).all()
    near = result.stats["near"]
    assert isinstance(near, dict) and near["fingerprinted"] == 4 and near["groups"] == 1


def test_plain_text_is_refused_or_counted() -> None:
    text = [Document(id=str(i), raw=b"words " * 50 + bytes([i]), kind="text", source="c.jsonl")
            for i in range(65, 68)]
    with pytest.raises(ConfigError, match=r"smfa.*c\.jsonl.*3 plain-text documents"):
        find_duplicates(text, DedupConfig(method="smfa"))
    mixed = find_duplicates([*text, html_doc("h", page("Home"))], DedupConfig(method="smfa"))
    near = mixed.stats["near"]
    assert isinstance(near, dict)
    assert near["not_html"] == 3 and near["not_html_sources"] == ["c.jsonl"]


def test_cli_names_the_plain_text_input(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text("\n".join(json.dumps({"id": str(i), "text": f"text number {i} " * 20})
                                for i in range(3)))
    result = CliRunner().invoke(cli, ["dedup", str(corpus), "--method", "smfa", "--out",
                                      str(tmp_path / "out"), "--quiet", "--workers", "1"])
    assert result.exit_code == 1
    assert "corpus.jsonl" in result.output and "needs raw HTML" in result.output
    assert len(result.output.strip().splitlines()) == 1
