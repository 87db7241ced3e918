"""A small dedup starts cheaply: no worker pool for one small input file (unless --workers asks
for one)."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import neardup.engine.run as engine_run
from neardup.cli.main import cli

SRC = Path(__file__).resolve().parents[1] / "src"


def write_docs(path: Path, count: int) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for number in range(count):
            text = f"document {number} holds a few words " + "and some more words " * 5
            out.write(json.dumps({"id": f"d{number}", "text": text}) + "\n")
    return path


@pytest.fixture
def pools(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The worker counts of every process pool started, with two cores as the default."""
    started: list[int] = []

    class Recording(ProcessPoolExecutor):
        def __init__(self, max_workers: int, *args: Any, **kwargs: Any) -> None:
            started.append(max_workers)
            super().__init__(max_workers, *args, **kwargs)

    monkeypatch.setattr(concurrent.futures, "ProcessPoolExecutor", Recording)
    monkeypatch.setattr("neardup.cli.dedup.default_workers", lambda: 2)
    return started


def dedup(*args: str) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["dedup", *args, "--quiet"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = Path(args[args.index("--out") + 1])
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


def test_one_small_file_runs_without_a_pool(tmp_path: Path, pools: list[int]) -> None:
    data = write_docs(tmp_path / "docs.jsonl", 3)
    summary = dedup(str(data), "--out", str(tmp_path / "out"))
    assert pools == []
    assert summary["engine"]["workers"] == 1
    assert summary["documents"] == 3


def test_a_file_over_the_bound_gets_the_default_pool(tmp_path: Path, pools: list[int],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    data = write_docs(tmp_path / "docs.jsonl", 3)
    monkeypatch.setattr(engine_run, "SMALL_INPUT_BYTES", data.stat().st_size)
    summary = dedup(str(data), "--out", str(tmp_path / "out"))
    assert pools == [2]
    assert summary["engine"]["workers"] == 2


def test_workers_asked_for_are_started_even_for_a_tiny_file(tmp_path: Path,
                                                            pools: list[int]) -> None:
    data = write_docs(tmp_path / "docs.jsonl", 3)
    summary = dedup(str(data), "--out", str(tmp_path / "out"), "--workers", "2")
    assert pools == [2]
    assert summary["engine"]["workers"] == 2


def test_the_small_input_rule_gives_the_same_tables(tmp_path: Path, pools: list[int]) -> None:
    data = write_docs(tmp_path / "docs.jsonl", 40)
    alone, pooled = tmp_path / "alone", tmp_path / "pooled"
    dedup(str(data), "--out", str(alone))
    dedup(str(data), "--out", str(pooled), "--workers", "2")
    assert pools == [2]
    for table in ("documents.parquet", "pairs.parquet", "clusters.parquet"):
        assert (alone / table).read_bytes() == (pooled / table).read_bytes(), table


def _threads_after_numpy(environment: dict[str, str]) -> int:
    """The threads of a fresh process that imported the command line, then numpy."""
    code = "import os, neardup.cli.main, numpy; print(len(os.listdir('/proc/self/task')))"
    done = subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True,
                          text=True, check=True)
    return int(done.stdout)


def test_the_command_line_keeps_openblas_to_one_thread() -> None:
    environment = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    assert _threads_after_numpy({**environment, "PYTHONPATH": str(SRC)}) == 1


def test_a_users_openblas_threads_are_kept() -> None:
    environment = {**os.environ, "PYTHONPATH": str(SRC), "OPENBLAS_NUM_THREADS": "2"}
    assert _threads_after_numpy(environment) == 2


def test_a_one_document_jsonl_dedup_loads_no_pool_and_no_other_reader(tmp_path: Path) -> None:
    data = write_docs(tmp_path / "one.jsonl", 1)
    unused = ("concurrent.futures.process", "multiprocessing", "fastwarc",
              "neardup.sources.warc", "neardup.sources.files", "neardup.sources.parquet")
    code = ("import sys\nfrom neardup.cli.main import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print(','.join(m for m in {unused!r} if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code, "dedup", str(data), "--out",
                           str(tmp_path / "out"), "--quiet"],
                          env={**os.environ, "PYTHONPATH": str(SRC)}, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == ""
    assert (tmp_path / "out" / "documents.parquet").exists()


def _collector_after(code: str, tmp_path: Path) -> list[str]:
    """What a fresh process printed after a one-document dedup run by ``code``."""
    data = write_docs(tmp_path / "one.jsonl", 1)
    done = subprocess.run([sys.executable, "-c", code, "dedup", str(data), "--out",
                           str(tmp_path / "out"), "--quiet"],
                          env={**os.environ, "PYTHONPATH": str(SRC)}, capture_output=True,
                          text=True, check=True)
    assert (tmp_path / "out" / "documents.parquet").exists()
    return done.stdout.split()


def test_the_console_entry_freezes_what_loaded_and_keeps_the_collector_on(tmp_path: Path) -> None:
    code = ("import gc\nfrom neardup.cli.main import cli\n"
            "try:\n    cli()\nexcept SystemExit:\n    pass\n"
            "print(gc.isenabled(), gc.get_freeze_count() > 0)")
    assert _collector_after(code, tmp_path) == ["True", "True"]


def test_a_collector_turned_off_by_the_caller_stays_off(tmp_path: Path) -> None:
    code = ("import gc\ngc.disable()\nfrom neardup.cli.main import cli\n"
            "try:\n    cli()\nexcept SystemExit:\n    pass\n"
            "print(gc.isenabled())")
    assert _collector_after(code, tmp_path) == ["False"]


def test_a_command_invoked_in_process_leaves_the_collector_alone(tmp_path: Path) -> None:
    import gc

    frozen = gc.get_freeze_count()
    dedup(str(write_docs(tmp_path / "one.jsonl", 1)), "--out", str(tmp_path / "out"))
    assert gc.isenabled()
    assert gc.get_freeze_count() == frozen


def _loaded_by_one_document_dedup(names: tuple[str, ...], tmp_path: Path) -> list[str]:
    """Which of ``names`` a fresh process had imported after a default one-document dedup."""
    code = ("import sys\nfrom neardup.cli.main import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            f"print(','.join(m for m in {names!r} if m in sys.modules))")
    return _collector_after(code, tmp_path)


def test_a_one_document_minhash_dedup_loads_no_other_methods_machinery(tmp_path: Path) -> None:
    unused = ("neardup.engine.chunkjoin", "neardup.engine.sketchjoin", "neardup.engine.smfajoin",
              "neardup.engine.paragraphs", "neardup.overlap.coarse",
              "neardup.overlap.sortbased", "neardup.overlap.iterative",
              "neardup.index.planner", "neardup.index.compressed", "neardup.cluster.broder",
              "neardup.fingerprints.chunkprint", "neardup.fingerprints.keywords",
              "neardup.fingerprints.paragraphprint", "neardup.methods.verify",
              "neardup.presets", "neardup.sources.records", "neardup.sources.capture",
              "neardup.engine.counting", "neardup.output.selection", "neardup.output.shards")
    assert _loaded_by_one_document_dedup(unused, tmp_path) == []
    assert "neardup.index.lsh" in _loaded_by_one_document_dedup(("neardup.index.lsh",),
                                                               tmp_path)[0]
