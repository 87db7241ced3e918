"""Containment as a relation (``--relation contained``) and the explanation of a query's match."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.cluster.relations import RELATIONS
from neardup.config import DedupConfig, ShingleConfig, SketchConfig, SketchMethod
from neardup.document import Document
from neardup.errors import ConfigError
from neardup.evaluation.graded import (
    containment_scores,
    graded_ranking,
    midranks,
    spearman_rho,
)
from neardup.evaluation.labeled import read_clough_stevenson
from neardup.fingerprints.sketch import Sketcher
from neardup.fingerprints.sketch_match import explain_match, shared_fingerprints, shingle_texts
from neardup.fingerprints.sketch_pairs import estimates_against
from neardup.methods.sketch import csr
from neardup.pipeline import DedupResult, find_duplicates
from neardup.text.canonical import canonical_bytes

WORDS = [f"w{i}" for i in range(5000)]


def prose(seed: int, words: int) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def corpus() -> list[Document]:
    """A long page and its first 300 words; one paragraph quoted by two unrelated pages; a page
    that quotes 150 words of the long one among 600 of its own."""
    long, quote = prose(1, 1000), prose(2, 120)
    texts = {"long": long, "part": " ".join(long.split()[:300]),
             "paragraph": quote, "page-1": f"{prose(3, 900)} {quote}",
             "page-2": f"{quote} {prose(4, 900)}",
             "mixed": f"{' '.join(long.split()[100:250])} {prose(5, 600)}"}
    return [Document(id=key, raw=text.encode(), kind="text") for key, text in texts.items()]


def links(result: DedupResult) -> dict[tuple[str, str], float]:
    """(contained, container) -> exact containment, for each ``contained`` pair."""
    ids = result.ids
    found = {}
    for index, relation in enumerate(result.pairs.relation_names()):
        if relation != "contained":
            continue
        a, b = int(result.pairs.a[index]), int(result.pairs.b[index])
        c_ab, c_ba = result.pairs.containment_ab[index], result.pairs.containment_ba[index]
        inner, outer = (a, b) if c_ab >= c_ba else (b, a)
        found[(ids[inner], ids[outer])] = float(max(c_ab, c_ba))
    return found


def test_contained_documents_link_to_one_best_container() -> None:
    result = find_duplicates(corpus(), DedupConfig(method="sketch", threshold=0.8,
                                                   params=SketchMethod(relation="contained")))
    found = links(result)
    assert set(found) == {("part", "long"), ("paragraph", "page-1")}
    assert all(value > 0.95 for value in found.values())
    ids = result.ids
    cluster = dict(zip(ids, result.cluster.tolist(), strict=True))
    assert cluster["part"] == cluster["long"]
    # page-2 also contains the paragraph, but one link per contained document keeps the two
    # unrelated pages apart.
    assert cluster["page-1"] == cluster["paragraph"] != cluster["page-2"]
    assert cluster["mixed"] not in (cluster["long"], cluster["page-1"], cluster["page-2"])
    assert result.reasons[ids.index("part")] in ("duplicate:contained", "kept:first")


def test_lower_threshold_finds_partial_containment() -> None:
    config = DedupConfig(method="sketch", threshold=0.1,
                         params=SketchMethod(SketchConfig(size=5), relation="contained"))
    result = find_duplicates(corpus(), config)
    assert ("mixed", "long") in links(result)


def test_resemblance_relation_does_not_join_contained_pages() -> None:
    result = find_duplicates(corpus(), DedupConfig(method="sketch"))
    assert len(set(result.cluster.tolist())) == result.documents.num_rows


def test_relation_codes_keep_their_meaning() -> None:
    assert RELATIONS[:4] == ("identical", "lexical", "shingle-equivalent", "near")
    assert RELATIONS.index("contained") == 4


@pytest.mark.parametrize("config", [
    dict(method="minhash", params=SketchMethod(relation="contained")),
    dict(method="supershingle", params=SketchMethod(relation="contained")),
    dict(method="sketch", params=SketchMethod(SketchConfig(kind="min", size=50),
                                              relation="contained")),
])
def test_containment_needs_mod_sketches(config: dict[str, object]) -> None:
    with pytest.raises(ConfigError, match=r"relation|params"):
        DedupConfig(**config)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="relation"):
        SketchMethod(relation="inside")  # type: ignore[arg-type]


def test_cli_relation_contained(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"id": d.id, "text": d.raw.decode()}) + "\n"
                              for d in corpus()))
    out = tmp_path / "out"
    outcome = CliRunner().invoke(cli, ["dedup", str(source), "--out", str(out), "--quiet",
                                       "--workers", "1", "--format", "jsonl", "--method",
                                       "sketch", "--relation", "contained", "--threshold", "0.8"])
    assert outcome.exit_code == 0, outcome.output
    rows = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    contained = [r for r in rows if r["relation"] == "contained"]
    assert len(contained) == 2
    assert all(max(r["containment_ab"], r["containment_ba"]) > 0.95 for r in contained)
    assert json.loads((out / "summary.json").read_text())["near"]["relation"] == "contained"
    bad = CliRunner().invoke(cli, ["dedup", str(source), "--out", str(tmp_path / "x"),
                                   "--method", "minhash", "--relation", "contained"])
    assert bad.exit_code == 2 and "--relation has no effect with --method minhash" in bad.output


def test_explain_match_names_the_shared_shingles() -> None:
    config = SketchConfig(size=5, shingles=ShingleConfig(width=4))
    sketcher = Sketcher(config)
    stored = prose(7, 400)
    query = canonical_bytes("A NEW opening, then: " + " ".join(stored.split()[50:150]))
    match = explain_match(query, sketcher.of_canonical(query), sketcher.of_canonical(stored),
                          config)
    assert match.containment_query is not None and match.containment_query > 0.8
    assert match.containment_stored is not None and match.containment_stored < 0.4
    assert match.resemblance == pytest.approx(match.containment_stored, abs=0.1)
    assert match.shared and all(len(s.split()) == 4 for s in match.shared)
    assert all(s in stored for s in match.shared)
    assert not any("opening" in s for s in match.shared)
    # every explaining shingle is one of the sampled fingerprints both sketches hold
    shared = shared_fingerprints(sketcher.of_canonical(query), sketcher.of_canonical(stored),
                                 config)
    assert len(match.shared) == shared.size


def test_explain_match_golden_and_min_sketches() -> None:
    config = SketchConfig(kind="min", size=3, shingles=ShingleConfig(width=2))
    text = "a rose is a rose is a rose"
    sketcher = Sketcher(config)
    match = explain_match(text, sketcher.of_canonical(text), sketcher.of_canonical(text), config)
    assert match.resemblance == 1.0 and match.containment_query is None
    assert sorted(match.shared) == ["a rose", "is a", "rose is"]
    fingerprints = sketcher.permute(sketcher.shingles_of("is a"))
    assert shingle_texts(text, fingerprints, config) == ["is a"]


def test_query_against_many_stored_sketches() -> None:
    config = SketchConfig(size=1, adaptive=20)
    sketcher = Sketcher(config)
    stored = [prose(seed, 200 * seed) for seed in range(1, 5)]
    query = " ".join(stored[3].split()[:300])
    sketches = [sketcher.with_modulus(sketcher.shingles_of(text)) for text in stored]
    flat, offsets = csr([s for s, _ in sketches])
    moduli = np.array([m for _, m in sketches], dtype=np.int64)
    q_sketch, q_modulus = sketcher.with_modulus(sketcher.shingles_of(query))
    r, inside, outside = estimates_against(q_sketch, q_modulus, flat, offsets, moduli, config)
    assert inside.tolist()[:3] == [0.0, 0.0, 0.0] and inside[3] > 0.8
    assert outside[3] < 0.6 and r[3] == pytest.approx(outside[3], abs=0.1)


def test_spearman_rho_golden_values() -> None:
    assert midranks([3, 1, 2, 2, 5, 4]).tolist() == [4.0, 1.0, 2.5, 2.5, 6.0, 5.0]
    assert spearman_rho([1, 2, 3, 4, 5], [5, 6, 7, 8, 7]) == pytest.approx(0.8207826816681233)
    assert spearman_rho([3, 1, 2, 2, 5, 4], [1, 1, 0, 2, 3, 3]) == pytest.approx(0.7164977208318)
    assert spearman_rho([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)
    assert np.isnan(spearman_rho([1, 1, 1], [1, 2, 3]))
    with pytest.raises(ConfigError, match="sizes"):
        spearman_rho([1, 2], [1, 2, 3])


def test_clough_stevenson_containment_ranks_the_reuse_levels(shared_data: Path) -> None:
    """Containment of each answer in its source: mean cut > light > heavy > non, and Spearman's
    rho against the level (measured: 0.828 exact on 5-shingles, 0.689 for Broder's sketch,
    MOD_25 over 10-shingles; short answers keep about 8 samples)."""
    pairs = read_clough_stevenson(shared_data / "labeled" / "clough-stevenson")
    levels = [p.label for p in pairs]
    assert len(pairs) == 95
    exact = graded_ranking(containment_scores(pairs, ShingleConfig(width=5)), levels)
    broder = SketchConfig()
    sketch = graded_ranking(containment_scores(pairs, broder.shingles, broder), levels)
    assert exact.ordered and sketch.ordered
    assert exact.rho == pytest.approx(0.828, abs=0.001)
    assert sketch.rho == pytest.approx(0.689, abs=0.001)
    assert list(sketch.means) == ["cut", "light", "heavy", "non"]
