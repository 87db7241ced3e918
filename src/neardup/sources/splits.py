"""Input splits: the units a parallel, resumable run reads independently.

A split is one input file (a directory or glob expands to its files, in the order
:func:`neardup.sources.open_sources` reads them). Reading the splits one after another yields the
same documents, in the same order, as one pass of ``open_sources`` over the same paths, except
for a WARC revisit whose original lies in an earlier file: read alone, its split cannot resolve it
(it is counted ``revisit-unresolved``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from neardup.document import Document
from neardup.sources.context import DEFAULT_MAX_BYTES, Media, ReadContext
from neardup.sources.reader import _damaged, _expand, _Input, _read_path, _unreadable
from neardup.sources.stats import SourceStats

__all__ = ["InputSplit", "input_splits", "merge_stats", "read_split"]


@dataclass(frozen=True, slots=True)
class InputSplit:
    """One input file, and whether the user named it (a file met in a directory walk that is not
    a recognised format is skipped quietly)."""

    path: str
    explicit: bool


def input_splits(paths: Sequence[str], stats: SourceStats) -> list[InputSplit]:
    """The files behind ``paths``, in reading order; patterns that match nothing are counted in
    ``stats``. ``-`` (stdin) must have been saved to a file first."""
    return [InputSplit(item.path, item.explicit) for item in _expand(paths, stats)]


def read_split(split: InputSplit, stats: SourceStats, *, media: Media = "html",
               max_bytes: int = DEFAULT_MAX_BYTES, sweep: str | None = None) -> Iterator[Document]:
    """The documents of one split, counting into ``stats``."""
    ctx = ReadContext(stats, max_bytes, sweep, "fastwarc", media)
    try:
        yield from _read_path(_Input(split.path, split.explicit), ctx)
    except OSError as err:
        _unreadable(stats, split.path, err)
    except Exception as err:  # never end the whole run for one bad file
        _damaged(stats, split.path, err)


def merge_stats(parts: Sequence[dict[str, object]]) -> dict[str, object]:
    """The :meth:`SourceStats.as_dict` of one pass, from those of its splits in order."""
    total = SourceStats()
    for part in parts:
        for name in ("files", "records", "documents", "revisits", "revisits_linked",
                     "truncated_payloads", "errors_dropped"):
            setattr(total, name, getattr(total, name) + int(part[name]))  # type: ignore[call-overload]
        for reason, count in dict(part["skipped"]).items():  # type: ignore[call-overload]
            total.skip(reason, count)
        for line in part["errors"]:  # type: ignore[attr-defined]
            total.error(line)
    return total.as_dict()
