"""Fingerprints: pure functions of canonical text and a frozen config."""

from neardup.fingerprints.exact import ExactPrints, digest64, exact_prints
from neardup.fingerprints.minhash import MinHash, estimate_jaccard
from neardup.fingerprints.simhash import SimHash, hamming_distance, simhash_from_hashes
from neardup.fingerprints.sketch import Sketcher, estimate_containment, estimate_resemblance

__all__ = [
    "ExactPrints",
    "MinHash",
    "SimHash",
    "Sketcher",
    "digest64",
    "estimate_containment",
    "estimate_jaccard",
    "estimate_resemblance",
    "exact_prints",
    "hamming_distance",
    "simhash_from_hashes",
]
