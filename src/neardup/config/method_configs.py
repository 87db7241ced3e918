"""The configs of the methods whose parameters are more than one fingerprint config.

A method's own config is one frozen value held by :attr:`DedupConfig.params
<neardup.config.DedupConfig.params>`: min-hash and one-permutation min-hash take a
:class:`~neardup.config.MinHashConfig`, SMFA a :class:`~neardup.config.SmfaConfig`, shingle
paragraphs a :class:`~neardup.config.ParagraphConfig`, keyword vectors a
:class:`~neardup.config.KeywordConfig`; the three below join a fingerprint config with the
parameters of the method's search. Each method's spec names its type.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from neardup.config.checks import require
from neardup.config.overlap import ChunkConfig, OverlapConfig
from neardup.config.prints import SimHashConfig, SketchConfig

__all__ = ["DEFAULT_MAX_HAMMING", "ChunkMethod", "DedupRelation", "SimHashMethod", "SketchMethod"]

DEFAULT_MAX_HAMMING = 3
"""Manku et al.'s k for 64-bit simhashes of web pages."""

DedupRelation = Literal["resemblance", "contained"]


@dataclass(frozen=True, slots=True)
class SimHashMethod:
    """Charikar's simhash, pairs within ``max_hamming`` bits (Manku et al.)."""

    simhash: SimHashConfig = field(default_factory=SimHashConfig)
    max_hamming: int = DEFAULT_MAX_HAMMING

    def __post_init__(self) -> None:
        require(0 <= self.max_hamming <= 16, "max_hamming", self.max_hamming, "must be in 0..16")


@dataclass(frozen=True, slots=True)
class SketchMethod:
    """Broder's sketches (methods ``sketch`` and ``supershingle``).

    ``supershingle_size``: sketch values per super-shingle (``supershingle`` only);
    ``drop_common``: sketch shingles shared by more than this many documents are ignored
    (Broder: 1000; 0: none); ``relation="contained"`` (``sketch`` with MOD sketches): link each
    document to the document that contains at least the threshold of it, instead of pairing by
    resemblance."""

    sketch: SketchConfig = field(default_factory=SketchConfig)
    supershingle_size: int = 6
    drop_common: int = 1000
    relation: DedupRelation = "resemblance"

    def __post_init__(self) -> None:
        require(1 <= self.supershingle_size <= 64, "supershingle_size", self.supershingle_size,
                "must be in 1..64")
        require(self.drop_common >= 0, "drop_common", self.drop_common, "must be >= 0")
        require(self.relation in ("resemblance", "contained"), "relation", self.relation,
                "resemblance or contained")


@dataclass(frozen=True, slots=True)
class ChunkMethod:
    """S&GM98's chunking and all-pairs overlap (method ``chunks``); ``write_relations``: also
    write the FPrint-DocID relation and the URL and server maps as tables (not part of any tag:
    they change no fingerprint)."""

    chunks: ChunkConfig = field(default_factory=ChunkConfig)
    overlap: OverlapConfig = field(default_factory=OverlapConfig)
    write_relations: bool = False
