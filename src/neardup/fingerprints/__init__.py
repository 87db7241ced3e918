"""Fingerprints: pure functions of canonical text and a frozen config."""

from neardup.fingerprints.exact import ExactPrints, digest64, exact_prints
from neardup.fingerprints.minhash import MinHash, estimate_jaccard
from neardup.fingerprints.simhash import SimHash, hamming_distance, simhash_from_hashes

__all__ = [
    "ExactPrints",
    "MinHash",
    "SimHash",
    "digest64",
    "estimate_jaccard",
    "exact_prints",
    "hamming_distance",
    "simhash_from_hashes",
]
