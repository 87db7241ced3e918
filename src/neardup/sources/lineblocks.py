"""Line blocks: one reader cuts a large JSONL file into blocks of lines that workers parse.

A gzip stream cannot be entered in the middle, so when several workers share one JSONL file the
parent decompresses it once and deals it out: :func:`deal_lines` cuts the stream into blocks of
``size`` lines (blank lines included, nothing parsed), and :func:`read_line_block`, in a worker,
turns one block into documents exactly as :func:`neardup.sources.jsonl.read_jsonl` would (same
line numbers, ids, offsets and counts). A gzip stream that breaks ends the file in the block where
it broke; that block carries the error, counted after its lines, as a plain read counts it.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from neardup.document import Document
from neardup.sources.context import ReadContext
from neardup.sources.jsonl import read_lines

__all__ = ["LineBlock", "deal_lines", "read_line_block"]


@dataclass(frozen=True, slots=True)
class LineBlock:
    """Lines ``first`` .. ``first + size - 1`` (1-based) of a file, as bytes."""

    index: int
    first: int
    data: bytes
    failure: tuple[str, str] | None = None
    """(skip reason, error line) when the gzip stream broke inside this block."""


def deal_lines(path: str, gz: bool, size: int) -> Iterator[LineBlock]:
    """The blocks of ``size`` lines of a JSONL file, in order (at least one, maybe empty)."""
    index, lines = 0, []
    with open(path, "rb") as raw:
        stream = gzip.GzipFile(fileobj=raw, mode="rb") if gz else raw
        try:
            for line in stream:
                lines.append(line)
                if len(lines) == size:
                    yield LineBlock(index, index * size + 1, b"".join(lines))
                    index, lines = index + 1, []
        except (EOFError, zlib.error, gzip.BadGzipFile) as err:
            reason = "truncated-record" if isinstance(err, EOFError) else "bad-record"
            message = f"{path}: gzip stream damaged or cut short ({err}); stopped there"
            yield LineBlock(index, index * size + 1, b"".join(lines), (reason, message))
            return
    if lines or index == 0:
        yield LineBlock(index, index * size + 1, b"".join(lines))


def read_line_block(block: LineBlock, source: str, ctx: ReadContext) -> Iterator[Document]:
    """The documents of one block (``source``: the path as the user gave it)."""
    yield from read_lines(io.BytesIO(block.data), source, ctx, first=block.first)
    if block.failure is not None:
        ctx.stats.skip(block.failure[0])
        ctx.stats.error(block.failure[1])
