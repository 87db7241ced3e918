"""The registry of near-duplicate methods that ``dedup`` can run after the exact levels.

A method has a name (``DedupConfig.method``), an optional per-document feature extractor that runs
in the worker processes (its result lands in ``DocumentPrints.features``), and a ``find`` function
that turns the documents surviving the exact levels into verified pairs. To add a method, write its
module and list its :class:`NearMethod` in ``_METHODS`` below.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig
from neardup.document import Document
from neardup.errors import ConfigError
from neardup.pipeline.chunks import chunk_features, find_chunks
from neardup.pipeline.fingerprint import DocumentPrints
from neardup.pipeline.keyword import find_keyword, keyword_features
from neardup.pipeline.near import NearStage, find_near
from neardup.pipeline.paragraphs import find_paragraphs, paragraph_features
from neardup.pipeline.sketch_method import find_sketch, find_supershingle, sketch_features
from neardup.pipeline.smfa import find_smfa, smfa_features

__all__ = ["FeatureExtractor", "NearMethod", "near_method"]

I64 = npt.NDArray[np.int64]
FeatureExtractor = Callable[[Document, str, bytes], object]
"""(document, extracted text, canonical bytes) -> the method's features of the document."""


@dataclass(frozen=True, slots=True)
class NearMethod:
    """How one method finds near-duplicate pairs among the exact-level survivors."""

    name: str
    find: Callable[[DedupConfig, list[DocumentPrints], I64], NearStage]
    features: Callable[[DedupConfig], FeatureExtractor] | None = None


def _fingerprint_method(config: DedupConfig, prints: list[DocumentPrints],
                        survivors: I64) -> NearStage:
    """Simhash (Hamming tables) or min-hash (LSH bands) over the fingerprints the spine computes."""
    chosen = [prints[i] for i in survivors.tolist()]
    simhashes = np.array([p.simhash for p in chosen], dtype=np.uint64)
    signatures = None
    if config.method == "minhash":
        width = config.minhash.num_perm
        signatures = (np.stack([p.signature for p in chosen if p.signature is not None])
                      if chosen else np.empty((0, width), dtype=np.uint64))
    return find_near(config, survivors, simhashes, signatures, [p.shingles for p in chosen])


_METHODS: tuple[NearMethod, ...] = (
    NearMethod("simhash", _fingerprint_method),
    NearMethod("minhash", _fingerprint_method),
    NearMethod("sketch", find_sketch, sketch_features),
    NearMethod("supershingle", find_supershingle, sketch_features),
    NearMethod("chunks", find_chunks, chunk_features),
    NearMethod("smfa", find_smfa, smfa_features),
    NearMethod("shingle-paragraphs", find_paragraphs, paragraph_features),
    NearMethod("keyword", find_keyword, keyword_features),
)
_BY_NAME = {method.name: method for method in _METHODS}


def near_method(name: str) -> NearMethod | None:
    """The method called ``name``; None for ``exact`` (no near stage)."""
    if name == "exact":
        return None
    if name not in _BY_NAME:
        raise ConfigError(f"method={name!r}: no such near-duplicate method")
    return _BY_NAME[name]
