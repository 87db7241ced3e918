"""Duplicate rates per group of documents: per input file, per host, per crawl date.

A document is a duplicate when its cluster kept another copy (the ``kept`` column of the
clusters table). Non-content pages (:mod:`.pages`) are counted in their own columns and left
out of the content rate, so that 27 copies of one ``robots.txt`` do not read as replicated
content. Crawl dates are days (``fetched`` cut to ``YYYY-MM-DD``), or months when a run spans
more than :data:`MAX_DAYS` days, or years past :data:`MAX_MONTHS` months.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["MAX_DAYS", "MAX_MONTHS", "GroupRate", "date_keys", "group_rates"]

MAX_DAYS = 31
MAX_MONTHS = 36
NO_VALUE = "(none)"


@dataclass(frozen=True, slots=True)
class GroupRate:
    """One group: its documents and duplicates, split into content and non-content pages."""

    key: str
    documents: int
    duplicates: int
    content: int
    content_duplicates: int

    @property
    def non_content(self) -> int:
        return self.documents - self.content

    @property
    def content_rate(self) -> float:
        return self.content_duplicates / self.content if self.content else 0.0

    @property
    def rate(self) -> float:
        return self.duplicates / self.documents if self.documents else 0.0


def date_keys(fetched: pa.ChunkedArray | pa.Array) -> tuple[pa.Array, str]:
    """The crawl date of each document and its unit (day, month or year)."""
    text = pc.fill_null(pc.cast(fetched, pa.string()), "")
    for unit, width, limit in (("day", 10, MAX_DAYS), ("month", 7, MAX_MONTHS), ("year", 4, 0)):
        keys = pc.utf8_slice_codeunits(text, 0, width)
        if limit == 0 or len(pc.unique(keys)) <= limit + 1:
            return keys, unit
    raise AssertionError("unreachable")


def group_rates(keys: pa.ChunkedArray | pa.Array, duplicate: npt.NDArray[np.bool_],
                content: npt.NDArray[np.bool_], by_key: bool = False) -> list[GroupRate]:
    """Per distinct key (nulls and empty strings as ``(none)``), most duplicates first (with
    ``by_key``: in key order)."""
    encoded = pc.dictionary_encode(pc.fill_null(pc.cast(keys, pa.string()), ""))
    if isinstance(encoded, pa.ChunkedArray):
        encoded = encoded.combine_chunks()
    codes = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    names: Sequence[str] = encoded.dictionary.to_pylist()
    size = len(names)

    def count(mask: npt.NDArray[np.bool_] | None) -> list[int]:
        return [int(v) for v in np.bincount(codes, weights=mask, minlength=size)]

    documents, duplicates = count(None), count(duplicate)
    contents, content_dups = count(content), count(duplicate & content)
    rows = [GroupRate(name or NO_VALUE, *values) for name, *values in
            zip(names, documents, duplicates, contents, content_dups, strict=True)]
    rows.sort(key=(lambda r: r.key) if by_key else (lambda r: (-r.duplicates, -r.documents,
                                                                  r.key)))
    return rows
