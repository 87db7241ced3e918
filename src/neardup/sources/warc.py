"""Reading WARC and ARC files: FastWARC when it can, the pure-Python reader when it cannot.

FastWARC (``fastwarc.warc.ArchiveIterator``) reads well-formed WARC files with CRLF headers
(about 2x faster than the Python reader here, where zlib dominates both). It is not used for ARC
files, for WARC files whose header lines end in LF only (ClueWeb09; detected from the first
record), nor for stdin. When FastWARC raises in the middle of a file (a wrong Content-Length,
garbage between records, corrupt gzip data), reading goes on with the Python reader from the last
record FastWARC read, so no good record after the damage is lost. FastWARC's ``quirks_mode`` (which
would read LF-only headers) is not used: it skips damage silently, and damage must be counted.

HTTP heads are parsed leniently (``parse_http(quirks_mode=True)``, for the LF-only HTTP heads in
ClueWeb12) and payloads are decoded by :mod:`neardup.sources.http`, not by FastWARC, whose
``auto_decode`` raises when a header claims a coding the body does not have.

The ``offset`` of a record is its byte offset in the file; for gzipped files, the compressed
offset of the gzip member holding it: exact for the usual one-record-per-member files, the start
of the member (0 for a file that is one member) when a member holds several records. Both readers
report the same offsets.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final

from fastwarc.warc import ArchiveIterator, WarcRecord, WarcRecordType

from neardup.document import Document
from neardup.sources.capture import CAPTURE_TYPES, Capture, to_document
from neardup.sources.context import ReadContext
from neardup.sources.http import HttpHead
from neardup.sources.location import open_binary
from neardup.sources.records import ArchiveFormat, ArchiveRecords
from neardup.sources.sniff import read_head, sniff
from neardup.sources.stream import ByteStream

__all__ = ["read_archive", "read_archive_from", "read_archive_stream"]

_GZIP_MAGIC: Final = b"\x1f\x8b\x08"
_TYPE_NAMES: Final = {
    int(getattr(WarcRecordType, name)): name
    for name in (
        "warcinfo",
        "response",
        "resource",
        "request",
        "metadata",
        "revisit",
        "conversion",
        "continuation",
    )
}


def read_archive(
    path: str, source: str, fmt: ArchiveFormat, gz: bool, crlf: bool, ctx: ReadContext
) -> Iterator[Document]:
    """Documents from one WARC or ARC file (``source`` is the path as the user gave it)."""
    if fmt == "warc" and crlf and ctx.warc_engine == "fastwarc":
        yield from _read_fast(path, source, gz, ctx)
    else:
        yield from _read_python(path, source, fmt, gz, ctx)


def read_archive_from(
    path: str, fmt: ArchiveFormat, gz: bool, ctx: ReadContext, start: int
) -> Iterator[Document]:
    """Documents of one WARC or ARC file from byte ``start`` on (a record or gzip member start;
    the Python reader, which reports the same offsets as FastWARC)."""
    return _read_python(path, path, fmt, gz, ctx, start)


def read_archive_stream(
    raw: BinaryIO, source: str, fmt: ArchiveFormat, gz: bool, ctx: ReadContext
) -> Iterator[Document]:
    """Documents from a WARC or ARC stream read once from start to end (stdin)."""
    records = ArchiveRecords(ByteStream(raw, gz=gz), fmt, source, ctx)
    for capture in records:
        doc = to_document(capture, ctx, source)
        if doc is not None:
            yield doc


def _read_python(
    path: str,
    source: str,
    fmt: ArchiveFormat,
    gz: bool,
    ctx: ReadContext,
    start: int = 0,
    skip_first: int = 0,
) -> Iterator[Document]:
    with open_binary(path) as raw:
        raw.seek(start)
        records = ArchiveRecords(ByteStream(raw, gz=gz, base=start), fmt, source, ctx, skip_first)
        for capture in records:
            doc = to_document(capture, ctx, source)
            if doc is not None:
                yield doc


class _MemberOffsets:
    """FastWARC's ``stream_pos`` is exact where a record starts a gzip member; inside a member
    holding several records it is a buffer position. Report the start of the member instead
    (as the Python reader does): a position is trusted when a gzip header is found there."""

    def __init__(self, probe: BinaryIO | None) -> None:
        self._probe = probe
        self._pos = -1
        self._member = 0

    def __call__(self, pos: int) -> int:
        if self._probe is None:
            return pos
        if pos != self._pos:
            self._pos = pos
            self._probe.seek(pos)
            if self._probe.read(3) == _GZIP_MAGIC:
                self._member = pos
        return self._member


@dataclass(slots=True)
class _Progress:
    """Where FastWARC got to: the last record position and how many records were read."""

    last_pos: int = 0
    at_pos: int = 0
    total: int = 0

    def record(self, pos: int) -> None:
        if pos != self.last_pos:
            self.last_pos, self.at_pos = pos, 0
        self.at_pos += 1
        self.total += 1


def _read_fast(path: str, source: str, gz: bool, ctx: ReadContext) -> Iterator[Document]:
    progress = _Progress()
    with open_binary(path) as raw, open_binary(path) as probe:
        offsets = _MemberOffsets(probe if gz else None)
        records = ArchiveIterator(raw, parse_http=False, record_types=WarcRecordType.any_type)
        try:
            for record in records:
                progress.record(record.stream_pos)
                ctx.stats.records += 1
                doc = _fast_document(record, offsets(record.stream_pos), source, ctx)
                if doc is not None:
                    yield doc
            return
        except OSError as err:
            failure = str(err) or type(err).__name__
    start, skip = _resume_point(path, progress)
    ctx.stats.error(
        f"{source}: after offset {progress.last_pos}: FastWARC stopped ({failure}); "
        "reading on with the Python reader"
    )
    yield from _read_python(path, source, "warc", gz, ctx, start, skip)


def _resume_point(path: str, progress: _Progress) -> tuple[int, int]:
    """Where the Python reader starts, and how many records it passes over there."""
    if progress.total and _record_starts_at(path, progress.last_pos):
        return progress.last_pos, progress.at_pos
    return 0, progress.total


def _record_starts_at(path: str, offset: int) -> bool:
    with open_binary(path) as raw:
        raw.seek(offset)
        head = read_head(raw, 4096)
    return sniff(head, "", explicit=False).fmt == "warc"


def _fast_document(
    record: WarcRecord, offset: int, source: str, ctx: ReadContext
) -> Document | None:
    rtype = _TYPE_NAMES.get(int(record.record_type), "unknown")
    if rtype not in CAPTURE_TYPES:
        ctx.stats.skip("non-response")
        _check_end(record, source, ctx)
        return None
    headers = {name.lower(): value for name, value in record.headers.astuples()}
    is_http = bool(record.is_http)
    payload = _FastPayload(record, source, ctx)
    doc = to_document(
        Capture(
            rtype=rtype,
            record_id=headers.get("warc-record-id"),
            target=headers.get("warc-target-uri"),
            date=headers.get("warc-date"),
            content_type=headers.get("content-type"),
            is_http=is_http,
            http=_fast_http(record) if is_http else None,
            offset=offset,
            digest=headers.get("warc-payload-digest"),
            read=payload,
            refers_to=headers.get("warc-refers-to"),
            refers_to_target=headers.get("warc-refers-to-target-uri"),
            refers_to_date=headers.get("warc-refers-to-date"),
            alt_date=headers.get("memento-datetime"),
            truncated=headers.get("warc-truncated"),
            link=headers.get("link"),
        ),
        ctx,
        source,
    )
    if not payload.used:
        _check_end(record, source, ctx)
    return doc


def _truncated(record: WarcRecord, source: str, ctx: ReadContext) -> str:
    ctx.stats.error(
        f"{source}: offset {record.stream_pos}: record truncated (the file ends inside it)"
    )
    return "truncated-record"


def _check_end(record: WarcRecord, source: str, ctx: ReadContext) -> None:
    """Skip an unread block; an error line when the file ends inside it (the record was
    already counted under the reason it was skipped for)."""
    if record.consume() < record.content_length:
        _truncated(record, source, ctx)


def _fast_http(record: WarcRecord) -> HttpHead | None:
    try:
        record.parse_http(quirks_mode=True)
    except OSError:
        return None
    http = record.http_headers
    if http is None:
        return None
    headers: dict[str, str] = {}
    for name, value in http.astuples():
        headers.setdefault(name.lower(), value)
    return HttpHead(http.status_code, headers)


class _FastPayload:
    """The payload reader of one FastWARC record (see :data:`PayloadReader`)."""

    def __init__(self, record: WarcRecord, source: str, ctx: ReadContext) -> None:
        self.record = record
        self.source = source
        self.ctx = ctx
        self.used = False

    def __call__(self, limit: int) -> bytes | str:
        self.used = True
        record = self.record
        expected = record.content_length
        try:
            data: bytes = record.reader.read(limit)
            got = len(data) + (record.consume() if len(data) >= limit else 0)
        except OSError as err:
            self.ctx.stats.error(
                f"{self.source}: offset {record.stream_pos}: record damaged ({err})"
            )
            return "bad-record"
        if got < expected:
            return _truncated(record, self.source, self.ctx)
        return data
