"""Rows of the store's metadata and the report of an add."""

from __future__ import annotations

import functools
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neardup._types import I64
from neardup.errors import NeardupError, SourceError
from neardup.features.shingles import distinct
from neardup.methods.prints import DocumentPrints
from neardup.store.formats import ROW_COLUMNS, ROW_FIELDS, checked_rows, row_checksum
from neardup.store.printer import features_of

__all__ = [
    "IDENTICAL",
    "INSERT_DOCUMENT",
    "SIMHASH",
    "AddReport",
    "document_dict",
    "document_row",
    "documents_in",
    "documents_where",
    "select_in",
    "signed",
    "sketch_rows",
    "unsigned",
]



SQL_VARIABLES = 900
"""Values bound per statement: below SQLite's smallest limit on host parameters (999)."""


def select_in(db: sqlite3.Connection, query: str, values: list[int] | list[str],
              leading: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """The rows of ``query`` (whose ``{marks}`` stands for the values' placeholders) over
    ``values``, a few hundred values per statement; ``leading`` binds the placeholders before
    ``{marks}`` (bound, not written into the text, so that SQLite's statement cache serves
    every call of one shape)."""
    if len(values) <= SQL_VARIABLES:                  # the usual case: one statement
        return db.execute(_statement(query, len(values)), (*leading, *values)).fetchall()
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(values), SQL_VARIABLES):
        chunk = values[start:start + SQL_VARIABLES]
        rows += db.execute(_statement(query, len(chunk)), (*leading, *chunk)).fetchall()
    return rows


@functools.lru_cache(maxsize=256)
def _statement(query: str, count: int) -> str:
    """``query`` with ``count`` placeholders for its ``{marks}``."""
    return query.format(marks=",".join("?" * count))


INSERT_DOCUMENT = f"INSERT INTO documents ({ROW_COLUMNS}, crc) VALUES ({','.join('?' * 16)})"


def documents_where(db: sqlite3.Connection, path: Path, where: str,
                    values: tuple[object, ...] = ()) -> list[tuple[Any, ...]]:
    """Document rows (the columns of ``ROW_COLUMNS``) matching ``where``, each checked against
    its checksum (CorruptDataError naming ``path`` if one fails)."""
    rows = db.execute(f"SELECT {ROW_COLUMNS}, crc FROM documents WHERE {where}",
                      values).fetchall()
    return checked_rows(rows, path)


def documents_in(db: sqlite3.Connection, path: Path, column: str,
                 values: list[int] | list[str]) -> list[tuple[Any, ...]]:
    """Checked document rows whose ``column`` is one of ``values``."""
    rows = select_in(db, f"SELECT {ROW_COLUMNS}, crc FROM documents WHERE {column} "
                         "IN ({marks})", values)
    return checked_rows(rows, path)


def signed(value: int) -> int:
    """A 64-bit unsigned hash as the signed integer SQLite stores."""
    return value - (1 << 64) if value >= 1 << 63 else value


def unsigned(value: int) -> int:
    return value + (1 << 64) if value < 0 else value


def document_row(doc: int, p: DocumentPrints, sweep: str | None,
                 cluster: int) -> tuple[object, ...]:
    values = (doc, p.id, p.url, p.host, sweep, p.fetched, p.source, p.length, p.text_chars,
              p.tokens, signed(p.identical), signed(p.lexical), signed(p.shingle),
              signed(p.simhash), cluster)
    return (*values, row_checksum(*values))


@dataclass(slots=True)
class AddReport:
    """What an add did: documents added, documents already stored (same id, byte-identical:
    not stored again), how many had a near-copy already stored or earlier in the same add, and
    the documents added (first and last number). ``outcomes``, when asked for, lists each
    document in input order as (id, doc number, already stored). ``warnings`` lists what
    failed after documents were committed (the automatic flush, the commit record): the
    documents it reports added are stored all the same."""

    added: int = 0
    already_stored: int = 0
    empty: int = 0
    matched_stored: int = 0
    matched_in_batch: int = 0
    first_doc: int | None = None
    last_doc: int | None = None
    seconds: dict[str, float] = field(default_factory=dict)
    outcomes: list[tuple[str, int, bool]] | None = None
    warnings: list[str] = field(default_factory=list)

    def already(self, outcomes: list[tuple[str, int, bool]]) -> None:
        """Count the documents of a committed batch found already stored (and list every
        document's outcome when asked to)."""
        self.already_stored += sum(stored for _, _, stored in outcomes)
        if self.outcomes is not None:
            self.outcomes += outcomes

    def count(self, batch: list[DocumentPrints], matched: I64, a: I64, b: I64,
              docs: I64) -> None:
        self.added += len(batch)
        self.empty += sum(p.tokens == 0 for p in batch)
        self.matched_stored += int(distinct(matched).size)
        self.matched_in_batch += int(distinct(b).size)
        if docs.size:
            self.first_doc = int(docs[0]) if self.first_doc is None else self.first_doc
            self.last_doc = int(docs[-1])

    def after(self, error: NeardupError) -> NeardupError:
        """``error``, of the same kind, saying what the add had committed before it."""
        done = (f"before it, this add committed {self.added} documents ({self.first_doc}.."
                f"{self.last_doc}) and found {self.already_stored} already stored")
        if isinstance(error, SourceError):
            return SourceError(error.path, f"{error.cause}; {done}")
        try:
            return type(error)(f"{error}; {done}")
        except TypeError:                     # an error class with another signature
            return NeardupError(f"{error}; {done}")

    def as_dict(self) -> dict[str, object]:
        return {"added": self.added, "already_stored": self.already_stored, "empty": self.empty,
                "matched_stored": self.matched_stored,
                "matched_in_batch": self.matched_in_batch, "first_doc": self.first_doc,
                "last_doc": self.last_doc, "warnings": list(self.warnings)}


IDENTICAL = ROW_FIELDS.index("identical")
SIMHASH = ROW_FIELDS.index("simhash")


def sketch_rows(docs: I64,
                 batch: list[DocumentPrints]) -> list[tuple[int, int, bytes, bytes | None, int]]:
    rows = []
    for doc, prints in zip(docs.tolist(), batch, strict=True):
        features = features_of(prints)
        if features is not None:
            shingles = (None if features.shingles is None
                        else features.shingles.astype("<u8").tobytes())
            row = (doc, features.modulus, features.sketch.astype("<u8").tobytes(), shingles)
            rows.append((*row, row_checksum(*row)))
    return rows


def document_dict(row: tuple[object, ...]) -> dict[str, object]:
    values = dict(zip(ROW_FIELDS, row, strict=True))
    for name in ("identical", "lexical", "shingle", "simhash"):
        value = values[name]
        assert isinstance(value, int)
        values[name] = f"{unsigned(value):016x}"
    return values
