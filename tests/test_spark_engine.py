"""``dedup --engine spark`` on a real local[2] Spark gives exactly the local engine's outputs:
pair by pair, cluster by cluster, survivor by survivor, with the same source counts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from corpora import planted_texts, text_rows, vocabulary, write_jsonl
from neardup.config import DedupConfig
from neardup.engine import EngineOptions, run_engine
from neardup.errors import SourceError
from runs import assert_same_tables, summary_facts

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytest.importorskip("pyspark", reason="the spark extra (PySpark) is not installed")

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
WARC = SHARED / "warc"
PAGES = SHARED / "html" / "trafilatura-eval" / "pages"
METHODS = ("simhash", "minhash", "sketch", "chunks", "oph")
needs_java = pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
                                reason="no Java runtime for Spark")


def assert_same(spark: SparkSession, inputs: list[str], config: DedupConfig, tmp: Path,
                chunk_docs: int = 10_000, compact: bool = False) -> dict[str, Any]:
    """Run both engines (Spark's with a work directory of token sequences when ``compact``);
    every table and the summary (but timings and engine) must be equal."""
    from neardup.engine.spark.run import run_in_session

    run_engine(inputs, tmp / "local", config,
               EngineOptions(work=tmp / "local-work", chunk_docs=chunk_docs))
    summary = run_in_session(spark, inputs, tmp / "spark", config,
                             EngineOptions(work=tmp / "spark-work", chunk_docs=chunk_docs,
                                           compact_sets=compact))
    assert_same_tables(tmp / "spark", tmp / "local", types=True)
    assert summary_facts(tmp / "spark") == summary_facts(tmp / "local")
    assert summary["engine"]["executor"] == "spark"
    return summary


def _warc_inputs() -> list[str]:
    if not WARC.is_dir():
        pytest.skip(f"shared data absent: {WARC}")
    return sorted(str(path) for path in [*WARC.iterdir(), *(WARC / "malformed").iterdir()]
                  if path.is_file())


@needs_java
@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_every_warc_file_and_the_trafilatura_pages(spark: SparkSession, tmp_path: Path,
                                                   method: str) -> None:
    if not PAGES.is_dir():
        pytest.skip(f"shared data absent: {PAGES}")
    inputs = [*_warc_inputs(), str(PAGES)]
    summary = assert_same(spark, inputs, DedupConfig(method=method), tmp_path, chunk_docs=300)
    assert summary["documents"] > 1000
    assert summary["sources"]["errors"], "the malformed files are counted, not fatal"
    assert summary["clusters"] > 0


@needs_java
@pytest.mark.slow
def test_spark_with_a_compact_work_directory_gives_the_local_tables(spark: SparkSession,
                                                                   tmp_path: Path) -> None:
    """Spark's tasks write partitions of token sequences (both views of each page) and its
    stages read them: the local engine's tables (stored sets) come out."""
    summary = assert_same(spark, _warc_inputs(), DedupConfig(method="minhash"), tmp_path,
                          chunk_docs=300, compact=True)
    assert summary["near"]["verified"] > 0
    partitions = [p for p in (tmp_path / "spark-work" / "fingerprint").iterdir()
                  if (p / "layout.json").exists()]
    assert partitions and all((p / "sequences.npy").exists() and not (p / "shingles.npy").exists()
                              and (p / "article" / "sequences.npy").exists() for p in partitions)


def _generated(folder: Path, documents: int, files: int, seed: int) -> list[str]:
    """JSONL files of short random texts with exact copies, case variants and near-copies."""
    texts = planted_texts(documents, seed, vocabulary=vocabulary(2000), lengths=(40, 90),
                          exact=0.1, upper=0.05, near=0.2, edits=lambda rng, _: rng.randint(1, 3))
    rows: list[dict[str, Any] | str] = [*text_rows(texts)]
    rows.insert(3 * files, "{not json")  # the first file's fourth line: skipped and counted
    return write_jsonl(folder, rows, files)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return _generated(tmp_path_factory.mktemp("corpus"), 20_000, 3, seed=12)


@needs_java
@pytest.mark.slow
@pytest.mark.parametrize("method", METHODS)
def test_a_generated_corpus_of_20000_documents(spark: SparkSession, corpus: list[str],
                                               tmp_path: Path, method: str) -> None:
    summary = assert_same(spark, corpus, DedupConfig(method=method, keep="longest"), tmp_path,
                          chunk_docs=2500)
    assert summary["documents"] == 20_000
    assert summary["sources"]["skipped"], "the bad line is counted"
    assert summary["duplicates"] > 1000


@pytest.mark.slow
@needs_java
def test_a_failed_spark_task_is_one_line_naming_the_cause(spark: SparkSession) -> None:
    from neardup.engine.spark.failure import failure_line, is_spark_error

    def unreadable(path: str) -> int:
        raise SourceError(path, "Permission denied")

    with pytest.raises(Exception) as caught:
        spark.sparkContext.parallelize(["/data/crawl-7.warc.gz"], 1).map(unreadable).collect()
    assert is_spark_error(caught.value)
    line = failure_line(caught.value)
    assert line == "Spark task failed: SourceError: /data/crawl-7.warc.gz: Permission denied"


def _cli(arguments: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from neardup.cli.main import main; main()", *arguments]
    return subprocess.run(command, capture_output=True, text=True, env=env, timeout=300,
                          check=False)


def test_without_java_the_spark_engine_is_one_line(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "one two three"}) + "\n")
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)
    done = _cli(["dedup", str(source), "--out", str(tmp_path / "out"), "--engine", "spark",
                 "--quiet"], env)
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert "Java runtime" in lines[0]


def test_an_unreadable_input_is_one_line_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "gone.warc.gz"
    done = _cli(["dedup", str(missing), "--out", str(tmp_path / "out"), "--engine", "spark",
                 "--quiet"], dict(os.environ))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert str(missing) in lines[0] and "no such file" in lines[0]
