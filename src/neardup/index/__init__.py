"""Candidate search: permuted Hamming tables and LSH bands.

The names below are imported on first use (PEP 562): a run that needs LSH bands alone
(``neardup.index.lsh``) loads neither the compressed tables nor the planner.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

if _typing.TYPE_CHECKING:
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

_HOMES = {
    "neardup.index.compressed": ("CompressedTable",),
    "neardup.index.hamming": ("HammingDesign", "TablePlan", "brute_force_pairs", "design_for",
                              "hamming_pairs", "permute_table"),
    "neardup.index.lsh": ("LSHBands", "choose_bands", "lsh_pairs"),
    "neardup.index.planner": ("Plan", "plan", "tables_needed"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

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


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'neardup.index' has no attribute {name!r}")
    value = getattr(_importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the module's dunders (the helpers of this file stay out)."""
    dunders = {name for name in globals() if name.startswith("__") and name.endswith("__")}
    return sorted(dunders | set(__all__))
