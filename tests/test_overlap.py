"""S&GM98's all-pairs overlap: the sort-based join (in memory and external) and coarse counting
give exactly the pairs and counts of a brute-force count."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup._types import U32
from neardup.config.overlap import OverlapConfig, parse_bytes
from neardup.errors import ConfigError
from neardup.overlap.coarse import coarse_overlap
from neardup.overlap.relation import ChunkRelation, PairCursor
from neardup.overlap.sortbased import Overlap, sort_overlap

Triples = list[tuple[int, int, int]]


def brute(sets: list[U32], threshold: int) -> Triples:
    out = []
    for i, j in itertools.combinations(range(len(sets)), 2):
        shared = np.intersect1d(sets[i], sets[j]).size
        if shared >= threshold:
            out.append((i, j, shared))
    return out


def triples(overlap: Overlap) -> Triples:
    return list(zip(overlap.a.tolist(), overlap.b.tolist(), overlap.shared.tolist(), strict=True))


def as_sets(rows: list[list[int]]) -> list[U32]:
    return [np.unique(np.array(r, dtype=np.uint32)) for r in rows]


corpora = st.lists(st.lists(st.integers(0, 40), max_size=25), max_size=30).map(as_sets)


@given(corpora, st.integers(1, 6), st.integers(1, 64), st.integers(1, 3),
       st.sampled_from([0.0, 0.3, 0.9]), st.integers(0, 3))
@settings(max_examples=150, deadline=None)
def test_sort_and_coarse_equal_brute_force(sets: list[U32], threshold: int, buckets: int,
                                          hashes: int, pilot: float, copies: int) -> None:
    sets = sets + [sets[0].copy() for _ in range(copies if sets else 0)]  # exact copies
    relation = ChunkRelation.from_sets(sets)
    expected = brute(sets, threshold)
    assert triples(sort_overlap(relation, threshold)) == expected
    assert triples(sort_overlap(relation, threshold, memory_limit=2**16)) == expected
    coarse = coarse_overlap(relation, threshold, buckets=buckets, hashes=hashes, pilot=pilot)
    assert triples(coarse) == expected


def heavy_corpus(documents: int, seed: int) -> list[U32]:
    """One chunk in every document, a second in half of them, near-copies in families of 4, and
    random chunks from a small vocabulary so that many pairs share a few chunks."""
    rng = np.random.default_rng(seed)
    families = rng.integers(0, 2**31, size=(documents // 4 + 1, 30))
    sets = []
    for doc in range(documents):
        own = families[doc // 4][rng.random(30) < 0.8]
        noise = rng.integers(2**31, 2**31 + 3000, size=20)
        common = [7, 8] if doc % 2 else [7]
        sets.append(np.unique(np.concatenate([own, noise, common]).astype(np.uint32)))
    return sets


@pytest.mark.slow
def test_a_chunk_shared_by_thousands_of_documents() -> None:
    sets = heavy_corpus(3000, 1)
    relation = ChunkRelation.from_sets(sets)
    assert relation.group_sizes().max() == 3000
    in_memory = sort_overlap(relation, 15)
    external = sort_overlap(relation, 15, memory_limit=2**21)
    coarse = coarse_overlap(relation, 15, buckets=1 << 16, hashes=2, pilot=0.05)
    assert len(in_memory) > 500  # the families
    for other in (external, coarse):
        assert np.array_equal(other.a, in_memory.a) and np.array_equal(other.b, in_memory.b)
        assert np.array_equal(other.shared, in_memory.shared)
    expand = external.phases["expand_sort_runs"]
    assert expand["runs"] > 1 and expand["spilled_bytes"] > 0  # type: ignore[operator]
    assert expand["pairs_expanded"] == relation.pair_total()
    scans = coarse.phases
    assert scans["pilot"]["deferred"] > 0  # type: ignore[operator]
    assert scans["count_scan"]["false_positives_removed"] >= 0  # type: ignore[operator]
    assert scans["hash_scan_2"]["pairs_counted"] <= scans["hash_scan_1"]["pairs_counted"]  # type: ignore[operator]


def test_coarse_counting_removes_false_positives() -> None:
    sets = heavy_corpus(400, 2)
    relation = ChunkRelation.from_sets(sets)
    few = coarse_overlap(relation, 15, buckets=64, hashes=1)
    many = coarse_overlap(relation, 15, buckets=1 << 20, hashes=3)
    assert triples(few) == triples(many) == triples(sort_overlap(relation, 15))
    assert few.phases["count_scan"]["false_positives_removed"] > \
        many.phases["count_scan"]["false_positives_removed"]  # type: ignore[operator]
    assert few.phases["hash_scan_1"]["heavy_buckets"] == 64
    for phase in few.phases.values():
        assert {"cpu_seconds", "wall_seconds", "peak_bytes"} <= set(phase)


def test_exact_copies_get_their_centres_pairs_back() -> None:
    base = np.arange(20, dtype=np.uint32)
    sets = [base, base.copy(), base[:18].copy(), np.arange(100, 130, dtype=np.uint32), base.copy()]
    relation = ChunkRelation.from_sets(sets)
    coarse = coarse_overlap(relation, 15)
    assert coarse.phases["exact_copies"]["copies_removed"] == 2
    assert triples(coarse) == [(0, 1, 20), (0, 2, 18), (0, 4, 20), (1, 2, 18), (1, 4, 20),
                               (2, 4, 18)]
    assert triples(sort_overlap(relation, 15)) == triples(coarse)


def test_drop_common_removes_the_most_shared_chunks() -> None:
    sets = as_sets([[1, 2, 3], [1, 2, 4], [1, 5], [6]])
    relation, chunks, rows = ChunkRelation.from_sets(sets).drop_common(2)
    assert (chunks, rows) == (1, 3)
    assert triples(sort_overlap(relation, 1)) == [(0, 1, 1)]


def test_the_pair_cursor_resumes_anywhere() -> None:
    sets = heavy_corpus(60, 3)
    relation = ChunkRelation.from_sets(sets)
    whole = np.empty(relation.pair_total(), dtype=np.uint64)
    assert PairCursor(relation).fill(whole) == whole.size
    cursor, parts = PairCursor(relation), []
    buffer = np.empty(7, dtype=np.uint64)
    while (filled := cursor.fill(buffer)) > 0:
        parts.append(buffer[:filled].copy())
    assert np.array_equal(np.concatenate(parts), whole)


def test_empty_relations() -> None:
    for sets in ([], [np.empty(0, np.uint32)], as_sets([[1], [2]])):
        relation = ChunkRelation.from_sets(sets)
        assert len(sort_overlap(relation, 1)) == len(coarse_overlap(relation, 1)) == 0


def test_overlap_config_validates_and_parses_sizes() -> None:
    assert parse_bytes("512M") == 512 * 2**20 and parse_bytes("2GiB") == 2 * 2**30
    assert parse_bytes("none") is None and parse_bytes("65536") == 65536
    with pytest.raises(ConfigError, match="memory_limit"):
        parse_bytes("lots")
    for bad in ({"hashes": 0}, {"pilot": 1.0}, {"algorithm": "hash"}, {"memory_limit": 10},
                {"drop_common": 1}, {"min_shared": 0}):
        with pytest.raises(ConfigError, match=next(iter(bad))):
            OverlapConfig(**bad)  # type: ignore[arg-type]
