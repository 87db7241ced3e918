"""The method as a unit: :class:`NearMethod` declares, once, everything ``dedup``, the engine and
``evaluate`` need of one near-duplicate method, and :class:`NearStage` is what its ``find`` gives.

A unit holds its config-side spec (:class:`neardup.config.MethodSpec`: name, tags, default
threshold, checks), its per-document feature extractor (run in the worker processes; the type it
returns is the ``F`` of ``Prints[F]``), a one-line ``verification`` rule, its evaluation
:class:`~neardup.methods.scoring.Scorer`, and either the join kind the engine runs for it out
of core (:mod:`neardup.methods.joins`) or its ``find`` (candidates and verification over the
prints of the documents that survive the exact levels, held in memory).
:mod:`neardup.methods.registry` lists the units.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic

from neardup._types import I64
from neardup.config import DedupConfig, MethodSpec
from neardup.document import Document
from neardup.methods.joins import Join
from neardup.methods.pairs import Pairs
from neardup.methods.prints import F, Prints
from neardup.methods.scoring import Scorer

__all__ = ["ExactMethod", "FeatureExtractor", "Find", "NearMethod", "NearStage"]

FeatureExtractor = Callable[[Document, str, bytes], F]
"""(document, extracted text, canonical bytes) -> the method's features of the document."""


@dataclass(frozen=True, slots=True)
class NearStage:
    """The verified pairs of a near method, its candidate and rejected counts, its parameters
    for ``summary.json`` and its extra output tables."""

    pairs: Pairs
    candidates: int
    rejected: int
    parameters: dict[str, object] = field(default_factory=dict)
    tables: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    """Extra output tables of the method, by name, as rows (``growth`` for shingle-paragraphs)."""


Find = Callable[[DedupConfig, list[Prints[F]], I64], NearStage]
"""(config, every document's prints, the exact-level survivors) -> the verified pairs."""


@dataclass(frozen=True, slots=True)
class NearMethod(Generic[F]):
    """One near-duplicate method: ``verification`` says in a line which pairs it keeps;
    ``features`` builds its per-document extractor (None: it reads only the shared prints);
    ``join`` names the join kind the engine runs for it out of core
    (:mod:`neardup.methods.joins`); ``find``, for a method without one, runs its near stage
    over prints held in memory."""

    spec: MethodSpec
    scorer: Scorer
    verification: str
    features: Callable[[DedupConfig], FeatureExtractor[F]] | None = None
    join: Join | None = None
    find: Find[F] | None = None

    def __post_init__(self) -> None:
        if (self.join is None) == (self.find is None):
            raise ValueError(f"method {self.spec.name!r}: give it a join or a find, not both")

    @property
    def in_memory(self) -> bool:
        """Whether the engine runs this method's near stage over prints held in memory."""
        return self.find is not None

    @property
    def name(self) -> str:
        return self.spec.name


@dataclass(frozen=True, slots=True)
class ExactMethod:
    """The exact levels as a unit: no near stage, only its spec, rule and scorer."""

    spec: MethodSpec
    scorer: Scorer
    verification: str

    @property
    def name(self) -> str:
        return self.spec.name
