"""The near-duplicate stage: candidate pairs (simhash tables or min-hash LSH), then verification.

Every candidate pair is verified on the documents' real shingle sets: resemblance and both
containments. Pairs below the resemblance floor are dropped (and counted).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from neardup.cluster.relations import RELATIONS, overlap_scores
from neardup.config import DedupConfig
from neardup.index.hamming import design_for, hamming_pairs
from neardup.index.lsh import choose_bands, lsh_pairs
from neardup.pipeline.pairs import METHODS, Pairs

__all__ = ["NearStage", "find_near", "scored_pairs"]

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
LSH_FALSE_POSITIVE_WEIGHT = 0.1  # candidates are verified exactly, so recall matters more


@dataclass(frozen=True, slots=True)
class NearStage:
    pairs: Pairs
    candidates: int
    rejected: int
    parameters: dict[str, object] = field(default_factory=dict)
    tables: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    """Extra output tables of the method, by name, as rows (``growth`` for shingle-paragraphs)."""


def _candidates(
    config: DedupConfig, simhashes: U64, signatures: U64 | None
) -> tuple[I64, I64, dict[str, object]]:
    if config.method == "simhash":
        design = design_for(config.max_hamming, simhashes.size)
        i, j = hamming_pairs(simhashes, config.max_hamming, design)
        return i, j, {"k": config.max_hamming, "blocks": list(design.blocks),
                      "choose": design.choose, "tables": len(design.tables())}
    assert signatures is not None
    bands = choose_bands(config.minhash.num_perm, config.threshold, LSH_FALSE_POSITIVE_WEIGHT)
    i, j = lsh_pairs(signatures, bands)
    return i, j, {"threshold": config.threshold, "bands": bands.bands, "rows": bands.rows}


def find_near(
    config: DedupConfig,
    survivors: I64,
    simhashes: U64,
    signatures: U64 | None,
    shingle_sets: list[U64],
) -> NearStage:
    """Candidate pairs among ``survivors`` (fingerprints given in the same order), verified."""
    i, j, parameters = _candidates(config, simhashes, signatures)
    offsets = np.zeros(len(shingle_sets) + 1, dtype=np.int64)
    np.cumsum([s.size for s in shingle_sets], out=offsets[1:])
    flat = np.concatenate(shingle_sets) if shingle_sets else np.empty(0, dtype=np.uint64)
    pairs = scored_pairs(config, survivors[i], survivors[j], i, j, flat, offsets, simhashes,
                         signatures)
    count = i.size
    kept = pairs.select(pairs.resemblance >= config.resemblance_floor)
    return NearStage(kept, int(count), int(count - len(kept)), parameters)


def scored_pairs(config: DedupConfig, a: I64, b: I64, i: I64, j: I64, flat: U64, offsets: I64,
                 simhashes: U64, signatures: U64 | None) -> Pairs:
    """The near pairs (a, b) of ``config.method``, scored: rows ``i``, ``j`` of the shingle
    sets (``flat`` cut at ``offsets``), simhashes and min-hash signatures give the exact
    resemblance and containments, the Hamming distance (simhash) or the estimate (min-hash)."""
    resemblance, c_ab, c_ba = overlap_scores(flat, offsets, i, j)
    count = a.size
    hamming = np.full(count, -1, dtype=np.int64)
    estimate = np.full(count, np.nan)
    if config.method == "simhash":
        hamming = np.bitwise_count(simhashes[i] ^ simhashes[j]).astype(np.int64)
    elif signatures is not None and count:
        estimate = np.mean(signatures[i] == signatures[j], axis=1)
    return Pairs(a=a, b=b, method=np.full(count, METHODS.index(config.method), dtype=np.int8),
                 relation=np.full(count, RELATIONS.index("near"), dtype=np.int8),
                 hamming=hamming, estimate=estimate, resemblance=resemblance,
                 containment_ab=c_ab, containment_ba=c_ba,
                 shared=np.full(count, -1, dtype=np.int64))
