"""Every near method runs out of core in the engine and gives exactly the in-memory result:
pairs, relations, scores, clusters, the method's summary counts, with tiny buckets so that every
join is split over many bucket files (and a generated host whose pages share a template)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpora import write_sites
from neardup.cli.dedup import run_dedup
from neardup.config import (
    ChunkConfig,
    ChunkMethod,
    DedupConfig,
    OverlapConfig,
    SketchConfig,
    SketchMethod,
    TemplateConfig,
)
from neardup.engine import EngineOptions, run_engine
from neardup.engine.buckets import BucketWriter, spread
from neardup.engine.counting import count_shared, run_pairs, shared_counts, sorted_keys
from neardup.engine.keys import KEYED, keyed
from runs import assert_same_tables
from test_blocks import (
    test_against_equals_one_shot_run_restricted_to_new_documents as against_check,
)

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "warc"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data absent: {DATA}")
JOINED = ("sketch", "supershingle", "chunks", "smfa")


def _without_phases(near: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in near.items() if key != "phases"}


def assert_same(inputs: list[str], config: DedupConfig, tmp: Path,
                options: EngineOptions) -> dict[str, Any]:
    _, memory = run_dedup(tuple(inputs), tmp / "memory", config, show_progress=False)
    engine = run_engine(inputs, tmp / "engine", config, options)
    assert_same_tables(tmp / "engine", tmp / "memory")
    assert _without_phases(engine["near"]) == _without_phases(memory["near"])
    assert engine["templates"] == memory["templates"]
    return engine


CONFIGS = {
    "sketch": DedupConfig(method="sketch"),
    "sketch-min": DedupConfig(method="sketch",
                              params=SketchMethod(SketchConfig(kind="min", size=50))),
    "sketch-adaptive": DedupConfig(method="sketch", params=SketchMethod(
        SketchConfig(size=4, adaptive=20), drop_common=6)),
    "sketch-contained": DedupConfig(method="sketch", threshold=0.7, params=SketchMethod(
        SketchConfig(size=4), relation="contained")),
    "supershingle": DedupConfig(method="supershingle", params=SketchMethod(
        SketchConfig(size=4), supershingle_size=2, drop_common=5)),
    "chunks": DedupConfig(method="chunks", params=ChunkMethod(ChunkConfig(kind="words", size=8))),
    "chunks-drop": DedupConfig(method="chunks", params=ChunkMethod(
        ChunkConfig(kind="words", size=20), OverlapConfig(min_shared=2, drop_common=4))),
    "smfa": DedupConfig(method="smfa"),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_joined_methods_equal_memory_with_tiny_buckets(name: str, tmp_path: Path) -> None:
    inputs = write_sites(tmp_path / "corpus", 160, seed=3)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=23, bucket_bytes=512)
    summary = assert_same(inputs, CONFIGS[name], tmp_path, options)
    assert summary["near"]["verified"] > 0
    assert summary["templates"]["hosts_with_templates"] >= 1


def test_templates_read_only_the_hosts_with_enough_pages(tmp_path: Path) -> None:
    """A small host (fewer than min_pages pages, under the same frame) and pages without a
    host: only the large hosts' sets are routed, and the result is the in-memory one."""
    inputs = write_sites(tmp_path / "corpus", 120, seed=5)
    small = tmp_path / "corpus" / "small.jsonl"
    frame = "<p>" + " ".join(f"frame{i}" for i in range(40)) + "</p>"
    rows = [{"id": f"s{n}", "url": f"http://small.example/{n}",
             "html": f"<html><body>{frame}<p>{' '.join(f'w{n}x{i}' for i in range(30))}</p>"
                     f"</body></html>"} for n in range(4)]
    rows += [{"id": f"n{n}", "text": " ".join(f"v{n}y{i}" for i in range(30))} for n in range(5)]
    small.write_text("".join(json.dumps(row) + "\n" for row in rows))
    options = EngineOptions(work=tmp_path / "work", chunk_docs=17, bucket_bytes=512)
    summary = assert_same([*inputs, str(small)], DedupConfig(method="minhash"), tmp_path,
                          options)
    assert summary["templates"]["hosts"] == 4
    assert summary["templates"]["hosts_with_enough_pages"] == 3
    assert summary["templates"]["hosts_with_templates"] >= 1


@pytest.mark.slow
@settings(max_examples=8, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(JOINED), chunk_docs=st.integers(1, 50),
       bucket_bytes=st.sampled_from([128, 2048, 1 << 22]), seed=st.integers(0, 1000),
       templates=st.booleans())
def test_joined_methods_equal_memory_on_generated_sites(
        tmp_path_factory: pytest.TempPathFactory, method: str, chunk_docs: int,
        bucket_bytes: int, seed: int, templates: bool) -> None:
    tmp = tmp_path_factory.mktemp("sites")
    inputs = write_sites(tmp / "corpus", 90, seed)
    options = EngineOptions(work=tmp / "work", chunk_docs=chunk_docs, bucket_bytes=bucket_bytes)
    config = DedupConfig(method=method)
    if not templates:
        config = DedupConfig(method=method, templates=TemplateConfig(enabled=False))
    assert_same(inputs, config, tmp, options)


@pytest.mark.parametrize("method", ["sketch", "chunks"])
def test_joined_methods_never_build_the_runs_prints(method: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The out-of-core near stage reads partitions a piece at a time: building a document's
    prints object (what the in-memory path holds for every document) fails the run."""
    import neardup.engine.partition as partition

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the near stage built a per-document prints list")

    inputs = write_sites(tmp_path / "corpus", 60, seed=5)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=10, bucket_bytes=1024)
    config = CONFIGS[method]
    monkeypatch.setattr(partition, "DocumentPrints", refuse)
    summary = run_engine(inputs, tmp_path / "engine", config, options)
    assert summary["near"]["verified"] > 0
    some_partition = next((tmp_path / "work").glob("fingerprint/*/meta.parquet")).parent
    with pytest.raises(AssertionError, match="prints list"):
        partition.read_prints(some_partition, True)


def test_a_key_shared_by_many_documents_expands_in_bounded_pieces() -> None:
    docs = np.arange(600, dtype=np.int64) * 7
    starts = np.array([0, 590], dtype=np.int64)
    lengths = np.array([590, 10], dtype=np.int64)
    seen: set[tuple[int, int]] = set()
    sizes = []
    for first, second in run_pairs(docs, starts, lengths, piece=1000):
        sizes.append(first.size)
        seen.update(zip(first.tolist(), second.tolist(), strict=True))
    assert max(sizes) < 1000 + 600
    assert len(sizes) > 100
    expected = 590 * 589 // 2 + 45
    assert len(seen) == expected == sum(sizes)
    assert all(a < b for a, b in list(seen)[:1000])


def test_shared_counts_drop_common_keys_and_count_pairs(tmp_path: Path) -> None:
    writer = BucketWriter(tmp_path / "keys", 4, KEYED)
    keys = np.array([1, 1, 1, 2, 2, 3, 3, 3, 3, 3], dtype=np.uint64)
    docs = np.array([0, 1, 2, 0, 1, 0, 1, 2, 3, 4], dtype=np.int64)
    rows = keyed(keys, docs)
    writer.add(rows, spread(keys))
    writer.close()
    pairs, counts = count_shared(writer, tmp_path / "pairs", 64, limit=4)
    found = {(a, b): c for chunk in shared_counts(pairs) for a, b, c in zip(*map(list, chunk),
                                                                              strict=True)}
    assert found == {(0, 1): 2, (0, 2): 1, (1, 2): 1}
    assert counts.dropped_keys.tolist() == [3]
    assert (counts.entries, counts.dropped_entries, counts.triplets) == (5, 5, 4)
    at_least_two = [c for chunk in shared_counts(pairs, 2) for c in chunk[2].tolist()]
    assert at_least_two == [2]


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("name", ["sketch", "sketch-contained", "supershingle", "chunks-drop",
                                  "smfa"])
def test_joined_methods_equal_memory_on_shared_warcs(name: str, tmp_path: Path) -> None:
    inputs = sorted(str(p) for p in DATA.glob("*.gz"))
    options = EngineOptions(work=tmp_path / "work", chunk_docs=41, bucket_bytes=1024)
    assert_same(inputs, CONFIGS[name], tmp_path, options)


@pytest.mark.parametrize("method", ["sketch", "chunks"])
def test_against_with_joined_methods_equals_one_shot_run(tmp_path: Path, method: str) -> None:
    """``--against`` (old partitions reused) with a joined method: the one-shot run over old +
    new, restricted to what touches a new document (the check of test_blocks.py)."""
    against_check(tmp_path, method)


def test_sorted_keys_order_by_key_then_document_whatever_the_write_order(tmp_path: Path) -> None:
    writer = BucketWriter(tmp_path / "keys", 1, KEYED)
    keys = np.array([5, 2, 5, 2, 9, 5], dtype=np.uint64)
    writer.add(keyed(keys, np.array([3, 8, 1, 2, 0, 7], dtype=np.int64)), spread(keys))
    writer.close()
    rows = sorted_keys(writer.folder, 0)
    assert list(zip(rows["key"].tolist(), rows["doc"].tolist(), strict=True)) == [
        (2, 2), (2, 8), (5, 1), (5, 3), (5, 7), (9, 0)]


@pytest.mark.slow  # about 45 s; test_overlap.py checks coarse counting against brute force fast
@pytest.mark.parametrize("overlap", [OverlapConfig(algorithm="coarse"),
                                     OverlapConfig(algorithm="coarse", pilot=0.3, hashes=3,
                                                   buckets=64),
                                     OverlapConfig(algorithm="coarse", min_shared=2,
                                                   drop_common=4)])
def test_coarse_counting_runs_in_the_engine_and_equals_the_sort_join(
        overlap: OverlapConfig, tmp_path: Path) -> None:
    """``--algorithm coarse`` runs S&GM's coarse counting over the fingerprint buckets (tiny
    buckets: many pieces per scan) and finds the sort-based join's pairs, counts and clusters."""
    inputs = write_sites(tmp_path / "corpus", 160, seed=8)
    chunks = ChunkConfig(kind="words", size=8)
    sort = DedupConfig(method="chunks", params=ChunkMethod(
        chunks, OverlapConfig(min_shared=overlap.min_shared, drop_common=overlap.drop_common)))
    coarse = DedupConfig(method="chunks", params=ChunkMethod(chunks, overlap))
    ran = {}
    for name, config in (("sort", sort), ("coarse", coarse)):
        options = EngineOptions(work=tmp_path / f"work-{name}", chunk_docs=23, bucket_bytes=512)
        ran[name] = run_engine(inputs, tmp_path / name, config, options)
    assert_same_tables(tmp_path / "coarse", tmp_path / "sort")
    near = {name: summary["near"] for name, summary in ran.items()}
    assert near["coarse"]["algorithm"] == "coarse" and near["sort"]["algorithm"] == "sort"
    assert near["coarse"]["overlap_pairs"] == near["sort"]["overlap_pairs"] > 0
    assert near["coarse"]["drop_common"] == near["sort"]["drop_common"]
    phases = near["coarse"]["phases"]
    assert {"exact_copies", "hash_scan_1", "candidate_scan", "count_scan"} <= set(phases)
    assert "expand_sort_runs" not in phases and "expand_sort_runs" in near["sort"]["phases"]
    assert ("pilot" in phases) == (overlap.pilot > 0)
    if overlap.buckets is not None:
        assert phases["hash_scan_1"]["buckets"] == overlap.buckets
    if overlap.drop_common is not None:
        assert near["coarse"]["drop_common"]["chunks_dropped"] > 0
