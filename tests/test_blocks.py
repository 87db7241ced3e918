"""Large JSONL and Parquet files read by several workers side by side (one phase of the blocks
each) give the documents and counts of one plain pass, and the engine's outputs do not change;
``--against`` an earlier run equals a one-shot run restricted to the new documents."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from corpora import write_corpus
from neardup.cli.main import cli
from neardup.config import DedupConfig
from neardup.engine import EngineOptions, run_engine
from neardup.errors import ConfigError
from neardup.sources import open_sources
from neardup.sources.blocks import BlockCursor, Blocks
from neardup.sources.context import ReadContext
from neardup.sources.lineblocks import deal_lines, read_line_block
from neardup.sources.splits import InputSplit, input_splits, merge_stats, read_split
from neardup.sources.stats import SourceStats
from runs import assert_same_tables, output_tables
from test_engine import assert_same_run


def _rows(count: int) -> list[str]:
    lines = [json.dumps({"id": f"d{i}", "text": f"text {i} " * (i % 7 + 1)}) for i in range(count)]
    lines[5] = "not json"
    lines[9] = ""
    lines[17] = json.dumps({"id": "no-text"})
    return lines


def _inputs(tmp: Path) -> list[Path]:
    lines = _rows(60)
    plain = tmp / "plain.jsonl"
    plain.write_text("\n".join(lines) + "\n")
    packed = tmp / "packed.jsonl.gz"
    packed.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    cut = tmp / "cut.jsonl.gz"
    cut.write_bytes(packed.read_bytes()[:-40])
    table = pa.table({"id": [f"r{i}" for i in range(50)],
                      "text": [f"row {i} " * (i % 5 + 1) for i in range(50)]})
    table = table.set_column(1, "text", pa.array([None if i == 3 else v for i, v in
                                                  enumerate(table.column("text").to_pylist())]))
    rows = tmp / "rows.parquet"
    pq.write_table(table, rows, row_group_size=7)
    return [plain, packed, cut, rows]


def damage_row_group(path: Path, group: int, column: str = "text") -> None:
    """Overwrite the page header of ``column`` in row group ``group`` (footer intact)."""
    parquet = pq.ParquetFile(path)
    chunk = parquet.metadata.row_group(group).column(parquet.schema_arrow.names.index(column))
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    data = bytearray(path.read_bytes())
    data[start:start + 16] = b"\xff" * 16
    path.write_bytes(bytes(data))


def _damaged_parquet(tmp: Path) -> Path:
    """Rows in groups of 7 (snappy, text last) with the data of group 3 (rows 21 to 27)
    damaged: the rows of the other groups are read, that group is one bad record."""
    path = tmp / "damaged.parquet"
    pq.write_table(pa.table({"id": [f"r{i}" for i in range(50)],
                             "text": [f"row {i} " * (i % 5 + 40) for i in range(50)]}),
                   path, row_group_size=7)
    damage_row_group(path, 3)
    return path


def _by_phase(path: Path, size: int, stride: int) -> tuple[list[tuple[int, str, int]],
                                                          dict[str, object]]:
    found, parts, errors = [], [], []
    for phase in range(stride):
        cursor = BlockCursor(Blocks(size, stride, phase), SourceStats())
        split = InputSplit(str(path), True, 0, cursor.blocks)
        found.extend((cursor.current, doc.id, doc.offset) for doc in read_split(split, cursor))
        parts.append(cursor.stats.as_dict())
        errors.extend(zip(cursor.error_blocks(), cursor.stats.errors, strict=True))
    ordered = [line for _, line in sorted(errors, key=lambda item: item[0])]
    return sorted(found, key=lambda item: item[0]), merge_stats(parts, ordered)


@pytest.mark.parametrize("size", [1, 4, 13, 1000])
@pytest.mark.parametrize("stride", [1, 2, 3])
def test_phases_together_read_what_one_pass_reads(tmp_path: Path, size: int, stride: int) -> None:
    for path in [*_inputs(tmp_path), _damaged_parquet(tmp_path)]:
        reader = open_sources([str(path)])
        expected = [(doc.id, doc.offset) for doc in reader]
        found, stats = _by_phase(path, size, stride)
        assert [(doc_id, offset) for _, doc_id, offset in found] == expected, path.name
        assert all(block == offset_block for block, offset_block in
                   ((b, (o - (1 if path.suffix != ".parquet" else 0)) // size)
                    for b, _, o in found)), path.name
        assert stats == reader.stats.as_dict(), path.name


def test_damaged_parquet_data_loses_only_its_row_group(tmp_path: Path) -> None:
    reader = open_sources([str(_damaged_parquet(tmp_path))])
    offsets = [doc.offset for doc in reader]
    assert offsets == [*range(21), *range(28, 50)]
    assert reader.stats.skipped == {"bad-record": 1}
    [line] = reader.stats.errors
    assert "damaged.parquet: row 21: Parquet data damaged (" in line
    assert line.endswith("skipped the rest of row group 3")


def test_large_files_are_dealt_or_shared_and_small_ones_read_whole(tmp_path: Path) -> None:
    paths = [str(p) for p in _inputs(tmp_path)]
    small = input_splits(paths, SourceStats(), block_size=10, workers=2)
    assert [(s.file, s.blocks.stride, s.dealt) for s in small] == [
        (0, 1, False), (1, 1, False), (2, 1, False), (3, 1, False)]
    shared = input_splits(paths, SourceStats(), block_size=10, workers=2, shared_bytes=0)
    assert [(s.file, s.blocks.phase, s.blocks.stride, s.dealt) for s in shared] == [
        (0, 0, 1, True), (1, 0, 1, True), (2, 0, 1, True), (3, 0, 2, False), (3, 1, 2, False)]


@pytest.mark.parametrize("size", [1, 4, 13, 1000])
def test_dealt_line_blocks_read_what_one_pass_reads(tmp_path: Path, size: int) -> None:
    for path in _inputs(tmp_path)[:3]:
        reader = open_sources([str(path)])
        expected = [(doc.id, doc.offset, doc.raw) for doc in reader]
        found, parts, errors = [], [], []
        for block in deal_lines(str(path), path.suffix == ".gz", size):
            stats = SourceStats()
            stats.files += int(block.index == 0)
            found.extend((doc.id, doc.offset, doc.raw)
                         for doc in read_line_block(block, str(path), ReadContext(stats)))
            parts.append(stats.as_dict())
            errors.extend(stats.errors)
        assert found == expected, path.name
        assert merge_stats(parts, errors) == reader.stats.as_dict(), path.name


@pytest.mark.slow
@pytest.mark.parametrize("method", ["simhash", "minhash"])
def test_engine_on_shared_gzip_and_parquet_files_equals_memory(tmp_path: Path,
                                                               method: str) -> None:
    [source] = write_corpus(tmp_path / "corpus", 200, 1, seed=3)
    lines = Path(source).read_text().splitlines()
    packed = tmp_path / "big.jsonl.gz"
    packed.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    table = pa.Table.from_pylist([json.loads(line) for line in lines])
    rows = tmp_path / "big.parquet"
    pq.write_table(table, rows, row_group_size=23)
    for workers in (1, 2):
        options = EngineOptions(work=tmp_path / f"work{workers}", chunk_docs=17,
                                workers=workers, shared_bytes=0, bucket_bytes=4096)
        summary = assert_same_run([str(packed), str(rows)], DedupConfig(method=method),
                                  tmp_path / f"run{workers}", options)
        assert summary["engine"]["partitions"] == 24  # 200 lines and 200 rows in blocks of 17
        assert summary["duplicates"] > 0


def test_a_dealt_file_resumes_from_the_blocks_it_kept(tmp_path: Path) -> None:
    [source] = write_corpus(tmp_path / "corpus", 300, 1, seed=5)
    packed = tmp_path / "big.jsonl.gz"
    packed.write_bytes(gzip.compress(Path(source).read_bytes()))
    options = EngineOptions(work=tmp_path / "work", chunk_docs=20, workers=2, shared_bytes=0)
    config = DedupConfig(method="minhash")
    first = run_engine([str(packed)], tmp_path / "first", config, options)
    done = tmp_path / "work" / "done"
    assert len(list((done / "fingerprint").glob("f000000-b*.json"))) == 15  # 300 lines / 20
    for marker in [done / "fingerprint" / "f000000-p0of1.json", done / "link.json",
                   *sorted((done / "fingerprint").glob("f000000-b*.json"))[3:9]]:
        marker.unlink()
    for partition in sorted((tmp_path / "work" / "fingerprint").iterdir())[5:7]:
        shutil.rmtree(partition)
    for stage in ("exact", "near", "cluster", "link"):
        shutil.rmtree(tmp_path / "work" / stage, ignore_errors=True)
    for marker in done.glob("*.json"):
        marker.unlink()
    again = run_engine([str(packed)], tmp_path / "again", config, options)
    assert_same_tables(tmp_path / "again", tmp_path / "first")
    assert again["sources"] == first["sources"] and again["documents"] == 300


@pytest.mark.parametrize("method", ["simhash", "minhash"])
def test_against_equals_one_shot_run_restricted_to_new_documents(tmp_path: Path,
                                                                 method: str) -> None:
    paths = write_corpus(tmp_path / "corpus", 240, 3, seed=11)
    old, new = paths[:2], paths[2:]
    config = DedupConfig(method=method)  # type: ignore[arg-type]
    options = EngineOptions(work=tmp_path / "old-work", chunk_docs=29, bucket_bytes=2048)
    run_engine(old, tmp_path / "old", config, options)
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "old-work").rglob("*.npy")}
    summary = run_engine(new, tmp_path / "new", config, EngineOptions(
        work=tmp_path / "new-work", chunk_docs=29, bucket_bytes=2048),
        against=tmp_path / "old-work")
    run_engine(paths, tmp_path / "all", config, EngineOptions(work=tmp_path / "all-work"))
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "old-work").rglob("*.npy")} == before
    fingerprinted = [p for p in (tmp_path / "new-work" / "fingerprint").iterdir() if p.is_dir()]
    assert len(fingerprinted) == 3  # the new file's 80 documents only, in blocks of 29
    counted = summary["against"]["old_documents"]
    everything = output_tables(tmp_path / "all")
    mine = output_tables(tmp_path / "new")
    assert mine["pairs"] == [p for p in everything["pairs"] if max(p["a"], p["b"]) >= counted]
    assert mine["clusters"] == [c for c in everything["clusters"] if c["doc"] >= counted]
    decisions = pq.read_table(tmp_path / "new" / "against.parquet").to_pylist()
    assert [d["doc"] for d in decisions] == [c["doc"] for c in mine["clusters"]]
    for decision, cluster in zip(decisions, mine["clusters"], strict=True):
        assert decision["drop"] == (cluster["cluster"] < counted or not cluster["kept"])
        if decision["reason"] == "duplicate-of-old":
            assert decision["old_doc"] == cluster["cluster"] < counted
            assert decision["pair_doc"] is not None
    reasons = {d["reason"] for d in decisions}
    assert {"duplicate-of-old", "keep"} <= reasons


def test_against_a_run_of_another_config_is_refused(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", 40, 2, seed=2)
    run_engine(paths[:1], tmp_path / "old", DedupConfig(method="simhash"),
               EngineOptions(work=tmp_path / "old-work"))
    with pytest.raises(ConfigError, match=r"another configuration.*method"):
        run_engine(paths[1:], tmp_path / "new", DedupConfig(method="minhash"),
                   EngineOptions(work=tmp_path / "new-work"), against=tmp_path / "old-work")


def test_dedup_command_against_an_earlier_work_directory(tmp_path: Path) -> None:
    paths = write_corpus(tmp_path / "corpus", 120, 2, seed=4)
    runner = CliRunner()
    first = runner.invoke(cli, ["dedup", paths[0], "--out", str(tmp_path / "old"), "--work",
                                str(tmp_path / "old-work"), "--method", "minhash", "--quiet"])
    assert first.exit_code == 0, first.output
    second = runner.invoke(cli, ["dedup", paths[1], "--out", str(tmp_path / "new"), "--method",
                                 "minhash", "--against", str(tmp_path / "old-work")])
    assert second.exit_code == 0, second.output
    assert "60 old documents" in second.output
    decisions = pq.read_table(tmp_path / "new" / "against.parquet").to_pylist()
    assert [d["doc"] for d in decisions] == list(range(60, 120))
    wrong = runner.invoke(cli, ["dedup", paths[1], "--out", str(tmp_path / "bad"), "--method",
                                "simhash", "--against", str(tmp_path / "old-work")])
    assert wrong.exit_code != 0 and "another configuration" in wrong.output
