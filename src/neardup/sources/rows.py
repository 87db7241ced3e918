"""The column conventions JSONL lines and Parquet rows share.

The columns named here are the defaults; :class:`~neardup.sources.fields.RowFields` (the
``--text-field``, ``--html-field``, ``--id-field`` and ``--url-field`` options) renames them.

- ``text`` (a string, or bytes: a Parquet binary column) gives a ``text`` document; else ``html``
  (string or bytes) an ``html`` one; neither: skipped as ``missing-text``, and the first such
  row of each file (of each block, where a file is read in blocks) and cause is named in the
  error lines with what it holds instead: the fields that hold a value when neither does (so
  that a corpus whose text column has another name says so), else the type of each content
  field's value.
- ``id`` (string or integer) is the document id; without it, ``<path>:<line>`` (JSONL, 1-based
  line number) or ``<path>:<row>`` (Parquet, 0-based row index).
- ``url``; ``fetched`` or else ``date`` (ISO string, epoch seconds, or timestamp); ``sweep``.
- Every other scalar field (string, number, boolean) of at most 1024 characters goes to
  ``Document.extra`` as a string.

Strings are stored UTF-8 encoded (``charset='utf-8'``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from datetime import date, datetime
from typing import Final

from neardup.document import ContentKind, Document
from neardup.sources.context import ReadContext
from neardup.sources.fields import RowFields, clean_url, normalize_date

__all__ = ["KNOWN_FIELDS", "Content", "content_to_document", "row_to_document"]

KNOWN_FIELDS: Final = frozenset({"id", "url", "text", "html", "date", "fetched", "sweep"})
"""The columns a row's fields come from, with the default names."""
_MAX_EXTRA: Final = 1024
_NAMED_FIELDS: Final = 12

Content = tuple[bytes, ContentKind, str | None]
"""A row's payload, its kind and its charset."""


@functools.lru_cache(maxsize=16)
def _known(fields: RowFields) -> frozenset[str]:
    return frozenset({fields.id, fields.url, fields.text, fields.html, "date", "fetched", "sweep"})


def _content(row: Mapping[str, object], fields: RowFields) -> Content | None:
    text = row.get(fields.text)
    if isinstance(text, str):
        return text.encode("utf-8", "replace"), "text", "utf-8"
    if isinstance(text, bytes):
        return text, "text", None
    html = row.get(fields.html)
    if isinstance(html, str):
        return html.encode("utf-8", "replace"), "html", "utf-8"
    if isinstance(html, bytes):
        return html, "html", None
    return None


def _missing(row: Mapping[str, object], fields: RowFields) -> tuple[str, str]:
    """Why a row gives no payload, as (its kind, a sentence): the type of what its content
    fields hold, or, when they hold nothing, the fields that hold a value. Only scalar values
    count: a JSONL run read by pyarrow or the compiled scan sees neither nested values nor the
    difference between a null and an absent field."""
    held = [f"{name!r} holds {type(value).__name__}" for name in (fields.text, fields.html)
            if _valued(value := row.get(name))]
    if held:
        cause = ", ".join(held)
        return cause, f"no string in its content fields ({cause})"
    names = ", ".join(sorted(str(k) for k, v in row.items() if _valued(v))[:_NAMED_FIELDS])
    return "none", (f"no {fields.text!r} or {fields.html!r} string (fields with a value: "
                    f"{names or 'none'}); --text-field or --html-field names the column to read")


def _valued(value: object) -> bool:
    return isinstance(value, str | bytes | int | float)  # bool is an int


def _scalar(value: object) -> str | None:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str | int | float):
        return str(value)
    return None


def _when(value: object) -> str | None:
    if isinstance(value, datetime):
        return normalize_date(value.isoformat())
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, str | int | float):
        return normalize_date(value)
    return None


def _extra(row: Mapping[str, object], known: frozenset[str]) -> dict[str, str]:
    extra: dict[str, str] = {}
    for key, value in row.items():
        text = None if key in known else _scalar(value)
        if text is not None and len(text) <= _MAX_EXTRA:
            extra[str(key)] = text
    return extra


def _cap_utf8(raw: bytes, ctx: ReadContext, charset: str | None) -> bytes:
    capped = ctx.cap(raw)
    if charset == "utf-8" and len(capped) < len(raw):
        capped = capped.decode("utf-8", "ignore").encode("utf-8")
    return capped


def row_to_document(
    row: Mapping[str, object], *, source: str, offset: int, default_id: str, ctx: ReadContext
) -> Document | None:
    """The Document for one JSONL line or Parquet row, or None (the reason is counted)."""
    return content_to_document(_content(row, ctx.fields), row, source=source, offset=offset,
                               default_id=default_id, ctx=ctx)


def content_to_document(
    found: Content | None, row: Mapping[str, object], *, source: str, offset: int,
    default_id: str, ctx: ReadContext
) -> Document | None:
    """The Document for a row whose payload was already taken (``found``, None: it has none)
    from its text or HTML field; its other fields are read from ``row``."""
    if found is None:
        ctx.stats.skip("missing-text")
        cause, said = _missing(row, ctx.fields)
        ctx.stats.error_once(f"missing-text {source} {cause}", f"{default_id}: skipped, {said}")
        return None
    raw, kind, charset = found
    if not raw:
        ctx.stats.skip("empty-payload")
        return None
    url_value = row.get(ctx.fields.url)
    sweep = row.get("sweep")
    fetched = row.get("fetched")
    return ctx.document(
        _scalar(row.get(ctx.fields.id)) or default_id,
        _cap_utf8(raw, ctx, charset),
        kind,
        url=clean_url(url_value) if isinstance(url_value, str) else None,
        source=source,
        offset=offset,
        fetched=_when(fetched if fetched is not None else row.get("date")),
        charset=charset,
        sweep=sweep if isinstance(sweep, str) else None,
        extra=_extra(row, _known(ctx.fields)),
    )
