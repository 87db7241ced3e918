"""JSONL lines parsed in runs by pyarrow give what parsing them one by one gives."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neardup.sources.jsonl as jsonl
import neardup.sources.jsonruns as jsonruns
from neardup.sources.blocks import BlockCursor, Blocks
from neardup.sources.context import ReadContext
from neardup.sources.stats import SourceStats


def _read(path: Path, *, runs: bool, monkeypatch: pytest.MonkeyPatch,
          cursor: BlockCursor | None = None, gz: bool = False) -> tuple[list[Any], dict[str, Any]]:
    """(documents as tuples, stats) of ``path``, in runs or (``runs`` False) line by line."""
    taken: list[int] = []
    original = jsonl.run_documents

    def counted(*args: Any) -> Any:
        found = original(*args)
        taken.append(found is not None)
        return found

    monkeypatch.setattr(jsonl, "run_documents", counted if runs else lambda *args: None)
    ctx = ReadContext(SourceStats(), max_bytes=4096)
    docs = [dataclasses.astuple(d) for d in jsonl.read_jsonl(str(path), "in", gz, ctx, cursor)]
    monkeypatch.setattr(jsonl, "run_documents", original)
    stats = ctx.stats.as_dict() | {"runs_taken": sum(taken)} if runs else ctx.stats.as_dict()
    return docs, stats


def _both(path: Path, monkeypatch: pytest.MonkeyPatch, **kwargs: Any) -> tuple[Any, Any, int]:
    slow_docs, slow_stats = _read(path, runs=False, monkeypatch=monkeypatch, **kwargs)
    fast_docs, fast_stats = _read(path, runs=True, monkeypatch=monkeypatch, **kwargs)
    taken = fast_stats.pop("runs_taken")
    assert fast_docs == slow_docs
    assert fast_stats == slow_stats
    return fast_docs, fast_stats, taken


def test_plain_lines_take_the_fast_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [{"id": f"d{i}", "text": f"caf\u00e9 {i} \u4e2d\u6587 \"q\"\n\\", "url": "http://a.example/x",
             "date": "2020-01-02T03:04:05Z", "score": i, "ok": i % 2 == 0, "none": None,
             "meta": {"a": [1, 2]}} for i in range(600)]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=i % 2 == 0) + "\n"
                            for i, r in enumerate(rows)), encoding="utf-8")
    docs, stats, taken = _both(path, monkeypatch)
    assert len(docs) == 600 and stats["documents"] == 600
    assert taken == 3  # 256 + 256 + 88 lines
    first = docs[0]
    assert first[0] == "d0" and first[1] == "caf\u00e9 0 \u4e2d\u6587 \"q\"\n\\".encode()
    assert first[5] == "2020-01-02T03:04:05Z"[:len(first[5])]  # the date kept as written


BAD_RUNS = {
    "not json": ['{"text": "a"}', "{oops", '{"text": "b"}'],
    "an array line": ['{"text": "a"}', "[1, 2]", '{"text": "b"}'],
    "type change": ['{"id": "x", "text": "a"}', '{"id": 7, "text": "b"}'],
    "ints and floats": ['{"text": "a", "n": 1}', '{"text": "b", "n": 1.5}'],
    "huge int": ['{"text": "a", "n": 99999999999999999999}', '{"text": "b"}'],
    "two objects a line": ['{"text": "a"} {"text": "b"}', '{"text": "c"}'],
    "lone surrogate": ['{"text": "a\\ud800"}', '{"text": "b"}'],
    "duplicate key": ['{"text": "a", "text": "z"}', '{"text": "b"}'],
    "number text": ['{"text": 5, "html": "<p>h</p>"}', '{"text": "b"}'],
    "missing and empty": ['{"text": ""}', '{"url": "http://x.example/"}', '{"text": "b"}'],
    "blank lines": ['{"text": "a"}', "", "   ", '{"text": "b"}'],
    "too large": ['{"text": "a"}', '{"text": "' + "x" * 70_000 + '"}', '{"text": "b"}'],
    "deep": ['{"text": "a", "n": ' + "[" * 80 + "]" * 80 + "}", '{"text": "b"}'],
}


@pytest.mark.parametrize("name", sorted(BAD_RUNS))
def test_runs_pyarrow_reads_otherwise_are_read_line_by_line(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes("\n".join(BAD_RUNS[name]).encode() + b"\n")
    docs, stats, _ = _both(path, monkeypatch)
    assert stats["records"] >= 2
    assert docs  # something was read in every case


NO_TEXT = ['{"text": "a"}', '{"url": "http://x.example/", "id": null}', '{"text": null, "id": 3}',
           '{"content": "c"}', '{"text": "d"}']


@pytest.mark.parametrize("scanner", ["compiled scan", "pyarrow"])
def test_rows_without_text_are_named_alike_by_every_reader(
        scanner: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("\n".join(NO_TEXT) + "\n")
    if scanner == "pyarrow":
        monkeypatch.setattr(jsonruns, "scan_run", lambda *args: None)
    docs, stats, taken = _both(path, monkeypatch)
    assert taken == 1 and [d[1] for d in docs] == [b"a", b"d"]
    assert stats["skipped"] == {"missing-text": 3}
    assert stats["errors"] == [  # one line for the three: they share their cause
        "in:2: skipped, no 'text' or 'html' string (fields with a value: url); --text-field or "
        "--html-field names the column to read"]


def test_invalid_utf8_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "in.jsonl"
    path.write_bytes(b'{"text": "a"}\n{"text": "b\xff"}\n{"text": "c"}\n')
    docs, stats, taken = _both(path, monkeypatch)
    assert [d[1] for d in docs] == [b"a", b"c"] and stats["skipped"] == {"json-error": 1}
    assert taken == 0


def test_blocks_and_gzip_break(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs end where blocks end (a reader of every other block) and where a gzip stream
    breaks (the lines read before it stay)."""
    lines = "".join(json.dumps({"text": f"t{i}"}) + ("\n" if i % 7 else "\n\n")
                    for i in range(700)).encode()
    plain = tmp_path / "in.jsonl"
    plain.write_bytes(lines)
    docs, _, taken = _both(plain, monkeypatch,
                           cursor=BlockCursor(Blocks(100, 2, 1), SourceStats()))
    assert taken > 0 and docs and all((d[7] - 1) // 100 % 2 == 1 for d in docs)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(gzip.compress(lines)[:-400])
    docs, stats, _ = _both(cut, monkeypatch, gz=True)
    assert 0 < len(docs) < 700 and stats["skipped"] == {"truncated-record": 1}


_values = st.one_of(st.none(), st.booleans(), st.integers(-2**70, 2**70),
                    st.floats(allow_nan=False), st.text(max_size=20),
                    st.lists(st.integers(), max_size=3))
_rows = st.dictionaries(st.sampled_from(["id", "text", "html", "url", "date", "sweep", "x"]),
                        _values, max_size=5)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.lists(st.one_of(_rows, st.just("garbage"), st.just("")), min_size=2,
                     max_size=12))
def test_any_lines_read_as_line_by_line(rows: list[Any], tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "in.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows),
                    encoding="utf-8")
    _both(path, monkeypatch)
