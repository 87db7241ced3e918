"""What a store keeps of one document: its prints (exact levels, simhash) and its sketch.

A pure function of (document, store config), run in worker processes when a batch is indexed.
The sketch (values and modulus) travels in ``DocumentPrints.features``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from neardup._types import U64
from neardup.config import DedupConfig, SimHashMethod, StoreConfig
from neardup.document import Document
from neardup.features.shingles import distinct
from neardup.fingerprints.sketch import Sketcher
from neardup.methods.fingerprinter import DocumentPrints, Fingerprinter

__all__ = ["SketchOf", "StoreFeatures", "features_of", "shared_fingerprinter",
           "store_fingerprinter"]


@dataclass(frozen=True, slots=True)
class StoreFeatures:
    """A document's sketch, its modulus, and (if the store keeps them) its shingle set."""

    sketch: U64
    modulus: int
    shingles: U64 | None = None


class SketchOf:
    """The :class:`StoreFeatures` of a document's canonical text; None without tokens."""

    def __init__(self, sketcher: Sketcher, keep_shingles: bool = False) -> None:
        self.sketcher = sketcher
        self.keep_shingles = keep_shingles

    def __call__(self, doc: Document, text: str, canonical: bytes) -> StoreFeatures | None:
        if not canonical:
            return None
        return self._of_shingles(self.sketcher.shingles_of(canonical))

    def of_tokens(self, doc: Document, text: str, canonical: bytes,
                  tokens: U64) -> StoreFeatures | None:
        """The same features from the canonical text's token hashes (``canonical_tokens``):
        the text is not scanned again."""
        if not canonical:
            return None
        if self.keep_shingles:
            return self._of_shingles(self.sketcher.shingles_of_tokens(tokens))
        sketch, modulus = self.sketcher.with_modulus_of_tokens(tokens)
        return StoreFeatures(sketch, modulus)

    def _of_shingles(self, hashes: U64) -> StoreFeatures:
        sketch, modulus = self.sketcher.with_modulus(hashes)
        return StoreFeatures(sketch, modulus, distinct(hashes) if self.keep_shingles else None)


def store_fingerprinter(
    config: StoreConfig, features: Callable[[Document, str, bytes], object] | None = None,
    *, queries: bool = False
) -> Fingerprinter[Any]:
    """The per-document stage of a store: simhash and exact levels, plus the sketch if kept
    (or whatever ``features`` computes instead); the prints carry no verification shingle set
    (a store keeps only the exact-level hash made from it). ``queries``: prints of queries,
    which look up the identical and lexical levels only (no shingle-level hash)."""
    dedup = DedupConfig(method="simhash", text=config.text, exact=config.exact,
                        params=SimHashMethod(config.simhash, min(config.max_k, 16)))
    if features is None and config.sketch is not None:
        features = SketchOf(Sketcher(config.sketch), config.keep_shingles)
    if features is None:
        return Fingerprinter(dedup, verify_sets=False, shingle_print=not queries)
    return Fingerprinter(dedup, features=features, verify_sets=False, shingle_print=not queries)


@functools.lru_cache(maxsize=8)
def shared_fingerprinter(config: StoreConfig) -> Fingerprinter[Any]:
    """:func:`store_fingerprinter` built once per config in a process (it holds no state
    between documents: a crawler's one-page adds do not set up its permutations each time)."""
    return store_fingerprinter(config)


def features_of(prints: DocumentPrints) -> StoreFeatures | None:
    """The features a store fingerprinter put in ``prints``."""
    features = prints.features
    return features if isinstance(features, StoreFeatures) else None
