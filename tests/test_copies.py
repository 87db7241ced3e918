"""Which pages are copies of which: page kinds, duplicate rates, the largest clusters, the pair
view, and reading a run's documents again from its inputs (a generated crawl and the shared
WARC files)."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.analysis import read_dedup_dir
from neardup.analysis.copies import gather_copies, snippet
from neardup.analysis.dedupdir import column_labels
from neardup.analysis.largest import keep_reason, kept_docs, largest_clusters
from neardup.analysis.model import Figure, Section, Series
from neardup.analysis.pages import KINDS, page_kind, page_kinds, text_kind
from neardup.analysis.pairview import compare_texts, relation_words, verification_rule
from neardup.analysis.rates import date_keys, group_rates
from neardup.analysis.replication import dense_labels
from neardup.analysis.report import MIN_LOGLOG_POINTS, small_plots_as_tables
from neardup.analysis.servers import host_numbers
from neardup.analysis.texts import read_texts, text_settings
from neardup.cli.dedup import run_dedup
from neardup.config import DedupConfig, ShingleConfig
from neardup.demo.synthetic import generate_crawl
from neardup.features.shingles import shingle_set
from neardup.sources import open_sources
from neardup.sources.seek import documents_at
from neardup.text.canonical import canonical_text


def test_page_kinds_from_url_tokens_and_text() -> None:
    assert page_kind("http://a.org/robots.txt", 40) == "robots"
    assert page_kind("http://a.org/ROBOTS.TXT", 40) == "robots"
    assert page_kind("http://a.org/robots.txt.html", 40) == "content"
    assert page_kind("http://a.org/errors/404.html", 40) == "error"
    assert page_kind("http://a.org/page-not-found", 40) == "error"
    assert page_kind("http://a.org/errorless-design", 40) == "content"
    assert page_kind("http://a.org/", 2) == "empty"
    assert page_kind(None, 3) == "content"
    assert text_kind("content", "404 Not Found\nnginx") == "error"
    assert text_kind("content", "Home | News The item you requested cannot be found.") == "error"
    assert text_kind("content", "Notes on found objects and lost ones") == "content"
    assert text_kind("content", "Not Found " + "word " * 200) == "content"  # too long
    assert text_kind("robots", "404 Not Found") == "robots"


URLS = ["http://a.org/robots.txt", "https://a.org/ROBOTS.TXT?x=1", "http://a.org/robots.txt.html",
        "http://a.org/errors/404.html", "http://a.org/page-not-found#top", "http://x.org/404",
        "http://a.org/errorless-design", "http://b.org/", "www.c.org/robots.txt", "", None,
        "ftp://h/x/error.html", "http://404.example.com/", "mailto:robots.txt",
        "http://h/a/robots.txt/", "http://h/path_not_found_", "http://h?q=/404"]


@settings(deadline=None)  # the machine is shared: the first example may wait
@given(st.lists(st.sampled_from(URLS), min_size=1, max_size=30), st.data())
def test_page_kinds_over_columns_agree_with_one_page(urls: list[str | None],
                                                     data: st.DataObject) -> None:
    tokens = data.draw(st.lists(st.integers(0, 6), min_size=len(urls), max_size=len(urls)))
    codes = page_kinds(pa.array(urls, pa.string()), np.array(tokens, dtype=np.int64))
    assert [KINDS[c] for c in codes] == [page_kind(u, t) for u, t in zip(urls, tokens,
                                                                          strict=True)]


def test_group_rates_count_duplicates_and_content_apart() -> None:
    keys = pa.array(["a", "a", "b", "b", "b", None])
    duplicate = np.array([False, True, False, True, True, True])
    content = np.array([True, True, True, False, True, True])
    rows = {r.key: r for r in group_rates(keys, duplicate, content)}
    assert (rows["a"].documents, rows["a"].duplicates, rows["a"].content_rate) == (2, 1, 0.5)
    b = rows["b"]
    assert (b.documents, b.duplicates, b.non_content, b.content_duplicates) == (3, 2, 1, 1)
    assert b.rate == pytest.approx(2 / 3) and b.content_rate == 0.5
    assert rows["(none)"].duplicates == 1
    assert [r.key for r in group_rates(keys, duplicate, content)] == ["b", "a", "(none)"]
    assert [r.key for r in group_rates(keys, duplicate, content, by_key=True)] == [
        "(none)", "a", "b"]


def test_crawl_dates_by_day_month_or_year() -> None:
    days = pa.array(["2020-01-01T10:00:00Z", "2020-01-02T00:00:00Z", None])
    keys, unit = date_keys(days)
    assert unit == "day" and keys.to_pylist() == ["2020-01-01", "2020-01-02", ""]
    months = pa.array([f"2020-{m:02d}-{d:02d}" for m in range(1, 4) for d in range(1, 28)])
    assert date_keys(months)[1] == "month"
    years = pa.array([f"{y}-{m:02d}-01" for y in range(1990, 2020) for m in range(1, 13)])
    assert date_keys(years)[1] == "year"


@settings(deadline=None)  # the first example compiles the shingle kernels
@given(st.text(alphabet="abc ", max_size=60), st.text(alphabet="abc ", max_size=60),
       st.integers(1, 4))
def test_pair_view_scores_match_the_shingle_sets(a: str, b: str, width: int) -> None:
    config = ShingleConfig(width=width)
    view = compare_texts(a, b, config)
    sa = set(shingle_set(canonical_text(a), width).tolist())
    sb = set(shingle_set(canonical_text(b), width).tolist())
    assert view.shared == len(sa & sb)
    assert view.resemblance == (len(sa & sb) / len(sa | sb) if sa | sb else 1.0)
    assert view.containment_ab == (len(sa & sb) / len(sa) if sa else 1.0)
    assert len(view.marked_a) == len(view.tokens_a)
    assert any(view.marked_a) == any(view.marked_b) == (view.shared > 0)
    assert compare_texts(a, a, config).marked_a == tuple(True for _ in view.tokens_a)


def test_pair_view_marks_the_shared_passage() -> None:
    view = compare_texts("one two three four five six seven", "zero two three four five nine",
                         ShingleConfig(width=3))
    assert view.tokens_a[1:5] == ("two", "three", "four", "five")
    assert view.marked_a == (False, True, True, True, True, False, False)
    assert view.marked_b == (False, True, True, True, True, False)
    assert view.shared == 2 and view.as_dict()["a"]["marked"] == [1, 2, 3, 4]  # type: ignore[index]


def test_rule_words_come_from_the_summary() -> None:
    summary = {"method": "minhash", "near": {"verification": {
        "relation": "near", "rule": "resemblance", "threshold": 0.8}}}
    rule = verification_rule(summary)
    assert rule == "exact resemblance of the shingle sets (site templates removed) at least 0.8"
    assert "own rule" in verification_rule({"method": "simhash"})
    assert relation_words("minhash", "near", rule).endswith(rule)
    assert relation_words("exact", "identical", rule).startswith("identical bytes")
    assert "revisit" in relation_words("revisit", "identical", rule)
    assert keep_reason("kept:longest") == "longest payload" and keep_reason(None) == "n/a"


def test_snippet_cuts_at_a_word() -> None:
    assert snippet("a  b\nc") == "a b c"
    assert snippet("word " * 100, 22) == "word word word word ..."


def test_few_point_log_log_figures_become_tables() -> None:
    few = Figure("loglog", "sizes", "size", "clusters",
                 (Series("x", (2.0, 3.0), (5.0, 1.0)), Series("y", (2.0,), (4.0,))))
    many = Figure("loglog", "many", "size", "clusters",
                  (Series("x", tuple(float(i) for i in range(2, 2 + MIN_LOGLOG_POINTS)),
                          (1.0,) * MIN_LOGLOG_POINTS),))
    section = small_plots_as_tables(Section("clusters", "t", figures=(few, many)))
    assert section.figures == (many,)
    assert section.tables[0].rows == ((2.0, 5.0, 4.0), (3.0, 1.0, 0.0))
    assert section.tables[0].columns == ("size", "clusters: x", "clusters: y")


def test_kept_docs_without_a_kept_doc_column(tmp_path: Path) -> None:
    pq.write_table(pa.table({"doc": [0, 1, 2, 3], "url": ["u"] * 4, "host": ["h"] * 4,
                             "length": [1] * 4, "identical": ["a", "b", "c", "d"]}),
                   tmp_path / "documents.parquet")
    pq.write_table(pa.table({"doc": [0, 1, 2, 3], "cluster": [0, 0, 2, 2],
                             "kept": [False, True, False, False]}), tmp_path / "clusters.parquet")
    assert kept_docs(read_dedup_dir(tmp_path)).tolist() == [1, 1, 2, 2]


@pytest.fixture(scope="module")
def crawl_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("copies")
    warc = root / "crawl.warc.gz"
    generate_crawl(warc, seed=5, pages=60)
    run_dedup((str(warc),), root / "out", DedupConfig(method="minhash"), workers=1)
    return root / "out"


def test_largest_clusters_list_the_kept_copy_first(crawl_run: Path) -> None:
    run = read_dedup_dir(crawl_run)
    entries = largest_clusters(run, np.zeros(run.count, dtype=np.int8), 5, 3)
    labels, kept = run.cluster, run.clusters.column("kept").to_pylist()
    sizes = np.bincount(labels)
    assert [e.size for e in entries] == sorted(sizes[sizes >= 2].tolist(), reverse=True)[:5]
    for entry in entries:
        assert kept[entry.kept] and labels[entry.kept] == entry.cluster
        assert entry.members[0] == entry.kept and len(entry.members) == min(3, entry.size)
        assert all(labels[d] == entry.cluster for d in entry.members)


def test_texts_read_again_match_the_run(crawl_run: Path, tmp_path: Path) -> None:
    run = read_dedup_dir(crawl_run)
    settings = text_settings(run.summary)
    docs = list(range(0, run.count, 7))
    texts, problems = read_texts(run, docs, settings)
    assert problems == [] and sorted(texts) == docs
    tokens = run.documents.column("tokens").to_pylist()
    for doc, text in texts.items():
        assert (len(text.canonical.split(" ")) if text.canonical else 0) == tokens[doc]
    moved = tmp_path / "moved"
    moved.mkdir()
    for name in ("documents.parquet", "clusters.parquet", "summary.json"):
        (moved / name).write_bytes((crawl_run / name).read_bytes())
    table = pq.read_table(moved / "documents.parquet")
    gone = str(tmp_path / "gone.warc.gz")
    table = table.set_column(table.column_names.index("source"), "source",
                             pa.array([gone] * table.num_rows))
    pq.write_table(table, moved / "documents.parquet")
    copies = gather_copies(read_dedup_dir(moved), "minhash", 3, 4)
    assert copies.texts == {}
    assert copies.problems == [f"{gone}: input not found; its documents are shown without text"]


def test_documents_at_finds_every_document_of_the_shared_warcs(shared_data: Path) -> None:
    """Reading at the recorded offsets gives back each document the full pass read."""
    by_file: dict[str, dict[tuple[int, str], bytes]] = defaultdict(dict)
    for doc in open_sources([str(shared_data / "warc")]):
        by_file[doc.source][(doc.offset, doc.id)] = doc.raw
    assert len(by_file) >= 5
    for path, wanted in by_file.items():
        found = {(d.offset, d.id): d.raw for d in documents_at(path, [o for o, _ in wanted])}
        assert {key: found.get(key) for key in wanted} == wanted, path


def test_summary_tags_give_the_text_settings() -> None:
    settings = text_settings({"config": {"text": "text:main:thai-words",
                                         "verify": "shingles:w7s3"}, "media": "text"})
    assert (settings.extract, settings.thai_words, settings.media) == ("main", True, "text")
    assert settings.shingles == ShingleConfig(7, 3)
    assert text_settings({}) == text_settings({"config": json.loads("{}")})


@given(st.lists(st.sampled_from(["a", "b", "c", None, ""]), max_size=40), st.booleans())
def test_column_labels_number_values_as_dense_labels_does(values: list[str | None],
                                                         dictionary: bool) -> None:
    column = pa.array(values, pa.string())
    table = pa.table({"x": column.dictionary_encode() if dictionary else column})
    assert column_labels(table, "x").tolist() == dense_labels(values).tolist()


@given(st.lists(st.sampled_from(["a.org", "b.org", "", None]), min_size=1, max_size=30),
       st.integers(1, 4))
def test_host_numbers_of_dictionary_chunks_match_plain_strings(hosts: list[str | None],
                                                               chunks: int) -> None:
    size = -(-len(hosts) // chunks)
    parts = [pa.array(hosts[i:i + size], pa.string()).dictionary_encode()
             for i in range(0, len(hosts), size)]
    codes, names = host_numbers(pa.chunked_array(parts))
    plain_codes, plain_names = host_numbers(hosts)
    assert [names[c] if c >= 0 else None for c in codes] == [
        plain_names[c] if c >= 0 else None for c in plain_codes] == [h or None for h in hosts]
