"""Frozen configurations. Each holds parameters only, validates them, and has a short stable tag.

A tag names every parameter that changes a fingerprint, so that two fingerprints with the same tag
are comparable and a store can refuse to mix configurations. This package sits at the bottom of
the import graph: it imports nothing of neardup but :mod:`neardup.errors`.

- :mod:`.text`: text extraction and site templates;
- :mod:`.prints`: shingles, exact levels, simhash, min-hash, sketches, keyword vectors;
- :mod:`.overlap`: S&GM98 chunks and overlap, SMFA, shingle paragraphs;
- :mod:`.store`: a persistent store;
- :mod:`.methods`: what configs know of each dedup method (:class:`MethodSpec`);
- :mod:`.dedup`: a batch ``dedup`` run.
"""

from __future__ import annotations

from neardup.config.dedup import DEFAULT_METHOD, DedupConfig, KeepPolicy
from neardup.config.method_configs import (
    DEFAULT_MAX_HAMMING,
    ChunkMethod,
    DedupRelation,
    SimHashMethod,
    SketchMethod,
)
from neardup.config.methods import (
    DEFAULT_MIN_RESEMBLANCE,
    MethodSpec,
    declare_method,
    method_names,
    method_spec,
    provide_methods,
    threshold_methods,
    threshold_refusal,
    withdraw_method,
)
from neardup.config.overlap import (
    CHUNK_KINDS,
    DEFAULT_MEMORY_LIMIT,
    ChunkConfig,
    OverlapConfig,
    ParagraphConfig,
    SmfaConfig,
    paper_min_shared,
    parse_bytes,
)
from neardup.config.prints import (
    ExactConfig,
    HashName,
    KeywordConfig,
    MinHashConfig,
    ShingleConfig,
    SimHashConfig,
    SketchConfig,
    SketchKind,
    Weighting,
)
from neardup.config.store import StoreConfig, TableSpec
from neardup.config.text import EXTRACTORS, Extractor, TemplateConfig, TextConfig

__all__ = [
    "CHUNK_KINDS",
    "DEFAULT_MAX_HAMMING",
    "DEFAULT_MEMORY_LIMIT",
    "DEFAULT_METHOD",
    "DEFAULT_MIN_RESEMBLANCE",
    "EXTRACTORS",
    "ChunkConfig",
    "ChunkMethod",
    "DedupConfig",
    "DedupRelation",
    "ExactConfig",
    "Extractor",
    "HashName",
    "KeepPolicy",
    "KeywordConfig",
    "MethodSpec",
    "MinHashConfig",
    "OverlapConfig",
    "ParagraphConfig",
    "ShingleConfig",
    "SimHashConfig",
    "SimHashMethod",
    "SketchConfig",
    "SketchKind",
    "SketchMethod",
    "SmfaConfig",
    "StoreConfig",
    "TableSpec",
    "TemplateConfig",
    "TextConfig",
    "Weighting",
    "declare_method",
    "method_names",
    "method_spec",
    "paper_min_shared",
    "parse_bytes",
    "provide_methods",
    "threshold_methods",
    "threshold_refusal",
    "withdraw_method",
]

