"""Reading a ``dedup`` output directory back: its tables (Parquet or JSONL) and ``summary.json``.

A run directory holds ``documents`` and ``clusters`` (the two the report needs), ``pairs`` (not
read here), ``links`` (written by ``dedup --links``) and ``growth`` (written by the
shingle-paragraph method with iterations), each as ``<name>.parquet`` or ``<name>.jsonl``, plus
``summary.json``. The documents and clusters rows are put in ``doc`` order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pajson
import pyarrow.parquet as pq

from neardup._types import I64
from neardup.errors import SourceError

__all__ = ["DedupRun", "column_array", "column_labels", "column_list", "column_or_nulls",
           "read_dedup_dir",
           "read_store", "read_table", "run_labels"]

_REQUIRED = {"documents": ("doc", "url", "host", "length", "identical"),
             "clusters": ("doc", "cluster", "kept")}
#: Parameters of ``summary.json["near"]`` that name a run (in this order) when present.
_LABEL_PARAMETERS = ("chunk", "k", "threshold", "min_shared", "level", "segments", "iterations")


@dataclass(frozen=True, slots=True)
class DedupRun:
    """One ``dedup`` output directory, its tables in ``doc`` order."""

    path: Path
    summary: dict[str, Any]
    documents: pa.Table
    clusters: pa.Table
    links: pa.Table | None = None
    growth: pa.Table | None = None

    @property
    def method(self) -> str:
        return str(self.summary.get("method", "unknown"))

    @property
    def count(self) -> int:
        return int(self.documents.num_rows)

    @property
    def label(self) -> str:
        """The method and its main parameters, e.g. ``simhash k=3``."""
        near = self.summary.get("near")
        parts = [self.method]
        if isinstance(near, dict):
            parts += [f"{key}={near[key]}" for key in _LABEL_PARAMETERS if key in near]
        return " ".join(parts)

    @property
    def cluster(self) -> I64:
        """Each document's cluster label."""
        return column_array(self.clusters, "cluster").astype(np.int64)

    @property
    def identical(self) -> I64:
        """Labels of the groups of identical documents (same raw bytes)."""
        return column_labels(self.documents, "identical")

    def describe(self, label: str, tables: str) -> str:
        """The sentence saying which input (and which of its tables) a section used."""
        return f"{self.path} ({label}, {self.count:,} documents): {tables}"


def run_labels(runs: Sequence[DedupRun]) -> list[str]:
    """One distinct label per run: the method label, with the directory name when two clash."""
    labels = [run.label for run in runs]
    return [f"{label} ({run.path.name})" if labels.count(label) > 1 else label
            for label, run in zip(labels, runs, strict=True)]


def column_array(table: pa.Table, name: str) -> npt.NDArray[Any]:
    """A column as a numpy array (nulls become NaN or None by type)."""
    return np.asarray(table.column(name).to_numpy(zero_copy_only=False))


def column_or_nulls(table: pa.Table, name: str,
                    kind: pa.DataType | None = None) -> pa.ChunkedArray:
    """A column, or all nulls (of ``kind``, default string) when the table has none: the
    optional columns of older or foreign runs (``fetched``, ``reason``, ``tokens``...)."""
    if name not in table.column_names:
        return pa.chunked_array([pa.nulls(table.num_rows, kind or pa.string())])
    column = table.column(name)
    if kind is None and pa.types.is_timestamp(column.type):
        return pc.cast(column, pa.string())  # JSONL readers make dates timestamps
    return column


def column_labels(table: pa.Table, name: str) -> I64:
    """Group labels 0, 1, ... for equal values of a column, numbered in order of first
    appearance (:func:`~.replication.dense_labels` over whole Arrow columns; nulls are one
    group)."""
    column = table.column(name)
    if pa.types.is_dictionary(column.type):
        column = pc.cast(column, column.type.value_type)
    encoded = pc.dictionary_encode(column, null_encoding="encode").combine_chunks()
    return np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)


def column_list(table: pa.Table, name: str) -> list[Any]:
    """A column as a Python list (nulls are None)."""
    return list(table.column(name).to_pylist())


def _read_jsonl(path: Path) -> pa.Table:
    if path.stat().st_size == 0:
        return pa.table({})
    return pajson.read_json(path)


#: String columns with few distinct values, read dictionary-encoded (a few bytes a row).
_DICTIONARY = ("host", "source", "reason", "method", "relation")


#: Columns of the documents table no report section reads (left on disk).
_UNUSED = ("shingle", "text_chars")


def _read_parquet(path: Path) -> pa.Table:
    names = pq.read_schema(path).names
    wanted = [c for c in names if c not in _UNUSED] if path.stem == "documents" else names
    return pq.read_table(path, columns=wanted,
                         read_dictionary=[c for c in _DICTIONARY if c in wanted])


def read_table(directory: Path, name: str) -> pa.Table | None:
    """``<name>.parquet`` or ``<name>.jsonl`` of ``directory``; None when neither exists."""
    for suffix in ("parquet", "jsonl"):
        path = directory / f"{name}.{suffix}"
        if not path.is_file():
            continue
        try:
            return _read_parquet(path) if suffix == "parquet" else _read_jsonl(path)
        except (pa.ArrowException, OSError) as error:
            raise SourceError(str(path), f"cannot read the {name} table ({error})") from error
    return None


def _in_doc_order(table: pa.Table, directory: Path, name: str, count: int) -> pa.Table:
    missing = [c for c in _REQUIRED[name] if c not in table.column_names]
    if missing:
        raise SourceError(str(directory / name), f"no column {', '.join(missing)}")
    if table.num_rows != count:
        raise SourceError(str(directory / name), f"{table.num_rows} rows for {count} documents")
    if count and np.array_equal(column_array(table, "doc"), np.arange(count)):
        return table  # already in doc order (as dedup writes it): no copy
    order = pc.sort_indices(table, sort_keys=[("doc", "ascending")])
    table = table.take(order)
    if count and not np.array_equal(column_array(table, "doc"), np.arange(count)):
        raise SourceError(str(directory / name), f"doc is not 0..{count - 1}")
    return table


def _summary(directory: Path) -> dict[str, Any]:
    path = directory / "summary.json"
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise SourceError(str(path), f"not readable JSON ({error})") from error
    return data if isinstance(data, dict) else {}


def read_dedup_dir(path: str | Path) -> DedupRun:
    """Read a ``dedup --out`` directory; raises :class:`SourceError` naming what is missing."""
    directory = Path(path)
    if not directory.is_dir():
        raise SourceError(str(directory), "no such directory (give a dedup --out directory)")
    tables = {name: read_table(directory, name) for name in ("documents", "clusters")}
    for name, table in tables.items():
        if table is None:
            raise SourceError(str(directory), f"no {name}.parquet or {name}.jsonl: "
                                              "not a dedup output directory")
    documents, clusters = tables["documents"], tables["clusters"]
    assert documents is not None and clusters is not None
    count = documents.num_rows
    run = DedupRun(
        path=directory, summary=_summary(directory),
        documents=_in_doc_order(documents, directory, "documents", count),
        clusters=_in_doc_order(clusters, directory, "clusters", count),
        links=read_table(directory, "links"), growth=read_table(directory, "growth"))
    pa.default_memory_pool().release_unused()  # the decoding buffers (100+ MB at 1M rows)
    return run


def read_store(path: str | Path) -> DedupRun:
    """A persistent store (``neardup index``) as a run: its documents and its clusters (simhash
    within the store's k, merged incrementally as documents were added)."""
    from neardup.store import open_store

    with open_store(path, read_only=True) as store:
        documents, clusters = store.tables()
        summary = {"method": "store", "documents": len(store),
                   "near": {"k": store.config.max_k}, "config": store.config.tags}
    return DedupRun(Path(path), summary, documents, clusters)
