"""Recognising an input's format from its first bytes (and, for loose files, its name).

Containers are recognised by content only: ``WARC/`` (WARC), ``filedesc://`` (ARC), ``PAR1``
(Parquet), each possibly inside gzip — so ``example-bad.warc.gz.bad`` is a gzipped WARC. Loose
documents are recognised by name: ``.html``/``.htm``/``.xhtml`` (HTML), ``.txt`` (text),
``.jsonl``/``.ndjson``/``.jl`` (JSONL), each optionally ``.gz``. A file named on the command line
(or stdin) with another name is sniffed: ``{`` starts JSONL, an HTML opening tag HTML, anything
else without NUL bytes is text. A file met while walking a directory with another name is read
only when it opens like HTML; otherwise it is counted ``unknown-format``. NUL bytes in the first
8 KiB make a file ``binary``.
"""

from __future__ import annotations

import io
import zlib
from dataclasses import dataclass
from typing import BinaryIO, Final, Literal

from neardup.sources.http import looks_like_html

__all__ = ["HEAD_SIZE", "Format", "PrefixedStream", "Sniffed", "read_head", "sniff"]

HEAD_SIZE: Final = 1 << 16
_BINARY_WINDOW: Final = 8192
_GZIP_MAGIC: Final = b"\x1f\x8b"
_JSONL_EXT: Final = (".jsonl", ".ndjson", ".jl")
_HTML_EXT: Final = (".html", ".htm", ".xhtml")
_TEXT_EXT: Final = (".txt",)

Format = Literal["warc", "arc", "jsonl", "parquet", "html", "text", "binary", "unknown"]


@dataclass(frozen=True, slots=True)
class Sniffed:
    """The format of an input, whether it is gzipped, and (WARC) whether headers end in CRLF."""

    fmt: Format
    gz: bool = False
    crlf: bool = True


def read_head(raw: BinaryIO, size: int = HEAD_SIZE) -> bytes:
    """Up to ``size`` first bytes (looping, as pipes return short reads)."""
    parts: list[bytes] = []
    have = 0
    while have < size:
        part = raw.read(size - have)
        if not part:
            break
        parts.append(part)
        have += len(part)
    return b"".join(parts)


def _inflate_head(head: bytes) -> bytes:
    engine = zlib.decompressobj(31)
    try:
        return engine.decompress(head, HEAD_SIZE)
    except zlib.error:
        return b""


def _by_name(name: str) -> Format | None:
    base = name.lower().removesuffix(".gz")
    if base.endswith(_JSONL_EXT):
        return "jsonl"
    if base.endswith(_HTML_EXT):
        return "html"
    if base.endswith(_TEXT_EXT):
        return "text"
    if base.endswith((".warc", ".arc")):
        return "arc" if base.endswith(".arc") else "warc"
    if base.endswith(".parquet"):
        return "parquet"
    return None


def _container(data: bytes) -> Format | None:
    if data.startswith(b"WARC/"):
        return "warc"
    if data.startswith(b"filedesc://"):
        return "arc"
    return None


def _by_content(data: bytes) -> Format:
    start = data.lstrip(b"\xef\xbb\xbf \t\r\n")
    if start.startswith(b"{"):
        return "jsonl"
    return "html" if looks_like_html(start) else "text"


def sniff(head: bytes, name: str, *, explicit: bool) -> Sniffed:
    """The format of an input whose first bytes are ``head`` (raw, possibly gzipped)."""
    gz = head.startswith(_GZIP_MAGIC)
    data = _inflate_head(head) if gz else head
    if not gz and head.startswith(b"PAR1"):
        return Sniffed("parquet")
    fmt = _container(data)
    if fmt is not None:
        first = data.split(b"\n", 1)[0]
        return Sniffed(fmt, gz, crlf=first.endswith(b"\r"))
    by_name = _by_name(name)
    if by_name in ("warc", "arc", "parquet"):
        return Sniffed(by_name, gz)
    if b"\x00" in data[:_BINARY_WINDOW]:
        return Sniffed("binary", gz)
    if by_name is not None:
        return Sniffed(by_name, gz)
    by_content = _by_content(data)
    if not explicit and by_content != "html":
        return Sniffed("unknown", gz)
    return Sniffed(by_content, gz)


class PrefixedStream(io.RawIOBase):
    """A read-only stream that returns ``prefix`` and then the rest of ``rest`` (for stdin,
    whose first bytes were read to sniff the format)."""

    def __init__(self, prefix: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._prefix = memoryview(prefix)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._prefix:
            n = min(len(buffer), len(self._prefix))
            buffer[:n] = self._prefix[:n]
            self._prefix = self._prefix[n:]
            return n
        data = self._rest.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)
