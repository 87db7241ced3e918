"""The documents' lookup keys (identical-bytes hash, shingle hash, URL, id) as sorted runs,
written with the segments, instead of SQLite indexes.

An SQLite index on a hash (or on URLs of many hosts) takes each commit's inserts at random
places: once the index outgrows a commit, every commit dirties about one page per insert and
the index is rewritten, through the WAL and its checkpoint, at every batch, so the bytes
written per document grow with the store. Here each segment carries, per key, a run of
(key, doc) sorted by key (``keys.<name>.values``, ``keys.<name>.docs``, checksummed like its
other files) covering every document of its span, merged with the segments; the insert log's
runs are held in memory (:class:`~neardup.store.postings.PostingDelta`), rebuilt on open from
its checked rows. URLs and ids are keyed by their xxh3-64 hash: a lookup returns candidate
documents, whose rows the caller reads (by number) and compares with what it looks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import xxhash

from neardup._types import I64
from neardup.features.shingles import distinct
from neardup.store.formats import ROW_FIELDS
from neardup.store.postings import PostingDelta, Run, sorted_run

__all__ = ["KEYS", "key_arrays", "key_values", "new_deltas", "row_keys", "text_key"]

KEYS = ("identical", "shingle", "url", "id")
"""The columns of a document row found by value (the others are found by number)."""
FIELDS = {name: ROW_FIELDS.index(name) for name in KEYS}
TEXT_KEYS = frozenset({"url", "id"})


def key_arrays(name: str) -> tuple[str, str]:
    """The names of a segment's arrays holding the run of key ``name``."""
    return f"keys.{name}.values", f"keys.{name}.docs"


def text_key(value: str) -> int:
    """The key of a URL or id: its xxh3-64 hash as a signed integer."""
    digest = xxhash.xxh3_64_intdigest(value.encode("utf-8", "surrogatepass"))
    return digest - (1 << 64) if digest >= 1 << 63 else digest


def key_values(name: str, values: Sequence[Any]) -> I64:
    """The keys of column ``name``'s ``values`` (None has none), sorted and distinct."""
    if name in TEXT_KEYS:
        keys = [text_key(str(v)) for v in values if v is not None]
    else:
        keys = [int(v) for v in values if v is not None]
    found = np.array(keys, dtype=np.int64)
    return found if found.size < 2 else distinct(found)   # a query's one key: no sort


def row_keys(rows: Sequence[Sequence[Any]]) -> dict[str, Run]:
    """Per key, the (key, doc) run of document rows (columns of ``ROW_FIELDS``)."""
    runs = {}
    for name in KEYS:
        field = FIELDS[name]
        held = [row for row in rows if row[field] is not None]
        values = [text_key(str(row[field])) if name in TEXT_KEYS else int(row[field])
                  for row in held]
        runs[name] = sorted_run(np.array(values, dtype=np.int64),
                                np.array([int(row[0]) for row in held], dtype=np.int64))
    return runs


def new_deltas() -> dict[str, PostingDelta]:
    return {name: PostingDelta() for name in KEYS}
