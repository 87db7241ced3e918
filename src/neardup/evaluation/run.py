"""Evaluate methods on labeled pairs: scores, ROC AUC, and precision/recall/F1 at a calibrated rule.

The rule (threshold or k) of each method is chosen by F1, never on the pairs it is judged on:

- with a development set (``dev``), on all of ``dev``, then applied unchanged to the labeled set;
- without one, by stratified k-fold cross-validation on the labeled set: each fold is judged by
  the rule chosen on the other folds, and the reported precision, recall and F1 pool these
  out-of-fold decisions. The reported ``threshold`` is then the rule chosen on all pairs (what one
  would deploy); its in-sample figures are reported apart, as ``in_sample``.

Every method also gets its figures at ``dedup``'s default rule (``at_default``), and, per group
(the raw label, or the ``group`` field), the mean natural value and the share decided positive;
``ranking`` lists the groups from the most similar on average to the least.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from neardup._types import BOOL, F64, I64
from neardup.config import DedupConfig, MinHashConfig, SimHashMethod, method_names, method_spec
from neardup.errors import ConfigError
from neardup.evaluation.documents import TOKENIZERS, PairDocuments, Tokenize
from neardup.evaluation.labeled import LabeledSet
from neardup.evaluation.metrics import (
    Confusion,
    CrossValidation,
    accepts_everything,
    best_threshold,
    choose_threshold,
    confusion_at,
    cross_validate,
    roc_auc,
    stratified_folds,
)
from neardup.evaluation.scorers import Rule, Scorer, scorer
from neardup.methods.registry import EVALUATED

__all__ = ["DEFAULT_SCORED", "Evaluation", "EvaluationConfig", "MethodResult", "evaluate", "finite"]


P = TypeVar("P")

DEFAULT_SCORED = (*EVALUATED, "jaccard")
"""What ``evaluate`` scores when no method is named: the registry's choice and exact Jaccard."""


@dataclass(frozen=True, slots=True)
class EvaluationConfig:
    """Which methods to evaluate, how to calibrate them, and the fingerprints' parameters:
    ``dedup`` gives the fields every method shares (text, exact levels, verification shingles);
    ``params``, methods' configs (each method scores with the one of its spec's type, else that
    type's defaults: one :class:`~neardup.config.MinHashConfig` serves min-hash and
    one-permutation min-hash)."""

    methods: tuple[str, ...] = DEFAULT_SCORED
    folds: int = 5
    seed: int = 0
    tokenize: Tokenize = "canonical"
    dedup: DedupConfig = field(default_factory=DedupConfig)
    params: tuple[object, ...] = ()

    def config_for(self, name: str) -> DedupConfig:
        """The DedupConfig method ``name`` scores with (a scorer that is no method reads the
        shared fields only)."""
        if name not in method_names():
            return self.dedup
        kind = method_spec(name).params
        given = next((p for p in self.params if kind is not None and isinstance(p, kind)), None)
        return dataclasses.replace(self.dedup, method=name, params=given, threshold=0.0)

    def params_of(self, kind: type[P]) -> P:
        """The given config of type ``kind``, else its defaults."""
        return next((p for p in self.params if isinstance(p, kind)), kind())

    def __post_init__(self) -> None:
        if not self.methods:
            raise ConfigError("methods=(): name at least one method")
        for name in self.methods:
            scorer(name)
        if len(set(self.methods)) != len(self.methods):
            raise ConfigError(f"methods={self.methods!r}: a method is named twice")
        if not 2 <= self.folds <= 1000:
            raise ConfigError(f"folds={self.folds}: must be in 2..1000")
        if not 0 <= self.seed < 2**32:
            raise ConfigError(f"seed={self.seed}: must be in 0..2**32-1")
        if self.tokenize not in TOKENIZERS:
            raise ConfigError(f"tokenize={self.tokenize!r}: one of {', '.join(TOKENIZERS)}")

    @property
    def tag(self) -> str:
        tags = self.dedup.tags
        parts = [tags["verify"], self.params_of(SimHashMethod).simhash.tag,
                 self.params_of(MinHashConfig).tag, tags["exact"]]
        if self.dedup.text.extract != "full":
            parts.append(tags["text"])
        return f"evaluate:{self.tokenize}:folds{self.folds}:seed{self.seed}:" + ":".join(parts)


def finite(value: float) -> float | None:
    """``value``, or None for NaN and infinities (JSON has neither)."""
    return value if np.isfinite(value) else None


def _parameter(rule: Rule, threshold: float) -> float | int | None:
    value = finite(rule.parameter_of(threshold))
    return int(value) if value is not None and rule.integral else value


@dataclass(frozen=True, slots=True)
class MethodResult:
    """One method on one labeled set."""

    name: str
    rule: Rule
    values: F64
    auc: float
    threshold: float
    predicted: BOOL
    decision: Confusion
    cross_validation: CrossValidation | None = None
    in_sample: Confusion | None = None
    at_default: Confusion | None = None
    note: str | None = None
    """Why the calibration refused the rule of best F1 (it marked every pair positive)."""

    def as_dict(self, groups: list[str], positive: BOOL) -> dict[str, Any]:
        rule = self.rule
        out: dict[str, Any] = {"rule": rule.text, "auc": finite(self.auc),
                               "threshold": _parameter(rule, self.threshold),
                               **self.decision.as_dict()}
        if self.cross_validation is not None:
            f1 = np.array(self.cross_validation.fold_f1())
            out["folds"] = [{"fold": f.fold, "threshold": _parameter(rule, f.threshold),
                             "pairs": f.confusion.tp + f.confusion.fp + f.confusion.fn
                             + f.confusion.tn, **f.confusion.as_dict()}
                            for f in self.cross_validation.folds]
            out["f1_fold_mean"], out["f1_fold_std"] = float(f1.mean()), float(f1.std())
        if self.in_sample is not None:
            out["in_sample"] = self.in_sample.as_dict()
        if self.at_default is not None and rule.default is not None:
            out["at_default"] = {"threshold": _parameter(rule, rule.threshold(rule.default)),
                                 **self.at_default.as_dict()}
        if self.note is not None:
            out["note"] = self.note
        out["groups"] = self._groups(groups, positive)
        means = {group: rule.scores(np.array([g["mean"]]))[0] for group, g in out["groups"].items()}
        out["ranking"] = sorted(means, key=lambda group: (-means[group], group))
        return out

    def _groups(self, groups: list[str], positive: BOOL) -> dict[str, dict[str, Any]]:
        names = np.array(groups, dtype=object)
        summary = {}
        for group in sorted(set(groups)):
            members = names == group
            values = self.values[members]
            summary[group] = {"pairs": int(members.sum()),
                              "positive": int(positive[members].sum()),
                              "mean": float(values.mean()), "median": float(np.median(values)),
                              "decided_positive": float(self.predicted[members].mean())}
        return summary


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Every method's result on one labeled set, and how the rules were calibrated."""

    labeled: LabeledSet
    calibration: dict[str, Any]
    methods: tuple[MethodResult, ...]
    config: EvaluationConfig

    def as_dict(self, with_pairs: bool = True) -> dict[str, Any]:
        labeled = self.labeled
        out: dict[str, Any] = {
            "labeled": {"source": labeled.source, **labeled.counts(),
                        "dropped_labels": labeled.dropped},
            "calibration": self.calibration, "config": self.config.tag,
            "methods": {m.name: m.as_dict(labeled.groups, labeled.positive)
                        for m in self.methods}}
        if with_pairs:
            out["pairs"] = [
                {"pair_id": pair.pair_id, "label": pair.label, "positive": bool(positive),
                 "group": group, **{m.name: float(m.values[i]) for m in self.methods}}
                for i, (pair, positive, group) in enumerate(
                    zip(labeled.pairs, labeled.positive.tolist(), labeled.groups, strict=True))]
        return out


def _values(method: Scorer, documents: PairDocuments, config: EvaluationConfig,
            source: str) -> F64:
    """The method's natural values; an error names the labeled file."""
    try:
        values = np.asarray(method.values(documents, config.config_for(method.name)),
                            dtype=np.float64)
    except ConfigError as error:
        raise ConfigError(f"{source}: {error}") from None
    if values.shape != (len(documents),):
        raise ConfigError(f"scorer {method.name!r} gave {values.size} values for "
                          f"{len(documents)} pairs")
    return values


def _refusal(rule: Rule, scores: F64, truth: BOOL) -> str | None:
    """A note when the rule of best F1 on these pairs would mark every pair positive."""
    best = best_threshold(scores, truth, rule.threshold_grid())
    if not accepts_everything(scores, best):
        return None
    return (f"calibration refused {rule.text} at {_parameter(rule, best)}: it marks every pair "
            "positive (the scores do not separate the classes); the best rule that decides "
            "some pair negative is used instead")


def _judge(method: Scorer, values: F64, labeled: LabeledSet, threshold: float,
           folds: CrossValidation | None = None,
           predicted: BOOL | None = None, note: str | None = None) -> MethodResult:
    """The result at ``threshold``; with ``folds``, the decisions are the out-of-fold ones."""
    rule = method.rule
    scores, truth = rule.scores(values), labeled.positive
    default = None if rule.default is None else confusion_at(
        scores, truth, rule.threshold(rule.default))
    at_threshold = confusion_at(scores, truth, threshold)
    return MethodResult(
        method.name, rule, values, roc_auc(scores, truth), threshold,
        scores >= threshold if predicted is None else predicted,
        at_threshold if folds is None else folds.pooled, cross_validation=folds,
        in_sample=None if folds is None else at_threshold, at_default=default, note=note)


def _cross_validated(method: Scorer, values: F64, labeled: LabeledSet,
                     assignment: I64) -> MethodResult:
    rule = method.rule
    scores, truth = rule.scores(values), labeled.positive
    grid = rule.threshold_grid()
    folds = cross_validate(scores, truth, grid, assignment)
    predicted = np.zeros(truth.size, dtype=np.bool_)
    for fold in folds.folds:
        members = assignment == fold.fold
        predicted[members] = scores[members] >= fold.threshold
    threshold = choose_threshold(scores, truth, grid)
    return _judge(method, values, labeled, threshold, folds, predicted,
                  _refusal(rule, scores, truth))


def evaluate(labeled: LabeledSet, config: EvaluationConfig = EvaluationConfig(),
             dev: LabeledSet | None = None) -> Evaluation:
    """Score every method on ``labeled`` and judge it at a rule calibrated on ``dev`` (or by
    k-fold cross-validation on ``labeled`` when there is no ``dev``)."""
    for name, data in (("labeled", labeled), ("dev", dev)):
        if data is not None and len(data) == 0:
            raise ConfigError(f"{data.source}: no {name} pairs left after label mapping "
                              f"(dropped: {data.dropped})")
    extractor = config.dedup.text.extract
    documents = PairDocuments(labeled.pairs, config.tokenize, extractor)
    dev_documents = None if dev is None else PairDocuments(dev.pairs, config.tokenize, extractor)
    if dev is None:
        assignment = stratified_folds(labeled.positive, config.folds, config.seed)
        calibration: dict[str, Any] = {"mode": f"{config.folds}-fold cross-validation",
                                       "folds": config.folds, "seed": config.seed}
    else:
        calibration = {"mode": "development set", "source": dev.source, **dev.counts()}
    results = []
    for name in config.methods:
        method = scorer(name)
        values = _values(method, documents, config, labeled.source)
        if dev is None or dev_documents is None:
            results.append(_cross_validated(method, values, labeled, assignment))
            continue
        dev_scores = method.rule.scores(_values(method, dev_documents, config, dev.source))
        threshold = choose_threshold(dev_scores, dev.positive, method.rule.threshold_grid())
        results.append(_judge(method, values, labeled, threshold,
                              note=_refusal(method.rule, dev_scores, dev.positive)))
    return Evaluation(labeled, calibration, tuple(results), config)
