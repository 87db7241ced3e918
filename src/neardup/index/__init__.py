"""Candidate search: permuted Hamming tables and LSH bands."""

from neardup.index.hamming import HammingDesign, brute_force_pairs, design_for, hamming_pairs
from neardup.index.lsh import LSHBands, choose_bands, lsh_pairs

__all__ = [
    "HammingDesign",
    "LSHBands",
    "brute_force_pairs",
    "choose_bands",
    "design_for",
    "hamming_pairs",
    "lsh_pairs",
]
