"""``query --batch --engine spark``: the stored fingerprints scanned by Spark tasks on a real
``local[2]`` cluster, giving exactly the local batch query's rows."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from neardup.engine.query import SparkOptions, batch_query
from neardup.engine.spark.query import chunk_size, failure_line, merge_pairs
from neardup.engine.spark.session import spark_session
from neardup.errors import ConfigError, CorruptDataError, NeardupError, OutputError
from neardup.sources import open_sources
from neardup.store import open_store
from test_batch_query import (
    STORED,
    Corpus,
    build_corpus,
    local_report,
    one_by_one,
    query_inputs,
    rows_of,
)

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytest.importorskip("pyspark")

SRC = Path(__file__).resolve().parents[1] / "src"
PANDAS_NOTICE = "ignore:PySpark does not yet fully support pandas:FutureWarning"
pytestmark = pytest.mark.filterwarnings(PANDAS_NOTICE)


@pytest.fixture(scope="module")
def spark() -> Iterator[SparkSession]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYSPARK_PYTHON", sys.executable)
        try:
            with spark_session("local[2]", 4, {"spark.ui.showConsoleProgress": "false"}) as s:
                s.sparkContext.setLogLevel("ERROR")
                yield s
        except ConfigError as error:
            pytest.skip(f"no Spark here: {error}")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Corpus:
    return build_corpus(tmp_path_factory.mktemp("spark"), shared_data)


@pytest.mark.slow
@pytest.mark.parametrize("partitions", [1, 3, 8])
def test_spark_equals_local_on_every_row(corpus: Corpus, spark: SparkSession,
                                         partitions: int) -> None:
    inputs = query_inputs(corpus)
    local = local_report(corpus, inputs)
    with open_store(corpus.store, read_only=True) as store:
        remote = batch_query(store, open_sources(inputs), engine="spark",
                             spark=SparkOptions(partitions=partitions), session=spark)
    assert remote.matches == local.matches
    assert len(remote.matches) > 50
    assert {**remote.counts(), "engine": "local"} == local.counts()


@pytest.mark.slow
def test_spark_reads_every_segment_and_the_insert_log(corpus: Corpus, spark: SparkSession,
                                                      tmp_path: Path) -> None:
    """A store of several segments plus unflushed rows: every slice and the log are scanned."""
    store_dir = tmp_path / "layered.store"
    paths = [str(corpus.warc / name) for name in STORED]
    with open_store(store_dir) as store:
        store.add(open_sources([paths[1]]))
        store.flush()
        store.add(itertools.islice(open_sources([paths[0]]), 5))
        store.flush()                   # a second, smaller segment: not merged into the first
        store.add(open_sources([str(corpus.planted)]))         # left in the insert log
    inputs = query_inputs(corpus)
    with open_store(store_dir, read_only=True) as store:
        assert len(store.segments) > 1 and store.index.delta_size > 0
        local = batch_query(store, open_sources(inputs))
        remote = batch_query(store, open_sources(inputs), engine="spark",
                             spark=SparkOptions(partitions=5), session=spark)
    assert remote.matches == local.matches
    assert rows_of(local.matches) == one_by_one(store_dir, inputs, 3)
    assert any("planted.example" in (m.url or "") for m in remote.matches)


@pytest.mark.slow
def test_a_segment_damaged_under_the_tasks_is_one_error_naming_it(
        corpus: Corpus, spark: SparkSession, tmp_path: Path) -> None:
    copy = tmp_path / "copy.store"
    shutil.copytree(corpus.store, copy)
    with open_store(copy, read_only=True) as store:
        listing = next(copy.glob("segments/*/segment.json"))
        listing.write_bytes(listing.read_bytes() + b" ")
        with pytest.raises(CorruptDataError) as caught:
            batch_query(store, open_sources([str(corpus.planted)]), engine="spark",
                        session=spark)
    assert str(caught.value) == f"{listing}: does not match the manifest (truncated or altered)"


def _neardup(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("PYSPARK_PYTHON", None)
    return subprocess.run([sys.executable, "-W", PANDAS_NOTICE, "-c",
                           "from neardup.cli.main import main; main()", *args],
                          capture_output=True, text=True, env=env, check=False, timeout=600)


@pytest.mark.slow
def test_cli_on_spark_prints_the_local_rows(corpus: Corpus) -> None:
    inputs = query_inputs(corpus)
    done = _neardup("query", "--store", str(corpus.store), "--batch", *inputs, "--engine",
                    "spark", "--spark-master", "local[2]", "--partitions", "3", "--json",
                    "--workers", "1")
    assert done.returncode == 0, done.stderr[-2000:]
    body = json.loads(done.stdout)
    assert body["engine"] == "spark"
    assert body["rows"] == [m.as_dict() for m in local_report(corpus, inputs).matches]


@pytest.mark.slow
def test_cli_with_a_bad_master_is_one_line(corpus: Corpus) -> None:
    done = _neardup("query", "--store", str(corpus.store), "--batch", str(corpus.planted),
                    "--engine", "spark", "--spark-master", "nowhere://x")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith("neardup: error: Spark could not start on master 'nowhere://x'")


def test_merge_removes_repeats_and_sorts() -> None:
    def part(q: list[int], d: list[int], h: list[int]) -> tuple[str, object, object, object]:
        return ("ok", np.array(q), np.array(d), np.array(h))

    merged = merge_pairs([part([2, 0], [5, 9], [1, 3]), part([0, 2], [9, 4], [3, 0]),
                          part([], [], [])])
    assert merged.query.tolist() == [0, 2, 2]
    assert merged.id.tolist() == [9, 4, 5]
    assert merged.distance.tolist() == [3, 0, 1]


def test_a_task_error_is_raised_as_its_line() -> None:
    with pytest.raises(CorruptDataError, match=r"^/s/x\.npy: missing$"):
        merge_pairs([("error", "CorruptDataError", "/s/x.npy: missing", None)])
    with pytest.raises(OutputError, match=r"^/s: disk full$"):
        merge_pairs([("error", "OutputError", "/s: disk full", None)])
    with pytest.raises(NeardupError, match=r"^/s: odd$"):
        merge_pairs([("error", "NotAnError", "/s: odd", None)])


def test_slices_cover_the_store_within_bounds() -> None:
    assert chunk_size(10, 3) == 4
    assert chunk_size(0, 3) == 1
    assert chunk_size(10**9, 2) == 1 << 20


def test_a_failed_job_is_named_by_the_workers_error() -> None:
    trace = ("An exception was thrown from the Python worker:\nTraceback (most recent call "
             "last):\n  File \"x.py\", line 1\nModuleNotFoundError: No module named 'neardup'\n")
    assert failure_line(RuntimeError(trace)) == "ModuleNotFoundError: No module named 'neardup'"
    assert failure_line(RuntimeError("lost executor 1\nmore")) == "lost executor 1"
    assert failure_line(RuntimeError("")) == "RuntimeError"
