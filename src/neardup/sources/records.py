"""A pure-Python WARC (0.17 to 1.1) and ARC (v1, v2) record reader that survives damage.

It serves what FastWARC cannot read: ARC files, WARC files whose header lines end in LF only
(ClueWeb09), stdin, and the rest of a file after FastWARC stopped at damage. Header lines may end
in CRLF or LF. Anything that is not a record header where one is expected (garbage, a record whose
Content-Length was wrong) is skipped line by line up to the next record header and counted once
as ``bad-record``; a record cut short by the end of the input is counted ``truncated-record``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Final, Literal

from neardup.sources.capture import CAPTURE_TYPES, Capture
from neardup.sources.context import ReadContext
from neardup.sources.fields import scheme_of
from neardup.sources.http import MAX_HEAD, HttpHead, media_type, parse_http_head
from neardup.sources.stream import ByteStream

__all__ = ["ArchiveFormat", "ArchiveRecords"]

ArchiveFormat = Literal["warc", "arc"]

_MAX_HEADER_BYTES: Final = 1 << 16
_ARC_DATE = re.compile(rb"\d{12,}")
_LENGTH = re.compile(rb"\d{1,15}")


class _Block:
    """The content block of one record: at most ``length`` bytes of the stream."""

    def __init__(self, reader: ArchiveRecords, length: int, offset: int) -> None:
        self.reader = reader
        self.left = length
        self.offset = offset
        self.reported = False

    def head(self) -> bytes:
        return self.reader.stream.peek(min(self.left, MAX_HEAD))

    def drop(self, n: int) -> None:
        self.left -= self.reader.stream.skip(min(n, self.left))

    def read(self, limit: int) -> bytes | str:
        """The payload (at most ``limit`` bytes, the rest is skipped), or a skip reason."""
        want = min(limit, self.left)
        data = self.reader.stream.read(want)
        self.left -= len(data)
        if len(data) == want and self.left:
            self.drop(self.left)
        if self.left:
            self.reported = True
            return self.reader.failure(self.offset)
        return data

    def finish(self) -> None:
        """Skip what the consumer did not read; an error line if the record was cut short (it
        was already counted under the reason it was skipped for)."""
        self.drop(self.left)
        if self.left and not self.reported:
            self.reader.failure(self.offset)


_Found = tuple[_Block, dict[str, str]]


def _arc_layout(fields: list[bytes], version: int) -> int:
    """How many fields an ARC header line has: 5 (v1: URL IP date type length) or 10 (v2 adds
    result code, checksum, location, offset, file name before the length); 0 when it is not a
    header. A URL with spaces makes more fields; the version of the file breaks ties."""
    for nfields in (10, 5) if version == 2 else (5, 10):
        if len(fields) >= nfields and _ARC_DATE.fullmatch(fields[-nfields + 2]):
            return nfields
    return 0


class ArchiveRecords:
    """Iterate the records of a WARC or ARC stream as :class:`Capture` objects.

    ``skip_first`` well-formed records are passed over without being counted (used to resume
    after FastWARC failed: those records were already read).
    """

    def __init__(
        self,
        stream: ByteStream,
        fmt: ArchiveFormat,
        source: str,
        ctx: ReadContext,
        skip_first: int = 0,
    ) -> None:
        self.stream = stream
        self.fmt = fmt
        self.source = source
        self.ctx = ctx
        self.skip_first = skip_first
        self.in_junk = False
        self.arc_version = 1
        self._member = (-1, 0)  # (offset of the current gzip member, records seen in it)

    def failure(self, offset: int) -> str:
        """Reason and error line for a record cut short (end of input, or damaged gzip)."""
        if self._take_damage():
            cause, reason = "record damaged (corrupt gzip data)", "bad-record"
        else:
            cause, reason = "record truncated (the file ends inside it)", "truncated-record"
        self.ctx.stats.error(f"{self.source}: offset {offset}: {cause}")
        return reason

    def _take_damage(self) -> list[int]:
        """Offsets of corrupt gzip data met since the last call (and forget them)."""
        damaged = list(self.stream.damaged)
        self.stream.damaged.clear()
        return damaged

    def _report_damage(self) -> None:
        """Corrupt gzip members no record claimed (the records in them are lost): count each."""
        for offset in self._take_damage():
            self.ctx.stats.records += 1
            self.ctx.stats.skip("bad-record")
            self.ctx.stats.error(f"{self.source}: offset {offset}: corrupt gzip data skipped")

    def __iter__(self) -> Iterator[Capture]:
        parse = self._warc_record if self.fmt == "warc" else self._arc_record
        while True:
            offset, line = self._next_line()
            self._report_damage()
            if not line:
                return
            found = parse(offset, line)
            if found is None:
                continue
            block, headers = found
            capture = self._capture(block, headers)
            if capture is not None:
                yield capture
            block.finish()

    def _next_line(self) -> tuple[int, bytes]:
        """The next non-blank line and its offset (b'' at the end of the input)."""
        while True:
            offset = self.stream.offset()
            line = self.stream.readline()
            if not line or line.strip():
                return offset, line

    def _junk(self, offset: int, what: str) -> None:
        """A line where a record header should be: count once per run of such lines."""
        if self._take_damage():
            what += " (corrupt gzip data)"
        if not self.in_junk:
            self.ctx.stats.records += 1
            self.ctx.stats.skip("bad-record")
            self.ctx.stats.error(f"{self.source}: offset {offset}: {what}; skipped to next record")
        self.in_junk = True

    def _bad_header(self, offset: int, what: str) -> None:
        """A record header that cannot be used: always counted."""
        self.in_junk = False
        self._junk(offset, what)

    def _start(self, offset: int, length: int, headers: dict[str, str]) -> _Found | None:
        self.in_junk = False
        self._count_in_member(offset)
        if self.skip_first > 0:
            self.skip_first -= 1
            self.stream.skip(length)
            return None
        self.ctx.stats.records += 1
        return _Block(self, length, offset), headers

    # -- WARC ------------------------------------------------------------------------------

    def _warc_record(self, offset: int, line: bytes) -> _Found | None:
        if not line.startswith(b"WARC/"):
            self._junk(offset, "no WARC record header here")
            return None
        headers = self._warc_headers()
        if headers is None and self.stream.exhausted():
            self.ctx.stats.records += 1
            self.ctx.stats.skip(self.failure(offset))
            self.stream.skip(_MAX_HEADER_BYTES)
            return None
        if headers is None:
            self._bad_header(offset, "WARC header block too long")
            return None
        length = headers.get("content-length", "").strip()
        if not length.isascii() or not length.isdigit():
            self._bad_header(offset, f"bad Content-Length {length!r}")
            return None
        return self._start(offset, int(length), headers)

    def _warc_headers(self) -> dict[str, str] | None:
        block = self.stream.read_head(_MAX_HEADER_BYTES)
        if block is None:
            return None
        headers: dict[str, str] = {}
        last = ""
        for line in block.decode("utf-8", "replace").splitlines():
            if not line:
                continue
            if line[0] in " \t" and last:
                headers[last] += " " + line.strip()
                continue
            name, _, value = line.partition(":")
            last = name.strip().lower()
            headers[last] = value.strip()
        return headers

    # -- ARC -------------------------------------------------------------------------------

    def _arc_record(self, offset: int, line: bytes) -> _Found | None:
        fields = line.rstrip(b"\r\n").split(b" ")
        nfields = _arc_layout(fields, self.arc_version)
        if nfields == 0:
            self._junk(offset, "no ARC record header here")
            return None
        length = fields[-1]
        if not _LENGTH.fullmatch(length):
            self._bad_header(offset, f"bad ARC record length {length.decode('latin-1')!r}")
            return None
        url = b" ".join(fields[: len(fields) - nfields + 1]).decode("utf-8", "replace")
        headers = {
            "warc-type": "warcinfo" if url.startswith("filedesc:") else "response",
            "warc-target-uri": url,
            "warc-date": fields[-nfields + 2].decode("ascii"),
            "content-type": fields[-nfields + 3].decode("latin-1"),
        }
        return self._start(offset, int(length), headers)

    def _arc_id(self, offset: int) -> str:
        """``path:offset``; ``path:offset:k`` for the k-th further record in one gzip member."""
        return f"{self.source}:{offset}" + (f":{self._member[1]}" if self._member[1] else "")

    def _count_in_member(self, offset: int) -> None:
        member, seen = self._member
        self._member = (offset, seen + 1 if member == offset else 0)

    def _arc_filedesc(self, block: _Block) -> None:
        """Read the ARC version from the file header record (``1 1 InternetArchive``)."""
        version = block.head().split(b"\n", 1)[0].split(b" ", 1)[0]
        if version.strip() == b"2":
            self.arc_version = 2

    # -- captures --------------------------------------------------------------------------

    def _capture(self, block: _Block, headers: dict[str, str]) -> Capture | None:
        rtype = headers.get("warc-type", "").lower()
        if rtype not in CAPTURE_TYPES:
            if self.fmt == "arc":
                self._arc_filedesc(block)
            self.ctx.stats.skip("non-response")
            return None
        is_http, http = self._http(block, headers)
        arc = self.fmt == "arc"
        return Capture(
            rtype=rtype,
            record_id=self._arc_id(block.offset) if arc else headers.get("warc-record-id"),
            target=headers.get("warc-target-uri"),
            date=headers.get("warc-date"),
            content_type=headers.get("content-type"),
            is_http=is_http,
            http=http,
            offset=block.offset,
            digest=headers.get("warc-payload-digest"),
            read=block.read,
            refers_to=headers.get("warc-refers-to"),
            refers_to_target=headers.get("warc-refers-to-target-uri"),
            refers_to_date=headers.get("warc-refers-to-date"),
            alt_date=headers.get("memento-datetime"),
            truncated=headers.get("warc-truncated"),
            link=headers.get("link"),
            fallback_type=headers.get("content-type") if arc else None,
        )

    def _http(self, block: _Block, headers: dict[str, str]) -> tuple[bool, HttpHead | None]:
        """Whether the block should hold an HTTP message, and its parsed head."""
        if self.fmt == "arc":
            is_http = scheme_of(headers["warc-target-uri"]) in {"http", "https"}
        else:
            ctype = headers.get("content-type")
            is_http = media_type(ctype) == "application/http"
            if not ctype:
                is_http = block.head().startswith(b"HTTP/")
        if not is_http:
            return False, None
        head = parse_http_head(block.head())
        if head is not None:
            block.drop(head.size)
        return True, head
