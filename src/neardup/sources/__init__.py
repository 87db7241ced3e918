"""Reading documents from web archives and corpora: WARC, ARC, JSONL, Parquet, loose files.

>>> from neardup.sources import open_sources
>>> reader = open_sources(["crawl/", "extra.jsonl.gz"])   # doctest: +SKIP
>>> for doc in reader: ...                                 # doctest: +SKIP
>>> reader.stats.as_dict()                                 # doctest: +SKIP

Only HTTP 200 responses (and WARC resource records) with an HTML or plain-text payload become
documents; everything else is counted by reason in :class:`SourceStats` (see
:mod:`neardup.sources.stats` for the list). A bad record never stops a file, and an unreadable
file never stops the pass.
"""

from __future__ import annotations

from neardup.sources.context import DEFAULT_MAX_BYTES
from neardup.sources.fields import DEFAULT_FIELDS, RowFields
from neardup.sources.reader import SourceReader, open_sources
from neardup.sources.stats import SKIP_REASONS, SourceStats

__all__ = ["DEFAULT_FIELDS", "DEFAULT_MAX_BYTES", "SKIP_REASONS", "RowFields", "SourceReader",
           "SourceStats", "open_sources"]
