"""Bucketed record files: the external partitioning every batch stage shares.

Rows of a fixed numpy record type are routed to one of ``count`` bucket files by a 64-bit route
(a hash, or leading bits that must stay together); a bucket is then read whole and processed in
memory. The number of buckets is chosen so that one bucket fits the memory budget
(:func:`bucket_count`), which is how every stage stays within ``--memory-limit`` whatever the
number of documents. Writers append through small buffers; :meth:`BucketWriter.close` syncs
the files, and the caller publishes the folder (a temporary directory renamed into place).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import U64

__all__ = ["BucketWriter", "bucket_count", "buckets", "read_bucket", "spread"]

_FLUSH_BYTES = 1 << 20


def bucket_count(total_bytes: int, budget: int, most: int = 1 << 14) -> int:
    """The smallest power of two of buckets whose mean size is within ``budget`` bytes."""
    count = 1
    while count < most and total_bytes > count * budget:
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
                with open(path, "rb+") as out:
                    os.fsync(out.fileno())


def read_bucket(folder: Path, bucket: int, dtype: np.dtype[Any]) -> npt.NDArray[Any]:
    path = folder / f"{bucket:05d}.bin"
    if not path.exists():
        return np.empty(0, dtype=dtype)
    return np.fromfile(path, dtype=dtype)


def buckets(folder: Path, count: int, dtype: np.dtype[Any]) -> Iterator[npt.NDArray[Any]]:
    """Each bucket's rows in turn."""
    for bucket in range(count):
        yield read_bucket(folder, bucket, dtype)
