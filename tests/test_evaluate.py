"""``neardup evaluate``: labeled files, scorers, the synthetic generator, calibration, the CLI."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.config import DedupConfig, ShingleConfig, SketchMethod
from neardup.errors import ConfigError, SourceError
from neardup.evaluation import (
    EvaluationConfig,
    LabeledPair,
    LabelMap,
    PairDocuments,
    SyntheticConfig,
    evaluate,
    labeled_set,
    read_labeled,
    scorer,
    synthetic_pairs,
    write_jsonl,
)
from neardup.evaluation.labeled import normalize_label
from neardup.evaluation.synthetic import KINDS, POSITIVE_KINDS
from neardup.features.shingles import shingle_set
from neardup.fingerprints import MinHash, SimHash, estimate_jaccard
from neardup.fingerprints.sketch import Sketcher, estimate_resemblance
from neardup.fingerprints.supershingle import supershingles
from neardup.text.canonical import canonical_bytes


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.output


def pair(a: str, b: str, label: str = "1", pair_id: str = "p") -> LabeledPair:
    return LabeledPair(pair_id=pair_id, label=label, text_a=a, text_b=b)


def write_rows(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# -- labeled files --------------------------------------------------------------------------------


def test_labels_normalise_numbers_and_keep_words() -> None:
    assert [normalize_label(v) for v in ("3", 3, 3.0, "0.50", 0.5, True, " unknown ")] == [
        "3", "3", "3", "0.5", "0.5", "true", "unknown"]
    labels = LabelMap.parse("3", "0.5, 1")
    assert (labels.classify("3"), labels.classify("1"), labels.classify("2")) == (True, False, None)
    with pytest.raises(ConfigError, match="both positive and negative"):
        LabelMap.parse("1", "1")


def test_read_labeled_maps_labels_and_drops_the_rest(tmp_path: Path) -> None:
    path = write_rows(tmp_path / "pairs.jsonl", [
        {"pair_id": "x", "label": "3", "text_a": "a b", "text_b": "a b", "score": 0.9},
        {"label": 0.5, "text_a": "a", "text_b": "c", "score": 0.1},
        {"label": "unknown", "text_a": "a", "text_b": "c"},
        {"label": 2, "html_a": "<p>a</p>", "html_b": "<p>b</p>", "group": "g"},
    ])
    data = read_labeled(path, LabelMap.parse("3", "0.5,1"))
    assert [p.pair_id for p in data.pairs] == ["x", "line-2"]
    assert data.positive.tolist() == [True, False]
    assert data.dropped == {"unknown": 1, "2": 1}
    assert data.pairs[0].extra == {"score": 0.9}
    assert data.counts() == {"pairs": 2, "positive": 1, "negative": 1, "dropped": 2}
    html = read_labeled(path, LabelMap.parse("2", "3"))
    assert html.pairs[1].documents("html") == ("<p>a</p>", "<p>b</p>")
    assert html.groups == ["3", "g"]


@pytest.mark.parametrize(("content", "cause"), [
    ('{"label": 1, "text_a": "a"}\n', "line 1: needs text_a and text_b"),
    ('{"label": 1, "text_a": "a", "text_b": "b"}\nnot json\n', "line 2: not JSON"),
    ('{"text_a": "a", "text_b": "b"}\n', "line 1: no 'label' field"),
    ('[1, 2]\n', "line 1: not a JSON object"),
    ('{"label": 1, "text_a": 5, "text_b": "b"}\n', "field 'text_a' must be a string"),
])
def test_bad_labeled_files_name_the_file_and_line(tmp_path: Path, content: str,
                                                  cause: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(SourceError, match=cause) as raised:
        read_labeled(path)
    assert str(raised.value).startswith(str(path))


def test_clough_stevenson_pairs_and_containment_ranking(shared_data: Path) -> None:
    corpus = shared_data / "labeled" / "clough-stevenson"
    data = read_labeled(corpus, LabelMap.parse("cut,light,heavy", "non"))
    assert len(data) == 95
    counts = [data.groups.count(c) for c in ("cut", "light", "heavy", "non")]
    assert counts == [19, 19, 19, 38]
    assert all("\ufffd" not in (p.text_a or "") for p in data.pairs)  # cp1252 answers decoded
    result = evaluate(data, EvaluationConfig(methods=("containment",)))
    report = result.as_dict(with_pairs=False)["methods"]["containment"]
    assert report["ranking"] == ["cut", "light", "heavy", "non"]
    means = {group: round(g["mean"], 3) for group, g in report["groups"].items()}
    assert means == {"cut": 0.605, "light": 0.377, "heavy": 0.196, "non": 0.002}


# -- scorers --------------------------------------------------------------------------------------


def values(name: str, pairs: list[LabeledPair], config: DedupConfig | None = None) -> list[float]:
    """The scorer's values with ``config``'s shared fields, as evaluate gives them."""
    method_config = EvaluationConfig(dedup=config or DedupConfig()).config_for(name)
    return scorer(name).values(PairDocuments(pairs), method_config).tolist()  # type: ignore[no-any-return]


def test_exact_levels_by_hand() -> None:
    pairs = [pair("A rose is a rose.", "A rose is a rose."),
             pair("A rose is a rose.", "a ROSE, is a rose"),
             pair("a b a b", "a b a b a b"),
             pair("a b a b", "a b a c"),
             pair("!!", "??")]
    narrow = DedupConfig(verify_shingles=ShingleConfig(width=2))
    # Empty texts (no tokens) are equal at the identical level only, as in dedup.
    assert values("exact", pairs, narrow) == [3.0, 2.0, 1.0, 0.0, 0.0]


def test_jaccard_and_containment_by_hand() -> None:
    # Broder's example: the 4-shingles of (a rose is a rose is a rose) are 3 distinct shingles.
    shingles = DedupConfig(verify_shingles=ShingleConfig(width=4))
    pairs = [pair("a rose is a rose is a rose", "a rose is a rose"),
             pair("a rose is a", "a rose is a rose is a rose")]
    # 3 shingles vs 2 (both shared): r = 2/3, containment of the first in the second 2/3;
    # 1 shingle in 3: r = 1/3, containment 1.
    assert values("jaccard", pairs, shingles) == pytest.approx([2 / 3, 1 / 3])
    assert values("containment", pairs, shingles) == pytest.approx([2 / 3, 1.0])


def test_fingerprint_scorers_use_the_library_fingerprints() -> None:
    texts = [" ".join(f"w{i % 17} x{i % 5}" for i in range(k, k + 60)) for k in range(4)]
    pairs = [pair(texts[0], texts[i]) for i in range(1, 4)]
    canonical = [canonical_bytes(t) for t in texts]
    sim = [SimHash().of_canonical(c) for c in canonical]
    assert values("simhash", pairs) == [float((sim[0] ^ s).bit_count()) for s in sim[1:]]
    sig = [MinHash().of_canonical(c) for c in canonical]
    assert values("minhash", pairs) == [estimate_jaccard(sig[0], s) for s in sig[1:]]


def test_broder_scorers_use_the_library_sketches() -> None:
    words = [f"w{i}" for i in range(400)]
    texts = [" ".join(words), " ".join(words[:380] + ["x"] * 20), " ".join(reversed(words))]
    pairs = [pair(texts[0], texts[0]), pair(texts[0], texts[1]), pair(texts[0], texts[2])]
    config = SketchMethod()
    sketcher = Sketcher(config.sketch)
    sketches = [sketcher.of_canonical(canonical_bytes(t)) for t in texts]
    expected = [estimate_resemblance(sketches[0], s, config.sketch) for s in sketches]
    assert values("sketch", pairs) == expected
    assert expected[0] == 1.0 and expected[2] == 0.0
    shared = values("supershingle", pairs)
    assert shared[0] == supershingles(sketches[0], config.supershingle_size,
                                      config.sketch.seed).size > 0
    assert shared[2] == 0.0


def test_documents_are_fingerprinted_once_and_tokenised_as_asked() -> None:
    pairs = [pair("Source text.", "copy one"), pair("Source text.", "copy two")]
    documents = PairDocuments(pairs)
    assert documents.text.texts == ["Source text.", "copy one", "copy two"]
    assert documents.text.first.tolist() == [0, 0] and documents.text.second.tolist() == [1, 2]
    assert documents.canonical[0] == b"source text"
    assert PairDocuments(pairs, "whitespace").canonical[0] == b"Source text."
    flat, offsets = documents.shingle_sets(1)
    assert np.array_equal(flat[offsets[0]:offsets[1]], shingle_set(b"source text", 1))


def test_html_pairs_are_extracted_and_html_scorers_need_html() -> None:
    html = LabeledPair("h", "1", html_a="<p>Same words here</p>",
                       html_b="<div>same words HERE</div>")
    assert values("exact", [html]) == [2.0]
    with pytest.raises(ConfigError, match="pair p: this method needs html_a and html_b"):
        _ = PairDocuments([pair("a", "b")]).html


def test_unknown_methods_and_baseline_fields() -> None:
    with pytest.raises(ConfigError, match="method='nope'"):
        EvaluationConfig(methods=("nope",))
    scored = LabeledPair("s", "1", text_a="a", text_b="b", extra={"other": 0.25})
    assert values("field:other", [scored]) == [0.25]
    with pytest.raises(ConfigError, match="baseline field 'missing'"):
        values("field:missing", [scored])


# -- the synthetic generator ----------------------------------------------------------------------


def test_synthetic_labels_follow_the_kinds_and_the_seed() -> None:
    pairs = synthetic_pairs(SyntheticConfig(pairs=30, seed=4))
    assert [p.group for p in pairs] == [KINDS[i % len(KINDS)] for i in range(30)]
    assert all(p.label == ("1" if p.group in POSITIVE_KINDS else "0") for p in pairs)
    assert pairs == synthetic_pairs(SyntheticConfig(pairs=30, seed=4))
    assert pairs != synthetic_pairs(SyntheticConfig(pairs=30, seed=5))
    with pytest.raises(ConfigError, match="edit_rate"):
        SyntheticConfig(edit_rate=0.5)


def body_words(text: str) -> list[str]:
    return " ".join(text.splitlines()[3:-2]).split()


def test_synthetic_edits_are_the_controlled_ones() -> None:
    config = SyntheticConfig(pairs=len(KINDS), seed=2, edit_rate=0.05, ad_words=25)
    by_kind = {p.group: p for p in synthetic_pairs(config)}
    a, b = (body_words(by_kind["insert"].text_a or ""), body_words(by_kind["insert"].text_b or ""))
    assert len(b) - len(a) == round(0.05 * len(a))
    a, b = (body_words(by_kind["delete"].text_a or ""), body_words(by_kind["delete"].text_b or ""))
    assert len(a) - len(b) == round(0.05 * len(a))
    a, b = (body_words(by_kind["ad"].text_a or ""), body_words(by_kind["ad"].text_b or ""))
    assert len(b) - len(a) == 25
    reorder = by_kind["reorder"]
    assert sorted(body_words(reorder.text_a or "")) == sorted(body_words(reorder.text_b or ""))
    assert reorder.text_a != reorder.text_b
    assert by_kind["copy"].text_a == by_kind["copy"].text_b
    lexical = by_kind["lexical"]
    assert lexical.text_a != lexical.text_b
    assert canonical_bytes(lexical.text_a or "") == canonical_bytes(lexical.text_b or "")
    template = by_kind["template"]
    assert body_words(template.text_a or "") == body_words(template.text_b or "")
    assert (template.text_a or "").splitlines()[0] != (template.text_b or "").splitlines()[0]
    same_site = by_kind["same-site"]
    assert (same_site.text_a or "").splitlines()[:3] == (same_site.text_b or "").splitlines()[:3]


def test_jaccard_separates_synthetic_near_copies_from_the_rest() -> None:
    data = labeled_set(synthetic_pairs(SyntheticConfig(pairs=40)), LabelMap(), "synthetic")
    report = evaluate(data, EvaluationConfig(methods=("jaccard", "exact"), folds=4)).as_dict()
    jaccard = report["methods"]["jaccard"]
    assert jaccard["auc"] == 1.0
    assert jaccard["groups"]["copy"]["mean"] == 1.0
    assert jaccard["groups"]["unrelated"]["mean"] < 0.05
    exact = report["methods"]["exact"]
    assert exact["groups"]["copy"]["mean"] == 3.0 and exact["groups"]["lexical"]["mean"] == 2.0


# -- calibration ----------------------------------------------------------------------------------


def test_dev_calibration_never_looks_at_the_test_labels() -> None:
    dev = labeled_set(synthetic_pairs(SyntheticConfig(pairs=40, seed=1)), LabelMap(), "dev")
    test_pairs = synthetic_pairs(SyntheticConfig(pairs=40, seed=2))
    honest = labeled_set(test_pairs, LabelMap(), "test")
    flipped = labeled_set([LabeledPair(p.pair_id, "0" if p.label == "1" else "1", p.text_a,
                                       p.text_b) for p in test_pairs], LabelMap(), "test")
    config = EvaluationConfig(methods=("simhash", "jaccard"))
    one, two = evaluate(honest, config, dev), evaluate(flipped, config, dev)
    assert [m.threshold for m in one.methods] == [m.threshold for m in two.methods]
    for a, b in zip(one.methods, two.methods, strict=True):
        assert (a.decision.tp, a.decision.fp) == (b.decision.fp, b.decision.tp)
    assert one.calibration["mode"] == "development set"


def test_cross_validated_report_has_the_fold_details() -> None:
    data = labeled_set(synthetic_pairs(SyntheticConfig(pairs=50)), LabelMap(), "synthetic")
    report = evaluate(data, EvaluationConfig(methods=("simhash",), folds=5)).as_dict()
    simhash = report["methods"]["simhash"]
    assert {"auc", "threshold", "precision", "recall", "f1", "folds", "in_sample",
            "at_default", "groups", "ranking"} <= set(simhash)
    assert len(simhash["folds"]) == 5 and sum(f["pairs"] for f in simhash["folds"]) == 50
    assert sum(f["tp"] for f in simhash["folds"]) == simhash["tp"]
    assert isinstance(simhash["threshold"], int) and simhash["at_default"]["threshold"] == 3
    assert [p["simhash"] for p in report["pairs"]][:3] == [1.0, 0.0, 7.0]  # golden (seed 0)


def test_evaluate_says_why_it_refuses_an_all_positive_calibration() -> None:
    rows = [pair("alpha beta gamma delta epsilon zeta", "one two three four five six", "1",
                 f"p{i}") for i in range(8)]
    rows += [pair("alpha beta gamma delta epsilon zeta", "alpha beta gamma delta epsilon zeta x",
                  "0", f"n{i}") for i in range(2)]
    data = labeled_set(rows, LabelMap(), "inverted")
    report = evaluate(data, EvaluationConfig(methods=("jaccard",), folds=2)).as_dict()
    jaccard = report["methods"]["jaccard"]
    assert "marks every pair positive" in jaccard["note"]
    assert jaccard["fp"] + jaccard["tp"] < 10  # not every pair decided positive


# -- the command line -----------------------------------------------------------------------------


def test_cli_end_to_end_on_a_generated_file(tmp_path: Path) -> None:
    labeled = tmp_path / "pairs.jsonl"
    write_jsonl(synthetic_pairs(SyntheticConfig(pairs=40, seed=7)), labeled)
    code, output = invoke("evaluate", str(labeled), "--method", "simhash,minhash,jaccard",
                          "--folds", "4", "--json")
    assert code == 0, output
    report = json.loads(output)
    assert report["labeled"]["pairs"] == 40 and report["labeled"]["positive"] == 28
    assert set(report["methods"]) == {"simhash", "minhash", "jaccard"}
    assert report["methods"]["jaccard"]["auc"] == 1.0
    data = read_labeled(labeled)
    library = evaluate(data, EvaluationConfig(methods=("simhash", "minhash", "jaccard"),
                                              folds=4)).as_dict()
    assert report["methods"] == json.loads(json.dumps(library["methods"]))


def test_cli_curves_of_simhash_against_k(tmp_path: Path) -> None:
    labeled = tmp_path / "pairs.jsonl"
    write_jsonl(synthetic_pairs(SyntheticConfig(pairs=40, seed=7)), labeled)
    curves = tmp_path / "curves"
    code, output = invoke("evaluate", str(labeled), "--method", "simhash", "--curve", str(curves))
    assert code == 0, output
    with (curves / "simhash.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["parameter"] for row in rows] == [str(k) for k in range(11)]
    recalls = [float(row["recall"]) for row in rows]
    assert recalls == sorted(recalls) and recalls[-1] > recalls[0]
    assert all(int(row["tp"]) + int(row["fn"]) == 28 for row in rows)
    assert (curves / "simhash.png").read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in curves.iterdir()) == ["simhash.csv", "simhash.png"]


def test_cli_synthetic_and_table_output(tmp_path: Path) -> None:
    out = tmp_path / "synthetic.jsonl"
    code, output = invoke("evaluate", "--synthetic", "30", "--synthetic-out", str(out),
                          "--method", "exact,jaccard")
    assert code == 0, output
    assert "synthetic:30:seed0: 30 pairs (21 positive, 9 negative" in output
    assert "jaccard: copy > lexical" in output
    assert len(out.read_text(encoding="utf-8").splitlines()) == 30
    code, output = invoke("evaluate", str(out), "--calibrate", str(out), "--method", "jaccard")
    assert code == 0 and f"calibration: development set on {out}" in output


def test_cli_errors_are_one_line_naming_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    code, output = invoke("evaluate", str(missing))
    assert code == 1 and output.strip() == f"neardup: error: {missing}: no such file or directory"
    text_only = write_rows(tmp_path / "t.jsonl", [{"label": 1, "text_a": "a", "text_b": "b"}])
    code, output = invoke("evaluate", str(text_only), "--positive", "7", "--negative", "8")
    assert code == 1 and f"{text_only}: no labeled pairs left" in output
    assert len(output.strip().splitlines()) == 1
    code, output = invoke("evaluate", str(text_only), "--synthetic", "5")
    assert code == 2 and "one of them" in output


def test_cli_on_copycat_against_the_webis_baseline(shared_data: Path) -> None:
    copycat = shared_data / "labeled" / "copycat-dev.jsonl"
    code, output = invoke("evaluate", str(copycat), "--positive", "3", "--negative", "0.5,1",
                          "--tokenize", "whitespace", "--json", "--method",
                          "exact,simhash,minhash,jaccard,field:webis_s3")
    assert code == 0, output
    report = json.loads(output)
    assert report["labeled"]["dropped_labels"] == {"unknown": 75, "2": 24}
    assert (report["labeled"]["positive"], report["labeled"]["negative"]) == (44, 97)
    methods = report["methods"]
    auc = {name: round(m["auc"], 3) for name, m in methods.items()}
    assert auc == {"exact": 0.602, "simhash": 0.900, "minhash": 0.949, "jaccard": 0.942,
                   "field:webis_s3": 0.920}
    # Manku's Figure 1 on these pairs: at k = 3, precision 0.82 and recall 0.70.
    at_three = methods["simhash"]["at_default"]
    assert (round(at_three["precision"], 2), round(at_three["recall"], 2)) == (0.82, 0.70)
