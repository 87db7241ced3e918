"""The Document: one page or text as read from a source, before any processing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["ContentKind", "Document"]

ContentKind = Literal["html", "text", "binary"]


@dataclass(slots=True)
class Document:
    """One input document.

    ``raw`` is the payload exactly as stored (HTML or plain-text bytes); the identical-level hash
    is taken over it. ``source`` and ``offset`` say where the record came from (the byte offset of
    a WARC/ARC record, the line number of a JSONL line, the row of a Parquet file). ``fetched`` is
    an ISO-8601 string when the source has a date. A WARC revisit record becomes a Document with an
    empty payload and ``revisit_of`` set to the id of the record it repeats.
    """

    id: str
    raw: bytes
    kind: ContentKind = "html"
    url: str | None = None
    host: str | None = None
    fetched: str | None = None
    source: str = ""
    offset: int = 0
    charset: str | None = None
    sweep: str | None = None
    revisit_of: str | None = None
    extra: dict[str, str] = field(default_factory=dict)

    @property
    def is_revisit(self) -> bool:
        return self.revisit_of is not None
