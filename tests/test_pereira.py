"""Pereira, Baeza-Yates & Ziviani: shingle-paragraph clusters, near-duplicates at a level, the
iterative algorithm over sub-collections, its growth records and the estimate of the final count."""

from __future__ import annotations

import itertools
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cli.main import cli
from neardup.cluster.unionfind import components
from neardup.config import DedupConfig, ParagraphConfig
from neardup.document import Document
from neardup.errors import ConfigError
from neardup.features.chunks import shingle_paragraphs
from neardup.fingerprints.paragraphprint import ParagraphPrint, paragraph_print
from neardup.overlap.iterative import ParagraphSets, find_paragraph_pairs
from neardup.pipeline import find_duplicates

ANY_LENGTH = ParagraphConfig(min_chars=0)


def paper_says_duplicate(doc: str, loaded: str) -> bool:
    """The paper's test: every shingle paragraph of ``doc`` is found in ``loaded`` and both have
    the same number of them."""
    mine, theirs = shingle_paragraphs(doc), shingle_paragraphs(loaded)
    return len(mine) == len(theirs) and all(p in theirs for p in mine)


def shared(a: ParagraphPrint, b: ParagraphPrint) -> int:
    return int(np.intersect1d(a.keys, b.keys).size)


def test_the_papers_false_match_is_not_a_duplicate() -> None:
    document_3 = "e. e. e. d. d. d. e. e. e. d. d. d."
    document_2 = "c. c. c. d. d. d. e. e. e. f. f. f."
    assert paper_says_duplicate(document_3, document_2)  # the false match of its Section 3
    three, two = paragraph_print(document_3, ANY_LENGTH), paragraph_print(document_2, ANY_LENGTH)
    assert three is not None and two is not None
    assert len(three) == len(two) == 4
    assert three.multiset != two.multiset and shared(three, two) == 2
    again = paragraph_print("e. e. e. d. d. d. e. e. e. d. d. d.", ANY_LENGTH)
    assert again is not None and again.multiset == three.multiset and shared(three, again) == 4


def test_only_documents_longer_than_min_chars() -> None:
    assert paragraph_print("x" * 450, ParagraphConfig()) is None
    longer = paragraph_print("x" * 451, ParagraphConfig())
    # 150 + 150 + 150 + 1 characters: a complete shingle paragraph and a one-sentence tail
    assert longer is not None and len(longer) == 2
    with pytest.raises(ConfigError, match="level"):
        ParagraphConfig(level=0)


def sets_of(multisets: list[list[int]], weights: list[int]) -> ParagraphSets:
    prints = [paragraph_print(" ".join(f"p{x}. p{x}. p{x}." for x in m), ANY_LENGTH)
              for m in multisets]
    chosen = [p for p in prints if p is not None]
    offsets = np.concatenate([[0], np.cumsum([len(p) for p in chosen])]).astype(np.int64)
    return ParagraphSets(np.concatenate([p.keys for p in chosen]), offsets,
                         np.array([p.multiset for p in chosen], dtype=np.uint64),
                         np.array(weights, dtype=np.int64))


def brute(multisets: list[list[int]], weights: list[int], level: int) -> tuple[set, int, int]:
    counts = [Counter(m) for m in multisets]
    pairs, exact = set(), []
    for i, j in itertools.combinations(range(len(multisets)), 2):
        common = sum((counts[i] & counts[j]).values())
        if counts[i] == counts[j]:
            exact.append((i, j))
        elif 100 * common >= level * max(len(multisets[i]), len(multisets[j])):
            pairs.add((i, j, common))
    label = components(len(multisets), [p[0] for p in exact], [p[1] for p in exact])
    weight = np.bincount(label, weights, minlength=len(multisets)).astype(int)
    return pairs, int(np.count_nonzero(weight > 1)), int(np.sum(np.maximum(weight - 1, 0)))


collections = st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=5), min_size=1,
                       max_size=25)


@given(collections, st.sampled_from([100, 90, 70, 50]), st.integers(1, 8), st.integers(0, 9),
       st.data())
@settings(max_examples=120, deadline=None)
def test_iterations_find_what_brute_force_finds(multisets: list[list[int]], level: int,
                                               iterations: int, seed: int,
                                               data: st.DataObject) -> None:
    weights = data.draw(st.lists(st.integers(1, 3), min_size=len(multisets),
                                 max_size=len(multisets)))
    sets = sets_of(multisets, weights)
    a, b, shared_, growth = find_paragraph_pairs(sets, level, iterations, seed)
    one = find_paragraph_pairs(sets, level, 1, 0)
    assert (a.tolist(), b.tolist(), shared_.tolist()) == \
        (one[0].tolist(), one[1].tolist(), one[2].tolist())  # independent of m and the seed
    near, clusters, duplicates = brute(multisets, weights, level)
    equal = sets.multiset[a] == sets.multiset[b]
    label = components(len(multisets), a[equal], b[equal])
    def cluster_pair(x: int, y: int, count: int) -> tuple[int, int, int]:
        return (min(label[x], label[y]), max(label[x], label[y]), count)

    found_near = {cluster_pair(x, y, s) for x, y, s in
                  zip(a.tolist(), b.tolist(), shared_.tolist(), strict=True)
                  if sets.multiset[x] != sets.multiset[y]}
    assert len(found_near) == np.count_nonzero(~equal)  # one pair per two clusters
    assert found_near == {cluster_pair(x, y, s) for x, y, s in near}
    last = growth[-1]
    assert (last["clusters"], last["duplicates"]) == (clusters, duplicates)
    assert last["estimated_duplicates"] == duplicates  # everything loaded: p = 1
    assert last["documents_loaded"] == sum(weights)
    for before, after in itertools.pairwise(growth):
        for key in ("documents_loaded", "clusters", "duplicates", "near_duplicates"):
            assert after[key] >= before[key]  # type: ignore[operator]
        assert after["documents_probed"] <= before["documents_probed"]  # type: ignore[operator]


def test_the_estimate_from_early_iterations_is_close() -> None:
    rng = np.random.default_rng(5)
    sizes = np.minimum(rng.zipf(2.0, size=600), 60)  # clusters, Zipf-like as in the paper
    multisets = [[int(c) * 3, int(c) * 3 + 1] for c, size in enumerate(sizes) for _ in range(size)]
    sets = sets_of(multisets, [1] * len(multisets))
    _, _, _, growth = find_paragraph_pairs(sets, 100, 10, 3)
    final = growth[-1]["duplicates"]
    assert final == int(np.sum(sizes - 1))
    assert growth[1]["duplicates"] < final  # 20%: not all found yet
    for record in (growth[1], growth[4]):  # after 20% and 50% of the iterations
        assert abs(float(record["estimated_duplicates"]) - final) / final < 0.1  # type: ignore[arg-type]


def text_doc(doc_id: str, text: str) -> Document:
    return Document(id=doc_id, raw=text.encode(), kind="text", source="corpus")


def sentences(start: int, count: int) -> str:
    return " ".join(f"This is sentence number {i} of the collection, with some words." for i in
                    range(start, start + count))


def corpus() -> list[Document]:
    base = sentences(0, 30)  # ten shingle paragraphs
    return [text_doc("orig", base), text_doc("copy", base), text_doc("copy2", base),
            text_doc("near", sentences(0, 24) + " " + sentences(100, 6)),  # 8 of 10 shared
            text_doc("other", sentences(200, 30)), text_doc("short", "Too short to count.")]


def test_dedup_clusters_levels_and_counts_like_the_paper() -> None:
    config = DedupConfig(method="shingle-paragraphs",
                         params=ParagraphConfig(level=70, iterations=3))
    result = find_duplicates(corpus(), config)
    assert result.cluster.tolist() == [0, 0, 0, 0, 4, 5]
    near_pairs = [(a, b, s) for a, b, s, m in zip(result.pairs.a.tolist(), result.pairs.b.tolist(),
                                                   result.pairs.shared.tolist(),
                                                   result.pairs.method_names(), strict=True)
                  if m == "shingle-paragraphs"]
    assert near_pairs == [(0, 3, 8)]
    stats = result.stats["near"]
    assert isinstance(stats, dict)
    assert stats["documents_considered"] == 5  # the copies count, the short page does not
    assert (stats["clusters"], stats["duplicates"]) == (1, 2)
    assert (stats["near_clusters"], stats["near_duplicates"]) == (1, 3)
    assert result.tables["growth"].column("iteration").to_pylist() == [1, 2, 3]
    strict = find_duplicates(corpus(), DedupConfig(method="shingle-paragraphs",
                                                   params=ParagraphConfig(level=90)))
    assert strict.cluster.tolist() == [0, 0, 0, 3, 4, 5]


def test_cli_writes_the_growth_table(tmp_path: Path) -> None:
    source = tmp_path / "corpus.jsonl"
    source.write_text("\n".join(json.dumps({"id": d.id, "text": d.raw.decode()})
                                for d in corpus()))
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["dedup", str(source), "--method", "shingle-paragraphs",
                                      "--level", "70", "--iterations", "4", "--format", "jsonl",
                                      "--out", str(out), "--quiet", "--workers", "1"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "growth.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [1, 2, 3, 4]
    assert {"documents_loaded", "documents_probed", "clusters", "duplicates", "near_clusters",
            "near_duplicates", "estimated_duplicates", "wall_seconds", "peak_bytes"} <= set(rows[0])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["near"]["growth"] == rows
    assert summary["near"]["estimate_from_50pct"]["iteration"] == 2
    assert summary["config"]["paragraphs"] == "paragraphs:s3:c150:min450:level70"
