"""Linking WARC revisit records to the capture they repeat.

Every response or resource record seen is remembered, whether it became a document or not, under
its record id, its payload digest and its (target URI, date). A revisit is resolved by
``WARC-Refers-To``, else by ``WARC-Payload-Digest``, else by ``WARC-Refers-To-Target-URI`` +
``WARC-Refers-To-Date``. The index lives for one pass over all inputs, so a revisit may refer to a
capture in an earlier file.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from neardup.document import ContentKind

__all__ = ["Original", "RevisitIndex"]


@dataclass(frozen=True, slots=True)
class Original:
    """A capture that became a document: its id and kind."""

    id: str
    kind: ContentKind


_K = TypeVar("_K")

# None marks a capture that was seen but skipped.
_Entry = Original | None


@dataclass(slots=True)
class RevisitIndex:
    """Maps record ids, payload digests and (URI, date) keys to captures seen so far."""

    by_id: dict[str, _Entry] = field(default_factory=dict)
    by_digest: dict[str, _Entry] = field(default_factory=dict)
    by_uri_date: dict[tuple[str, str], _Entry] = field(default_factory=dict)

    def add(
        self,
        record_id: str | None,
        digest: str | None,
        uri_date: tuple[str, str] | None,
        original: Original | None,
    ) -> None:
        """Remember a capture; ``original`` is None when it was skipped."""
        if record_id:
            _put(self.by_id, record_id, original)
        if digest:
            _put(self.by_digest, digest, original)
        if uri_date is not None:
            _put(self.by_uri_date, uri_date, original)

    def resolve(
        self,
        refers_to: str | None,
        digest: str | None,
        uri_date: tuple[str, str] | None,
    ) -> Original | str:
        """The original a revisit repeats, or the skip reason when there is none."""
        found: list[_Entry] = []
        if refers_to is not None and refers_to in self.by_id:
            found.append(self.by_id[refers_to])
        elif digest is not None and digest in self.by_digest:
            found.append(self.by_digest[digest])
        elif uri_date is not None and uri_date in self.by_uri_date:
            found.append(self.by_uri_date[uri_date])
        if not found:
            return "revisit-unresolved"
        return found[0] if found[0] is not None else "revisit-of-skipped"


def _put(table: dict[_K, _Entry], key: _K, original: Original | None) -> None:
    """First document wins; a document replaces an earlier skipped capture."""
    if original is not None:
        if table.get(key) is None:
            table[key] = original
    else:
        table.setdefault(key, None)
