"""A bucket is planned no larger than a block (BLOCK_BYTES) however large the memory budget, so
the engine's peak does not grow with the corpus until the budget is full; the outputs do not
depend on it."""

from __future__ import annotations

from pathlib import Path

import pytest

import neardup.engine.buckets as buckets
from corpora import write_corpus
from neardup.config import DedupConfig
from neardup.engine import EngineOptions, run_engine
from neardup.engine.buckets import BLOCK_BYTES, block_bytes, bucket_count
from neardup.engine.keystore import read_keys
from runs import assert_same_tables


def test_a_block_is_the_budget_up_to_block_bytes() -> None:
    assert block_bytes(1 << 40) == BLOCK_BYTES
    assert block_bytes(BLOCK_BYTES // 4) == BLOCK_BYTES // 4


def test_buckets_hold_at_most_a_block_whatever_the_budget() -> None:
    assert bucket_count(10 * BLOCK_BYTES, 1 << 40) == 16
    assert bucket_count(BLOCK_BYTES, 1 << 40) == 1
    assert bucket_count(10 * BLOCK_BYTES, BLOCK_BYTES // 4) == 64  # a smaller budget rules


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_the_block_bounds_buckets_under_the_default_memory_limit(
        method: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inputs = write_corpus(tmp_path / "corpus", 120, 2, seed=3)
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    whole = EngineOptions(work=tmp_path / "whole-work", chunk_docs=25)  # 2 GiB
    run_engine(inputs, tmp_path / "whole", config, whole)
    monkeypatch.setattr(buckets, "BLOCK_BYTES", 512)
    small = EngineOptions(work=tmp_path / "small-work", chunk_docs=25)
    run_engine(inputs, tmp_path / "small", config, small)
    planned = [read_keys(options.work / "near" / "candidates") for options in (whole, small)]
    assert planned[0] is not None and planned[1] is not None
    assert planned[0].buckets == 1 < planned[1].buckets
    assert_same_tables(tmp_path / "small", tmp_path / "whole")
