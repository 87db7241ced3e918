"""The Spark components (large-star / small-star rounds) on adversarial shapes, all on Spark
(the driver finishes nothing: bound 0): a chain of 100,000 pairs (the most rounds: a path's
smallest node spreads a little further each round), a star of 100,000 leaves (one node of degree
100,000) and a complete graph of 1,000 nodes (499,500 pairs). Nodes are numbered at random, so
no shape is helped by its order. Each labels every node as the local union-find does, converges
within O(log n) rounds, and reports its rounds (the report that a run's summary.json quotes
under ``engine.spark.components``)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pytest

from neardup._types import I64
from neardup.cluster.unionfind import components
from neardup.engine.pairfiles import PAIR

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

pytest.importorskip("pyspark", reason="the spark extra (PySpark) is not installed")
pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings(  # PySpark's notice about pandas 3
    "ignore:PySpark does not yet fully support pandas:FutureWarning")]

Graph = tuple[int, I64, I64]


def chain(links: int, rng: np.random.Generator) -> Graph:
    nodes = rng.permutation(links + 1)
    return links + 1, nodes[:-1], nodes[1:]


def star(leaves: int, rng: np.random.Generator) -> Graph:
    nodes = rng.permutation(leaves + 1)
    return leaves + 1, np.full(leaves, nodes[0]), nodes[1:]


def complete(size: int, rng: np.random.Generator) -> Graph:
    i, j = np.triu_indices(size, 1)
    nodes = rng.permutation(size)
    return size, nodes[i], nodes[j]


def _labels(spark: SparkSession, folder: Path, graph: Graph) -> dict[str, Any]:
    """Label ``graph`` on Spark alone; the labels must be the local union-find's."""
    from neardup.engine.spark.components import label_components

    count, a, b = graph
    records = np.zeros(a.size, dtype=PAIR)
    records["a"], records["b"] = a, b
    records.tofile(folder / "pairs.bin")
    labels, report = label_components(spark.sparkContext, folder, count, [folder / "pairs.bin"], 0)
    assert np.array_equal(np.asarray(labels), components(count, a, b))
    assert report["pairs"] == a.size and report["driver_edges"] == 0
    assert report["open_edges"][-1] == 0
    assert report["rounds"] == len(report["open_edges"]) - 1
    return report


def test_a_chain_of_100000_pairs(spark: SparkSession, tmp_path: Path) -> None:
    report = _labels(spark, tmp_path, chain(100_000, np.random.default_rng(1)))
    assert report["rounds"] >= 3  # a long path cannot finish in a round or two
    assert report["rounds"] <= 2 * math.ceil(math.log2(100_001))


def test_a_star_of_100000_leaves(spark: SparkSession, tmp_path: Path) -> None:
    report = _labels(spark, tmp_path, star(100_000, np.random.default_rng(2)))
    assert report["rounds"] <= 2  # one large-star step links every leaf to the centre


def test_a_complete_graph_of_1000_nodes(spark: SparkSession, tmp_path: Path) -> None:
    graph = complete(1_000, np.random.default_rng(3))
    assert graph[1].size == 499_500
    report = _labels(spark, tmp_path, graph)
    assert report["rounds"] <= 2  # every node sees the smallest one at once
