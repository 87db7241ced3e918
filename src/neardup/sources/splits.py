"""Input splits: the units a parallel, resumable run reads independently.

A split is one input file (a directory or glob expands to its files, in the order
:func:`neardup.sources.open_sources` reads them). When several workers share few files, a large
JSONL file is ``dealt``: the parent decompresses it once and hands its line blocks to the workers
(:mod:`neardup.sources.lineblocks`); a large Parquet file gets one split per worker, each reading
one phase of its blocks, only the row groups that hold them (:mod:`neardup.sources.blocks`).
Reading the blocks of every split in (file, block) order yields the same documents, in the same
order, as one pass of ``open_sources`` over the same paths, except for a WARC revisit whose
original lies in an earlier file: read alone, its split cannot resolve it (it is counted
``revisit-unresolved``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from neardup.document import Document
from neardup.sources.blocks import BlockCursor, Blocks
from neardup.sources.context import DEFAULT_MAX_BYTES, Media, ReadContext
from neardup.sources.fields import DEFAULT_FIELDS, RowFields
from neardup.sources.location import open_binary, size_of
from neardup.sources.reader import _damaged, _expand, _Input, _read_path, _unreadable
from neardup.sources.sniff import Sniffed, read_head, sniff
from neardup.sources.stats import SourceStats

__all__ = ["InputSplit", "input_splits", "merge_stats", "read_split"]


SHARED_BYTES: Final = 4 << 20
"""A JSONL or Parquet file at least this large is shared by the workers (when there are fewer
than :data:`FILES_PER_WORKER` files per worker)."""
FILES_PER_WORKER: Final = 4


WHOLE: Final = Blocks(1 << 62)
"""One block: the whole file."""


@dataclass(frozen=True, slots=True)
class InputSplit:
    """One input file (its position ``file`` in reading order, and whether the user named it: a
    file met in a directory walk that is not a recognised format is skipped quietly), and the
    blocks of it this split reads."""

    path: str
    explicit: bool
    file: int = 0
    blocks: Blocks = WHOLE
    dealt: bool = False
    """A JSONL file whose line blocks the parent deals out to the workers."""


def _shared(path: str, explicit: bool, shared_bytes: int) -> Sniffed | None:
    """The format of a large JSONL or Parquet file (which workers can share), else None."""
    try:
        if size_of(path) < shared_bytes:
            return None
        with open_binary(path) as raw:
            head = read_head(raw)
    except OSError:
        return None
    found = sniff(head, path, explicit=explicit)
    return found if found.fmt in ("jsonl", "parquet") else None


def input_splits(paths: Sequence[str], stats: SourceStats, *, block_size: int = 1 << 62,
                 workers: int = 1, shared_bytes: int = SHARED_BYTES) -> list[InputSplit]:
    """The splits behind ``paths``, in reading order; patterns that match nothing are counted
    in ``stats``. ``-`` (stdin) must have been saved to a file first. Blocks hold
    ``block_size`` records; with few files, a large JSONL or Parquet file gets one split per
    worker."""
    items = list(_expand(paths, stats))
    share = workers > 1 and len(items) < FILES_PER_WORKER * workers
    splits: list[InputSplit] = []
    for index, item in enumerate(items):
        found = _shared(item.path, item.explicit, shared_bytes) if share else None
        if found is not None and found.fmt == "jsonl":
            splits.append(InputSplit(item.path, item.explicit, index, Blocks(block_size), True))
            continue
        stride = workers if found is not None else 1
        splits.extend(InputSplit(item.path, item.explicit, index, Blocks(block_size, stride, phase))
                      for phase in range(stride))
    return splits


def read_split(split: InputSplit, cursor: BlockCursor, *, media: Media = "html",
               max_bytes: int = DEFAULT_MAX_BYTES, sweep: str | None = None,
               fields: RowFields = DEFAULT_FIELDS) -> Iterator[Document]:
    """The documents of one split's blocks, counting into ``cursor.stats`` (``fields``: the
    columns of JSONL and Parquet rows, as for :func:`~neardup.sources.open_sources`)."""
    ctx = ReadContext(cursor.stats, max_bytes, sweep, "fastwarc", media, fields=fields)
    try:
        yield from _read_path(_Input(split.path, split.explicit), ctx, cursor)
    except OSError as err:
        if split.blocks.counts_file:
            _unreadable(cursor.stats, split.path, err)
    except Exception as err:  # never end the whole run for one bad file
        if split.blocks.counts_file:
            _damaged(cursor.stats, split.path, err)


def merge_stats(parts: Sequence[dict[str, object]],
                errors: Sequence[str] | None = None) -> dict[str, object]:
    """The :meth:`SourceStats.as_dict` of one pass, from those of its splits in order (with
    ``errors``, the error lines already put in reading order, instead of the splits')."""
    total = SourceStats()
    for part in parts:
        for name in ("files", "records", "documents", "revisits", "revisits_linked",
                     "truncated_payloads", "errors_dropped"):
            setattr(total, name, getattr(total, name) + int(part[name]))  # type: ignore[call-overload]
        # absent from the stats of a work directory written before the count existed
        total.pages_without_host += int(part.get("pages_without_host", 0))  # type: ignore[call-overload]
        for reason, count in dict(part["skipped"]).items():  # type: ignore[call-overload]
            total.skip(reason, count)
        for line in part["errors"] if errors is None else ():  # type: ignore[attr-defined]
            total.error(line)
    for line in errors or ():
        total.error(line)
    return total.as_dict()
