"""Stage 5, verify: every candidate pair scored on the documents' real shingle sets.

Candidate pairs are read in blocks; a block holds as many pairs as the shingle sets and signatures
of their documents allow within a block of the budget (:func:`neardup.engine.buckets.block_bytes`).
The sets of a block's documents are read from their
partitions (each partition once per block, only the rows wanted:
:mod:`neardup.engine.arrayrows`), then each pair gets its exact resemblance and both
containments, and the method's own measure (simhash: the Hamming distance; min-hash: the share of
equal signature slots). Pairs below the resemblance floor are dropped and counted, as in memory.
Blocks are scored in the worker pool (:func:`neardup.engine.buckets.bucket_map`), each into its
own file; the files are appended to the output in block order.

Pairs are found in the order of their first document, so a block's second documents lie in most
partitions of the run, and each visit of a partition has a cost of its own. Before they are cut
into blocks, the pairs are therefore ordered (a memory budget's worth at a time) along a Z-order
curve over the partitions of their two documents: a block's pairs then come from a few
partitions on each side. The order of the verified pairs is not the candidates' (the outputs
sort them).

Inside :func:`pairs_of_new` (a run ``--against`` an earlier one), pairs between two documents of
the earlier run are not scored again when no site template is removed (then their scores cannot
differ from the earlier run's, which supplies them): verification is proportional to the new
documents.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np

from neardup.config import DedupConfig, MinHashConfig
from neardup.engine.buckets import append_files, block_bytes, bucket_map, bucket_workers
from neardup.engine.candidates import CANDIDATE
from neardup.engine.catalog import Catalog
from neardup.engine.kernels import in_partition_order, verified_pairs
from neardup.engine.pairfiles import to_records
from neardup.engine.partition import stored_shingles
from neardup.engine.templates import ContentReader
from neardup.methods.registry import signer_of

__all__ = ["SMALLEST_BLOCK", "pairs_of_new", "pairs_per_block", "verify_candidates"]

_OLD = [0]


@contextmanager
def pairs_of_new(old: int) -> Iterator[None]:
    """Inside, :func:`verify_candidates` skips the pairs of two docs below ``old`` (when no
    template is removed: see the module's notes)."""
    _OLD.append(old)
    try:
        yield
    finally:
        _OLD.pop()


SMALLEST_BLOCK = 1024
"""Pairs scored at once by a task, at least."""


def pairs_per_block(config: DedupConfig, catalog: Catalog, budget: int) -> int:
    """Pairs scored at once within ``budget``: both documents' sets and signatures, and
    scoring's copies of the signatures, per pair."""
    signature = 8 * config.of(MinHashConfig).num_perm if signer_of(config) is not None else 0
    per_pair = 2 * (_mean_set_bytes(catalog) + signature) + 2 * signature
    return max(SMALLEST_BLOCK, int(block_bytes(budget) / per_pair))


def _mean_set_bytes(catalog: Catalog) -> float:
    """The mean bytes of a document's sets (both views' where the run has article views)."""
    views = [catalog, catalog.article()] if catalog.has_article else [catalog]
    total = sum(stored_shingles(part.folder) for view in views for part in view.parts)
    return 8.0 * total / max(1, catalog.documents) + 64.0 * len(views)


@dataclass(frozen=True, slots=True)
class _Block:
    """One block of candidate pairs to score, for a worker."""

    config: DedupConfig
    catalog: Catalog
    candidates: Path
    start: int
    count: int
    content: ContentReader | None
    out: Path


def _verify_block(task: _Block) -> int:
    """Score one block; write the pairs that pass verification to ``task.out``; their count."""
    block = np.fromfile(task.candidates, dtype=CANDIDATE, count=task.count,
                        offset=task.start * CANDIDATE.itemsize)
    kept = verified_pairs(task.config, task.catalog, block["a"].astype(np.int64),
                          block["b"].astype(np.int64), task.content)
    with open(task.out, "wb") as out:
        out.write(to_records(kept).tobytes())
    return len(kept)


def verify_candidates(config: DedupConfig, catalog: Catalog, candidates: Path, out: BinaryIO,
                      budget: int, content: ContentReader | None = None) -> tuple[int, int]:
    """Score the pairs of ``candidates`` and write those at or above the floor to ``out``;
    returns (candidates, verified)."""
    total = candidates.stat().st_size // CANDIDATE.itemsize
    if _OLD[-1] and (content is None or not content.active):
        candidates = _touching_new(candidates, total, _OLD[-1])
        total = candidates.stat().st_size // CANDIDATE.itemsize
    per_block = pairs_per_block(config, catalog, budget)
    if bucket_workers() > 1:  # at least two blocks per worker
        per_block = max(256, min(per_block, -(-total // (2 * bucket_workers()))))
    if total > per_block:
        candidates = _in_partition_order(catalog, candidates, total, budget)
    tasks = [_Block(config, catalog, candidates, start, min(per_block, total - start), content,
                    candidates.with_name(f"verified-{index:06d}.bin"))
             for index, start in enumerate(range(0, total, per_block))]
    verified = 0
    for task, kept in zip(tasks, bucket_map(_verify_block, tasks), strict=True):
        append_files([task.out], out)
        verified += kept
    return int(total), verified


_ORDERING_BYTES = 48
"""Bytes a candidate pair takes while its chunk is put in partition order (the pair, its key,
the order and the reordered copy)."""


def _in_partition_order(catalog: Catalog, candidates: Path, total: int, budget: int) -> Path:
    """A copy of the candidate file, chunk by chunk :func:`in_partition_order`."""
    path = candidates.with_name("ordered-" + candidates.name)
    chunk = max(SMALLEST_BLOCK, budget // _ORDERING_BYTES)
    with open(path, "wb") as out:
        for start in range(0, total, chunk):
            block = np.fromfile(candidates, dtype=CANDIDATE, count=min(chunk, total - start),
                                offset=start * CANDIDATE.itemsize)
            out.write(in_partition_order(catalog, block).tobytes())
    return path


def _touching_new(candidates: Path, total: int, old: int) -> Path:
    """A copy of the candidate file without the pairs of two old docs (b < ``old``, as a < b)."""
    path = candidates.with_name("new-" + candidates.name)
    with open(path, "wb") as out:
        for start in range(0, total, 1 << 20):
            block = np.fromfile(candidates, dtype=CANDIDATE, count=min(1 << 20, total - start),
                                offset=start * CANDIDATE.itemsize)
            out.write(block[block["b"] >= old].tobytes())
    return path
