"""neardup: exact and near-duplicate detection for web crawls and text corpora.

The public names are imported on first use (PEP 562), so that ``import neardup`` and the
command line's ``--help`` start without loading numpy, numba or pyarrow.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

import neardup.config.methods as _config_methods

if _typing.TYPE_CHECKING:
    from neardup.analysis.pairview import PairView, compare_texts
    from neardup.config import (
        DedupConfig,
        ExactConfig,
        MinHashConfig,
        ShingleConfig,
        SimHashConfig,
        SketchConfig,
        StoreConfig,
        TextConfig,
    )
    from neardup.document import Document
    from neardup.errors import ConfigError, NeardupError, OutputError, SourceError
    from neardup.fingerprints import (
        MinHash,
        SimHash,
        Sketcher,
        estimate_containment,
        estimate_jaccard,
        estimate_resemblance,
        simhash_from_hashes,
    )
    from neardup.index import HammingDesign, LSHBands, hamming_pairs, lsh_pairs
    from neardup.index.segmented import HammingIndex
    from neardup.pipeline import DedupResult, find_duplicates
    from neardup.pipeline.library import dedup
    from neardup.sources import RowFields, SourceStats, open_sources
    from neardup.store import Store, StoreMatch, open_store
    from neardup.text.canonical import canonical_text

_HOMES = {
    "neardup.analysis.pairview": ("PairView", "compare_texts"),
    "neardup.config": ("DedupConfig", "ExactConfig", "MinHashConfig", "ShingleConfig",
                       "SimHashConfig", "SketchConfig", "StoreConfig", "TextConfig"),
    "neardup.document": ("Document",),
    "neardup.errors": ("ConfigError", "NeardupError", "OutputError", "SourceError"),
    "neardup.fingerprints": ("MinHash", "SimHash", "Sketcher", "estimate_containment",
                             "estimate_jaccard", "estimate_resemblance", "simhash_from_hashes"),
    "neardup.index": ("HammingDesign", "LSHBands", "hamming_pairs", "lsh_pairs"),
    "neardup.index.segmented": ("HammingIndex",),
    "neardup.pipeline": ("DedupResult", "find_duplicates"),
    "neardup.pipeline.library": ("dedup",),
    "neardup.sources": ("RowFields", "SourceStats", "open_sources"),
    "neardup.store": ("Store", "StoreMatch", "open_store"),
    "neardup.text.canonical": ("canonical_text",),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

_config_methods.provide_methods(lambda: _importlib.import_module("neardup.methods.registry"))

__all__ = [
    "ConfigError",
    "DedupConfig",
    "DedupResult",
    "Document",
    "ExactConfig",
    "HammingDesign",
    "HammingIndex",
    "LSHBands",
    "MinHash",
    "MinHashConfig",
    "NeardupError",
    "OutputError",
    "PairView",
    "RowFields",
    "ShingleConfig",
    "SimHash",
    "SimHashConfig",
    "SketchConfig",
    "Sketcher",
    "SourceError",
    "SourceStats",
    "Store",
    "StoreConfig",
    "StoreMatch",
    "TextConfig",
    "canonical_text",
    "compare_texts",
    "dedup",
    "estimate_containment",
    "estimate_jaccard",
    "estimate_resemblance",
    "find_duplicates",
    "hamming_pairs",
    "lsh_pairs",
    "open_sources",
    "open_store",
    "simhash_from_hashes",
]


def __getattr__(name: str) -> object:
    if name not in _HOME:
        raise AttributeError(f"module 'neardup' has no attribute {name!r}")
    value = getattr(_importlib.import_module(_HOME[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names and the module's dunders (the helpers of this file stay out)."""
    dunders = {name for name in globals() if name.startswith("__") and name.endswith("__")}
    return sorted(dunders | set(__all__))
