"""Stage 7, outputs: the tables of ``dedup`` written partition by partition.

The tables and their columns are the documented output schema (:data:`OUTPUT_FORMATS`):
``documents`` and ``clusters`` are written one partition at a time, ``pairs`` one bucket of
first documents at a time (sorted by a, b, method), so no table is built whole in memory. Each
file is written under a temporary name and renamed when complete.

A run ``--against`` an earlier one writes what touches its new documents only (``first``: its
first new doc): their rows of ``documents``, ``clusters`` and ``links``, and the pairs with a doc
at or above ``first`` (the caller leaves out the earlier run's pair files, which hold none).
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.cluster.relations import RELATIONS
from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket
from neardup.engine.catalog import Catalog
from neardup.engine.clusters import ClusterResult, pair_blocks
from neardup.engine.pairfiles import PAIR, from_records
from neardup.errors import OutputError
from neardup.sources.columns import numbers_of, numeric_array, string_array

__all__ = ["OUTPUT_FORMATS", "TableSink", "Written", "hex_strings", "write_outputs"]

OUTPUT_FORMATS = ("parquet", "jsonl")

_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def hex_strings(values: npt.NDArray[np.uint64]) -> pa.Array:
    """Each value as 16 lower-case hex digits, vectorized."""
    nibbles = values.astype(">u8").view(np.uint8).reshape(-1, 8)
    digits = np.empty((values.size, 16), dtype=np.uint8)
    digits[:, 0::2] = _HEX[nibbles >> 4]
    digits[:, 1::2] = _HEX[nibbles & 15]
    offsets = np.arange(0, 16 * values.size + 1, 16, dtype=np.int32)
    return pa.StringArray.from_buffers(values.size, pa.py_buffer(offsets),
                                       pa.py_buffer(digits.tobytes()))


def _json_value(value: object) -> object:
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


class TableSink:
    """One output table written in pieces, as Parquet or JSONL, published on close."""

    def __init__(self, directory: Path, name: str, fmt: str) -> None:
        self.path = directory / f"{name}.{fmt}"
        self._temporary = directory / f".{name}.{fmt}.tmp"
        self._fmt = fmt
        self._parquet: pq.ParquetWriter | None = None
        self._jsonl = open(self._temporary, "w", encoding="utf-8") if fmt == "jsonl" else None  # noqa: SIM115
        self._schema: pa.Schema | None = None

    def write(self, table: pa.Table) -> None:
        if self._jsonl is not None:
            for row in table.to_pylist():
                self._jsonl.write(json.dumps({k: _json_value(v) for k, v in row.items()},
                                             ensure_ascii=False))
                self._jsonl.write("\n")
            return
        if self._parquet is None:
            self._parquet = pq.ParquetWriter(self._temporary, table.schema)
        self._parquet.write_table(table)
        self._schema = table.schema

    def close(self, empty: pa.Schema) -> None:
        if self._jsonl is not None:
            self._jsonl.close()
        elif self._parquet is None:
            pq.write_table(empty.empty_table(), self._temporary)
        else:
            self._parquet.close()
        os.replace(self._temporary, self.path)

    def __enter__(self) -> TableSink:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if kind is not None:
            if self._parquet is not None:
                self._parquet.close()
            if self._jsonl is not None:
                self._jsonl.close()
            self._temporary.unlink(missing_ok=True)


def _documents(catalog: Catalog, part: Any, with_simhash: bool) -> pa.Table:
    meta = part.kept_meta(["id", "url", "host", "source", "offset", "fetched"])
    columns = catalog.columns(part)
    table: dict[str, Any] = {
        "doc": numeric_array(np.arange(part.start, part.start + part.count), pa.int64()),
        "id": meta.column("id"), "url": meta.column("url"), "host": meta.column("host"),
        "source": meta.column("source"), "offset": meta.column("offset"),
        "length": numeric_array(columns["length"], pa.int64()),
        "fetched": meta.column("fetched"),
        "text_chars": numeric_array(columns["text_chars"], pa.int64()),
        "tokens": numeric_array(columns["tokens"], pa.int64()),
        **{name: hex_strings(columns[name]) for name in ("identical", "lexical", "shingle")},
    }
    if with_simhash:
        table["simhash"] = hex_strings(columns["simhash"])
    revisit = columns["revisit_of"]
    table["revisit_of"] = numeric_array(revisit, pa.int64(), mask=revisit < 0)
    return pa.table(table)


def _clusters(part: Any, clusters: ClusterResult, policy: str) -> pa.Table:
    docs = np.arange(part.start, part.start + part.count, dtype=np.int64)
    labels = np.asarray(clusters.array("labels")[docs])
    kept = np.asarray(clusters.array("kept")[docs])
    sizes = np.asarray(clusters.array("sizes")[labels])
    strongest = np.asarray(clusters.array("strongest")[docs])
    names = np.array([f"duplicate:{name}" for name in RELATIONS] + ["duplicate:"], dtype=object)
    reasons = names[strongest]
    reasons[kept == docs] = f"kept:{policy}"
    reasons[sizes == 1] = "unique"
    return pa.table({"doc": numeric_array(docs, pa.int64()),
                     "cluster": numeric_array(labels, pa.int64()),
                     "kept": numeric_array(kept == docs, pa.bool_()),
                     "kept_doc": numeric_array(kept, pa.int64()),
                     "reason": string_array(reasons.tolist())})


def _links(part: Any) -> pa.Table:
    meta = part.kept_meta(["links"])
    lists = meta.column("links").combine_chunks()
    docs = np.arange(part.start, part.start + part.count, dtype=np.int64)
    counts = np.diff(numbers_of(lists.offsets))
    return pa.table({"doc": numeric_array(np.repeat(docs, counts), pa.int64()),
                     "url": lists.flatten().cast(pa.string())})


def _sorted_pairs(files: list[Path], folder: Path, documents: int, budget: int,
                  first: int = 0) -> Any:
    """Pair records with a doc at or above ``first`` bucketed by ranges of ``a``, each bucket
    sorted by (a, b, method)."""
    total = sum(p.stat().st_size for p in files if p.exists()) // PAIR.itemsize
    count = bucket_count(total * PAIR.itemsize * 2, budget)
    writer = BucketWriter(folder, count, PAIR)
    for block in pair_blocks(files):
        if first:
            block = block[np.maximum(block["a"], block["b"]) >= first]
        writer.add(block, (block["a"] * count // max(1, documents)).astype(np.uint64))
    writer.close()
    for bucket in range(count):
        rows = read_bucket(folder, bucket, PAIR)
        yield rows[np.lexsort((rows["method"], rows["b"], rows["a"]))]


def _id_hashes(table: pa.Table) -> npt.NDArray[np.int64]:
    """A 64-bit hash of each document id (this process's string hash: only compared within
    the run)."""
    ids = table.column("id").to_pylist()
    return np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids))


def repeated_ids(parts: list[Any], hashes: list[npt.NDArray[np.int64]]) -> int:
    """How many documents of ``parts`` repeat the id of an earlier one (``hashes``: their ids'
    hashes, part by part). Counted on the hashes; the few documents whose hash repeats are
    then compared on their ids, read again, so that a collision counts no repeat."""
    together = np.concatenate(hashes) if hashes else np.empty(0, np.int64)
    ordered = np.sort(together)
    shared = ordered[1:][ordered[1:] == ordered[:-1]]
    if not shared.size:
        return 0
    suspects = np.flatnonzero(np.isin(together, shared))
    ids: list[object] = []
    start = 0
    for part in parts:
        inside = suspects[(suspects >= start) & (suspects < start + part.count)] - start
        if inside.size:
            ids.extend(part.kept_meta(["id"]).column("id").take(pa.array(inside)).to_pylist())
        start += part.count
    return len(ids) - len(set(ids))


@dataclass(frozen=True, slots=True)
class Written:
    """The tables :func:`write_outputs` wrote, and how many documents repeat an earlier one's
    id (the ``doc`` numbers tell them apart)."""

    paths: list[Path]
    repeated_ids: int


def write_outputs(catalog: Catalog, clusters: ClusterResult, pair_files: list[Path],
                  out: Path, *, fmt: str, policy: str, with_simhash: bool, links: bool,
                  scratch: Path, budget: int, first: int = 0) -> Written:
    """Write documents, pairs, clusters (and links) into ``out``, for the docs from ``first``
    on."""
    parts = [part for part in catalog.parts if part.start >= first]
    hashes: list[npt.NDArray[np.int64]] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        with TableSink(out, "documents", fmt) as documents, \
                TableSink(out, "clusters", fmt) as cluster_sink:
            for part in parts:
                table = _documents(catalog, part, with_simhash)
                hashes.append(_id_hashes(table))
                documents.write(table)
                cluster_sink.write(_clusters(part, clusters, policy))
            documents.close(_documents_schema(with_simhash))
            cluster_sink.close(_clusters_schema())
        with TableSink(out, "pairs", fmt) as pairs:
            for rows in _sorted_pairs(pair_files, scratch, catalog.documents, budget, first):
                pairs.write(pa.table(from_records(rows).columns()))
            pairs.close(pa.table(from_records(np.empty(0, PAIR)).columns()).schema)
        written = [documents.path, pairs.path, cluster_sink.path]
        if links:
            with TableSink(out, "links", fmt) as link_sink:
                for part in parts:
                    link_sink.write(_links(part))
                link_sink.close(pa.schema([("doc", pa.int64()), ("url", pa.string())]))
            written.append(link_sink.path)
    except OSError as error:
        raise OutputError(f"{out}: {error.strerror or error}") from error
    return Written(written, repeated_ids(parts, hashes))


def _documents_schema(with_simhash: bool) -> pa.Schema:
    fields = [("doc", pa.int64()), ("id", pa.string()), ("url", pa.string()),
              ("host", pa.string()), ("source", pa.string()), ("offset", pa.int64()),
              ("length", pa.int64()), ("fetched", pa.string()), ("text_chars", pa.int64()),
              ("tokens", pa.int64()), ("identical", pa.string()), ("lexical", pa.string()),
              ("shingle", pa.string())]
    if with_simhash:
        fields.append(("simhash", pa.string()))
    fields.append(("revisit_of", pa.int64()))
    return pa.schema(fields)


def _clusters_schema() -> pa.Schema:
    return pa.schema([("doc", pa.int64()), ("cluster", pa.int64()), ("kept", pa.bool_()),
                      ("kept_doc", pa.int64()), ("reason", pa.string())])
