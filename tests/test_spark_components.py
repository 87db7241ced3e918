"""The Spark components (large-star / small-star rounds, then the driver's union-find on what
is left) label every document as :func:`neardup.cluster.unionfind.components` does, and give
each document the strongest relation of its pairs, on generated graphs with long paths, stars,
chains, random parts, repeated edges and self-loops."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pytest

from neardup._types import I8, I64
from neardup.cluster.relations import RELATIONS
from neardup.cluster.unionfind import components
from neardup.engine.pairfiles import PAIR

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

pytest.importorskip("pyspark", reason="the spark extra (PySpark) is not installed")
pytestmark = pytest.mark.filterwarnings(  # PySpark's notice about pandas 3 (mapInArrow)
    "ignore:PySpark does not yet fully support pandas:FutureWarning")

Graph = tuple[int, I64, I64]


def _graph(seed: int) -> Graph:
    """Nodes numbered at random: a 150-node path (many rounds), a 60-leaf star, ten short
    chains, a sparse random part, isolated nodes, and every edge kind repeated or reversed."""
    rng = np.random.default_rng(seed)
    count = 600
    order = rng.permutation(count)
    pieces, next_node = [], 0

    def take(size: int) -> I64:
        nonlocal next_node
        nodes = order[next_node:next_node + size]
        next_node += size
        return nodes.astype(np.int64)

    path = take(150)
    pieces.append(np.stack([path[:-1], path[1:]]))
    star = take(61)
    pieces.append(np.stack([np.full(60, star[0]), star[1:]]))
    for _ in range(10):
        chain = take(int(rng.integers(2, 9)))
        pieces.append(np.stack([chain[:-1], chain[1:]]))
    random_part = take(200)
    pieces.append(rng.choice(random_part, size=(2, 150)))
    edges = np.concatenate(pieces, axis=1)
    extra = edges[:, rng.choice(edges.shape[1], 80)][::-1]  # repeated, reversed
    loops = np.stack([random_part[:5], random_part[:5]])
    edges = np.concatenate([edges, extra, loops], axis=1)
    edges = edges[:, rng.permutation(edges.shape[1])]
    return count, edges[0], edges[1]


def _write(folder: Path, graph: Graph, seed: int) -> tuple[list[Path], I8]:
    """The graph's edges as two pair files (and a missing third); returns them and the relation
    code of each edge."""
    _, a, b = graph
    records = np.zeros(a.size, dtype=PAIR)
    records["a"], records["b"] = a, b
    records["relation"] = np.random.default_rng(seed).integers(0, len(RELATIONS), a.size)
    half = a.size // 2
    files = [folder / "one.bin", folder / "two.bin", folder / "missing.bin"]
    records[:half].tofile(files[0])
    records[half:].tofile(files[1])
    return files, records["relation"]


def _expected(graph: Graph, relations: I8) -> tuple[Any, Any]:
    count, a, b = graph
    strongest = np.full(count, len(RELATIONS), dtype=np.int8)
    np.minimum.at(strongest, a, relations)
    np.minimum.at(strongest, b, relations)
    return components(count, a, b), strongest


def _run(context: SparkContext, tmp: Path, seed: int, bound: int) -> dict[str, Any]:
    from neardup.engine.spark.components import label_components

    graph = _graph(seed)
    folder = tmp / f"run-{seed}-{bound}"
    folder.mkdir()
    files, relations = _write(folder, graph, seed)
    labels, report = label_components(context, folder, graph[0], files, bound)
    want_labels, want_strongest = _expected(graph, relations)
    assert np.array_equal(np.asarray(labels), want_labels)
    assert np.array_equal(np.load(folder / "strongest.npy"), want_strongest)
    assert not any((folder / name).exists() for name in
                   ("spark-pairs", "spark-rounds", "spark-strongest"))
    return report


@pytest.mark.slow
def test_rounds_on_spark_only(spark: SparkSession, tmp_path: Path) -> None:
    report = _run(spark.sparkContext, tmp_path, 1, 0)
    assert report["open_edges"][-1] == 0 and report["driver_edges"] == 0
    assert report["rounds"] >= 3  # the long path needs several rounds
    assert report["rounds"] <= 2 * int(np.log2(600)) + 2  # and converges in O(log n)
    assert all(later <= earlier for earlier, later in
               zip(report["open_edges"][1:], report["open_edges"][2:], strict=False))


@pytest.mark.slow
def test_small_remainder_finished_on_driver(spark: SparkSession, tmp_path: Path) -> None:
    """With a bound below the graph's edges, Spark runs rounds until the open edges fit (the
    150-node path cannot finish in one round), and the driver's union-find finishes them."""
    report = _run(spark.sparkContext, tmp_path, 2, 300)
    assert report["open_edges"][0] > 300
    assert report["rounds"] >= 1
    assert 0 < report["driver_edges"] <= 300


class _NoSpark:
    """Stands for the Spark context where none may be used: any use fails the test."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"Spark was used (context.{name})")


def test_few_pairs_never_start_spark(tmp_path: Path) -> None:
    report = _run(cast("SparkContext", _NoSpark()), tmp_path, 4, 10_000)
    assert report["rounds"] == 0 and report["driver_edges"] == report["pairs"]
