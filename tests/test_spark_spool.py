"""The dealt line blocks of a Spark run reach the tasks through the work directory: the task
description the driver's JVM holds carries no line, the task reads the lines from the file, and
the file stays until the driver removes it (a retried attempt reads it again)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from neardup.config import DedupConfig
from neardup.engine.fingerprint import BlockTask, FingerprintJob
from neardup.sources.lineblocks import LineBlock
from neardup.sources.splits import InputSplit

pytest.importorskip("pyspark", reason="the spark extra (PySpark) is not installed")


def test_a_dealt_block_goes_through_a_file(tmp_path: Path) -> None:
    from neardup.engine.spark.fingerprint import _spooled, _unspooled

    lines = b'{"id": "a", "text": "one two"}\n{"id": "b", "text": "three four"}\n'
    job = FingerprintJob(DedupConfig(), InputSplit("big.jsonl", True, 3), 0, tmp_path, 2, "html")
    task = _spooled(BlockTask(job, LineBlock(5, 11, lines)))
    assert task.block.data == b"" and task.block.spool is not None
    spool = Path(task.block.spool)
    assert spool.parent == tmp_path / "fingerprint" / "lines" and spool.read_bytes() == lines
    seen: list[Any] = []
    for _ in range(2):  # a first attempt, then a retried one
        _unspooled(seen.append, task)
    assert [(t.block.index, t.block.first, t.block.data, t.block.spool) for t in seen] == \
        [(5, 11, lines, None)] * 2
    assert spool.exists()
    whole = FingerprintJob(DedupConfig(), InputSplit("a.warc.gz", True, 0), 1, tmp_path, 2, "html")
    assert _spooled(whole) is whole  # a whole-file split carries no lines
