"""Other column names for a row's text, HTML, id and URL: ``RowFields`` in the readers, and
``--text-field``, ``--html-field``, ``--id-field``, ``--url-field`` on the commands."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.errors import ConfigError
from neardup.methods.fingerprinter import document_text
from neardup.sources import RowFields, open_sources

ROWS = [{"doc_id": f"r{i}", "content": f"this row says something about topic {i % 3} " * 8,
         "link": f"https://example.org/{i}", "text": "not this one", "lang": "en"}
        for i in range(6)]
FIELDS = RowFields(text="content", id="doc_id", url="link")


def _write_both(folder: Path) -> tuple[Path, Path]:
    jsonl = folder / "rows.jsonl.gz"
    with gzip.open(jsonl, "wt") as out:
        out.writelines(json.dumps(row) + "\n" for row in ROWS)
    parquet = folder / "rows.parquet"
    pq.write_table(pa.Table.from_pylist(ROWS), parquet)
    return jsonl, parquet


def test_readers_take_the_named_columns(tmp_path: Path) -> None:
    for path in _write_both(tmp_path):
        docs = list(open_sources([str(path)], fields=FIELDS))
        assert [doc.id for doc in docs] == [row["doc_id"] for row in ROWS]
        assert [doc.raw.decode() for doc in docs] == [row["content"] for row in ROWS]
        assert [doc.url for doc in docs] == [row["link"] for row in ROWS]
        assert docs[0].host == "example.org"
        # the renamed columns are fields, not extras; the default names are ordinary columns now
        assert docs[0].extra == {"text": "not this one", "lang": "en"}


def test_the_default_names_still_read_text(tmp_path: Path) -> None:
    _, parquet = _write_both(tmp_path)
    docs = list(open_sources([str(parquet)]))
    assert {doc.raw for doc in docs} == {b"not this one"}
    assert docs[0].id == f"{parquet}:0"


def test_a_missing_column_is_counted_not_guessed(tmp_path: Path) -> None:
    _, parquet = _write_both(tmp_path)
    reader = open_sources([str(parquet)], fields=RowFields(text="body", html="raw"))
    assert list(reader) == []
    assert reader.stats.as_dict()["skipped"] == {"missing-text": len(ROWS)}


def test_a_missing_column_is_named_once_with_the_fields_a_row_has(tmp_path: Path) -> None:
    for path in _write_both(tmp_path):
        reader = open_sources([str(path)], fields=RowFields(text="body", html="raw"))
        assert list(reader) == []
        first = f"{path}:0" if path.suffix == ".parquet" else f"{path}:1"
        assert reader.stats.errors == [
            f"{first}: skipped, no 'body' or 'raw' string (fields with a value: content, "
            "doc_id, lang, link, text); --text-field or --html-field names the column to read"]


def test_a_binary_text_column_is_read_as_text(tmp_path: Path) -> None:
    path = tmp_path / "binary.parquet"
    texts = ["caf\u00e9 one two".encode(), "plain".encode("latin-1"), "caf\u00e9".encode("cp1252")]
    pq.write_table(pa.table({"id": ["a", "b", "c"], "text": pa.array(texts, pa.binary())}), path)
    docs = list(open_sources([str(path)]))
    assert [(doc.id, doc.raw, doc.kind) for doc in docs] == [
        (id_, raw, "text") for id_, raw in zip("abc", texts, strict=True)]
    assert document_text(docs[0]) == "caf\u00e9 one two"
    assert document_text(docs[2]) == "caf\u00e9"  # not UTF-8: its encoding detected


def test_a_content_field_of_another_type_is_named(tmp_path: Path) -> None:
    path = tmp_path / "numbers.parquet"
    pq.write_table(pa.table({"text": [7, 8], "html": [None, None]}), path)
    reader = open_sources([str(path)])
    assert list(reader) == []
    assert reader.stats.errors == [
        f"{path}:0: skipped, no string in its content fields ('text' holds int)"]


@pytest.mark.parametrize("names", [{"text": ""}, {"text": "a", "html": "a"}, {"id": 3}])
def test_bad_field_names_are_refused(names: dict[str, object]) -> None:
    with pytest.raises(ConfigError):
        RowFields(**names)  # type: ignore[arg-type]


def test_index_and_query_read_the_named_columns(tmp_path: Path) -> None:
    jsonl, parquet = _write_both(tmp_path)
    store = tmp_path / "store"
    runner = CliRunner()
    named = ["--text-field", "content", "--id-field", "doc_id", "--url-field", "link"]
    result = runner.invoke(cli, ["index", str(parquet), "--store", str(store), "--workers", "1",
                                 "--json", *named], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["query", str(jsonl), "--store", str(store), "--json", *named],
                           catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "https://example.org/0" in result.output


def test_one_column_for_two_fields_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["index", str(tmp_path), "--store", str(tmp_path / "s"),
                                      "--text-field", "x", "--id-field", "x"])
    assert result.exit_code == 2
    assert "one column cannot hold two fields" in result.output


def test_dedup_reads_the_named_columns_and_writes_the_kept_rows(tmp_path: Path) -> None:
    _, parquet = _write_both(tmp_path)
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["dedup", str(parquet), "--out", str(out), "--workers", "1",
                                      "--quiet", "--text-field", "content", "--id-field",
                                      "doc_id", "--write", "kept"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    documents = pq.read_table(out / "documents.parquet").column("id").to_pylist()
    assert documents == [row["doc_id"] for row in ROWS]
    kept = pq.read_table(out / "kept" / parquet.name)
    assert kept.schema == pq.read_schema(parquet)
    assert kept.column("doc_id").to_pylist() == ["r0", "r1", "r2"]  # rows 3-5 repeat 0-2


def test_dedup_on_spark_refuses_field_names(tmp_path: Path) -> None:
    _, parquet = _write_both(tmp_path)
    result = CliRunner().invoke(cli, ["dedup", str(parquet), "--out", str(tmp_path / "o"),
                                      "--engine", "spark", "--text-field", "content"])
    assert result.exit_code == 2
    assert "go with --engine local" in result.output
