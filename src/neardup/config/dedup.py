"""The config of a batch ``dedup`` run: method, parameters, verification, keep policy.

Method-specific rules (default threshold, tags, checks) come from the method's spec
(:mod:`neardup.config.methods`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from neardup.config.checks import require as _require
from neardup.config.methods import DEFAULT_MIN_RESEMBLANCE, method_names, method_spec
from neardup.config.overlap import ChunkConfig, OverlapConfig, ParagraphConfig, SmfaConfig
from neardup.config.prints import (
    ExactConfig,
    KeywordConfig,
    MinHashConfig,
    ShingleConfig,
    SimHashConfig,
    SketchConfig,
)
from neardup.config.text import TemplateConfig, TextConfig

__all__ = ["DEFAULT_MAX_HAMMING", "DedupConfig", "DedupRelation", "KeepPolicy"]

DEFAULT_MAX_HAMMING = 3
"""Manku et al.'s k for 64-bit simhashes of web pages."""

DedupRelation = Literal["resemblance", "contained"]
KeepPolicy = Literal["first", "longest", "earliest", "shortest-url"]


@dataclass(frozen=True, slots=True)
class DedupConfig:
    """Everything a batch `dedup` run depends on.

    The defaults (min-hash at 0.8 over full text, site templates removed) were chosen on the
    template benchmark, Webis CopyCat and the demo together (README, "Choosing the defaults").
    """

    method: str = "minhash"
    text: TextConfig = field(default_factory=TextConfig)
    exact: ExactConfig = field(default_factory=ExactConfig)
    verify_shingles: ShingleConfig = field(default_factory=ShingleConfig)
    simhash: SimHashConfig = field(default_factory=SimHashConfig)
    minhash: MinHashConfig = field(default_factory=MinHashConfig)
    max_hamming: int = DEFAULT_MAX_HAMMING
    threshold: float = 0.0
    """Resemblance (or, with ``relation="contained"``, containment) threshold; 0 means the
    method's default (its spec's ``default_threshold``: min-hash 0.8, sketch 0.5, keyword
    0.9), set at construction."""
    min_resemblance: float | None = None
    keep: KeepPolicy = "first"
    links: bool = False
    """Extract the out-links of HTML pages (the ``links`` table); not part of any tag: links
    change no fingerprint."""
    sketch: SketchConfig = field(default_factory=SketchConfig)
    """Broder's sketches (methods ``sketch`` and ``supershingle``)."""
    supershingle_size: int = 6
    """Sketch values per super-shingle (method ``supershingle``)."""
    drop_common: int = 1000
    """Ignore sketch shingles shared by more than this many documents (Broder: 1000); 0: none."""
    relation: DedupRelation = "resemblance"
    """``contained`` (method ``sketch`` with MOD sketches): link each document to the document
    that contains at least ``threshold`` of it, instead of pairing by resemblance."""
    chunks: ChunkConfig = field(default_factory=ChunkConfig)
    """S&GM98's chunking (method ``chunks``)."""
    overlap: OverlapConfig = field(default_factory=OverlapConfig)
    """S&GM98's all-pairs overlap: T, sort or coarse counting (method ``chunks``)."""
    smfa: SmfaConfig = field(default_factory=SmfaConfig)
    """Wang & Chen's single MD5 fingerprint (method ``smfa``)."""
    paragraphs: ParagraphConfig = field(default_factory=ParagraphConfig)
    """Pereira et al.'s shingle paragraphs (method ``shingle-paragraphs``)."""
    templates: TemplateConfig = field(default_factory=TemplateConfig)
    """Per-host template shingles left out of the near methods' evidence."""
    keyword: KeywordConfig = field(default_factory=KeywordConfig)
    """Keyword vectors, cosine >= ``threshold`` (method ``keyword``)."""
    write_relations: bool = False
    """Method ``chunks``: also write S&GM98's FPrint-DocID relation and the URL and server maps
    as tables; not part of any tag (they change no fingerprint)."""

    def __post_init__(self) -> None:
        names = method_names()
        _require(self.method in names, "method", self.method, f"one of {', '.join(names)}")
        spec = method_spec(self.method)
        _require(0 <= self.max_hamming <= 16, "max_hamming", self.max_hamming, "must be in 0..16")
        if self.threshold == 0.0:
            object.__setattr__(self, "threshold", spec.default_threshold)
        _require(0.0 < self.threshold <= 1.0, "threshold", self.threshold, "must be in (0, 1]")
        _require(1 <= self.supershingle_size <= 64, "supershingle_size", self.supershingle_size,
                 "must be in 1..64")
        _require(self.drop_common >= 0, "drop_common", self.drop_common, "must be >= 0")
        _require(self.relation in ("resemblance", "contained"), "relation", self.relation,
                 "resemblance or contained")
        _require(self.relation == "resemblance" or spec.containment, "relation", self.relation,
                 "needs method 'sketch' with MOD sketches (containment)")
        if self.min_resemblance is not None:
            _require(0.0 <= self.min_resemblance <= 1.0, "min_resemblance",
                     self.min_resemblance, "must be in [0, 1]")
        _require(self.keep in ("first", "longest", "earliest", "shortest-url"), "keep", self.keep,
                 "one of first, longest, earliest, shortest-url")
        _require(not self.write_relations or spec.relations, "write_relations",
                 self.write_relations, "the FPrint-DocID relation is method 'chunks''s")
        spec.check(self)

    @property
    def resemblance_floor(self) -> float:
        """The resemblance a candidate pair needs to be kept after verification: the given
        ``min_resemblance``, else the threshold of the methods that estimate resemblance
        (min-hash, sketch), else :data:`DEFAULT_MIN_RESEMBLANCE`."""
        if self.min_resemblance is not None:
            return self.min_resemblance
        if method_spec(self.method).estimates:
            return self.threshold
        return DEFAULT_MIN_RESEMBLANCE

    @property
    def verification(self) -> dict[str, object]:
        """The rule every near pair passes on the real shingle sets, by the pair's relation:
        ``near`` pairs need resemblance >= the floor; ``contained`` pairs (``relation=
        "contained"``) need the exact containment of one document in the other >= threshold."""
        if self.relation == "contained":
            return {"relation": "contained", "rule": "containment",
                    "threshold": self.threshold}
        return {"relation": "near", "rule": "resemblance", "threshold": self.resemblance_floor}

    @property
    def tags(self) -> dict[str, str]:
        tags = {"text": self.text.tag, "exact": self.exact.tag,
                "verify": f"shingles:{self.verify_shingles.tag}",
                "templates": self.templates.tag}
        tags.update(method_spec(self.method).tags(self))
        return tags
