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

Each join also sorts its bucket and writes it back: the keys stay in the work directory, listed
in ``candidates/keys.json``, so that a later run ``--against`` this one emits and joins the keys
of its new documents only (:mod:`neardup.engine.keystore`). That holds when the keys stand for
the documents' sets as this run sees them: min-hash keys of documents pruned of templates are
not kept for reuse, and a run that prunes templates emits every key (its old pairs are verified
again).

The output is ``candidates/pairs.bin``: (a, b) int64 rows, a < b, unique.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.config import DedupConfig, SimHashMethod
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
from neardup.engine.kernels import BAND_ROW, band_rows, sorted_equal_key_pairs
from neardup.engine.keystore import (
    KeyRecord,
    band_matches,
    hamming_matches,
    old_blocks,
    reused_keys,
    sort_by_band,
    sort_by_table,
    store_sorted,
    write_keys,
)
from neardup.engine.templates import ContentReader
from neardup.index.bitperm import plan_arrays, prefix_masks
from neardup.index.hamming import (
    HammingDesign,
    TablePlan,
    design_for,
    permute_table,
    table_pairs,
)
from neardup.methods.joins import SignatureBands
from neardup.methods.registry import signer_of
from neardup.store.durable import sync

__all__ = ["CANDIDATE", "minhash_candidates", "read_candidates", "simhash_candidates",
           "survivor_rows"]

CANDIDATE = np.dtype([("a", "<i8"), ("b", "<i8")])
SIMHASH_ROW = np.dtype([("value", "<u8"), ("doc", "<i8")])


def survivor_rows(catalog: Catalog, survivors: npt.NDArray[np.bool_], first: int = 0
                  ) -> Iterator[tuple[int, I64, I64]]:
    """Per partition: (its index, docs of its survivors, their rows among the part's kept
    rows); the partitions of docs ``first`` and above only."""
    for index, part in enumerate(catalog.parts):
        if part.start + part.count <= first:
            continue
        local = np.flatnonzero(survivors[part.start:part.start + part.count]).astype(np.int64)
        yield index, local + part.start, local


def _reusable(config: DedupConfig, content: ContentReader | None
              ) -> tuple[int, KeyRecord | None]:
    """(first new doc, the earlier run's kept keys) when this run joins against them; else
    (0, None): every key is emitted, as in a one-shot run."""
    first, record = reused_keys()
    if record is None or record.method != config.method or (
            content is not None and content.active):
        return 0, None
    return first, record


_SORT_COPIES = 4
"""A bucket of band keys is planned at this share of a block: sorting it holds its rows, their
sorted copy and the sort's index arrays (100k real-text documents in 2 buckets of 17 MB raised
the run's peak RSS by 74 MB, a third of it)."""


def _block_rows(budget: int, dtype: np.dtype[Any]) -> int:
    """Rows of a kept bucket read at a time (a share of the budget)."""
    return max(1 << 12, budget // (4 * dtype.itemsize))


def _about(started: tuple[float, float], old: KeyRecord | None) -> dict[str, object]:
    wall, cpu = time.perf_counter() - started[0], time.process_time() - started[1]
    about: dict[str, object] = {"phases": {"candidates": round(wall, 4),
                                           "candidates_cpu": round(cpu, 4)}}
    if old is not None:
        about["old_key_folders"] = len(old.folders)
    return about


def _design(config: DedupConfig, count: int, budget: int, old: KeyRecord | None
            ) -> tuple[HammingDesign, int]:
    """The Hamming design and buckets per table: the earlier run's when joining against it
    (any complete design finds the same pairs), else chosen for ``count`` survivors."""
    if old is not None:
        return HammingDesign(tuple(old.layout[1:]), old.layout[0]), old.buckets
    design = design_for(config.of(SimHashMethod).max_hamming, count)
    least = min(plan.prefix_bits for plan in design.plans())
    return design, bucket_count(count * SIMHASH_ROW.itemsize, budget, 1 << min(16, least))


def simhash_candidates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                       folder: Path, budget: int,
                       content: ContentReader | None = None) -> dict[str, object]:
    """Write the candidate pairs of the simhash method; returns the design's parameters.
    Inside :func:`neardup.engine.keystore.reusing_keys` (and when ``content`` prunes nothing),
    only the new documents' keys are emitted and joined with the kept ones."""
    started = (time.perf_counter(), time.process_time())
    first, old = _reusable(config, content)
    design, per_table = _design(config, int(survivors.sum()), budget, old)
    plans = design.plans()
    writers = [BucketWriter(folder / f"table{t}", per_table, SIMHASH_ROW)
               for t in range(len(plans))]
    shift = np.uint64(64 - per_table.bit_length() + 1)
    for index, docs, local in survivor_rows(catalog, survivors, first):
        rows = np.empty(docs.size, dtype=SIMHASH_ROW)
        rows["value"] = catalog.columns(catalog.parts[index])["simhash"][local]
        rows["doc"] = docs
        for plan, writer in zip(plans, writers, strict=True):
            route = permute_table(rows["value"], plan) >> shift if per_table > 1 else \
                np.zeros(docs.size, dtype=np.uint64)
            writer.add(rows, route)
    for writer in writers:
        writer.close()
    olds = old.folders if old is not None else ()
    k = config.of(SimHashMethod).max_hamming
    tasks = [_TableJoin(writer.folder, bucket, tuple(plans), table, k,
                        folder / f"joined-t{table:03d}-b{bucket:05d}.bin",
                        tuple(f / f"table{table}" for f in olds),
                        _block_rows(budget, SIMHASH_ROW))
             for table, writer in enumerate(writers) for bucket in range(writer.count)]
    with _PairSink(folder / "pairs.bin") as sink:
        sink.append(tasks, bucket_map(_join_table, tasks))
    write_keys(folder, KeyRecord(config.method, "tables", per_table,
                                 (design.choose, *design.blocks), (*olds, folder)))
    return {"k": k, "blocks": list(design.blocks), "choose": design.choose,
            "tables": len(plans), **_about(started, old)}


@dataclass(frozen=True, slots=True)
class _TableJoin:
    """One bucket of one permuted table, for a worker, with the same bucket of the table in
    each kept folder of an earlier run (``olds``, read ``block_rows`` at a time)."""

    folder: Path
    bucket: int
    plans: tuple[TablePlan, ...]
    table: int
    k: int
    out: Path
    olds: tuple[Path, ...] = ()
    block_rows: int = 1 << 16


def _join_table(task: _TableJoin) -> int:
    """The pairs of one bucket of one table (new against new, new against old), written to
    ``task.out``; the bucket is kept sorted; returns the count of pairs."""
    plan = task.plans[task.table]
    rows = sort_by_table(read_bucket(task.folder, task.bucket, SIMHASH_ROW), plan)
    store_sorted(task.folder, task.bucket, rows)
    firsts, seconds = [], []
    if rows.size >= 2:
        i, j = table_pairs(rows["value"], task.k, list(task.plans), task.table)
        a, b = rows["doc"][i], rows["doc"][j]
        firsts.append(np.minimum(a, b))
        seconds.append(np.maximum(a, b))
    if rows.size and task.olds:
        earlier = prefix_masks(plan_arrays(list(task.plans)))[:task.table]
        for folder in task.olds:
            for block in old_blocks(folder, task.bucket, SIMHASH_ROW, task.block_rows):
                a, b = hamming_matches(block, rows, plan, earlier, task.k)
                firsts.append(a)
                seconds.append(b)
    if not firsts:
        return 0
    return _write_pairs(task.out, np.concatenate(firsts), np.concatenate(seconds))


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
    With ``content``, documents pruned of templates are signed on their content (and the keys
    are not kept for reuse). Inside :func:`neardup.engine.keystore.reusing_keys`, only the new
    documents' keys are emitted and joined with the kept ones."""
    started = (time.perf_counter(), time.process_time())
    bands, signer = SignatureBands.banding(config), signer_of(config)
    assert signer is not None, "a join of signature bands"
    first, old = _reusable(config, content)
    if old is not None and tuple(old.layout) != (bands.bands, bands.rows):
        first, old = 0, None
    count = int(survivors.sum())
    writer = BucketWriter(folder / "bands", old.buckets if old is not None else bucket_count(
        count * bands.bands * BAND_ROW.itemsize * _SORT_COPIES, budget), BAND_ROW)
    for index, docs, local in survivor_rows(catalog, survivors, first):
        rows = band_rows(catalog, index, docs, local, bands, signer, content)
        writer.add(rows, spread(rows["key"]))
    writer.close()
    olds = old.folders if old is not None else ()
    count = bucket_count(count * CANDIDATE.itemsize * 4, budget)
    joins = [_BandJoin(writer.folder, bucket, folder / f"joined-{bucket:05d}.bin", count,
                       tuple(f / "bands" for f in olds), _block_rows(budget, BAND_ROW))
             for bucket in range(writer.count)]
    _distinct_pairs(joins, folder, count)
    if content is None or not content.active:
        write_keys(folder, KeyRecord(config.method, "bands", writer.count,
                                     (bands.bands, bands.rows), (*olds, folder)))
    return {"threshold": config.threshold, "bands": bands.bands, "rows": bands.rows,
            **_about(started, old)}


def _distinct_pairs(joins: list[_BandJoin], folder: Path, count: int) -> None:
    """Run the band joins, then make their pairs distinct bucket by bucket (by first doc) into
    ``folder/pairs.bin``."""
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


@dataclass(frozen=True, slots=True)
class _BandJoin:
    """One bucket of band keys, for a worker: its pairs go to ``out``, routed by first doc;
    with the same bucket of each kept folder of an earlier run (``olds``)."""

    folder: Path
    bucket: int
    out: Path
    count: int
    olds: tuple[Path, ...] = ()
    block_rows: int = 1 << 16


def _join_bands(task: _BandJoin) -> None:
    rows = sort_by_band(read_bucket(task.folder, task.bucket, BAND_ROW))
    store_sorted(task.folder, task.bucket, rows)
    firsts, seconds = sorted_equal_key_pairs(rows)  # sorted by band, key, doc
    a_parts, b_parts = [firsts], [seconds]
    if rows.size:
        for folder in task.olds:
            for block in old_blocks(folder, task.bucket, BAND_ROW, task.block_rows):
                a, b = band_matches(block, rows)
                a_parts.append(a)
                b_parts.append(b)
    a, b = np.concatenate(a_parts), np.concatenate(b_parts)
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
    rows = _distinct(np.concatenate([read_routed(path, task.bucket, CANDIDATE)
                                     for path in task.sources]))
    return _write_pairs(task.out, rows["a"], rows["b"])


def _distinct(rows: npt.NDArray[np.void]) -> npt.NDArray[np.void]:
    """The rows sorted, each once: ``np.unique``'s result, whose first call imports numpy.ma
    (0.06 s, a tenth of a one-document run)."""
    rows = np.sort(rows)
    if rows.size < 2:
        return rows
    first = np.empty(rows.size, dtype=bool)
    first[0] = True
    first[1:] = rows[1:] != rows[:-1]
    return rows[first]




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
        sync(self._out)
        self._out.close()


def read_candidates(folder: Path) -> npt.NDArray[Any]:
    return np.fromfile(folder / "pairs.bin", dtype=CANDIDATE)

