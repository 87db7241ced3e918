"""Cross-checks between a store's SQLite rows and its manifest, run when a store is opened.

The manifest names the segments and the documents each holds; SQLite holds one row per document
and the document counter, written in the same transaction as the rows. A truncated database, a
damaged WAL or a manifest from another store shows up as a disagreement, refused with an error
naming both files rather than opened as a store with fewer documents.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from neardup.errors import CorruptDataError
from neardup.store import formats

__all__ = ["checked_next_doc", "stored_counter"]


def stored_counter(db: sqlite3.Connection) -> int | None:
    """The document counter the last committed add wrote (None in a store without one)."""
    try:
        row = db.execute("SELECT value FROM counters WHERE name='next_doc'").fetchone()
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
