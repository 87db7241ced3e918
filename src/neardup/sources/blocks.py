"""Blocks: how several workers read one large input file side by side.

A file is cut into blocks of ``size`` consecutive records (JSONL lines, blank ones included;
Parquet rows; documents of any other format). A reader takes the blocks ``phase``,
``phase + stride``, ``phase + 2 * stride`` ... of the file and skips the others without parsing
them (a skipped JSONL line is only split off the stream; a Parquet row group without an owned
block is not read at all). Blocks are numbered from the start of the file whatever the stride, so
the documents of a block, and the numbering of the documents, do not depend on how many readers
share the file. A :class:`BlockCursor` follows one reader: the block of the record it is on and,
so that error lines can be put back in file order, the error count when each block began.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neardup.errors import ConfigError
from neardup.sources.stats import SourceStats

__all__ = ["BlockCursor", "Blocks"]


@dataclass(frozen=True, slots=True)
class Blocks:
    """Blocks of ``size`` records; this reader takes those congruent to ``phase`` mod ``stride``."""

    size: int
    stride: int = 1
    phase: int = 0

    def __post_init__(self) -> None:
        if self.size < 1:
            raise ConfigError(f"block size must be at least 1, got {self.size}")
        if self.stride < 1 or not 0 <= self.phase < self.stride:
            raise ConfigError(f"block phase {self.phase} of stride {self.stride} is invalid")

    def block_of(self, record: int) -> int:
        return record // self.size

    def owns(self, block: int) -> bool:
        return block % self.stride == self.phase

    @property
    def counts_file(self) -> bool:
        """Whether this reader counts file-level events (the file itself, unreadable file):
        exactly one reader of a file does."""
        return self.phase == 0


@dataclass(slots=True)
class BlockCursor:
    """The position of one reader: ``take(record)`` says whether the record is this reader's
    and notes each new block it enters."""

    blocks: Blocks
    stats: SourceStats
    current: int = -1
    marks: list[tuple[int, int]] = field(default_factory=list)
    """(block, number of error lines kept when it began), in reading order."""

    def take(self, record: int) -> bool:
        block = record // self.blocks.size
        if block == self.current:
            return True
        if block % self.blocks.stride != self.blocks.phase:
            return False
        self.current = block
        self.marks.append((block, len(self.stats.errors)))
        return True

    def owns_record(self, record: int) -> bool:
        """Whether an event at ``record`` (an error that ends the file) is this reader's."""
        return self.blocks.owns(self.blocks.block_of(record))

    def error_blocks(self) -> list[int]:
        """The block of each error line kept in ``stats`` (0 before the first block began)."""
        marks = [(0, 0), *self.marks]
        ends = [start for _, start in marks[1:]] + [len(self.stats.errors)]
        blocks: list[int] = []
        for (block, start), end in zip(marks, ends, strict=True):
            blocks.extend([block] * (end - start))
        return blocks
