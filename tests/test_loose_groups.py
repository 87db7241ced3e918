"""Loose files are read in groups (one split, one partition, for many small files) with the
outputs of one split per file."""

from __future__ import annotations

import functools
import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

import neardup.engine.run as engine_run
from neardup.cli.main import cli
from neardup.sources import splits as splits_module
from neardup.sources.splits import input_splits
from neardup.sources.stats import SourceStats

PAGE = "<html><head><title>{0}</title></head><body><p>{1}</p></body></html>"


def _folder(root: Path) -> Path:
    """Pages (some copies, one gzipped, one in a subfolder), a text file, a JSONL file between
    them, a binary file named .html."""
    root.mkdir()
    (root / "sub").mkdir()
    words = ["the", "river", "runs", "past", "the", "mill", "and", "the", "miller", "counts",
             "his", "sacks", "of", "flour"]
    for number in range(12):
        body = " ".join(words[number % 5:] + [f"page{number % 4}"] * 3)
        (root / f"p{number:02d}.html").write_text(PAGE.format(number, body), encoding="utf-8")
    (root / "p05b.html.gz").write_bytes(gzip.compress(PAGE.format("z", "a b c d e f").encode()))
    (root / "sub" / "s1.htm").write_text(PAGE.format("s", " ".join(words)), encoding="utf-8")
    (root / "notes.txt").write_text(" ".join(words) + "\n", encoding="utf-8")
    (root / "p07b.jsonl").write_text(json.dumps({"id": "row", "text": " ".join(words)}) + "\n",
                                     encoding="utf-8")
    (root / "p09b.html").write_bytes(b"\x00\x01binary")
    return root


def test_consecutive_loose_files_share_a_split_up_to_the_byte_bound(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "pages")
    every = input_splits([str(folder)], SourceStats(), group_bytes=0)
    grouped = input_splits([str(folder)], SourceStats())
    assert len(every) == 17 and all(not split.group for split in every)
    assert [path for split in grouped for path in split.paths] == [s.path for s in every]
    jsonl = next(s for s in grouped if s.path.endswith(".jsonl"))
    assert jsonl.group == ()  # not a loose file: alone, and it ends the group before it
    assert len(grouped) == 3
    small = input_splits([str(folder)], SourceStats(), group_bytes=300)
    assert 3 < len(small) < 17
    for split in small:
        sizes = [Path(path).stat().st_size for path in split.paths]
        assert len(sizes) == 1 or sum(sizes) <= 300


def _dedup(folder: Path, out: Path) -> dict[str, Any]:
    result = CliRunner().invoke(cli, ["dedup", str(folder), "--out", str(out), "--quiet"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    summary: dict[str, Any] = json.loads((out / "summary.json").read_text())
    return summary


@pytest.mark.parametrize("workers", ["1", "2"])
def test_groups_give_the_tables_of_one_split_per_file(tmp_path: Path, workers: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    folder = _folder(tmp_path / "pages")
    monkeypatch.setattr(engine_run, "SMALL_INPUT_BYTES", 0 if workers == "2" else 1 << 22)
    monkeypatch.setattr("neardup.cli.dedup.default_workers", lambda: int(workers))
    grouped = _dedup(folder, tmp_path / "grouped")
    monkeypatch.setattr(engine_run, "input_splits",
                        functools.partial(splits_module.input_splits, group_bytes=0))
    alone = _dedup(folder, tmp_path / "alone")
    assert grouped["engine"]["splits"] == 3 and alone["engine"]["splits"] == 17
    assert grouped["engine"]["workers"] == int(workers)
    for name in ("documents", "pairs", "clusters"):
        assert pq.read_table(tmp_path / "grouped" / f"{name}.parquet").equals(
            pq.read_table(tmp_path / "alone" / f"{name}.parquet")), name
    assert grouped["sources"] == alone["sources"]
    assert grouped["documents"] == 16
    assert grouped["sources"]["skipped"] == {"binary": 1}
