"""Stage 4 on Spark: the method's candidate keys exploded per partition, grouped by key.

Each Spark task reads one fingerprint partition's survivors and emits its keys in numpy blocks
routed by key, the shuffle brings equal keys together, and each group is joined as the local
engine joins a bucket (:mod:`neardup.engine.candidates`):

- ``simhash``: for every permuted table of the design (chosen for the number of exact
  survivors, as locally), fingerprints are routed by the table's leading bits, so each group
  holds whole prefix classes; :func:`neardup.index.hamming.table_pairs` reports a pair only from
  the first table whose prefix it shares, so no pair comes out twice.
- ``minhash``: the LSH band keys (band, key) are routed by key, each group pairs the documents
  of equal (band, key) (:func:`neardup.engine.kernels.equal_key_pairs`); a pair found in
  several bands comes out once per band, and is made unique where verification groups the
  pairs by their first document (no shuffle of its own).

The result is an RDD of candidate blocks (``CANDIDATE`` arrays: a < b; unique over the RDD for
simhash, repeated across bands for minhash).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.config import DedupConfig, SimHashMethod
from neardup.engine.buckets import spread
from neardup.engine.candidates import BAND_ROW, CANDIDATE, SIMHASH_ROW
from neardup.engine.catalog import Catalog
from neardup.engine.kernels import equal_key_pairs
from neardup.engine.partition import band_key_rows
from neardup.engine.templates import ContentReader
from neardup.index.hamming import TablePlan, design_for, permute_table, table_pairs
from neardup.methods.joins import SignatureBands
from neardup.methods.registry import signer_of

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

__all__ = ["minhash_candidates", "simhash_candidates"]

Block = tuple[Any, npt.NDArray[Any]]


def _survivors(catalog: Catalog, survivors: npt.NDArray[np.bool_],
               index: int) -> tuple[I64, I64]:
    """(docs, rows among the kept rows) of the survivors of partition ``index``."""
    part = catalog.parts[index]
    local = np.flatnonzero(survivors[part.start:part.start + part.count]).astype(np.int64)
    return local + part.start, local


def _groups(keys: npt.NDArray[Any], rows: npt.NDArray[Any]) -> Iterator[Block]:
    """(key, rows of that key) for each distinct key."""
    if keys.size == 0:
        return
    order = np.argsort(keys, kind="stable")
    keys, rows = keys[order], rows[order]
    cuts = np.flatnonzero(keys[1:] != keys[:-1]) + 1
    for start, end in zip(np.r_[0, cuts].tolist(), np.r_[cuts, keys.size].tolist(), strict=True):
        yield int(keys[start]), rows[start:end]


def _parts(context: SparkContext, catalog: Catalog, partitions: int) -> RDD[int]:
    """The partition numbers of the catalog, in ``partitions`` Spark tasks at most (a task
    reads several small partitions in turn)."""
    count = len(catalog.parts)
    return context.parallelize(range(count), max(1, min(count, partitions)))


def _route_bits(plans: list[TablePlan], partitions: int, count: int) -> int:
    """Leading bits that route a table's fingerprints: enough groups to share the work and to
    keep a group near 50,000 fingerprints, never more than a table's prefix."""
    wanted = max(4 * partitions, count // 50_000, 1)
    return min(16, min(plan.prefix_bits for plan in plans), max(1, wanted.bit_length()))


def simhash_candidates(context: SparkContext, config: DedupConfig, catalog: Catalog,
                       survivors: npt.NDArray[np.bool_],
                       partitions: int) -> tuple[RDD[npt.NDArray[Any]], dict[str, object]]:
    """The candidate blocks of the simhash method and the design's parameters."""
    design = design_for(config.of(SimHashMethod).max_hamming, int(survivors.sum()))
    plans = design.plans()
    shift = np.uint64(64 - _route_bits(plans, partitions, int(survivors.sum())))
    kept = context.broadcast(survivors)

    def keys(index: int) -> Iterator[Block]:
        docs, local = _survivors(catalog, kept.value, index)
        rows = np.empty(docs.size, dtype=SIMHASH_ROW)
        rows["value"] = catalog.columns(catalog.parts[index])["simhash"][local]
        rows["doc"] = docs
        for table, plan in enumerate(plans):
            for route, chosen in _groups(permute_table(rows["value"], plan) >> shift, rows):
                yield (table, route), chosen

    def join(group: tuple[Any, Iterable[npt.NDArray[Any]]]) -> Iterator[npt.NDArray[Any]]:
        rows = np.concatenate(list(group[1]))
        if rows.size < 2:
            return
        i, j = table_pairs(rows["value"], config.of(SimHashMethod).max_hamming, plans, group[0][0])
        yield _candidates(rows["doc"][i], rows["doc"][j])

    blocks = (_parts(context, catalog, partitions).flatMap(keys).groupByKey(partitions)
              .flatMap(join))
    return blocks, {"k": config.of(SimHashMethod).max_hamming, "blocks": list(design.blocks),
                    "choose": design.choose, "tables": len(plans)}


def _candidates(a: I64, b: I64) -> npt.NDArray[Any]:
    rows = np.empty(a.size, dtype=CANDIDATE)
    rows["a"], rows["b"] = np.minimum(a, b), np.maximum(a, b)
    return rows


def minhash_candidates(context: SparkContext, config: DedupConfig, catalog: Catalog,
                       survivors: npt.NDArray[np.bool_], partitions: int,
                       content: ContentReader) -> tuple[RDD[npt.NDArray[Any]], dict[str, object]]:
    """The candidate blocks of the min-hash method (LSH bands) and its parameters."""
    bands, signer = SignatureBands.banding(config), signer_of(config)
    assert signer is not None, "a join of signature bands"
    kept, reader = context.broadcast(survivors), context.broadcast(content)
    routes = np.uint64(4 * partitions)

    def keys(index: int) -> Iterator[Block]:
        docs, local = _survivors(catalog, kept.value, index)
        part = catalog.parts[index]
        keys = band_key_rows(part.folder, part.kept_rows()[local], bands, signer,
                             reader.value.adjuster(part, local))
        for band in range(bands.bands):
            rows = np.empty(docs.size, dtype=BAND_ROW)
            rows["band"], rows["doc"] = band, docs
            rows["key"] = keys[:, band]
            yield from _groups(spread(rows["key"]) % routes, rows)

    def pairs(group: tuple[Any, Iterable[npt.NDArray[Any]]]) -> Iterator[npt.NDArray[Any]]:
        yield _candidates(*equal_key_pairs(np.concatenate(list(group[1]))))

    blocks = (_parts(context, catalog, partitions).flatMap(keys).groupByKey(partitions)
              .flatMap(pairs))
    return blocks, {"threshold": config.threshold, "bands": bands.bands, "rows": bands.rows}
