"""Reading JSONL (one JSON object per line, optionally gzipped).

Column conventions: :mod:`neardup.sources.rows`. A line that is not a JSON object is counted
``json-error`` with an error line naming the file and line number; blank lines are ignored. A
gzip stream that ends early stops the file (``truncated-record``) after the lines read so far.
With a :class:`~neardup.sources.blocks.BlockCursor`, only the lines of the cursor's blocks are
parsed (the block of a line is its line number, blank lines included, over the block size).
A line longer than :func:`line_cap` (four times the payload cap: room for JSON escapes) is
skipped unread (``too-large``), so a gzip bomb of one endless line costs no more memory than the
cap, as for every other decompressed input. Consecutive non-blank lines are parsed in runs by
pyarrow's JSON reader when it reads them as ``json.loads`` does, else one by one
(:mod:`neardup.sources.jsonruns`).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Iterator
from typing import BinaryIO, Final

from neardup.document import Document
from neardup.sources.blocks import BlockCursor
from neardup.sources.context import ReadContext
from neardup.sources.gunzip import GZIP_ERRORS, gunzip
from neardup.sources.jsonruns import run_documents
from neardup.sources.location import open_binary
from neardup.sources.rows import row_to_document

__all__ = ["READ_BUFFER", "RUN_BYTES", "RUN_LINES", "line_cap", "read_jsonl", "read_jsonl_stream",
           "read_lines"]

READ_BUFFER: Final = 1 << 20
"""Bytes read from a JSONL file at a time (a line of real text is about 4 KB: with the default
8 KB buffer, ``readline`` made a system call every two lines and cost three times as much)."""
RUN_LINES: Final = 256
RUN_BYTES: Final = 4 << 20
"""Non-blank lines are parsed together in runs of at most this many lines and bytes."""


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
    with open_binary(path, READ_BUFFER) as raw:
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


class _Run:
    """Consecutive non-blank lines waiting to be parsed together
    (:func:`neardup.sources.jsonruns.run_documents`), or line by line when that declines."""

    def __init__(self, source: str, ctx: ReadContext) -> None:
        self.source, self.ctx = source, ctx
        self.lines: list[bytes] = []
        self.numbers: list[int] = []
        self.size = 0

    def add(self, lineno: int, line: bytes) -> bool:
        """Add a line; whether the run is now full."""
        self.lines.append(line)
        self.numbers.append(lineno)
        self.size += len(line)
        return len(self.lines) >= RUN_LINES or self.size >= RUN_BYTES

    def flush(self) -> Iterator[Document]:
        """The documents of the run's lines, in order; the run is left empty."""
        lines, numbers = self.lines, self.numbers
        self.lines, self.numbers, self.size = [], [], 0
        found = run_documents(lines, numbers, self.source, self.ctx) \
            if len(lines) > 1 else None
        if found is not None:
            yield from found
            return
        for lineno, line in zip(numbers, lines, strict=True):
            self.ctx.stats.records += 1
            row = _parse(line, self.source, lineno, self.ctx)
            doc = None if row is None else row_to_document(
                row, source=self.source, offset=lineno, default_id=f"{self.source}:{lineno}",
                ctx=self.ctx)
            if doc is not None:
                yield doc


def _lines(lines: Iterable[bytes | None], source: str, ctx: ReadContext,
           cursor: BlockCursor | None, seen: list[int], first: int = 1) -> Iterator[Document]:
    """The documents of the lines (those of ``cursor``'s blocks); ``seen[0]`` counts the lines
    read so far. Lines are parsed in runs, each ended before a new block begins, a line is
    skipped or the stream fails, so that counts and error lines fall as line by line."""
    run = _Run(source, ctx)
    try:
        for lineno, line in enumerate(lines, start=first):
            seen[0] = lineno
            if cursor is not None and cursor.blocks.block_of(lineno - 1) != cursor.current:
                yield from run.flush()
            if cursor is not None and not cursor.take(lineno - 1):
                continue
            if line is None or len(line) > line_cap(ctx.max_bytes):
                yield from run.flush()
                ctx.stats.records += 1
                ctx.stats.skip("too-large")
                ctx.stats.error(f"{source}: line {lineno}: longer than "
                                f"{line_cap(ctx.max_bytes):,} bytes; skipped")
                continue
            blank = not line or line.isspace()  # (strip() would copy every line)
            if not blank and run.add(lineno, line):
                yield from run.flush()
    except Exception:
        yield from run.flush()  # the lines read before the stream failed
        raise
    yield from run.flush()


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
