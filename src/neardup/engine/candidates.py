"""Stage 4, candidates: the method's keys, bucketed on disk, joined bucket by bucket.

- ``simhash``: for each permuted Hamming table of the design (chosen for the number of exact
  survivors, as in memory), every survivor's fingerprint is routed by the table's leading bits,
  so that every pair the table can find lies in one bucket; each bucket runs the table's
  compiled join (:func:`neardup.index.hamming.table_pairs`), which reports a pair only from the
  first table whose prefix it shares: no pair comes out twice.
- ``minhash``: each survivor's LSH band keys (band, key) are routed by key; each bucket pairs the
  documents of equal (band, key); the pairs, routed by their first doc, are made unique.

The joins run bucket by bucket in the worker pool (:func:`neardup.engine.buckets.bucket_map`):
each task writes its own file and the files are concatenated in bucket order.

The output is ``candidates/pairs.bin``: (a, b) int64 rows, a < b, unique.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.config import DedupConfig
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
from neardup.engine.kernels import equal_key_pairs as _equal_key_pairs
from neardup.engine.partition import band_key_rows
from neardup.engine.templates import ContentReader
from neardup.index.hamming import TablePlan, design_for, permute_table, table_pairs
from neardup.index.lsh import choose_bands
from neardup.methods.minhash import LSH_FALSE_POSITIVE_WEIGHT

__all__ = ["CANDIDATE", "minhash_candidates", "read_candidates", "simhash_candidates",
           "survivor_rows"]

CANDIDATE = np.dtype([("a", "<i8"), ("b", "<i8")])
SIMHASH_ROW = np.dtype([("value", "<u8"), ("doc", "<i8")])
BAND_ROW = np.dtype([("band", "<i8"), ("key", "<u8"), ("doc", "<i8")])


def survivor_rows(catalog: Catalog, survivors: npt.NDArray[np.bool_]) -> Iterator[
        tuple[Any, I64, I64]]:
    """Per partition: (part, docs of its survivors, their rows among the part's kept rows)."""
    for part in catalog.parts:
        local = np.flatnonzero(survivors[part.start:part.start + part.count]).astype(np.int64)
        yield part, local + part.start, local


def simhash_candidates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                       folder: Path, budget: int) -> dict[str, object]:
    """Write the candidate pairs of the simhash method; returns the design's parameters."""
    count = int(survivors.sum())
    design = design_for(config.max_hamming, count)
    plans = design.plans()
    per_table = bucket_count(count * SIMHASH_ROW.itemsize, budget,
                             1 << min(16, min(plan.prefix_bits for plan in plans)))
    writers = [BucketWriter(folder / f"table{t}", per_table, SIMHASH_ROW)
               for t in range(len(plans))]
    shift = np.uint64(64 - per_table.bit_length() + 1)
    for part, docs, local in survivor_rows(catalog, survivors):
        rows = np.empty(docs.size, dtype=SIMHASH_ROW)
        rows["value"] = catalog.columns(part)["simhash"][local]
        rows["doc"] = docs
        for plan, writer in zip(plans, writers, strict=True):
            route = permute_table(rows["value"], plan) >> shift if per_table > 1 else \
                np.zeros(docs.size, dtype=np.uint64)
            writer.add(rows, route)
    for writer in writers:
        writer.close()
    tasks = [_TableJoin(writer.folder, bucket, tuple(plans), table, config.max_hamming,
                        folder / f"joined-t{table:03d}-b{bucket:05d}.bin")
             for table, writer in enumerate(writers) for bucket in range(writer.count)]
    with _PairSink(folder / "pairs.bin") as sink:
        sink.append(tasks, bucket_map(_join_table, tasks))
    return {"k": config.max_hamming, "blocks": list(design.blocks), "choose": design.choose,
            "tables": len(plans)}


@dataclass(frozen=True, slots=True)
class _TableJoin:
    """One bucket of one permuted table, for a worker."""

    folder: Path
    bucket: int
    plans: tuple[TablePlan, ...]
    table: int
    k: int
    out: Path


def _join_table(task: _TableJoin) -> int:
    """The pairs of one bucket of one table, written to ``task.out``; returns their count."""
    rows = read_bucket(task.folder, task.bucket, SIMHASH_ROW)
    if rows.size < 2:
        return 0
    i, j = table_pairs(rows["value"], task.k, list(task.plans), task.table)
    a, b = rows["doc"][i], rows["doc"][j]
    return _write_pairs(task.out, np.minimum(a, b), np.maximum(a, b))


def _write_pairs(path: Path, a: I64, b: I64) -> int:
    rows = np.empty(a.size, dtype=CANDIDATE)
    rows["a"], rows["b"] = a, b
    with open(path, "wb") as out:
        out.write(rows.tobytes())
    return int(a.size)


def minhash_candidates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                       folder: Path, budget: int,
                       content: ContentReader | None = None) -> dict[str, object]:
    """Write the candidate pairs of the min-hash method (LSH bands); returns its parameters.
    With ``content``, documents pruned of templates are signed on their content."""
    bands = choose_bands(config.minhash.num_perm, config.threshold, LSH_FALSE_POSITIVE_WEIGHT)
    count = int(survivors.sum())
    writer = BucketWriter(folder / "bands", bucket_count(
        count * bands.bands * BAND_ROW.itemsize, budget), BAND_ROW)
    for part, docs, local in survivor_rows(catalog, survivors):
        keys = band_key_rows(part.folder, part.kept_rows()[local], bands,
                             content.adjuster(part, local) if content is not None else None)
        for band in range(bands.bands):
            rows = np.empty(docs.size, dtype=BAND_ROW)
            rows["band"], rows["doc"] = band, docs
            rows["key"] = keys[:, band]
            writer.add(rows, spread(rows["key"]))
    writer.close()
    count = bucket_count(count * CANDIDATE.itemsize * 4, budget)
    joins = [_BandJoin(writer.folder, bucket, folder / f"joined-{bucket:05d}.bin", count)
             for bucket in range(writer.count)]
    for _ in bucket_map(_join_bands, joins):
        pass
    sources = tuple(join.out for join in joins)
    uniques = [_Unique(sources, bucket, folder / f"unique-{bucket:05d}.bin")
               for bucket in range(count)]
    with _PairSink(folder / "pairs.bin") as sink:
        sink.append(uniques, bucket_map(_unique_pairs, uniques))
    for join in joins:
        join.out.unlink()
        join.out.with_name(join.out.name + ".bounds.npy").unlink()
    return {"threshold": config.threshold, "bands": bands.bands, "rows": bands.rows}


@dataclass(frozen=True, slots=True)
class _BandJoin:
    """One bucket of band keys, for a worker: its pairs go to ``out``, routed by first doc."""

    folder: Path
    bucket: int
    out: Path
    count: int


def _join_bands(task: _BandJoin) -> None:
    a, b = _equal_key_pairs(read_bucket(task.folder, task.bucket, BAND_ROW))
    rows = np.empty(a.size, dtype=CANDIDATE)
    rows["a"], rows["b"] = a, b
    write_routed(task.out, rows, spread(a), task.count)


@dataclass(frozen=True, slots=True)
class _Unique:
    """One bucket of raw pairs, gathered from every band join, for a worker."""

    sources: tuple[Path, ...]
    bucket: int
    out: Path


def _unique_pairs(task: _Unique) -> int:
    """The distinct pairs of one bucket, sorted, written to ``task.out``; returns their count."""
    rows = np.unique(np.concatenate([read_routed(path, task.bucket, CANDIDATE)
                                     for path in task.sources]))
    return _write_pairs(task.out, rows["a"], rows["b"])




class _PairSink:
    """Appends (a, b) rows to one file; synced on close."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rows = 0
        self._out = open(path, "wb")  # noqa: SIM115 - closed in __exit__

    def __enter__(self) -> _PairSink:
        return self

    def append(self, tasks: list[Any], counts: Iterator[int]) -> None:
        """Append each task's pair file (``task.out``) as its count comes back, in order."""
        for task, count in zip(tasks, counts, strict=True):
            append_files([task.out], self._out)
            self.rows += count

    def __exit__(self, *exc: object) -> None:
        self._out.flush()
        os.fsync(self._out.fileno())
        self._out.close()


def read_candidates(folder: Path) -> npt.NDArray[Any]:
    return np.fromfile(folder / "pairs.bin", dtype=CANDIDATE)

