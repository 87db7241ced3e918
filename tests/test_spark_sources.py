"""Inputs of ``dedup --engine spark`` given as URIs and globs, read through Spark (real local[2]):
WARC files whole per task, JSONL split by Hadoop, Parquet by Spark's reader. Each run must give
the local engine's tables and summary on the same files (the sources named ``file:...``)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import signal
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from corpora import planted_texts, vocabulary
from neardup.config import DedupConfig
from neardup.engine import EngineOptions, run_engine
from neardup.errors import ConfigError, SourceError
from runs import TIMINGS, assert_same_tables, summary_facts

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytest.importorskip("pyspark", reason="the spark extra (PySpark) is not installed")

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
WARC = SHARED / "warc"
SPLIT_BYTES = 1 << 16
"""Hadoop's largest input split in these tests: a JSONL file of a few hundred KB is read by
several tasks."""


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    from neardup.engine.spark.session import spark_session

    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.skip("no Java runtime for Spark")
    settings = {"spark.sql.files.maxPartitionBytes": str(SPLIT_BYTES),
                "spark.hadoop.mapreduce.input.fileinputformat.split.maxsize": str(SPLIT_BYTES)}
    with spark_session("local[2]", 4, settings) as session:
        yield session


def _local_names(value: Any, root: str) -> Any:
    """``value`` with the ``file:`` URIs under ``root`` written as the local paths."""
    if isinstance(value, str):
        return value.replace(f"file://{root}", root).replace(f"file:{root}", root)
    if isinstance(value, dict):
        return {key: _local_names(item, root) for key, item in value.items()}
    if isinstance(value, list):
        return [_local_names(item, root) for item in value]
    return value


def assert_same(spark: SparkSession, local: list[str], uris: list[str], root: Path, tmp: Path,
                config: DedupConfig, chunk_docs: int) -> dict[str, Any]:
    """The local engine on ``local`` and Spark on ``uris`` (the same files): equal tables and
    summary, once the URIs under ``root`` are written as paths."""
    from neardup.engine.spark.run import run_in_session

    run_engine(local, tmp / "local", config,
               EngineOptions(work=tmp / "local-work", chunk_docs=chunk_docs))
    summary = run_in_session(spark, uris, tmp / "spark", config,
                             EngineOptions(work=tmp / "spark-work", chunk_docs=chunk_docs))
    assert_same_tables(tmp / "spark", tmp / "local", rows=partial(_local_names, root=str(root)))
    ignored = TIMINGS | {"inputs"}
    assert _local_names(summary_facts(tmp / "spark", ignored), str(root)) == \
        _local_names(summary_facts(tmp / "local", ignored), str(root))
    assert summary["inputs"] == uris
    return summary


@pytest.mark.slow
def test_warc_files_by_glob_and_folder_uri(spark: SparkSession, tmp_path: Path) -> None:
    if not (WARC / "malformed").is_dir():
        pytest.skip(f"shared data absent: {WARC}")
    local = [f"{WARC}/*.gz", str(WARC / "malformed")]
    uris = [f"file://{WARC}/*.gz", f"file://{WARC / 'malformed'}"]
    summary = assert_same(spark, local, uris, WARC, tmp_path, DedupConfig(method="simhash"),
                          chunk_docs=100)
    assert summary["documents"] > 400
    assert summary["sources"]["errors"], "the malformed files are counted, not fatal"
    assert summary["engine"]["partitions"] > 10, "files of several blocks"
    sources = set(pq.read_table(tmp_path / "spark" / "documents.parquet").column("source")
                  .to_pylist())
    assert all(source.startswith("file:/") for source in sources)


def _texts(count: int, seed: int) -> list[str]:
    return planted_texts(count, seed, vocabulary=vocabulary(500), lengths=(30, 60), near=0.3)


def _jsonl(folder: Path, count: int) -> tuple[Path, Path]:
    """A plain and a gzipped JSONL file with bad lines (not JSON, not an object, no text),
    blank lines, CRLF endings and rows without an id."""
    lines = []
    for number, text in enumerate(_texts(count, 7)):
        row: dict[str, Any] = {"text": text, "url": f"http://h{number % 5}.example/{number}"}
        if number % 3:
            row["id"] = f"d{number}"
        lines.append(json.dumps(row) + ("\r\n" if number % 11 == 0 else "\n"))
    for at, bad in ((5, "{not json\n"), (400, "[1, 2]\n"), (777, "\n"), (901, '{"html": 3}\n'),
                    (1200, "   \n"), (640, '{"id": "fffd", "text": "a real \ufffd here"}\n'),
                    (1000, '{"id": "latin-1", "text": "caf\udce9 au lait"}\n')):
        lines.insert(at, bad)
    folder.mkdir(parents=True, exist_ok=True)
    plain, packed = folder / "plain.jsonl", folder / "packed.jsonl.gz"
    data = "".join(lines).encode("utf-8", "surrogateescape")  # one byte that is not UTF-8
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(b"".join(reversed(data.splitlines(keepends=True)))))
    return plain, packed


@pytest.mark.slow
def test_jsonl_split_across_tasks_plain_and_gzipped(spark: SparkSession, tmp_path: Path) -> None:
    plain, _ = _jsonl(tmp_path / "in", 800)
    lines = spark.sparkContext.newAPIHadoopFile(
        f"file://{plain}", "org.apache.hadoop.mapreduce.lib.input.TextInputFormat",
        "org.apache.hadoop.io.LongWritable", "org.apache.hadoop.io.Text")
    assert lines.getNumPartitions() > 2, "the plain file is read by several tasks"
    local = [str(plain), str(tmp_path / "in" / "*.gz"), str(tmp_path / "in" / "none-*.jsonl")]
    uris = [f"file://{plain}", f"file://{tmp_path}/in/*.gz", f"file://{tmp_path}/in/none-*.jsonl"]
    summary = assert_same(spark, local, uris, tmp_path, tmp_path / "runs",
                          DedupConfig(method="minhash"), chunk_docs=128)
    skipped = summary["sources"]["skipped"]
    assert skipped["json-error"] == 6 and skipped["missing-text"] == 2
    assert skipped["no-match"] == 1
    assert summary["documents"] == 1602  # with the two lines holding a real U+FFFD
    assert sum("not JSON ('utf-8' codec can't decode byte 0xe9" in line
               for line in summary["sources"]["errors"]) == 2
    assert summary["clusters"] < summary["documents"]


def _parquet(path: Path, count: int) -> None:
    """Rows with text, rows with HTML bytes instead, and bad rows (no text, empty text); small
    row groups, so that Spark reads the file in several tasks."""
    texts = _texts(count, 11)
    rows: list[dict[str, Any]] = []
    for number, text in enumerate(texts):
        row: dict[str, Any] = {"id": f"p{number}" if number % 4 else None, "text": text,
                               "html": None, "n": number, "tags": [number]}
        if number % 9 == 0:
            row["text"], row["html"] = None, f"<html><body><p>{text}</p></body></html>".encode()
        rows.append(row)
    rows[17]["text"] = rows[17]["html"] = None  # a bad row: skipped and counted
    rows[18]["text"] = ""
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=100)


@pytest.mark.slow
def test_parquet_rows_by_spark_reader_in_a_folder_uri(spark: SparkSession, tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    _parquet(folder / "rows.parquet", 1200)
    (folder / "blob.dat").write_bytes(b"\x00\x01" * 100)  # met in the walk: counted binary
    assert spark.read.parquet(f"file://{folder}/rows.parquet").rdd.getNumPartitions() > 1
    summary = assert_same(spark, [str(folder)], [f"file://{folder}"], tmp_path, tmp_path / "runs",
                          DedupConfig(method="simhash"), chunk_docs=150)
    assert summary["sources"]["skipped"] == {"binary": 1, "empty-payload": 1, "missing-text": 1}
    assert summary["documents"] == 1198


@pytest.mark.slow
def test_damaged_parquet_data_is_skipped_and_counted_as_locally(spark: SparkSession,
                                                                 tmp_path: Path) -> None:
    """Spark's reader fails on the damaged row group; the file is read again whole by one task
    with the local reader: the same documents, counts and error line, and the job goes on."""
    from test_blocks import damage_row_group

    folder = tmp_path / "in"
    folder.mkdir()
    _parquet(folder / "rows.parquet", 1200)
    damage_row_group(folder / "rows.parquet", 4)
    with pytest.raises(Exception, match=r"(?i)parquet|page|thrift"):  # Spark's own reader fails
        spark.read.parquet(f"file://{folder}/rows.parquet").collect()
    summary = assert_same(spark, [str(folder)], [f"file://{folder}"], tmp_path, tmp_path / "runs",
                          DedupConfig(method="minhash"), chunk_docs=150)
    skipped = summary["sources"]["skipped"]
    assert skipped == {"bad-record": 1, "empty-payload": 1, "missing-text": 1}
    assert summary["documents"] == 1098  # rows 400 to 499 lost, two bad rows skipped
    errors = summary["sources"]["errors"]
    assert len(errors) == 2 and "row 400: Parquet data damaged" in errors[1]
    assert errors[0].endswith("rows.parquet:17: skipped, no 'text' or 'html' string (fields "
                              "with a value: id, n); --text-field or --html-field names the "
                              "column to read")


def _shards(folder: Path, sizes: tuple[int, ...], other_schema: bool = False) -> None:
    """Parquet shards of one schema (a size 0: a file without rows), and one of another schema
    (an extra column) when asked."""
    folder.mkdir(parents=True)
    for k, count in enumerate(sizes):
        _parquet(folder / f"a{k}.parquet", max(count, 19))
        if not count:
            pq.write_table(pq.read_table(folder / f"a{k}.parquet").slice(0, 0),
                           folder / f"a{k}.parquet")
    if other_schema:
        _parquet(folder / "b.parquet", 150)
        table = pq.read_table(folder / "b.parquet")
        pq.write_table(table.append_column("lang", pa.array(["en"] * table.num_rows)),
                       folder / "b.parquet", row_group_size=100)


def _jobs_of(spark: SparkSession, group: str, run: Callable[[], Any]) -> int:
    """The number of Spark jobs ``run`` starts."""
    context = spark.sparkContext
    context.setJobGroup(group, group)
    try:
        run()
    finally:
        context.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    return len(context.statusTracker().getJobIdsForGroup(group))


@pytest.mark.slow
def test_parquet_shards_of_one_schema_share_a_job(spark: SparkSession, tmp_path: Path) -> None:
    """Six shards of one schema cost the jobs of two (not a job each); a second schema and a
    damaged shard among them are read as locally (the damaged job's files are tried alone)."""
    from test_blocks import damage_row_group

    config = DedupConfig(method="simhash")
    counts = {}
    for name, sizes in (("two", (300, 250)), ("six", (300, 250, 0, 120, 200, 90))):
        _shards(tmp_path / name, sizes)
        uri = f"file://{tmp_path / name}"
        counts[name] = _jobs_of(spark, f"shards-{name}", partial(
            assert_same, spark, [str(tmp_path / name)], [uri], tmp_path, tmp_path / f"run-{name}",
            config, 100))
    assert counts["six"] == counts["two"]
    _shards(tmp_path / "mixed", (300, 0, 200), other_schema=True)
    damage_row_group(tmp_path / "mixed" / "a2.parquet", 1)
    summary = assert_same(spark, [str(tmp_path / "mixed")], [f"file://{tmp_path / 'mixed'}"],
                          tmp_path, tmp_path / "run-mixed", config, 100)
    assert summary["sources"]["skipped"]["bad-record"] == 1
    assert summary["documents"] == 298 + 98 + 148  # rows 100 to 199 of a2 lost


@pytest.mark.slow
def test_files_named_as_hadoop_skips_them_are_read_as_locally(spark: SparkSession,
                                                              tmp_path: Path) -> None:
    """Hadoop's input formats skip names starting with _ or . even when named alone; such
    files, named explicitly, are read as the local engine reads them, whatever their format."""
    folder = tmp_path / "in"
    plain, packed = _jsonl(folder, 300)
    hidden = [plain.rename(folder / "_plain.jsonl"), packed.rename(folder / ".packed.jsonl.gz"),
              folder / "_rows.parquet"]
    _parquet(hidden[2], 400)
    with pytest.raises(Exception, match="Input path does not exist"):  # so Hadoop says
        spark.sparkContext.binaryFiles(f"file://{hidden[1]}").count()
    summary = assert_same(spark, list(map(str, hidden)), [f"file://{p}" for p in hidden],
                          tmp_path, tmp_path / "runs", DedupConfig(method="minhash"),
                          chunk_docs=100)
    assert summary["sources"]["files"] == 3
    assert summary["documents"] == 2 * 301 + 398  # each JSONL: 300 texts and a real U+FFFD
    assert "unreadable-file" not in summary["sources"]["skipped"]


@pytest.mark.slow
def test_resuming_over_a_changed_uri_input_is_refused(spark: SparkSession, tmp_path: Path) -> None:
    """A URI's size and time are part of the work directory's identity, as a local path's."""
    from neardup.engine.spark.run import run_in_session

    path = tmp_path / "in" / "docs.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps({"id": f"d{n}", "text": text}) + "\n"
                            for n, text in enumerate(_texts(40, 3))))
    options = EngineOptions(work=tmp_path / "work")
    run_in_session(spark, [f"file://{path}"], tmp_path / "out", DedupConfig(), options)
    run_in_session(spark, [f"file://{path}"], tmp_path / "out", DedupConfig(), options)  # same
    with path.open("a") as more:
        more.write(json.dumps({"id": "late", "text": "one more line"}) + "\n")
    with pytest.raises(ConfigError, match=r"another configuration \(inputs\..*docs\.jsonl"):
        run_in_session(spark, [f"file://{path}"], tmp_path / "out", DedupConfig(), options)


@pytest.mark.slow
def test_a_missing_uri_is_one_line_naming_it(spark: SparkSession, tmp_path: Path) -> None:
    from neardup.engine.spark.run import run_in_session

    missing = f"file://{tmp_path}/gone.warc.gz"
    with pytest.raises(SourceError) as caught:
        run_in_session(spark, [missing], tmp_path / "out", DedupConfig(),
                       EngineOptions(work=tmp_path / "work"))
    assert str(caught.value) == f"{missing}: no such file or directory"


@pytest.mark.slow
def test_a_lost_python_worker_is_one_line_naming_the_cause(spark: SparkSession) -> None:
    from neardup.engine.spark.failure import SparkJobError, as_job_error

    def kill_own_worker(_: int) -> int:  # shipped by value: the executor cannot import tests
        os.kill(os.getpid(), signal.SIGKILL)
        return 0

    with pytest.raises(Exception) as caught:
        spark.sparkContext.parallelize([1], 1).map(kill_own_worker).collect()
    failed = as_job_error(caught.value)  # what a run raises for it
    assert isinstance(failed, SparkJobError)
    line = str(failed)
    assert "\n" not in line
    assert line.startswith("Spark job failed: Python worker exited unexpectedly (crashed) "
                           "(task "), line
