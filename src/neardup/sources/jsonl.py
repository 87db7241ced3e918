"""Reading JSONL (one JSON object per line, optionally gzipped).

Column conventions: :mod:`neardup.sources.rows`. A line that is not a JSON object is counted
``json-error`` with an error line naming the file and line number; blank lines are ignored. A
gzip stream that ends early stops the file (``truncated-record``) after the lines read so far.
With a :class:`~neardup.sources.blocks.BlockCursor`, only the lines of the cursor's blocks are
parsed (the block of a line is its line number, blank lines included, over the block size).
A line longer than :func:`line_cap` (four times the payload cap: room for JSON escapes) is
skipped unread (``too-large``), so a gzip bomb of one endless line costs no more memory than the
cap, as for every other decompressed input.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from neardup.document import Document
from neardup.sources.blocks import BlockCursor
from neardup.sources.context import ReadContext
from neardup.sources.gunzip import GZIP_ERRORS, gunzip
from neardup.sources.location import open_binary
from neardup.sources.rows import row_to_document

__all__ = ["line_cap", "read_jsonl", "read_jsonl_stream", "read_lines"]


def line_cap(max_bytes: int) -> int:
    """The longest JSONL line read, for a payload cap of ``max_bytes``."""
    return 4 * max_bytes + (1 << 16)


def _bounded_lines(stream: BinaryIO | io.BufferedReader, cap: int) -> Iterator[bytes | None]:
    """The lines of ``stream``; None for a line longer than ``cap`` (read past, never held)."""
    while line := stream.readline(cap + 1):
        if len(line) <= cap or line.endswith(b"\n"):
            yield line
            continue
        while (rest := stream.readline(1 << 20)) and not rest.endswith(b"\n"):
            pass
        yield None


def read_jsonl(path: str, source: str, gz: bool, ctx: ReadContext,
               cursor: BlockCursor | None = None) -> Iterator[Document]:
    """Documents from a JSONL file (``source`` is the path as the user gave it)."""
    with open_binary(path) as raw:
        yield from read_jsonl_stream(raw, source, gz, ctx, cursor)


def read_jsonl_stream(raw: BinaryIO, source: str, gz: bool, ctx: ReadContext,
                      cursor: BlockCursor | None = None) -> Iterator[Document]:
    """Documents from a JSONL byte stream (a file or stdin)."""
    cap = line_cap(ctx.max_bytes)
    if not gz:
        yield from _lines(_bounded_lines(raw, cap), source, ctx, cursor, [0])
        return
    seen = [0]
    with gunzip(raw) as unzipped:
        try:
            yield from _lines(_bounded_lines(unzipped, cap), source, ctx, cursor, seen)
        except GZIP_ERRORS as err:
            if cursor is not None and not cursor.owns_record(seen[0]):
                return
            ctx.stats.skip("truncated-record" if isinstance(err, EOFError) else "bad-record")
            ctx.stats.error(f"{source}: gzip stream damaged or cut short ({err}); stopped there")


def read_lines(lines: Iterable[bytes], source: str, ctx: ReadContext, *,
               first: int = 1) -> Iterator[Document]:
    """The documents of lines numbered from ``first`` (a block of a larger file)."""
    yield from _lines(lines, source, ctx, None, [0], first)


def _lines(lines: Iterable[bytes | None], source: str, ctx: ReadContext,
           cursor: BlockCursor | None, seen: list[int], first: int = 1) -> Iterator[Document]:
    """The documents of the lines (those of ``cursor``'s blocks); ``seen[0]`` counts the lines
    read so far."""
    for lineno, line in enumerate(lines, start=first):
        seen[0] = lineno
        if cursor is not None and not cursor.take(lineno - 1):
            continue
        if line is None or len(line) > line_cap(ctx.max_bytes):
            ctx.stats.records += 1
            ctx.stats.skip("too-large")
            ctx.stats.error(f"{source}: line {lineno}: longer than "
                            f"{line_cap(ctx.max_bytes):,} bytes; skipped")
            continue
        if not line.strip():
            continue
        ctx.stats.records += 1
        row = _parse(line, source, lineno, ctx)
        if row is None:
            continue
        doc = row_to_document(
            row, source=source, offset=lineno, default_id=f"{source}:{lineno}", ctx=ctx
        )
        if doc is not None:
            yield doc


def _parse(line: bytes, source: str, lineno: int, ctx: ReadContext) -> dict[str, object] | None:
    try:
        row = json.loads(line)
    except (ValueError, RecursionError) as err:
        ctx.stats.skip("json-error")
        ctx.stats.error(f"{source}: line {lineno}: not JSON ({err})")
        return None
    if not isinstance(row, dict):
        ctx.stats.skip("json-error")
        ctx.stats.error(f"{source}: line {lineno}: a JSON {type(row).__name__}, not an object")
        return None
    return row
