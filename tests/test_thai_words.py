"""Thai word segmentation before the canonical form (PyThaiNLP's newmm), off by default."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.config import DedupConfig, TextConfig
from neardup.document import Document
from neardup.methods.fingerprinter import Fingerprinter
from neardup.text.canonical import canonical_tokens
from neardup.text.words import segment_thai

THAI = "ผมรักภาษาไทยมาก"  # "I love the Thai language very much"


def test_thai_runs_are_cut_into_words_and_other_text_is_left_alone() -> None:
    assert canonical_tokens(THAI) == [THAI]  # one token without segmentation
    assert segment_thai(THAI).split() == ["ผม", "รัก", "ภาษาไทย", "มาก"]
    assert segment_thai(f"Hello {THAI}, ok") == "Hello ผม รัก ภาษาไทย มาก, ok"
    assert segment_thai("no thai here") == "no thai here"


def test_fingerprints_change_only_when_asked() -> None:
    doc = Document(id="t", raw=(THAI * 3).encode(), kind="text")
    plain = Fingerprinter(DedupConfig())(doc)
    words = Fingerprinter(DedupConfig(text=TextConfig(thai_words=True)))(doc)
    assert plain.tokens == 1 and words.tokens == 12
    assert TextConfig().tag == "text:full"
    assert TextConfig(thai_words=True).tag == "text:full:thai-words"


def test_dedup_thai_words_finds_a_near_copy_thai_text_alone_cannot(tmp_path: Path) -> None:
    sentence = "วันนี้อากาศดีมากเราไปเที่ยวทะเลกันเถอะ"
    base = [sentence + str(i) for i in range(40)]
    edited = list(base)
    edited[20] = "เราไปกินข้าวที่ร้านอาหารไทย"
    source = tmp_path / "thai.jsonl"
    source.write_text("".join(json.dumps({"id": str(i), "text": " ".join(t)}) + "\n"
                              for i, t in enumerate((base, edited))))
    found = {}
    for flag in ((), ("--thai-words",)):
        out = tmp_path / ("words" if flag else "plain")
        result = CliRunner().invoke(cli, ["dedup", str(source), "--out", str(out), "--quiet",
                                          "--method", "minhash", "--workers", "1", *flag])
        assert result.exit_code == 0, result.output
        found[bool(flag)] = json.loads((out / "summary.json").read_text())["duplicates"]
    assert found == {False: 0, True: 1}
