"""The ``minhash`` method: k-permutation min-hash signatures, candidate pairs from LSH bands
tuned to the threshold, verified on the shingle sets (resemblance >= the threshold).

The signature is one of the shared prints (``DocumentPrints.signature``, computed by the
:class:`~neardup.methods.fingerprinter.Fingerprinter` when this method runs, from the
verification shingles when the two shingle configs agree).
"""

from __future__ import annotations

from neardup.config import MethodSpec, MinHashConfig
from neardup.fingerprints.minhash import MinHash
from neardup.methods.joins import SignatureBands
from neardup.methods.scoring import UNIT_CURVE, Rule, Scorer
from neardup.methods.unit import NearMethod

__all__ = ["SPEC", "UNIT"]


SPEC = MethodSpec("minhash", lambda c: {"minhash": c.of(MinHashConfig).tag}, threshold=True,
                  estimates=True, params=MinHashConfig)
"""The method as configs see it (declared to the config layer by the registry)."""

JOIN = SignatureBands(MinHash)

UNIT: NearMethod[None] = NearMethod(
    join=JOIN,
    spec=SPEC,
    verification="LSH bands of the signatures, then resemblance >= the threshold",
    scorer=Scorer("minhash", JOIN.estimates,
                  Rule("estimated resemblance", "t", curve=UNIT_CURVE,
                       default=SPEC.default_threshold),
                  summary="share of equal min-hash slots"))
