"""Candidate search: permuted Hamming tables and LSH bands."""

from neardup.index.compressed import CompressedTable
from neardup.index.hamming import (
    HammingDesign,
    TablePlan,
    brute_force_pairs,
    design_for,
    hamming_pairs,
    permute_table,
)
from neardup.index.lsh import LSHBands, choose_bands, lsh_pairs
from neardup.index.planner import Plan, plan, tables_needed

__all__ = [
    "CompressedTable",
    "HammingDesign",
    "LSHBands",
    "Plan",
    "TablePlan",
    "brute_force_pairs",
    "choose_bands",
    "design_for",
    "hamming_pairs",
    "lsh_pairs",
    "permute_table",
    "plan",
    "tables_needed",
]
