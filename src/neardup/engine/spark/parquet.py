"""Parquet inputs on Spark: rows read by Spark's Parquet reader, numbered by their row index.

Each row keeps its place in the file (``_metadata.row_index``), so the block of a row and its
document number are those of the local reader (:func:`neardup.sources.parquet.read_parquet`);
only the scalar columns are read, as locally. The driver reads each file's footer through Hadoop
(:func:`parquet_schema`, no Spark job); files of one schema are then read by one Spark job
(their frames united, each row tagged with its file); the rows are shuffled by (file, block),
and each task turns whole blocks into documents with the local row conventions
(:func:`neardup.sources.rows.row_to_document`: a row without text is skipped and counted) and
fingerprints them with :func:`neardup.engine.fingerprint.fingerprint_block`.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Iterator
from functools import partial
from typing import TYPE_CHECKING, Any

from neardup.document import Document
from neardup.engine.fingerprint import BlockTask, FingerprintJob, fingerprint_block
from neardup.engine.spark.inputs import hadoop_path
from neardup.sources.context import ReadContext
from neardup.sources.lineblocks import LineBlock
from neardup.sources.rows import row_to_document

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["parquet_blocks", "parquet_schema"]

_ROW, _BLOCK, _FILE = "__neardup_row", "__neardup_block", "__neardup_file"
_SCALARS = ("StringType", "BinaryType", "ByteType", "ShortType", "IntegerType", "LongType",
            "FloatType", "DoubleType", "BooleanType", "TimestampType", "TimestampNTZType",
            "DateType")
"""The Spark types of the columns the local reader reads (pyarrow's scalar types)."""
_SPARK_SCHEMA = "org.apache.spark.sql.parquet.row.metadata"


def parquet_schema(session: SparkSession, job: FingerprintJob) -> str:
    """The schema of one Parquet file as its footer states it (with the Spark schema a Spark
    writer stored beside it), read by the driver through Hadoop (no Spark job): a file whose
    footer cannot be read raises the Java error."""
    context = session.sparkContext
    jvm = context._jvm
    assert jvm is not None
    path = hadoop_path(session, job.split.path)[1]
    source = jvm.org.apache.parquet.hadoop.util.HadoopInputFile.fromPath(
        path, context._jsc.hadoopConfiguration())
    reader = jvm.org.apache.parquet.hadoop.ParquetFileReader.open(source)
    try:
        meta = reader.getFooter().getFileMetaData()
        return f"{meta.getSchema().toString()}\n{meta.getKeyValueMetaData().get(_SPARK_SCHEMA)}"
    finally:
        reader.close()


def _rows(frame: DataFrame, job: FingerprintJob, file: int) -> DataFrame:
    """The scalar columns of one file's rows, with their row, block and file numbers."""
    from pyspark.sql import functions as F

    columns = [F.col(f"`{column.name}`") for column in frame.schema.fields
               if type(column.dataType).__name__ in _SCALARS]
    row = F.col("_metadata.row_index")
    return frame.select(*columns, row.alias(_ROW),
                        F.floor(row / job.chunk_docs).cast("long").alias(_BLOCK),
                        F.lit(file).cast("int").alias(_FILE))


def _documents(rows: list[dict[str, Any]], source: str, ctx: ReadContext) -> Iterator[Document]:
    for values in rows:
        row = int(values.pop(_ROW))
        values.pop(_BLOCK)
        values.pop(_FILE)
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


def _blocks(jobs: list[FingerprintJob], batches: Iterable[Any]) -> Iterator[Any]:
    """Executor: the rows of whole blocks (sorted by file, block and row), each block
    fingerprinted."""
    key, rows = (-1, -1), list[dict[str, Any]]()
    for batch in batches:
        for values in batch.to_pylist():
            if (values[_FILE], values[_BLOCK]) != key and rows:
                yield _fingerprint(jobs[key[0]], key[1], rows)
                rows = []
            key = (values[_FILE], values[_BLOCK])
            rows.append(values)
    if rows:
        yield _fingerprint(jobs[key[0]], key[1], rows)


def parquet_blocks(session: SparkSession, jobs: list[FingerprintJob], partitions: int
                   ) -> list[dict[str, Any]]:
    """The block records of Parquet files of one schema (:func:`parquet_schema`), read by one
    Spark job (and one to infer the schema from the first file's footer: the others are read
    with it): their rows are shuffled by (file, block), each block fingerprinted by a task."""
    first = session.read.parquet(jobs[0].split.path)
    frames = [first, *(session.read.schema(first.schema).parquet(job.split.path)
                       for job in jobs[1:])]
    rows = functools.reduce(lambda one, other: one.union(other),
                            [_rows(frame, job, k) for k, (job, frame)
                             in enumerate(zip(jobs, frames, strict=True))])
    spread = rows.repartition(partitions, _FILE, _BLOCK).sortWithinPartitions(_FILE, _BLOCK, _ROW)
    found = spread.mapInArrow(partial(_blocks, jobs), "record string").collect()
    return [json.loads(row["record"]) for row in found]
