"""Inputs named by fsspec URLs (``memory://``, ``file://``) read as the same files on disk."""

from __future__ import annotations

import gzip
import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.sources import open_sources

TEXTS = ["one text about rivers and the bridges that cross them in the old town " * 3,
         "another text about bread, flour and the ovens of the bakery on the corner " * 3]


def _rows(count: int) -> list[dict[str, object]]:
    return [{"id": f"r{i}", "text": TEXTS[i % 2] if i % 3 else f"row {i} stands alone " * 9,
             "n": i} for i in range(count)]


@pytest.fixture
def memory() -> Iterator[str]:
    """A fresh folder of the in-memory file system, removed afterwards."""
    folder = f"/neardup-test-{uuid.uuid4().hex}"
    yield f"memory://{folder}"
    filesystem = fsspec.filesystem("memory")
    if filesystem.exists(folder):
        filesystem.rm(folder, recursive=True)


def _corpus(folder: Path) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    rows = _rows(24)
    pq.write_table(pa.Table.from_pylist(rows[:12]), folder / "a.parquet", row_group_size=5)
    with gzip.open(folder / "b.jsonl.gz", "wt") as out:
        out.writelines(json.dumps(row) + "\n" for row in rows[12:])
    return [folder / "a.parquet", folder / "b.jsonl.gz"]


def _copy_to(files: list[Path], url: str) -> None:
    filesystem = fsspec.filesystem("memory")
    inner = url.removeprefix("memory://")
    for path in files:
        filesystem.pipe(f"{inner}/{path.name}", path.read_bytes())


def _dedup(inputs: list[str], out: Path) -> None:
    result = CliRunner().invoke(cli, ["dedup", *inputs, "--out", str(out), "--workers", "1",
                                      "--quiet", "--write", "kept,annotated"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output


def _decisions(out: Path) -> list[tuple[object, ...]]:
    clusters = pq.read_table(out / "clusters.parquet").to_pylist()
    return [(row["doc"], row["cluster"], row["kept"], row["reason"]) for row in clusters]


@pytest.mark.slow
def test_a_memory_url_gives_the_result_of_the_same_files_on_disk(tmp_path: Path,
                                                                 memory: str) -> None:
    files = _corpus(tmp_path / "disk")
    _copy_to(files, memory)
    _dedup([str(tmp_path / "disk")], tmp_path / "local")
    _dedup([memory], tmp_path / "remote")
    assert _decisions(tmp_path / "remote") == _decisions(tmp_path / "local")
    assert pq.read_table(tmp_path / "remote" / "documents.parquet").column(
        "source").to_pylist()[0].startswith("memory://")
    for mode in ("kept", "annotated"):
        local = pq.read_table(tmp_path / "local" / mode / "a.parquet")
        assert pq.read_table(tmp_path / "remote" / mode / "a.parquet").equals(local)
        with gzip.open(tmp_path / "local" / mode / "b.jsonl.gz") as disk, \
                gzip.open(tmp_path / "remote" / mode / "b.jsonl.gz") as remote:
            assert remote.read() == disk.read()


def test_a_file_url_and_a_glob_read_what_the_path_reads(tmp_path: Path, memory: str) -> None:
    files = _corpus(tmp_path / "disk")
    _copy_to(files, memory)
    by_path = [doc.raw for doc in open_sources([str(tmp_path / "disk")])]
    by_file_url = [doc.raw for doc in open_sources([(tmp_path / "disk").as_uri()])]
    by_glob = [doc.raw for doc in open_sources([f"{memory}/*.parquet", f"{memory}/*.gz"])]
    assert by_file_url == by_path
    assert by_glob == by_path
    assert len(by_path) == 24


def test_missing_urls_are_counted_with_their_name(memory: str) -> None:
    reader = open_sources([f"{memory}/absent.jsonl", f"{memory}/*.parquet"])
    assert list(reader) == []
    stats = reader.stats.as_dict()
    assert stats["skipped"] == {"unreadable-file": 1, "no-match": 1}
    assert any(f"{memory}/absent.jsonl" in line for line in stats["errors"])


def test_an_unknown_file_system_is_a_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["dedup", "nosuchfs://bucket/x.jsonl", "--out",
                                      str(tmp_path / "o"), "--workers", "1"])
    assert result.exit_code == 1
    assert "nosuchfs://bucket/x.jsonl" in result.output
    assert "no file system for this URL" in result.output
