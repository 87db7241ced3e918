"""The batch pipeline end to end on hand-made documents: levels, near pairs, clusters, keep."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config import DedupConfig
from neardup.document import Document
from neardup.pipeline import DedupResult, find_duplicates

WORDS = [f"w{i}" for i in range(5000)]


def prose(seed: int, words: int = 1000) -> str:
    rng = random.Random(seed)
    return " ".join(rng.choice(WORDS) for _ in range(words))


def edit(text: str, seed: int, changes: int = 1) -> str:
    rng = random.Random(seed)
    tokens = text.split()
    for _ in range(changes):
        tokens[rng.randrange(len(tokens))] = "edited"
    return " ".join(tokens)


def doc(doc_id: str, text: str, **fields: object) -> Document:
    return Document(id=doc_id, raw=text.encode(), kind="text", **fields)  # type: ignore[arg-type]


def partition(result: DedupResult) -> set[frozenset[str]]:
    groups: dict[int, set[str]] = {}
    for position, label in enumerate(result.cluster.tolist()):
        groups.setdefault(label, set()).add(result.ids[position])
    return {frozenset(g) for g in groups.values()}


def relation_of(result: DedupResult, a: str, b: str) -> str:
    ids = result.ids
    for x, y, relation in zip(result.pairs.a, result.pairs.b, result.pairs.relation_names(),
                              strict=True):
        if {ids[x], ids[y]} == {a, b}:
            return relation
    raise AssertionError(f"no pair {a} {b}")


def corpus() -> list[Document]:
    """Simhash at k = 3 over 64 bits is strict: one edited word in 1,000 is a near-copy here,
    while three edits in 300 words already move the fingerprint by about 5 bits."""
    base, other = prose(1), prose(2)
    return [
        doc("orig", base),
        doc("copy", base),
        doc("lexical", base.upper().replace(" ", " ,  ")),
        doc("near", edit(base, 9)),
        doc("other", other),
        doc("other-near", edit(other, 4)),
        doc("alone", prose(3)),
        doc("empty-1", ""),
        doc("empty-2", "   ...   "),
    ]


@pytest.mark.parametrize("method", ["simhash", "minhash"])
def test_levels_and_near_pairs(method: str) -> None:
    result = find_duplicates(corpus(), DedupConfig(method=method))  # type: ignore[arg-type]
    assert partition(result) == {
        frozenset({"orig", "copy", "lexical", "near"}), frozenset({"other", "other-near"}),
        frozenset({"alone"}), frozenset({"empty-1"}), frozenset({"empty-2"}),
    }
    assert relation_of(result, "orig", "copy") == "identical"
    assert relation_of(result, "orig", "lexical") == "lexical"
    assert relation_of(result, "orig", "near") == "near"
    assert result.stats["empty_text"] == 2
    near = np.flatnonzero(result.pairs.relation_names() == np.array("near"))
    assert np.all(result.pairs.resemblance[near] > 0.9)


def test_exact_method_finds_only_exact_levels() -> None:
    result = find_duplicates(corpus(), DedupConfig(method="exact"))
    assert frozenset({"orig", "copy", "lexical"}) in partition(result)
    assert "near" not in result.stats


def test_shingle_equivalent_level() -> None:
    docs = [doc("a", "x y x y x y x y"), doc("b", "x y x y x y")]
    config = DedupConfig(method="exact", verify_shingles=DedupConfig().verify_shingles.__class__(2))
    result = find_duplicates(docs, config)
    assert relation_of(result, "a", "b") == "shingle-equivalent"


def test_keep_policy_and_reasons() -> None:
    base = prose(5)
    docs = [doc("short", base, url="http://b.example/a/very/long/path"),
            doc("long", base + " tail words here", url="http://a.example/x",
                fetched="2001-01-01T00:00:00Z")]
    first = find_duplicates(docs, DedupConfig(keep="first"))
    assert first.kept_doc.tolist() == [0, 0]
    assert first.reasons == ["kept:first", "duplicate:near"]
    assert find_duplicates(docs, DedupConfig(keep="longest")).kept_doc.tolist() == [1, 1]
    assert find_duplicates(docs, DedupConfig(keep="earliest")).kept_doc.tolist() == [1, 1]
    assert find_duplicates(docs, DedupConfig(keep="shortest-url")).kept_doc.tolist() == [1, 1]


def test_revisit_joins_the_record_it_repeats() -> None:
    docs = [doc("r1", prose(7)), doc("r2", "", revisit_of="r1"), doc("r3", "", revisit_of="gone")]
    result = find_duplicates(docs)
    assert result.ids == ["r1", "r2"]
    assert result.stats["revisits_without_original"] == 1
    assert result.pairs.method_names() == ["revisit"]
    assert result.documents.column("identical")[1] == result.documents.column("identical")[0]


@given(st.randoms(use_true_random=False))
@settings(max_examples=10, deadline=None)
def test_clusters_do_not_depend_on_input_order(rnd: random.Random) -> None:
    docs = corpus()
    expected = partition(find_duplicates(docs))
    rnd.shuffle(docs)
    assert partition(find_duplicates(docs)) == expected


def test_results_do_not_depend_on_the_number_of_workers() -> None:
    docs = corpus() * 3
    docs = [doc(f"{d.id}-{i}", d.raw.decode()) for i, d in enumerate(docs)]
    one = find_duplicates(docs, DedupConfig(method="minhash"), workers=1)
    two = find_duplicates(docs, DedupConfig(method="minhash"), workers=2)
    assert one.cluster.tolist() == two.cluster.tolist()
    assert one.pairs.a.tolist() == two.pairs.a.tolist()
    assert one.pairs.resemblance.tolist() == two.pairs.resemblance.tolist()
