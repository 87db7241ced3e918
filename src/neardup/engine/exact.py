"""Stage 3, exact levels: identical, then lexically equivalent, then shingle-equivalent.

The same rule as :func:`neardup.pipeline.exact.collapse_exact`, out of core: each level routes
(hash, doc) rows of its members to buckets by hash, so that a whole group lands in one bucket;
in each bucket the smallest doc of a group is its representative and goes on to the next level,
every other member is paired with it. Documents without tokens take part in the identical level
only; revisits take part in none (they are paired with their original).

Writes ``exact/pairs.bin`` (pair records), ``exact/survivors.npy`` (a packed bitmap of the docs
that go on to the near stage) and the groups and collapsed counts per level in its marker.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket, spread
from neardup.engine.catalog import Catalog
from neardup.engine.pairfiles import PAIR, to_records
from neardup.engine.workdir import WorkDir, publish_dir, write_array
from neardup.methods.exact import LEVELS
from neardup.methods.pairs import Pairs

__all__ = ["ExactResult", "run_exact"]

STAGE = "exact"
ROW = np.dtype([("key", "<u8"), ("doc", "<i8"), ("lexical", "<u8"), ("shingle", "<u8"),
                ("tokens", "<i8")])


class ExactResult:
    """What the exact stage leaves: its folder (pairs, survivors) and its counts."""

    def __init__(self, folder: Path, record: dict[str, Any]) -> None:
        self.folder = folder
        self.groups: dict[str, int] = record["groups"]
        self.collapsed: dict[str, int] = record["collapsed"]
        self.survivor_count: int = record["survivors"]
        self.documents: int = record["documents"]

    def survivors(self) -> npt.NDArray[np.bool_]:
        packed = np.load(self.folder / "survivors.npy")
        return np.unpackbits(packed, count=self.documents).astype(bool)

    def pairs(self) -> npt.NDArray[Any]:
        return np.fromfile(self.folder / "pairs.bin", dtype=PAIR)


def _first_level(catalog: Catalog, folder: Path, budget: int) -> BucketWriter:
    """The identical-level rows of every non-revisit document, bucketed by hash."""
    total = sum(part.count for part in catalog.parts)
    writer = BucketWriter(folder, bucket_count(total * ROW.itemsize, budget), ROW)
    for part in catalog.parts:
        columns = catalog.columns(part)
        docs = np.arange(part.start, part.start + part.count, dtype=np.int64)
        keep = columns["revisit_of"] < 0
        rows = np.empty(int(keep.sum()), dtype=ROW)
        rows["key"] = columns["identical"][keep]
        rows["doc"] = docs[keep]
        for name in ("lexical", "shingle", "tokens"):
            rows[name] = columns[name][keep]
        writer.add(rows, spread(rows["key"]))
    writer.close()
    return writer


def _group(rows: npt.NDArray[Any]) -> tuple[npt.NDArray[Any], I64, I64, int]:
    """(representative rows, pair a, pair b, groups of two or more) of one bucket."""
    rows = rows[np.lexsort((rows["doc"], rows["key"]))]
    first = np.ones(rows.size, dtype=bool)
    first[1:] = rows["key"][1:] != rows["key"][:-1]
    starts = np.flatnonzero(first)
    representative = rows["doc"][starts][np.cumsum(first) - 1]
    duplicate = ~first
    sizes = np.diff(np.append(starts, rows.size))
    return rows[first], representative[duplicate], rows["doc"][duplicate], int(
        np.count_nonzero(sizes > 1))


def _level(source: BucketWriter, level: int, pairs_out: BinaryIO,
           survivors: npt.NDArray[np.bool_]) -> tuple[BucketWriter | None, int, int]:
    """Group one level bucket by bucket; the representatives go on to the next level's writer
    (or, after the last level, into ``survivors``). Returns (next writer, groups, collapsed)."""
    last = level + 1 == len(LEVELS)
    following = None if last else BucketWriter(
        source.folder.with_name(f"level{level + 1}"), source.count, ROW)
    groups = collapsed = 0
    for bucket in range(source.count):
        reps, a, b, found = _group(read_bucket(source.folder, bucket, ROW))
        groups += found
        collapsed += int(a.size)
        pairs_out.write(to_records(Pairs.exact(a, b, "exact", LEVELS[level][1])).tobytes())
        if following is None:
            survivors[reps["doc"]] = True
            continue
        reps = reps[reps["tokens"] > 0]
        reps["key"] = reps[LEVELS[level + 1][0]]
        following.add(reps, spread(reps["key"]))
    if following is not None:
        following.close()
    return following, groups, collapsed


def run_exact(work: WorkDir, catalog: Catalog, budget: int) -> ExactResult:
    final = work.root / STAGE
    if (record := work.done(STAGE)) is not None:
        return ExactResult(final, record)
    temporary = work.temporary(final)
    writer: BucketWriter | None = _first_level(catalog, temporary / "level0", budget)
    survivors = np.zeros(catalog.documents, dtype=bool)
    groups, collapsed = {}, {}
    with open(temporary / "pairs.bin", "wb") as pairs_out:
        for level, (_, relation) in enumerate(LEVELS):
            assert writer is not None
            writer, groups[relation], collapsed[relation] = _level(
                writer, level, pairs_out, survivors)
        pairs_out.flush()
        os.fsync(pairs_out.fileno())
    write_array(temporary / "survivors.npy", np.packbits(survivors))
    for level in range(len(LEVELS)):
        shutil.rmtree(temporary / f"level{level}", ignore_errors=True)
    publish_dir(temporary, final)
    record = {"groups": groups, "collapsed": collapsed, "survivors": int(survivors.sum()),
              "documents": catalog.documents}
    work.mark(STAGE, record)
    return ExactResult(final, record)
