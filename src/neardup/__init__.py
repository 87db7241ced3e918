"""neardup: exact and near-duplicate detection for web crawls and text corpora."""

from neardup.config import (
    DedupConfig,
    ExactConfig,
    MinHashConfig,
    ShingleConfig,
    SimHashConfig,
    TextConfig,
)
from neardup.document import Document
from neardup.errors import ConfigError, NeardupError, OutputError, SourceError
from neardup.fingerprints import MinHash, SimHash, estimate_jaccard, simhash_from_hashes
from neardup.index import HammingDesign, LSHBands, hamming_pairs, lsh_pairs
from neardup.pipeline import DedupResult, find_duplicates
from neardup.sources import SourceStats, open_sources
from neardup.text.canonical import canonical_text

__all__ = [
    "ConfigError",
    "DedupConfig",
    "DedupResult",
    "Document",
    "ExactConfig",
    "HammingDesign",
    "LSHBands",
    "MinHash",
    "MinHashConfig",
    "NeardupError",
    "OutputError",
    "ShingleConfig",
    "SimHash",
    "SimHashConfig",
    "SourceError",
    "SourceStats",
    "TextConfig",
    "canonical_text",
    "estimate_jaccard",
    "find_duplicates",
    "hamming_pairs",
    "lsh_pairs",
    "open_sources",
    "simhash_from_hashes",
]
