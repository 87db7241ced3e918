"""``neardup evaluate``: precision, recall, F1 and ROC AUC of methods on labeled pairs, with
thresholds calibrated on a development set or by k-fold cross-validation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from neardup.cli.preset_option import PRESET_OPTION, refuse_with_preset
from neardup.cli.text_options import extract_options, text_config
from neardup.config import DedupConfig, MinHashConfig, ShingleConfig, SimHashConfig, SimHashMethod
from neardup.evaluation.curves import write_curves
from neardup.evaluation.documents import TOKENIZERS
from neardup.evaluation.labeled import LabeledSet, LabelMap, labeled_set, read_labeled
from neardup.evaluation.run import DEFAULT_SCORED, EvaluationConfig, evaluate
from neardup.evaluation.scorers import scorer_names
from neardup.evaluation.synthetic import SyntheticConfig, synthetic_pairs, write_jsonl

__all__ = ["evaluate_command", "render_evaluation"]

DEFAULT_METHODS = ",".join(DEFAULT_SCORED)


def _labeled(path: str | None, synthetic: int | None, seed: int, labels: LabelMap,
             synthetic_out: Path | None) -> LabeledSet:
    if (path is None) == (synthetic is None):
        raise click.UsageError("give LABELED.jsonl or --synthetic N (one of them)")
    if path is not None:
        return read_labeled(path, labels)
    assert synthetic is not None
    pairs = synthetic_pairs(SyntheticConfig(pairs=synthetic, seed=seed))
    if synthetic_out is not None:
        write_jsonl(pairs, synthetic_out)
    return labeled_set(pairs, LabelMap(), f"synthetic:{synthetic}:seed{seed}")


def _dedup_config(options: dict[str, Any]) -> DedupConfig:
    shingles = ShingleConfig(width=options["shingle_width"])
    return DedupConfig(text=text_config(options.get("extract"), options.get("main_content")),
                       verify_shingles=shingles,
                       params=MinHashConfig(options["num_perm"], shingles=shingles))


def _method_params(options: dict[str, Any]) -> tuple[object, ...]:
    """The fingerprints' parameters the options set: min-hash's (both min-hash methods) and
    simhash's."""
    shingles = ShingleConfig(width=options["shingle_width"])
    return (MinHashConfig(options["num_perm"], shingles=shingles),
            SimHashMethod(SimHashConfig(ShingleConfig(width=options["simhash_width"]),
                                        options["simhash_weights"])))


def _fmt(value: object, spec: str = ".3f") -> str:
    if value is None:
        return "-"
    return format(value, spec) if isinstance(value, float) else str(value)


def _table(headers: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in [headers, *rows]) for i in range(len(headers))]
    return ["  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
            for row in [headers, *rows]]


def render_evaluation(report: dict[str, Any]) -> str:
    """The human-readable summary of :meth:`Evaluation.as_dict`."""
    labeled, calibration = report["labeled"], report["calibration"]
    dropped = ", ".join(f"{k} {v}" for k, v in sorted(labeled["dropped_labels"].items()))
    lines = [f"labeled: {labeled['source']}: {labeled['pairs']} pairs ({labeled['positive']} "
             f"positive, {labeled['negative']} negative; dropped {labeled['dropped']}"
             f"{': ' + dropped if dropped else ''})",
             f"calibration: {calibration['mode']}"
             + (f" on {calibration['source']}" if "source" in calibration else ""), ""]
    if "preset" in report:
        chosen = report["preset"]
        lines.insert(0, f"preset: {chosen['name']} ({chosen['paper']}): " + ", ".join(
            f"{k} {v}" for k, v in chosen["parameters"].items()))
    rows = [[name, m["rule"], _fmt(m["auc"]), _fmt(m["threshold"], ".4g"), _fmt(m["precision"]),
             _fmt(m["recall"]), _fmt(m["f1"])] for name, m in report["methods"].items()]
    lines += _table(["method", "rule", "AUC", "threshold", "precision", "recall", "F1"], rows)
    methods = report["methods"]
    lines += [f"{name}: {m['note']}" for name, m in methods.items() if "note" in m]
    groups = sorted({g for m in methods.values() for g in m["groups"]})
    if len(groups) <= 12:
        lines += ["", "mean value per group (share decided positive):"]
        rows = [[group, *(f"{m['groups'][group]['mean']:.3f} "
                          f"({m['groups'][group]['decided_positive']:.2f})"
                          for m in methods.values())] for group in groups]
        lines += _table(["group", *methods], rows)
        lines += ["", "ranking of the groups, most similar first:"]
        lines += [f"{name}: {' > '.join(m['ranking'])}" for name, m in methods.items()]
    return "\n".join(lines)


def _methods(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(",") if name.strip())


@click.command("evaluate")
@click.argument("labeled", required=False)
@click.option("--method", "methods", default=DEFAULT_METHODS, show_default=True,
              help="Comma-separated methods: " + ", ".join(scorer_names())
                   + ", or field:NAME (a numeric field of the file, e.g. another system's "
                     "score).")
@click.option("--calibrate", "dev", default=None,
              help="DEV.jsonl: choose each rule on it by F1, then judge LABELED with it.")
@click.option("--folds", type=click.IntRange(2, 1000), default=5, show_default=True,
              help="Without --calibrate: k-fold cross-validated calibration on LABELED.")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="Seed of the folds and of --synthetic.")
@click.option("--positive", default="1,true", show_default=True,
              help="Comma-separated labels of near-duplicates.")
@click.option("--negative", default="0,false", show_default=True,
              help="Comma-separated labels of non-duplicates; pairs with other labels are "
                   "dropped.")
@click.option("--tokenize", type=click.Choice(TOKENIZERS), default="canonical",
              show_default=True,
              help="canonical: Broder's canonical form; whitespace: text already tokenised.")
@click.option("--shingle-width", type=click.IntRange(1, 64), default=5, show_default=True,
              help="Words per shingle: jaccard, containment, minhash, exact shingle level.")
@click.option("--simhash-width", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Words per simhash feature.")
@click.option("--simhash-weights", type=click.Choice(["binary", "tf"]), default="binary",
              show_default=True,
              help="simhash: weight of a feature: once, or per occurrence (as for dedup).")
@click.option("--num-perm", type=click.IntRange(1, 4096), default=128, show_default=True,
              help="Min-hash permutations.")
@click.option("--curve", "curve", type=click.Path(path_type=Path), default=None,
              help="Directory for <method>.csv and <method>.png: precision and recall against "
                   "the rule's parameter.")
@click.option("--synthetic", type=click.IntRange(1, 1_000_000), default=None,
              help="Evaluate on N generated pairs with controlled edits instead of LABELED.")
@click.option("--synthetic-out", type=click.Path(path_type=Path), default=None,
              help="Also write the --synthetic pairs as labeled JSONL.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the full report (every pair's values included) as JSON.")
@extract_options
@PRESET_OPTION
def evaluate_command(labeled: str | None, methods: str, dev: str | None, folds: int, seed: int,
                     positive: str, negative: str, tokenize: str, curve: Path | None,
                     synthetic: int | None, synthetic_out: Path | None, as_json: bool,
                     preset: str | None, **options: Any) -> None:
    """Precision, recall, F1 and ROC AUC of each method on LABELED.jsonl (text_a/text_b or
    html_a/html_b, label) or a Clough-Stevenson directory, at a rule chosen by F1 on
    --calibrate DEV.jsonl or by --folds cross-validation."""
    labels = LabelMap.parse(positive, negative)
    dedup, params, chosen = _dedup_config(options), _method_params(options), None
    if preset is not None:
        from neardup.presets import preset as named

        refuse_with_preset(preset, options)
        chosen = named(preset)
        dedup = chosen.dedup
        params = (dedup.params,) if dedup.params is not None else ()
        if click.get_current_context().get_parameter_source("methods") is ParameterSource.DEFAULT:
            methods = ",".join(chosen.evaluate)
    config = EvaluationConfig(methods=_methods(methods), folds=folds, seed=seed,
                              tokenize=tokenize,  # type: ignore[arg-type]
                              dedup=dedup, params=params)
    data = _labeled(labeled, synthetic, seed, labels, synthetic_out)
    development = None if dev is None else read_labeled(dev, labels)
    result = evaluate(data, config, development)
    if curve is not None:
        write_curves(result, curve)
    report = result.as_dict(with_pairs=as_json)
    if chosen is not None:
        report = {"preset": chosen.as_dict(), **report}
    click.echo(json.dumps(report, indent=2) if as_json else render_evaluation(report))

