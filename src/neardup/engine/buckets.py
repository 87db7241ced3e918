"""Bucketed record files: the external partitioning every batch stage shares.

Rows of a fixed numpy record type are routed to one of ``count`` bucket files by a 64-bit route
(a hash, or leading bits that must stay together); a bucket is then read whole and processed in
memory. The number of buckets is chosen so that one bucket fits the memory budget
(:func:`bucket_count`), which is how every stage stays within ``--memory-limit`` whatever the
number of documents. A bucket is never planned larger than :data:`BLOCK_BYTES`, however large the
budget (:func:`block_bytes`; the verification stages size their blocks of pairs alike): buckets
are processed one at a time, so more and smaller ones cost a file each, while processing one
costs a few times its size (a sort's index and copies); buckets as large as the budget would make
the peak grow with the corpus until the budget is full. Writers append through small buffers;
:meth:`BucketWriter.close` syncs the files, and the caller publishes the folder (a temporary
directory renamed into place).

Buckets are independent, so a stage may process them in worker processes: inside
:func:`parallel_buckets` (the engine's run sets it from ``--workers``), :func:`bucket_map` runs
one task per bucket in the pool, each task writes its own file (:func:`write_routed` when its
rows go on to another bucketed step), and :func:`append_files` concatenates those files in task
order, so the result does not depend on the number of workers or buckets.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from neardup._types import U64
from neardup.methods.workers import Mapper, serial_map, task_map
from neardup.store.durable import sync_path

__all__ = ["BLOCK_BYTES", "BucketWriter", "append_files", "block_bytes", "bucket_count",
           "bucket_map", "bucket_workers", "buckets", "parallel_buckets", "read_bucket",
           "read_routed", "spread", "write_routed"]

_FLUSH_BYTES = 1 << 20

BLOCK_BYTES = 32 << 20
"""The most a bucket (or a block of pairs to verify) is planned to hold, whatever the budget."""


_POOL: list[tuple[Mapper, int]] = [(serial_map, 1)]


@contextmanager
def parallel_buckets(workers: int) -> Iterator[None]:
    """Inside, :func:`bucket_map` runs its tasks in ``workers`` processes."""
    _POOL.append((task_map(workers), max(1, workers)))
    try:
        yield
    finally:
        _POOL.pop()


def bucket_workers() -> int:
    """The number of processes :func:`bucket_map` uses here."""
    return _POOL[-1][1]


def bucket_map(function: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
    """``function`` over ``tasks`` (picklable, module-level), in order, in the current pool."""
    return _POOL[-1][0](function, tasks)


def append_files(paths: Iterable[Path], out: BinaryIO) -> None:
    """Append each existing file of ``paths`` to ``out`` in order, deleting it."""
    for path in paths:
        if path.exists():
            with open(path, "rb") as source:
                shutil.copyfileobj(source, out, 1 << 20)
            path.unlink()


def block_bytes(budget: int) -> int:
    """The bytes one bucket or block is planned to hold: ``budget``, at most
    :data:`BLOCK_BYTES`."""
    return min(budget, BLOCK_BYTES)


def bucket_count(total_bytes: int, budget: int, most: int = 1 << 14) -> int:
    """The smallest power of two of buckets whose mean size is within
    :func:`block_bytes` of ``budget`` (and, with several workers, at least two per worker when
    ``most`` allows, so they all have some)."""
    size = block_bytes(budget)
    count = 1
    while count < min(most, 2 * bucket_workers()) and bucket_workers() > 1:
        count *= 2
    while count < most and total_bytes > count * size:
        count *= 2
    return count


def spread(keys: npt.NDArray[Any]) -> U64:
    """A well-mixed 64-bit route from integer keys (so that hash routes ignore key structure)."""
    mixed = np.asarray(keys).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    mixed ^= mixed >> np.uint64(31)
    return mixed


class BucketWriter:
    """Appends rows of one record type to ``count`` files in ``folder``."""

    def __init__(self, folder: Path, count: int, dtype: np.dtype[Any]) -> None:
        self.folder = folder
        self.count = count
        self.dtype = dtype
        self.rows = 0
        self._pending: list[list[npt.NDArray[Any]]] = [[] for _ in range(count)]
        self._pending_bytes = 0
        folder.mkdir(parents=True, exist_ok=True)

    def add(self, rows: npt.NDArray[Any], route: U64) -> None:
        """Route ``rows[i]`` to bucket ``route[i] % count`` (``count`` is a power of two)."""
        if rows.size == 0:
            return
        target = (route & np.uint64(self.count - 1)).astype(np.int64)
        order = np.argsort(target, kind="stable")
        bounds = np.searchsorted(target[order], np.arange(self.count + 1))
        ordered = rows[order]
        for bucket in np.flatnonzero(np.diff(bounds)).tolist():
            self._pending[bucket].append(ordered[bounds[bucket]:bounds[bucket + 1]])
        self.rows += int(rows.size)
        self._pending_bytes += int(rows.nbytes)
        if self._pending_bytes > _FLUSH_BYTES * 16:
            self._flush()

    def _flush(self) -> None:
        for bucket, parts in enumerate(self._pending):
            if parts:
                with open(self.folder / f"{bucket:05d}.bin", "ab") as out:
                    for part in parts:
                        out.write(np.ascontiguousarray(part).tobytes())
                parts.clear()
        self._pending_bytes = 0

    def close(self) -> None:
        """Write what is buffered and sync every bucket file."""
        self._flush()
        for bucket in range(self.count):
            path = self.folder / f"{bucket:05d}.bin"
            if path.exists():
                sync_path(path)


def read_bucket(folder: Path, bucket: int, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    path = folder / f"{bucket:05d}.bin"
    if not path.exists():
        return np.empty(0, dtype=dtype)
    return np.fromfile(path, dtype=dtype)


def buckets(folder: Path, count: int, dtype: np.dtype[Any]) -> Iterator[npt.NDArray[Any]]:
    """Each bucket's rows in turn."""
    for bucket in range(count):
        yield read_bucket(folder, bucket, dtype)


def write_routed(path: Path, rows: npt.NDArray[Any], route: U64, count: int) -> None:
    """Write ``rows`` to one file grouped by bucket ``route % count`` (stable), with the
    bucket bounds beside it (``<path>.bounds.npy``), for :func:`read_routed`."""
    target = (route & np.uint64(count - 1)).astype(np.int64)
    order = np.argsort(target, kind="stable")
    bounds = np.searchsorted(target[order], np.arange(count + 1)).astype(np.int64)
    with open(path, "wb") as out:
        out.write(np.ascontiguousarray(rows[order]).tobytes())
    np.save(path.with_name(path.name + ".bounds.npy"), bounds)


def read_routed(path: Path, bucket: int, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    """The rows of ``bucket`` in a file of :func:`write_routed`."""
    bounds = np.load(path.with_name(path.name + ".bounds.npy"))
    start, end = int(bounds[bucket]), int(bounds[bucket + 1])
    return np.fromfile(path, dtype=dtype, count=end - start, offset=start * dtype.itemsize)
