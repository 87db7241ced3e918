"""Spark's fixed costs that are neardup's: the executors' Python daemon loads the stages' modules
and kernels once, before it forks its workers, without a byte on its standard output (which
carries the daemon's port to the JVM); the fingerprint tasks of a wave are Spark tasks of their
own, so that a free core takes the next one."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from neardup.config import DedupConfig
from neardup.engine.fingerprint import FingerprintJob
from neardup.sources.splits import InputSplit

pytest.importorskip("pyspark", reason="the spark extra (PySpark) is not installed")

WARMED = """
import sys
from neardup.engine.spark.daemon import warm
from neardup.text import compiled
warm()
near = "neardup.engine.spark.near" in sys.modules
sys.stderr.write(f"compiled={compiled._bought[0]} near={near}")
"""


def test_the_daemon_warms_up_silently() -> None:
    source = str(Path(__file__).resolve().parents[1] / "src")
    done = subprocess.run([sys.executable, "-c", WARMED], capture_output=True, text=True,
                          env={"PYTHONPATH": source}, check=True)
    assert done.stdout == ""
    assert "compiled=True near=True" in done.stderr


class _Slices:
    """A stand-in for a SparkContext that records how each wave was sliced."""

    defaultParallelism = 2

    def __init__(self) -> None:
        self.waves: list[tuple[int, int]] = []

    def parallelize(self, items: list[Any], slices: int) -> _Slices:
        self.waves.append((len(items), slices))
        self.items = items
        return self

    def map(self, function: Callable[[Any], Any]) -> _Slices:
        self.items = [function(item) for item in self.items]
        return self

    def collect(self) -> list[Any]:
        return self.items


def test_each_fingerprint_task_is_a_spark_task(tmp_path: Path) -> None:
    from neardup.engine.spark.fingerprint import spark_mapper

    jobs = [FingerprintJob(DedupConfig(), InputSplit(f"{n}.warc.gz", True, n), n, tmp_path, 2,
                           "html") for n in range(9)]
    context = _Slices()
    mapped = list(spark_mapper(context)(2)(lambda job: job.index, iter(jobs)))  # type: ignore[arg-type]
    assert mapped == list(range(9))
    assert context.waves == [(9, 9)]
