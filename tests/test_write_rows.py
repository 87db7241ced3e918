"""``dedup --write``: the input rows of the kept, removed or all (annotated) documents, in the
input's format and shards, read back with pyarrow and compared with the inputs."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.sources import open_sources

TEXTS = ["the quick brown fox jumps over the lazy dog and runs far into the hills " * 4,
         "a completely different page about parquet files row groups and their schemas " * 4]


def _rows(count: int, start: int = 0) -> list[dict[str, Any]]:
    """Rows whose text repeats one of two texts (every third row is unique), with columns of
    several types, nested ones included."""
    rows = []
    for i in range(start, start + count):
        text = TEXTS[i % 2] if i % 3 else f"document {i} is unique: it speaks of topic {i * 7} " * 5
        rows.append({"id": f"d{i}", "text": text, "score": i / 4, "rank": i,
                     "tags": [f"t{i}", "x"], "meta": {"n": i, "lang": "en"}})
    return rows


def _expected_kept(rows: list[dict[str, Any]]) -> list[str]:
    """With --keep first, the first row of each text survives."""
    seen: set[str] = set()
    kept = []
    for row in rows:
        if row["text"] not in seen:
            seen.add(row["text"])
            kept.append(row["id"])
    return kept


def _dedup(*args: str) -> str:
    result = CliRunner().invoke(cli, ["dedup", *args, "--workers", "1", "--quiet"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _parquet_shards(folder: Path) -> tuple[list[dict[str, Any]], Path, Path]:
    rows = _rows(30)
    folder.mkdir()
    schema = pa.schema([("id", pa.string()), ("text", pa.large_string()), ("score", pa.float32()),
                        ("rank", pa.int16()), ("tags", pa.list_(pa.string())),
                        ("meta", pa.struct([("n", pa.int64()), ("lang", pa.string())]))],
                       metadata={b"origin": b"test"})
    table = pa.Table.from_pylist(rows, schema=schema)
    first, second = folder / "part-0.parquet", folder / "part-1.parquet"
    pq.write_table(table.slice(0, 17), first, compression="zstd", row_group_size=5)
    pq.write_table(table.slice(17), second)
    return rows, first, second


def test_kept_and_removed_parquet_rows_are_the_input_rows(tmp_path: Path) -> None:
    rows, first, second = _parquet_shards(tmp_path / "in")
    out = tmp_path / "out"
    _dedup(str(first), str(second), "--out", str(out), "--write", "kept,removed")
    kept_ids = _expected_kept(rows)
    inputs = {path.name: pq.read_table(path) for path in (first, second)}
    for name, table in inputs.items():
        kept = pq.read_table(out / "kept" / name)
        removed = pq.read_table(out / "removed" / name)
        assert kept.schema == table.schema  # every column and type, and the metadata
        assert kept.schema.metadata == table.schema.metadata
        wanted = table.filter(pa.array([i in kept_ids for i in table.column("id").to_pylist()]))
        assert kept.equals(wanted)
        others = table.filter(pa.array([i not in kept_ids
                                        for i in table.column("id").to_pylist()]))
        assert removed.equals(others)
    assert pq.ParquetFile(out / "kept" / "part-0.parquet").metadata.row_group(0).column(
        0).compression == "ZSTD"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["written"]["kept"]["rows"] == len(kept_ids)
    assert summary["written"]["removed"]["rows"] == len(rows) - len(kept_ids)


def test_annotated_parquet_has_every_row_and_its_cluster(tmp_path: Path) -> None:
    rows, first, _ = _parquet_shards(tmp_path / "in")
    extra = pa.Table.from_pylist([{"id": "empty", "text": None, "score": 0.0, "rank": 0,
                                   "tags": [], "meta": {"n": 0, "lang": "en"}}],
                                 schema=pq.read_schema(first))
    pq.write_table(pa.concat_tables([pq.read_table(first), extra]), first)
    out = tmp_path / "out"
    _dedup(str(first), "--out", str(out), "--write", "annotated")
    table = pq.read_table(out / "annotated" / first.name)
    assert table.num_rows == 18
    assert table.column_names[:6] == ["id", "text", "score", "rank", "tags", "meta"]
    assert table.schema.field("rank").type == pa.int16()
    annotated = table.to_pylist()
    kept_ids = _expected_kept(rows[:17])
    assert [row["neardup_kept"] for row in annotated[:17]] == \
        [row["id"] in kept_ids for row in annotated[:17]]
    assert annotated[-1]["neardup_reason"] == "skipped"
    assert annotated[-1]["neardup_cluster"] is None
    by_id = {row["id"]: row for row in annotated}
    assert by_id["d4"]["neardup_kept_doc"] == by_id["d2"]["neardup_doc"]  # d4 repeats d2
    assert by_id["d4"]["neardup_reason"].startswith("duplicate:")


def _jsonl_gz(path: Path, rows: list[dict[str, Any]]) -> list[bytes]:
    lines = [json.dumps(row, separators=(",", ":")).encode() + b"\n" for row in rows]
    lines.insert(3, b"this line is not JSON\n")
    with gzip.open(path, "wb") as out:
        out.writelines(lines)
    return lines


def test_jsonl_gz_rows_are_copied_byte_for_byte(tmp_path: Path) -> None:
    rows = _rows(20)
    folder = tmp_path / "in" / "sub"
    folder.mkdir(parents=True)
    lines = _jsonl_gz(folder / "shard.jsonl.gz", rows)
    out = tmp_path / "out"
    _dedup(str(tmp_path / "in"), "--out", str(out), "--write", "kept", "--write", "annotated",
           "--format", "jsonl")  # the run's tables as JSONL are read back too
    kept_ids = _expected_kept(rows)
    with gzip.open(out / "kept" / "shard.jsonl.gz", "rb") as kept:
        assert kept.read().splitlines(keepends=True) == [
            line for line in lines if line.startswith(b"{") and json.loads(line)["id"] in kept_ids]
    with gzip.open(out / "annotated" / "shard.jsonl.gz", "rt") as annotated:
        records = [json.loads(line) for line in annotated]
    assert [r["id"] for r in records] == [r["id"] for r in rows]  # the non-JSON line left out
    assert [r["neardup_kept"] for r in records] == [r["id"] in kept_ids for r in rows]
    assert all({k: r[k] for k in rows[0]} == row for r, row in zip(records, rows, strict=True))


def test_a_rerun_reuses_complete_files_and_removes_what_it_no_longer_writes(
        tmp_path: Path) -> None:
    _, first, second = _parquet_shards(tmp_path / "in")
    out = tmp_path / "out"
    _dedup(str(first), str(second), "--out", str(out), "--write", "kept,removed")
    stamp = (out / "kept" / first.name).stat().st_mtime_ns
    _dedup(str(first), str(second), "--out", str(out), "--write", "kept")
    summary = json.loads((out / "summary.json").read_text())
    assert summary["written"]["kept"]["files_reused"] == 2
    assert (out / "kept" / first.name).stat().st_mtime_ns == stamp
    assert not (out / "removed").exists()
    _dedup(str(first), "--out", str(out), "--write", "kept")
    assert sorted(p.name for p in (out / "kept").iterdir() if p.is_file()) == [first.name]


def test_write_refuses_stdin_and_unknown_modes(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(cli, ["dedup", "-", "--out", str(tmp_path / "o"), "--write", "kept"])
    assert result.exit_code == 2
    assert "name the files instead of - (stdin)" in result.output
    result = runner.invoke(cli, ["dedup", "x", "--out", str(tmp_path / "o"), "--write", "dropped"])
    assert result.exit_code == 2
    assert "'dropped': use kept, removed, annotated" in result.output


def _kept_ids(out: Path, source: str, kept: bool) -> list[str]:
    documents = pq.read_table(out / "documents.parquet").to_pylist()
    clusters = pq.read_table(out / "clusters.parquet").to_pylist()
    return [doc["id"] for doc, cluster in zip(documents, clusters, strict=True)
            if doc["source"] == source and cluster["kept"] == kept]


def _record_ids(path: Path) -> list[str]:
    """The ids of the records of a WARC file but its warcinfo, read by FastWARC."""
    from fastwarc.warc import ArchiveIterator, WarcRecordType

    with path.open("rb") as raw:
        return [record.record_id.strip("<>") for record in ArchiveIterator(raw)
                if record.record_type != WarcRecordType.warcinfo]


def _warcs(shared_data: Path, folder: Path) -> list[Path]:
    """Two gzipped WARC files (one record per member) and one plain WARC made from one, in one
    folder."""
    folder.mkdir()
    warcs = []
    for name in ("dupes-revisits.warc.gz", "iana-revisits.warc.gz"):
        warcs.append(folder / name)
        warcs[-1].write_bytes((shared_data / "warc" / name).read_bytes())
    plain = folder / "iana-plain.warc"
    plain.write_bytes(gzip.decompress(warcs[1].read_bytes()))
    return [*warcs, plain]


@pytest.mark.slow
def test_warc_records_of_the_kept_documents_are_copied_whole(shared_data: Path,
                                                              tmp_path: Path) -> None:
    warcs = _warcs(shared_data, tmp_path / "in")
    out = tmp_path / "out"
    _dedup(*map(str, warcs), "--out", str(out), "--write", "kept,removed")
    for warc in warcs:
        for mode, kept in (("kept", True), ("removed", False)):
            expected = _kept_ids(out, str(warc), kept)
            written = out / mode / warc.name
            if not expected:
                assert not written.exists()
                continue
            assert _record_ids(written) == expected, (warc, mode)
            if mode == "kept":  # the kept records read back as the same documents
                assert [doc.id for doc in open_sources([str(written)])] == expected
            head = written.read_bytes()
            head = gzip.decompress(head)[:300] if warc.suffix == ".gz" else head[:300]
            source = warc.read_bytes()
            source = gzip.decompress(source)[:300] if warc.suffix == ".gz" else source[:300]
            if b"WARC-Type: warcinfo" in source.split(b"\r\n\r\n")[0]:
                assert head == source  # the warcinfo record comes first, as in the input


def test_archives_that_cannot_be_cut_are_refused_by_name(shared_data: Path,
                                                         tmp_path: Path) -> None:
    for name, cause in (("archive-org-2008.arc.gz", "ARC inputs are not supported"),
                        ("clueweb09-lf-only-headers.warc.gz", "several records share")):
        path = shared_data / "warc" / name
        result = CliRunner().invoke(cli, ["dedup", str(path), "--out", str(tmp_path / name),
                                          "--workers", "1", "--quiet", "--write", "kept"])
        assert result.exit_code == 1
        assert str(path) in result.output
        assert cause in result.output
