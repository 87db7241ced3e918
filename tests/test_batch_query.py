"""``query --batch`` in this process: Manku's batch mode against a store built by ``index``.

The batch query must give, for every new document, exactly what the one-by-one ``Store.query``
gives (stored document, distance, relation), on real WARC files, planted near-copies and
malformed inputs; a missing or damaged store is a one-line error naming the file.
"""

from __future__ import annotations

import html
import json
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import click
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.demo.warcwriter import WarcWriter
from neardup.engine.query import BatchQueryReport, batch_query, query_prints
from neardup.errors import ConfigError, CorruptDataError
from neardup.methods.fingerprinter import document_text
from neardup.sources import open_sources
from neardup.store import open_store
from neardup.store.batch import BatchMatch, QueryPrint, local_pairs, resolve

STORED = ("commoncrawl-2015-excerpt.warc.gz", "clueweb12-one-shop-site.warc.gz",
          "dupes-revisits.warc.gz")
QUERIED = ("commoncrawl-2020-excerpt.warc.gz", "iana-revisits.warc.gz")
DATE = datetime(2024, 5, 1, tzinfo=UTC)
EDIT_EVERY = 40


@dataclass(frozen=True)
class Corpus:
    store: Path
    warc: Path
    planted: Path
    """Near-copies of stored pages: their text re-wrapped, and with every 40th word changed."""
    malformed: Path
    originals: list[str]
    """The URL of the stored page each planted pair copies."""


def run(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args))


def _planted_html(text: str, every: int | None) -> bytes:
    words = text.split()
    if every is not None:
        words = [f"planted{i}" if i % every == every - 1 else w for i, w in enumerate(words)]
    return f"<html><body><p>{html.escape(' '.join(words))}</p></body></html>".encode()


def write_planted(stored: list[Path], path: Path, count: int = 24) -> list[str]:
    """A WARC of near-copies of the first ``count`` stored pages with text; their URLs."""
    docs = [d for d in open_sources([str(p) for p in stored]) if d.revisit_of is None]
    chosen = [(d.url or "", t) for d, t in ((d, document_text(d)) for d in docs)
              if len(t.split()) > 50][:count]
    with WarcWriter(path, seed=7) as warc:
        for i, (_, text) in enumerate(chosen):
            warc.write_response(f"http://planted.example/same/{i}", _planted_html(text, None),
                                DATE)
            warc.write_response(f"http://planted.example/edited/{i}",
                                _planted_html(text, EDIT_EVERY), DATE)
    return [url for url, _ in chosen]


def build_corpus(root: Path, data: Path) -> Corpus:
    warc = data / "warc"
    store = root / "pages.store"
    result = run("index", *(str(warc / name) for name in STORED), "--store", str(store),
                 "--workers", "1")
    assert result.exit_code == 0, result.output
    planted = root / "planted.warc.gz"
    originals = write_planted([warc / name for name in STORED], planted)
    return Corpus(store, warc, planted, warc / "malformed", originals)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("batch"), shared_data)


def query_inputs(corpus: Corpus) -> list[str]:
    return [*(str(corpus.warc / name) for name in QUERIED), str(corpus.planted),
            str(corpus.malformed / "*")]


def one_by_one(store_dir: Path, inputs: list[str], k: int) -> list[tuple[int, int, int, str]]:
    """(query position, doc, distance, relation) from ``Store.query``, document by document,
    without the per-host template rule (the batch mode reports the Hamming matches as stored)."""
    rows = []
    with open_store(store_dir, read_only=True) as store:
        docs = [d for d in open_sources(inputs) if d.revisit_of is None]
        for position, doc in enumerate(docs):
            matches = store.query(doc, k, templates=False)
            rows += [(position, m.doc, m.distance, m.relation) for m in matches]
    return sorted(rows)


def rows_of(matches: list[BatchMatch]) -> list[tuple[int, int, int, str]]:
    return [(m.query, m.doc, m.distance, m.relation) for m in matches]


def local_report(corpus: Corpus, inputs: list[str], k: int | None = None) -> BatchQueryReport:
    with open_store(corpus.store, read_only=True) as store:
        return batch_query(store, open_sources(inputs), k=k)


@pytest.mark.parametrize("k", [0, 3])
def test_batch_equals_the_one_by_one_query(corpus: Corpus, k: int) -> None:
    inputs = query_inputs(corpus)
    report = local_report(corpus, inputs, k)
    assert rows_of(report.matches) == one_by_one(corpus.store, inputs, k)
    assert report.k == k
    assert all(m.distance <= k or m.relation == "identical" for m in report.matches)


def test_planted_copies_find_their_originals(corpus: Corpus) -> None:
    report = local_report(corpus, [str(corpus.planted)])
    found = {(m.query_url, m.url): m for m in report.matches}
    with open_store(corpus.store, read_only=True) as store:
        prints = query_prints(store.config, open_sources([str(corpus.planted)]))
        stored = {p.url: p for p in query_prints(store.config, open_sources(
            [str(corpus.warc / name) for name in STORED]))}
    near = 0
    for i, original in enumerate(corpus.originals):
        same = found[(f"http://planted.example/same/{i}", original)]
        assert (same.relation, same.distance) == ("lexical", 0)
        edited_url = f"http://planted.example/edited/{i}"
        edited = next(p for p in prints if p.url == edited_url)
        distance = (edited.simhash ^ stored[original].simhash).bit_count()
        match = found.get((edited_url, original))
        assert (match is not None) == (distance <= 3), (i, distance)
        if match is not None:
            assert (match.relation, match.distance) == ("near", distance)
            near += distance > 0
    assert near >= 5


def test_malformed_inputs_are_skipped_and_counted(corpus: Corpus) -> None:
    inputs = [str(corpus.malformed / "*")]
    report = local_report(corpus, inputs)
    counts = report.counts()
    reader = open_sources(inputs)
    expected = sum(1 for d in reader if d.revisit_of is None)
    assert report.queries == expected
    assert counts["skipped_records"] == sum(reader.stats.skipped.values()) > 0
    assert rows_of(report.matches) == one_by_one(corpus.store, inputs, 3)


def test_identical_bytes_match_even_without_text(corpus: Corpus) -> None:
    """A query with no tokens matches the stored copies of its bytes, as ``Store.query``."""
    with open_store(corpus.store, read_only=True) as store:
        row = next(r for r in (store.document(d) for d in range(len(store)))
                   if r is not None and r["tokens"] == 0)
        query = QueryPrint(0, "q", None, "", 0, int(str(row["identical"]), 16), 0, 0)
        matches = resolve(store, [query], local_pairs(store, [query]))
    assert row["doc"] in [m.doc for m in matches]
    assert {m.relation for m in matches} == {"identical"}


def test_queries_are_numbered_in_input_order_whatever_the_workers(corpus: Corpus) -> None:
    inputs = query_inputs(corpus)
    with open_store(corpus.store, read_only=True) as store:
        one = query_prints(store.config, open_sources(inputs), workers=1)
        two = query_prints(store.config, open_sources(inputs), workers=2)
    assert one == two
    assert [p.position for p in one] == list(range(len(one)))


def test_k_above_the_store_is_refused(corpus: Corpus) -> None:
    with open_store(corpus.store, read_only=True) as store, pytest.raises(ConfigError,
                                                                           match="k=4"):
        batch_query(store, open_sources([str(corpus.planted)]), k=4)


def test_cli_writes_the_matches_and_the_counts(corpus: Corpus, tmp_path: Path) -> None:
    inputs = query_inputs(corpus)
    expected = [m.as_dict() for m in local_report(corpus, inputs).matches]
    jsonl, parquet = tmp_path / "m.jsonl", tmp_path / "m.parquet"
    for out in (jsonl, parquet):
        result = run("query", "--store", str(corpus.store), "--batch", *inputs, "--out",
                     str(out), "--workers", "1")
        assert result.exit_code == 0, result.output
        assert f"{len(expected):,} matches" in result.output
    assert [json.loads(line) for line in jsonl.read_text().splitlines()] == expected
    assert pq.read_table(parquet).to_pylist() == expected
    shown = run("query", "--store", str(corpus.store), "--batch", *inputs, "--json",
                "--workers", "1")
    body = json.loads(shown.output)
    assert body["rows"] == expected and body["matches"] == len(expected)
    assert body["skipped_records"] > 0 and body["engine"] == "local"


def test_cli_refuses_batch_with_a_single_query_option(corpus: Corpus) -> None:
    result = run("query", "--store", str(corpus.store), "--batch", "--text", "x")
    assert result.exit_code == 2 and "--batch takes input FILES" in result.output
    result = run("query", "--store", str(corpus.store), str(corpus.planted), "--engine", "spark")
    assert result.exit_code == 2 and "go with --batch" in result.output


def test_missing_store_is_one_line(corpus: Corpus, tmp_path: Path) -> None:
    result = run("query", "--store", str(tmp_path / "none"), "--batch", str(corpus.planted))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"neardup: error: {tmp_path / 'none'}: no such store (manifest.json missing)"]


def damaged_copy(corpus: Corpus, root: Path) -> tuple[Path, Path]:
    """A copy of the store with one byte of a segment's fingerprints flipped; and that file."""
    copy = root / "damaged.store"
    shutil.copytree(corpus.store, copy)
    target = next(copy.glob("segments/*/fingerprints.npy"))
    data = bytearray(target.read_bytes())
    data[-3] ^= 0x10
    target.write_bytes(bytes(data))
    return copy, target


def test_damaged_store_is_one_line_naming_the_file(corpus: Corpus, tmp_path: Path) -> None:
    copy, target = damaged_copy(corpus, tmp_path)
    result = run("query", "--store", str(copy), "--batch", str(corpus.planted))
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"neardup: error: {target}: checksum mismatch (altered)"]
    with pytest.raises(CorruptDataError, match=r"fingerprints\.npy"):
        open_store(copy, read_only=True)
