"""The candidate keys a run keeps, and the merge join of a later run's new keys against them.

The candidates stage of ``simhash`` and ``minhash`` leaves its bucketed keys in the work
directory (``near/candidates``), each bucket file sorted (simhash: per table, by the table's
permuted fingerprint; minhash: by band, key, doc), and a record of them, ``keys.json``
(:class:`KeyRecord`): the method, the number of buckets, the layout that routed the keys (the
Hamming design's choose and blocks, or the LSH bands and rows), and the folders holding the
keys of every document of the run. A run ``--against`` that one (:func:`reusing_keys`) emits
and sorts the keys of its new documents only, in the same layout, and joins them bucket by
bucket with its own (new against new) and with each old folder's bucket, read sequentially in
blocks (new against old): candidate work proportional to the new documents. Its record lists
the old folders and its own, so a chain of runs keeps working.

The join of new against old finds exactly the pairs a one-shot join finds between those
documents: simhash pairs within the distance that share the table's prefix and no earlier
table's (each pair once, as :func:`neardup.index.hamming.table_pairs` reports them), min-hash
pairs with an equal (band, key).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.index.bitperm import first_found, popcount
from neardup.index.hamming import HammingDesign, TablePlan, permute_table
from neardup.store.durable import sync
from neardup.text.compiled import njit

__all__ = ["KEPT", "KEYS", "KeyRecord", "band_matches", "hamming_matches", "old_blocks",
           "read_keys", "reused_keys", "reusing_keys", "sort_by_band", "sort_by_table",
           "store_sorted", "write_keys"]

KEYS = "keys.json"
KEPT = (KEYS, "bands", "table*")
"""What a candidates folder keeps for later runs: the record and the bucket folders it lists
(patterns, as :func:`neardup.engine.workdir.drop_scratch` reads them)."""


@dataclass(frozen=True, slots=True)
class KeyRecord:
    """The kept candidate keys of a run: see the module's notes."""

    method: str
    """The run's method: keys are joined only with keys of the same method."""
    kind: Literal["tables", "bands"]
    """Permuted Hamming tables or signature bands."""
    buckets: int
    layout: tuple[int, ...]
    """tables: (choose, *blocks) of the Hamming design; bands: (bands, rows)."""
    folders: tuple[Path, ...]
    """Each holds bucket files (tables: ``table<t>/``; bands: ``bands/``); together the
    keys of every exact-level survivor of the run, each in one folder."""

    def __post_init__(self) -> None:
        if self.buckets < 1 or self.buckets & (self.buckets - 1):
            raise ValueError(f"buckets={self.buckets}: must be a power of two")
        if not self.folders:
            raise ValueError("a key record lists at least one folder")

    def subfolders(self) -> list[str]:
        """The bucket folders inside each listed folder."""
        if self.kind == "tables":
            tables = len(HammingDesign(tuple(self.layout[1:]), self.layout[0]).tables())
            return [f"table{table}" for table in range(tables)]
        return ["bands"]

    def complete(self) -> bool:
        """Whether every bucket folder it lists is there."""
        return all((folder / name).is_dir() for folder in self.folders
                   for name in self.subfolders())


def write_keys(folder: Path, record: KeyRecord) -> None:
    """Write ``record`` as ``folder/keys.json``, synced (``folder`` itself is written as ``.``:
    its stage publishes it under another name)."""
    folders = ["." if path == folder else str(path) for path in record.folders]
    data = json.dumps({"method": record.method, "kind": record.kind, "buckets": record.buckets,
                       "layout": list(record.layout), "folders": folders}).encode()
    with open(folder / KEYS, "wb") as out:
        out.write(data)
        sync(out)


def read_keys(folder: Path) -> KeyRecord | None:
    """The record in ``folder`` (None when absent or unreadable: the keys are emitted again)."""
    try:
        raw = json.loads((folder / KEYS).read_text())
        kind = raw["kind"]
        if kind not in ("tables", "bands"):
            return None
        return KeyRecord(str(raw["method"]), kind, int(raw["buckets"]),
                         tuple(int(v) for v in raw["layout"]),
                         tuple(folder if f == "." else Path(f) for f in raw["folders"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


_REUSE: list[tuple[int, KeyRecord | None]] = [(0, None)]


@contextmanager
def reusing_keys(first: int, record: KeyRecord | None) -> Iterator[None]:
    """Inside, the candidates stage emits the keys of docs ``first`` and above only and joins
    them with the kept keys of ``record`` (the earlier run's, whose docs are below ``first``)."""
    _REUSE.append((first, record) if record is not None else (0, None))
    try:
        yield
    finally:
        _REUSE.pop()


def reused_keys() -> tuple[int, KeyRecord | None]:
    return _REUSE[-1]


def store_sorted(folder: Path, bucket: int, rows: npt.NDArray[Any]) -> None:
    """Replace a bucket file by its rows sorted (inside a stage's temporary folder)."""
    if rows.size == 0:
        return
    path = folder / f"{bucket:05d}.bin"
    sorting = path.with_name(path.name + ".sorting")
    with open(sorting, "wb") as out:
        out.write(np.ascontiguousarray(rows).tobytes())
    os.replace(sorting, path)


def old_blocks(folder: Path, bucket: int, dtype: np.dtype[Any], rows: int
               ) -> Iterator[npt.NDArray[Any]]:
    """A kept bucket file's rows, in order, ``rows`` at a time."""
    path = folder / f"{bucket:05d}.bin"
    total = path.stat().st_size // dtype.itemsize if path.exists() else 0
    for start in range(0, total, rows):
        yield np.fromfile(path, dtype=dtype, count=min(rows, total - start),
                          offset=start * dtype.itemsize)


def sort_by_band(rows: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """``rows`` sorted by (band, key, doc). A bucket's rows come in document order within each
    band (partitions are added in order), so a stable sort by key, then by band (a radix sort
    when the bands fit a byte), gives that order in about two thirds of the CPU of a
    three-key sort; where documents are out of order inside equal keys it sorts again fully."""
    order = np.argsort(rows["key"], kind="stable")
    bands = rows["band"][order]
    if bands.size and bands.min() >= 0 and bands.max() < 256:
        bands = bands.astype(np.uint8)
    found = rows[order[np.argsort(bands, kind="stable")]]
    same = (found["band"][1:] == found["band"][:-1]) & (found["key"][1:] == found["key"][:-1])
    if np.any(same & (found["doc"][1:] < found["doc"][:-1])):
        return rows[np.lexsort((rows["doc"], rows["key"], rows["band"]))]
    return found


def sort_by_table(rows: npt.NDArray[Any], plan: TablePlan) -> npt.NDArray[Any]:
    return rows[np.lexsort((rows["doc"], permute_table(rows["value"], plan)))]


def _expand(lo: I64, hi: I64) -> tuple[I64, I64]:
    """(i, j) for every i and every j in ``lo[i]:hi[i]``."""
    counts = hi - lo
    i = np.repeat(np.arange(lo.size, dtype=np.int64), counts)
    starts = np.cumsum(counts) - counts
    j = lo[i] + np.arange(i.size, dtype=np.int64) - starts[i]
    return i, j


def band_matches(old: npt.NDArray[Any], new: npt.NDArray[Any]) -> tuple[I64, I64]:
    """(old doc, new doc) of the rows with equal (band, key); both sorted by band, key."""
    firsts, seconds = [], []
    for band in np.unique(new["band"]).tolist():
        o = old[np.searchsorted(old["band"], band):np.searchsorted(old["band"], band, "right")]
        n = new[np.searchsorted(new["band"], band):np.searchsorted(new["band"], band, "right")]
        if o.size == 0:
            continue
        i, j = _expand(np.searchsorted(o["key"], n["key"]).astype(np.int64),
                       np.searchsorted(o["key"], n["key"], "right").astype(np.int64))
        firsts.append(o["doc"][j])
        seconds.append(n["doc"][i])
    if not firsts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(firsts), np.concatenate(seconds)


@njit(cache=True)
def _close_pairs(new: U64, lo: I64, hi: I64, old: U64, k: int, earlier: U64,
                 out_i: I64, out_j: I64) -> int:  # pragma: no cover - compiled
    """(i, j) with ``old[j]`` in ``lo[i]:hi[i]`` within ``k`` bits of ``new[i]`` and sharing no
    earlier table's prefix with it; counted, written while ``out_*`` have room."""
    found = 0
    for i in range(new.size):
        for j in range(lo[i], hi[i]):
            diff = new[i] ^ old[j]
            if popcount(diff) <= k and first_found(diff, earlier):
                if found < out_i.size:
                    out_i[found], out_j[found] = i, j
                found += 1
    return found


def hamming_matches(old: npt.NDArray[Any], new: npt.NDArray[Any], plan: TablePlan,
                    earlier: U64, k: int) -> tuple[I64, I64]:
    """(old doc, new doc) of the pairs within ``k`` that share ``plan``'s prefix and none of
    the ``earlier`` tables' prefixes (masks); both sorted by the table's permuted value."""
    shift = np.uint64(64 - plan.prefix_bits)
    old_prefix = permute_table(old["value"], plan) >> shift
    new_prefix = permute_table(new["value"], plan) >> shift
    lo = np.searchsorted(old_prefix, new_prefix).astype(np.int64)
    hi = np.searchsorted(old_prefix, new_prefix, "right").astype(np.int64)
    size = int((hi - lo).sum()) // 4 + 64
    args = (np.ascontiguousarray(new["value"]), lo, hi, np.ascontiguousarray(old["value"]),
            k, earlier)
    out_i, out_j = np.empty(size, np.int64), np.empty(size, np.int64)
    found = _close_pairs(*args, out_i, out_j)
    if found > size:
        out_i, out_j = np.empty(found, np.int64), np.empty(found, np.int64)
        _close_pairs(*args, out_i, out_j)
    return old["doc"][out_j[:found]], new["doc"][out_i[:found]]
