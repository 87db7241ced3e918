"""What a store keeps of one document: its prints (exact levels, simhash) and its sketch.

A pure function of (document, store config), run in worker processes when a batch is indexed.
The sketch (values and modulus) travels in ``DocumentPrints.features``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig, StoreConfig
from neardup.document import Document
from neardup.fingerprints.sketch import Sketcher
from neardup.pipeline.fingerprint import DocumentPrints, Fingerprinter

__all__ = ["SketchOf", "sketch_of", "store_fingerprinter"]

U64 = npt.NDArray[np.uint64]


class SketchOf:
    """The (sketch, modulus) of a document's canonical text; None for a text without tokens."""

    def __init__(self, sketcher: Sketcher) -> None:
        self.sketcher = sketcher

    def __call__(self, doc: Document, text: str, canonical: bytes) -> tuple[U64, int] | None:
        if not canonical:
            return None
        return self.sketcher.with_modulus(self.sketcher.shingles_of(canonical))


def store_fingerprinter(
    config: StoreConfig, features: Callable[[Document, str, bytes], object] | None = None
) -> Fingerprinter:
    """The per-document stage of a store: simhash and exact levels, plus the sketch if kept
    (or whatever ``features`` computes instead)."""
    dedup = DedupConfig(method="simhash", text=config.text, exact=config.exact,
                        simhash=config.simhash, max_hamming=min(config.max_k, 16))
    if features is None and config.sketch is not None:
        features = SketchOf(Sketcher(config.sketch))
    return Fingerprinter(dedup, features=features)


def sketch_of(prints: DocumentPrints) -> tuple[U64, int] | None:
    """The sketch a store fingerprinter put in ``prints``."""
    features = prints.features
    return features if isinstance(features, tuple) else None
