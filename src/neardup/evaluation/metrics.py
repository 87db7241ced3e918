"""Quality metrics of a scored, labeled set of pairs: ROC AUC, precision, recall, F1, threshold
sweeps, and thresholds calibrated by F1 (on a development set or by k-fold cross-validation).

Conventions, everywhere in this module:

- a *score* is a float where larger means more similar; a pair is predicted positive when
  ``score >= threshold``;
- ``labels`` are booleans (True = positive, a near-duplicate);
- precision is 0 when nothing is predicted positive, recall is 0 when there is no positive, and
  F1 is 0 when precision + recall is 0 (scikit-learn's ``zero_division=0``);
- ROC AUC is the Mann-Whitney statistic with tied scores counted one half; it is NaN when one of
  the classes is absent.

Calibration only ever sees the labels of the pairs it calibrates on: :func:`choose_threshold` is
given the training scores and labels, and :func:`cross_validate` passes it the training folds only.
Ties in F1 go to the strictest rule (the highest score threshold).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup._types import BOOL, F64, I64
from neardup.errors import ConfigError
from neardup.methods.scoring import ThresholdGrid

__all__ = [
    "Confusion",
    "CrossValidation",
    "FoldResult",
    "Sweep",
    "ThresholdGrid",
    "choose_threshold",
    "confusion_at",
    "cross_validate",
    "roc_auc",
    "stratified_folds",
    "sweep",
]


def _arrays(scores: npt.ArrayLike, labels: npt.ArrayLike) -> tuple[F64, BOOL]:
    values = np.asarray(scores, dtype=np.float64).ravel()
    truth = np.asarray(labels, dtype=np.bool_).ravel()
    if values.shape != truth.shape:
        raise ConfigError(f"scores has {values.size} values for {truth.size} labels")
    if np.isnan(values).any():
        raise ConfigError("scores: NaN is not a score")
    return values, truth


def _ratio(numerator: npt.ArrayLike, denominator: npt.ArrayLike) -> F64:
    top = np.asarray(numerator, dtype=np.float64)
    bottom = np.asarray(denominator, dtype=np.float64)
    return np.divide(top, bottom, out=np.zeros(np.broadcast(top, bottom).shape),
                     where=bottom > 0)


def _midranks(values: F64) -> F64:
    """1-based ranks of ``values``, tied values sharing the mean of their ranks."""
    _, inverse, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts).astype(np.float64)
    return (ends - (counts - 1) / 2.0)[inverse]


def roc_auc(scores: npt.ArrayLike, labels: npt.ArrayLike) -> float:
    """P(score of a random positive > score of a random negative), ties counting 1/2."""
    values, truth = _arrays(scores, labels)
    positives = int(truth.sum())
    negatives = truth.size - positives
    if positives == 0 or negatives == 0:
        return float("nan")
    rank_sum = float(_midranks(values)[truth].sum())
    return (rank_sum - positives * (positives + 1) / 2.0) / (positives * negatives)


@dataclass(frozen=True, slots=True)
class Confusion:
    """Counts of one decision over labeled pairs, and the rates they give."""

    tp: int
    fp: int
    fn: int
    tn: int

    @property
    def precision(self) -> float:
        return float(_ratio(self.tp, self.tp + self.fp))

    @property
    def recall(self) -> float:
        return float(_ratio(self.tp, self.tp + self.fn))

    @property
    def f1(self) -> float:
        return float(_ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn))

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn,
                         self.tn + other.tn)

    def as_dict(self) -> dict[str, float | int]:
        return {"precision": self.precision, "recall": self.recall, "f1": self.f1,
                "tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn}


def confusion_at(scores: npt.ArrayLike, labels: npt.ArrayLike, threshold: float) -> Confusion:
    """The confusion counts of the rule ``score >= threshold``."""
    values, truth = _arrays(scores, labels)
    predicted = values >= threshold
    tp = int(np.count_nonzero(predicted & truth))
    fp = int(np.count_nonzero(predicted & ~truth))
    fn = int(np.count_nonzero(~predicted & truth))
    return Confusion(tp, fp, fn, truth.size - tp - fp - fn)


@dataclass(frozen=True, slots=True)
class Sweep:
    """Confusion counts of ``score >= t`` for every threshold t of ``thresholds``."""

    thresholds: F64
    tp: I64
    fp: I64
    fn: I64
    tn: I64

    @property
    def precision(self) -> F64:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> F64:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> F64:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)


def sweep(scores: npt.ArrayLike, labels: npt.ArrayLike, thresholds: npt.ArrayLike) -> Sweep:
    """Confusion counts at many thresholds at once (two sorts and binary searches)."""
    values, truth = _arrays(scores, labels)
    cuts = np.asarray(thresholds, dtype=np.float64).ravel()
    positives, negatives = np.sort(values[truth]), np.sort(values[~truth])
    tp = positives.size - np.searchsorted(positives, cuts, side="left")
    fp = negatives.size - np.searchsorted(negatives, cuts, side="left")
    return Sweep(cuts, tp.astype(np.int64), fp.astype(np.int64),
                 (positives.size - tp).astype(np.int64), (negatives.size - fp).astype(np.int64))


def accepts_everything(scores: npt.ArrayLike, threshold: float) -> bool:
    """Whether a rule at ``threshold`` marks every one of these pairs positive."""
    values = np.asarray(scores, dtype=np.float64).ravel()
    return bool(values.size) and bool(threshold <= values.min())


def best_threshold(scores: npt.ArrayLike, labels: npt.ArrayLike, grid: ThresholdGrid) -> float:
    """The candidate threshold of best F1, every candidate allowed (even one that marks every
    pair positive); ties go to the highest threshold."""
    values, truth = _arrays(scores, labels)
    candidates = grid.candidates(values)
    if candidates.size == 0:
        return float("inf")
    f1 = sweep(values, truth, candidates).f1
    best = np.flatnonzero(f1 == f1.max())
    return float(candidates[best].max())


def choose_threshold(scores: npt.ArrayLike, labels: npt.ArrayLike, grid: ThresholdGrid) -> float:
    """The candidate threshold of best F1 on these pairs among the rules that decide at least
    one pair negative (a rule that marks every pair positive has learnt nothing: it is refused);
    ties go to the highest threshold. Infinity (nothing positive) when no rule is left."""
    values, truth = _arrays(scores, labels)
    candidates = grid.candidates(values)
    if values.size:
        candidates = candidates[candidates > values.min()]
    if candidates.size == 0:
        return float("inf")
    f1 = sweep(values, truth, candidates).f1
    best = np.flatnonzero(f1 == f1.max())
    return float(candidates[best].max())


def stratified_folds(labels: npt.ArrayLike, folds: int, seed: int = 0) -> I64:
    """The fold (0..folds-1) of each pair: each class shuffled (seeded) and dealt round-robin."""
    truth = np.asarray(labels, dtype=np.bool_).ravel()
    if not 2 <= folds <= max(truth.size, 2):
        raise ConfigError(f"folds={folds}: must be in 2..{max(truth.size, 2)} "
                          "(the number of pairs)")
    rng = np.random.default_rng(seed)
    assignment = np.empty(truth.size, dtype=np.int64)
    start = 0
    for members in (np.flatnonzero(truth), np.flatnonzero(~truth)):
        shuffled = rng.permutation(members)
        assignment[shuffled] = (start + np.arange(shuffled.size)) % folds
        start += shuffled.size
    return assignment


@dataclass(frozen=True, slots=True)
class FoldResult:
    """One fold: the threshold chosen on the other folds and its confusion on this one."""

    fold: int
    threshold: float
    confusion: Confusion


@dataclass(frozen=True, slots=True)
class CrossValidation:
    """k-fold calibration: every pair is judged by a threshold chosen without its label."""

    folds: tuple[FoldResult, ...]

    @property
    def pooled(self) -> Confusion:
        """The confusion of all out-of-fold decisions together (the honest figure)."""
        total = Confusion(0, 0, 0, 0)
        for fold in self.folds:
            total = total + fold.confusion
        return total

    def fold_f1(self) -> Sequence[float]:
        return [fold.confusion.f1 for fold in self.folds]


def cross_validate(scores: npt.ArrayLike, labels: npt.ArrayLike, grid: ThresholdGrid,
                   assignment: npt.ArrayLike) -> CrossValidation:
    """For each fold: choose the threshold on the other folds, apply it to this fold."""
    values, truth = _arrays(scores, labels)
    fold_of = np.asarray(assignment, dtype=np.int64).ravel()
    if fold_of.shape != values.shape:
        raise ConfigError(f"assignment has {fold_of.size} folds for {values.size} pairs")
    results = []
    for fold in np.unique(fold_of).tolist():
        test = fold_of == fold
        threshold = choose_threshold(values[~test], truth[~test], grid)
        results.append(FoldResult(int(fold), threshold,
                                  confusion_at(values[test], truth[test], threshold)))
    return CrossValidation(tuple(results))
