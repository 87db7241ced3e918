"""Width calibration: choose the shingle width together with the threshold, never on the labels
the choice is judged on.

**Which scorers.** The width calibrated is the one ``--shingle-width`` sets: the verification
shingles (``DedupConfig.verify_shingles``) and the shingles a :class:`~neardup.config.MinHashConfig`
hashes. It applies to the scorers whose value is a resemblance or containment of those shingles:
the reference scorers (exact Jaccard, containment) and the methods configured by a
``MinHashConfig`` (min-hash, one-permutation min-hash), whose pairs ``dedup`` also verifies on the
verification shingles. The others are left alone: simhash has its own features
(``--simhash-width``) and a Hamming rule; Broder's sketches and super-shingles sample their own
10-word shingles (``--sketch``), and evaluation scores their estimate, which the verification
width does not change; the exact levels are equality tests (a width of 1 would turn "same
shingle set" into "same vocabulary"); chunks, SMFA, paragraphs and keyword vectors read no
shingles.

**How.** :func:`choose_width` scores every candidate width on the pairs it is given by the F1 of
a stratified k-fold cross-validation of the threshold alone (the same folds for every width), keeps
the best (ties: the configured width, then the widest) and chooses that width's threshold on all
of those pairs. :func:`cross_validated_width` does so for each held-out fold on the other folds
only, judges the fold by the chosen (width, threshold), and pools the out-of-fold decisions;
:func:`dev_width` chooses on a development set and judges the labeled set. The width to deploy is
:func:`choose_width` on all calibration pairs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from neardup._types import BOOL, F64
from neardup.config import MinHashConfig, method_names, method_spec
from neardup.errors import ConfigError
from neardup.evaluation.metrics import (
    Confusion,
    ThresholdGrid,
    choose_threshold,
    confusion_at,
    cross_validate,
    stratified_folds,
)
from neardup.evaluation.scorers import REFERENCE_SCORERS

__all__ = ["DEFAULT_WIDTHS", "WidthCalibration", "WidthChoice", "WidthFold", "candidate_widths",
           "choose_width", "cross_validated_width", "dev_width", "width_applies"]

DEFAULT_WIDTHS = (1, 2, 3, 5)
"""The widths ``evaluate --calibrate`` chooses among (with the configured one)."""

WidthScores = Mapping[int, F64]
"""Each candidate width's scores of the same pairs."""


def width_applies(name: str) -> bool:
    """Whether scorer ``name``'s value is computed over the shingles ``--shingle-width`` sets."""
    if any(reference.name == name for reference in REFERENCE_SCORERS):
        return True
    return name in method_names() and method_spec(name).params is MinHashConfig


def candidate_widths(widths: tuple[int, ...], configured: int) -> tuple[int, ...]:
    """The widths to choose among: ``widths`` and the configured width, in increasing order."""
    return tuple(sorted({*widths, configured}))


@dataclass(frozen=True, slots=True)
class WidthChoice:
    """A width and its threshold, chosen on some pairs; ``f1_by_width``: the cross-validated F1
    of each candidate width on those pairs (empty when they are too few to cross-validate)."""

    width: int
    threshold: float
    f1_by_width: dict[int, float]


def _best(f1_by_width: Mapping[int, float], configured: int) -> int:
    best = max(f1_by_width.values())
    tied = [width for width, f1 in f1_by_width.items() if f1 == best]
    return configured if configured in tied else max(tied)


def choose_width(scores: WidthScores, truth: BOOL, grid: ThresholdGrid, folds: int, seed: int,
                 configured: int) -> WidthChoice:
    """The width of best cross-validated F1 on these pairs, and its threshold on all of them."""
    if configured not in scores:
        raise ConfigError(f"width {configured}: not among the scored widths {sorted(scores)}")
    f1_by_width: dict[int, float] = {}
    if truth.size >= 2:
        assignment = stratified_folds(truth, min(folds, truth.size), seed)
        f1_by_width = {width: cross_validate(values, truth, grid, assignment).pooled.f1
                       for width, values in sorted(scores.items())}
    width = _best(f1_by_width, configured) if f1_by_width else configured
    return WidthChoice(width, choose_threshold(scores[width], truth, grid), f1_by_width)


@dataclass(frozen=True, slots=True)
class WidthFold:
    """One held-out fold: the width and threshold chosen on the other folds, its confusion."""

    fold: int
    choice: WidthChoice
    confusion: Confusion


@dataclass(frozen=True, slots=True)
class WidthCalibration:
    """A method's width calibration: ``chosen`` on all calibration pairs (what to deploy);
    ``held_out``: the decisions on pairs the choice never saw (pooled out-of-fold decisions, or
    the labeled set judged by the development set's choice)."""

    widths: tuple[int, ...]
    configured: int
    chosen: WidthChoice
    held_out: Confusion
    folds: tuple[WidthFold, ...] = ()

    def as_dict(self, parameter: Callable[[float], object]) -> dict[str, Any]:
        """The report; ``parameter`` turns a score threshold into the rule's parameter."""
        out: dict[str, Any] = {
            "widths": list(self.widths), "configured_width": self.configured,
            "width": self.chosen.width, "threshold": parameter(self.chosen.threshold),
            "f1_by_width": {str(w): f1 for w, f1 in self.chosen.f1_by_width.items()},
            **self.held_out.as_dict()}
        if self.folds:
            out["folds"] = [{"fold": f.fold, "width": f.choice.width,
                             "threshold": parameter(f.choice.threshold),
                             "pairs": f.confusion.tp + f.confusion.fp + f.confusion.fn
                             + f.confusion.tn, **f.confusion.as_dict()} for f in self.folds]
        return out


def _subset(scores: WidthScores, members: BOOL) -> dict[int, F64]:
    return {width: values[members] for width, values in scores.items()}


def cross_validated_width(scores: WidthScores, truth: BOOL, grid: ThresholdGrid,
                          assignment: np.ndarray, folds: int, seed: int,
                          configured: int) -> WidthCalibration:
    """Each fold of ``assignment`` judged by the width and threshold chosen on the others."""
    fold_of = np.asarray(assignment, dtype=np.int64)
    results = []
    for fold in np.unique(fold_of).tolist():
        test = fold_of == fold
        choice = choose_width(_subset(scores, ~test), truth[~test], grid, folds, seed,
                              configured)
        confusion = confusion_at(scores[choice.width][test], truth[test], choice.threshold)
        results.append(WidthFold(int(fold), choice, confusion))
    held_out = Confusion(0, 0, 0, 0)
    for result in results:
        held_out = held_out + result.confusion
    chosen = choose_width(scores, truth, grid, folds, seed, configured)
    return WidthCalibration(tuple(sorted(scores)), configured, chosen, held_out, tuple(results))


def dev_width(dev_scores: WidthScores, dev_truth: BOOL, scores: WidthScores, truth: BOOL,
              grid: ThresholdGrid, folds: int, seed: int, configured: int) -> WidthCalibration:
    """The width and threshold chosen on the development pairs, judged on the labeled ones."""
    chosen = choose_width(dev_scores, dev_truth, grid, folds, seed, configured)
    held_out = confusion_at(scores[chosen.width], truth, chosen.threshold)
    return WidthCalibration(tuple(sorted(scores)), configured, chosen, held_out)
