"""The on-disk layout of a store: the only module that knows its file names and binary formats.

::

    STORE/
      manifest.json          format, version, config, segments (name, first and last doc, count,
                             byte size and checksum of its segment.json); replaced atomically
      meta.sqlite            documents, sketches and their postings (sketch value -> documents),
                             clusters and the insert log (WAL mode)
      segments/<name>/       immutable, memory-mapped numpy arrays listed in segment.json
        segment.json         per array: file, dtype, shape, bytes, xxh3 checksum

A file is written to a temporary name, flushed to disk, then renamed over its final name, and the
directory is synced: a reader sees the old file or the new one, never half of one. A segment
directory is complete before the manifest names it; anything the manifest does not name is
debris of an interrupted write and is removed on open.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from neardup.errors import CorruptDataError, OutputError

__all__ = [
    "FORMAT",
    "VERSION",
    "SegmentEntry",
    "connect_meta",
    "read_manifest",
    "read_segment",
    "remove_debris",
    "segment_dir",
    "write_manifest",
    "write_segment",
]

FORMAT = "neardup-store"
VERSION = 1
MANIFEST = "manifest.json"
META = "meta.sqlite"
SEGMENTS = "segments"
SEGMENT_INDEX = "segment.json"

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc INTEGER PRIMARY KEY, id TEXT, url TEXT, host TEXT, sweep TEXT, fetched TEXT,
    source TEXT, length INTEGER, text_chars INTEGER, tokens INTEGER,
    identical INTEGER, lexical INTEGER, shingle INTEGER, simhash INTEGER,
    cluster INTEGER NOT NULL, segment INTEGER);
CREATE INDEX IF NOT EXISTS documents_url ON documents(url);
CREATE INDEX IF NOT EXISTS documents_cluster ON documents(cluster);
CREATE INDEX IF NOT EXISTS documents_identical ON documents(identical);
CREATE INDEX IF NOT EXISTS documents_log ON documents(segment) WHERE segment IS NULL;
CREATE TABLE IF NOT EXISTS sketches (doc INTEGER PRIMARY KEY, modulus INTEGER, data BLOB,
    shingles BLOB);
CREATE TABLE IF NOT EXISTS postings (value INTEGER NOT NULL, doc INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS postings_value ON postings(value);
"""


@dataclass(frozen=True, slots=True)
class SegmentEntry:
    """A segment as the manifest lists it: documents first..last (inclusive)."""

    name: str
    first: int
    last: int
    count: int
    index_bytes: int
    index_checksum: str

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "first": self.first, "last": self.last, "count": self.count,
                "index_bytes": self.index_bytes, "index_checksum": self.index_checksum}


def _fsync_dir(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _write_atomic(path: Path, data: bytes) -> None:
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        with temporary.open("wb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
        _fsync_dir(path.parent)
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error


def write_manifest(root: Path, config: dict[str, Any], segments: list[SegmentEntry],
                   next_doc: int) -> None:
    body = {"format": FORMAT, "version": VERSION, "config": config, "next_doc": next_doc,
            "segments": [s.as_dict() for s in segments]}
    _write_atomic(root / MANIFEST, (json.dumps(body, indent=1) + "\n").encode())


def read_manifest(root: Path) -> tuple[dict[str, Any], list[SegmentEntry], int]:
    """(config, segments, next doc) of the store at ``root``; CorruptDataError names the file."""
    path = root / MANIFEST
    try:
        body = json.loads(path.read_bytes())
        if body.get("format") != FORMAT:
            raise CorruptDataError(f"{path}: not a neardup store manifest")
        if body.get("version") != VERSION:
            raise CorruptDataError(f"{path}: store format version {body.get('version')!r}, "
                                   f"this neardup reads version {VERSION}")
        segments = [SegmentEntry(**entry) for entry in body["segments"]]
        return body["config"], segments, int(body["next_doc"])
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CorruptDataError(f"{path}: truncated or corrupt ({error})") from error


def segment_dir(root: Path, name: str) -> Path:
    return root / SEGMENTS / name


def _checksum(path: Path) -> str:
    digest = xxhash.xxh3_64()
    with path.open("rb") as data:
        while chunk := data.read(1 << 22):
            digest.update(chunk)
    return digest.hexdigest()


def write_segment(root: Path, name: str, arrays: dict[str, npt.NDArray[Any]]) -> tuple[int, str]:
    """Write the arrays of a new segment; returns the size and checksum of its segment.json."""
    final = segment_dir(root, name)
    temporary = final.with_name(f".{name}.tmp")
    shutil.rmtree(temporary, ignore_errors=True)
    try:
        temporary.mkdir(parents=True)
        listing = {}
        for key, array in arrays.items():
            path = temporary / f"{key}.npy"
            with path.open("wb") as out:
                np.save(out, np.ascontiguousarray(array), allow_pickle=False)
                out.flush()
                os.fsync(out.fileno())
            listing[key] = {"file": path.name, "dtype": array.dtype.str,
                            "shape": list(array.shape), "bytes": path.stat().st_size,
                            "checksum": _checksum(path)}
        index = (json.dumps(listing, indent=1) + "\n").encode()
        _write_atomic(temporary / SEGMENT_INDEX, index)
        os.replace(temporary, final)
        _fsync_dir(final.parent)
    except OSError as error:
        raise OutputError(f"{final}: {error.strerror or error}") from error
    return len(index), xxhash.xxh3_64_hexdigest(index)


def _load_array(path: Path, entry: dict[str, Any], verify: bool) -> npt.NDArray[Any]:
    if not path.exists():
        raise CorruptDataError(f"{path}: missing")
    if path.stat().st_size != entry["bytes"]:
        raise CorruptDataError(f"{path}: {path.stat().st_size} bytes, expected "
                               f"{entry['bytes']} (truncated or altered)")
    if verify and _checksum(path) != entry["checksum"]:
        raise CorruptDataError(f"{path}: checksum mismatch (altered)")
    try:
        array: npt.NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError as error:
        raise CorruptDataError(f"{path}: unreadable array ({error})") from error
    if array.dtype.str != entry["dtype"] or list(array.shape) != entry["shape"]:
        raise CorruptDataError(f"{path}: {array.dtype.str}{list(array.shape)}, expected "
                               f"{entry['dtype']}{entry['shape']}")
    return array


def read_segment(root: Path, entry: SegmentEntry,
                 verify: bool = False) -> dict[str, npt.NDArray[Any]]:
    """The memory-mapped arrays of a segment, after checking every file against its listing
    (sizes always; checksums too with ``verify``)."""
    directory = segment_dir(root, entry.name)
    index_path = directory / SEGMENT_INDEX
    try:
        index = index_path.read_bytes()
    except OSError as error:
        raise CorruptDataError(f"{index_path}: {error.strerror or error}") from error
    if len(index) != entry.index_bytes or xxhash.xxh3_64_hexdigest(index) != entry.index_checksum:
        raise CorruptDataError(f"{index_path}: does not match the manifest (truncated or altered)")
    listing = json.loads(index)
    return {key: _load_array(directory / item["file"], item, verify)
            for key, item in listing.items()}


def remove_debris(root: Path, segments: list[SegmentEntry]) -> list[str]:
    """Remove segment directories the manifest does not name (interrupted writes)."""
    named = {s.name for s in segments}
    removed = []
    base = root / SEGMENTS
    for child in sorted(base.iterdir()) if base.exists() else []:
        if child.name not in named:
            shutil.rmtree(child, ignore_errors=True)
            removed.append(child.name)
    for leftover in root.glob(f".{MANIFEST}.tmp"):
        leftover.unlink(missing_ok=True)
    return removed


def connect_meta(root: Path) -> sqlite3.Connection:
    """The metadata database in WAL mode (committed inserts survive a killed process)."""
    path = root / META
    try:
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.executescript(SCHEMA)
    except sqlite3.DatabaseError as error:
        raise CorruptDataError(f"{path}: {error}") from error
    return connection
