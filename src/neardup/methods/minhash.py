"""The ``minhash`` method: k-permutation min-hash signatures, candidate pairs from LSH bands
tuned to the threshold, verified on the shingle sets (resemblance >= the threshold).

The signature is one of the shared prints (``DocumentPrints.signature``, computed by the
:class:`~neardup.methods.fingerprinter.Fingerprinter` when this method runs, from the
verification shingles when the two shingle configs agree).
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64
from neardup.config import DedupConfig, MethodSpec
from neardup.fingerprints.minhash import MinHash
from neardup.methods.joins import SignatureBands
from neardup.methods.scoring import UNIT_CURVE, Rule, ScoredPairs, Scorer
from neardup.methods.unit import NearMethod

__all__ = ["SPEC", "UNIT", "minhash_estimates"]


def minhash_estimates(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The share of equal min-hash slots of the two documents."""
    minhash = MinHash(config.minhash)
    view = documents.text
    width = config.minhash.num_perm
    signatures = np.stack([minhash.of_canonical(tokens) for tokens in documents.canonical]) \
        if documents.canonical else np.empty((0, width), dtype=np.uint64)
    equal = signatures[view.first] == signatures[view.second]
    return np.asarray(equal.mean(axis=1), dtype=np.float64)


SPEC = MethodSpec("minhash", lambda c: {"minhash": c.minhash.tag}, threshold=True,
                  estimates=True)
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[None] = NearMethod(
    join=SignatureBands(MinHash),
    spec=SPEC,
    verification="LSH bands of the signatures, then resemblance >= the threshold",
    scorer=Scorer("minhash", minhash_estimates,
                  Rule("estimated resemblance", "t", curve=UNIT_CURVE,
                       default=SPEC.default_threshold),
                  summary="share of equal min-hash slots"))
