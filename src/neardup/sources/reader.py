"""``open_sources``: paths in, Documents out, with counts of everything skipped.

Paths are read in the order given. A directory is walked recursively (entries sorted by name at
each level, hidden entries skipped); a glob pattern expands to its sorted matches; ``-`` is
stdin; a URL (``memory://``, ``file://``, ``s3://``...) is read through fsspec, a folder or
pattern of URLs expanding the same way (:mod:`neardup.sources.location`). A path that cannot
be read is counted (``unreadable-file``) with an error line, and
reading goes on.

The readers of archives (FastWARC), loose files and Parquet are imported when a file of their
format is met: a run over JSONL loads none of them.
"""

from __future__ import annotations

import io
import os
import re
import sys
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass
from glob import glob
from types import TracebackType
from typing import TYPE_CHECKING, BinaryIO

from neardup.document import ContentKind, Document
from neardup.errors import ConfigError
from neardup.sources.blocks import BlockCursor
from neardup.sources.context import DEFAULT_MAX_BYTES, MEDIA, Media, ReadContext, WarcEngine
from neardup.sources.fields import DEFAULT_FIELDS, RowFields
from neardup.sources.jsonl import read_jsonl, read_jsonl_stream
from neardup.sources.location import expand_url, is_url, open_binary
from neardup.sources.sniff import PrefixedStream, Sniffed, read_head, sniff
from neardup.sources.stats import SourceStats

if TYPE_CHECKING:
    from neardup.sources.records import ArchiveFormat

__all__ = ["STDIN", "SourceReader", "open_sources"]

STDIN = "-"
_GLOB_MAGIC = re.compile(r"[*?[]")


@dataclass(frozen=True, slots=True)
class _Input:
    path: str
    explicit: bool  # named by the user (or a glob match), not met while walking a directory


def _unreadable(stats: SourceStats, path: str, err: OSError) -> None:
    stats.skip("unreadable-file")
    stats.error(f"{path}: cannot read ({err.strerror or err})")


def _damaged(stats: SourceStats, path: str, err: Exception) -> None:
    """A file whose reading failed in a way no reader foresaw: counted, the next file is read."""
    stats.skip("bad-record")
    stats.error(f"{path}: damaged ({type(err).__name__}: {err}); the rest of this file "
                "was skipped")


def _walk(folder: str, stats: SourceStats) -> Iterator[_Input]:
    """Files under ``folder``, depth first, entries sorted by name at each level (so the order
    is that of the sorted paths); hidden entries and symbolic links to folders are skipped."""
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as err:
        _unreadable(stats, folder, err)
        return
    for entry in entries:
        if entry.name.startswith("."):
            continue
        path = os.path.join(folder, entry.name)
        if entry.is_dir(follow_symlinks=False):
            yield from _walk(path, stats)
        elif not entry.is_dir():
            yield _Input(path, explicit=False)


def _expand_url(url: str, stats: SourceStats) -> Iterator[_Input]:
    found, explicit = expand_url(url)
    if not found:
        stats.skip("no-match")
        stats.error(f"{url}: no file matches this pattern" if explicit else
                    f"{url}: holds no file")
    for item in found:
        yield _Input(item, explicit=explicit)


def _expand(paths: Sequence[str], stats: SourceStats) -> Iterator[_Input]:
    """The files ``paths`` name, in order, each once: a file met again (named twice, or by a
    pattern or a folder that overlaps another) is counted as ``repeated-input`` and not read
    again, so that no document is compared with itself."""
    seen: dict[object, str] = {}
    for item in _named(paths, stats):
        key = _identity(item.path)
        if key not in seen or item.path == STDIN:
            seen[key] = item.path
            yield item
            continue
        stats.skip("repeated-input")
        first = seen[key]
        again = "named again" if item.path == first else f"the same file as {first}"
        stats.error(f"{item.path}: {again}, read once")


def _identity(path: str) -> object:
    """What tells two names of one file apart from two files: device and inode of a local file
    (links included), else the name itself."""
    if path == STDIN or is_url(path):
        return path
    try:
        found = os.stat(path)
    except OSError:
        return os.path.abspath(path)
    return (found.st_dev, found.st_ino)


def _named(paths: Sequence[str], stats: SourceStats) -> Iterator[_Input]:
    for path in paths:
        if is_url(path):
            yield from _expand_url(path, stats)
            continue
        if path == STDIN or os.path.lexists(path) or not _GLOB_MAGIC.search(path):
            found = [path]
        else:
            found = sorted(glob(path, recursive=True))
            if not found:
                stats.skip("no-match")
                stats.error(f"{path}: no file matches this pattern")
        for item in found:
            if item != STDIN and os.path.isdir(item):
                yield from _walk(item, stats)
            else:
                yield _Input(item, explicit=True)


_ARCHIVES: dict[str, ArchiveFormat] = {"warc": "warc", "arc": "arc"}
_LOOSE: dict[str, ContentKind] = {"html": "html", "text": "text"}


def _read_path(item: _Input, ctx: ReadContext,
               cursor: BlockCursor | None = None) -> Iterator[Document]:
    """The documents of one file; with ``cursor`` (JSONL and Parquet only), those of its
    blocks, file-level events being counted by the reader of phase 0 only."""
    counts_file = cursor is None or cursor.blocks.counts_file
    try:
        with open_binary(item.path) as raw:
            head = read_head(raw)
    except OSError as err:
        if counts_file:
            _unreadable(ctx.stats, item.path, err)
        return
    found = sniff(head, item.path, explicit=item.explicit)
    if (not counts_file and found.fmt in ("binary", "unknown")) or _rejected(found, ctx):
        return
    path, gz = item.path, found.gz
    if found.fmt == "parquet":
        from neardup.sources.parquet import read_parquet

        yield from read_parquet(path, path, ctx, cursor)  # counts the file once it opens
        return
    ctx.stats.files += int(counts_file)
    if found.fmt in _ARCHIVES:
        from neardup.sources.warc import read_archive

        yield from _by_document(
            read_archive(path, path, _ARCHIVES[found.fmt], gz, found.crlf, ctx), cursor)
    elif found.fmt == "jsonl":
        yield from read_jsonl(path, path, gz, ctx, cursor)
    elif found.fmt in _LOOSE:
        from neardup.sources.files import read_file

        yield from _by_document(read_file(path, path, gz, _LOOSE[found.fmt], ctx), cursor)


def _by_document(documents: Iterator[Document], cursor: BlockCursor | None) -> Iterator[Document]:
    """Blocks counted in documents (archives, loose files): every document is read, those of
    ``cursor``'s blocks are kept."""
    for index, doc in enumerate(documents):
        if cursor is None or cursor.take(index):
            yield doc


def _rejected(found: Sniffed, ctx: ReadContext) -> bool:
    """Count binary and unrecognised files; True when the file is not read."""
    if found.fmt in ("binary", "unknown"):
        ctx.stats.skip("binary" if found.fmt == "binary" else "unknown-format")
        return True
    return False


def _read_stdin(ctx: ReadContext) -> Iterator[Document]:
    raw: BinaryIO = sys.stdin.buffer
    head = read_head(raw)
    found = sniff(head, STDIN, explicit=True)
    if found.fmt == "parquet":
        ctx.stats.skip("unsupported-stdin")
        ctx.stats.error(
            "-: Parquet cannot be read from stdin (it needs random access); pass the file path"
        )
        return
    if _rejected(found, ctx):
        return
    ctx.stats.files += 1
    stream = io.BufferedReader(PrefixedStream(head, raw))
    if found.fmt in _ARCHIVES:
        from neardup.sources.warc import read_archive_stream

        yield from read_archive_stream(stream, STDIN, _ARCHIVES[found.fmt], found.gz, ctx)
    elif found.fmt == "jsonl":
        yield from read_jsonl_stream(stream, STDIN, found.gz, ctx)
    else:
        from neardup.sources.files import read_stream

        yield from read_stream(stream, STDIN, found.gz, _LOOSE.get(found.fmt, "text"), ctx)


def _read_all(paths: Sequence[str], ctx: ReadContext) -> Generator[Document, None, None]:
    for item in _expand(paths, ctx.stats):
        try:
            if item.path == STDIN:
                yield from _read_stdin(ctx)
            else:
                yield from _read_path(item, ctx)
        except OSError as err:  # an I/O failure in the middle of a file
            _unreadable(ctx.stats, item.path, err)
        except Exception as err:  # never end the whole read for one bad file
            _damaged(ctx.stats, item.path, err)


class SourceReader:
    """An iterable of :class:`~neardup.document.Document` over the inputs of
    :func:`open_sources`, with the :class:`SourceStats` of the pass (filled as it proceeds).

    Each ``iter()`` makes a new pass from the first path and resets ``stats``.
    """

    def __init__(
        self,
        paths: Sequence[str],
        *,
        sweep: str | None = None,
        max_bytes: int = DEFAULT_MAX_BYTES,
        warc_engine: WarcEngine = "fastwarc",
        media: Media = "html",
        fields: RowFields = DEFAULT_FIELDS,
    ) -> None:
        if max_bytes < 1:
            raise ConfigError(f"max_bytes must be at least 1, got {max_bytes}")
        if warc_engine not in ("fastwarc", "python"):
            raise ConfigError(f"warc_engine must be 'fastwarc' or 'python', got {warc_engine!r}")
        if media not in MEDIA:
            raise ConfigError(f"media must be one of {', '.join(MEDIA)}, got {media!r}")
        self.media: Media = media
        self.fields = fields
        self.paths = list(paths)
        self.sweep = sweep
        self.max_bytes = max_bytes
        self.warc_engine: WarcEngine = warc_engine
        self.stats = SourceStats()
        self._active: Generator[Document, None, None] | None = None

    def __iter__(self) -> Iterator[Document]:
        self.close()
        self.stats.reset()
        ctx = ReadContext(self.stats, self.max_bytes, self.sweep, self.warc_engine, self.media,
                          fields=self.fields)
        self._active = _read_all(self.paths, ctx)
        return self._active

    def close(self) -> None:
        """Stop the pass under way (closing its open file)."""
        active, self._active = self._active, None
        if active is not None:
            active.close()

    def __enter__(self) -> SourceReader:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def open_sources(
    paths: Sequence[str],
    *,
    sweep: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    warc_engine: WarcEngine = "fastwarc",
    media: Media = "html",
    fields: RowFields = DEFAULT_FIELDS,
) -> SourceReader:
    """Read documents from files, directories, glob patterns and ``-`` (stdin).

    ``sweep`` labels every document (a crawl or snapshot name). Payloads longer than
    ``max_bytes`` are cut (counted in ``stats.truncated_payloads``). ``warc_engine='python'``
    reads WARC files with the pure-Python reader only (slower; for comparison and debugging).
    ``media`` says which responses become documents: ``html`` (HTML and plain text, the default),
    ``text`` (also every other textual type: CSS, JavaScript, XML, SVG, JSON...), or ``any``
    (every payload; non-textual ones as kind ``binary``, which only the identical level compares).
    ``fields`` names the JSONL and Parquet columns that hold the text, HTML, id and URL
    (``RowFields(text="content")``). Nothing is read until the reader is iterated.
    """
    return SourceReader(paths, sweep=sweep, max_bytes=max_bytes, warc_engine=warc_engine,
                        media=media, fields=fields)
