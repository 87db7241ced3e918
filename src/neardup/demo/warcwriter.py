"""A minimal WARC/1.1 writer: ``warcinfo``, ``response`` and ``revisit`` records.

Each record is its own gzip member, as real crawls write them, so a reader can seek to any record
offset. Header lines end in CRLF, ``Content-Length`` is the exact block length, and every record
that carries HTTP has a ``WARC-Block-Digest`` and a ``WARC-Payload-Digest`` (``sha1:`` + base32, the
form crawlers use). Record ids are version-4 UUIDs drawn from a seeded RNG and gzip members carry
no timestamp, so the same calls with the same seed give the same bytes.

Revisit records use the ``identical-payload-digest`` profile: the block holds only the HTTP
headers, and the payload digest is the one of the capture it refers to.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import random
import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from http import HTTPStatus
from pathlib import Path
from types import TracebackType
from typing import BinaryIO, Self

__all__ = [
    "HTTP_RESPONSE_TYPE",
    "REVISIT_PROFILE",
    "WarcWriter",
    "http_response_head",
    "sha1_digest",
    "warc_date",
]

REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
HTTP_RESPONSE_TYPE = "application/http; msgtype=response"
_SOFTWARE = "neardup-demo WarcWriter"
_CONFORMS_TO = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"


def sha1_digest(data: bytes) -> str:
    """The WARC digest of ``data``: ``sha1:`` followed by the base32 SHA-1."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def warc_date(date: datetime) -> str:
    """``date`` as a WARC-Date (UTC, ``Z``); a naive datetime is taken to be UTC."""
    if date.tzinfo is None:
        date = date.replace(tzinfo=UTC)
    date = date.astimezone(UTC)
    if date.microsecond:
        return date.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return date.strftime("%Y-%m-%dT%H:%M:%SZ")


def http_response_head(status: int, content_type: str, length: int | None) -> bytes:
    """The HTTP/1.1 status line and headers (ending with the blank line) for a response."""
    phrase = HTTPStatus(status).phrase
    lines = [f"HTTP/1.1 {status} {phrase}", f"Content-Type: {_field(content_type)}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def _field(value: str) -> str:
    """A header value, refused if it could break the header block."""
    if "\r" in value or "\n" in value:
        raise ValueError(f"header value contains a line break: {value!r}")
    return value


class WarcWriter:
    """Write WARC/1.1 records to ``path``, one gzip member per record.

    Use as a context manager. ``seed`` fixes the record ids; ``compress=False`` writes a plain
    ``.warc`` instead. After :meth:`write_warcinfo`, later records name it in ``WARC-Warcinfo-ID``.
    """

    def __init__(self, path: Path | str, *, seed: int = 0, compress: bool = True) -> None:
        self.path = Path(path)
        self._rng = random.Random(seed)
        self._compress = compress
        self._out: BinaryIO = self.path.open("wb")
        self._warcinfo_id: str | None = None
        self.records = 0

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Flush and close the file (idempotent)."""
        if not self._out.closed:
            self._out.close()

    @property
    def offset(self) -> int:
        """Bytes written so far: the offset the next record will start at."""
        return self._out.tell()

    def new_record_id(self) -> str:
        """A fresh ``<urn:uuid:...>`` from the seeded RNG."""
        value = uuid.UUID(int=self._rng.getrandbits(128), version=4)
        return f"<urn:uuid:{value}>"

    def write_warcinfo(
        self,
        date: datetime,
        *,
        fields: Mapping[str, str] | None = None,
        filename: str | None = None,
    ) -> str:
        """Write a ``warcinfo`` record describing the file; return its record id."""
        info = {"software": _SOFTWARE, "format": "WARC File Format 1.1"}
        info["conformsTo"] = _CONFORMS_TO
        info.update(fields or {})
        block = "".join(f"{k}: {_field(v)}\r\n" for k, v in info.items()).encode("utf-8")
        record_id = self.new_record_id()
        headers = [
            ("WARC-Type", "warcinfo"),
            ("WARC-Record-ID", record_id),
            ("WARC-Date", warc_date(date)),
            ("WARC-Filename", filename if filename is not None else self.path.name),
            ("WARC-Block-Digest", sha1_digest(block)),
            ("Content-Type", "application/warc-fields"),
        ]
        self._write(headers, block)
        self._warcinfo_id = record_id
        return record_id

    def write_response(
        self,
        url: str,
        html: bytes,
        date: datetime,
        status: int = 200,
        content_type: str = "text/html; charset=utf-8",
    ) -> str:
        """Write an HTTP ``response`` record with body ``html``; return its record id."""
        block = http_response_head(status, content_type, len(html)) + html
        record_id = self.new_record_id()
        headers = self._common("response", record_id, url, date)
        headers += [
            ("WARC-Block-Digest", sha1_digest(block)),
            ("WARC-Payload-Digest", sha1_digest(html)),
            ("Content-Type", HTTP_RESPONSE_TYPE),
        ]
        self._write(headers, block)
        return record_id

    def write_revisit(
        self,
        url: str,
        refers_to_id: str,
        refers_to_url: str,
        refers_to_date: datetime,
        payload_digest: str,
        date: datetime,
        *,
        status: int = 200,
        content_type: str = "text/html; charset=utf-8",
        payload_length: int | None = None,
    ) -> str:
        """Write a ``revisit`` record (identical-payload-digest profile); return its record id.

        The block is the HTTP head of the new capture; ``payload_length``, when given, becomes its
        ``Content-Length``. ``payload_digest`` is the digest of the payload being repeated.
        """
        block = http_response_head(status, content_type, payload_length)
        record_id = self.new_record_id()
        headers = self._common("revisit", record_id, url, date)
        headers += [
            ("WARC-Profile", REVISIT_PROFILE),
            ("WARC-Refers-To", refers_to_id),
            ("WARC-Refers-To-Target-URI", refers_to_url),
            ("WARC-Refers-To-Date", warc_date(refers_to_date)),
            ("WARC-Block-Digest", sha1_digest(block)),
            ("WARC-Payload-Digest", payload_digest),
            ("Content-Type", HTTP_RESPONSE_TYPE),
        ]
        self._write(headers, block)
        return record_id

    def _common(self, kind: str, record_id: str, url: str, date: datetime) -> list[tuple[str, str]]:
        headers = [
            ("WARC-Type", kind),
            ("WARC-Record-ID", record_id),
            ("WARC-Date", warc_date(date)),
            ("WARC-Target-URI", url),
        ]
        if self._warcinfo_id is not None:
            headers.append(("WARC-Warcinfo-ID", self._warcinfo_id))
        return headers

    def _write(self, headers: list[tuple[str, str]], block: bytes) -> None:
        lines = ["WARC/1.1"] + [f"{name}: {_field(value)}" for name, value in headers]
        lines.append(f"Content-Length: {len(block)}")
        record = ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + block + b"\r\n\r\n"
        if self._compress:
            record = gzip.compress(record, compresslevel=6, mtime=0)
        self._out.write(record)
        self.records += 1
