"""Runs of JSONL lines parsed at once: the fast paths of JSONL reading.

:mod:`neardup.sources.jsonl` gathers consecutive non-blank lines into a run and hands it here.
A run of flat objects (strings, integers, booleans, nulls) is scanned by a compiled kernel
(:mod:`neardup.sources.jsonscan`, which declines anything it could read otherwise than
``json.loads``); a run it declines goes to pyarrow's JSON reader, which parses the run in C++
into one table; each row's text (or HTML) is cut from its column's buffer as the UTF-8 bytes a
document holds, instead of being decoded into a Python string by ``json.loads`` and encoded
back (about half the CPU of reading a line of real text).
The other fields become small Python values and go through the same row conventions
(:func:`neardup.sources.rows.content_to_document`).

The result must be what parsing line by line gives, so a run is declined (None: the caller
parses its lines one by one, counting errors as always) whenever pyarrow could read it
otherwise: pyarrow refuses it (a line that is not JSON, a field that changes type between
lines, a lone surrogate, a key twice in an object); it holds invalid UTF-8 (which pyarrow's
parser lets through: the table is validated); a line holds more or fewer than one object; a
field holds a floating-point number (pyarrow turns the integers of a column that also holds
fractions into floats, so ``1`` would read as ``1.0``) or a value of another type than string,
integer, boolean or null, nested values aside; or objects are nested deeper than
:data:`MAX_DEPTH` (where ``json.loads`` gives up). A field whose strings pyarrow takes for
timestamps is read again as strings, so that its text is kept as written.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from typing import Any, Final

import numpy as np

from neardup.document import Document
from neardup.sources.context import ReadContext
from neardup.sources.jsonscan import ScannedRun, scan_run
from neardup.sources.rows import Content, content_to_document

__all__ = ["MAX_DEPTH", "run_documents"]

MAX_DEPTH: Final = 64
"""Values nested deeper than this are left to ``json.loads`` (its recursion limit decides)."""


def _parse(blob: bytes, strings: Sequence[str] = ()) -> Any | None:
    """The table of the lines in ``blob`` (the fields ``strings`` read as strings), or None
    when pyarrow refuses them."""
    import pyarrow as pa
    import pyarrow.json as pj

    options = pj.ReadOptions(use_threads=False, block_size=len(blob) + 1)
    schema = pa.schema([(name, pa.string()) for name in strings]) if strings else None
    parse = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    try:
        return pj.read_json(pa.py_buffer(blob), read_options=options, parse_options=parse)
    except (pa.ArrowException, ValueError):
        return None


def _depth(kind: Any) -> int:
    return 1 + max((_depth(kind.field(i).type) for i in range(kind.num_fields)), default=0)


def _table(blob: bytes, lines: int) -> Any | None:
    """The run's table with one row per line, its timestamps read back as strings; None when
    it is not what ``json.loads`` gives line by line (see the module's docstring)."""
    import pyarrow as pa

    table = _parse(blob)
    if table is None:
        return None
    try:
        table.validate(full=True)  # pyarrow's parser lets invalid UTF-8 through
        dated = [f.name for f in table.schema if pa.types.is_timestamp(f.type)
                 or pa.types.is_date(f.type)]
    except (pa.ArrowException, ValueError):  # invalid UTF-8 in a value or a key
        return None
    if dated:
        table = _parse(blob, dated)
    if table is None or table.num_rows != lines:
        return None
    return table if all(_readable(column.type) for column in table.schema) else None


def _readable(kind: Any) -> bool:
    """Whether a field of this type reads as ``json.loads`` reads it: strings, integers,
    booleans, nulls, and nested values not too deep (which no row convention reads)."""
    import pyarrow as pa

    if pa.types.is_struct(kind) or pa.types.is_list(kind):
        return _depth(kind) <= MAX_DEPTH
    return bool(pa.types.is_string(kind) or pa.types.is_int64(kind)
                or pa.types.is_boolean(kind) or pa.types.is_null(kind))


def _content_cutter(table: Any, name: str) -> Any | None:
    """A function giving row ``i``'s UTF-8 bytes of string column ``name`` (None where it is
    null), or None when the table has no such column or it holds no string."""
    import pyarrow as pa

    if name not in table.column_names or not pa.types.is_string(table.schema.field(name).type):
        return None
    column = table.column(name).combine_chunks()
    validity, offsets_buffer, data_buffer = column.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=np.int32)[
        column.offset:column.offset + len(column) + 1].tolist()
    data = data_buffer.to_pybytes() if data_buffer is not None else b""
    valid = [True] * len(column) if column.null_count == 0 else np.unpackbits(
        np.frombuffer(validity, dtype=np.uint8), bitorder="little")[
        column.offset:column.offset + len(column)].astype(bool).tolist()

    def cut(row: int) -> bytes | None:
        return data[offsets[row]:offsets[row + 1]] if valid[row] else None

    return cut


def _contents(table: Any, ctx: ReadContext) -> list[Content | None]:
    """Each row's (payload, kind, charset): its text field, else its HTML field, else None."""
    text = _content_cutter(table, ctx.fields.text)
    html = _content_cutter(table, ctx.fields.html)
    found: list[Content | None] = []
    for row in range(table.num_rows):
        raw = text(row) if text is not None else None
        if raw is not None:
            found.append((raw, "text", "utf-8"))
            continue
        raw = html(row) if html is not None else None
        found.append(None if raw is None else (raw, "html", "utf-8"))
    return found


def _scalars(table: Any, ctx: ReadContext) -> list[dict[str, Any]]:
    """Each row's fields other than the content ones, as Python values (nested ones left out:
    no row convention reads them)."""
    import pyarrow as pa

    content = (ctx.fields.text, ctx.fields.html)
    names = [f.name for f in table.schema
             if not (f.name in content and pa.types.is_string(f.type))  # read by _contents
             and not (pa.types.is_struct(f.type) or pa.types.is_list(f.type))]
    rows: list[dict[str, Any]] = table.select(names).to_pylist()
    return rows


_CONVENTIONS: Final = frozenset({"date", "fetched", "sweep"})
"""Columns a row convention reads besides the configurable ones."""


def _scanned_contents(scanned: ScannedRun, ctx: ReadContext
                      ) -> list[tuple[Content | None, dict[str, Any]]]:
    """Each scanned line's (payload, kind, charset) and its object, whose text and HTML
    strings stay bytes (only the payload reads them)."""
    text, html = ctx.fields.text, ctx.fields.html
    found: list[tuple[Content | None, dict[str, Any]]] = []
    for line in range(len(scanned)):
        row = scanned.row(line, (text, html))
        raw = row.get(text)
        content: Content | None = None
        if isinstance(raw, bytes):
            content = (raw, "text", "utf-8")
        elif isinstance(raw := row.get(html), bytes):
            content = (raw, "html", "utf-8")
        found.append((content, row))
    return found


def _scanned(blob: bytes, lines: Sequence[bytes], ctx: ReadContext
             ) -> list[tuple[Content | None, dict[str, Any]]] | None:
    """The lines' payloads and objects from the compiled scan, or None when it declines them
    (or a payload column is also one another convention reads as a string)."""
    if {ctx.fields.text, ctx.fields.html} & _CONVENTIONS:
        return None
    scanned = scan_run(blob, list(accumulate(map(len, lines))))
    return None if scanned is None else _scanned_contents(scanned, ctx)


def _parsed(blob: bytes, lines: int, ctx: ReadContext
            ) -> list[tuple[Content | None, dict[str, Any]]] | None:
    """The lines' payloads and other fields from pyarrow's reader, or None when it declines."""
    table = _table(blob, lines)
    if table is None:
        return None
    return list(zip(_contents(table, ctx), _scalars(table, ctx), strict=True))


def run_documents(lines: Sequence[bytes], numbers: Sequence[int], source: str,
                  ctx: ReadContext) -> list[Document] | None:
    """The documents of non-blank JSONL ``lines`` (numbered ``numbers``), counted in ``ctx`` as
    line by line; None (nothing counted) when the run must be parsed line by line. The lines
    are scanned by the compiled kernel (:mod:`neardup.sources.jsonscan`), else read by
    pyarrow."""
    blob = b"".join(lines)
    found = _scanned(blob, lines, ctx)
    if found is None:
        found = _parsed(blob, len(lines), ctx)
    if found is None:
        return None
    documents = []
    for (content, row), number in zip(found, numbers, strict=True):
        ctx.stats.records += 1
        doc = content_to_document(content, row, source=source, offset=number,
                                  default_id=f"{source}:{number}", ctx=ctx)
        if doc is not None:
            documents.append(doc)
    return documents
