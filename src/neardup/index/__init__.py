"""Candidate search: permuted Hamming tables and LSH bands."""

from neardup.index.hamming import (
    HammingDesign,
    TablePlan,
    brute_force_pairs,
    design_for,
    hamming_pairs,
    permute_table,
)
from neardup.index.lsh import LSHBands, choose_bands, lsh_pairs

__all__ = [
    "HammingDesign",
    "LSHBands",
    "TablePlan",
    "brute_force_pairs",
    "choose_bands",
    "design_for",
    "hamming_pairs",
    "lsh_pairs",
    "permute_table",
]
