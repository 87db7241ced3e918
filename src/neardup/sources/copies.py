"""Reading a local copy of an input that lives elsewhere (HDFS, S3, another node's disk).

A distributed reader fetches a whole file's bytes from its file system and writes them to a
scratch file on its own disk; :func:`read_copy` then reads that copy with the reader the local
engine uses for the format (FastWARC and its fallback, the JSONL and loose-file readers), so
that documents, offsets, counts and error lines are those of a local read, while every document
and error line names ``source`` (the file's URI), never the scratch copy.
"""

from __future__ import annotations

from collections.abc import Iterator

from neardup.document import Document
from neardup.sources.blocks import BlockCursor
from neardup.sources.context import DEFAULT_MAX_BYTES, Media, ReadContext
from neardup.sources.files import read_file
from neardup.sources.jsonl import read_jsonl
from neardup.sources.parquet import read_parquet
from neardup.sources.reader import _ARCHIVES, _LOOSE, _by_document, _damaged, _unreadable
from neardup.sources.sniff import Sniffed
from neardup.sources.warc import read_archive

__all__ = ["COPIED_FORMATS", "read_copy"]

COPIED_FORMATS = ("warc", "arc", "jsonl", "html", "text", "parquet")
"""The formats :func:`read_copy` reads (a distributed reader reads Parquet itself, and copies
a Parquet file only when its own reader fails on damaged data)."""


def _documents(copy: str, source: str, found: Sniffed, ctx: ReadContext,
               cursor: BlockCursor) -> Iterator[Document]:
    if found.fmt in _ARCHIVES:
        yield from _by_document(
            read_archive(copy, source, _ARCHIVES[found.fmt], found.gz, found.crlf, ctx), cursor)
    elif found.fmt == "jsonl":
        yield from read_jsonl(copy, source, found.gz, ctx, cursor)
    elif found.fmt in _LOOSE:
        yield from _by_document(read_file(copy, source, found.gz, _LOOSE[found.fmt], ctx),
                                cursor)
    else:
        raise ValueError(f"{source}: format {found.fmt!r} is not read from a copy")


def read_copy(copy: str, source: str, found: Sniffed, cursor: BlockCursor, *,
              media: Media = "html", max_bytes: int = DEFAULT_MAX_BYTES) -> Iterator[Document]:
    """The documents of ``copy`` (a local copy of ``source``, whose format is ``found``), in
    ``cursor``'s blocks, counting into ``cursor.stats`` as a local read of the file counts."""
    ctx = ReadContext(cursor.stats, max_bytes, None, "fastwarc", media)
    if found.fmt == "parquet":
        yield from read_parquet(copy, source, ctx, cursor)  # counts the file once it opens
        return
    ctx.stats.files += 1
    try:
        yield from _documents(copy, source, found, ctx, cursor)
    except OSError as err:
        _unreadable(ctx.stats, source, err)
    except Exception as err:  # never end the whole run for one bad file
        _damaged(ctx.stats, source, err)
