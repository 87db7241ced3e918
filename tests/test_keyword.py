"""The keyword-vector method (SMFA's "TW" baseline): vectors, cosine, dedup, engine, evaluate."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from corpora import write_corpus, write_pages
from neardup.cli.main import cli
from neardup.config import DedupConfig, KeywordConfig
from neardup.engine import EngineOptions
from neardup.errors import ConfigError
from neardup.fingerprints.keywords import Keywords, cosine, pair_cosines
from test_engine import DATA, assert_same_run, needs_data


def test_keywords_are_the_most_frequent_terms_without_stop_words() -> None:
    keywords = Keywords(KeywordConfig(keywords=2))
    vector = keywords.of_canonical(b"the cat and the cat and the dog and a bird cat dog")
    small = Keywords(KeywordConfig(keywords=2, stop_words=None))
    assert vector.terms.size == 2
    assert np.isclose(np.dot(vector.weights, vector.weights), 1.0)
    cat_dog = keywords.of_canonical(b"cat cat cat dog dog")  # the same two keywords, same tf
    assert np.array_equal(vector.terms, cat_dog.terms)
    assert cosine(vector, cat_dog) == pytest.approx(1.0)
    assert small.of_canonical(b"the the the cat").terms.size == 2  # stop words kept
    assert not np.array_equal(small.of_canonical(b"the the the cat").terms, vector.terms)


def test_cosine_of_identical_disjoint_and_partial_vectors() -> None:
    keywords = Keywords()
    a = keywords.of_canonical(b"alpha beta gamma delta")
    assert cosine(a, a) == pytest.approx(1.0)
    assert cosine(a, keywords.of_canonical(b"epsilon zeta")) == 0.0
    assert cosine(a, keywords.of_canonical(b"alpha beta")) == pytest.approx(2 / np.sqrt(8))
    assert cosine(a, keywords.of_canonical(b"")) == 0.0
    texts = [b"alpha beta", b"beta gamma gamma", b"", b"alpha beta gamma delta epsilon"]
    vectors = [keywords.of_canonical(t) for t in texts]
    first, second = np.array([0, 0, 1, 2, 3]), np.array([1, 3, 3, 0, 1])
    expected = [cosine(vectors[i], vectors[j]) for i, j in zip(first, second, strict=True)]
    assert pair_cosines(vectors, first, second) == pytest.approx(expected)


def test_stemming_option_merges_inflections() -> None:
    stemmed = Keywords(KeywordConfig(stemming="english"))
    assert cosine(stemmed.of_canonical(b"running cats"), stemmed.of_canonical(b"run cat")) \
        == pytest.approx(1.0)
    with pytest.raises(ConfigError, match="keywords=0"):
        KeywordConfig(keywords=0)


def test_dedup_keyword_finds_the_planted_near_copy(tmp_path: Path) -> None:
    write_pages(tmp_path / "pages")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["dedup", str(tmp_path / "pages"), "--out", str(out),
                                      "--method", "keyword", "--quiet", "--workers", "1"])
    assert result.exit_code == 0, result.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["config"]["keyword"].endswith(":cos0.9")
    pairs = pq.read_table(out / "pairs.parquet").to_pylist()
    docs = {r["doc"]: Path(r["source"]).name
            for r in pq.read_table(out / "documents.parquet").to_pylist()}
    assert [(docs[p["a"]], docs[p["b"]], p["method"]) for p in pairs] == \
        [("page0.html", "page6.html", "keyword")]
    assert 0.9 <= pairs[0]["estimate"] <= 1.0


def test_engine_equals_memory_for_keyword_on_generated_corpora(tmp_path: Path) -> None:
    inputs = write_corpus(tmp_path / "corpus", 150, 3, seed=5)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=17, bucket_bytes=1024)
    summary = assert_same_run(inputs, DedupConfig(method="keyword"), tmp_path, options)
    assert summary["duplicates"] > 0


@needs_data
@pytest.mark.slow
def test_engine_equals_memory_for_keyword_on_shared_warcs(tmp_path: Path) -> None:
    inputs = sorted(str(p) for p in DATA.glob("*.gz"))
    options = EngineOptions(work=tmp_path / "work", chunk_docs=37, bucket_bytes=2048)
    summary = assert_same_run(inputs, DedupConfig(method="keyword"), tmp_path, options)
    assert summary["near"]["verified"] > 0


def test_evaluate_keyword_scorer() -> None:
    result = CliRunner().invoke(cli, ["evaluate", "--synthetic", "40", "--method",
                                      "keyword,jaccard", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    keyword = report["methods"]["keyword"]
    assert keyword["rule"] == "keyword-vector cosine >= t"
    assert keyword["auc"] > 0.5
