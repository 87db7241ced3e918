"""The staged engine gives exactly the in-memory result, whatever its partitions, buckets and
workers, and a run that was killed resumes to the same outputs."""

from __future__ import annotations

import gzip
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpora import write_corpus
from neardup.cli.dedup import run_dedup
from neardup.config import DedupConfig
from neardup.engine import EngineOptions, run_engine
from neardup.errors import ConfigError
from neardup.sources.splits import SHARED_BYTES
from runs import assert_same_tables

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "warc"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data absent: {DATA}")
IGNORED = {"seconds", "cpu_seconds", "engine", "near"}


def assert_same_run(inputs: list[str], config: DedupConfig, tmp: Path,
                    options: EngineOptions) -> dict[str, Any]:
    _, memory = run_dedup(tuple(inputs), tmp / "memory", config, show_progress=False)
    engine = run_engine(inputs, tmp / "engine", config, options)
    assert_same_tables(tmp / "engine", tmp / "memory")
    for key in memory.keys() - IGNORED:
        assert engine[key] == memory[key], key
    if "near" in memory:
        for key in ("candidates", "verified", "rejected"):
            assert engine["near"][key] == memory["near"][key], key
    return engine


@needs_data
@pytest.mark.slow
@pytest.mark.parametrize("method", ["simhash", "minhash", "exact", "sketch", "supershingle",
                                    "chunks", "smfa", "shingle-paragraphs"])
def test_engine_equals_memory_on_shared_warcs(method: str, tmp_path: Path) -> None:
    inputs = sorted(str(p) for p in DATA.glob("*.gz"))
    options = EngineOptions(work=tmp_path / "work", chunk_docs=37, bucket_bytes=2048)
    summary = assert_same_run(inputs, DedupConfig(method=method), tmp_path, options)
    assert summary["engine"]["partitions"] > len(inputs)


@needs_data
@pytest.mark.parametrize("method", ["simhash", "minhash"])
def test_engine_equals_memory_on_malformed_files(method: str, tmp_path: Path) -> None:
    inputs = [str(DATA / "malformed")]
    options = EngineOptions(work=tmp_path / "work", chunk_docs=5, bucket_bytes=1024)
    assert_same_run(inputs, DedupConfig(method=method, keep="longest"), tmp_path, options)


@pytest.mark.slow
@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(method=st.sampled_from(["simhash", "minhash"]), files=st.integers(1, 4),
       chunk_docs=st.integers(1, 60), bucket_bytes=st.sampled_from([256, 4096, 1 << 22]),
       workers=st.sampled_from([1, 2, 3]), keep=st.sampled_from(["first", "longest"]),
       shared=st.booleans(), seed=st.integers(0, 1000))
def test_engine_equals_memory_on_generated_corpora(
        tmp_path_factory: pytest.TempPathFactory, method: str, files: int, chunk_docs: int,
        bucket_bytes: int, workers: int, keep: str, shared: bool, seed: int) -> None:
    tmp = tmp_path_factory.mktemp("engine")
    inputs = write_corpus(tmp / "corpus", 150, files, seed)
    options = EngineOptions(work=tmp / "work", chunk_docs=chunk_docs, bucket_bytes=bucket_bytes,
                            workers=workers, shared_bytes=0 if shared else 1 << 40)
    config = DedupConfig(method=method, keep=keep)  # type: ignore[arg-type]
    summary = assert_same_run(inputs, config, tmp, options)
    assert summary["duplicates"] > 0


def test_rerun_skips_finished_stages_and_gives_the_same_outputs(tmp_path: Path) -> None:
    inputs = write_corpus(tmp_path / "corpus", 120, 3, seed=7)
    options = EngineOptions(work=tmp_path / "work", chunk_docs=25, bucket_bytes=2048)
    run_engine(inputs, tmp_path / "first", DedupConfig(), options)
    marker = options.work / "done" / "cluster.json"
    stamp = marker.stat().st_mtime_ns
    run_engine(inputs, tmp_path / "second", DedupConfig(), options)
    assert marker.stat().st_mtime_ns == stamp
    assert_same_tables(tmp_path / "second", tmp_path / "first", same_bytes=True)


def test_work_directory_of_another_config_is_refused(tmp_path: Path) -> None:
    inputs = write_corpus(tmp_path / "corpus", 30, 1, seed=1)
    options = EngineOptions(work=tmp_path / "work")
    run_engine(inputs, tmp_path / "out", DedupConfig(method="simhash"), options)
    with pytest.raises(ConfigError, match=r"method: 'simhash' -> 'minhash'"):
        run_engine(inputs, tmp_path / "out", DedupConfig(method="minhash"), options)
    replaced = EngineOptions(work=tmp_path / "work", replace_other=True)
    summary = run_engine(inputs, tmp_path / "out", DedupConfig(method="minhash"), replaced)
    assert summary["method"] == "minhash"


def _dedup(inputs: list[str], out: Path, work: Path) -> list[str]:
    return [sys.executable, "-c", "from neardup.cli.main import cli; cli()", "dedup", *inputs,
            "--out", str(out),
            "--work", str(work), "--quiet", "--workers", "2", "--memory-limit", "64M",
            "--method", "minhash", "--partition-docs", "200"]


def _one_big_gzip(folder: Path) -> list[str]:
    """One JSONL.gz file (stored, not compressed) over the size from which the workers share
    it: the parent deals its line blocks out."""
    lines = b"".join(Path(p).read_bytes() for p in write_corpus(folder, 6000, 1, seed=3))
    path = folder / "big.jsonl.gz"
    path.write_bytes(gzip.compress(lines, compresslevel=0))
    assert path.stat().st_size >= SHARED_BYTES
    return [str(path)]


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["files", "dealt"])
def test_killed_runs_resume_to_identical_outputs(tmp_path: Path, layout: str) -> None:
    """SIGKILL at random moments (every stage gets hit over the trials), then a re-run: the
    outputs equal those of an uninterrupted run byte for byte; with six files, and with one
    large gzip file dealt out to the workers block by block."""
    inputs = (write_corpus(tmp_path / "corpus", 3000, 6, seed=3) if layout == "files"
              else _one_big_gzip(tmp_path / "corpus"))
    env = dict(os.environ)
    subprocess.run(_dedup(inputs, tmp_path / "clean", tmp_path / "clean-work"), check=True,
                   env=env)
    blocks = list((tmp_path / "clean-work" / "done" / "fingerprint").glob("f000000-b*.json"))
    assert len(blocks) == (30 if layout == "dealt" else 0)  # 6,000 lines in blocks of 200
    started = time.perf_counter()
    subprocess.run(_dedup(inputs, tmp_path / "timed", tmp_path / "timed-work"), check=True,
                   env=env)
    duration = time.perf_counter() - started
    rng = random.Random(11)
    for trial in range(20 if layout == "files" else 10):
        out, work = tmp_path / f"out{trial}", tmp_path / f"work{trial}"
        for _ in range(2):
            process = subprocess.Popen(_dedup(inputs, out, work), env=env,
                                       start_new_session=True)
            time.sleep(rng.uniform(0.0, duration))
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        subprocess.run(_dedup(inputs, out, work), check=True, env=env)
        assert_same_tables(out, tmp_path / "clean", same_bytes=True)
