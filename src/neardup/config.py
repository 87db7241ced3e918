"""Frozen configurations. Each holds parameters only, validates them, and has a short stable tag.

A tag names every parameter that changes a fingerprint, so that two fingerprints with the same tag
are comparable and a store can refuse to mix configurations.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from neardup.errors import ConfigError
from neardup.overlap.config import ChunkConfig, OverlapConfig, ParagraphConfig, SmfaConfig

__all__ = [
    "DEDUP_METHODS",
    "DEFAULT_MIN_RESEMBLANCE",
    "DEFAULT_THRESHOLDS",
    "EXTRACTORS",
    "ChunkConfig",
    "DedupConfig",
    "ExactConfig",
    "KeywordConfig",
    "MinHashConfig",
    "OverlapConfig",
    "ParagraphConfig",
    "ShingleConfig",
    "SimHashConfig",
    "SketchConfig",
    "SmfaConfig",
    "StoreConfig",
    "TemplateConfig",
    "TextConfig",
]

HashName = Literal["xxh3", "md5"]
DEDUP_METHODS = ("exact", "simhash", "minhash", "sketch", "supershingle", "chunks", "smfa",
                 "shingle-paragraphs", "keyword")
"""The methods ``dedup`` runs after the exact levels (``exact`` runs none)."""
DEFAULT_THRESHOLDS = {"minhash": 0.8, "sketch": 0.5, "keyword": 0.9}
"""``DedupConfig.threshold`` when it is left at 0: per method (Broder clustered at 50%
resemblance; keyword vectors: cosine 0.9); 0.8 for a method not listed."""
DEFAULT_MIN_RESEMBLANCE = 0.5
"""The verification rule of the methods whose candidates carry no resemblance threshold of their
own (simhash, supershingle, chunks, smfa, shingle-paragraphs): a pair is kept when the exact
resemblance of its two shingle sets is at least this (measured: see the README's "Verification")."""
DedupRelation = Literal["resemblance", "contained"]
Extractor = Literal["full", "main", "trafilatura"]
EXTRACTORS: tuple[Extractor, ...] = ("full", "main", "trafilatura")
"""HTML to text: resiliparse's full text, resiliparse's main content, trafilatura's extraction."""
KeepPolicy = Literal["first", "longest", "earliest", "shortest-url"]
Weighting = Literal["tf", "binary"]
_LANGUAGE = re.compile(r"[a-z][a-z_]*")


def _require(condition: bool, name: str, value: object, rule: str) -> None:
    if not condition:
        raise ConfigError(f"{name}={value!r}: {rule}")


@dataclass(frozen=True, slots=True)
class TextConfig:
    """How a payload becomes text: ``extract`` is ``full`` (resiliparse's full text, default),
    ``main`` (resiliparse's main content) or ``trafilatura`` (the ``quality`` extra);
    ``thai_words`` cuts runs of Thai letters into words (PyThaiNLP, the ``thai`` extra).

    ``main_content=True`` is the older spelling of ``extract="main"``; the two fields always
    agree after construction (stores written before ``extract`` existed read back as before).
    """

    extract: Extractor = "full"
    main_content: bool = False
    thai_words: bool = False

    def __post_init__(self) -> None:
        _require(self.extract in EXTRACTORS, "extract", self.extract, "full, main or trafilatura")
        if self.main_content and self.extract == "full":
            object.__setattr__(self, "extract", "main")
        object.__setattr__(self, "main_content", self.extract == "main")

    @property
    def tag(self) -> str:
        return f"text:{self.extract}" + (":thai-words" if self.thai_words else "")


@dataclass(frozen=True, slots=True)
class TemplateConfig:
    """Site templates removed from the evidence of the near methods (Bar-Yossef and
    Rajagopalan 2002, template detection by frequency): on a host with at least ``min_pages``
    pages (exact-level survivors), a verification shingle found on more than ``share`` of them
    is template, not content. ``enabled=False`` keeps every shingle."""

    enabled: bool = True
    share: float = 0.5
    min_pages: int = 10

    def __post_init__(self) -> None:
        _require(0.0 < self.share < 1.0, "template share", self.share, "must be in (0, 1)")
        _require(2 <= self.min_pages <= 10**9, "template min_pages", self.min_pages,
                 "must be >= 2")

    @property
    def tag(self) -> str:
        return f"templates:{self.share:g}:p{self.min_pages}" if self.enabled else "templates:off"


@dataclass(frozen=True, slots=True)
class ShingleConfig:
    """Contiguous w-token shingles over the canonical token sequence, hashed to 64 bits."""

    width: int = 5
    seed: int = 0

    def __post_init__(self) -> None:
        _require(1 <= self.width <= 64, "width", self.width, "must be in 1..64")
        _require(0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1")

    @property
    def tag(self) -> str:
        return f"w{self.width}s{self.seed}"


@dataclass(frozen=True, slots=True)
class ExactConfig:
    """The three whole-document levels: identical, lexically equivalent, shingle-equivalent."""

    hash: HashName = "xxh3"

    @property
    def tag(self) -> str:
        return f"exact:{self.hash}"


@dataclass(frozen=True, slots=True)
class SimHashConfig:
    """Charikar's simhash over weighted shingle features (Manku et al.: f = 64).

    Defaults measured on the trafilatura pages (391 pages, near-copies made by inserting a
    30-word ad, changing a date, or editing 5 words): distinct single tokens (w = 1, binary
    weights) kept the most near-copies within k = 3 (77%, 96%, 92%) with no unrelated pair
    within 3 bits; 3-word shingles with tf weights kept 57%, 91%, 61%.
    """

    shingles: ShingleConfig = field(default_factory=lambda: ShingleConfig(width=1))
    weighting: Weighting = "binary"
    bits: int = 64
    stop_words: str | None = None
    """Remove this language's stop words from the tokens first (Manku: ``english``); None: keep."""
    stemming: str | None = None
    """Stem the tokens with this language's Snowball stemmer (Manku: ``english``); None: don't."""

    def __post_init__(self) -> None:
        _require(self.bits == 64, "bits", self.bits, "only 64-bit simhash is supported")
        _require(self.weighting in ("tf", "binary"), "weighting", self.weighting, "tf or binary")
        for name, language in (("stop_words", self.stop_words), ("stemming", self.stemming)):
            _require(language is None or _LANGUAGE.fullmatch(language) is not None, name,
                     language, "a language name in lower case, such as english")

    @property
    def tag(self) -> str:
        terms = (f":stop-{self.stop_words}" if self.stop_words else "") + (
            f":stem-{self.stemming}" if self.stemming else "")
        return f"simhash:f{self.bits}:{self.shingles.tag}:{self.weighting}{terms}"


@dataclass(frozen=True, slots=True)
class MinHashConfig:
    """k-permutation min-hash over 64-bit shingle hashes."""

    num_perm: int = 128
    seed: int = 1
    shingles: ShingleConfig = field(default_factory=ShingleConfig)

    def __post_init__(self) -> None:
        _require(1 <= self.num_perm <= 4096, "num_perm", self.num_perm, "must be in 1..4096")
        _require(0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1")

    @property
    def tag(self) -> str:
        return f"minhash:k{self.num_perm}:seed{self.seed}:{self.shingles.tag}"


SketchKind = Literal["min", "mod"]


@dataclass(frozen=True, slots=True)
class SketchConfig:
    """Broder's sketches of the w-shingle set under one random permutation of the shingle space.

    ``kind="min"``: MIN_s, the ``size`` smallest permuted shingles (fixed size; resemblance only).
    ``kind="mod"``: MOD_m, the permuted shingles divisible by m = ``size`` (grows with the
    document; resemblance and containment). Broder's system: 10-word shingles, 40-bit shingle
    fingerprints, 1 shingle in 25 kept. ``adaptive = N > 0`` (MOD only) gives each document its
    own modulus ``size * 2**i``, the smallest that keeps its expected sample under 2N (Broder: 50
    to 100 samples); a pair is then compared under the larger of its two moduli.
    """

    kind: SketchKind = "mod"
    size: int = 25
    shingles: ShingleConfig = field(default_factory=lambda: ShingleConfig(width=10))
    bits: int = 40
    seed: int = 1
    adaptive: int = 0

    def __post_init__(self) -> None:
        _require(self.kind in ("min", "mod"), "kind", self.kind, "min or mod")
        _require(1 <= self.size <= 2**20, "size", self.size, "must be in 1..2**20")
        _require(self.bits in (40, 64), "bits", self.bits, "40 or 64")
        _require(0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1")
        _require(0 <= self.adaptive <= 2**16, "adaptive", self.adaptive, "must be in 0..65536")
        _require(self.kind == "mod" or self.adaptive == 0, "adaptive", self.adaptive,
                 "per-document moduli exist for MOD sketches only")

    @property
    def tag(self) -> str:
        adaptive = f":a{self.adaptive}" if self.adaptive else ""
        return (f"sketch:{self.kind}{self.size}{adaptive}:b{self.bits}:seed{self.seed}:"
                f"{self.shingles.tag}")


@dataclass(frozen=True, slots=True)
class KeywordConfig:
    """Keyword vectors (the vector-space baseline SMFA is compared with, WebGather's "TW"): the
    ``keywords`` most frequent terms of a document (canonical tokens without ``stop_words``,
    stemmed with ``stemming`` when set), weighted by term frequency, compared by cosine.
    ``drop_common``: keywords shared by more documents than this pair no one (0: keep all)."""

    keywords: int = 20
    stop_words: str | None = "english"
    stemming: str | None = None
    drop_common: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        _require(1 <= self.keywords <= 10_000, "keywords", self.keywords, "must be in 1..10000")
        for name, language in (("stop_words", self.stop_words), ("stemming", self.stemming)):
            _require(language is None or _LANGUAGE.fullmatch(language) is not None, name,
                     language, "a language name in lower case, such as english")
        _require(self.drop_common >= 0, "drop_common", self.drop_common, "must be >= 0")
        _require(0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1")

    @property
    def tag(self) -> str:
        return (f"keyword:n{self.keywords}:tf:stop-{self.stop_words or 'none'}:"
                f"stem-{self.stemming or 'none'}:drop{self.drop_common}:s{self.seed}")


TableSpec = tuple[tuple[tuple[int, int], ...], int]
"""One permuted table: its bit segments (start, width) in placement order, and its prefix bits."""


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """What a persistent store fingerprints and indexes; fixed when the store is created.

    ``tables`` are the permuted Hamming tables (see :class:`neardup.index.hamming.TablePlan`);
    empty means the smallest design for ``max_k``: k + 1 equal blocks, each leading one table.
    ``sketch`` keeps Broder's sketch of every document, for resemblance and containment scores;
    None keeps none. ``keep_shingles`` also keeps every document's full shingle set (the
    sketch's shingles), so that queries report exact resemblance and containment beside the
    estimates (about 8 bytes per distinct shingle). ``compress`` stores the tables compressed
    (Manku, section 3.2).
    """

    text: TextConfig = field(default_factory=TextConfig)
    exact: ExactConfig = field(default_factory=ExactConfig)
    simhash: SimHashConfig = field(default_factory=SimHashConfig)
    max_k: int = 3
    tables: tuple[TableSpec, ...] = ()
    compress: bool = False
    sketch: SketchConfig | None = field(default_factory=SketchConfig)
    keep_shingles: bool = False
    sketch_clusters: float | None = None
    """Cluster by Broder's sketches instead of simhash: documents whose estimated resemblance
    reaches this value join one cluster (Broder: 0.5), which lost-and-found follows; None:
    clusters of simhashes within ``max_k``."""
    templates: TemplateConfig = field(default_factory=TemplateConfig)
    """Per-host template values (sketch values, kept shingles) left out when two pages are
    compared: the batch rule, on counts the store keeps up to date (:mod:`neardup.store.hosts`)."""

    def __post_init__(self) -> None:
        _require(0 <= self.max_k <= 16, "max_k", self.max_k, "must be in 0..16")
        if self.sketch_clusters is not None:
            _require(self.sketch is not None and 0.0 < self.sketch_clusters <= 1.0,
                     "sketch_clusters", self.sketch_clusters,
                     "a resemblance in (0, 1], with a sketch config")
        _require(self.sketch is not None or not self.keep_shingles, "keep_shingles",
                 self.keep_shingles, "needs a sketch config (its shingles are the ones kept)")
        for segments, prefix_bits in self.tables:
            covered = sorted(b for start, width in segments for b in range(start, start + width))
            _require(covered == list(range(64)), "tables", segments,
                     "each table's segments must cover bits 0..63 once")
            _require(1 <= prefix_bits <= 64, "prefix_bits", prefix_bits, "must be in 1..64")

    @property
    def tags(self) -> dict[str, str]:
        tags = {"text": self.text.tag, "exact": self.exact.tag, "simhash": self.simhash.tag,
                "index": f"k{self.max_k}:t{len(self.tables) or self.max_k + 1}"
                         f"{':compressed' if self.compress else ''}"}
        if self.sketch is not None:
            tags["sketch"] = self.sketch.tag + (":shingles" if self.keep_shingles else "")
        if self.sketch_clusters is not None:
            tags["clusters"] = f"sketch:r{self.sketch_clusters}"
        if self.sketch is not None:
            tags["templates"] = self.templates.tag
        return tags


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
    max_hamming: int = 3
    threshold: float = 0.0
    """Resemblance (or, with ``relation="contained"``, containment) threshold; 0 means the
    method's default, ``DEFAULT_THRESHOLDS`` (min-hash 0.8, sketch 0.5), set at construction."""
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
        _require(self.method in DEDUP_METHODS, "method", self.method,
                 f"one of {', '.join(DEDUP_METHODS)}")
        _require(0 <= self.max_hamming <= 16, "max_hamming", self.max_hamming, "must be in 0..16")
        if self.threshold == 0.0:
            object.__setattr__(self, "threshold", DEFAULT_THRESHOLDS.get(self.method, 0.8))
        _require(0.0 < self.threshold <= 1.0, "threshold", self.threshold, "must be in (0, 1]")
        self._check_broder()
        if self.min_resemblance is not None:
            _require(0.0 <= self.min_resemblance <= 1.0, "min_resemblance",
                     self.min_resemblance, "must be in [0, 1]")
        _require(self.keep in ("first", "longest", "earliest", "shortest-url"), "keep", self.keep,
                 "one of first, longest, earliest, shortest-url")
        _require(not self.write_relations or self.method == "chunks", "write_relations",
                 self.write_relations, "the FPrint-DocID relation is method 'chunks''s")

    def _check_broder(self) -> None:
        _require(1 <= self.supershingle_size <= 64, "supershingle_size", self.supershingle_size,
                 "must be in 1..64")
        _require(self.drop_common >= 0, "drop_common", self.drop_common, "must be >= 0")
        _require(self.relation in ("resemblance", "contained"), "relation", self.relation,
                 "resemblance or contained")
        if self.relation == "contained":
            _require(self.method == "sketch" and self.sketch.kind == "mod", "relation",
                     self.relation, "needs method 'sketch' with MOD sketches (containment)")
        if self.method == "supershingle":
            _require(self.sketch.adaptive == 0, "sketch.adaptive", self.sketch.adaptive,
                     "super-shingles need one modulus for every document")

    @property
    def resemblance_floor(self) -> float:
        """The resemblance a candidate pair needs to be kept after verification: the given
        ``min_resemblance``, else the threshold of the methods that estimate resemblance
        (min-hash, sketch), else :data:`DEFAULT_MIN_RESEMBLANCE`."""
        if self.min_resemblance is not None:
            return self.min_resemblance
        if self.method in ("minhash", "sketch"):
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
        if self.method == "simhash":
            tags["simhash"] = self.simhash.tag
        elif self.method == "minhash":
            tags["minhash"] = self.minhash.tag
        elif self.method in ("sketch", "supershingle"):
            tags["sketch"] = self.sketch.tag
            if self.method == "supershingle":
                tags["supershingle"] = f"supershingle:n{self.supershingle_size}"
        elif self.method == "chunks":
            tags["chunks"] = self.overlap.tag(self.chunks)
        elif self.method == "smfa":
            tags["smfa"] = self.smfa.tag
        elif self.method == "shingle-paragraphs":
            tags["paragraphs"] = self.paragraphs.tag
        elif self.method == "keyword":
            tags["keyword"] = f"{self.keyword.tag}:cos{self.threshold}"
        return tags
