"""What a pass over the sources saw: counts, skip reasons and error lines.

Skip reasons are short stable names (they appear in ``summary.json``):

=====================  ==========================================================================
reason                 meaning
=====================  ==========================================================================
``non-response``       a WARC record that is not a capture (warcinfo, request, metadata, ...)
``not-200``            an HTTP status other than 200
``not-html``           a content type other than HTML or plain text (or, when absent, a payload
                       that does not look like HTML)
``bad-http``           a record that should hold an HTTP response whose headers do not parse
``bad-encoding``       a Content-Encoding that cannot be undone (e.g. broken gzip, unknown coding)
``empty-payload``      nothing left after the HTTP headers
``bad-target-uri``     no usable target URI
``not-web-uri``        a target URI whose scheme is not http, https, ftp or file (``dns:``,
                       wget's ``metadata://`` log records)
``truncated-record``   a record cut short by the end of the file (clipped download)
``bad-record``         a damaged record, or garbage between records that had to be skipped to
                       find the next record start
``revisit-of-skipped`` a revisit of a record that did not become a document
``revisit-unresolved`` a revisit whose original was not seen
``unreadable-file``    an input path that cannot be opened (missing, permission, not a file)
``no-match``           a glob pattern that matches nothing
``unknown-format``     a file whose format is not recognised
``binary``             a file with NUL bytes in its first 8 KiB and no known format
``unsupported-stdin``  a format that cannot be streamed from stdin (Parquet)
``json-error``         a JSONL line that is not a JSON object
``missing-text``       a JSONL line or Parquet row with no string in ``text`` or ``html``
``too-large``          a JSONL line longer than four times the payload cap (never read whole)
``repeated-input``     an input file met again (named twice, or by overlapping patterns or
                       folders): read once
=====================  ==========================================================================

Payloads longer than ``max_bytes`` are kept, cut to ``max_bytes``, and counted in
``truncated_payloads`` (they are not skipped). HTML documents with no host (no URL, and for a
loose file no canonical link, ``og:url`` or ``<base href>`` either) are counted in
``pages_without_host``: per-host template removal cannot see them.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Final

__all__ = ["MAX_ERROR_LINES", "SKIP_REASONS", "SourceStats"]

MAX_ERROR_LINES: Final = 100

SKIP_REASONS: Final = (
    "non-response",
    "not-200",
    "not-html",
    "bad-http",
    "bad-encoding",
    "empty-payload",
    "bad-target-uri",
    "not-web-uri",
    "truncated-record",
    "bad-record",
    "revisit-of-skipped",
    "revisit-unresolved",
    "unreadable-file",
    "no-match",
    "unknown-format",
    "binary",
    "unsupported-stdin",
    "json-error",
    "missing-text",
    "too-large",
    "repeated-input",
)


@dataclass(slots=True)
class SourceStats:
    """Counts filled while a :class:`~neardup.sources.SourceReader` is iterated."""

    files: int = 0
    records: int = 0
    documents: int = 0
    revisits: int = 0
    revisits_linked: int = 0
    truncated_payloads: int = 0
    pages_without_host: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)
    errors_dropped: int = 0
    reported: set[str] = field(default_factory=set, repr=False)
    """The keys :meth:`error_once` has kept a line for."""

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` records (or files, or lines) skipped for ``reason``."""
        self.skipped[reason] += n

    def error(self, line: str) -> None:
        """Keep one error line (file and cause); past the cap, only count it."""
        if len(self.errors) < MAX_ERROR_LINES:
            self.errors.append(line)
        else:
            self.errors_dropped += 1

    def error_once(self, key: str, line: str) -> None:
        """:meth:`error`, for the first ``key`` of a pass only (a cause that every row of a file
        may share is named once)."""
        if key not in self.reported:
            self.reported.add(key)
            self.error(line)

    def reset(self) -> None:
        """Zero every count (a new pass starts)."""
        self.files = self.records = self.documents = 0
        self.revisits = self.revisits_linked = self.truncated_payloads = 0
        self.pages_without_host = 0
        self.skipped = Counter()
        self.errors = []
        self.errors_dropped = 0
        self.reported = set()

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready summary (skip reasons sorted by name)."""
        return {
            "files": self.files,
            "records": self.records,
            "documents": self.documents,
            "revisits": self.revisits,
            "revisits_linked": self.revisits_linked,
            "truncated_payloads": self.truncated_payloads,
            "pages_without_host": self.pages_without_host,
            "skipped": dict(sorted(self.skipped.items())),
            "errors": list(self.errors),
            "errors_dropped": self.errors_dropped,
        }
