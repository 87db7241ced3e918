"""shingle-paragraphs and chunks with --write-relations run out of core in the engine and give
the in-memory result: pairs, clusters, the growth table and ``near`` summary (all but the
measured seconds and bytes of each iteration), the relation tables byte for byte; with tiny
buckets so that every join and table is split over many files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpora import write_articles
from neardup.cli.dedup import run_dedup
from neardup.config import ChunkConfig, ChunkMethod, DedupConfig, OverlapConfig
from neardup.config.overlap import ParagraphConfig
from neardup.engine import EngineOptions, run_engine
from neardup.engine.near import near_tables, write_near_tables
from runs import assert_same_tables, output_rows

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "warc"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data absent: {DATA}")
RELATIONS = ("fprint_docid", "url_map", "server_map")
MEASURED = ("wall_seconds", "peak_bytes")


def _unmeasured(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{key: value for key, value in row.items() if key not in MEASURED} for row in rows]


def _near(summary: dict[str, Any]) -> dict[str, Any]:
    near = {key: value for key, value in summary["near"].items() if key != "phases"}
    if "growth" in near:
        near["growth"] = _unmeasured(near["growth"])
    return near


def assert_same(inputs: list[str], config: DedupConfig, tmp: Path,
                options: EngineOptions) -> dict[str, Any]:
    _, memory = run_dedup(tuple(inputs), tmp / "memory", config, show_progress=False)
    engine = run_engine(inputs, tmp / "engine", config, options)
    assert_same_tables(tmp / "engine", tmp / "memory")
    assert _near(engine) == _near(memory)
    assert list(engine["near"]) == list(memory["near"])
    assert engine["templates"] == memory["templates"]
    if config.method == "shingle-paragraphs":
        assert _unmeasured(output_rows(tmp / "engine", "growth")) == _unmeasured(
            output_rows(tmp / "memory", "growth"))
    if isinstance(config.params, ChunkMethod) and config.params.write_relations:
        for name in RELATIONS:  # the engine streams row groups: same schema and rows
            engine_table = pq.read_table(tmp / "engine" / f"{name}.parquet")
            memory_table = pq.read_table(tmp / "memory" / f"{name}.parquet")
            assert engine_table.num_rows > 0, name
            assert engine_table.equals(memory_table, check_metadata=True), name
    return engine


PARAGRAPHS = {
    "clusters": DedupConfig(method="shingle-paragraphs"),
    "level-50": DedupConfig(method="shingle-paragraphs",
                            params=ParagraphConfig(level=50, iterations=4, seed=7)),
    "level-70-one-sentence": DedupConfig(method="shingle-paragraphs", params=ParagraphConfig(
        sentences=1, level=70, iterations=6, min_chars=200)),
}


@pytest.mark.parametrize("name", [
    pytest.param(name, marks=pytest.mark.slow) if name == "level-70-one-sentence" else name
    for name in sorted(PARAGRAPHS)])  # one sentence per paragraph: many more sets, 7 s of CPU
def test_paragraphs_equal_memory_with_tiny_buckets(name: str, tmp_path: Path) -> None:
    inputs = write_articles(tmp_path / "corpus", 150, seed=11)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=17, bucket_bytes=256)
    summary = assert_same(inputs, PARAGRAPHS[name], tmp_path, options)
    near = summary["near"]
    assert near["survivors_too_short"] > 0
    assert near["duplicates"] > 0
    assert near["verified"] > 0
    if near["level"] < 100:
        assert near["near_duplicates"] > near["duplicates"]


@pytest.mark.slow
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunk_docs=st.integers(1, 60), bucket_bytes=st.sampled_from([128, 4096, 1 << 22]),
       level=st.sampled_from([40, 60, 90, 100]), iterations=st.integers(1, 12),
       seed=st.integers(0, 1000), corpus=st.integers(0, 1000))
def test_paragraphs_equal_memory_on_generated_corpora(
        tmp_path_factory: pytest.TempPathFactory, chunk_docs: int, bucket_bytes: int, level: int,
        iterations: int, seed: int, corpus: int) -> None:
    tmp = tmp_path_factory.mktemp("articles")
    inputs = write_articles(tmp / "corpus", 80, corpus)
    config = DedupConfig(method="shingle-paragraphs", params=ParagraphConfig(
        level=level, iterations=iterations, seed=seed))
    options = EngineOptions(work=tmp / "work", chunk_docs=chunk_docs, bucket_bytes=bucket_bytes)
    assert_same(inputs, config, tmp, options)


RELATION_CONFIGS = {
    "words": DedupConfig(method="chunks", params=ChunkMethod(ChunkConfig(kind="words", size=8),
                                                             write_relations=True)),
    "drop-common": DedupConfig(method="chunks", params=ChunkMethod(
        ChunkConfig(kind="words", size=5), OverlapConfig(min_shared=2, drop_common=3),
        write_relations=True)),
}


@pytest.mark.slow
@settings(max_examples=4, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(sorted(RELATION_CONFIGS)), chunk_docs=st.integers(1, 60),
       bucket_bytes=st.sampled_from([128, 4096, 1 << 22]), corpus=st.integers(0, 1000))
def test_relations_equal_memory_on_generated_corpora(
        tmp_path_factory: pytest.TempPathFactory, name: str, chunk_docs: int, bucket_bytes: int,
        corpus: int) -> None:
    tmp = tmp_path_factory.mktemp("relations")
    inputs = write_articles(tmp / "corpus", 80, corpus)
    options = EngineOptions(work=tmp / "work", chunk_docs=chunk_docs, bucket_bytes=bucket_bytes)
    summary = assert_same(inputs, RELATION_CONFIGS[name], tmp, options)
    assert summary["near"]["fprint_docid_rows"] > 0


def test_relation_tables_stream_to_the_rows_they_hold(tmp_path: Path) -> None:
    """:func:`write_near_tables` (a row group at a time) writes the rows :func:`near_tables`
    reads, as Parquet and as JSONL."""
    inputs = write_articles(tmp_path / "corpus", 60, seed=4)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=9, bucket_bytes=128)
    run_engine(inputs, tmp_path / "engine", RELATION_CONFIGS["words"], options)
    near = tmp_path / "work" / "near"
    held = near_tables(near)
    assert sorted(held) == sorted(RELATIONS)
    assert pq.ParquetFile(near / "tables" / "fprint_docid.parquet").num_row_groups > 1
    for fmt in ("parquet", "jsonl"):
        out = tmp_path / fmt
        out.mkdir()
        write_near_tables(near, out, fmt)
        for name, rows in held.items():
            if fmt == "parquet":
                written = output_rows(out, name)
            else:
                written = [json.loads(line) for line in
                           (out / f"{name}.jsonl").read_text().splitlines()]
            assert written == rows and rows, name


@pytest.mark.parametrize("config", [PARAGRAPHS["level-50"], RELATION_CONFIGS["drop-common"]],
                         ids=["shingle-paragraphs", "chunks-relations"])
def test_no_prints_object_is_built(config: DedupConfig, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a document's prints object from a partition (what the in-memory near stage did
    for every document) fails the run; the guard itself is shown to fire."""
    import neardup.engine.partition as partition

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("a per-document prints object was built")

    inputs = write_articles(tmp_path / "corpus", 60, seed=5)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=10, bucket_bytes=1024)
    monkeypatch.setattr(partition, "DocumentPrints", refuse)
    summary = run_engine(inputs, tmp_path / "engine", config, options)
    assert summary["near"]["verified"] > 0
    some_partition = next((tmp_path / "work").glob("fingerprint/*/meta.parquet")).parent
    with pytest.raises(AssertionError, match="prints object"):
        partition.read_prints(some_partition, True)


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("config", [PARAGRAPHS["clusters"], PARAGRAPHS["level-50"],
                                    RELATION_CONFIGS["words"]],
                         ids=["paragraphs", "paragraphs-level-50", "chunks-relations"])
def test_equal_memory_on_shared_warcs(config: DedupConfig, tmp_path: Path) -> None:
    inputs = sorted(str(p) for p in DATA.glob("*.gz"))
    options = EngineOptions(work=tmp_path / "work", chunk_docs=41, bucket_bytes=1024)
    assert_same(inputs, config, tmp_path, options)
