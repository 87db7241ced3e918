"""The state one pass over the inputs shares between the format readers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Literal

from neardup.document import ContentKind, Document
from neardup.sources.fields import DEFAULT_FIELDS, RowFields, host_of
from neardup.sources.revisits import RevisitIndex
from neardup.sources.stats import SourceStats

__all__ = ["DEFAULT_MAX_BYTES", "ReadContext", "WarcEngine"]

DEFAULT_MAX_BYTES: Final = 10 * 1024 * 1024

WarcEngine = Literal["fastwarc", "python"]
Media = Literal["html", "text", "any"]
MEDIA: tuple[Media, ...] = ("html", "text", "any")


@dataclass(slots=True)
class ReadContext:
    """Options and running state of a pass: stats, revisit index, payload cap, sweep label, and
    the columns rows hold their fields in."""

    stats: SourceStats
    max_bytes: int = DEFAULT_MAX_BYTES
    sweep: str | None = None
    warc_engine: WarcEngine = "fastwarc"
    media: Media = "html"
    revisits: RevisitIndex = field(default_factory=RevisitIndex)
    fields: RowFields = DEFAULT_FIELDS

    def cap(self, raw: bytes) -> bytes:
        """Cut ``raw`` to ``max_bytes``, counting the cut."""
        if len(raw) <= self.max_bytes:
            return raw
        self.stats.truncated_payloads += 1
        return raw[: self.max_bytes]

    def document(
        self,
        doc_id: str,
        raw: bytes,
        kind: ContentKind,
        *,
        url: str | None,
        source: str,
        offset: int,
        fetched: str | None = None,
        charset: str | None = None,
        revisit_of: str | None = None,
        sweep: str | None = None,
        extra: dict[str, str] | None = None,
        host: str | None = None,
    ) -> Document:
        """Build a Document and count it; its host is ``host`` when given, else ``url``'s.

        The context's sweep label wins over the record's own ``sweep``. A page (HTML) left
        without a host is counted in ``stats.pages_without_host``.
        """
        self.stats.documents += 1
        host = host if host is not None else host_of(url)
        if host is None and kind == "html":
            self.stats.pages_without_host += 1
        return Document(
            id=doc_id,
            raw=raw,
            kind=kind,
            url=url,
            host=host,
            fetched=fetched,
            source=source,
            offset=offset,
            charset=charset,
            sweep=self.sweep if self.sweep is not None else sweep,
            revisit_of=revisit_of,
            extra=extra if extra is not None else {},
        )
