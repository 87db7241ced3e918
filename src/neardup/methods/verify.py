"""Pairs found by a chunk method, verified on the spine's shingle sets.

Every method's pairs carry the exact resemblance and both containments of the two documents'
verify shingle sets (:func:`neardup.cluster.relations.overlap_scores`), so pairs found by chunk
counting, SMFA or shingle paragraphs compare with those of simhash or min-hash.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from neardup._types import I64
from neardup.cluster.relations import RELATIONS, overlap_scores
from neardup.config import DedupConfig
from neardup.methods.pairs import Pairs, method_code
from neardup.methods.prints import DocumentPrints

__all__ = ["verified_pairs"]


def verified_pairs(config: DedupConfig, prints: Sequence[DocumentPrints], docs: I64,
                   a: I64, b: I64, shared: I64) -> tuple[Pairs, int]:
    """Pairs (docs[a], docs[b]) of ``config.method`` with their shared chunk counts, scored, and
    those at or above the resemblance floor; also returns how many fell below it."""
    sets = [prints[i].shingles for i in docs.tolist()]
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([s.size for s in sets], out=offsets[1:])
    flat = np.concatenate(sets) if sets else np.empty(0, dtype=np.uint64)
    resemblance, c_ab, c_ba = overlap_scores(flat, offsets, a, b)
    count = int(a.size)
    pairs = Pairs(
        a=docs[a], b=docs[b], method=np.full(count, method_code(config.method), dtype=np.int8),
        relation=np.full(count, RELATIONS.index("near"), dtype=np.int8),
        hamming=np.full(count, -1, dtype=np.int64), estimate=np.full(count, np.nan),
        resemblance=resemblance, containment_ab=c_ab, containment_ba=c_ba,
        shared=shared.astype(np.int64), **Pairs.one_view(count),
    )
    kept = pairs.select(resemblance >= config.resemblance_floor)
    return kept, count - len(kept)
