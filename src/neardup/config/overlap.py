"""Configurations of the chunk-overlap methods: S&GM98 chunks, SMFA and Pereira's paragraphs.

Frozen, slotted, validated in ``__post_init__`` (a :class:`~neardup.errors.ConfigError` names the
bad value), each with a short stable ``tag``. :class:`neardup.config.DedupConfig` holds one of each.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from neardup.errors import ConfigError

__all__ = [
    "CHUNK_KINDS",
    "DEFAULT_MEMORY_LIMIT",
    "ChunkConfig",
    "OverlapConfig",
    "ParagraphConfig",
    "SmfaConfig",
    "paper_min_shared",
    "parse_bytes",
]

ChunkKind = Literal["document", "lines", "sentences", "paragraphs", "words", "shingle-paragraphs"]
CHUNK_KINDS: tuple[ChunkKind, ...] = (
    "document", "lines", "sentences", "paragraphs", "words", "shingle-paragraphs")
_SIZED = ("lines", "words")
OverlapAlgorithm = Literal["sort", "coarse"]
_SIZE = re.compile(r"(\d+)\s*([kmgt]?)i?b?", re.IGNORECASE)
_UNITS = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}


def _require(condition: bool, name: str, value: object, rule: str) -> None:
    if not condition:
        raise ConfigError(f"{name}={value!r}: {rule}")


@dataclass(frozen=True, slots=True)
class ChunkConfig:
    """How S&GM98 cuts a document's text into chunks, each hashed to a 32-bit fingerprint.

    ``lines`` and ``words`` take a ``size`` (lines or words per chunk, non-overlapping); the other
    kinds have size 1. ``spec`` is the command-line form: ``lines:4``, ``words:8``, ``sentences``.
    """

    kind: ChunkKind = "lines"
    size: int = 4
    seed: int = 0

    def __post_init__(self) -> None:
        _require(self.kind in CHUNK_KINDS, "chunk", self.kind, f"one of {', '.join(CHUNK_KINDS)}")
        if self.kind in _SIZED:
            _require(1 <= self.size <= 100_000, "chunk size", self.size, "must be in 1..100000")
        else:
            _require(self.size == 1, "chunk size", self.size, f"{self.kind} chunks take no size")
        _require(0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1")

    @staticmethod
    def parse(spec: str) -> ChunkConfig:
        """``lines:4``, ``lines:2``, ``words:N``, ``sentences``, ``paragraphs``, ``document``,
        ``shingle-paragraphs``."""
        kind, _, size = spec.strip().partition(":")
        if kind not in CHUNK_KINDS:
            raise ConfigError(f"chunk={spec!r}: one of {', '.join(CHUNK_KINDS)} "
                              "(lines and words with :N)")
        if kind in _SIZED and not size.isdigit():
            raise ConfigError(f"chunk={spec!r}: {kind} needs a size, as in {kind}:4")
        if kind not in _SIZED and size:
            raise ConfigError(f"chunk={spec!r}: {kind} chunks take no size")
        return ChunkConfig(kind, int(size) if size else 1)

    @property
    def spec(self) -> str:
        return f"{self.kind}:{self.size}" if self.kind in _SIZED else self.kind

    @property
    def tag(self) -> str:
        return f"chunk:{self.spec}:s{self.seed}"


def paper_min_shared(chunk: ChunkConfig) -> int:
    """S&GM98's threshold T for a chunking: 15 for 4-line chunks, 25 for 2-line chunks, 1 for the
    whole document; 15 for every other chunking (choose ``min_shared`` for those)."""
    if chunk.kind == "document":
        return 1
    if chunk.kind == "lines" and chunk.size == 2:
        return 25
    return 15


@dataclass(frozen=True, slots=True)
class OverlapConfig:
    """The all-pairs overlap of S&GM98: pairs sharing at least ``min_shared`` chunk fingerprints.

    ``algorithm``: ``sort`` (the sort-based join, external: at most ``memory_limit`` bytes of pairs
    in memory, the rest spilled to sorted runs on disk; ``None``: all pairs in memory) or
    ``coarse`` (probabilistic counting: ``buckets`` counters, None for 2 * pairs / T rounded up to
    a power of two, ``hashes`` hash functions, a pilot sample of the fraction ``pilot`` of the
    fingerprints). Both give the same pairs and counts.
    ``drop_common``: ignore chunks shared by more than that many documents (None: keep all).
    Only ``min_shared`` and ``drop_common`` change the result, so only they are in the tag.
    """

    min_shared: int | None = None
    algorithm: OverlapAlgorithm = "sort"
    memory_limit: int | None = 512 * 2**20
    buckets: int | None = None
    hashes: int = 2
    pilot: float = 0.0
    drop_common: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        if self.min_shared is not None:
            _require(1 <= self.min_shared <= 2**31, "min_shared", self.min_shared, "must be >= 1")
        _require(self.algorithm in ("sort", "coarse"), "algorithm", self.algorithm,
                 "sort or coarse")
        if self.memory_limit is not None:
            _require(self.memory_limit >= 2**16, "memory_limit", self.memory_limit,
                     "must be at least 64 KiB")
        if self.buckets is not None:
            _require(1 <= self.buckets <= 2**32, "buckets", self.buckets, "must be in 1..2**32")
        _require(1 <= self.hashes <= 8, "hashes", self.hashes, "must be in 1..8")
        _require(0.0 <= self.pilot < 1.0, "pilot", self.pilot, "must be in [0, 1)")
        if self.drop_common is not None:
            _require(self.drop_common >= 2, "drop_common", self.drop_common, "must be >= 2")
        _require(0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1")

    def threshold(self, chunk: ChunkConfig) -> int:
        """T: ``min_shared``, or the paper's value for ``chunk``."""
        return self.min_shared if self.min_shared is not None else paper_min_shared(chunk)

    def tag(self, chunk: ChunkConfig) -> str:
        drop = "all" if self.drop_common is None else f"drop{self.drop_common}"
        return f"overlap:T{self.threshold(chunk)}:{drop}:{chunk.tag}"


@dataclass(frozen=True, slots=True)
class SmfaConfig:
    """SMFA (Wang & Chen): MD5 of the ``segments`` longest HTML block segments, concatenated,
    without punctuation, white space and (``stop_words``) English stop words."""

    segments: int = 3
    stop_words: bool = True

    def __post_init__(self) -> None:
        _require(1 <= self.segments <= 1000, "segments", self.segments, "must be in 1..1000")

    @property
    def tag(self) -> str:
        return f"smfa:n{self.segments}:{'stop-en' if self.stop_words else 'no-stop'}:md5"


@dataclass(frozen=True, slots=True)
class ParagraphConfig:
    """Pereira, Baeza-Yates & Ziviani: shingle paragraphs of ``sentences`` sentences (a sentence
    ends with a period, or is cut at ``cut`` characters), documents longer than ``min_chars``
    characters only; near-duplicates share at least ``level`` percent of the shingle paragraphs
    of both documents (100: only clusters of equal shingle paragraphs). ``iterations`` is the
    number m of sub-collections of the iterative algorithm (documents assigned at random with
    ``seed``); it changes the growth records, never the pairs."""

    sentences: int = 3
    cut: int = 150
    min_chars: int = 450
    level: int = 100
    iterations: int = 1
    seed: int = 0

    def __post_init__(self) -> None:
        _require(1 <= self.sentences <= 100, "sentences", self.sentences, "must be in 1..100")
        _require(1 <= self.cut <= 100_000, "cut", self.cut, "must be in 1..100000")
        _require(self.min_chars >= 0, "min_chars", self.min_chars, "must be >= 0")
        _require(1 <= self.level <= 100, "level", self.level, "a percentage in 1..100")
        _require(1 <= self.iterations <= 10_000, "iterations", self.iterations,
                 "must be in 1..10000")
        _require(0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1")

    @property
    def tag(self) -> str:
        return (f"paragraphs:s{self.sentences}:c{self.cut}:min{self.min_chars}:"
                f"level{self.level}")


DEFAULT_MEMORY_LIMIT = "2G"
"""The memory a batch run may use unless told: the command line's ``--memory-limit`` and the
library's ``memory_limit``."""


def parse_bytes(text: str) -> int | None:
    """A size such as ``512M``, ``2G``, ``65536`` (bytes, binary units); ``none`` for no limit."""
    if text.strip().lower() in ("none", "unlimited", "inf"):
        return None
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise ConfigError(f"memory_limit={text!r}: a size such as 512M or 2G, or none")
    return int(match.group(1)) * _UNITS[match.group(2).lower()]
