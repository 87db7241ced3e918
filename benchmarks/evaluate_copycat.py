"""Quality of every method on labeled pairs: Webis CopyCat (dev) and Clough-Stevenson.

``python benchmarks/evaluate_copycat.py [--out benchmarks/results/evaluate_copycat.json]
[--fold-seeds 20] [--fingerprint-seeds 10]``

1. **Headline** (``copycat-dev.jsonl``, label 3 positive, 0.5 and 1 negative, 2 and ``unknown``
   dropped; white-space tokens): each method at ``dedup``'s default parameters, ROC AUC and
   precision/recall/F1 under stratified 5-fold cross-validated calibration (fold seed 0, exactly
   what ``neardup evaluate`` prints), the F1 averaged over ``--fold-seeds`` fold assignments, and
   the ``webis_s3`` column of the same file as a method.
2. **Same shingles**: for shingle widths 1..8, exact Jaccard against min-hash and simhash (binary
   and tf weights) over the same w-shingles, and the exact cosine of the shingle sets (the
   similarity binary simhash estimates with 64 bits); the fingerprint methods are run with
   ``--fingerprint-seeds`` seeds (permutations, shingle hashes), each under every fold seed, so
   the spread separates hashing noise from calibration noise.
3. **Min-hash permutations** (w = 5): 64 to 512; and the **hashing noise**: the spread of a
   pair's simhash distance or min-hash estimate over the seeds, against the gap between classes.
4. **Manku's Figure 1 on CopyCat**: simhash precision and recall at k = 0..10 (all pairs).
5. **What ``webis_s3`` is**: its largest difference, over the file's 240 pairs, from the Dice
   coefficient of the two documents' w-shingle sets, w = 5..10.
6. **Clough-Stevenson**: containment of each answer in its source, per level, w = 1..5; the AUC of
   each adjacent pair of levels (does containment order ``cut > light > heavy > non``?).

Quality only: nothing is timed. Skips (exit 0) without ``../shared/data``.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import RESULTS_DIR, environment, markdown_table, require_data, write_results
from neardup.cluster.relations import overlap_counts
from neardup.config import DedupConfig, MinHashConfig, ShingleConfig, SimHashConfig, SimHashMethod
from neardup.evaluation import (
    EvaluationConfig,
    LabelMap,
    PairDocuments,
    cross_validate,
    evaluate,
    read_labeled,
    roc_auc,
    scorer,
    stratified_folds,
)
from neardup.evaluation.labeled import LabeledSet

HEADLINE = ("exact", "simhash", "minhash", "sketch", "supershingle", "jaccard", "containment",
            "field:webis_s3")


def cv_f1(name: str, values: np.ndarray, labels: np.ndarray, fold_seeds: range) -> list[float]:
    """Pooled out-of-fold F1 of one method's values under each fold seed."""
    rule = scorer(name).rule
    scores, grid = rule.scores(values), rule.threshold_grid()
    return [cross_validate(scores, labels, grid, stratified_folds(labels, 5, seed)).pooled.f1
            for seed in fold_seeds]


def headline(data: LabeledSet, fold_seeds: range) -> tuple[list[list[str]], dict[str, Any]]:
    report = evaluate(data, EvaluationConfig(methods=HEADLINE, tokenize="whitespace"))
    as_dict = report.as_dict(with_pairs=False)
    rows = []
    for result in report.methods:
        m = as_dict["methods"][result.name]
        spread = cv_f1(result.name, result.values, data.positive, fold_seeds)
        m["f1_over_fold_seeds"] = {"mean": float(np.mean(spread)), "std": float(np.std(spread))}
        default = m.get("at_default")
        rows.append([f"`{result.name}`", m["rule"], f"{m['auc']:.3f}", f"{m['threshold']:.4g}",
                     f"{m['precision']:.3f}", f"{m['recall']:.3f}", f"**{m['f1']:.3f}**",
                     f"{np.mean(spread):.3f} ± {np.std(spread):.3f}",
                     "" if default is None else
                     f"{default['threshold']:g}: {default['precision']:.2f} / "
                     f"{default['recall']:.2f} / {default['f1']:.2f}"])
    return rows, as_dict


def fingerprint_config(width: int, seed: int, weights: str = "binary",
                       num_perm: int = 128) -> EvaluationConfig:
    """The shared fields and the min-hash and simhash configs of one fingerprint seed; a
    scorer reads them through ``config_for(name)``."""
    shingles = ShingleConfig(width=width, seed=seed)
    return EvaluationConfig(
        dedup=DedupConfig(verify_shingles=ShingleConfig(width=width)),
        params=(MinHashConfig(num_perm, seed=seed + 1, shingles=shingles),
                SimHashMethod(SimHashConfig(shingles, weights))))  # type: ignore[arg-type]


def spread(name: str, documents: PairDocuments, labels: np.ndarray, configs: list[EvaluationConfig],
           fold_seeds: range) -> dict[str, float]:
    """AUC and CV F1 of one method over fingerprint seeds (configs) x fold seeds."""
    aucs, f1s, per_seed = [], [], []
    for config in configs:
        values = scorer(name).values(documents, config.config_for(name))
        aucs.append(roc_auc(scorer(name).rule.scores(values), labels))
        scores = cv_f1(name, values, labels, fold_seeds)
        f1s += scores
        per_seed.append(float(np.mean(scores)))
    return {"auc_mean": float(np.mean(aucs)), "auc_std": float(np.std(aucs)),
            "f1_mean": float(np.mean(f1s)), "f1_std": float(np.std(f1s)),
            "f1_std_over_fingerprint_seeds": float(np.std(per_seed))}


def cosine_f1(documents: PairDocuments, labels: np.ndarray, width: int,
              fold_seeds: range) -> dict[str, float]:
    """What 64-bit binary simhash estimates, computed exactly: the cosine of the two shingle
    sets' indicator vectors, |A n B| / sqrt(|A| |B|) (as an angle, simhash's expected
    Hamming distance is 64 * arccos(cosine) / pi)."""
    flat, offsets = documents.shingle_sets(width)
    view = documents.text
    shared = overlap_counts(flat, offsets, view.first, view.second).astype(np.float64)
    sizes = np.diff(offsets).astype(np.float64)
    cosine = shared / np.sqrt(np.maximum(sizes[view.first] * sizes[view.second], 1.0))
    scores = cv_f1("jaccard", cosine, labels, fold_seeds)  # same rule shape: value >= t
    return {"auc_mean": roc_auc(cosine, labels), "f1_mean": float(np.mean(scores)),
            "f1_std": float(np.std(scores))}


def same_shingles(data: LabeledSet, fold_seeds: range,
                  fingerprint_seeds: range) -> tuple[list[list[str]], list[dict[str, Any]]]:
    documents = PairDocuments(data.pairs, "whitespace")
    labels = data.positive
    rows, found = [], []
    for width in range(1, 9):
        result: dict[str, Any] = {"width": width, "jaccard": spread(
            "jaccard", documents, labels, [fingerprint_config(width, 0)], fold_seeds)}
        result["minhash"] = spread("minhash", documents, labels,
                                   [fingerprint_config(width, s) for s in fingerprint_seeds],
                                   fold_seeds)
        result["cosine"] = cosine_f1(documents, labels, width, fold_seeds)
        for weights in ("binary", "tf"):
            result[f"simhash_{weights}"] = spread(
                "simhash", documents, labels,
                [fingerprint_config(width, s, weights) for s in fingerprint_seeds], fold_seeds)
        found.append(result)
        reference = result["jaccard"]["f1_mean"]
        cells = [str(width), f"{result['jaccard']['auc_mean']:.3f} / {reference:.3f}"]
        for key in ("minhash", "cosine", "simhash_binary", "simhash_tf"):
            r = result[key]
            cells.append(f"{r['auc_mean']:.3f} / {r['f1_mean']:.3f} ± {r['f1_std']:.3f} "
                         f"({r['f1_mean'] - reference:+.3f})")
        rows.append(cells)
    return rows, found


def permutations(data: LabeledSet, fold_seeds: range,
                 fingerprint_seeds: range) -> tuple[list[list[str]], list[dict[str, Any]]]:
    documents = PairDocuments(data.pairs, "whitespace")
    rows, found = [], []
    for num_perm in (64, 128, 256, 512):
        configs = [fingerprint_config(5, s, num_perm=num_perm) for s in fingerprint_seeds]
        r = spread("minhash", documents, data.positive, configs, fold_seeds)
        found.append({"num_perm": num_perm, **r})
        rows.append([str(num_perm), f"{r['auc_mean']:.3f}",
                     f"{r['f1_mean']:.3f} ± {r['f1_std']:.3f}",
                     f"{r['f1_std_over_fingerprint_seeds']:.3f}"])
    return rows, found


def hashing_noise(data: LabeledSet,
                  fingerprint_seeds: range) -> tuple[list[list[str]], list[dict[str, Any]]]:
    """Per pair, the spread of a fingerprint method's value over seeds, against the distance
    between the two classes' medians (of the per-pair means)."""
    documents = PairDocuments(data.pairs, "whitespace")
    labels = data.positive
    rows, found = [], []
    for width, name in itertools.product((1, 5), ("simhash", "minhash")):
        runs = np.array([scorer(name).values(documents,
                                             fingerprint_config(width, seed).config_for(name))
                         for seed in fingerprint_seeds])
        mean, noise = runs.mean(axis=0), float(np.median(runs.std(axis=0)))
        gap = abs(float(np.median(mean[labels]) - np.median(mean[~labels])))
        found.append({"width": width, "method": name, "median_std_over_seeds": noise,
                      "class_median_gap": gap, "ratio": noise / gap})
        rows.append([str(width), name, f"{noise:.3f}", f"{gap:.3f}", f"{noise / gap:.2f}"])
    return rows, found


def simhash_curve(data: LabeledSet) -> list[dict[str, float]]:
    """Precision and recall of ``distance <= k`` over all pairs (dedup's simhash)."""
    documents = PairDocuments(data.pairs, "whitespace")
    distances = scorer("simhash").values(documents, EvaluationConfig().config_for("simhash"))
    points = []
    for k in range(11):
        decided = distances <= k
        tp = int(np.sum(decided & data.positive))
        points.append({"k": k, "precision": tp / max(int(decided.sum()), 1),
                       "recall": tp / int(data.positive.sum())})
    return points


def webis_as_dice(copycat: Path) -> tuple[list[list[str]], list[dict[str, float]]]:
    """How far ``webis_s3`` is from the Dice coefficient 2|A n B| / (|A| + |B|) of the two
    documents' distinct w-word shingle sets, over all 240 pairs of the file."""
    every = read_labeled(copycat, LabelMap.parse("3,2,1,0.5,unknown", ""))
    documents = PairDocuments(every.pairs, "whitespace")
    webis = np.array([p.extra["webis_s3"] for p in every.pairs])
    rows, found = [], []
    for width in range(5, 11):
        shared = fingerprint_config(width, 0).config_for("jaccard")
        jaccard = scorer("jaccard").values(documents, shared)
        dice = 2 * jaccard / (1 + jaccard)
        gap = float(np.abs(dice - webis).max())
        found.append({"width": width, "max_abs_difference": gap, "pairs": len(every)})
        rows.append([str(width), f"{gap:.2g}"])
    return rows, found


LEVELS = ("cut", "light", "heavy", "non")


def clough(corpus: Path) -> tuple[list[list[str]], list[dict[str, Any]]]:
    data = read_labeled(corpus, LabelMap.parse("cut,light,heavy", "non"))
    documents = PairDocuments(data.pairs)
    groups = np.array(data.groups)
    rows, found = [], []
    for width in range(1, 6):
        config = DedupConfig(verify_shingles=ShingleConfig(width=width))
        values = scorer("containment").values(documents, config)
        means = {level: float(values[groups == level].mean()) for level in LEVELS}
        aucs = {}
        for upper, lower in itertools.pairwise(LEVELS):
            members = (groups == upper) | (groups == lower)
            aucs[f"{upper}>{lower}"] = roc_auc(values[members], groups[members] == upper)
        ranking = sorted(LEVELS, key=lambda level: -means[level])
        found.append({"width": width, "means": means, "adjacent_auc": aucs, "ranking": ranking})
        rows.append([str(width), *(f"{means[level]:.3f}" for level in LEVELS),
                     *(f"{auc:.2f}" for auc in aucs.values()), " > ".join(ranking)])
    return rows, found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "evaluate_copycat.json")
    parser.add_argument("--fold-seeds", type=int, default=20)
    parser.add_argument("--fingerprint-seeds", type=int, default=10)
    args = parser.parse_args()
    copycat = require_data("labeled", "copycat-dev.jsonl")
    corpus = require_data("labeled", "clough-stevenson")
    data = read_labeled(copycat, LabelMap.parse("3", "0.5,1"))
    folds, seeds = range(args.fold_seeds), range(args.fingerprint_seeds)
    head_rows, head = headline(data, folds)
    width_rows, widths = same_shingles(data, folds, seeds)
    perm_rows, perms = permutations(data, folds, seeds)
    noise_rows, noise = hashing_noise(data, seeds)
    curve_rows = simhash_curve(data)
    clough_rows, levels = clough(corpus)
    dice_rows, dice = webis_as_dice(copycat)
    tables = [
        markdown_table(["method", "rule", "AUC", "threshold (all pairs)", "precision", "recall",
                        "F1 (5-fold CV)", f"F1 over {len(folds)} fold seeds",
                        "dedup default: P / R / F1"], head_rows),
        markdown_table(["w", "jaccard AUC / F1", "minhash AUC / F1 (gap)",
                        "exact cosine AUC / F1 (gap)", "simhash binary AUC / F1 (gap)",
                        "simhash tf AUC / F1 (gap)"], width_rows),
        markdown_table(["permutations", "AUC", "F1", "F1 std over permutation seeds"], perm_rows),
        markdown_table(["w", "method", "median std of a pair's value over seeds",
                        "gap between the class medians", "noise / gap"], noise_rows),
        markdown_table(["k", "precision", "recall"],
                       [[str(p["k"]), f"{p['precision']:.2f}", f"{p['recall']:.2f}"]
                        for p in curve_rows]),
        markdown_table(["w", "max abs(webis_s3 - Dice of w-shingle sets)"], dice_rows),
        markdown_table(["w", *LEVELS, "AUC cut>light", "AUC light>heavy", "AUC heavy>non",
                        "ranking"], clough_rows),
    ]
    payload = {"environment": environment(["neardup", "numpy"]), "copycat": str(copycat),
               "fold_seeds": len(folds), "fingerprint_seeds": len(seeds), "headline": head,
               "same_shingles": widths, "minhash_permutations": perms, "hashing_noise": noise,
               "simhash_k_curve": curve_rows, "webis_s3_vs_dice": dice,
               "clough_stevenson": levels}
    write_results(args.out, payload, "\n\n".join(tables))


if __name__ == "__main__":
    main()
