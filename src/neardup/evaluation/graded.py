"""Graded reuse: does a score rank texts by how much of a source they reuse?

For the Clough & Stevenson corpus (answers reusing a Wikipedia source at four levels, ``cut`` >
``light`` > ``heavy`` > ``non``): the containment of each answer in its source, exact on the
w-shingle sets or estimated from Broder's MOD sketches, and how well it ranks the levels:
Spearman's rank correlation with the level (ties share their mean rank; the Pearson correlation
of the ranks) and the mean score per level.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup._types import F64
from neardup.config import ShingleConfig, SketchConfig
from neardup.errors import ConfigError
from neardup.evaluation.labeled import LabeledPair
from neardup.features.shingles import shingle_set
from neardup.fingerprints.sketch import Sketcher, estimate_containment
from neardup.text.canonical import canonical_bytes

__all__ = ["REUSE_LEVELS", "GradedRanking", "containment_scores", "graded_ranking", "midranks",
           "spearman_rho"]

REUSE_LEVELS = ("cut", "light", "heavy", "non")
"""Clough & Stevenson's levels of reuse, most reuse first."""


def midranks(values: npt.ArrayLike) -> F64:
    """1-based ranks; tied values share the mean of their ranks."""
    data = np.asarray(values, dtype=np.float64)
    order = np.argsort(data, kind="stable")
    ordered = data[order]
    starts = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    ends = np.append(starts[1:], data.size)
    ranks = np.empty(data.size, dtype=np.float64)
    ranks[order] = np.repeat((starts + ends + 1) / 2.0, ends - starts)
    return ranks


def spearman_rho(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Spearman's rank correlation of two equally long samples (NaN if either is constant)."""
    rx, ry = midranks(x), midranks(y)
    if rx.size != ry.size or rx.size < 2:
        raise ConfigError(f"samples of sizes {rx.size} and {ry.size}: need two equal sizes >= 2")
    dx, dy = rx - rx.mean(), ry - ry.mean()
    norm = float(np.sqrt((dx * dx).sum() * (dy * dy).sum()))
    return float((dx * dy).sum() / norm) if norm > 0 else float("nan")


def containment_scores(pairs: Sequence[LabeledPair], shingles: ShingleConfig,
                       sketch: SketchConfig | None = None) -> F64:
    """c(text_a, text_b) per pair: exact over w-shingle sets, or Broder's MOD estimate."""
    sketcher = Sketcher(sketch) if sketch is not None else None
    scores = np.empty(len(pairs), dtype=np.float64)
    for index, pair in enumerate(pairs):
        a, b = canonical_bytes(pair.text_a or ""), canonical_bytes(pair.text_b or "")
        if sketcher is not None and sketch is not None:
            scores[index] = estimate_containment(sketcher.of_canonical(a),
                                                 sketcher.of_canonical(b), sketch)
            continue
        first, second = (shingle_set(t, shingles.width, shingles.seed) for t in (a, b))
        shared = np.intersect1d(first, second, assume_unique=True).size
        scores[index] = shared / first.size if first.size else 0.0
    return scores


@dataclass(frozen=True, slots=True)
class GradedRanking:
    """How a score ranks the levels: Spearman's rho and the mean score per level."""

    rho: float
    means: dict[str, float]

    @property
    def ordered(self) -> bool:
        """True when the mean score falls strictly from each level to the next."""
        values = list(self.means.values())
        return all(high > low for high, low in itertools.pairwise(values))


def graded_ranking(scores: npt.ArrayLike, levels: Sequence[str],
                   order: Sequence[str] = REUSE_LEVELS) -> GradedRanking:
    """Spearman's rho between ``scores`` and the level (first of ``order`` = highest)."""
    values = np.asarray(scores, dtype=np.float64)
    unknown = sorted(set(levels) - set(order))
    if unknown:
        raise ConfigError(f"level {unknown[0]!r}: not one of {', '.join(order)}")
    grade = np.array([len(order) - order.index(level) for level in levels], dtype=np.float64)
    names = np.asarray(levels)
    means = {level: float(values[names == level].mean()) for level in order
             if np.any(names == level)}
    return GradedRanking(spearman_rho(values, grade), means)
