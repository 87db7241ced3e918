"""Upgrading a store of format version 3 to version 4, done by a writer when it opens one.

Version 3 kept the sketch postings (``postings``), the per-host value counts (``host_values``)
and indexes on the documents' hashes, URLs and ids in ``meta.sqlite``; version 4 keeps them in
the segments, as sorted postings, tallies and key runs (:mod:`neardup.store.postings`,
:mod:`neardup.store.tallies`, :mod:`neardup.store.keys`). The
upgrade derives them from checked rows and never changes the version-3 data until the end:

1. under the writer lock, read the version-3 manifest and cross-check it with the rows;
2. write each segment again under a new name, its arrays (re-read, checksums verified) plus
   its postings, built from the ``sketches`` rows of its documents, and its key runs, from
   their document rows (:mod:`neardup.store.keys`); the documents of the
   insert log become one more segment (a flush), so that the log is empty afterwards;
3. put the whole ``host_values`` table (each row checked) into the last segment's tally: a
   count is the sum of its key over every tally, so where a count sits does not matter;
4. replace the manifest (version 4, the new segments): the commit point.

Every file goes to a temporary name, is synced and renamed; the manifest last. A process
killed before step 4 leaves the version-3 store untouched (the new folders are debris, removed
later); after it, a version-4 store whose old folders and old tables are removed by the next
writer to open it (:func:`neardup.store.formats.drop_previous_tables`). The upgrade reads the
store once and writes its segments once, and it is one-way: an older neardup cannot open the
store afterwards.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.errors import CorruptDataError
from neardup.index.segmented import HammingIndex
from neardup.store import formats
from neardup.store.collection import next_segment_name, segment_arrays, writer_lock
from neardup.store.integrity import checked_next_doc
from neardup.store.keys import KEYS, key_arrays, row_keys
from neardup.store.postings import POSTING_ARRAYS, Run, sketch_postings, sorted_run
from neardup.store.records import SIMHASH, documents_where
from neardup.store.settings import config_from_dict, plans
from neardup.store.tallies import TALLY_ARRAYS, Tally, empty_tally, summed

__all__ = ["upgrade_if_previous", "upgrade_store", "value_checksums"]


def upgrade_if_previous(root: Path) -> bool:
    """Upgrade the store at ``root`` if its manifest says version 3; returns whether it did."""
    if formats.manifest_version(root) != formats.PREVIOUS_VERSION:
        return False
    lock = writer_lock(root)
    try:
        if formats.manifest_version(root) != formats.PREVIOUS_VERSION:
            return False                        # another writer upgraded it meanwhile
        upgrade_store(root)
        return True
    finally:
        os.close(lock)


def upgrade_store(root: Path) -> None:
    """Rewrite the version-3 store at ``root`` as version 4 (the caller holds the writer
    lock). Steps and crash safety: see the module docstring."""
    stored, segments, manifest_next = formats.read_manifest(root, formats.PREVIOUS_VERSION)
    try:
        config = config_from_dict(stored)
    except (KeyError, TypeError, ValueError) as error:
        raise CorruptDataError(f"{root / formats.MANIFEST}: unreadable config ({error})") \
            from error
    path = root / formats.META
    db = formats.connect_meta(root, read_only=True)
    try:
        with formats.snapshot(db):
            count = checked_next_doc(db, root, segments, manifest_next)
            parts = [_old_segment(root, db, entry) for entry in segments]
            log = _log_segment(db, path, segments, count, config)
            counts = _previous_counts(db, path)
    except sqlite3.Error as error:
        raise formats.sqlite_error(path, error) from error
    finally:
        db.close()
    if log is not None:
        parts.append(log)
    if tally_rows(counts) and not parts:
        raise CorruptDataError(f"{path}: table host_values holds counts, but no document is "
                               "indexed (damaged)")
    written: list[formats.SegmentEntry] = []
    for number, (span, arrays) in enumerate(parts):
        if number == len(parts) - 1:
            arrays.update(zip(TALLY_ARRAYS, counts, strict=True))
        written.append(_write(root, written, span, arrays))
    formats.write_manifest(root, stored, written, count)


def tally_rows(tally: Tally) -> int:
    return int(tally[0].size)


Part = tuple[tuple[int, int], dict[str, npt.NDArray[Any]]]
"""A segment to write: its span (first, last document) and its arrays."""


def _write(root: Path, written: list[formats.SegmentEntry], span: tuple[int, int],
           arrays: dict[str, npt.NDArray[Any]]) -> formats.SegmentEntry:
    name = next_segment_name(root, written)
    size, checksum = formats.write_segment(root, name, arrays)
    return formats.SegmentEntry(name, span[0], span[1], len(arrays["fingerprints"]), size,
                                checksum)


def _postings(db: sqlite3.Connection, path: Path, first: int, last: int) -> Run:
    """The sorted postings of the sketch rows of documents ``first..last``, each checked."""
    rows = formats.checked_rows(db.execute(
        "SELECT doc, modulus, data, shingles, crc FROM sketches WHERE doc BETWEEN ? AND ? "
        "ORDER BY doc", (first, last)).fetchall(), path)
    return sorted_run(*sketch_postings(rows))


def _keys(db: sqlite3.Connection, path: Path, first: int, last: int) -> dict[str, Run]:
    """The key runs of the rows of documents ``first..last``, each checked."""
    return row_keys(documents_where(db, path, "doc BETWEEN ? AND ? ORDER BY doc",
                                    (first, last)))


def _with_postings(arrays: dict[str, npt.NDArray[Any]], run: Run,
                   keys: dict[str, Run]) -> dict[str, npt.NDArray[Any]]:
    arrays.update(zip(POSTING_ARRAYS, run, strict=True))
    arrays.update(zip(TALLY_ARRAYS, empty_tally(), strict=True))
    for name in KEYS:
        arrays.update(zip(key_arrays(name), keys[name], strict=True))
    return arrays


def _old_segment(root: Path, db: sqlite3.Connection, entry: formats.SegmentEntry) -> Part:
    """A version-3 segment's arrays (checksums verified) with its postings added."""
    arrays = {key: np.asarray(array) for key, array in
              formats.read_segment(root, entry, verify=True).items()}
    if "fingerprints" not in arrays:
        raise CorruptDataError(f"{formats.segment_dir(root, entry.name)}: no fingerprints")
    path = root / formats.META
    run = _postings(db, path, entry.first, entry.last)
    keys = _keys(db, path, entry.first, entry.last)
    return (entry.first, entry.last), _with_postings(arrays, run, keys)


def _log_segment(db: sqlite3.Connection, path: Path, segments: list[formats.SegmentEntry],
                 count: int, config: Any) -> Part | None:
    """The insert log as a segment (as a flush writes it); None if no document is indexed."""
    first = segments[-1].last + 1 if segments else 0
    rows = documents_where(db, path, "doc >= ? AND tokens > 0 ORDER BY doc", (first,))
    if not rows:
        return None
    index = HammingIndex(plans(config), config.max_k, [])
    fps: U64 = np.array([r[SIMHASH] for r in rows], dtype=np.int64).view(np.uint64)
    docs: I64 = np.array([r[0] for r in rows], dtype=np.int64)
    index.add(fps, docs)
    segment = index.freeze()
    assert segment is not None
    run = _postings(db, path, first, count - 1)
    keys = _keys(db, path, first, count - 1)
    return (first, count - 1), segment_arrays(segment, run, empty_tally(), keys,
                                              config.compress)


def _previous_counts(db: sqlite3.Connection, path: Path) -> Tally:
    """Every row of version 3's ``host_values``, checked, as one tally."""
    rows = db.execute("SELECT host, kind, value, pages, crc FROM host_values").fetchall()
    table = np.array(rows, dtype=np.int64).reshape(-1, 5)
    bad = np.flatnonzero(value_checksums(*table[:, :4].T) != table[:, 4])
    if bad.size:
        raise CorruptDataError(f"{path}: table host_values, row "
                               f"{tuple(table[bad[0], :4].tolist())!r} fails its checksum "
                               "(damaged)")
    return summed([(table[:, 0].copy(), table[:, 1].copy(), table[:, 2].copy(),
                    table[:, 3].copy())])


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: U64) -> U64:
    """SplitMix64's finalizer, elementwise (wrapping arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: U64 = x ^ (x >> np.uint64(31))
    return mixed


def value_checksums(host: npt.ArrayLike, kind: npt.ArrayLike, value: npt.ArrayLike,
                    pages: npt.ArrayLike) -> I64:
    """The checksums version 3 gave its ``host_values`` rows (SplitMix64 rounds over the row's
    four integers; arguments broadcast)."""
    columns = np.broadcast_arrays(*(np.asarray(c, dtype=np.int64) for c in
                                    (host, kind, value, pages)))
    digest = np.full(columns[0].shape, 0x686F7374, dtype=np.uint64)  # "host"
    with np.errstate(over="ignore"):
        for column in columns:
            digest = _mix(digest ^ column.view(np.uint64))
    return digest.view(np.int64)
