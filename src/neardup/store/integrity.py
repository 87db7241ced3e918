"""Cross-checks between a store's SQLite rows and its manifest, run when a store is opened.

The manifest names the segments and the documents each holds; SQLite holds one row per document
and the document counter, written in the same transaction as the rows. A truncated database, a
damaged WAL or a manifest from another store shows up as a disagreement, refused with an error
naming both files rather than opened as a store with fewer documents.

Each write transaction also counts itself (counter ``commits``) and, once committed, is written
to the commit record beside the database (:func:`neardup.store.formats.write_record`). SQLite
replays a WAL up to its first damaged frame and silently drops the rest; the record, read before
the database, says how many transactions the store had committed, so lost WAL frames show up as
a database behind its record, even for rows no segment holds yet.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from neardup.errors import CorruptDataError
from neardup.store import formats

__all__ = ["checked_commits", "checked_next_doc", "stored_counter"]


def stored_counter(db: sqlite3.Connection, name: str = "next_doc") -> int | None:
    """A counter the last committed add wrote (None in a store without one): ``next_doc``,
    the document counter, or ``commits``, the number of write transactions."""
    try:
        row = db.execute("SELECT value FROM counters WHERE name=?", (name,)).fetchone()
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):
            return None
        raise
    return None if row is None else int(row[0])


def checked_next_doc(db: sqlite3.Connection, root: Path,
                     segments: list[formats.SegmentEntry], manifest_next: int) -> int:
    """The next document number, after checking that the rows and the manifest agree: rows
    numbered 0..n-1 without a gap, as many as the counter says, at least as many as the manifest
    names, and, in each segment's span, as many indexed rows as the segment holds."""
    count, top = db.execute("SELECT count(*), coalesce(max(doc), -1) FROM documents").fetchone()
    counter = stored_counter(db)
    names = f"{root / formats.META} and {root / formats.MANIFEST} disagree"
    if count != top + 1:
        raise CorruptDataError(f"{root / formats.META}: {count} document rows numbered up to "
                               f"{top} (rows lost: truncated or damaged)")
    if counter is not None and counter != count:
        raise CorruptDataError(f"{root / formats.META}: the document counter says {counter}, "
                               f"the table holds {count} rows (damaged)")
    if count < manifest_next:
        raise CorruptDataError(f"{names}: the manifest names {manifest_next} documents, the "
                               f"database holds {count} (truncated, or a damaged WAL)")
    for entry in segments:
        indexed = db.execute("SELECT count(*) FROM documents WHERE doc BETWEEN ? AND ? "
                             "AND tokens > 0", (entry.first, entry.last)).fetchone()[0]
        if indexed != entry.count:
            raise CorruptDataError(f"{names}: segment {entry.name} holds {entry.count} "
                                   f"fingerprints of documents {entry.first}..{entry.last}, "
                                   f"the database {indexed}")
    return int(count)


def read_record(root: Path) -> formats.CommitRecord | None:
    """The store's commit record, to be read before the database; CorruptDataError naming it
    if the manifest says the store keeps one and it is missing."""
    record = formats.read_record(root)
    if record is None and formats.record_expected(root):
        raise CorruptDataError(f"{root / formats.COMMITTED}: missing (the manifest says this "
                               "store records its commits)")
    return record


def checked_commits(db: sqlite3.Connection, root: Path,
                    record: formats.CommitRecord | None) -> int:
    """The number of committed write transactions, after checking that the database holds
    every one the record (read before it) says were committed (checked first: a WAL lost
    whole can leave a database without tables)."""
    commits = stored_counter(db, "commits") or 0
    documents = stored_counter(db) or 0
    if record is None:
        return commits
    if commits < record.commits or documents < record.documents:   # ahead is no loss
        meta = root / formats.META
        wal = meta.with_name(f"{meta.name}-wal")
        where = wal if wal.exists() else f"{meta} (its WAL {wal.name} is missing)"
        raise CorruptDataError(
            f"{where}: committed data lost: {root / formats.COMMITTED} records {record.commits} "
            f"commits and {record.documents} documents, the database holds {commits} commits "
            f"and {documents} documents (a damaged or lost WAL; the store is refused rather "
            "than opened smaller)")
    return commits
