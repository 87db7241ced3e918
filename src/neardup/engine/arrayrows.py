"""Chosen rows (or ranges) of a work directory's ``.npy`` file, without reading the rest.

Verification visits every partition its block of pairs touches, for a few rows of each of its
files, and a run has hundreds of blocks: reading whole files, or even parsing each file's npy
header again (numpy evaluates it as a Python literal), made those visits most of the stage's
cost. Here a file's header is parsed once per process and kept under the file's identity
(device, inode, size, modification time): work-directory files are replaced by a rename, never
rewritten in place, so a changed file has another identity and its header is read again. Only
the pages holding the wanted rows are read, through a memory map closed before returning
(numpy's own ``memmap`` resolves the path and wraps every index in another ``memmap``: most of
the cost of a few rows).
"""

from __future__ import annotations

import mmap
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.errors import CorruptDataError

__all__ = ["ArrayHeader", "array_header", "read_ranges", "read_rows"]

_KEPT_HEADERS = 1 << 16
"""Headers kept per process at most (a 10M-document run has about 12,000 partition files)."""


@dataclass(frozen=True, slots=True)
class ArrayHeader:
    """What a ``.npy`` file's header says: the type and shape of its array, where it starts."""

    dtype: np.dtype[Any]
    shape: tuple[int, ...]
    offset: int


_HEADERS: dict[tuple[str, int, int, int, int], ArrayHeader] = {}


def _identity(path: Path) -> tuple[str, int, int, int, int]:
    try:
        stat = os.stat(path)
    except FileNotFoundError as err:
        raise CorruptDataError(f"{path}: missing") from err
    return str(path), stat.st_dev, stat.st_ino, stat.st_size, stat.st_mtime_ns


def _parse_header(path: Path, size: int) -> ArrayHeader:
    """The header of ``path``, checked against its ``size``."""
    try:
        with open(path, "rb") as source:
            version = np.lib.format.read_magic(source)
            if version == (1, 0):
                shape, fortran, dtype = np.lib.format.read_array_header_1_0(source)
            else:
                shape, fortran, dtype = np.lib.format.read_array_header_2_0(source)
            offset = source.tell()
    except (ValueError, EOFError) as err:
        raise CorruptDataError(f"{path}: not a whole array ({err})") from err
    if fortran or dtype.hasobject:
        raise CorruptDataError(f"{path}: not an array of the work directory (order or type)")
    if offset + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != size:
        raise CorruptDataError(f"{path}: {size} bytes, not the length its header gives")
    return ArrayHeader(dtype, tuple(int(n) for n in shape), offset)


def array_header(path: Path) -> ArrayHeader:
    """The header of ``path``, checked against the file's length (kept: see the module)."""
    identity = _identity(path)
    found = _HEADERS.get(identity)
    if found is None:
        found = _parse_header(path, identity[3])
        if len(_HEADERS) >= _KEPT_HEADERS:
            _HEADERS.clear()
        _HEADERS[identity] = found
    return found


def read_rows(path: Path, rows: I64) -> npt.NDArray[Any]:
    """Rows ``rows`` (first-axis indices) of the array in ``path``, copied out; a file that is
    not a whole ``.npy`` raises :class:`CorruptDataError` naming it, as does a row outside it."""
    header = array_header(path)
    length = header.shape[0] if header.shape else 0
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= length):
        raise CorruptDataError(f"{path}: holds {length} rows, row {int(rows.max())} wanted")
    if not rows.size:
        return np.empty((0, *header.shape[1:]), dtype=header.dtype)
    with open(path, "rb") as source, \
            mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        whole = np.frombuffer(mapped, dtype=header.dtype, offset=header.offset,
                              count=int(np.prod(header.shape))).reshape(header.shape)
        chosen: npt.NDArray[Any] = whole[rows]  # a copy: the map is closed below
        del whole
    return chosen


def read_ranges(path: Path, starts: I64, ends: I64) -> tuple[npt.NDArray[Any], I64]:
    """The elements ``[start, end)`` of each range of the one-dimensional array in ``path``,
    concatenated, and their CSR bounds; each range read from the file straight into its place
    (a memory map would count every page it touches in the process's resident memory while it
    is open). Ranges outside the array raise :class:`CorruptDataError` naming the file."""
    header = array_header(path)
    if len(header.shape) != 1:
        raise CorruptDataError(f"{path}: {len(header.shape)} dimensions, not one")
    if starts.size and (int(starts.min()) < 0 or int(ends.max()) > header.shape[0]
                        or bool((ends < starts).any())):
        raise CorruptDataError(f"{path}: shorter than the offsets beside it")
    bounds = np.zeros(starts.size + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=bounds[1:])
    flat = np.empty(int(bounds[-1]), dtype=header.dtype)
    size = header.dtype.itemsize
    with open(path, "rb", buffering=0) as source:
        fd = source.fileno()
        for start, low, high in zip(starts.tolist(), bounds[:-1].tolist(), bounds[1:].tolist(),
                                    strict=True):
            if high > low and os.preadv(fd, [flat[low:high].data],
                                        header.offset + size * start) != size * (high - low):
                raise CorruptDataError(f"{path}: cut short")
    return flat, bounds
