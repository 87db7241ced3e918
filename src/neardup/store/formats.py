"""The on-disk layout of a store: the only module that knows its file names and binary formats.

::

    STORE/
      manifest.json          format, version, config, segments (name, first and last doc, count,
                             byte size and checksum of its segment.json), and the xxh3 checksum
                             of all that; replaced atomically
      committed              the record of the last commit: two 64-byte slots, written in turn
                             after each transaction commits, each holding (commits, documents)
                             and its checksum (see :func:`write_record`)
      lock                   held (flock, exclusive) by the one writer
      readers.lock           held shared by a process while it maps segments; a writer removes
                             a file only when it can take this lock exclusively
      meta.sqlite            documents, sketches, clusters, the insert log, per host its page
                             count (host_pages) and the documents whose values count (counted;
                             site templates, see neardup.store.hosts) (WAL mode)
      segments/<name>/       immutable, memory-mapped numpy arrays listed in segment.json: the
                             fingerprints, their permuted tables, the sketch postings of the
                             segment's documents (see neardup.store.postings) and a tally of
                             per-host value counts (see neardup.store.tallies)
        segment.json         per array: file, dtype, shape, bytes, xxh3 checksum

A file is written to a temporary name, flushed to disk, then renamed over its final name, and the
directory is synced: a reader sees the old file or the new one, never half of one. A segment
directory is complete before the manifest names it; anything the manifest does not name is
debris of an interrupted write or a segment merged away, removed once no reader can be mapping
it (see :func:`remove_debris`).
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import sqlite3
import struct
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import xxhash

from neardup.errors import CorruptDataError, NeardupError, OutputError, StoreError
from neardup.store import durable

__all__ = [
    "FORMAT",
    "PREVIOUS_TABLES",
    "PREVIOUS_VERSION",
    "ROW_COLUMNS",
    "VERSION",
    "CommitRecord",
    "SegmentEntry",
    "checked_rows",
    "connect_meta",
    "drop_previous_tables",
    "manifest_stamp",
    "manifest_version",
    "open_record",
    "read_manifest",
    "read_record",
    "read_segment",
    "readers_sharing",
    "record_bytes",
    "record_expected",
    "record_in",
    "remove_debris",
    "row_checksum",
    "segment_dir",
    "snapshot",
    "sqlite_error",
    "sync_record",
    "transaction",
    "watch_record",
    "write_manifest",
    "write_record",
    "write_segment",
]

FORMAT = "neardup-store"
VERSION = 4
PREVIOUS_VERSION = 3
"""The format a writer upgrades on open (:mod:`neardup.store.upgrade`): version 3 kept the
sketch postings (``postings``) and the per-host value counts (``host_values``) in SQLite."""
PREVIOUS_TABLES = ("postings", "host_values", "documents_url", "documents_id",
                   "documents_identical", "documents_shingle")
"""Tables and indexes of version 3: the lookups by value are key runs in the segments now
(neardup.store.keys)."""
MANIFEST = "manifest.json"
META = "meta.sqlite"
COMMITTED = "committed"
SEGMENTS = "segments"
SEGMENT_INDEX = "segment.json"
WRITER_LOCK = "lock"
READERS_LOCK = "readers.lock"

SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc INTEGER PRIMARY KEY, id TEXT, url TEXT, host TEXT, sweep TEXT, fetched TEXT,
    source TEXT, length INTEGER, text_chars INTEGER, tokens INTEGER,
    identical INTEGER, lexical INTEGER, shingle INTEGER, simhash INTEGER,
    cluster INTEGER NOT NULL, segment INTEGER, crc INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS documents_cluster ON documents(cluster);
CREATE INDEX IF NOT EXISTS documents_log ON documents(segment) WHERE segment IS NULL;
CREATE TABLE IF NOT EXISTS sketches (doc INTEGER PRIMARY KEY, modulus INTEGER, data BLOB,
    shingles BLOB, crc INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS host_pages (host INTEGER PRIMARY KEY, name TEXT NOT NULL,
    pages INTEGER NOT NULL, crc INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS counted (doc INTEGER PRIMARY KEY, crc INTEGER NOT NULL);
"""


ROW_COLUMNS = ("doc, id, url, host, sweep, fetched, source, length, text_chars, tokens, "
               "identical, lexical, shingle, simhash, cluster")
"""The columns of a document row its checksum (column ``crc``) covers, in order."""
ROW_FIELDS = tuple(name.strip() for name in ROW_COLUMNS.split(","))


def row_checksum(*values: object) -> int:
    """The checksum of a row's values (signed 64-bit, as SQLite stores it). Also registered
    in SQLite as ``neardup_crc`` so that an UPDATE can recompute it."""
    digest = xxhash.xxh3_64_intdigest(repr(values).encode())
    return digest - (1 << 64) if digest >= 1 << 63 else digest


def checked_rows(rows: list[tuple[Any, ...]], path: Path) -> list[tuple[Any, ...]]:
    """``rows`` (values then checksum) without their checksum, after checking each: a row
    that fails is refused with an error naming the file and the row."""
    out = []
    for row in rows:
        values = row[:-1]
        if row_checksum(*values) != row[-1]:
            raise CorruptDataError(f"{path}: row {values[0]!r} fails its checksum (damaged)")
        out.append(values)
    return out


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


def _write_atomic(path: Path, data: bytes) -> None:
    try:
        durable.write_atomic(path, data, path.with_name(f".{path.name}.tmp"))
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error


def write_manifest(root: Path, config: dict[str, Any], segments: list[SegmentEntry],
                   next_doc: int) -> None:
    body = {"format": FORMAT, "version": VERSION, "config": config, "next_doc": next_doc,
            "segments": [s.as_dict() for s in segments], "commit_record": COMMITTED}
    body["checksum"] = _body_checksum(body)
    _write_atomic(root / MANIFEST, (json.dumps(body, indent=1) + "\n").encode())


def _body_checksum(body: dict[str, Any]) -> str:
    fields = {key: value for key, value in body.items() if key != "checksum"}
    return xxhash.xxh3_64_hexdigest(json.dumps(fields, sort_keys=True).encode())


def read_manifest(root: Path, version: int = VERSION
                  ) -> tuple[dict[str, Any], list[SegmentEntry], int]:
    """(config, segments, next doc) of the store at ``root`` (of format ``version``);
    CorruptDataError names the file."""
    path = root / MANIFEST
    try:
        body = _manifest_body(path, version)
        segments = [SegmentEntry(**entry) for entry in body["segments"]]
        return body["config"], segments, int(body["next_doc"])
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CorruptDataError(f"{path}: truncated or corrupt ({error})") from error


def manifest_stamp(root: Path) -> tuple[int, int, int]:
    """What changes when the manifest is replaced (inode, size, modification time)."""
    path = root / MANIFEST
    try:
        found = path.stat()
    except OSError as error:
        raise CorruptDataError(f"{path}: {error.strerror or error}") from error
    return found.st_ino, found.st_size, found.st_mtime_ns


def record_expected(root: Path) -> bool:
    """Whether the manifest says the store keeps a commit record (stores written before the
    record existed do not, until their first flush)."""
    return _manifest_body(root / MANIFEST).get("commit_record") == COMMITTED


def manifest_version(root: Path) -> object:
    """The format version the manifest of ``root`` declares (None when it cannot be read:
    opening the store then names the cause)."""
    try:
        body = json.loads((root / MANIFEST).read_bytes())
    except (OSError, ValueError):
        return None
    return body.get("version") if isinstance(body, dict) else None


def _manifest_body(path: Path, version: int = VERSION) -> dict[str, Any]:
    """The manifest's fields, after checking its format, version and checksum."""
    try:
        body = json.loads(path.read_bytes())
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            raise CorruptDataError(f"{path}: not a neardup store manifest")
        if body.get("checksum") != _body_checksum(body):
            raise CorruptDataError(f"{path}: checksum mismatch (altered)")
        if body.get("version") == PREVIOUS_VERSION and version == VERSION:
            raise StoreError(f"{path}: store format version {PREVIOUS_VERSION}; a writer "
                             f"upgrades it to version {VERSION} when it opens the store "
                             f"(for example `neardup compact {path.parent}`), then readers "
                             "can open it")
        if body.get("version") != version:
            raise CorruptDataError(f"{path}: store format version {body.get('version')!r}, "
                                   f"this neardup reads version {version}")
        return body
    except FileNotFoundError as error:
        raise CorruptDataError(f"{path}: missing (not a neardup store)") from error
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CorruptDataError(f"{path}: truncated or corrupt ({error})") from error


@dataclass(frozen=True, slots=True)
class CommitRecord:
    """What the store has committed: write transactions and documents."""

    commits: int
    documents: int


RECORD_MAGIC = b"ndcommit"
RECORD = struct.Struct("<8sQQQ")
"""A slot of the commit record: magic, commits, documents, xxh3 of the three."""
RECORD_SLOT = 64


def _record_bytes(record: CommitRecord) -> bytes:
    body = struct.pack("<8sQQ", RECORD_MAGIC, record.commits, record.documents)
    return RECORD.pack(RECORD_MAGIC, record.commits, record.documents,
                       xxhash.xxh3_64_intdigest(body)).ljust(RECORD_SLOT, b"\0")


def _record_of(slot: bytes) -> CommitRecord | None:
    if len(slot) < RECORD.size:
        return None
    magic, commits, documents, checksum = RECORD.unpack_from(slot)
    body = struct.pack("<8sQQ", magic, commits, documents)
    if magic != RECORD_MAGIC or xxhash.xxh3_64_intdigest(body) != checksum:
        return None
    return CommitRecord(commits, documents)


def open_record(root: Path) -> int:
    """The commit record opened for writing (created if absent)."""
    path = root / COMMITTED
    try:
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error


def write_record(descriptor: int, root: Path, record: CommitRecord) -> None:
    """Write ``record`` into the slot of its parity, after its transaction has committed. The
    other slot keeps the previous commit, so a torn write (or a reader racing the writer) finds
    at least one whole slot, never a record ahead of the database. It is not synced, like the
    WAL's commits (SQLite ``synchronous=NORMAL``): both survive a killed process and are
    synced together when the store flushes or closes."""
    try:
        written = os.pwrite(descriptor, _record_bytes(record), RECORD_SLOT * (record.commits % 2))
        if written != RECORD_SLOT:
            raise OSError(f"short write ({written} of {RECORD_SLOT} bytes)")
    except OSError as error:
        raise OutputError(f"{root / COMMITTED}: {getattr(error, 'strerror', None) or error}") \
            from error


def watch_record(root: Path) -> int | None:
    """The commit record opened for reading (None if the store has none yet)."""
    try:
        return os.open(root / COMMITTED, os.O_RDONLY)
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OutputError(f"{root / COMMITTED}: {error.strerror or error}") from error


def sync_record(descriptor: int, root: Path) -> None:
    """Flush the commit record to the device (with the store's other files, at a flush)."""
    try:
        os.fsync(descriptor)
    except OSError as error:
        raise OutputError(f"{root / COMMITTED}: {error.strerror or error}") from error


def read_record(root: Path, descriptor: int | None = None) -> CommitRecord | None:
    """The latest whole slot of the commit record; None if the store has none; CorruptDataError
    naming the file if neither slot is whole. ``descriptor``: the record already opened
    (:func:`watch_record`), read in one call (the writer rewrites its slots in place)."""
    data = record_bytes(root, descriptor)
    return None if data is None else record_in(root, data)


def record_bytes(root: Path, descriptor: int | None = None) -> bytes | None:
    """The commit record's bytes as they are (None if the store has none), for
    :func:`record_in`; ``descriptor`` as for :func:`read_record`."""
    path = root / COMMITTED
    try:
        return (path.read_bytes() if descriptor is None else
                os.pread(descriptor, 2 * RECORD_SLOT, 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error


def record_in(root: Path, data: bytes) -> CommitRecord:
    """The latest whole slot of a commit record's bytes (CorruptDataError if none is whole)."""
    path = root / COMMITTED
    slots = [_record_of(data[start:start + RECORD_SLOT]) for start in (0, RECORD_SLOT)]
    whole = [slot for slot in slots if slot is not None]
    if not whole:
        raise CorruptDataError(f"{path}: {len(data)} bytes, no whole commit record "
                               "(truncated or damaged)")
    return max(whole, key=lambda slot: slot.commits)


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
                durable.sync(out)
            listing[key] = {"file": path.name, "dtype": array.dtype.str,
                            "shape": list(array.shape), "bytes": path.stat().st_size,
                            "checksum": _checksum(path)}
        index = (json.dumps(listing, indent=1) + "\n").encode()
        _write_atomic(temporary / SEGMENT_INDEX, index)
        os.replace(temporary, final)
        durable.sync_dir(final.parent)
    except OSError as error:
        shutil.rmtree(temporary, ignore_errors=True)
        raise OutputError(f"{final}: write failed ({error.strerror or error}); the segment "
                          "was not added, its documents stay in the log") from error
    return len(index), xxhash.xxh3_64_hexdigest(index)


def _load_array(path: Path, entry: dict[str, Any], verify: bool) -> npt.NDArray[Any]:
    try:
        size = path.stat().st_size
        if size != entry["bytes"]:
            raise CorruptDataError(f"{path}: {size} bytes, expected "
                                   f"{entry['bytes']} (truncated or altered)")
        if verify and _checksum(path) != entry["checksum"]:
            raise CorruptDataError(f"{path}: checksum mismatch (altered)")
        # a plain view of the mapping: slicing a memmap costs a subclass wrapper each time
        array: npt.NDArray[Any] = np.load(path, mmap_mode="r", allow_pickle=False
                                          ).view(np.ndarray)
    except FileNotFoundError as error:
        raise CorruptDataError(f"{path}: missing") from error
    except NeardupError:
        raise
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error
    except Exception as error:  # numpy reports a damaged header with many exception types
        raise CorruptDataError(f"{path}: unreadable array ({type(error).__name__}: "
                               f"{error})") from error
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
    try:
        listing = json.loads(index)
        items = [(key, directory / Path(item["file"]).name, item) for key, item in listing.items()]
    except (ValueError, KeyError, TypeError, AttributeError) as error:
        raise CorruptDataError(f"{index_path}: unreadable ({error})") from error
    return {key: _load_array(path, item, verify) for key, path, item in items}


@contextmanager
def readers_sharing(root: Path) -> Iterator[None]:
    """Hold the readers' lock shared while mapping the segments the manifest names: a writer
    removes no segment until it can take this lock exclusively (a mapped file outlives its
    removal, so a reader needs the lock only while it opens the files)."""
    path = root / READERS_LOCK
    try:
        descriptor = os.open(path, os.O_RDONLY if path.exists() else os.O_RDWR | os.O_CREAT,
                             0o644)
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from error
    try:
        fcntl.flock(descriptor, fcntl.LOCK_SH)
        yield
    finally:
        os.close(descriptor)


def remove_debris(root: Path, segments: list[SegmentEntry]) -> list[str]:
    """Remove segment directories the manifest does not name (interrupted writes, segments
    merged away), but only when no reader is opening segments; otherwise leave them for a later
    call. Returns the names removed."""
    base = root / SEGMENTS
    try:
        descriptor = os.open(root / READERS_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise OutputError(f"{root / READERS_LOCK}: {error.strerror or error}") from error
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(descriptor)
        return []
    try:
        named = {s.name for s in segments}
        removed = []
        try:
            children = sorted(base.iterdir()) if base.exists() else []
        except OSError as error:
            raise CorruptDataError(f"{base}: {error.strerror or error} (the store's segment "
                                   "folder is damaged)") from error
        for child in children:
            if child.name not in named:
                shutil.rmtree(child, ignore_errors=True)
                removed.append(child.name)
        for leftover in root.glob(f".{MANIFEST}.tmp"):
            leftover.unlink(missing_ok=True)
        return removed
    finally:
        os.close(descriptor)


WRITER_CACHE_KIB = 128 * 1024
"""The writer's SQLite page cache. A transaction dirtying more pages than the cache holds
spills them to the WAL before it commits, and writes a page again each time it is dirtied after
a spill: with SQLite's default 2 MiB, an add of 5,000 documents wrote each page several times."""

READER_MMAP_BYTES = 1 << 31
"""How much of the metadata database a read-only connection maps instead of reading page by
page (SQLite's own ceiling): a query's few random rows cost a system call per page otherwise,
about half of fetching them. An I/O error on a mapped page kills the process (SIGBUS) where a
read returns an error: a reader, which holds nothing unsaved, takes that risk for speed; the
writer does not."""


def connect_meta(root: Path, read_only: bool = False) -> sqlite3.Connection:
    """The metadata database in WAL mode (committed inserts survive a killed process). The
    connection is in autocommit mode: writes go through :func:`transaction`."""
    path = root / META
    try:
        connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        connection.create_function("neardup_crc", len(ROW_FIELDS), row_checksum,
                                   deterministic=True)
        if read_only:
            connection.execute(f"PRAGMA mmap_size={READER_MMAP_BYTES}")
        else:
            connection.execute(f"PRAGMA cache_size=-{WRITER_CACHE_KIB}")
            connection.executescript(SCHEMA)
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as error:
        raise sqlite_error(path, error) from error
    return connection


def drop_previous_tables(db: sqlite3.Connection, path: Path) -> None:
    """Drop the tables and indexes of format version 3 an upgrade left behind (a writer does,
    once the manifest says version 4: until then they are what the old store reads)."""
    try:
        found = dict(db.execute("SELECT name, type FROM sqlite_master"))
        for name in PREVIOUS_TABLES:
            if found.get(name) in ("table", "index"):
                db.execute(f"DROP {str(found[name]).upper()} {name}")
    except sqlite3.Error as error:
        raise sqlite_error(path, error) from error


def sqlite_error(path: Path, error: sqlite3.Error) -> NeardupError:
    """The neardup error for an SQLite failure on ``path``: CorruptDataError for a damaged
    file, OutputError for the rest (a full disk, an I/O error, a lock)."""
    text = str(error)
    name = getattr(error, "sqlite_errorname", "")
    if name.startswith("SQLITE_IOERR"):
        text = f"{text} ({name}: a write failed: a full disk, a file size limit or a device error)"
    if "disk is full" in text or (isinstance(error, sqlite3.OperationalError) \
            and "malformed" not in text and "not a database" not in text):
        return OutputError(f"{path}: {text}")
    return CorruptDataError(f"{path}: {text} (damaged)")


@contextmanager
def snapshot(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """A read transaction: every SELECT inside sees the same committed state."""
    db.execute("BEGIN")
    try:
        yield db
    finally:
        if db.in_transaction:
            db.execute("COMMIT")


@contextmanager
def transaction(db: sqlite3.Connection, path: Path) -> Iterator[sqlite3.Connection]:
    """BEGIN IMMEDIATE ... COMMIT: everything inside commits together or not at all. An SQLite
    or OS failure rolls back and is raised as a NeardupError naming ``path``."""
    try:
        db.execute("BEGIN IMMEDIATE")
    except sqlite3.Error as error:
        raise sqlite_error(path, error) from error
    try:
        yield db
        db.execute("COMMIT")
    except BaseException as error:
        if db.in_transaction:
            with suppress(sqlite3.Error):    # SQLite may have rolled back already
                db.execute("ROLLBACK")
        undone = "; nothing of this transaction was stored"
        if isinstance(error, sqlite3.Error):
            raise type(sqlite_error(path, error))(f"{sqlite_error(path, error)}{undone}") \
                from error
        if isinstance(error, OSError):
            raise OutputError(f"{path}: {error.strerror or error}{undone}") from error
        raise
