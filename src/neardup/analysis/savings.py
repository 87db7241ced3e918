"""Crawl savings (S&GM98 section 3): the pages and bytes a crawler could skip on its next crawl if
it visited one document of each group of copies ("if a page has 10 copies, on its next crawl the
system need only visit and index one of those pages"). The paper: 22% of the pages given exact
copies, 29% given 15 shared 4-line chunks, 33% given 25 shared 2-line chunks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup._types import BOOL, I64

__all__ = ["CrawlSavings", "crawl_savings", "first_of_groups"]


@dataclass(frozen=True, slots=True)
class CrawlSavings:
    """Pages and bytes in the crawl, and those a crawler need not visit."""

    pages: int
    pages_skipped: int
    bytes: int
    bytes_skipped: int

    @property
    def page_share(self) -> float:
        return self.pages_skipped / self.pages if self.pages else 0.0

    @property
    def byte_share(self) -> float:
        return self.bytes_skipped / self.bytes if self.bytes else 0.0


def first_of_groups(labels: I64) -> BOOL:
    """True for the first document (in input order) of each group: the one a crawler keeps."""
    keep = np.zeros(labels.size, dtype=bool)
    if labels.size:
        _, first = np.unique(labels, return_index=True)
        keep[first] = True
    return keep


def crawl_savings(kept: BOOL, lengths: I64) -> CrawlSavings:
    """The savings of skipping every document not ``kept``; ``lengths`` are payload bytes."""
    lengths = np.asarray(lengths, dtype=np.int64)
    return CrawlSavings(pages=int(kept.size), pages_skipped=int(np.count_nonzero(~kept)),
                        bytes=int(lengths.sum()), bytes_skipped=int(lengths[~kept].sum()))
