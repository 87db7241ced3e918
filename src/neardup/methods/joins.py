"""How a method finds its pairs in a batch run: the join kinds, each a value a unit names.

A :class:`~neardup.methods.unit.NearMethod` either names one join kind here (the engine runs
it out of core; Spark runs the kinds it has stages for, and the others on the driver) or holds
a ``find`` over prints held in memory. The engine implements each kind once; a method that
reuses a kind with its own parameters needs no engine code (one-permutation min-hash runs the
band join of k-permutation min-hash with its own :class:`Signer`).

- :class:`HammingTables`: 64-bit simhashes within ``max_hamming`` bits, through permuted
  tables (Manku, Jain and Das Sarma);
- :class:`SignatureBands`: equal LSH bands of a per-document signature (the threshold chooses
  the banding), verified on the shingle sets;
- :class:`SketchCounts`: Broder's sketches: shared sketch values counted per pair, or one
  shared super-shingle;
- :class:`ChunkOverlap`: S&GM's shared chunk fingerprints (sort-based or coarse counting);
- :class:`SmfaMatches`: Wang and Chen's single fingerprint, equal within a host's threshold;
- :class:`ParagraphIterations`: Pereira et al.'s iterations over shingle paragraphs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar, Protocol

import numpy as np

from neardup._types import F64, U64
from neardup.config import DedupConfig, MinHashConfig
from neardup.index.lsh import LSHBands, choose_bands
from neardup.methods.scoring import ScoredPairs

__all__ = ["LSH_FALSE_POSITIVE_WEIGHT", "ChunkOverlap", "HammingTables", "Join", "JoinKind",
           "ParagraphIterations", "SignatureBands", "Signer", "SketchCounts", "SmfaMatches"]

LSH_FALSE_POSITIVE_WEIGHT = 0.1
"""The weight of false positives against false negatives when the banding is chosen: the
candidates are verified exactly, so recall matters more."""


class Signer(Protocol):
    """A min-hash-like signature: equal slots of two signatures estimate the resemblance of
    the two sets."""

    @property
    def tag(self) -> str: ...

    def of_shingles(self, shingles: U64) -> U64: ...

    def of_canonical(self, canonical: bytes | str) -> U64: ...


class JoinKind:
    """What every join kind says of itself (the defaults; a kind overrides what differs)."""

    __slots__ = ()
    reuses_keys: ClassVar[bool] = False
    """A later ``--against`` run joins only its new documents' keys with these."""
    simhash_column: ClassVar[bool] = False
    """Each survivor's simhash is an output column."""


@dataclass(frozen=True, slots=True)
class HammingTables(JoinKind):
    """Candidates: documents whose simhashes differ in at most ``max_hamming`` bits; each
    survivor's simhash is an output column."""

    reuses_keys: ClassVar[bool] = True
    simhash_column: ClassVar[bool] = True


@dataclass(frozen=True, slots=True)
class SignatureBands(JoinKind):
    """Candidates: documents with an equal LSH band of their signatures (``signer`` builds the
    signer from the min-hash config: width, seed, shingles)."""

    signer: Callable[[MinHashConfig], Signer]
    reuses_keys: ClassVar[bool] = True

    def estimates(self, documents: ScoredPairs, config: DedupConfig) -> F64:
        """The share of equal signature slots of each pair of ``documents`` (evaluation's
        score of a signature method)."""
        minhash = config.of(MinHashConfig)
        signer, view = self.signer(minhash), documents.text
        signatures = np.stack([signer.of_canonical(text) for text in documents.canonical]) \
            if documents.canonical else np.empty((0, minhash.num_perm), dtype=np.uint64)
        equal = signatures[view.first] == signatures[view.second]
        return np.asarray(equal.mean(axis=1), dtype=np.float64)

    @staticmethod
    def banding(config: DedupConfig) -> LSHBands:
        """The bands and rows for the config's signature width and threshold."""
        return choose_bands(config.of(MinHashConfig).num_perm, config.threshold,
                            LSH_FALSE_POSITIVE_WEIGHT)


@dataclass(frozen=True, slots=True)
class SketchCounts(JoinKind):
    """Candidates: documents sharing sketch values (``supershingles``: one super-shingle),
    counted out of core; the counts estimate resemblance (or containment)."""

    supershingles: bool = False


@dataclass(frozen=True, slots=True)
class ChunkOverlap(JoinKind):
    """Candidates: documents sharing at least ``min_shared`` chunk fingerprints (S&GM)."""


@dataclass(frozen=True, slots=True)
class SmfaMatches(JoinKind):
    """Candidates: documents with equal single fingerprints (Wang and Chen)."""


@dataclass(frozen=True, slots=True)
class ParagraphIterations(JoinKind):
    """Candidates: documents sharing shingle paragraphs, over Pereira et al.'s iterations."""


Join = (HammingTables | SignatureBands | SketchCounts | ChunkOverlap | SmfaMatches
        | ParagraphIterations)
