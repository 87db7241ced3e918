"""Pairs of the fixed-width fingerprint methods (simhash, min-hash), scored and verified.

Every candidate pair is verified on the documents' real shingle sets: resemblance and both
containments. Pairs below the resemblance floor are dropped (and counted). The candidates come
from the method's own search (:mod:`.simhash`: permuted Hamming tables; :mod:`.minhash`: LSH
bands).
"""

from __future__ import annotations

import numpy as np

from neardup._types import I64, U64
from neardup.cluster.relations import RELATIONS, overlap_scores
from neardup.config import DedupConfig
from neardup.methods.joins import HammingTables
from neardup.methods.pairs import Pairs, method_code
from neardup.methods.registry import join_of

__all__ = ["scored_pairs"]


def scored_pairs(config: DedupConfig, a: I64, b: I64, i: I64, j: I64, flat: U64, offsets: I64,
                 simhashes: U64, signatures: U64 | None) -> Pairs:
    """The near pairs (a, b) of ``config.method``, scored: rows ``i``, ``j`` of the shingle
    sets (``flat`` cut at ``offsets``), simhashes and min-hash signatures give the exact
    resemblance and containments, the Hamming distance (simhash) or the estimate (min-hash)."""
    resemblance, c_ab, c_ba = overlap_scores(flat, offsets, i, j)
    count = a.size
    hamming = np.full(count, -1, dtype=np.int64)
    estimate = np.full(count, np.nan)
    if isinstance(join_of(config), HammingTables):
        hamming = np.bitwise_count(simhashes[i] ^ simhashes[j]).astype(np.int64)
    elif signatures is not None and count:
        estimate = np.mean(signatures[i] == signatures[j], axis=1)
    return Pairs(a=a, b=b, method=np.full(count, method_code(config.method), dtype=np.int8),
                 relation=np.full(count, RELATIONS.index("near"), dtype=np.int8),
                 hamming=hamming, estimate=estimate, resemblance=resemblance,
                 containment_ab=c_ab, containment_ba=c_ba,
                 shared=np.full(count, -1, dtype=np.int64), **Pairs.one_view(count))
