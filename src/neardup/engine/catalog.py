"""Stage 2, link: number the documents and link revisits to what they repeat.

After fingerprinting, the partitions are taken in input order (split, then chunk). A revisit is
linked to the first non-revisit document with the id it refers to (anywhere in the run, as the
in-memory path does); a revisit whose original is absent is dropped and counted. Document
numbers (``doc``) then count the remaining documents in input order, whatever the number of
workers or partitions.

The stage writes, per partition, ``link/<partition>.npy``: one row per numbered document with the
columns the later stages need (:data:`COLUMNS`), a revisit carrying the hashes and lengths of its
original; and ``link/catalog.json``: each partition's first doc number and dropped rows. A run
comparing two views of a page writes the columns of the article views as well, in
``link/article/``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from neardup._types import I64
from neardup.engine.arrayrows import read_rows
from neardup.engine.partition import ARTICLE, read_meta
from neardup.engine.workdir import WorkDir, read_array, write_array, write_atomic
from neardup.sources.columns import numbers_of, string_array

__all__ = ["COLUMNS", "Catalog", "Part", "build_catalog", "load_catalog"]

STAGE = "link"
COLUMNS = np.dtype([("identical", "<u8"), ("lexical", "<u8"), ("shingle", "<u8"),
                    ("simhash", "<u8"), ("tokens", "<i8"), ("text_chars", "<i8"),
                    ("length", "<i8"), ("revisit_of", "<i8")])
_COPIED = ("identical", "lexical", "shingle", "simhash", "tokens", "text_chars", "length")


@dataclass(frozen=True, slots=True)
class Part:
    """One fingerprint partition: its folder, its first doc number, its rows kept."""

    name: str
    folder: Path
    start: int
    rows: int
    dropped: tuple[int, ...]

    @property
    def count(self) -> int:
        return self.rows - len(self.dropped)

    def kept_rows(self) -> I64:
        """The row numbers not dropped, ascending (a mask: ``np.setdiff1d`` imports numpy.ma,
        0.06 s of a one-document run)."""
        keep = np.ones(self.rows, dtype=bool)
        dropped = np.array(self.dropped, dtype=np.int64)
        keep[dropped[(dropped >= 0) & (dropped < self.rows)]] = False
        return np.flatnonzero(keep).astype(np.int64, copy=False)

    def kept_meta(self, columns: list[str]) -> pa.Table:
        """The meta columns of the kept rows; read as they are when no row was dropped
        (``Table.take`` imports pyarrow.compute: 0.09 s of a one-document run)."""
        meta = read_meta(self.folder, columns)
        return meta.take(self.kept_rows()) if self.dropped else meta


@dataclass(frozen=True, slots=True)
class Catalog:
    """The numbered partitions of a run."""

    parts: tuple[Part, ...]
    documents: int
    revisits_linked: int
    revisits_without_original: int
    columns_dir: Path

    def columns(self, part: Part) -> npt.NDArray[Any]:
        return read_array(self.columns_dir / f"{part.name}.npy")

    def column_rows(self, part: Part, local: I64) -> npt.NDArray[Any]:
        """The columns of rows ``local`` (among the part's kept rows) alone."""
        return read_rows(self.columns_dir / f"{part.name}.npy", local)

    def starts(self) -> I64:
        return np.array([part.start for part in self.parts], dtype=np.int64)

    @property
    def has_article(self) -> bool:
        """Whether the partitions hold article views (a run comparing two views of a page)."""
        return bool(self.parts) and (self.parts[0].folder / ARTICLE).is_dir()

    def article(self) -> Catalog:
        """The same documents, numbered alike, seen through their article views: each
        partition's ``article/`` folder, with its own columns."""
        return Catalog(tuple(dataclasses.replace(part, folder=part.folder / ARTICLE)
                             for part in self.parts),
                       self.documents, self.revisits_linked, self.revisits_without_original,
                       self.columns_dir / ARTICLE)

    def locate(self, docs: I64) -> tuple[I64, I64]:
        """(partition index, row among its kept rows) of each doc number."""
        which = np.searchsorted(self.starts(), docs, side="right") - 1
        return which.astype(np.int64), docs - self.starts()[which]


def _revisit_rows(parts: list[tuple[str, Path, int]]) -> list[tuple[int, int, str]]:
    found = []
    for index, (_, folder, _) in enumerate(parts):
        column = read_meta(folder, ["revisit_of"]).column("revisit_of")
        if column.null_count == len(column):  # no revisit (is_valid imports pyarrow.compute)
            continue
        for row in np.flatnonzero(numbers_of(column.is_valid())).tolist():
            found.append((index, row, column[row].as_py()))
    return found


def _originals(parts: list[tuple[str, Path, int]], targets: set[str]) -> dict[str, tuple[int, int]]:
    """The first non-revisit (partition, row) of each target id."""
    first: dict[str, tuple[int, int]] = {}
    wanted = sorted(targets)
    if not wanted:
        return first
    import pyarrow.compute as pc  # here: its import costs a one-document run 0.06 s

    for index, (_, folder, _) in enumerate(parts):
        meta = read_meta(folder, ["id", "revisit_of"])
        hits = pc.and_(pc.is_in(meta.column("id"), value_set=string_array(wanted)),
                       pc.is_null(meta.column("revisit_of")))
        for row in np.flatnonzero(numbers_of(hits)).tolist():
            first.setdefault(meta.column("id")[row].as_py(), (index, row))
    return first



def _columns_of(folder: Path, rows: int) -> npt.NDArray[Any]:
    meta = read_meta(folder, list(_COPIED))
    out = np.zeros(rows, dtype=COLUMNS)
    for name in _COPIED:
        out[name] = numbers_of(meta.column(name))
    out["revisit_of"] = -1
    return out


def build_catalog(work: WorkDir, partitions: list[tuple[str, Path, int]]) -> Catalog:
    """Link revisits, number the documents and write the per-partition columns."""
    if (record := work.done(STAGE)) is not None:
        return load_catalog(work, record)
    revisits = _revisit_rows(partitions)
    originals = _originals(partitions, {target for _, _, target in revisits})
    dropped: dict[int, list[int]] = {}
    for index, row, target in revisits:
        if target not in originals:
            dropped.setdefault(index, []).append(row)
    parts, start = [], 0
    for index, (name, folder, rows) in enumerate(partitions):
        part = Part(name, folder, start, rows, tuple(dropped.get(index, ())))
        parts.append(part)
        start += part.count
    catalog = Catalog(tuple(parts), start, len(revisits) - sum(map(len, dropped.values())),
                      sum(map(len, dropped.values())), work.stage(STAGE))
    _write_columns(catalog, revisits, originals)
    if catalog.has_article:
        (catalog.columns_dir / ARTICLE).mkdir(exist_ok=True)
        _write_columns(catalog.article(), revisits, originals)
    record = {"parts": [[p.name, str(p.folder), p.rows, list(p.dropped)] for p in parts],
              "revisits_linked": catalog.revisits_linked,
              "revisits_without_original": catalog.revisits_without_original}
    write_atomic(catalog.columns_dir / "catalog.json", json.dumps(record).encode())
    views = [catalog, catalog.article()] if catalog.has_article else [catalog]
    work.mark(STAGE, record, [*(view.columns_dir / f"{part.name}.npy" for view in views
                                for part in view.parts),
                              catalog.columns_dir / "catalog.json"])
    return catalog


def _doc_of(catalog: Catalog, index: int, row: int) -> int:
    part = catalog.parts[index]
    return part.start + row - sum(1 for d in part.dropped if d < row)


def _source_columns(catalog: Catalog,
                    wanted: set[tuple[int, int]]) -> dict[tuple[int, int], npt.NDArray[Any]]:
    """The columns of each original a revisit repeats, reading each partition once."""
    found: dict[tuple[int, int], npt.NDArray[Any]] = {}
    for index in sorted({index for index, _ in wanted}):
        part = catalog.parts[index]
        columns = _columns_of(part.folder, part.rows)
        for source_index, row in wanted:
            if source_index == index:
                found[(index, row)] = columns[row].copy()
    return found


def _write_columns(catalog: Catalog, revisits: list[tuple[int, int, str]],
                   originals: dict[str, tuple[int, int]]) -> None:
    linked = [(index, row, originals[target]) for index, row, target in revisits
              if target in originals]
    sources = _source_columns(catalog, {source for _, _, source in linked})
    by_part: dict[int, list[tuple[int, tuple[int, int]]]] = {}
    for index, row, source in linked:
        by_part.setdefault(index, []).append((row, source))
    for index, part in enumerate(catalog.parts):
        columns = _columns_of(part.folder, part.rows)
        for row, source in by_part.get(index, []):
            for name in _COPIED:
                columns[row][name] = sources[source][name]
            columns[row]["revisit_of"] = _doc_of(catalog, *source)
        path = catalog.columns_dir / f"{part.name}.npy"
        temporary = path.with_name(path.name + ".tmp")
        write_array(temporary, columns[part.kept_rows()])
        temporary.replace(path)


def load_catalog(work: WorkDir, record: dict[str, Any]) -> Catalog:
    parts, start = [], 0
    for name, folder, rows, dropped in record["parts"]:
        part = Part(name, Path(folder), start, rows, tuple(dropped))
        parts.append(part)
        start += part.count
    return Catalog(tuple(parts), start, record["revisits_linked"],
                   record["revisits_without_original"], work.stage(STAGE))
