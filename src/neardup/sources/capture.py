"""From an archived capture (WARC or ARC record, whichever reader parsed it) to a Document.

Both WARC readers (FastWARC and the pure-Python one) describe each record as a :class:`Capture`
and hand it to :func:`to_document`, so the two paths take the same decisions: which records become
documents, which are skipped and why, and how revisits are linked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from neardup.document import ContentKind, Document
from neardup.sources.context import ReadContext
from neardup.sources.fields import (
    WEB_SCHEMES,
    clean_record_id,
    clean_url,
    normalize_date,
    scheme_of,
)
from neardup.sources.http import (
    HttpHead,
    charset_of,
    decode_body,
    kind_of_media,
    looks_like_html,
    media_type,
)
from neardup.sources.revisits import Original

__all__ = ["CAPTURE_TYPES", "Capture", "PayloadReader", "to_document"]

CAPTURE_TYPES: Final = frozenset({"response", "resource", "revisit"})
# Extra stored bytes read beyond max_bytes, so that chunk headers and compression still leave
# max_bytes of decoded payload.
_SLACK: Final = 1 << 16
_ORIGINAL = re.compile(r'<([^>]*)>\s*;\s*rel="?original"?')

# limit -> the stored payload after the HTTP head (at most ``limit`` bytes, the rest is skipped),
# or the skip reason when the record is cut short (the reader counts the error line).
PayloadReader = Callable[[int], bytes | str]


@dataclass(slots=True)
class Capture:
    """What the readers extract from one record before its payload is read."""

    rtype: str
    record_id: str | None
    target: str | None
    date: str | None
    content_type: str | None
    is_http: bool
    http: HttpHead | None
    offset: int
    digest: str | None
    read: PayloadReader
    refers_to: str | None = None
    refers_to_target: str | None = None
    refers_to_date: str | None = None
    alt_date: str | None = None
    fallback_type: str | None = None
    truncated: str | None = None
    link: str | None = None


def to_document(c: Capture, ctx: ReadContext, source: str) -> Document | None:
    """The Document for a capture, or None (the reason is counted in ``ctx.stats``)."""
    if c.rtype == "revisit":
        return _revisit(c, ctx, source)
    if c.rtype not in CAPTURE_TYPES:
        ctx.stats.skip("non-response")
        return None
    outcome = _accept(c, ctx, source)
    if isinstance(outcome, str):
        ctx.stats.skip(outcome)
        _remember(c, ctx, source, None)
        return None
    _remember(c, ctx, source, Original(outcome.id, outcome.kind))
    return outcome


def _doc_id(c: Capture, source: str) -> str:
    return clean_record_id(c.record_id) or f"{source}:{c.offset}"


def _fetched(c: Capture) -> str | None:
    return normalize_date(c.date) or normalize_date(c.alt_date)


def _content_type(c: Capture) -> str | None:
    if c.http is not None:
        return c.http.headers.get("content-type") or c.fallback_type
    return c.content_type


def _accept(c: Capture, ctx: ReadContext, source: str) -> Document | str:
    if c.is_http and c.http is None:
        return "bad-http"
    if c.http is not None and c.http.status != 200:
        return "not-200"
    ctype = _content_type(c)
    if ctype is not None and "\x00" in ctype:
        return "bad-http"  # a NUL byte in a header: damaged
    verdict = kind_of_media(media_type(ctype), ctx.media)
    if verdict == "reject":
        return "not-html"
    url = clean_url(c.target)
    if url is None:
        return "bad-target-uri"
    if scheme_of(url) not in WEB_SCHEMES:
        return "not-web-uri"
    raw = _payload(c, ctx)
    if isinstance(raw, str):
        return raw
    if not raw:
        return "empty-payload"
    kind: ContentKind = verdict if verdict in ("text", "binary") else "html"
    if verdict == "sniff" and not looks_like_html(raw):
        if ctx.media != "any":
            return "not-html"
        kind = "binary"
    return ctx.document(
        _doc_id(c, source),
        raw,
        kind,
        url=url,
        source=source,
        offset=c.offset,
        fetched=_fetched(c),
        charset=charset_of(ctype),
        extra=_extra(c),
    )


def _extra(c: Capture) -> dict[str, str]:
    """``truncated``: the crawler cut the payload (WARC-Truncated: length, time, ...);
    ``original-url``: the URL a Wayback memento captures (``Link: <...>; rel="original"``)."""
    extra: dict[str, str] = {}
    if c.truncated:
        extra["truncated"] = c.truncated.strip()
    if c.link:
        found = _ORIGINAL.search(c.link)
        if found is not None:
            extra["original-url"] = found.group(1).strip()
    return extra


def _payload(c: Capture, ctx: ReadContext) -> bytes | str:
    """The decoded payload, capped at max_bytes; or a skip reason."""
    limit = ctx.max_bytes + _SLACK
    stored = c.read(limit)
    if isinstance(stored, str):
        return stored
    headers = c.http.headers if c.http is not None else {}
    raw = decode_body(stored, headers, ctx.max_bytes + 1)
    if raw is None:
        return "bad-encoding"
    if len(stored) >= limit or len(raw) > ctx.max_bytes:
        ctx.stats.truncated_payloads += 1
        raw = raw[: ctx.max_bytes]
    return raw


def _uri_date(target: str | None, date: str | None) -> tuple[str, str] | None:
    url = clean_url(target)
    when = normalize_date(date)
    return (url, when) if url and when else None


def _digest(value: str | None) -> str | None:
    return value.strip().lower() or None if value else None


def _remember(c: Capture, ctx: ReadContext, source: str, original: Original | None) -> None:
    key = _uri_date(c.target, c.date)
    ctx.revisits.add(_doc_id(c, source), _digest(c.digest), key, original)


def _revisit(c: Capture, ctx: ReadContext, source: str) -> Document | None:
    ctx.stats.revisits += 1
    found = ctx.revisits.resolve(
        clean_record_id(c.refers_to),
        _digest(c.digest),
        _uri_date(c.refers_to_target, c.refers_to_date),
    )
    if isinstance(found, str):
        ctx.stats.skip(found)
        return None
    ctx.stats.revisits_linked += 1
    return ctx.document(
        _doc_id(c, source),
        b"",
        found.kind,
        url=clean_url(c.target),
        source=source,
        offset=c.offset,
        fetched=_fetched(c),
        charset=charset_of(_content_type(c)),
        revisit_of=found.id,
    )
