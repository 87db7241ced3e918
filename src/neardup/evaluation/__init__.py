"""Evaluation of near-duplicate methods on labeled pairs: metrics, calibration, scorers."""

from neardup.evaluation.documents import PairDocuments, View, tokenize
from neardup.evaluation.labeled import (
    LabeledPair,
    LabeledSet,
    LabelMap,
    labeled_set,
    read_clough_stevenson,
    read_labeled,
)
from neardup.evaluation.metrics import (
    Confusion,
    ThresholdGrid,
    choose_threshold,
    confusion_at,
    cross_validate,
    roc_auc,
    stratified_folds,
    sweep,
)
from neardup.evaluation.run import Evaluation, EvaluationConfig, MethodResult, evaluate
from neardup.evaluation.scorers import Rule, Scorer, register_scorer, scorer, scorer_names
from neardup.evaluation.synthetic import SyntheticConfig, synthetic_pairs, write_jsonl

__all__ = [
    "Confusion",
    "Evaluation",
    "EvaluationConfig",
    "LabelMap",
    "LabeledPair",
    "LabeledSet",
    "MethodResult",
    "PairDocuments",
    "Rule",
    "Scorer",
    "SyntheticConfig",
    "ThresholdGrid",
    "View",
    "choose_threshold",
    "confusion_at",
    "cross_validate",
    "evaluate",
    "labeled_set",
    "read_clough_stevenson",
    "read_labeled",
    "register_scorer",
    "roc_auc",
    "scorer",
    "scorer_names",
    "stratified_folds",
    "sweep",
    "synthetic_pairs",
    "tokenize",
    "write_jsonl",
]
