"""HTTP as found in web archives: response heads, content types, and undoing transfer codings.

Archived headers lie. ``Transfer-Encoding: chunked`` is often kept although the writer already
de-chunked the body (iana-revisits), ``Content-Encoding: gzip`` although the body is plain
(ClueWeb), and header blocks end in LF only. Every decoder here is tolerant: when the body does not
have the claimed coding it is returned as stored.
"""

from __future__ import annotations

import codecs
import importlib
import re
import zlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

__all__ = [
    "MAX_HEAD",
    "HttpHead",
    "charset_of",
    "dechunk",
    "decode_body",
    "kind_of_media",
    "looks_like_html",
    "media_type",
    "parse_http_head",
]

MAX_HEAD: Final = 1 << 16
_HEAD_END = re.compile(rb"\r?\n\r?\n")
_STATUS = re.compile(rb"HTTP/\d(?:\.\d)?\s+(\d{3})")
_CHUNK_LINE = re.compile(rb"([0-9A-Fa-f]{1,8})[ \t]*(?:;[^\r\n]*)?\r?\n")
_HTML_TYPES: Final = frozenset({"text/html", "application/xhtml+xml", "application/xhtml"})
_TEXT_TYPES: Final = frozenset({"text/plain"})
_UNKNOWN_TYPES: Final = frozenset({"", "unknown", "no-type", "unk", "application/unknown"})
_HTML_STARTS: Final = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title")

SniffResult = Literal["html", "text", "binary", "sniff", "reject"]
_TEXTUAL_SUFFIXES: Final = ("+xml", "/xml", "javascript", "ecmascript", "json")


@dataclass(slots=True)
class HttpHead:
    """The parsed head of an HTTP response: status and headers (lower-case names)."""

    status: int | None
    headers: dict[str, str] = field(default_factory=dict)
    size: int = 0  # bytes of the head, blank line included


def parse_http_head(block: bytes) -> HttpHead | None:
    """Parse the status line and headers at the start of ``block`` (CRLF or LF lines).

    Returns None when ``block`` does not start with an HTTP status line or the head does not end
    within 64 KiB.
    """
    match = _STATUS.match(block)
    if match is None:
        return None
    end = _HEAD_END.search(block, 0, MAX_HEAD)
    if end is None:
        if len(block) >= MAX_HEAD:
            return None
        size = len(block)
        lines = block.splitlines()[1:]
    else:
        size = end.end()
        lines = block[: end.start()].splitlines()[1:]
    return HttpHead(int(match.group(1)), _header_dict(lines), size)


def _header_dict(lines: list[bytes]) -> dict[str, str]:
    headers: dict[str, str] = {}
    last = ""
    for line in lines:
        if line[:1] in (b" ", b"\t") and last:
            headers[last] += " " + line.strip().decode("latin-1")
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            continue
        last = name.strip().decode("latin-1").lower()
        headers.setdefault(last, value.strip().decode("latin-1"))
    return headers


def media_type(content_type: str | None) -> str:
    """``text/html; charset=utf-8`` -> ``text/html`` (lower case; '' when absent)."""
    if not content_type:
        return ""
    return content_type.partition(";")[0].strip().lower()


def charset_of(content_type: str | None) -> str | None:
    """The ``charset`` parameter of a Content-Type, lower case, when Python knows the codec."""
    if not content_type:
        return None
    for param in content_type.split(";")[1:]:
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset":
            label = value.strip().strip("\"'").lower()
            try:
                codecs.lookup(label)
            except (LookupError, ValueError):  # unknown, or not a name (a NUL byte)
                return None
            return label or None
    return None


def kind_of_media(media: str, accept: str = "html") -> SniffResult:
    """'html' or 'text' for accepted types, 'sniff' when unknown, 'reject' otherwise.

    ``accept`` widens what is accepted: ``text`` takes every textual type (text/*, XML, SVG,
    JavaScript, JSON) as text, ``any`` also takes the rest as ``binary``.
    """
    if media in _HTML_TYPES:
        return "html"
    if media in _TEXT_TYPES:
        return "text"
    if media in _UNKNOWN_TYPES:
        return "sniff"
    if accept != "html" and (media.startswith("text/") or media.endswith(_TEXTUAL_SUFFIXES)):
        return "text"
    return "binary" if accept == "any" else "reject"


def looks_like_html(payload: bytes) -> bool:
    """True when the payload opens like an HTML page (used when no content type is given)."""
    head = payload[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith(_HTML_STARTS) or b"<html" in head


def dechunk(body: bytes) -> bytes:
    """Undo ``Transfer-Encoding: chunked``; a body that is not chunked is returned unchanged.

    A chunk stream cut short keeps the chunks read so far.
    """
    out: list[bytes] = []
    pos = 0
    while True:
        match = _CHUNK_LINE.match(body, pos)
        if match is None:
            break
        size = int(match.group(1), 16)
        start = match.end()
        if size == 0:
            return b"".join(out)
        chunk = body[start : start + size]
        out.append(chunk)
        pos = start + size
        if len(chunk) < size:
            break
        if body.startswith(b"\r\n", pos):
            pos += 2
        elif body.startswith(b"\n", pos):
            pos += 1
        elif pos < len(body):
            return body if len(out) == 1 else b"".join(out)
    return b"".join(out) if out else body


def _inflate(body: bytes, wbits: int, limit: int) -> bytes | None:
    engine = zlib.decompressobj(wbits)
    try:
        return engine.decompress(body, limit)
    except zlib.error:
        return None


def _brotli(body: bytes, limit: int) -> bytes | None:
    """Brotli-decode at most ``limit`` bytes (a bomb stops at the cap, like gzip's)."""
    try:
        engine = importlib.import_module("brotli").Decompressor()
    except ImportError:
        return None
    out = bytearray()
    try:
        out += engine.process(body, output_buffer_limit=limit)
        while len(out) < limit and not engine.is_finished() and not engine.can_accept_more_data():
            out += engine.process(b"", output_buffer_limit=limit - len(out))
    except TypeError:  # brotli < 1.2: no output limit; feed small pieces, stop at the cap
        out = _brotli_pieces(engine, body, limit)
    except Exception:  # brotli raises its own error type on damaged data
        return None
    return bytes(out[:limit])


def _brotli_pieces(engine: object, body: bytes, limit: int) -> bytearray:
    out = bytearray()
    for start in range(0, len(body), 256):
        out += engine.process(body[start:start + 256])  # type: ignore[attr-defined]
        if len(out) >= limit:
            break
    return out


def _looks_textual(body: bytes) -> bool:
    return b"\x00" not in body[:1024]


def decode_body(body: bytes, headers: Mapping[str, str], limit: int) -> bytes | None:
    """Undo chunking and content coding as the headers claim, tolerating false claims.

    ``limit`` bounds the decoded size. Returns None when the body is encoded and cannot be
    decoded (the caller skips it as ``bad-encoding``).
    """
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = dechunk(body)
    coding = headers.get("content-encoding", "").strip().lower()
    if coding in {"", "identity", "none"} or not body:
        return body
    if coding in {"gzip", "x-gzip"}:
        decoded = _inflate(body, 47, limit) if body[:2] == b"\x1f\x8b" else None
    elif coding == "deflate":
        decoded = _inflate(body, 15, limit) or _inflate(body, -15, limit)
    elif coding == "br":
        decoded = _brotli(body, limit)
    else:
        decoded = None
    if decoded:
        return decoded
    return body if _looks_textual(body) and body[:2] != b"\x1f\x8b" else None
