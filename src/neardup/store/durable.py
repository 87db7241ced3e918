"""Durable files: the one way the store and the batch engine make a write survive a crash.

A file is written under a temporary name, flushed and synced, renamed into place, and its
directory synced so that the rename itself survives (:func:`write_atomic`); a folder of files is
published the same way (:func:`publish_dir`); a file written in place is synced with
:func:`sync` before whatever marks it done. Inside :func:`scratch_area` (a work area that is
thrown away after the call, as the library's temporary runs are) nothing is synced: a crash
there loses nothing anybody will read again.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import IO, Any

__all__ = ["TMP_SUFFIX", "publish_dir", "scratch_area", "sync", "sync_dir", "sync_path",
           "write_atomic"]

TMP_SUFFIX = ".tmp"
"""The suffix of a file or folder being written (never read; removed as debris)."""

_DURABLE: ContextVar[bool] = ContextVar("neardup_durable", default=True)


@contextmanager
def scratch_area() -> Iterator[None]:
    """Inside, writes are not synced (for a work area removed after the call)."""
    token = _DURABLE.set(False)
    try:
        yield
    finally:
        _DURABLE.reset(token)


def sync(out: IO[Any]) -> None:
    """Flush ``out`` and sync it to disk."""
    out.flush()
    if _DURABLE.get():
        os.fsync(out.fileno())


def sync_path(path: Path) -> None:
    """Sync a file another writer (pyarrow, numpy) has closed."""
    if _DURABLE.get():
        with open(path, "rb+") as out:
            os.fsync(out.fileno())


def sync_dir(path: Path) -> None:
    """Make a rename or a new entry in the directory ``path`` durable."""
    if not _DURABLE.get():
        return
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def write_atomic(path: Path, data: bytes, temporary: Path | None = None) -> None:
    """Write ``data`` to ``path`` through a synced temporary file (``temporary``, by default
    the name with :data:`TMP_SUFFIX`) and a rename (an OSError names no file: the caller says
    which)."""
    temporary = temporary or path.with_name(path.name + TMP_SUFFIX)
    with open(temporary, "wb") as out:
        out.write(data)
        sync(out)
    os.replace(temporary, path)
    sync_dir(path.parent)


def publish_dir(temporary: Path, final: Path) -> None:
    """Rename a fully written directory into place (replacing a stale one), durably."""
    sync_dir(temporary)
    if final.exists():
        shutil.rmtree(final)
    os.replace(temporary, final)
    sync_dir(final.parent)
