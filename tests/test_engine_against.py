"""``--against`` reuses the earlier run's candidate keys: the new run emits and sorts the keys of
its new documents only, joins them with the kept buckets (read, never written), and its result
equals a one-shot run over old + new restricted to what touches the new documents; its outputs
hold only that. The merge join of new keys against kept ones equals brute force."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from corpora import planted_texts, prose, vocabulary, write_corpus, write_jsonl
from neardup.config import DedupConfig, SimHashMethod, TemplateConfig
from neardup.engine import EngineOptions, run_engine
from neardup.engine.candidates import BAND_ROW, CANDIDATE, SIMHASH_ROW
from neardup.engine.keystore import (
    KEYS,
    band_matches,
    hamming_matches,
    read_keys,
    sort_by_band,
    sort_by_table,
)
from neardup.errors import ConfigError
from neardup.index.bitperm import plan_arrays, prefix_masks
from neardup.index.hamming import brute_force_pairs, design_for, table_pairs
from runs import output_tables

METHODS = ["simhash", "minhash"]


def _snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_mtime_ns, p.stat().st_size) for p in folder.rglob("*")
            if p.is_file()}


def _key_rows(folder: Path, method: str) -> np.ndarray:
    dtype = SIMHASH_ROW if method == "simhash" else BAND_ROW
    files = sorted(folder.glob("table*/*.bin") if method == "simhash"
                   else folder.glob("bands/*.bin"))
    return np.concatenate([np.empty(0, dtype)] + [np.fromfile(f, dtype=dtype) for f in files])


def _assert_restricted(mine: dict[str, list[dict[str, Any]]],
                       everything: dict[str, list[dict[str, Any]]], old: int, end: int) -> None:
    assert mine["pairs"] == [p for p in everything["pairs"] if old <= max(p["a"], p["b"]) < end]
    assert mine["clusters"] == [c for c in everything["clusters"] if old <= c["doc"] < end]
    assert mine["documents"] == [d for d in everything["documents"] if old <= d["doc"] < end]


def _hosted_corpus(folder: Path, documents: int, files: int, seed: int) -> list[str]:
    """JSONL pages of a few hosts, each host's pages framed by the same navigation text (a
    site template), with near copies across files."""
    words = vocabulary(500)
    frames = [prose(seed * 3 + host + 1, 40, words) for host in range(3)]
    texts = planted_texts(documents, seed, vocabulary=words, lengths=(80, 160), near=0.3)
    rows = [{"id": f"p{index}", "url": f"http://site{index % 3}.example/{index}",
             "text": f"{frames[index % 3]} {text} {frames[index % 3]}"}
            for index, text in enumerate(texts)]
    return write_jsonl(folder, rows, files)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("templates", [True, False])
def test_against_reads_but_never_writes_the_old_keys(tmp_path: Path, method: str,
                                                     templates: bool) -> None:
    paths = write_corpus(tmp_path / "corpus", 240, 3, seed=23)
    config = DedupConfig(method=method,  # type: ignore[arg-type]
                         templates=TemplateConfig(enabled=templates))
    old_work = tmp_path / "old-work"
    run_engine(paths[:2], tmp_path / "old", config,
               EngineOptions(work=old_work, chunk_docs=31, bucket_bytes=1024))
    before = _snapshot(old_work)
    summary = run_engine(paths[2:], tmp_path / "new", config, EngineOptions(
        work=tmp_path / "new-work", chunk_docs=31, bucket_bytes=4096, workers=2),
        against=old_work)
    assert _snapshot(old_work) == before  # nothing of the earlier run is written
    old = summary["against"]["old_documents"]
    assert summary["near"]["old_key_folders"] == 1
    kept = _key_rows(tmp_path / "new-work" / "near" / "candidates", method)
    assert kept.size and (kept["doc"] >= old).all()  # only the new documents were keyed
    record = read_keys(tmp_path / "new-work" / "near" / "candidates")
    assert record is not None
    assert record.folders[0] == old_work / "near" / "candidates"
    assert record.buckets == read_keys(old_work / "near" / "candidates").buckets  # type: ignore[union-attr]
    candidates = np.fromfile(tmp_path / "new-work" / "near" / "candidates" / "pairs.bin",
                             dtype=CANDIDATE)
    assert (candidates["b"] >= old).all() and (candidates["a"] < old).any()  # old keys read
    run_engine(paths, tmp_path / "all", config, EngineOptions(work=tmp_path / "all-work"))
    _assert_restricted(output_tables(tmp_path / "new"), output_tables(tmp_path / "all"), old,
                       summary["documents"])


@pytest.mark.parametrize("method", METHODS)
def test_kept_buckets_are_sorted(tmp_path: Path, method: str) -> None:
    paths = write_corpus(tmp_path / "corpus", 120, 1, seed=3)
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    run_engine(paths, tmp_path / "out", config,
               EngineOptions(work=tmp_path / "work", bucket_bytes=512))
    folder = tmp_path / "work" / "near" / "candidates"
    record = read_keys(folder)
    assert record is not None and record.folders == (folder,) and record.buckets > 1
    if method == "minhash":
        for path in sorted(folder.glob("bands/*.bin")):
            rows = np.fromfile(path, dtype=BAND_ROW)
            assert np.array_equal(rows, sort_by_band(rows))
        return
    plans = design_for(config.of(SimHashMethod).max_hamming, 120).plans()
    for table, plan in enumerate(plans):
        for path in sorted(folder.glob(f"table{table}/*.bin")):
            rows = np.fromfile(path, dtype=SIMHASH_ROW)
            assert np.array_equal(rows, sort_by_table(rows, plan))


@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_a_chain_of_three_runs_joins_every_earlier_key_folder(tmp_path: Path,
                                                               method: str) -> None:
    paths = write_corpus(tmp_path / "corpus", 300, 3, seed=17)
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    works = [tmp_path / f"work{index}" for index in range(3)]
    summaries = []
    for index, path in enumerate(paths):
        summaries.append(run_engine([path], tmp_path / f"out{index}", config, EngineOptions(
            work=works[index], chunk_docs=30, bucket_bytes=512 << index),
            against=works[index - 1] if index else None))
    record = read_keys(works[2] / "near" / "candidates")
    assert record is not None
    assert record.folders == tuple(work / "near" / "candidates" for work in works)
    assert summaries[2]["near"]["old_key_folders"] == 2
    for index in (1, 2):  # each equals a one-shot run over its files and the earlier ones
        one_shot = tmp_path / f"all{index}"
        run_engine(paths[:index + 1], one_shot, config, EngineOptions(work=tmp_path / f"w{index}"))
        _assert_restricted(output_tables(tmp_path / f"out{index}"), output_tables(one_shot),
                           summaries[index]["against"]["old_documents"],
                           summaries[index]["documents"])


@pytest.mark.parametrize("method", METHODS)
def test_templates_removed_emit_every_key_again(tmp_path: Path, method: str) -> None:
    """A run that prunes site templates verifies its old pairs again: it keys every document
    (and a min-hash run keeps no keys for reuse); the result is still the one-shot run's."""
    paths = _hosted_corpus(tmp_path / "corpus", 150, 3, seed=8)
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    first = run_engine(paths[:2], tmp_path / "old", config,
                       EngineOptions(work=tmp_path / "old-work", chunk_docs=40))
    assert first["templates"]["hosts_with_templates"] > 0
    summary = run_engine(paths[2:], tmp_path / "new", config, EngineOptions(
        work=tmp_path / "new-work", chunk_docs=40), against=tmp_path / "old-work")
    assert "old_key_folders" not in summary["near"]
    kept = read_keys(tmp_path / "new-work" / "near" / "candidates")
    assert kept is None if method == "minhash" else kept is not None and len(kept.folders) == 1
    run_engine(paths, tmp_path / "all", config, EngineOptions(work=tmp_path / "all-work"))
    _assert_restricted(output_tables(tmp_path / "new"), output_tables(tmp_path / "all"),
                       summary["against"]["old_documents"], summary["documents"])


def test_lost_old_keys_are_emitted_again(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", 160, 2, seed=5)
    config = DedupConfig(method="minhash")
    run_engine(paths[:1], tmp_path / "old", config, EngineOptions(work=tmp_path / "old-work"))
    shutil.rmtree(tmp_path / "old-work" / "near" / "candidates" / "bands")
    summary = run_engine(paths[1:], tmp_path / "new", config, EngineOptions(
        work=tmp_path / "new-work"), against=tmp_path / "old-work")
    assert "old_key_folders" not in summary["near"]
    run_engine(paths, tmp_path / "all", config, EngineOptions(work=tmp_path / "all-work"))
    _assert_restricted(output_tables(tmp_path / "new"), output_tables(tmp_path / "all"),
                       summary["against"]["old_documents"], summary["documents"])


def test_an_old_run_of_another_threshold_is_refused_naming_it(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", 40, 2, seed=2)
    run_engine(paths[:1], tmp_path / "old", DedupConfig(method="minhash"),
               EngineOptions(work=tmp_path / "old-work"))
    with pytest.raises(ConfigError, match=r"another configuration \(threshold: 0\.8 -> 0\.7\)"):
        run_engine(paths[1:], tmp_path / "new", DedupConfig(method="minhash", threshold=0.7),
                   EngineOptions(work=tmp_path / "new-work"), against=tmp_path / "old-work")
    assert not (tmp_path / "new" / "against.parquet").exists()
    assert (tmp_path / "old-work" / "near" / "candidates" / KEYS).exists()


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), old=st.integers(0, 60), new=st.integers(1, 40),
       k=st.integers(1, 4))
def test_hamming_join_of_new_against_old_equals_brute_force(seed: int, old: int, new: int,
                                                            k: int) -> None:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 2**63, size=8, dtype=np.uint64)
    flips = np.uint64(1) << rng.integers(0, 64, size=(old + new, 3)).astype(np.uint64)
    values = base[rng.integers(0, 8, size=old + new)] ^ np.bitwise_xor.reduce(
        flips * rng.integers(0, 2, size=(old + new, 3)).astype(np.uint64), axis=1)
    rows = np.empty(old + new, dtype=SIMHASH_ROW)
    rows["value"], rows["doc"] = values, np.arange(old + new)
    plans = design_for(k, 10**9).plans()  # a design with several tables of long prefixes
    masks = prefix_masks(plan_arrays(plans))
    found = set()
    for table, plan in enumerate(plans):
        news, olds = sort_by_table(rows[old:], plan), sort_by_table(rows[:old], plan)
        i, j = table_pairs(news["value"], k, plans, table)
        found.update(zip(np.minimum(news["doc"][i], news["doc"][j]).tolist(),
                         np.maximum(news["doc"][i], news["doc"][j]).tolist(), strict=True))
        a, b = hamming_matches(olds, news, plan, masks[:table], k)
        pairs = list(zip(a.tolist(), b.tolist(), strict=True))
        assert not found & set(pairs)  # no pair from two tables
        found.update(pairs)
    i, j = brute_force_pairs(values, k)
    assert found == {(a, b) for a, b in zip(i.tolist(), j.tolist(), strict=True) if b >= old}


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), old=st.integers(0, 80), new=st.integers(1, 40))
def test_band_join_of_new_against_old_equals_brute_force(seed: int, old: int, new: int) -> None:
    rng = np.random.default_rng(seed)
    rows = np.empty((old + new) * 3, dtype=BAND_ROW)
    rows["band"] = np.tile(np.arange(3), old + new)
    rows["doc"] = np.repeat(np.arange(old + new), 3)
    rows["key"] = rng.integers(0, 6, size=rows.size).astype(np.uint64)
    olds, news = sort_by_band(rows[rows["doc"] < old]), sort_by_band(rows[rows["doc"] >= old])
    a, b = band_matches(olds, news)
    expected = [(int(x["doc"]), int(y["doc"])) for x in olds for y in news
                if x["band"] == y["band"] and x["key"] == y["key"]]
    assert sorted(zip(a.tolist(), b.tolist(), strict=True)) == sorted(expected)


def test_jsonl_outputs_with_no_new_pair_or_no_new_document(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", 60, 1, seed=9)
    config = DedupConfig(method="minhash")
    run_engine(paths, tmp_path / "old", config, EngineOptions(work=tmp_path / "old-work"))
    lone = tmp_path / "lone.jsonl"
    lone.write_text(json.dumps({"id": "lone", "text": " ".join(f"x{i}" for i in range(90))})
                    + "\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for name, path, rows in (("one", lone, 1), ("none", empty, 0)):
        summary = run_engine([str(path)], tmp_path / name, config, EngineOptions(
            work=tmp_path / f"{name}-work"), fmt="jsonl", against=tmp_path / "old-work")
        assert summary["against"]["keep"] == rows and summary["against"]["new_documents"] == rows
        decisions = (tmp_path / name / "against.jsonl").read_text().splitlines()
        assert [json.loads(line)["reason"] for line in decisions] == ["keep"] * rows
        assert (tmp_path / name / "pairs.jsonl").read_text() == ""
