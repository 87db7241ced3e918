"""neardup: exact and near-duplicate detection for web crawls and text corpora."""

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
from neardup.sources import SourceStats, open_sources
from neardup.store import Store, StoreMatch, open_store
from neardup.text.canonical import canonical_text

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
