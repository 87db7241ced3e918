"""Metrics against hand-computed values and brute force; calibration never reads test labels."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError
from neardup.evaluation.metrics import (
    Confusion,
    ThresholdGrid,
    accepts_everything,
    best_threshold,
    choose_threshold,
    confusion_at,
    cross_validate,
    roc_auc,
    stratified_folds,
    sweep,
)

labeled_scores = st.lists(
    st.tuples(st.integers(0, 6).map(lambda v: v / 2), st.booleans()), min_size=1, max_size=40)


def brute_auc(scores: list[float], labels: list[bool]) -> float:
    positives = [s for s, y in zip(scores, labels, strict=True) if y]
    negatives = [s for s, y in zip(scores, labels, strict=True) if not y]
    wins = sum(1.0 if p > n else 0.5 if p == n else 0.0 for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def test_auc_without_ties_by_hand() -> None:
    # positives 0.35 and 0.8 against negatives 0.1 and 0.4: 0.35 beats one, 0.8 beats both.
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]) == 0.75


def test_auc_with_ties_by_hand() -> None:
    # positive 2 vs negatives (1, 2): 1 + 1/2; positive 3 vs (1, 2): 2 -> 3.5 of 4 pairs.
    assert roc_auc([1, 2, 2, 3], [0, 0, 1, 1]) == 0.875
    assert roc_auc([5, 5, 5], [1, 0, 1]) == 0.5  # all tied: chance


def test_auc_of_one_class_is_nan() -> None:
    assert math.isnan(roc_auc([0.1, 0.2], [1, 1]))
    assert math.isnan(roc_auc([], []))


def test_metrics_reject_nan_and_mismatched_lengths() -> None:
    with pytest.raises(ConfigError, match="NaN"):
        roc_auc([0.1, float("nan")], [0, 1])
    with pytest.raises(ConfigError, match="3 values for 2 labels"):
        confusion_at([1, 2, 3], [0, 1], 0.5)


@given(labeled_scores)
def test_auc_equals_brute_force_and_flips_with_the_order(pairs: list[tuple[float, bool]]) -> None:
    scores = [s for s, _ in pairs]
    labels = [y for _, y in pairs]
    if all(labels) or not any(labels):
        assert math.isnan(roc_auc(scores, labels))
        return
    auc = roc_auc(scores, labels)
    assert auc == pytest.approx(brute_auc(scores, labels))
    assert roc_auc([-s for s in scores], labels) == pytest.approx(1.0 - auc)
    assert roc_auc([s**3 + 7 for s in scores], labels) == pytest.approx(auc)  # monotone map


def test_f1_at_a_threshold_by_hand() -> None:
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.2]
    labels = [1, 0, 1, 1, 0, 0]
    # >= 0.65 keeps 0.9 (tp), 0.8 (fp), 0.7 (tp); misses 0.6 (fn); rejects 0.5, 0.2 (tn).
    confusion = confusion_at(scores, labels, 0.65)
    assert confusion == Confusion(tp=2, fp=1, fn=1, tn=2)
    assert confusion.precision == pytest.approx(2 / 3)
    assert confusion.recall == pytest.approx(2 / 3)
    assert confusion.f1 == pytest.approx(2 / 3)
    everything = confusion_at(scores, labels, 0.0)
    assert (everything.precision, everything.recall) == (0.5, 1.0)
    assert everything.f1 == pytest.approx(2 / 3)


def test_rates_are_zero_when_undefined() -> None:
    nothing = confusion_at([0.1, 0.2], [1, 0], 0.5)
    assert nothing == Confusion(0, 0, 1, 1)
    assert (nothing.precision, nothing.recall, nothing.f1) == (0.0, 0.0, 0.0)
    no_positive = Confusion(0, 2, 0, 0)
    assert (no_positive.recall, no_positive.f1) == (0.0, 0.0)


@given(labeled_scores, st.lists(st.integers(-1, 7).map(lambda v: v / 2), min_size=1, max_size=8))
def test_sweep_agrees_with_one_threshold_at_a_time(pairs: list[tuple[float, bool]],
                                                   thresholds: list[float]) -> None:
    scores = [s for s, _ in pairs]
    labels = [y for _, y in pairs]
    counts = sweep(scores, labels, thresholds)
    for index, threshold in enumerate(thresholds):
        one = confusion_at(scores, labels, threshold)
        assert (counts.tp[index], counts.fp[index], counts.fn[index], counts.tn[index]) == (
            one.tp, one.fp, one.fn, one.tn)
        assert counts.f1[index] == pytest.approx(one.f1)
        assert counts.precision[index] == pytest.approx(one.precision)


def test_candidate_thresholds() -> None:
    scores = np.array([0.2, 0.6, 0.6, 1.0])
    assert ThresholdGrid().candidates(scores).tolist() == [0.2, 0.4, 0.8]
    assert ThresholdGrid(integral=True).candidates(np.array([3.0, 1.0, 3.0])).tolist() == [1, 3]
    assert ThresholdGrid(fixed=(-2.0, -1.0)).candidates(scores).tolist() == [-2.0, -1.0]
    with pytest.raises(ConfigError, match="fixed"):
        ThresholdGrid(fixed=())


def test_choose_threshold_by_hand_and_ties_go_to_the_strictest() -> None:
    scores = [0.9, 0.8, 0.7, 0.6, 0.5, 0.2]
    labels = [1, 1, 1, 0, 1, 0]
    # Cuts between distinct values; F1 at 0.65 is 6/7, at 0.35 (adds 0.6 fp, 0.5 tp) is 8/9.
    assert choose_threshold(scores, labels, ThresholdGrid()) == pytest.approx(0.35)
    # Both k = 1 and k = 2 (score >= -1, >= -2) catch the one positive alone: k = 1 wins.
    distances = np.array([1.0, 3.0, 4.0])
    assert choose_threshold(-distances, [1, 0, 0], ThresholdGrid(fixed=(0.0, -1.0, -2.0))) == -1.0


def test_a_rule_that_marks_every_pair_positive_is_refused() -> None:
    # Most pairs positive, the scores unrelated to the labels: marking all positive has the
    # best F1 (0.8), which a calibration must not take for a rule.
    scores = [0.0, 0.0, 0.0, 0.0, 0.1, 0.2]
    labels = [1, 1, 0, 1, 0, 1]
    grid = ThresholdGrid()
    assert accepts_everything(scores, best_threshold(scores, labels, grid))
    chosen = choose_threshold(scores, labels, grid)
    assert not accepts_everything(scores, chosen) and chosen == pytest.approx(0.15)
    assert choose_threshold([0.3, 0.3], [1, 0], grid) == math.inf  # nothing left to choose


def test_stratified_folds_balance_each_class() -> None:
    labels = np.array([True] * 7 + [False] * 13)
    folds = stratified_folds(labels, 5, seed=3)
    assert folds.tolist() == stratified_folds(labels, 5, seed=3).tolist()
    for fold in range(5):
        members = folds == fold
        assert labels[members].sum() in (1, 2)
        assert (~labels[members]).sum() in (2, 3)
    assert sorted(np.bincount(folds).tolist()) == [4, 4, 4, 4, 4]
    with pytest.raises(ConfigError, match="folds=1"):
        stratified_folds(labels, 1)


@settings(max_examples=60)
@given(st.lists(st.integers(0, 20), min_size=10, max_size=40), st.randoms(use_true_random=False))
def test_cross_validation_never_looks_at_the_test_labels(values: list[int], rng: object) -> None:
    scores = np.array(values, dtype=np.float64) / 20
    labels = scores + np.array([((i * 7) % 5) / 10 for i in range(scores.size)]) > 0.6
    assignment = np.arange(scores.size) % 4
    grid = ThresholdGrid()
    reference = cross_validate(scores, labels, grid, assignment)
    for fold in range(4):
        shuffled = labels.copy()
        test = np.flatnonzero(assignment == fold)
        shuffled[test] = [rng.random() < 0.5 for _ in test]  # type: ignore[attr-defined]
        again = cross_validate(scores, shuffled, grid, assignment)
        assert again.folds[fold].threshold == reference.folds[fold].threshold
        expected = confusion_at(scores[test], shuffled[test], reference.folds[fold].threshold)
        assert again.folds[fold].confusion == expected


def test_cross_validation_pools_the_folds_by_hand() -> None:
    scores = np.array([0.9, 0.8, 0.1, 0.2, 0.85, 0.15])
    labels = np.array([1, 1, 0, 0, 1, 0], dtype=bool)
    assignment = np.array([0, 1, 0, 1, 2, 2])
    result = cross_validate(scores, labels, ThresholdGrid(), assignment)
    # Each fold's training pairs separate perfectly; the cut is the midpoint between classes.
    assert [fold.threshold for fold in result.folds] == pytest.approx([0.5, 0.5, 0.5])
    assert result.pooled == Confusion(tp=3, fp=0, fn=0, tn=3)
    assert list(result.fold_f1()) == [1.0, 1.0, 1.0]
