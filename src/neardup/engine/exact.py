"""Stage 3, exact levels: identical, then lexically equivalent, then shingle-equivalent.

The same rule as :func:`neardup.methods.exact.collapse_exact`, out of core: each level routes
(hash, doc) rows of its members to buckets by hash, so that a whole group lands in one bucket;
in each bucket the smallest doc of a group is its representative and goes on to the next level,
every other member is paired with it. Documents without tokens take part in the identical level
only; revisits take part in none (they are paired with their original).

Each level's buckets are grouped in the worker pool (:func:`neardup.engine.buckets.bucket_map`):
a task writes its bucket's pairs and its representatives (routed to the next level's buckets)
to its own files; the pair files are appended in bucket order.

Writes ``exact/pairs.bin`` (pair records), ``exact/survivors.npy`` (a packed bitmap of the docs
that go on to the near stage) and the groups and collapsed counts per level in its marker.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.engine.buckets import (
    BucketWriter,
    append_files,
    bucket_count,
    bucket_map,
    read_bucket,
    read_routed,
    spread,
    write_routed,
)
from neardup.engine.catalog import Catalog
from neardup.engine.markers import folder_files
from neardup.engine.pairfiles import PAIR, to_records
from neardup.engine.workdir import WorkDir, publish_dir, read_array, write_array
from neardup.methods.exact import LEVELS
from neardup.methods.pairs import Pairs
from neardup.store.durable import sync

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
        packed = read_array(self.folder / "survivors.npy")
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


@dataclass(frozen=True, slots=True)
class _LevelBucket:
    """One bucket of one level, for a worker: its rows are bucket ``bucket`` of the first
    level's writer (``sources`` = its folder) or of the previous level's routed files."""

    level: int
    bucket: int
    count: int
    sources: tuple[Path, ...]
    out: Path

    def rows(self) -> npt.NDArray[Any]:
        if self.level == 0:
            return read_bucket(self.sources[0], self.bucket, ROW)
        return np.concatenate([read_routed(path, self.bucket, ROW) for path in self.sources])

    @property
    def representatives(self) -> Path:
        return self.out.with_name(self.out.name + ".reps")


def _group_bucket(task: _LevelBucket) -> tuple[int, int]:
    """Group one bucket: its pairs to ``task.out``, its representatives to the next level (or,
    after the last level, their docs); returns (groups, collapsed)."""
    reps, a, b, found = _group(task.rows())
    with open(task.out, "wb") as out:
        out.write(to_records(Pairs.exact(a, b, "exact", LEVELS[task.level][1])).tobytes())
    if task.level + 1 == len(LEVELS):
        with open(task.representatives, "wb") as out:
            out.write(np.ascontiguousarray(reps["doc"]).tobytes())
        return found, int(a.size)
    reps = reps[reps["tokens"] > 0]
    reps["key"] = reps[LEVELS[task.level + 1][0]]
    write_routed(task.representatives, reps, spread(reps["key"]), task.count)
    return found, int(a.size)


def _levels(first: BucketWriter, folder: Path, pairs_out: BinaryIO,
            survivors: npt.NDArray[np.bool_]) -> tuple[dict[str, int], dict[str, int]]:
    """Group every level bucket by bucket; returns (groups, collapsed) per relation."""
    groups, collapsed = {}, {}
    folder.mkdir(parents=True, exist_ok=True)
    sources: tuple[Path, ...] = (first.folder,)
    for level, (_, relation) in enumerate(LEVELS):
        tasks = [_LevelBucket(level, bucket, first.count, sources,
                              folder / f"level{level}-{bucket:05d}.bin")
                 for bucket in range(first.count)]
        groups[relation] = collapsed[relation] = 0
        for task, (found, dropped) in zip(tasks, bucket_map(_group_bucket, tasks), strict=True):
            append_files([task.out], pairs_out)
            groups[relation] += found
            collapsed[relation] += dropped
        if level + 1 == len(LEVELS):
            for task in tasks:
                survivors[np.fromfile(task.representatives, dtype=np.int64)] = True
        for path in sources[1:] if level else ():
            path.unlink()
            path.with_name(path.name + ".bounds.npy").unlink()
        sources = tuple(task.representatives for task in tasks)
    return groups, collapsed


def run_exact(work: WorkDir, catalog: Catalog, budget: int) -> ExactResult:
    final = work.root / STAGE
    if (record := work.done(STAGE)) is not None:
        return ExactResult(final, record)
    temporary = work.temporary(final)
    writer = _first_level(catalog, temporary / "level0", budget)
    survivors = np.zeros(catalog.documents, dtype=bool)
    with open(temporary / "pairs.bin", "wb") as pairs_out:
        groups, collapsed = _levels(writer, temporary / "groups", pairs_out, survivors)
        sync(pairs_out)
    write_array(temporary / "survivors.npy", np.packbits(survivors))
    shutil.rmtree(temporary / "level0", ignore_errors=True)
    shutil.rmtree(temporary / "groups", ignore_errors=True)
    publish_dir(temporary, final)
    record = {"groups": groups, "collapsed": collapsed, "survivors": int(survivors.sum()),
              "documents": catalog.documents}
    work.mark(STAGE, record, folder_files(final))
    return ExactResult(final, record)
