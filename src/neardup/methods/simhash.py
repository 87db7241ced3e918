"""The ``simhash`` method (Manku, Jain and Das Sarma): 64-bit simhashes within ``max_hamming``
bits, found in permuted Hamming tables, verified on the shingle sets.

The simhash itself is one of the shared prints (``DocumentPrints.simhash``, computed by the
:class:`~neardup.methods.fingerprinter.Fingerprinter` when this method runs), so the unit has no
feature extractor of its own.
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64
from neardup.config import DEFAULT_MAX_HAMMING, DedupConfig, MethodSpec, SimHashMethod
from neardup.fingerprints.simhash import SimHash
from neardup.methods.joins import HammingTables
from neardup.methods.scoring import SIMHASH_K, Rule, ScoredPairs, Scorer
from neardup.methods.unit import NearMethod

__all__ = ["SPEC", "UNIT", "simhash_distances"]


def simhash_distances(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The Hamming distance of the two documents' simhashes."""
    simhash = SimHash(config.of(SimHashMethod).simhash)
    view = documents.text
    prints = np.array([simhash.of_canonical(tokens) for tokens in documents.canonical],
                      dtype=np.uint64)
    distances = np.bitwise_count(prints[view.first] ^ prints[view.second])
    return np.asarray(distances, dtype=np.float64)


SPEC = MethodSpec("simhash", lambda c: {"simhash": c.of(SimHashMethod).simhash.tag},
                  params=SimHashMethod,
                  hint="simhash pairs documents within --k bits; --min-resemblance drops weak "
                       "pairs after verification")
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[None] = NearMethod(
    join=HammingTables(),
    spec=SPEC,
    verification="simhash within max_hamming bits, then resemblance >= the floor",
    scorer=Scorer("simhash", simhash_distances,
                  Rule("hamming distance", "k", at_most=True, grid=SIMHASH_K,
                       curve=SIMHASH_K[:11], integral=True,
                       default=float(DEFAULT_MAX_HAMMING)),
                  summary="Hamming distance of the 64-bit simhashes (Manku et al.)"))
