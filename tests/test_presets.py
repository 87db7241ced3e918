"""Each paper's preset, run by name: the parameters it sets, and the paper's own examples."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from corpora import write_pages
from neardup.cli.main import cli
from neardup.config import ChunkMethod, ParagraphConfig, ShingleConfig, SimHashConfig, SimHashMethod
from neardup.errors import ConfigError
from neardup.features.chunks import chunk_hashes
from neardup.features.shingles import shingle_hashes, shingle_set
from neardup.fingerprints.chunkprint import chunk_fingerprints
from neardup.fingerprints.simhash import SimHash, simhash_from_hashes
from neardup.index.planner import plan
from neardup.presets import PRESETS, preset
from neardup.text.segment import pereira_sentences


def dedup(name: str, tmp_path: Path, *extra: str) -> tuple[dict[str, Any], set[tuple[int, int]]]:
    pages = tmp_path / "pages"
    if not pages.exists():
        write_pages(pages)
    out = tmp_path / f"out-{name}"
    result = CliRunner().invoke(cli, ["dedup", str(pages), "--out", str(out), "--preset", name,
                                      "--quiet", "--workers", "1", *extra])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    documents = pq.read_table(out / "documents.parquet").to_pylist()
    names = {row["doc"]: Path(row["source"]).name for row in documents}
    pairs = {tuple(sorted((names[p["a"]], names[p["b"]])))
             for p in pq.read_table(out / "pairs.parquet").to_pylist()}
    assert summary["preset"]["name"] == name
    assert summary["preset"]["parameters"] == preset(name).parameters()
    return summary, pairs  # type: ignore[return-value]


PLANTED = ("page0.html", "page6.html")


def test_broder1997_parameters_and_the_4_shingling_of_a_rose(tmp_path: Path) -> None:
    summary, pairs = dedup("broder1997", tmp_path)
    named = summary["preset"]["parameters"]
    assert named["shingle width (words)"] == 10
    assert named["shingle fingerprint bits"] == 40
    assert (named["sampling"], named["sampling modulus m (1 in m shingles)"]) == ("mod", 25)
    assert named["resemblance threshold"] == 0.5
    assert named["ignore shingles shared by more documents than"] == 1000
    assert summary["config"]["sketch"] == "sketch:mod25:b40:seed1:w10s0"
    assert pairs == {PLANTED}
    # the paper's example: the 4-shingling of (a,rose,is,a,rose,is,a,rose) has 3 shingles
    text = "a rose is a rose is a rose"
    hashes = shingle_hashes(text, 4)
    assert hashes.size == 5 and shingle_set(text, 4).size == 3
    assert hashes[0] == hashes[3] and hashes[1] == hashes[4]  # (a,rose,is,a), (rose,is,a,rose)
    assert len({hashes[0], hashes[1], hashes[2]}) == 3
    assert set(hashes.tolist()) == set(shingle_set(text, 4).tolist())


def test_manku2007_parameters_0xadcf_and_example_3_1(tmp_path: Path) -> None:
    summary, pairs = dedup("manku2007", tmp_path)
    named = summary["preset"]["parameters"]
    assert (named["fingerprint bits f"], named["k (Hamming distance)"]) == (64, 3)
    assert named["stop-word removal"] == named["stemming"] == "english"
    assert summary["config"]["simhash"] == "simhash:f64:w1s0:tf:stop-english:stem-english"
    assert pairs == {PLANTED}
    assert simhash_from_hashes([0xABCD, 0xBCDE, 0xCDEF]) == 0xADCF
    config = preset("manku2007").dedup
    # Example 3.1: f = 64, k = 3, 2^34 fingerprints; the design per table budget
    example = {20: {31: 4, 32: 12, 33: 4}, 16: {28: 16}, 10: {25: 4, 26: 6}, 4: {16: 4}}
    for tables, prefixes in example.items():
        method = config.of(SimHashMethod)
        design = plan(method.simhash.bits, method.max_hamming, 2**34, tables=tables)
        assert len(design.tables) == tables
        assert Counter(design.prefix_bits) == prefixes


def test_manku_features_drop_stop_words_and_stem() -> None:
    manku = SimHash(preset("manku2007").dedup.of(SimHashMethod).simhash)
    plain = SimHash(SimHashConfig(ShingleConfig(width=1), "tf"))
    assert manku.of_canonical(b"the cats were running to the gardens") == \
        manku.of_canonical(b"cat run garden")
    assert plain.of_canonical(b"the cats were running to the gardens") != \
        plain.of_canonical(b"cat run garden")
    # off by default: today's fingerprints stay the same
    assert SimHashConfig().tag == "simhash:f64:w1s0:binary"
    assert SimHash().of_canonical(b"the cats") == simhash_from_hashes(
        np.unique(shingle_hashes(b"the cats", 1)))


def test_stop_words_and_stemmers_of_other_languages() -> None:
    french = SimHash(SimHashConfig(stop_words="french", stemming="french"))
    assert french.of_canonical(b"les chats mangeaient") == \
        french.of_canonical(b"chat mang")
    with pytest.raises(ConfigError, match="stemming='klingon'"):
        SimHash(SimHashConfig(stemming="klingon"))
    with pytest.raises(ConfigError, match="stop_words='klingon'"):
        SimHash(SimHashConfig(stop_words="klingon"))
    with pytest.raises(ConfigError, match="stop_words='English'"):
        SimHashConfig(stop_words="English")


def test_sgm1998_parameters(tmp_path: Path) -> None:
    summary, pairs = dedup("sgm1998", tmp_path)
    named = summary["preset"]["parameters"]
    assert named["chunking"] == "lines:4"
    assert named["T (shared chunks)"] == 15
    assert named["all-pairs algorithm"] == "coarse"
    assert named["chunk fingerprint bits"] == 32
    assert summary["config"]["chunks"] == "overlap:T15:all:chunk:lines:4:s0"
    assert pairs == {PLANTED}
    chunk = preset("sgm1998").dedup.of(ChunkMethod).chunks
    text = "\n".join(f"line {i}" for i in range(12))
    assert chunk_hashes(text, chunk).size == 3  # 12 lines, non-overlapping groups of 4
    assert chunk_fingerprints(text, chunk).dtype == np.uint32


def test_smfa_parameters(tmp_path: Path) -> None:
    summary, pairs = dedup("smfa", tmp_path)
    named = summary["preset"]["parameters"]
    assert named["longest segments n"] == 3 and named["stop-word removal"] is True
    assert summary["config"]["smfa"] == "smfa:n3:stop-en:md5"
    assert pairs == {PLANTED}
    assert preset("smfa").evaluate == ("smfa", "keyword", "chunks")


def test_pereira_parameters_and_the_150_character_cut(tmp_path: Path) -> None:
    summary, _ = dedup("pereira", tmp_path)
    named = summary["preset"]["parameters"]
    assert named["sentences per shingle paragraph"] == 3
    assert named["sentence cut (characters)"] == 150
    assert named["only documents longer than (characters)"] == 450
    assert named["sub-collections m"] == 15
    assert summary["config"]["paragraphs"] == "paragraphs:s3:c150:min450:level100"
    assert len(summary["near"]["growth"]) == 15
    # no period within 150 characters: the sentence ends there, the next starts at the 151st
    text = "x" * 200 + ". Short one."
    sentences = pereira_sentences(text, preset("pereira").dedup.of(ParagraphConfig).cut)
    assert sentences == ["x" * 150, "x" * 50 + ".", "Short one."]


def test_explicit_method_options_are_refused_with_a_preset(tmp_path: Path) -> None:
    write_pages(tmp_path / "pages")
    result = CliRunner().invoke(cli, ["dedup", str(tmp_path / "pages"), "--out",
                                      str(tmp_path / "o"), "--preset", "broder1997",
                                      "--sketch-width", "5", "--k", "2"])
    assert result.exit_code == 2
    assert "--preset broder1997 fixes --k, --sketch-width" in result.output
    free = CliRunner().invoke(cli, ["dedup", str(tmp_path / "pages"), "--out",
                                    str(tmp_path / "o"), "--preset", "broder1997", "--quiet",
                                    "--keep", "longest", "--workers", "1"])
    assert free.exit_code == 0, free.output


def test_index_preset_creates_the_papers_store(tmp_path: Path) -> None:
    write_pages(tmp_path / "pages")
    store = tmp_path / "store"
    result = CliRunner().invoke(cli, ["index", str(tmp_path / "pages"), "--store", str(store),
                                      "--preset", "manku2007", "--json", "--workers", "1"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["preset"]["parameters"]["store: compressed tables"] is True
    stored = json.loads((store / "manifest.json").read_text())["config"]
    assert stored["simhash"]["stop_words"] == stored["simhash"]["stemming"] == "english"
    assert stored["compress"] is True and stored["max_k"] == 3
    again = CliRunner().invoke(cli, ["query", "--store", str(store), "--text", "cat run"])
    assert again.exit_code == 0, again.output
    refused = CliRunner().invoke(cli, ["index", str(tmp_path / "pages"), "--store",
                                       str(tmp_path / "s2"), "--preset", "sgm1998"])
    assert refused.exit_code == 2 and "index with broder1997, manku2007" in refused.output


def test_evaluate_preset_runs_the_papers_methods() -> None:
    result = CliRunner().invoke(cli, ["evaluate", "--synthetic", "30", "--preset", "broder1997",
                                      "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["preset"]["name"] == "broder1997"
    assert list(report["methods"]) == list(preset("broder1997").evaluate)


def test_every_preset_names_resolvable_parameters() -> None:
    assert set(PRESETS) == {"broder1997", "sgm1998", "manku2007", "smfa", "pereira"}
    for chosen in PRESETS.values():
        assert chosen.parameters() and chosen.dedup.method
    with pytest.raises(ConfigError, match="preset='nope'"):
        preset("nope")
