"""Which rows of each input file a run kept: the ``documents`` and ``clusters`` tables read back.

A run's ``documents`` table says where each document came from (``source``: the input file,
``offset``: its row in a Parquet file, 0-based; its line in a JSONL file, 1-based; its byte
offset in a WARC file), and its ``clusters`` table whether it was kept. Both list the documents
in document order, and the documents of one input file are consecutive (document numbers come
from input position), so the two tables are read side by side in batches and one input file's
rows are gathered at a time: memory holds one file's row numbers, never the corpus.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from neardup.errors import OutputError

__all__ = ["ANNOTATIONS", "FileRows", "file_rows", "sources"]

ANNOTATIONS: Final = ("neardup_doc", "neardup_cluster", "neardup_kept", "neardup_kept_doc",
                      "neardup_reason")
"""The columns ``--write annotated`` adds to every row."""

_BATCH: Final = 65_536


@dataclass(frozen=True, slots=True)
class FileRows:
    """The documents of one input file, in row order: where each sits (``offsets``) and its
    cluster, kept flag, kept document and reason."""

    source: str
    offsets: npt.NDArray[np.int64]
    doc: npt.NDArray[np.int64]
    cluster: npt.NDArray[np.int64]
    kept: npt.NDArray[np.bool_]
    kept_doc: npt.NDArray[np.int64]
    reason: list[str]

    def offsets_where(self, kept: bool) -> npt.NDArray[np.int64]:
        """The offsets of the kept documents (``kept``) or of the removed ones."""
        chosen: npt.NDArray[np.int64] = self.offsets[self.kept == kept]
        return chosen


def _parquet_batches(path: Path, columns: list[str]) -> Iterator[dict[str, list[Any]]]:
    import pyarrow.parquet as pq

    with pq.ParquetFile(path) as table:
        for batch in table.iter_batches(batch_size=_BATCH, columns=columns):
            yield batch.to_pydict()


def _jsonl_batches(path: Path, columns: list[str]) -> Iterator[dict[str, list[Any]]]:
    batch: dict[str, list[Any]] = {name: [] for name in columns}
    with path.open("rb") as lines:
        for line in lines:
            row = json.loads(line)
            for name in columns:
                batch[name].append(row[name])
            if len(batch[columns[0]]) == _BATCH:
                yield batch
                batch = {name: [] for name in columns}
    if batch[columns[0]]:
        yield batch


def _rows(out: Path, name: str, columns: list[str]) -> Iterator[dict[str, Any]]:
    """The rows of one output table (Parquet or JSONL, whichever the run wrote)."""
    for fmt, batches in (("parquet", _parquet_batches), ("jsonl", _jsonl_batches)):
        path = out / f"{name}.{fmt}"
        if path.exists():
            try:
                for batch in batches(path, columns):
                    yield from (dict(zip(columns, values, strict=True))
                                for values in zip(*batch.values(), strict=True))
            except (OSError, ValueError, KeyError) as err:
                raise OutputError(f"{path}: cannot read the run's {name} table ({err})") from err
            return
    raise OutputError(f"{out}: holds no {name} table (documents.parquet or .jsonl): "
                      "run neardup dedup with this --out first")


def _file_rows(source: str, rows: list[tuple[dict[str, Any], dict[str, Any]]]) -> FileRows:
    order = sorted(range(len(rows)), key=lambda i: int(rows[i][0]["offset"]))
    docs = [rows[i][0] for i in order]
    clusters = [rows[i][1] for i in order]
    return FileRows(
        source=source,
        offsets=np.array([d["offset"] for d in docs], dtype=np.int64),
        doc=np.array([d["doc"] for d in docs], dtype=np.int64),
        cluster=np.array([c["cluster"] for c in clusters], dtype=np.int64),
        kept=np.array([c["kept"] for c in clusters], dtype=np.bool_),
        kept_doc=np.array([c["kept_doc"] for c in clusters], dtype=np.int64),
        reason=[str(c["reason"]) for c in clusters])


def _side_by_side(out: Path, documents: Iterator[dict[str, Any]],
                  clusters: Iterator[dict[str, Any]]) -> Iterator[tuple[dict[str, Any],
                                                                        dict[str, Any]]]:
    try:
        yield from zip(documents, clusters, strict=True)
    except ValueError as err:
        raise OutputError(f"{out}: the documents and clusters tables have different lengths "
                          "(they belong to different runs)") from err


def file_rows(out: Path) -> Iterator[FileRows]:
    """The rows of each input file of the run whose tables are in ``out``, file by file."""
    documents = _rows(out, "documents", ["doc", "source", "offset"])
    clusters = _rows(out, "clusters", ["doc", "cluster", "kept", "kept_doc", "reason"])
    seen: set[str] = set()
    current: str | None = None
    gathered: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for document, cluster in _side_by_side(out, documents, clusters):
        if document["doc"] != cluster["doc"]:
            raise OutputError(f"{out}: the documents and clusters tables disagree at doc "
                              f"{document['doc']} (they belong to different runs)")
        if document["source"] != current:
            if current is not None:
                yield _file_rows(current, gathered)
            current, gathered = document["source"], []
            if current in seen:
                raise OutputError(f"{out}: the documents of {current} are not consecutive in "
                                  "the documents table")
            seen.add(current)
        gathered.append((document, cluster))
    if current is not None:
        yield _file_rows(current, gathered)


def sources(out: Path) -> list[str]:
    """Every input file of which the run in ``out`` read a document, in reading order."""
    seen: dict[str, None] = {}
    for row in _rows(out, "documents", ["source"]):
        seen.setdefault(row["source"], None)
    return list(seen)
