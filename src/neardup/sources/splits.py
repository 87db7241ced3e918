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

Loose files (``.html``, ``.txt``... one document each, :mod:`neardup.sources.files`) are read in
groups: consecutive local ones, up to :data:`GROUP_BYTES` in all, make one split, read file after
file as separate splits would read them (each with its own reading context), so that a folder
of small pages costs a few partitions, not one per page (a partition's write, markers and task
cost about 0.4 CPU s: 621 pages took 310 s one split each, against 26 s as one JSONL).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from neardup.document import Document
from neardup.sources.blocks import BlockCursor, Blocks
from neardup.sources.context import DEFAULT_MAX_BYTES, Media, ReadContext
from neardup.sources.fields import DEFAULT_FIELDS, RowFields
from neardup.sources.location import is_url, open_binary, size_of
from neardup.sources.reader import _damaged, _expand, _Input, _read_path, _unreadable
from neardup.sources.sniff import Sniffed, _by_name, read_head, sniff
from neardup.sources.stats import SourceStats

__all__ = ["GROUP_BYTES", "InputSplit", "input_splits", "merge_stats", "read_split"]


SHARED_BYTES: Final = 4 << 20
"""A JSONL or Parquet file at least this large is shared by the workers (when there are fewer
than :data:`FILES_PER_WORKER` files per worker)."""
FILES_PER_WORKER: Final = 4
GROUP_BYTES: Final = 4 << 20
"""Consecutive loose files are grouped into one split up to this many bytes (on disk) in all."""


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
    group: tuple[str, ...] = ()
    """Loose files read after ``path`` (found as ``path`` was: named or walked), in order."""

    @property
    def paths(self) -> tuple[str, ...]:
        """Every file this split reads, in order."""
        return (self.path, *self.group)


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


def _loose_size(item: _Input) -> int | None:
    """The size of a local loose file (by its name: ``.html``, ``.txt``...), else None."""
    if is_url(item.path) or _by_name(item.path) not in ("html", "text"):
        return None
    try:
        return size_of(item.path)
    except OSError:
        return None


def _grouped(items: list[_Input], group_bytes: int) -> Iterator[tuple[int, _Input, list[str]]]:
    """(position, first item, further paths) of each run of consecutive loose files found
    alike, at most ``group_bytes`` in all (a larger file stands alone); other items alone."""
    index = 0
    while index < len(items):
        item, start, group = items[index], index, []
        total = _loose_size(item)
        index += 1
        while total is not None and index < len(items) and \
                items[index].explicit == item.explicit:
            size = _loose_size(items[index])
            if size is None or total + size > group_bytes:
                break
            total += size
            group.append(items[index].path)
            index += 1
        yield start, item, group


def input_splits(paths: Sequence[str], stats: SourceStats, *, block_size: int = 1 << 62,
                 workers: int = 1, shared_bytes: int = SHARED_BYTES,
                 group_bytes: int = GROUP_BYTES) -> list[InputSplit]:
    """The splits behind ``paths``, in reading order; patterns that match nothing are counted
    in ``stats``. ``-`` (stdin) must have been saved to a file first. Blocks hold
    ``block_size`` records; with few files, a large JSONL or Parquet file gets one split per
    worker; consecutive loose files share one split up to ``group_bytes``."""
    items = list(_expand(paths, stats))
    share = workers > 1 and len(items) < FILES_PER_WORKER * workers
    splits: list[InputSplit] = []
    for index, item, group in _grouped(items, group_bytes):
        if group:
            splits.append(InputSplit(item.path, item.explicit, index, Blocks(block_size),
                                     group=tuple(group)))
            continue
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
    def context() -> ReadContext:
        return ReadContext(cursor.stats, max_bytes, sweep, "fastwarc", media, fields=fields)

    if split.group:
        yield from _read_group(split, context, cursor)
        return
    yield from _read_file(_Input(split.path, split.explicit), context(), cursor)


def _read_file(item: _Input, ctx: ReadContext, cursor: BlockCursor | None) -> Iterator[Document]:
    """The documents of one file; a failure is counted (by the reader that counts the file)
    and ends the file only."""
    counts_file = cursor is None or cursor.blocks.counts_file
    try:
        yield from _read_path(item, ctx, cursor)
    except OSError as err:
        if counts_file:
            _unreadable(ctx.stats, item.path, err)
    except Exception as err:  # never end the whole run for one bad file
        if counts_file:
            _damaged(ctx.stats, item.path, err)


def _read_group(split: InputSplit, context: Callable[[], ReadContext],
                cursor: BlockCursor) -> Iterator[Document]:
    """The documents of a group of loose files, each file read as its own split would read it,
    numbered across the group for ``cursor``'s blocks."""
    number = 0
    for path in split.paths:
        for doc in _read_file(_Input(path, split.explicit), context(), None):
            if cursor.take(number):
                yield doc
            number += 1


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
