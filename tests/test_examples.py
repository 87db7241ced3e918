"""Every script in ``examples/`` runs, as a user runs it, and prints what its docstring says."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def _run(script: Path, work: Path) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    done = subprocess.run([sys.executable, str(script), str(work)], capture_output=True,
                          text=True, env=env, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_every_example_is_tested() -> None:
    assert {path.name for path in EXAMPLES} == {"curate_shards.py", "crawler_store.py"}


@pytest.mark.slow
def test_curate_shards_keeps_one_row_per_story(tmp_path: Path) -> None:
    output = _run(ROOT / "examples" / "curate_shards.py", tmp_path)
    assert "part-000.parquet: 5 rows in, 3 kept" in output
    assert "part-001.parquet: 4 rows in, 0 kept" in output
    assert (tmp_path / "dedup" / "kept" / "part-000.parquet").is_file()


@pytest.mark.slow
def test_crawler_store_finds_the_mirror_and_the_edited_copy(tmp_path: Path) -> None:
    lines = _run(ROOT / "examples" / "crawler_store.py", tmp_path).splitlines()
    assert lines[0].endswith("near-copies already stored: none")
    assert "https://news.example/tram (0 bits)" in lines[1]
    assert "https://news.example/tram" in lines[2]
    assert lines[3].endswith("none")
    assert (tmp_path / "pages.store" / "manifest.json").is_file()
