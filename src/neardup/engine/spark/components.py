"""Stage 6 on Spark: connected components by alternating large-star and small-star.

The pair files of the run (revisits, exact levels, near pairs) are read by Spark tasks in blocks
of records; each pair is an undirected edge, kept as (hi, lo) with hi > lo. Rounds alternate the
two operations of Kiveris et al. ("Connected Components in MapReduce and Beyond", 2014), on
DataFrames of two longs (Catalyst plans, no Python rows):

- large-star: every node links its larger neighbours to the smallest node of its neighbourhood
  (itself included);
- small-star: every node links itself and its smaller neighbours to the smallest of them.

Both keep each component connected and never add a node to it; a component is finished when its
edges form a star around its smallest node (its centre has no smaller neighbour; each leaf has
that one edge and no other): the label the local union-find gives. After each round the edges of
finished stars are set aside (their leaves' labels are final) and only the others go on, so the
working set shrinks round by round: web-crawl graphs are mostly small clusters, done in a round
or two. Each round is one Spark action that writes its finished and open edges as Parquet into the
work directory; the next round reads the open ones back, so the plan never grows with the
rounds (the Parquet files are the checkpoint) and the driver learns the counts from the files'
footers, without another job. The rounds stop as soon as no edge is open.

Whenever the open edges number at most ``driver_edges`` (the edges whose int64 pairs fit in the
run's in-memory budget), the driver finishes them with the project's union-find
(:mod:`neardup.cluster.unionfind`): the large graphs take their O(log n) rounds on Spark until
their remainder is small, the small ones (fewer pairs than the bound from the start) never
start a Spark job. Each document's strongest relation (the minimum relation code of its pairs)
is aggregated the same way: by Spark beside the rounds, or on the driver with the union-find.
The results go to the memory-mapped ``labels.npy`` and ``strongest.npy`` of the local cluster
stage, with ``spark-components.json`` (edges, rounds, open edges per round, timings).
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from neardup.cluster.relations import RELATIONS
from neardup.cluster.unionfind import flatten, union_into
from neardup.engine.clusters import Components, pair_blocks
from neardup.engine.pairfiles import PAIR
from neardup.engine.run import EngineOptions
from neardup.engine.spark.session import sql_session
from neardup.engine.workdir import write_atomic

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["driver_bound", "label_components", "spark_components"]

BLOCK = 1 << 20
"""Pair records one task reads; rows one driver batch holds."""
EDGES = "a long, b long, relation tinyint"
EDGE_BYTES = 16
"""One edge on the driver: two int64 document numbers."""
SCRATCH = ("spark-pairs", "spark-rounds", "spark-strongest")


def driver_bound(budget: int | None = None) -> int:
    """Edges the driver finishes itself: as many int64 pairs as ``budget`` bytes hold (by
    default the in-memory budget of a run with the default ``--memory-limit``)."""
    if budget is None:
        budget = EngineOptions(work=Path(".")).budget
    return max(0, budget // EDGE_BYTES)


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


def _sides(edges: DataFrame, first: str, second: str) -> DataFrame:
    """Each edge twice, as (node, other, hi): from its ``first`` and from its ``second`` end
    (``hi``: whether ``node`` is the edge's larger end); one scan of ``edges``."""
    from pyspark.sql import functions as F

    sides = F.array(F.struct(F.col(first).alias("node"), F.col(second).alias("other")),
                    F.struct(F.col(second).alias("node"), F.col(first).alias("other")))
    return (edges.select(F.explode(sides).alias("side")).select("side.node", "side.other")
            .withColumn("hi", F.col("node") > F.col("other")))


def _large_star(edges: DataFrame) -> DataFrame:
    """Each node's larger neighbours linked to the smallest node of its neighbourhood."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    smallest = F.least(F.min("other").over(Window.partitionBy("node")), F.col("node"))
    return (_sides(edges, "hi", "lo").withColumn("m", smallest).where(~F.col("hi"))
            .select(F.col("other").alias("hi"), F.col("m").alias("lo")).distinct())


def _small_star(edges: DataFrame) -> DataFrame:
    """Each node and its smaller neighbours linked to the smallest of them."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    smallest = F.min("lo").over(Window.partitionBy("hi"))
    linked = edges.withColumn("m", smallest).select(F.explode(F.array(
        F.struct(F.col("lo").alias("hi"), F.col("m").alias("lo")),
        F.struct(F.col("hi").alias("hi"), F.col("m").alias("lo")))).alias("edge"))
    return linked.select("edge.hi", "edge.lo").where(F.col("hi") != F.col("lo")).distinct()


def _settle(edges: DataFrame) -> DataFrame:
    """``edges`` with ``done``: whether the edge's component is a star around its ``lo``
    (its leaves have that one edge and no smaller node links to ``lo``; then ``lo`` is the
    label of ``hi``, and the component can leave the rounds)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    node = Window.partitionBy("node")
    sides = _sides(edges, "hi", "lo").withColumns({
        "leaves": F.sum(F.col("hi").cast("int")).over(node),
        "centre": F.max((~F.col("hi")).cast("int")).over(node)})
    good = F.when(F.col("hi"), (F.col("leaves") == 1) & (F.col("centre") == 0)) \
        .otherwise(F.col("leaves") == 0)
    star = F.min(good.cast("int")).over(
        Window.partitionBy(F.when(F.col("hi"), F.col("other")).otherwise(F.col("node"))))
    return (sides.withColumn("star", star).where(F.col("hi"))
            .select(F.col("node").alias("hi"), F.col("other").alias("lo"),
                    (F.col("star") == 1).alias("done")))


def _count(folder: Path) -> int:
    """Rows of the Parquet files under ``folder`` (from their footers)."""
    return sum(pq.ParquetFile(path).metadata.num_rows for path in folder.glob("*.parquet"))


def _round(session: SparkSession, folder: Path, source: Path, number: int) -> int:
    """One large-star / small-star round on the open edges in ``source``: writes the round's
    finished and open edges under ``folder``; returns the open edges' count."""
    target = folder / f"round-{number:03d}"
    edges = session.read.parquet(str(source))
    _settle(_small_star(_large_star(edges))).write.partitionBy("done").parquet(str(target))
    return _count(target / "done=false")


def _start(session: SparkSession, folder: Path, ranges: list[tuple[str, int, int]]) -> int:
    """Write the distinct edges (hi, lo) of the pairs and each document's strongest relation;
    returns the edges' count."""
    from pyspark.sql import functions as F

    pairs = _pairs(session, ranges).cache()
    (pairs.where(F.col("a") != F.col("b"))
     .select(F.greatest("a", "b").alias("hi"), F.least("a", "b").alias("lo")).distinct()
     .write.parquet(str(folder / "spark-rounds" / "round-000" / "done=false")))
    ends = pairs.select(F.col("a").alias("doc"), "relation").union(
        pairs.select(F.col("b").alias("doc"), "relation"))
    ends.groupBy("doc").agg(F.min("relation").alias("relation")).write.parquet(
        str(folder / "spark-strongest"))
    pairs.unpersist()
    return _count(folder / "spark-rounds" / "round-000" / "done=false")


def _batches(folders: Iterable[Path]) -> Iterator[pa.RecordBatch]:
    for folder in folders:
        for path in sorted(folder.glob("*.parquet")):
            yield from pq.ParquetFile(path).iter_batches(BLOCK)


def _open(folder: Path, name: str, dtype: Any, count: int) -> np.memmap[Any, Any]:
    array: np.memmap[Any, Any] = np.lib.format.open_memmap(
        folder / f"{name}.npy", mode="w+", dtype=dtype, shape=(count,))
    return array


def _arrays(folder: Path, count: int) -> tuple[np.memmap[Any, Any], np.memmap[Any, Any]]:
    """``labels.npy`` (each doc its own label) and ``strongest.npy`` (no relation)."""
    labels = _open(folder, "labels", np.int64, count)
    for start in range(0, count, BLOCK):
        labels[start:start + BLOCK] = np.arange(start, min(count, start + BLOCK))
    strongest = _open(folder, "strongest", np.int8, count)
    strongest[:] = len(RELATIONS)
    return labels, strongest


def _on_driver(labels: npt.NDArray[Any], strongest: npt.NDArray[Any],
               files: list[Path]) -> None:
    """The whole stage on the driver: union-find and strongest relations over the pair files."""
    for block in pair_blocks(files):
        union_into(labels, block["a"], block["b"])
        np.minimum.at(strongest, block["a"], block["relation"])
        np.minimum.at(strongest, block["b"], block["relation"])


def _rounds(session: SparkSession, folder: Path, edges: int,
            driver_edges: int) -> tuple[list[int], Path]:
    """Rounds until no edge is open or the open ones number at most ``driver_edges``; returns
    the open edges after each round and the folder of the last open ones."""
    rounds = folder / "spark-rounds"
    open_edges, source = [edges], rounds / "round-000" / "done=false"
    while open_edges[-1] > driver_edges:
        number = len(open_edges)
        open_edges.append(_round(session, rounds, source, number))
        source = rounds / f"round-{number:03d}" / "done=false"
    return open_edges, source


def _on_spark(session: SparkSession, folder: Path, labels: npt.NDArray[Any],
              strongest: npt.NDArray[Any], files: list[Path],
              driver_edges: int) -> dict[str, Any]:
    began = time.perf_counter()
    edges = _start(session, folder, _ranges(files))
    started = time.perf_counter()
    open_edges, rest = _rounds(session, folder, edges, driver_edges)
    ran = time.perf_counter()
    for batch in _batches([folder / "spark-strongest"]):
        strongest[batch.column("doc").to_numpy()] = batch.column("relation").to_numpy()
    for batch in _batches(sorted((folder / "spark-rounds").glob("round-*/done=true"))):
        labels[batch.column("hi").to_numpy()] = batch.column("lo").to_numpy()
    for batch in _batches([rest]):
        union_into(labels, batch.column("hi").to_numpy(), batch.column("lo").to_numpy())
    return {"open_edges": open_edges, "rounds": len(open_edges) - 1,
            "driver_edges": open_edges[-1],
            "seconds": {"start": round(started - began, 3), "rounds": round(ran - started, 3),
                        "driver": round(time.perf_counter() - ran, 3)}}


def label_components(context: SparkContext, folder: Path, count: int, files: list[Path],
                     driver_edges: int, partitions: int | None = None
                     ) -> tuple[npt.NDArray[Any], dict[str, Any]]:
    """``labels.npy`` and ``strongest.npy`` in ``folder`` for ``count`` docs and the pair
    ``files``; returns the labels (memory-mapped) and the stage's report. The rounds on Spark
    run in the SQL session of ``context`` (made then, with ``partitions`` shuffle partitions,
    if none is open)."""
    began = time.perf_counter()
    labels, strongest = _arrays(folder, count)
    pairs = sum(path.stat().st_size // PAIR.itemsize for path in files if path.exists())
    if pairs <= driver_edges:
        _on_driver(np.asarray(labels), np.asarray(strongest), files)
        report: dict[str, Any] = {"open_edges": [pairs], "rounds": 0, "driver_edges": pairs}
    else:
        report = _on_spark(sql_session(context, partitions), folder, np.asarray(labels),
                           np.asarray(strongest), files, driver_edges)
    flatten(np.asarray(labels))
    labels.flush()
    strongest.flush()
    for name in SCRATCH:
        shutil.rmtree(folder / name, ignore_errors=True)
    report = {"pairs": pairs, "driver_bound": driver_edges, **report,
              "total_seconds": round(time.perf_counter() - began, 3)}
    write_atomic(folder / "spark-components.json", json.dumps(report).encode())
    return labels, report


def spark_components(context: SparkContext, budget: int | None = None,
                     partitions: int | None = None) -> Components:
    """The cluster stage's components on Spark (a drop-in for its union-find); the driver
    finishes at most :func:`driver_bound` (``budget``) edges."""
    bound = driver_bound(budget)

    def run(folder: Path, count: int, files: list[Path]) -> npt.NDArray[Any]:
        return label_components(context, folder, count, files, bound, partitions)[0]
    return run
