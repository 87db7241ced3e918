"""``query --batch``: the new documents of some inputs against a store, in Manku's batch mode.

The inputs are read as ``dedup`` reads them (bad records skipped and counted) and fingerprinted
as the store fingerprints what it keeps (in worker processes); their simhashes are then matched
against every stored fingerprint at once, either by the store's index in this process
(``engine="local"``) or by Spark tasks that each scan a slice of the stored fingerprints
(``engine="spark"``, :mod:`neardup.engine.spark.query`). Both give the same pairs; the matches
are resolved from the store's checked rows (:func:`neardup.store.batch.resolve`).
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from neardup.config import StoreConfig
from neardup.document import Document
from neardup.engine.workdir import write_atomic
from neardup.errors import ConfigError
from neardup.index.tables import Matches
from neardup.methods.prints import DocumentPrints
from neardup.methods.workers import ordered_map
from neardup.sources import SourceReader
from neardup.store import Store
from neardup.store.batch import BatchMatch, QueryPrint, batch_k, local_pairs, resolve
from neardup.store.printer import store_fingerprinter

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

__all__ = ["BatchQueryReport", "SparkOptions", "batch_query", "query_prints", "write_matches"]

Engine = Literal["local", "spark"]


@dataclass(frozen=True, slots=True)
class SparkOptions:
    """Where the Spark side runs: its master and how many slices of the stored fingerprints."""

    master: str = "local[2]"
    partitions: int | None = None

    def __post_init__(self) -> None:
        if not self.master:
            raise ConfigError("the Spark master must not be empty")
        if self.partitions is not None and self.partitions < 1:
            raise ConfigError(f"partitions must be at least 1, got {self.partitions}")


@dataclass(slots=True)
class BatchQueryReport:
    """The matches of a batch query and its counts."""

    engine: str
    k: int
    queries: int
    indexed: int
    """Queries with tokens (the others match by identical bytes only)."""
    stored: int
    matches: list[BatchMatch] = field(default_factory=list)
    sources: dict[str, object] = field(default_factory=dict)

    def counts(self) -> dict[str, object]:
        skipped = self.sources.get("skipped", {})
        return {"engine": self.engine, "k": self.k, "queries": self.queries,
                "indexed_queries": self.indexed, "stored_documents": self.stored,
                "matches": len(self.matches),
                "queries_matched": len({m.query for m in self.matches}),
                "skipped_records": sum(skipped.values()) if isinstance(skipped, dict) else 0,
                "sources": self.sources}


def _printer(config: StoreConfig) -> Callable[[Document], DocumentPrints]:
    """The store's fingerprinter without sketches (a batch query reports no sketch scores)."""
    return store_fingerprinter(config, features=_no_features)


def _no_features(doc: Document, text: str, canonical: bytes) -> None:
    return None


def _payloads(docs: Iterable[Document]) -> Iterator[Document]:
    """Revisit records carry no payload: they are no query (as they are not stored)."""
    return (doc for doc in docs if doc.revisit_of is None)


def query_prints(config: StoreConfig, docs: Iterable[Document],
                 workers: int = 1) -> list[QueryPrint]:
    """The prints of each new document, numbered in input order (whatever ``workers``)."""
    factory = functools.partial(_printer, config)
    return [QueryPrint(position, p.id, p.url, p.source, p.simhash, p.identical, p.lexical,
                       p.tokens)
            for position, p in enumerate(ordered_map(factory, _payloads(docs), workers))]


def batch_query(store: Store, reader: SourceReader, *, k: int | None = None,
                engine: Engine = "local", spark: SparkOptions | None = None,
                workers: int = 1, session: SparkSession | None = None) -> BatchQueryReport:
    """Every stored document within ``k`` bits of (or byte-identical to) each document of
    ``reader``, matched on ``engine``; the matches sorted by (query, stored document).
    ``session``: a running Spark session to use (else ``engine="spark"`` starts one)."""
    k = batch_k(store, k)
    prints = query_prints(store.config, reader, workers)
    pairs = _pairs(store, prints, k, engine, spark or SparkOptions(), session)
    return BatchQueryReport(engine, k, len(prints), sum(p.tokens > 0 for p in prints),
                            len(store), resolve(store, prints, pairs), reader.stats.as_dict())


def _pairs(store: Store, prints: list[QueryPrint], k: int, engine: Engine,
           spark: SparkOptions, session: SparkSession | None) -> Matches:
    if engine == "local":
        return local_pairs(store, prints, k)
    if engine == "spark":
        from neardup.engine.spark.query import spark_pairs

        return spark_pairs(store, prints, k, spark.master, spark.partitions, session)
    raise ConfigError(f"engine must be local or spark, got {engine!r}")


def write_matches(matches: list[BatchMatch], path: Path) -> None:
    """The matches as Parquet (a name ending ``.parquet``) or JSON lines, written atomically."""
    rows = [m.as_dict() for m in matches]
    if path.suffix == ".parquet":
        names = list(BatchMatch.__slots__)
        table = pa.Table.from_pylist(rows, schema=pa.schema([
            (name, pa.int64() if name in ("query", "doc", "cluster", "distance")
             else pa.string()) for name in names]))
        buffer = io.BytesIO()
        pq.write_table(table, buffer)
        write_atomic(path, buffer.getvalue())
        return
    write_atomic(path, "".join(json.dumps(row, ensure_ascii=False) + "\n"
                               for row in rows).encode("utf-8"))
