"""The replication-analysis library: every function against values computed by hand on small
inputs, plus invariants checked by Hypothesis."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given
from hypothesis import strategies as st

from neardup.analysis.dedupdir import read_dedup_dir, run_labels
from neardup.analysis.distribution import (
    bucket_counts,
    find_spikes,
    leading_bit_histogram,
    leading_bit_positions,
    parse_hex64,
)
from neardup.analysis.growth import (
    cumulative,
    cut_iteration,
    estimate_from_prefix,
    found_probability,
    processed_documents,
    read_growth,
)
from neardup.analysis.model import format_value
from neardup.analysis.replication import (
    cluster_stats,
    dense_labels,
    replica_bin_counts,
    replicas_per_document,
    size_distribution,
)
from neardup.analysis.savings import crawl_savings, first_of_groups
from neardup.analysis.servers import ServerPair, collections_by_servers, mirrored_servers
from neardup.analysis.webgraph import (
    connected_coverage,
    crawl,
    default_seeds,
    graph_from_edges,
    link_graph,
    normalize_url,
    part_stats,
    seeds_for_urls,
)
from neardup.errors import ConfigError, SourceError


def i64(values: list[int]) -> np.ndarray:  # type: ignore[type-arg]
    return np.array(values, dtype=np.int64)


labels_strategy = st.lists(st.integers(0, 12), min_size=1, max_size=60).map(
    lambda v: dense_labels(v))

# -- replication -----------------------------------------------------------------------------------


def test_dense_labels_number_keys_by_first_appearance() -> None:
    assert dense_labels(["a", "b", "a", None, "b"]).tolist() == [0, 1, 0, 2, 1]


def test_replicas_count_the_document_itself() -> None:
    assert replicas_per_document(i64([0, 0, 1, 2, 2, 2])).tolist() == [2, 2, 1, 3, 3, 3]


def test_replica_bins_put_10_in_3_to_10_and_100_in_10_to_100() -> None:
    sizes = [1, 2, 10, 100, 101]
    labels = i64([group for group, size in enumerate(sizes) for _ in range(size)])
    assert replica_bin_counts(labels).tolist() == [1, 2, 10, 100, 101]


def test_size_distribution_counts_clusters_of_each_size() -> None:
    sizes, counts = size_distribution(i64([0, 0, 1, 1, 2, 3, 3, 3]))
    assert sizes.tolist() == [2, 3]
    assert counts.tolist() == [2, 1]
    assert size_distribution(i64([]))[0].size == 0


def test_cluster_stats_by_hand() -> None:
    labels = i64([0, 0, 1, 1, 1, 2, 3, 3, 4, 4])
    identical = i64([0, 0, 1, 1, 2, 3, 4, 4, 5, 6])
    stats = cluster_stats(labels, identical)
    assert (stats.clusters, stats.clustered_documents, stats.duplicates, stats.largest) == (
        4, 9, 5, 3)
    assert (stats.identical_only_clusters, stats.identical_only_documents) == (2, 4)
    assert (stats.mixed_clusters, stats.mixed_documents) == (2, 5)
    assert stats.pair_clusters == 3
    assert stats.pair_share_of_clusters == pytest.approx(0.75)
    assert stats.pair_share_of_duplicates == pytest.approx(0.6)
    assert stats.small_share_of_duplicates == pytest.approx(1.0)
    assert cluster_stats(labels, identical, small_limit=2).small_share_of_duplicates == (
        pytest.approx(0.6))


def test_cluster_stats_without_clusters() -> None:
    stats = cluster_stats(i64([0, 1, 2]), i64([0, 1, 2]))
    assert (stats.clusters, stats.duplicates, stats.pair_share_of_duplicates) == (0, 0, 0.0)
    assert cluster_stats(i64([]), i64([])).documents == 0


@given(labels_strategy)
def test_replication_invariants(labels: np.ndarray) -> None:  # type: ignore[type-arg]
    assert replica_bin_counts(labels).sum() == labels.size
    stats = cluster_stats(labels, np.arange(labels.size, dtype=np.int64))
    assert stats.duplicates == labels.size - np.unique(labels).size
    assert stats.identical_only_clusters == 0
    sizes, counts = size_distribution(labels)
    assert int((sizes * counts).sum()) == stats.clustered_documents


# -- servers ---------------------------------------------------------------------------------------

HOSTS = ["a.com", "b.com", "c.com", "a.com", "b.com", "a.com", "a.com", None]
URLS = ["http://a.com/x", "http://b.com/x", "http://c.com/x", "http://a.com/y",
        "http://b.com/y", "http://a.com/z", "http://a.com/z2", "file:///local"]
SERVER_LABELS = i64([0, 0, 0, 3, 3, 5, 5, 7])


def test_collections_ranked_by_distinct_servers() -> None:
    found = collections_by_servers(SERVER_LABELS, HOSTS, URLS)
    assert [(c.cluster, c.servers, c.documents) for c in found] == [(0, 3, 3), (3, 2, 2)]
    assert found[0].examples == ("http://a.com/x", "http://b.com/x", "http://c.com/x")
    assert len(collections_by_servers(SERVER_LABELS, HOSTS, URLS, top=1, examples=2)[0]
               .examples) == 2


def test_mirrored_servers_count_shared_contents() -> None:
    pairs = mirrored_servers(SERVER_LABELS, HOSTS)
    assert pairs == [ServerPair("a.com", "b.com", 2, 3, 2), ServerPair("a.com", "c.com", 1, 3, 1),
                     ServerPair("b.com", "c.com", 1, 2, 1)]
    assert pairs[0].overlap == 1.0
    assert mirrored_servers(SERVER_LABELS, HOSTS, min_shared=2) == pairs[:1]
    assert mirrored_servers(SERVER_LABELS, [None] * 8) == []


# -- savings ---------------------------------------------------------------------------------------


def test_crawl_savings_keep_the_first_of_each_group() -> None:
    kept = first_of_groups(i64([2, 0, 2, 1, 0]))
    assert kept.tolist() == [True, True, False, True, False]
    savings = crawl_savings(kept, i64([10, 20, 30, 40, 50]))
    assert (savings.pages, savings.pages_skipped, savings.bytes, savings.bytes_skipped) == (
        5, 2, 150, 80)
    assert savings.page_share == pytest.approx(0.4)
    assert savings.byte_share == pytest.approx(80 / 150)
    assert crawl_savings(first_of_groups(i64([])), i64([])).page_share == 0.0


# -- link graph and crawl simulator ----------------------------------------------------------------

# 0 is the site's home; 1, 2 and 7 (a second capture of 2's URL) are reached through links, 3 is
# another site linked from 2; 4 links into the site but nothing links to 4, and 5 only from 4;
# 6 has no URL.
DOC_URLS = ["http://s/", "http://s/a", "http://s/b", "http://t/", "http://u/", "http://u/x", None,
            "http://s/b"]
LINKS = [(0, "http://s/a"), (1, "http://s/b"), (1, "http://s/a"), (2, "HTTP://T"),
         (2, "http://elsewhere/"), (3, "http://s/#top"), (4, "http://s/"), (4, "http://u/x")]


def hand_graph():  # type: ignore[no-untyped-def]
    return link_graph(DOC_URLS, [d for d, _ in LINKS], [u for _, u in LINKS])


def test_normalize_url() -> None:
    assert normalize_url("HTTP://Example.COM") == "http://example.com/"
    assert normalize_url("http://a.com/p?q=1#frag") == "http://a.com/p?q=1"
    assert normalize_url("ftp://a.com/") is None
    assert normalize_url("mailto:someone@a.com") is None
    assert normalize_url(None) is None
    assert normalize_url("http://[bad") is None


def test_link_graph_edges_between_documents() -> None:
    graph = hand_graph()
    edges = {(d, int(t)) for d in range(graph.count)
             for t in graph.targets[graph.indptr[d]:graph.indptr[d + 1]]}
    assert edges == {(0, 1), (1, 2), (1, 7), (2, 3), (3, 0), (4, 0), (4, 5)}
    assert graph.in_degree().tolist() == [2, 1, 1, 1, 0, 1, 0, 1]


def test_crawl_reaches_the_known_connected_part() -> None:
    reached = crawl(hand_graph(), i64([0]))
    assert np.flatnonzero(reached).tolist() == [0, 1, 2, 3, 7]
    assert np.flatnonzero(crawl(hand_graph(), i64([4]))).tolist() == [0, 1, 2, 3, 4, 5, 7]
    assert not crawl(hand_graph(), i64([])).any()


def test_default_seeds_are_the_most_linked_to_page_per_group() -> None:
    graph = hand_graph()
    assert default_seeds(graph, i64([0] * 8)).tolist() == [0]
    assert default_seeds(graph, i64([0, 0, 0, 0, 1, 1, 1, 0])).tolist() == [0, 5]
    assert default_seeds(graph_from_edges(3, i64([]), i64([])), i64([0, 0, 1])).size == 0


def test_seeds_for_urls() -> None:
    assert seeds_for_urls(DOC_URLS, ["HTTP://S"]).tolist() == [0]
    assert seeds_for_urls(DOC_URLS, ["http://s/b"]).tolist() == [2, 7]
    with pytest.raises(ConfigError, match="http://nowhere/"):
        seeds_for_urls(DOC_URLS, ["http://nowhere/"])


def test_parts_and_coverage_by_hand() -> None:
    # clusters: {0, 3, 4} and {2, 7}; 1, 5 and 6 unique
    labels = i64([0, 1, 2, 0, 0, 5, 6, 2])
    reached = crawl(hand_graph(), i64([0]))
    complete = part_stats(labels, np.ones(8, dtype=bool))
    connected, disconnected = part_stats(labels, reached), part_stats(labels, ~reached)
    assert (complete.documents, complete.clusters, complete.duplicates, complete.unique) == (
        8, 2, 3, 3)
    assert (connected.documents, connected.clusters, connected.duplicates,
            connected.unique) == (5, 2, 2, 1)
    assert (disconnected.documents, disconnected.clusters, disconnected.duplicates,
            disconnected.unique) == (3, 0, 0, 3)
    assert connected.duplicate_share == pytest.approx(0.4)
    cover = connected_coverage(labels, reached)
    assert (cover.clusters, cover.clusters_reached, cover.unique, cover.unique_reached) == (
        2, 2, 3, 1)
    assert cover.useful_share == pytest.approx(3 / 5)


@given(st.lists(st.tuples(st.integers(0, 15), st.integers(0, 15)), max_size=60),
       st.lists(st.integers(0, 15), min_size=1, max_size=3))
def test_crawl_matches_a_plain_search(edges: list[tuple[int, int]], seeds: list[int]) -> None:
    graph = graph_from_edges(16, i64([a for a, _ in edges]), i64([b for _, b in edges]))
    seen, todo = set(seeds), list(seeds)
    while todo:
        node = todo.pop()
        for a, b in edges:
            if a == node and b not in seen:
                seen.add(b)
                todo.append(b)
    assert set(np.flatnonzero(crawl(graph, i64(seeds))).tolist()) == seen


# -- growth ----------------------------------------------------------------------------------------


def test_read_growth_cumulative_zero_based_out_of_order() -> None:
    table = pa.table({"iteration": [1, 0, 3, 2], "clusters": [3, 2, 4, 3],
                      "duplicates": [7, 5, 8, 8], "documents": [5, 2, 10, 7],
                      "duplicates_estimate": [8.5, 9.0, 8.0, 8.1], "note": ["", "", "", ""]})
    growth = read_growth(table)
    assert growth.iterations.tolist() == [1, 2, 3, 4]
    assert growth.series["clusters"].tolist() == [2, 3, 3, 4]
    assert growth.series["duplicates"].tolist() == [5, 7, 8, 8]
    assert growth.series["documents"].tolist() == [2, 5, 7, 10]
    assert growth.estimates["duplicates_estimate"].tolist() == [9.0, 8.5, 8.1, 8.0]


def test_read_growth_sums_per_iteration_counts_and_accepts_aliases() -> None:
    growth = read_growth(pa.table({"iter": [1, 2, 3, 4], "dups": [5, 2, 1, 0]}))
    assert growth.series["duplicates"].tolist() == [5, 7, 8, 8]
    assert "clusters" not in growth.series
    assert read_growth(pa.table({"clusters": [1, 2]})).iterations.tolist() == [1, 2]
    assert cumulative(np.array([1.0, 1.0, 2.0])).tolist() == [1.0, 1.0, 2.0]


def test_read_growth_refuses_tables_without_counts() -> None:
    with pytest.raises(SourceError, match="no clusters or duplicates column"):
        read_growth(pa.table({"iteration": [1, 2]}))
    with pytest.raises(SourceError, match="not numeric"):
        read_growth(pa.table({"clusters": ["a", "b"]}))
    with pytest.raises(SourceError, match="no rows"):
        read_growth(pa.table({"clusters": pa.array([], pa.int64())}))


def test_cut_iteration_as_pereira() -> None:
    assert [cut_iteration(50, 0.2), cut_iteration(40, 0.2), cut_iteration(15, 0.5)] == [10, 8, 8]
    assert [cut_iteration(3, 0.2), cut_iteration(10, 0.5), cut_iteration(4, 1.0)] == [1, 5, 4]


@given(st.integers(1, 200), st.integers(1, 30))
def test_processed_documents_follow_array_split(count: int, m: int) -> None:
    parts = np.array_split(np.arange(count), m)
    for i in range(m + 1):
        assert processed_documents(count, m, i) == sum(p.size for p in parts[:i])


def test_found_probability_is_hypergeometric() -> None:
    # 2 of 4 documents processed: a single one is among them with probability 1/2, one of a
    # pair with 1 - (2/4)(1/3), one of three surely
    assert found_probability(4, 2, i64([1, 2, 3])).tolist() == pytest.approx([0.5, 5 / 6, 1.0])
    assert found_probability(4, 0, i64([2])).tolist() == [0.0]


def test_estimate_from_prefix_by_hand() -> None:
    # in input order, clusters {0, 6} and {3, 4, 8} start in the first half, {7, 9} in the second
    labels = i64([0, 1, 2, 3, 3, 5, 0, 7, 3, 7])
    estimate = estimate_from_prefix(labels, 2, 0.5, order=np.arange(10))
    assert (estimate.iteration, estimate.processed) == (1, 0.5)
    assert (estimate.clusters_found, estimate.duplicates_found) == (2, 3)
    # 5 of 10 processed: a pair is missed with probability C(8,5)/C(10,5) = 2/9, a triple 1/12
    assert estimate.clusters_estimate == pytest.approx(9 / 7 + 12 / 11)
    assert estimate.duplicates_estimate == pytest.approx(9 / 7 + 2 * 12 / 11)
    reversed_order = estimate_from_prefix(labels, 2, 0.5, order=np.arange(10)[::-1].copy())
    assert (reversed_order.clusters_found, reversed_order.duplicates_found) == (3, 4)
    assert estimate_from_prefix(labels, 2, 0.5, seed=1) == estimate_from_prefix(labels, 2, 0.5,
                                                                                seed=1)


def test_estimate_is_unbiased_over_every_assignment() -> None:
    labels = i64([0, 0, 0, 3, 3, 5])
    estimates = [estimate_from_prefix(labels, 3, 1 / 3, order=np.array(order, dtype=np.int64))
                 for order in itertools.permutations(range(6))]
    assert np.mean([e.duplicates_estimate for e in estimates]) == pytest.approx(3.0)
    assert np.mean([e.clusters_estimate for e in estimates]) == pytest.approx(2.0)


@given(labels_strategy, st.integers(1, 10))
def test_estimate_after_every_iteration_is_exact(labels: np.ndarray, m: int) -> None:  # type: ignore[type-arg]
    estimate = estimate_from_prefix(labels, m, 1.0)
    duplicates = labels.size - np.unique(labels).size
    assert estimate.duplicates_found == duplicates
    assert estimate.duplicates_estimate == pytest.approx(duplicates)


# -- fingerprint distribution ----------------------------------------------------------------------


def test_leading_bit_positions_are_exact() -> None:
    values = np.array([0, 1, 2, 3, 2**63, 2**64 - 1, 2**53 + 1, 2**60 - 1], dtype=np.uint64)
    assert leading_bit_positions(values).tolist() == [-1, 0, 1, 1, 63, 63, 53, 59]


def test_leading_bit_histogram_of_successive_xors() -> None:
    counts, equal = leading_bit_histogram(np.array([5, 1, 4, 4], dtype=np.uint64))
    assert equal == 1
    assert counts[2] == 1 and counts[0] == 1 and counts.sum() == 2 and counts.size == 64


def test_bucket_counts() -> None:
    values = np.array([0, 2**57 - 1, 2**57, 2**64 - 1], dtype=np.uint64)
    counts = bucket_counts(values)
    assert counts.size == 128
    assert (counts[0], counts[1], counts[127], counts.sum()) == (2, 1, 1, 4)
    with pytest.raises(ConfigError, match="buckets=100"):
        bucket_counts(values, 100)
    assert parse_hex64(["00000000000000ff", None]).tolist() == [255, 0]


def test_spike_of_empty_pages_is_named() -> None:
    prints = np.array([0] * 10 + [i << 57 for i in range(1, 21)], dtype=np.uint64)
    tokens = i64([0] * 10 + [50] * 20)
    urls = [None, "http://e/1", *(f"http://e/{i}" for i in range(2, 30))]
    spikes = find_spikes(prints, tokens, urls)
    assert len(spikes) == 1
    spike = spikes[0]
    assert (spike.bucket, spike.documents, spike.distinct, spike.sharing, spike.empty) == (
        0, 10, 1, 10, 10)
    assert spike.example == "http://e/1"
    assert spike.name == "10 empty pages, one simhash (0000000000000000)"


def test_spike_of_similar_pages_is_named() -> None:
    prints = np.array([(5 << 57) + i for i in (1, 1, 1, 2, 3)], dtype=np.uint64)
    spike = find_spikes(prints, i64([9] * 5), ["http://x/"] * 5)[0]
    assert spike.name == f"5 pages, 3 simhashes; 3 share {(5 << 57) + 1:016x}"


@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=50))
def test_distribution_invariants(values: list[int]) -> None:
    prints = np.array(values, dtype=np.uint64)
    counts, equal = leading_bit_histogram(prints)
    assert counts.sum() + equal == prints.size - 1
    assert bucket_counts(prints).sum() == prints.size


# -- model and reading a run -----------------------------------------------------------------------


def test_format_value() -> None:
    assert [format_value(0.5, "share"), format_value(1234, "count"), format_value(1500, "bytes"),
            format_value(999, "bytes"), format_value(None, "count"),
            format_value(12.345, "number"), format_value("x", "text"),
            format_value(float("nan"), "share")] == [
        "50.0%", "1,234", "1.5 KB", "999 B", "n/a", "12.35", "x", "n/a"]


def write_run(directory: Path, fmt: str, count: int = 3, method: str = "exact") -> Path:
    directory.mkdir(parents=True)
    documents = {"doc": list(range(count))[::-1], "url": [f"http://h/{i}" for i in range(count)],
                 "host": ["h"] * count, "length": [10] * count, "identical": ["a"] * count}
    clusters = {"doc": list(range(count)), "cluster": [0] * count, "kept": [True] * count}
    for name, columns in (("documents", documents), ("clusters", clusters)):
        if fmt == "parquet":
            pq.write_table(pa.table(columns), directory / f"{name}.parquet")
        else:
            rows = [dict(zip(columns, values, strict=True)) for values in zip(*columns.values(),
                                                                                strict=True)]
            (directory / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (directory / "summary.json").write_text(json.dumps({"method": method, "near": {"k": 3}}))
    return directory


@pytest.mark.parametrize("fmt", ["parquet", "jsonl"])
def test_read_dedup_dir_in_doc_order(tmp_path: Path, fmt: str) -> None:
    run = read_dedup_dir(write_run(tmp_path / "run", fmt))
    assert run.count == 3
    assert run.documents.column("doc").to_pylist() == [0, 1, 2]
    assert run.documents.column("url").to_pylist() == ["http://h/2", "http://h/1", "http://h/0"]
    assert run.links is None and run.growth is None
    assert run.label == "exact k=3"
    assert run.identical.tolist() == [0, 0, 0]


def test_run_labels_name_clashing_runs_by_directory(tmp_path: Path) -> None:
    runs = [read_dedup_dir(write_run(tmp_path / name, "jsonl")) for name in ("one", "two")]
    assert run_labels(runs) == ["exact k=3 (one)", "exact k=3 (two)"]


def test_read_dedup_dir_errors_name_the_file(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such directory"):
        read_dedup_dir(tmp_path / "absent")
    run = write_run(tmp_path / "run", "jsonl")
    (run / "clusters.jsonl").write_text('{"doc": 0, "cluster": 0, "kept": true}\n')
    with pytest.raises(SourceError, match="clusters: 1 rows for 3 documents"):
        read_dedup_dir(run)
    (run / "clusters.jsonl").unlink()
    with pytest.raises(SourceError, match=r"no clusters\.parquet or clusters\.jsonl"):
        read_dedup_dir(run)
    (run / "clusters.jsonl").write_text("not json\n")
    with pytest.raises(SourceError, match="cannot read the clusters table"):
        read_dedup_dir(run)


def test_collections_replicated_together_group_contents_by_server_set() -> None:
    from neardup.analysis.collections import replicated_together

    hosts = ["m1", "m2", "m3", "m1", "m2", "m3", "m1", "m2", "r1", "r2", "r3", "r4", "m1", "m2"]
    urls = [f"http://{h}/p{i}" for i, h in enumerate(hosts)]
    labels = i64([0, 0, 0, 3, 3, 3, 6, 6, 8, 8, 8, 8, 12, 12])
    found = replicated_together(labels, hosts, urls)
    # clusters 0 and 3 share {m1, m2, m3}; 6 and 12 share {m1, m2}; 8 (robots.txt) is alone
    assert [(g.servers, g.pages, g.documents) for g in found] == [(3, 2, 6), (2, 2, 4)]
    assert found[0].hosts == ("m1", "m2", "m3")
    assert found[0].examples == ("http://m1/p0", "http://m1/p3")
    assert replicated_together(labels, hosts, urls, min_pages=1)[0].servers == 4
    assert replicated_together(labels, [None] * 14, urls) == []
