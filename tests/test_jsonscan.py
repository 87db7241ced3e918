"""The compiled scan of flat JSON objects reads what ``json.loads`` reads, or declines."""

from __future__ import annotations

import json
from itertools import accumulate
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neardup.sources.jsonruns as jsonruns
from neardup.sources.context import ReadContext
from neardup.sources.fields import RowFields
from neardup.sources.jsonscan import scan_run
from neardup.sources.stats import SourceStats
from neardup.text.compiled import kernel_mode

CONTENT = ("text", "html")


def _scanned(lines: list[bytes], mode: str = "compile") -> list[dict[str, Any]] | None:
    with kernel_mode(mode):  # type: ignore[arg-type]
        run = scan_run(b"".join(lines), list(accumulate(map(len, lines))))
    if run is None:
        return None
    assert len(run) == len(lines)
    return [run.row(line, CONTENT) for line in range(len(run))]


def _expected(line: bytes) -> dict[str, Any]:
    """``json.loads``'s object, its content strings as their UTF-8 bytes."""
    row: dict[str, Any] = json.loads(line)
    return {key: value.encode("utf-8") if key in CONTENT and isinstance(value, str) else value
            for key, value in row.items()}


def test_escapes_unicode_and_scalars_read_as_json_loads() -> None:
    rows = [{"id": "d\u00e9\"1\\", "text": "caf\u00e9 \u4e2d\u6587\n\t\"q\" \U0001F600 /\b\f\r",
             "n": -12, "zero": 0, "big": 10**17, "t": True, "f": False, "none": None,
             "": "empty key", "html": "<p>\u00a0</p>"}]
    lines = [json.dumps(r, ensure_ascii=ascii).encode() + b"\n" for r in rows
             for ascii in (True, False)]
    lines.append(b' \t{ "a" : "\\u00e9\\/" ,"text":"x\\u20ac"}  \r\n')
    lines.append(b"{}\n")
    found = _scanned(lines)
    assert found == [_expected(line) for line in lines]
    assert found[-1] == {} and found[-2] == {"a": "\u00e9/", "text": "x\u20ac".encode()}


DECLINED = {
    "nested object": b'{"a": {"b": 1}}',
    "array": b'{"a": [1]}',
    "array line": b"[1, 2]",
    "float": b'{"a": 1.5}',
    "exponent": b'{"a": 1e5}',
    "big integer": b'{"a": 1234567890123456789}',
    "leading zero": b'{"a": 01}',
    "lone minus": b'{"a": -}',
    "nan": b'{"a": NaN}',
    "duplicate key": b'{"a": 1, "a": 2}',
    "duplicate escaped key": b'{"a": 1, "\\u0061": 2}',
    "lone surrogate": b'{"a": "\\ud800"}',
    "high surrogate then a letter": b'{"a": "\\ud83dx"}',
    "low surrogate": b'{"a": "\\ude00"}',
    "two high surrogates": b'{"a": "\\ud83d\\ud83d"}',
    "unknown escape": b'{"a": "\\x41"}',
    "short unicode escape": b'{"a": "\\u12"}',
    "control character": b'{"a": "x\ty"}',
    "invalid utf-8": b'{"a": "\xff"}',
    "overlong utf-8": b'{"a": "\xc0\xaf"}',
    "encoded surrogate": b'{"a": "\xed\xa0\x80"}',
    "cut utf-8": b'{"a": "\xe2\x82"}',
    "byte-order mark": b'\xef\xbb\xbf{"a": 1}',
    "two objects": b'{"a": 1} {"b": 2}',
    "trailing comma": b'{"a": 1,}',
    "unquoted key": b"{a: 1}",
    "unclosed": b'{"a": "x',
    "bad literal": b'{"a": tru}',
    "literal then junk": b'{"a": truex}',
    "vertical tab": b'{"a": 1}\x0b',
}


@pytest.mark.parametrize("name", sorted(DECLINED))
def test_what_json_loads_may_read_otherwise_is_declined(name: str) -> None:
    lines = [b'{"text": "fine"}\n', DECLINED[name] + b"\n"]
    assert _scanned(lines) is None
    assert _scanned(lines, "interpret") is None
    assert _scanned(lines[:1]) == [{"text": b"fine"}]


_strings = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
_values = st.one_of(st.none(), st.booleans(), st.integers(-10**18 + 1, 10**18 - 1), _strings)
_rows = st.dictionaries(st.one_of(st.sampled_from(["id", "text", "html", "url"]), _strings),
                        _values, max_size=6)


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(_rows, min_size=1, max_size=6), ascii=st.booleans(),
       spaced=st.booleans())
def test_any_flat_objects_read_as_json_loads_both_ways(rows: list[dict[str, Any]], ascii: bool,
                                                       spaced: bool) -> None:
    separators = (", ", ": ") if spaced else (",", ":")
    lines = [json.dumps(r, ensure_ascii=ascii, separators=separators).encode() + b"\n"
             for r in rows]
    expected = [_expected(line) for line in lines]
    assert _scanned(lines) == expected
    assert _scanned(lines, "interpret") == expected


def test_runs_of_flat_lines_are_scanned_not_parsed_by_pyarrow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps({"id": i, "text": f"t\u00e9{i}"}).encode() + b"\n" for i in range(5)]
    monkeypatch.setattr(jsonruns, "_table", lambda *args: pytest.fail("pyarrow was asked"))
    docs = jsonruns.run_documents(lines, range(1, 6), "in", ReadContext(SourceStats()))
    assert docs is not None
    assert [(d.id, d.raw, d.kind) for d in docs] == [
        (str(i), f"t\u00e9{i}".encode(), "text") for i in range(5)]


def test_a_payload_column_another_convention_reads_is_left_to_pyarrow(
        monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [json.dumps({"date": "2020-01-02", "id": i}).encode() + b"\n" for i in range(3)]
    monkeypatch.setattr(jsonruns, "scan_run", lambda *args: pytest.fail("scanned"))
    ctx = ReadContext(SourceStats(), fields=RowFields(text="date"))
    docs = jsonruns.run_documents(lines, range(1, 4), "in", ctx)
    assert docs is not None and [d.raw for d in docs] == [b"2020-01-02"] * 3


def test_lines_of_many_fields_grow_the_room_for_them() -> None:
    lines = [json.dumps({f"k{i}": i for i in range(count)}).encode() + b"\n"
             for count in (1, 40, 3, 200)]
    assert _scanned(lines) == [json.loads(line) for line in lines]
    assert _scanned(lines, "interpret") == [json.loads(line) for line in lines]
