"""Stage 6 on Spark: connected components by alternating large-star and small-star.

The pair files of the run (revisits, exact levels, near pairs) are read by Spark tasks in blocks
of records; each pair is an undirected edge, kept as (hi, lo) with hi > lo. Rounds alternate the
two operations of Kiveris et al. ("Connected Components in MapReduce and Beyond", 2014):

- large-star: every node links its larger neighbours to the smallest node of its neighbourhood
  (itself included);
- small-star: every node links itself and its smaller neighbours to the smallest of them.

Both keep each component connected and never add a node to it; they stop when the edges form
stars (no node is both a leaf and a centre, each leaf has one edge), whose centre is then the
component's smallest document: the label the local union-find gives. This takes O(log n) rounds
in practice; each round's edges are checkpointed, so the plan does not grow with the rounds.

The labels (leaf, centre) and each document's strongest relation (the minimum relation code of
its pairs) are written by Spark as Parquet, then read by the driver batch by batch into the
memory-mapped ``labels.npy`` and ``strongest.npy`` of the local cluster stage.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.cluster.relations import RELATIONS
from neardup.engine.clusters import Components
from neardup.engine.pairfiles import PAIR

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["spark_components"]

BLOCK = 1 << 20
"""Pair records one task reads."""
EDGES = "a long, b long, relation tinyint"


def _ranges(files: list[Path]) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    for path in files:
        total = path.stat().st_size // PAIR.itemsize if path.exists() else 0
        found.extend((str(path), start, min(BLOCK, total - start))
                     for start in range(0, total, BLOCK))
    return found


def _read(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    for batch in batches:
        for path, start, count in zip(*(batch.column(i).to_pylist() for i in range(3)),
                                      strict=True):
            records = np.fromfile(path, dtype=PAIR, count=count, offset=start * PAIR.itemsize)
            yield pa.RecordBatch.from_arrays(
                [pa.array(records["a"]), pa.array(records["b"]), pa.array(records["relation"])],
                names=["a", "b", "relation"])


def _pairs(session: SparkSession, ranges: list[tuple[str, int, int]]) -> DataFrame:
    table = session.createDataFrame(ranges, "path string, start long, count long")
    return table.repartition(len(ranges)).mapInArrow(_read, EDGES)


def _large_star(edges: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    both = edges.select(F.col("hi").alias("node"), F.col("lo").alias("other")).union(
        edges.select(F.col("lo").alias("node"), F.col("hi").alias("other")))
    smallest = both.groupBy("node").agg(F.least(F.min("other"), F.col("node")).alias("m"))
    return (both.where(F.col("other") > F.col("node")).join(smallest, "node")
            .select(F.col("other").alias("hi"), F.col("m").alias("lo")).distinct())


def _small_star(edges: DataFrame) -> DataFrame:
    from pyspark.sql import functions as F

    smallest = edges.groupBy("hi").agg(F.min("lo").alias("m"))
    moved = (edges.join(smallest, "hi").where(F.col("lo") != F.col("m"))
             .select(F.col("lo").alias("hi"), F.col("m").alias("lo")))
    return moved.union(smallest.select("hi", F.col("m").alias("lo"))).distinct()


def _stars(edges: DataFrame) -> bool:
    """Whether every component of ``edges`` is a star around its smallest node."""
    from pyspark.sql import functions as F

    most = edges.groupBy("hi").count().agg(F.max("count")).first()
    if most is not None and (most[0] or 0) > 1:
        return False  # a leaf with two centres
    centres = edges.select(F.col("lo").alias("hi")).distinct()
    return edges.select("hi").join(centres, "hi").limit(1).count() == 0


def _converge(pairs: DataFrame) -> tuple[DataFrame, int]:
    """The star edges (leaf, centre) of ``pairs``' components, and the rounds taken."""
    from pyspark.sql import functions as F

    edges = _saved(pairs.where(F.col("a") != F.col("b"))
                   .select(F.greatest("a", "b").alias("hi"), F.least("a", "b").alias("lo"))
                   .distinct())
    rounds = 0
    while True:
        rounds += 1
        edges = _saved(_small_star(_large_star(edges)))
        if _stars(edges):
            return edges, rounds


def _saved(edges: DataFrame) -> DataFrame:
    """``edges`` computed once, checkpointed (the plan restarts from the files)."""
    cached = edges.persist()
    saved = cached.checkpoint()
    cached.unpersist()
    return saved


def _open(folder: Path, name: str, dtype: Any, count: int) -> np.memmap[Any, Any]:
    array: np.memmap[Any, Any] = np.lib.format.open_memmap(
        folder / f"{name}.npy", mode="w+", dtype=dtype, shape=(count,))
    return array


def _batches(folder: Path) -> Iterator[pa.RecordBatch]:
    for path in sorted(folder.glob("*.parquet")):
        yield from pq.ParquetFile(path).iter_batches(1 << 20)


def _fill(target: npt.NDArray[Any], folder: Path, key: str, value: str) -> None:
    for batch in _batches(folder):
        target[batch.column(key).to_numpy()] = batch.column(value).to_numpy()


def _write(folder: Path, count: int, edges: DataFrame | None,
           strongest: DataFrame | None) -> npt.NDArray[Any]:
    labels = _open(folder, "labels", np.int64, count)
    for start in range(0, count, BLOCK):
        labels[start:start + BLOCK] = np.arange(start, min(count, start + BLOCK))
    relations = _open(folder, "strongest", np.int8, count)
    relations[:] = len(RELATIONS)
    if edges is not None and strongest is not None:
        edges.write.parquet(str(folder / "spark-labels"))
        strongest.write.parquet(str(folder / "spark-strongest"))
        _fill(labels, folder / "spark-labels", "hi", "lo")
        _fill(relations, folder / "spark-strongest", "doc", "relation")
    labels.flush()
    relations.flush()
    return labels


def spark_components(session: SparkSession) -> Components:
    """The cluster stage's components on Spark (a drop-in for its union-find)."""
    from pyspark.sql import functions as F

    def run(folder: Path, count: int, files: list[Path]) -> npt.NDArray[Any]:
        ranges = _ranges(files)
        if not ranges:
            return _write(folder, count, None, None)
        session.sparkContext.setCheckpointDir(str(folder / "spark-checkpoints"))
        pairs = _pairs(session, ranges).cache()
        edges, _ = _converge(pairs)
        ends = pairs.select(F.col("a").alias("doc"), "relation").union(
            pairs.select(F.col("b").alias("doc"), "relation"))
        strongest = ends.groupBy("doc").agg(F.min("relation").alias("relation"))
        labels = _write(folder, count, edges, strongest)
        pairs.unpersist()
        for name in ("spark-labels", "spark-strongest", "spark-checkpoints"):
            shutil.rmtree(folder / name, ignore_errors=True)
        return labels
    return run
