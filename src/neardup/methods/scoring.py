"""How a method's pairs are scored for evaluation: its :class:`Scorer` and decision :class:`Rule`.

A scorer turns the two documents of every labeled pair into the method's *natural value* (a
Hamming distance, an estimated or exact resemblance, a number of shared chunks, an equality
level) and states its decision rule on that value (``distance <= k``, ``resemblance >= t``...).
Each method's module declares its scorer in its unit; ``neardup.evaluation`` measures them.

The values function reads :class:`ScoredPairs` (``neardup.evaluation.documents.PairDocuments``
is one): the distinct documents of the pairs, fingerprinted once each. ``text`` (or ``html``) is
a :class:`PairView` with the distinct documents and, per pair, the index of its ``first`` and
``second`` document; ``canonical`` holds the token bytes of each text document and
``shingle_sets(width, seed)`` their shingle sets (CSR). Compute the fingerprints of the documents
into an array, then compare ``prints[view.first]`` with ``prints[view.second]``. A method that
needs the raw HTML (SMFA's block segments) says ``needs="html"`` and reads ``documents.html``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from neardup._types import F64, I64, U64
from neardup.config import DedupConfig
from neardup.errors import ConfigError

__all__ = ["SIMHASH_K", "UNIT_CURVE", "PairView", "Rule", "ScoredPairs", "Scorer",
           "ThresholdGrid", "Values"]

UNIT_CURVE = tuple(round(i / 100, 2) for i in range(101))
SIMHASH_K = tuple(float(k) for k in range(65))


class PairView(Protocol):
    """Distinct documents (``texts``; ``raw``: the bytes they came from) and each pair's two."""

    @property
    def texts(self) -> list[str]: ...
    @property
    def raw(self) -> list[bytes]: ...
    @property
    def first(self) -> I64: ...
    @property
    def second(self) -> I64: ...


class ScoredPairs(Protocol):
    """The documents of a list of pairs, as a scorer reads them."""

    @property
    def text(self) -> PairView: ...
    @property
    def html(self) -> PairView: ...
    @property
    def canonical(self) -> list[bytes]: ...
    def shingle_sets(self, width: int, seed: int) -> tuple[U64, I64]: ...


Values = Callable[[ScoredPairs, DedupConfig], F64]
"""(the pairs' documents, the config) -> one natural value per pair, in pair order."""


@dataclass(frozen=True, slots=True)
class ThresholdGrid:
    """The score thresholds calibration may choose among.

    ``fixed``: exactly these thresholds (a method whose rule has a natural grid, such as simhash's
    k = 0..64). Otherwise the candidates come from the training scores: each distinct value when
    ``integral`` (counts), else the midpoints between successive distinct values (and the lowest
    value itself, which accepts every pair).
    """

    fixed: tuple[float, ...] | None = None
    integral: bool = False

    def __post_init__(self) -> None:
        if self.fixed is not None and not self.fixed:
            raise ConfigError("fixed=(): a fixed threshold grid needs at least one threshold")

    def candidates(self, scores: F64) -> F64:
        if self.fixed is not None:
            return np.asarray(self.fixed, dtype=np.float64)
        distinct = np.unique(scores)
        if self.integral or distinct.size < 2:
            return distinct
        return np.concatenate([distinct[:1], (distinct[1:] + distinct[:-1]) / 2.0])


@dataclass(frozen=True, slots=True)
class Rule:
    """A decision rule on a natural value: ``value >= parameter`` (or ``<=`` when ``at_most``).

    ``grid``: the parameter values calibration chooses among (None: any cut between the observed
    values, or any observed value when ``integral``). ``curve``: the parameter values of the
    precision/recall curve (None: the grid, else every observed value). ``default``: the value
    ``dedup`` uses by default, reported for comparison (None when ``dedup`` has no such rule).
    """

    value: str
    parameter: str
    at_most: bool = False
    grid: tuple[float, ...] | None = None
    curve: tuple[float, ...] | None = None
    integral: bool = False
    default: float | None = None

    @property
    def text(self) -> str:
        return f"{self.value} {'<=' if self.at_most else '>='} {self.parameter}"

    def scores(self, values: F64) -> F64:
        """Natural values to scores where larger means more similar."""
        return -values if self.at_most else values.astype(np.float64, copy=True)

    def threshold(self, parameter: float) -> float:
        """The score threshold equivalent to the rule at ``parameter``."""
        return -parameter if self.at_most else parameter

    def parameter_of(self, threshold: float) -> float:
        """The rule's parameter for a score threshold (the inverse of :meth:`threshold`)."""
        value = -threshold if self.at_most else threshold
        return value + 0.0  # no negative zero

    def threshold_grid(self) -> ThresholdGrid:
        fixed = None if self.grid is None else tuple(self.threshold(p) for p in self.grid)
        return ThresholdGrid(fixed=fixed, integral=self.integral)

    def curve_parameters(self, values: F64) -> F64:
        chosen = self.curve if self.curve is not None else self.grid
        return np.unique(values) if chosen is None else np.asarray(chosen, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Scorer:
    """A method's pair scorer: natural values per pair and the rule that decides on them."""

    name: str
    values: Values
    rule: Rule
    needs: Literal["text", "html"] = "text"
    summary: str = ""
