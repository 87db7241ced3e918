"""Verification of the pairs a counting or equal-key method found, with the method's own
columns and rule.

Found pairs come as :data:`FOUND` rows: the two docs, the method's estimate, its shared count
and the relation it claims (``near``, ``contained``, ``shingle-equivalent``). They are read in
blocks sized for the memory budget, at most :data:`neardup.engine.buckets.BLOCK_BYTES` (as
:mod:`neardup.engine.verify` does); the content sets of a block's documents are read from their
partitions (templates removed, :class:`neardup.engine.templates.ContentReader`), each pair
gets its exact resemblance and both containments, and the method's rule keeps it or not: the
same :class:`Pairs` as in memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup._types import F64, I64, U64
from neardup.cluster.relations import RELATIONS, overlap_scores
from neardup.config import DedupConfig
from neardup.engine.buckets import block_bytes
from neardup.engine.catalog import Catalog
from neardup.engine.pairfiles import to_records
from neardup.engine.partition import stored_shingles
from neardup.engine.templates import ContentReader
from neardup.features.shingles import distinct
from neardup.methods.pairs import Pairs, method_code
from neardup.store.durable import sync

__all__ = ["FOUND", "Rule", "found_rows", "resemblance_rule", "score_found", "sketch_rule"]

FOUND = np.dtype([("a", "<i8"), ("b", "<i8"), ("estimate", "<f8"), ("shared", "<i8"),
                  ("relation", "i1")])
Rule = Callable[[DedupConfig, Pairs], npt.NDArray[np.bool_]]


def found_rows(a: I64, b: I64, shared: I64, estimate: F64 | None = None,
               relation: str = "near") -> npt.NDArray[np.void]:
    rows = np.empty(a.size, dtype=FOUND)
    rows["a"], rows["b"], rows["shared"] = a, b, shared
    rows["estimate"] = np.nan if estimate is None else estimate
    rows["relation"] = RELATIONS.index(relation)
    return rows


def resemblance_rule(config: DedupConfig, pairs: Pairs) -> npt.NDArray[np.bool_]:
    """Chunks, SMFA: the exact resemblance at or above the floor."""
    return np.asarray(pairs.resemblance >= config.resemblance_floor)


def sketch_rule(config: DedupConfig, pairs: Pairs) -> npt.NDArray[np.bool_]:
    """Sketch methods: a ``contained`` link needs the exact containment of one document in the
    other at or above the threshold (never the estimate); every other pair, equal sketches
    included, the resemblance floor."""
    contained = pairs.relation == RELATIONS.index("contained")
    inside = np.maximum(pairs.containment_ab, pairs.containment_ba) >= config.threshold
    return np.asarray(np.where(contained, inside, pairs.resemblance >= config.resemblance_floor))


def _content(catalog: Catalog, content: ContentReader, docs: I64) -> tuple[U64, I64]:
    """The content sets of sorted ``docs`` as (flat, CSR offsets)."""
    which, rows = catalog.locate(docs)
    flats, sizes = [np.empty(0, np.uint64)], [np.empty(0, np.int64)]
    for index in np.unique(which).tolist():
        flat, offsets = content.sets(catalog.parts[index], rows[which == index])
        flats.append(flat)
        sizes.append(np.diff(offsets))
    offsets = np.zeros(docs.size + 1, dtype=np.int64)
    np.cumsum(np.concatenate(sizes), out=offsets[1:])
    return np.concatenate(flats), offsets


def _scored(config: DedupConfig, catalog: Catalog, content: ContentReader,
            block: npt.NDArray[np.void]) -> Pairs:
    a, b = block["a"].astype(np.int64), block["b"].astype(np.int64)
    docs = distinct(np.concatenate([a, b]))
    flat, offsets = _content(catalog, content, docs)
    resemblance, c_ab, c_ba = overlap_scores(flat, offsets, np.searchsorted(docs, a),
                                             np.searchsorted(docs, b))
    count = a.size
    return Pairs(a=a, b=b, method=np.full(count, method_code(config.method), dtype=np.int8),
                 relation=block["relation"].astype(np.int8),
                 hamming=np.full(count, -1, dtype=np.int64),
                 estimate=block["estimate"].astype(np.float64), resemblance=resemblance,
                 containment_ab=c_ab, containment_ba=c_ba,
                 shared=block["shared"].astype(np.int64), **Pairs.one_view(count))


def _block_rows(catalog: Catalog, budget: int) -> int:
    total = sum(stored_shingles(part.folder) for part in catalog.parts)
    mean = 8.0 * total / max(1, catalog.documents) + 64.0
    return max(1024, int(block_bytes(budget) / (2 * mean)))


def score_found(config: DedupConfig, catalog: Catalog, content: ContentReader, found: Path,
                path: Path, budget: int, rule: Rule) -> I64:
    """Score the pairs of ``found`` and write those the rule keeps to ``path`` as pair records
    (synced); returns, per relation (RELATIONS' order), how many were kept."""
    total = found.stat().st_size // FOUND.itemsize if found.exists() else 0
    per_block = _block_rows(catalog, budget)
    kept = np.zeros(len(RELATIONS), dtype=np.int64)
    with open(path, "wb") as out:
        for start in range(0, total, per_block):
            block = np.fromfile(found, dtype=FOUND, count=min(per_block, total - start),
                                offset=start * FOUND.itemsize)
            pairs = _scored(config, catalog, content, block)
            passed = pairs.select(rule(config, pairs))
            out.write(to_records(passed).tobytes())
            kept += np.bincount(passed.relation.astype(np.int64), minlength=len(RELATIONS))
        sync(out)
    return kept
