"""Configs of the fingerprint families: shingles, exact levels, simhash, min-hash, sketches,
keyword vectors. Frozen, slotted, validated in ``__post_init__``, each with a short stable tag."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from neardup.config.checks import LANGUAGE as _LANGUAGE
from neardup.config.checks import require as _require

__all__ = ["ExactConfig", "HashName", "KeywordConfig", "MinHashConfig", "ShingleConfig",
           "SimHashConfig", "SketchConfig", "SketchKind", "Weighting"]

HashName = Literal["xxh3", "md5"]
Weighting = Literal["tf", "binary"]


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

