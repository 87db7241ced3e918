"""Verified means verified: every method's pairs pass its rule on the real shingle sets.

A pair with relation ``near`` has an exact resemblance at or above the floor; a ``contained``
pair an exact containment (one way) at or above the threshold. Tests run every method on
generated pages built to tempt each method into weak pairs (a page inside a longer one, pages
sharing their three longest blocks and nothing else), and on the shared WARCs.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from neardup.cluster.relations import RELATIONS
from neardup.config import DedupConfig, SketchMethod, method_names
from neardup.document import Document
from neardup.engine.scoring import sketch_rule
from neardup.methods.pairs import Pairs, method_code
from neardup.pipeline import DedupResult, find_duplicates
from neardup.sources import open_sources

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "warc"
WORDS = [f"w{i}" for i in range(3000)]
NEAR_METHODS = [m for m in method_names() if m != "exact"]


def sentence(rng: random.Random, words: int = 12) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(words)) + "."


def page(lines: list[str]) -> bytes:
    body = "\n".join(f"<p>{line}</p>" for line in lines)
    return f"<html><body>{body}</body></html>".encode()


def tempting_pages(seed: int = 0) -> list[Document]:
    """Near-copies (real pairs), a page inside a five times longer one (chunk counting pairs
    them, resemblance does not), and pages sharing only their three longest blocks (SMFA
    pairs them)."""
    rng = random.Random(seed)
    docs: list[Document] = []
    for i in range(6):
        base = [sentence(rng) for _ in range(80)]
        edited = list(base)
        edited[rng.randrange(80)] = sentence(rng)
        docs += [Document(f"n{i}a", page(base)), Document(f"n{i}b", page(edited))]
    for i in range(4):
        inner = [sentence(rng) for _ in range(80)]
        docs += [Document(f"c{i}a", page(inner)),
                 Document(f"c{i}b", page(inner + [sentence(rng) for _ in range(400)]))]
    for i in range(4):
        longest = [sentence(rng, 60) for _ in range(3)]
        docs += [Document(f"s{i}{side}", page(longest + [sentence(rng, 5) for _ in range(300)]))
                 for side in "ab"]
    return docs


def assert_verified(result: DedupResult, config: DedupConfig) -> int:
    """Every pair of the near method passes the rule; returns how many pairs it reported."""
    pairs = result.pairs.select(result.pairs.method == method_code(config.method))
    rule = config.verification
    near = pairs.relation == RELATIONS.index("near")
    contained = pairs.relation == RELATIONS.index("contained")
    assert np.all(pairs.resemblance[near] >= config.resemblance_floor)
    inside = np.maximum(pairs.containment_ab, pairs.containment_ba)[contained]
    assert np.all(inside >= config.threshold)
    equivalent = pairs.relation == RELATIONS.index("shingle-equivalent")
    assert np.all(pairs.resemblance[equivalent] >= config.resemblance_floor)
    near_stats = result.stats["near"]
    assert isinstance(near_stats, dict) and near_stats["verification"] == rule
    return len(pairs)


@pytest.mark.parametrize("method", NEAR_METHODS)
def test_no_method_reports_a_pair_below_its_rule(method: str) -> None:
    config = DedupConfig(method=method)
    result = find_duplicates(tempting_pages(), config)
    found = assert_verified(result, config)
    assert found >= 1 or method in ("supershingle", "shingle-paragraphs")
    if method in ("chunks", "smfa"):
        near = result.stats["near"]
        assert isinstance(near, dict) and near["rejected"] >= 4, near  # weak pairs refused


def test_containment_links_are_checked_on_the_exact_containment() -> None:
    config = DedupConfig(method="sketch", params=SketchMethod(relation="contained"), threshold=0.8)
    result = find_duplicates(tempting_pages(), config)
    assert_verified(result, config)
    ids = {(result.ids[a], result.ids[b])
           for a, b in zip(result.pairs.a.tolist(), result.pairs.b.tolist(), strict=True)}
    assert {("c0a", "c0b"), ("c1a", "c1b")} <= ids


def test_the_containment_rule_ignores_the_estimate() -> None:
    config = DedupConfig(method="sketch", params=SketchMethod(relation="contained"), threshold=0.5)
    one = np.ones(2)
    pairs = Pairs(a=np.array([0, 2]), b=np.array([1, 3]),
                  method=np.full(2, method_code("sketch"), dtype=np.int8),
                  relation=np.full(2, RELATIONS.index("contained"), dtype=np.int8),
                  hamming=np.full(2, -1), estimate=one * 0.5,
                  resemblance=np.array([0.1, 0.1]), containment_ab=np.array([0.24, 0.9]),
                  containment_ba=np.array([0.1, 0.12]), shared=np.full(2, 3))
    assert sketch_rule(config, pairs).tolist() == [False, True]


@pytest.mark.skipif(not DATA.is_dir(), reason=f"shared data absent: {DATA}")
@pytest.mark.slow
@pytest.mark.parametrize("method", NEAR_METHODS)
def test_every_method_is_verified_on_the_shared_warcs(method: str) -> None:
    config = DedupConfig(method=method)
    result = find_duplicates(open_sources(sorted(str(p) for p in DATA.glob("*.*gz"))), config)
    assert_verified(result, config)
