"""The ``minhash`` method: k-permutation min-hash signatures, candidate pairs from LSH bands
tuned to the threshold, verified on the shingle sets (resemblance >= the threshold).

The signature is one of the shared prints (``DocumentPrints.signature``, computed by the
:class:`~neardup.methods.fingerprinter.Fingerprinter` when this method runs, from the
verification shingles when the two shingle configs agree).
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64, I64
from neardup.config import DedupConfig, method_spec
from neardup.fingerprints.minhash import MinHash
from neardup.index.lsh import choose_bands, lsh_pairs
from neardup.methods.near import verified_candidates
from neardup.methods.prints import Prints
from neardup.methods.scoring import UNIT_CURVE, Rule, ScoredPairs, Scorer
from neardup.methods.unit import NearMethod, NearStage

__all__ = ["LSH_FALSE_POSITIVE_WEIGHT", "UNIT", "find_minhash", "minhash_estimates"]

LSH_FALSE_POSITIVE_WEIGHT = 0.1  # candidates are verified exactly, so recall matters more


def find_minhash(config: DedupConfig, prints: list[Prints[None]],
                 survivors: I64) -> NearStage:
    """Pairs of survivors sharing an LSH band of their signatures, verified."""
    chosen = [prints[i] for i in survivors.tolist()]
    simhashes = np.array([p.simhash for p in chosen], dtype=np.uint64)
    width = config.minhash.num_perm
    signatures = (np.stack([p.signature for p in chosen if p.signature is not None])
                  if chosen else np.empty((0, width), dtype=np.uint64))
    bands = choose_bands(width, config.threshold, LSH_FALSE_POSITIVE_WEIGHT)
    i, j = lsh_pairs(signatures, bands)
    parameters: dict[str, object] = {"threshold": config.threshold, "bands": bands.bands,
                                     "rows": bands.rows}
    return verified_candidates(config, survivors, i, j, simhashes, signatures,
                               [p.shingles for p in chosen], parameters)


def minhash_estimates(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The share of equal min-hash slots of the two documents."""
    minhash = MinHash(config.minhash)
    view = documents.text
    width = config.minhash.num_perm
    signatures = np.stack([minhash.of_canonical(tokens) for tokens in documents.canonical]) \
        if documents.canonical else np.empty((0, width), dtype=np.uint64)
    equal = signatures[view.first] == signatures[view.second]
    return np.asarray(equal.mean(axis=1), dtype=np.float64)


UNIT: NearMethod[None] = NearMethod(
    spec=method_spec("minhash"), find=find_minhash,
    verification="LSH bands of the signatures, then resemblance >= the threshold",
    scorer=Scorer("minhash", minhash_estimates,
                  Rule("estimated resemblance", "t", curve=UNIT_CURVE,
                       default=DedupConfig().threshold),
                  summary="share of equal min-hash slots"))
