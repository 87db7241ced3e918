"""Parquet inputs on Spark: rows read by Spark's Parquet reader, numbered by their row index.

Each row keeps its place in the file (``_metadata.row_index``), so the block of a row and its
document number are those of the local reader (:func:`neardup.sources.parquet.read_parquet`);
only the scalar columns are read, as locally. The rows are shuffled by block, and each task
turns whole blocks into documents with the local row conventions
(:func:`neardup.sources.rows.row_to_document`: a row without text is skipped and counted) and
fingerprints them with :func:`neardup.engine.fingerprint.fingerprint_block`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from neardup.document import Document
from neardup.engine.fingerprint import BlockTask, FingerprintJob, fingerprint_block
from neardup.sources.context import ReadContext
from neardup.sources.lineblocks import LineBlock
from neardup.sources.rows import row_to_document

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["parquet_blocks", "parquet_rows"]

_ROW, _BLOCK = "__neardup_row", "__neardup_block"
_SCALARS = ("StringType", "BinaryType", "ByteType", "ShortType", "IntegerType", "LongType",
            "FloatType", "DoubleType", "BooleanType", "TimestampType", "TimestampNTZType",
            "DateType")
"""The Spark types of the columns the local reader reads (pyarrow's scalar types)."""


def parquet_rows(session: SparkSession, job: FingerprintJob) -> DataFrame:
    """The rows of one Parquet file with their row and block numbers (the driver reads the
    file's footer here: a file Spark cannot open raises Spark's error)."""
    from pyspark.sql import functions as F

    frame = session.read.parquet(job.split.path)
    columns = [F.col(f"`{column.name}`") for column in frame.schema.fields
               if type(column.dataType).__name__ in _SCALARS]
    row = F.col("_metadata.row_index")
    return frame.select(*columns, row.alias(_ROW),
                        F.floor(row / job.chunk_docs).cast("long").alias(_BLOCK))


def _documents(rows: list[dict[str, Any]], source: str, ctx: ReadContext) -> Iterator[Document]:
    for values in rows:
        row = int(values.pop(_ROW))
        values.pop(_BLOCK)
        ctx.stats.records += 1
        doc = row_to_document(values, source=source, offset=row, default_id=f"{source}:{row}",
                              ctx=ctx)
        if doc is not None:
            yield doc


def _fingerprint(job: FingerprintJob, block: int, rows: list[dict[str, Any]]) -> Any:
    import pyarrow as pa

    task = BlockTask(job, LineBlock(block, block * job.chunk_docs, b""))
    record = fingerprint_block(task, partial(_documents, rows, job.split.path))
    return pa.RecordBatch.from_pylist([{"record": json.dumps(record)}])


def _blocks(job: FingerprintJob, batches: Iterable[Any]) -> Iterator[Any]:
    """Executor: the rows of whole blocks (sorted by row), each block fingerprinted."""
    block, rows = -1, list[dict[str, Any]]()
    for batch in batches:
        for values in batch.to_pylist():
            if values[_BLOCK] != block and rows:
                yield _fingerprint(job, block, rows)
                rows = []
            block = values[_BLOCK]
            rows.append(values)
    if rows:
        yield _fingerprint(job, block, rows)


def parquet_blocks(frame: DataFrame, job: FingerprintJob, partitions: int
                   ) -> list[dict[str, Any]]:
    """The block records of one Parquet file (:func:`parquet_rows`), each block fingerprinted
    by a Spark task."""
    total = frame.count()
    if not total:
        return []
    blocks = -(-total // job.chunk_docs)
    spread = frame.repartition(min(partitions, blocks), _BLOCK).sortWithinPartitions(_BLOCK, _ROW)
    found = spread.mapInArrow(partial(_blocks, job), "record string").collect()
    return [json.loads(row["record"]) for row in found]
