"""S&GM's relations as tables, out of core (``dedup --method chunks --write-relations``).

The tables of S&GM98's relations, written piece by piece to Parquet files of the near stage's
folder (``tables/<name>.parquet``), never as one list:

- ``fprint_docid`` (fprint, doc): the FPrint-DocID rows the chunk join routed by fingerprint
  (:mod:`neardup.engine.chunkjoin`: templates removed), without the fingerprints held by more
  than ``drop_common`` documents, re-routed by ranges of the fingerprint so that the buckets,
  each sorted by (fprint, doc), come in the relation's order;
- ``url_map`` (url, doc): every document with a URL, partition by partition in doc order;
- ``server_map`` (server, server_id, documents): the documents per host, by host (one counter
  per distinct host, not per document).

An empty table is written without columns, as ``pyarrow.Table.from_pylist([])`` makes it in
memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket
from neardup.engine.catalog import Catalog
from neardup.engine.keys import KEYED
from neardup.engine.partition import read_meta
from neardup.store.durable import sync_path

__all__ = ["TABLES", "write_relations"]

TABLES = ("fprint_docid", "url_map", "server_map")


class _Sink:
    """One table written in pieces to a Parquet file; without rows, a table without columns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer: pq.ParquetWriter | None = None

    def write(self, table: pa.Table) -> None:
        if table.num_rows == 0:
            return
        if self._writer is None:
            self._writer = pq.ParquetWriter(self.path, table.schema)
        self._writer.write_table(table)

    def close(self) -> None:
        if self._writer is None:
            pq.write_table(pa.table({}), self.path)
        else:
            self._writer.close()
        sync_path(self.path)


def _kept(rows: npt.NDArray[Any], limit: int) -> npt.NDArray[Any]:
    """Sorted rows without the keys held by more than ``limit`` documents (0: keep all)."""
    from neardup.engine.counting import key_runs

    rows = rows[np.lexsort((rows["doc"], rows["key"]))]
    if limit <= 0:
        return rows
    starts, lengths = key_runs(rows)
    return rows[np.repeat(lengths <= limit, lengths)] if starts.size else rows


def _fprint_docid(fprints: Path, limit: int, folder: Path, budget: int, sink: _Sink) -> None:
    files = sorted(fprints.glob("*.bin"))
    total = sum(path.stat().st_size for path in files)
    ranged = BucketWriter(folder, bucket_count(2 * total, budget), KEYED)
    for path in files:
        rows = _kept(np.fromfile(path, dtype=KEYED), limit)
        ranged.add(rows, (rows["key"] * np.uint64(ranged.count)) >> np.uint64(32))
    ranged.close()
    for bucket in range(ranged.count):
        rows = read_bucket(folder, bucket, KEYED)
        rows = rows[np.lexsort((rows["doc"], rows["key"]))]
        sink.write(pa.table({"fprint": pa.array(rows["key"].astype(np.int64), pa.int64()),
                             "doc": pa.array(rows["doc"], pa.int64())}))
    sink.close()


def _maps(catalog: Catalog, urls: _Sink, servers: _Sink) -> None:
    import pyarrow.compute as pc  # here: --write-relations alone needs it (0.06 s to import)

    counts: dict[str, int] = {}
    for part in catalog.parts:
        meta = read_meta(part.folder, ["url", "host"]).take(pa.array(part.kept_rows()))
        docs = pa.array(np.arange(part.start, part.start + part.count), pa.int64())
        url = meta.column("url")
        has = pc.fill_null(pc.greater(pc.utf8_length(url), 0), False)
        urls.write(pa.table({"url": pc.filter(url, has), "doc": pc.filter(docs, has)}))
        for row in pc.value_counts(pc.drop_null(meta.column("host"))).to_pylist():
            if row["values"]:
                counts[row["values"]] = counts.get(row["values"], 0) + int(row["counts"])
    urls.close()
    hosts = sorted(counts)
    servers.write(pa.table({"server": pa.array(hosts, pa.string()),
                            "server_id": pa.array(range(len(hosts)), pa.int64()),
                            "documents": pa.array([counts[h] for h in hosts], pa.int64())}))
    servers.close()


def write_relations(catalog: Catalog, fprints: Path, limit: int, tables: Path,
                    budget: int) -> None:
    """Write the three tables to ``tables/<name>.parquet``; ``fprints`` holds the chunk join's
    (fprint, doc) bucket files (its sibling ``ranged`` is used as scratch), ``limit`` is
    ``drop_common`` (0: none)."""
    tables.mkdir(parents=True, exist_ok=True)
    sinks = {name: _Sink(tables / f"{name}.parquet") for name in TABLES}
    _fprint_docid(fprints, limit, fprints.parent / "ranged", budget, sinks["fprint_docid"])
    _maps(catalog, sinks["url_map"], sinks["server_map"])
