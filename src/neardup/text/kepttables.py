"""Tables built from Python's Unicode database, kept on disk between processes.

The canonical form's tables (the class of each code point, the code points NFKC may change, the
case folding of each) take about 0.12 s of Python loops to build: more than a tenth of a
one-document run. Each is a function of the Unicode database's version and of the module that
builds it, so it is saved once under a name made of both (a digest of the module's source),
beside the package's compiled kernels (the module's ``__pycache__``; the user's cache folder
when that one is read-only), and read back by later processes (both of the canonical form's
files in about 5 ms).

A file is written to a temporary name, synced and renamed into place. One that does not read
back whole (zip's CRC of every array) is built again and replaced; where
no folder is writable, the tables are built in every process, as before.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
import unicodedata
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["Tables", "kept_tables"]

Tables = dict[str, np.ndarray[Any, Any]]


def kept_tables(name: str, module_file: str, build: Callable[[], Tables]) -> Tables:
    """The tables ``build`` returns (arrays by name) for the module at ``module_file``: read
    from the kept file when one matches, else built and kept."""
    path = _kept_path(name, module_file)
    tables = _read(path) if path is not None else None
    if tables is not None:
        return tables
    tables = build()
    if path is not None:
        _write(path, tables)
    return tables


def _kept_path(name: str, module_file: str) -> Path | None:
    """Where the tables of this module's source and this Unicode version are kept (None when
    neither folder can be written)."""
    source = Path(module_file)
    try:
        digest = hashlib.blake2b(source.read_bytes(), digest_size=8).hexdigest()
    except OSError:
        return None
    python = "".join(map(str, sys.version_info[:2]))
    filename = f"neardup-{name}-py{python}-unicode{unicodedata.unidata_version}-{digest}.npz"
    for folder in (source.parent / "__pycache__", _user_cache()):
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        if os.access(folder, os.W_OK):
            return folder / filename
    return None


def _user_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "neardup"


def _read(path: Path) -> Tables | None:
    """The tables of a kept file, or None when it is missing or does not read back whole."""
    try:
        with open(path, "rb") as file, np.load(file, allow_pickle=False) as kept:
            return {key: kept[key] for key in kept.files}   # each read checks its CRC
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile):
        return None


def _write(path: Path, tables: Tables) -> None:
    """Keep ``tables`` at ``path`` (temporary name, synced, renamed); a failure only means the
    next process builds them again."""
    try:
        handle, temporary = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(handle, "wb") as out:
            arrays: dict[str, Any] = dict(tables)
            np.savez(out, **arrays)
            out.flush()
            os.fchmod(out.fileno(), 0o644)   # readable by every user, as compiled kernels are
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except OSError:
        Path(temporary).unlink(missing_ok=True)
