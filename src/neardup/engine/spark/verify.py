"""Stage 5 on Spark: candidate pairs joined with the shingle sets of their documents, scored.

The candidate blocks are keyed by the fingerprint partition of their first document and
shuffled, so that one task verifies the pairs of one partition: it reads the shingle sets (the
content sets when templates are pruned), simhashes and signatures of the pairs' documents from
their partitions, and scores each pair with :func:`neardup.methods.near.scored_pairs`, as the
local engine does. Pairs below the resemblance floor are dropped and counted. The verified
pairs come back to the driver one block at a time, as pair records for ``near/pairs.bin``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig
from neardup.engine.catalog import Catalog
from neardup.engine.pairfiles import to_records
from neardup.engine.partition import signature_rows
from neardup.engine.templates import ContentReader
from neardup.methods.near import scored_pairs

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

__all__ = ["verify_pairs", "write_verified"]

I64 = npt.NDArray[np.int64]
BLOCK = 200_000
"""Pairs scored at once by a task."""


def _gather(catalog: Catalog, docs: I64, content: ContentReader,
            signatures: bool) -> tuple[Any, I64, Any, Any]:
    """Content sets (flat, offsets), simhashes and signatures (or None) of sorted ``docs``."""
    which, rows = catalog.locate(docs)
    flats, sizes, simhashes, stored = [], [], [], []
    for index in np.unique(which).tolist():
        part, chosen = catalog.parts[index], rows[which == index]
        flat, offsets = content.sets(part, chosen)
        flats.append(flat)
        sizes.append(np.diff(offsets))
        simhashes.append(catalog.columns(part)["simhash"][chosen])
        if signatures:
            raw = signature_rows(part.folder, part.kept_rows()[chosen])
            stored.append(content.signatures(part, chosen, raw))
    offsets = np.zeros(docs.size + 1, dtype=np.int64)
    np.cumsum(np.concatenate(sizes), out=offsets[1:])
    return (np.concatenate(flats), offsets, np.concatenate(simhashes),
            np.concatenate(stored) if signatures else None)


def _score(config: DedupConfig, catalog: Catalog, content: ContentReader,
           block: npt.NDArray[Any]) -> tuple[int, npt.NDArray[Any]]:
    a, b = block["a"].astype(np.int64), block["b"].astype(np.int64)
    docs = np.unique(np.concatenate([a, b]))
    flat, offsets, simhashes, signatures = _gather(catalog, docs, content,
                                                   config.method == "minhash")
    i, j = np.searchsorted(docs, a), np.searchsorted(docs, b)
    pairs = scored_pairs(config, a, b, i, j, flat, offsets, simhashes, signatures)
    kept = pairs.select(pairs.resemblance >= config.resemblance_floor)
    return a.size, to_records(kept)


def verify_pairs(context: SparkContext, config: DedupConfig, catalog: Catalog,
                 content: ContentReader, candidates: RDD[npt.NDArray[Any]],
                 partitions: int) -> RDD[tuple[int, npt.NDArray[Any]]]:
    """(candidates scored, verified pair records) per block of the candidate pairs."""
    starts = catalog.starts()
    reader = context.broadcast(content)

    def by_part(block: npt.NDArray[Any]) -> Iterator[tuple[int, npt.NDArray[Any]]]:
        which = np.searchsorted(starts, block["a"], side="right") - 1
        for index in np.unique(which).tolist():
            yield index, block[which == index]

    def score(group: tuple[int, Iterable[npt.NDArray[Any]]]) -> Iterator[
            tuple[int, npt.NDArray[Any]]]:
        pairs = np.concatenate(list(group[1]))
        for start in range(0, pairs.size, BLOCK):
            yield _score(config, catalog, reader.value, pairs[start:start + BLOCK])

    return candidates.flatMap(by_part).groupByKey(partitions).flatMap(score)


def write_verified(scored: RDD[tuple[int, npt.NDArray[Any]]], path: Path) -> tuple[int, int]:
    """Write the verified pairs to ``path`` (synced); returns (candidates, verified)."""
    candidates = verified = 0
    with open(path, "wb") as out:
        for count, records in scored.toLocalIterator():
            candidates += count
            verified += int(records.size)
            out.write(records.tobytes())
        out.flush()
        os.fsync(out.fileno())
    return candidates, verified
