"""Stage 5 on Spark: candidate pairs joined with the shingle sets of their documents, scored.

The candidate blocks are keyed by a range of first documents (as many ranges of equal document
counts as shuffle partitions) and shuffled, so that one task verifies the pairs of one range: it
makes them unique (every copy of a pair has the same first document, so all meet there), and, in
blocks of pairs sized as the local engine's (its memory budget over a pair's sets), reads the
shingle sets (the content sets when templates are pruned), simhashes and signatures of the
pairs' documents from their partitions with :func:`neardup.engine.kernels.gather_sets`, and
scores each pair with :func:`neardup.methods.near.scored_pairs`, as the local engine does. Pairs
below the resemblance floor are dropped and counted. Each task writes its verified pair records
into its own file of the work directory (temporary name, synced, renamed: a retried task writes
the same file) and returns only its counts; the driver appends the files into
``near/pairs.bin``. One Spark job, and no pair through the driver's Python.

A scoring call costs a fixed second or two on top of its pairs (it reads from every partition
its pairs touch, and the second documents are anywhere): keyed by the fingerprint partition of
the first document, a run of 1M documents made 104 calls of a few hundred pairs each, 110 s of
tasks for 40,691 candidates, against the local engine's four.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig
from neardup.engine.buckets import append_files
from neardup.engine.catalog import Catalog
from neardup.engine.kernels import in_partition_order, verified_pairs
from neardup.engine.pairfiles import to_records
from neardup.engine.templates import ContentReader
from neardup.engine.verify import pairs_per_block
from neardup.store.durable import sync

if TYPE_CHECKING:
    from pyspark import RDD, SparkContext

__all__ = ["verify_pairs", "write_verified"]

def _score(config: DedupConfig, catalog: Catalog, content: ContentReader,
           block: npt.NDArray[Any]) -> tuple[int, npt.NDArray[Any]]:
    kept = verified_pairs(config, catalog, block["a"].astype(np.int64),
                          block["b"].astype(np.int64), content)
    return int(block.size), to_records(kept)


def _write(path: Path, records: Iterable[npt.NDArray[Any]]) -> int:
    """``records`` into ``path`` (temporary name, synced, renamed); returns the rows."""
    temporary = path.with_suffix(f".{uuid.uuid4().hex}.tmp")  # one per task attempt
    rows = 0
    with open(temporary, "wb") as out:
        for block in records:
            out.write(block.tobytes())
            rows += int(block.size)
        sync(out)
    os.replace(temporary, path)
    return rows


def verify_pairs(context: SparkContext, config: DedupConfig, catalog: Catalog,
                 content: ContentReader, candidates: RDD[npt.NDArray[Any]], partitions: int,
                 folder: Path, budget: int) -> RDD[tuple[int, int]]:
    """(candidates scored, verified) per range of the candidate pairs' first documents (one per
    shuffle partition); each task writes its verified records to ``folder/NNNNN.bin``, scored
    in blocks that the memory ``budget`` holds."""
    ranges = max(1, min(partitions, catalog.documents))
    documents = max(1, catalog.documents)
    reader = context.broadcast(content)
    block_pairs = pairs_per_block(config, catalog, budget)

    def by_range(block: npt.NDArray[Any]) -> Iterator[tuple[int, npt.NDArray[Any]]]:
        which = block["a"].astype(np.int64) * ranges // documents
        for index in np.unique(which).tolist():
            yield index, block[which == index]

    def score(group: tuple[int, Iterable[npt.NDArray[Any]]]) -> Iterator[tuple[int, int]]:
        pairs = in_partition_order(catalog, np.unique(np.concatenate(list(group[1]))))  # records
        counts = [0]

        def scored() -> Iterator[npt.NDArray[Any]]:
            for start in range(0, pairs.size, block_pairs):
                count, records = _score(config, catalog, reader.value,
                                        pairs[start:start + block_pairs])
                counts[0] += count
                yield records
        verified = _write(folder / f"{group[0]:06d}.bin", scored())
        yield counts[0], verified

    return candidates.flatMap(by_range).groupByKey(partitions).flatMap(score)


def write_verified(scored: RDD[tuple[int, int]], folder: Path, path: Path) -> tuple[int, int]:
    """Run the verification; append its files (in ``folder``, then deleted) into ``path``,
    synced; returns (candidates, verified)."""
    counts = scored.collect()
    with open(path, "wb") as out:
        append_files(sorted(folder.glob("*.bin")), out)
        sync(out)
    shutil.rmtree(folder)  # with the temporary files of failed task attempts, if any
    return sum(count for count, _ in counts), sum(verified for _, verified in counts)
