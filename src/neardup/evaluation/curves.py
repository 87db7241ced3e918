"""Precision and recall against each method's rule parameter, as CSV and PNG (Manku's Figure 1).

For every method the rule is swept over its curve parameters (simhash: k = 0..10; resemblance and
containment: t = 0.00..1.00 by 0.01; others: every observed value) on all labeled pairs. The CSV
has one row per parameter value: ``parameter, precision, recall, f1, tp, fp, fn, tn``. The PNG has
two panels: precision, recall and F1 against the parameter, and precision against recall with the
points labelled by the parameter where there are few (Manku's Figure 1 for simhash). matplotlib
runs headless (Agg).
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

import numpy as np

from neardup._types import BOOL, F64
from neardup.errors import OutputError
from neardup.evaluation.metrics import Sweep, sweep
from neardup.evaluation.run import Evaluation, MethodResult

__all__ = ["curve_of", "curve_stem", "write_curves"]

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_LABELLED_POINTS = 16


def curve_stem(method: str) -> str:
    """A file name stem for a method name (``field:webis_s3`` -> ``field-webis_s3``)."""
    return _UNSAFE.sub("-", method).strip("-") or "method"


def curve_of(result: MethodResult, labels: BOOL) -> tuple[F64, Sweep]:
    """The rule's parameters and the confusion counts at each of them."""
    rule = result.rule
    parameters = rule.curve_parameters(result.values)
    thresholds = np.array([rule.threshold(p) for p in parameters.tolist()], dtype=np.float64)
    return parameters, sweep(rule.scores(result.values), labels, thresholds)


def _write_csv(path: Path, parameters: F64, counts: Sweep) -> None:
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["parameter", "precision", "recall", "f1", "tp", "fp", "fn", "tn"])
        for i, parameter in enumerate(parameters.tolist()):
            writer.writerow([f"{parameter:g}", f"{counts.precision[i]:.6f}",
                             f"{counts.recall[i]:.6f}", f"{counts.f1[i]:.6f}", int(counts.tp[i]),
                             int(counts.fp[i]), int(counts.fn[i]), int(counts.tn[i])])


def _write_png(path: Path, result: MethodResult, parameters: F64, counts: Sweep,
               source: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    rule = result.rule
    for values, name in ((counts.precision, "precision"), (counts.recall, "recall"),
                         (counts.f1, "F1")):
        left.plot(parameters, values, marker="o" if parameters.size <= 30 else None, label=name)
    left.set_xlabel(f"{rule.parameter} (decision: {rule.text})")
    left.set_ylim(-0.02, 1.02)
    left.legend()
    right.plot(counts.recall, counts.precision, marker="o" if parameters.size <= 30 else None)
    if parameters.size <= _LABELLED_POINTS:
        for x, y, p in zip(counts.recall, counts.precision, parameters.tolist(), strict=True):
            right.annotate(f"{rule.parameter}={p:g}", (x, y), fontsize=7)
    right.set_xlabel("recall")
    right.set_ylabel("precision")
    right.set_xlim(-0.02, 1.02)
    right.set_ylim(-0.02, 1.02)
    figure.suptitle(f"{result.name}: precision and recall against {rule.parameter} ({source})",
                    fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def write_curves(evaluation: Evaluation, directory: str | Path) -> list[Path]:
    """Write ``<method>.csv`` and ``<method>.png`` for every method; the paths written."""
    target = Path(directory)
    written = []
    try:
        target.mkdir(parents=True, exist_ok=True)
        labels = evaluation.labeled.positive
        for result in evaluation.methods:
            parameters, counts = curve_of(result, labels)
            stem = curve_stem(result.name)
            table, image = target / f"{stem}.csv", target / f"{stem}.png"
            _write_csv(table, parameters, counts)
            _write_png(image, result, parameters, counts, Path(evaluation.labeled.source).name)
            written += [table, image]
    except OSError as error:
        raise OutputError(f"{target}: {error.strerror or error}") from None
    return written
