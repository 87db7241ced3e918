"""``dedup --engine spark --spark-master spark://127.0.0.1:PORT`` on a real standalone cluster (a
master and two workers of one core and 1 GiB each, started with PySpark's ``spark-class``)
gives the local engine's tables; also when an executor is SIGKILLed mid-run, and then the
summary says what Spark retried.

The driver runs as the CLI does, in its own process, with ``spark.driver.memory 512m`` and
``spark.driver.maxResultSize 1m`` (Spark's ``spark-defaults.conf``, through
``SPARK_CONF_DIR``): Spark aborts any action whose results exceed 1 MiB, and the corpus's text
(about 14 MB) and shingle sets (about 19 MB) are each over 10 times that, so no stage may
collect per-document data to the driver (results above the bound fail the run).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from corpora import planted_texts, text_rows, vocabulary, write_jsonl
from neardup.config import DedupConfig
from neardup.engine import EngineOptions, run_engine
from runs import assert_same_tables, summary_facts
from standalone import Standalone, daemon_environment, standalone_cluster

pytest.importorskip("pyspark", reason="the spark extra (PySpark) is not installed")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("java") is None and not os.environ.get("JAVA_HOME"),
                       reason="no Java runtime for Spark"),
]

DOCUMENTS = 40_000
FILES = 3
CHUNK_DOCS = 2_500
DRIVER_CONF = {"spark.driver.memory": "512m", "spark.driver.maxResultSize": "1m",
               "spark.executor.memory": "512m"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Standalone]:
    with standalone_cluster(tmp_path_factory.mktemp("standalone")) as running:
        yield running


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """JSONL files of short texts with exact copies, case variants and near-copies: three files
    of about 5 MB for two cores, so each is dealt to the tasks in line blocks."""
    texts = planted_texts(DOCUMENTS, 30, vocabulary=vocabulary(3000), lengths=(40, 90),
                          exact=0.1, upper=0.05, near=0.2, edits=lambda rng, _: rng.randint(1, 3))
    return write_jsonl(tmp_path_factory.mktemp("corpus"), text_rows(texts), FILES)


@pytest.fixture(scope="module")
def local_run(corpus: list[str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("local")
    run_engine(corpus, folder / "out", DedupConfig(method="minhash"),
               EngineOptions(work=folder / "work", chunk_docs=CHUNK_DOCS))
    return folder / "out"


def _driver(cluster: Standalone, corpus: list[str], folder: Path) -> subprocess.Popen[str]:
    """The CLI's ``dedup`` on the cluster, in its own process (a driver of 512 MiB)."""
    conf = folder / "conf"
    conf.mkdir()
    (conf / "spark-defaults.conf").write_text(
        "".join(f"{key} {value}\n" for key, value in DRIVER_CONF.items()))
    env = {**daemon_environment(folder), "SPARK_CONF_DIR": str(conf)}
    command = [sys.executable, "-c", "from neardup.cli.main import main; main()", "dedup",
               *corpus, "--out", str(folder / "out"), "--work", str(folder / "work"),
               "--method", "minhash", "--partition-docs", str(CHUNK_DOCS), "--engine", "spark",
               "--spark-master", cluster.master, "--quiet"]
    return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)


def _finish(driver: subprocess.Popen[str]) -> None:
    """Wait for the driver (killed with its process group if the test gives up on it)."""
    try:
        _, errors = driver.communicate(timeout=600)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    assert driver.returncode == 0, errors[-3000:]


def _summary(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads((folder / "out" / "summary.json").read_text())
    return found


def _assert_same(folder: Path, local_run: Path) -> dict[str, Any]:
    assert_same_tables(folder / "out", local_run, types=True)
    assert summary_facts(folder / "out") == summary_facts(local_run)
    summary = _summary(folder)
    assert summary["engine"]["executor"] == "spark"
    assert summary["engine"]["spark"]["master"].startswith("spark://127.0.0.1:")
    return summary


def test_the_cluster_gives_the_local_tables(cluster: Standalone, corpus: list[str],
                                            local_run: Path, tmp_path: Path) -> None:
    assert [(w["cores"], w["memory"]) for w in cluster.alive_workers()] == [(1, 1024)] * 2
    _finish(_driver(cluster, corpus, tmp_path))
    summary = _assert_same(tmp_path, local_run)
    assert summary["documents"] == DOCUMENTS and summary["duplicates"] > 5_000
    assert summary["engine"]["spark"]["parallelism"] == 2  # both workers' cores
    lines = tmp_path / "work" / "fingerprint" / "lines"
    assert lines.is_dir() and not any(lines.iterdir())  # blocks went through it, then removed
    retries = summary["engine"]["spark"]["retries"]
    assert retries["executors_lost"] == 0 and retries["failed_tasks"] == 0
    assert retries["stages"] > 0
    components = summary["engine"]["spark"]["components"]
    assert components["pairs"] > 0 and components["rounds"] >= 0


def _driver_heap(driver: subprocess.Popen[str]) -> str:
    """The ``-Xmx`` option of the driver's JVM (started by PySpark in the CLI's process
    group)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and os.getpgid(int(entry.name)) == driver.pid:
            arguments = (entry / "cmdline").read_bytes().split(b"\0")
            if b"org.apache.spark.deploy.SparkSubmit" in arguments:
                return next(a.decode() for a in arguments if a.startswith(b"-Xmx"))
    raise AssertionError("no driver JVM in the CLI's process group")


def _first_partition(work: Path, driver: subprocess.Popen[str]) -> None:
    """Wait until the fingerprint stage has published its first partition (``s<file>-c<block>``):
    the executors are then running its tasks."""
    deadline = time.monotonic() + 300
    while not any(path.is_dir() and not path.name.endswith("tmp")
                  for path in (work / "fingerprint").glob("s*-c*")):
        assert driver.poll() is None, "the run ended before any partition was written"
        assert time.monotonic() < deadline, "no partition written in 300 s"
        time.sleep(0.2)


def test_an_executor_killed_mid_run_changes_nothing(cluster: Standalone, corpus: list[str],
                                                    local_run: Path, tmp_path: Path) -> None:
    driver = _driver(cluster, corpus, tmp_path)
    _first_partition(tmp_path / "work", driver)
    assert _driver_heap(driver) == "-Xmx512m"  # spark-defaults.conf reached the driver
    executors = cluster.executor_pids()
    assert len(executors) == 2, executors
    os.kill(executors[0], signal.SIGKILL)
    _finish(driver)
    summary = _assert_same(tmp_path, local_run)
    retries = summary["engine"]["spark"]["retries"]
    assert retries["executors_lost"] == 1, retries
    assert "137" in retries["lost"][0]["reason"], retries  # SIGKILL: exit status 128 + 9
    assert retries["failed_tasks"] >= 1, retries
