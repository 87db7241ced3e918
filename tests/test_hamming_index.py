"""HammingIndex: online and batch queries equal a brute-force scan, for every design."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError
from neardup.index.hamming import HammingDesign, TablePlan
from neardup.index.segmented import DELTA_TAIL, HammingIndex
from neardup.index.tables import Matches, PermutedTables, brute_force_matches

fingerprint = st.integers(0, 2**64 - 1)
DESIGNS = [HammingDesign((16, 16, 16, 16), 1), HammingDesign((13, 13, 13, 13, 12), 2),
           HammingDesign((11, 11, 11, 11, 10, 10), 3), HammingDesign((32, 32), 1)]


@st.composite
def clustered(draw: st.DrawFn, max_distance: int = 4) -> list[int]:
    """Random fingerprints and near-copies of them at every distance 0..max_distance."""
    bases = draw(st.lists(fingerprint, min_size=1, max_size=20))
    values = list(bases)
    for base in bases:
        for distance in range(max_distance + 1):
            if draw(st.booleans()):
                flips = draw(st.lists(st.integers(0, 63), min_size=distance,
                                      max_size=distance, unique=True))
                values.append(base ^ sum(1 << bit for bit in flips))
    return values


def _triples(matches: Matches) -> set[tuple[int, int, int]]:
    return set(zip(matches.query.tolist(), matches.id.tolist(), matches.distance.tolist(),
                   strict=True))


@pytest.mark.slow
@given(clustered(), clustered(), st.sampled_from(DESIGNS), st.integers(0, 3), st.booleans())
@settings(max_examples=150, deadline=None)
def test_online_and_batch_equal_brute_force(stored: list[int], queries: list[int],
                                            design: HammingDesign, k: int,
                                            compress: bool) -> None:
    k = min(k, design.max_k)
    queries = queries + stored[:5]
    index = HammingIndex(design, design.max_k)
    half = len(stored) // 2
    index.add(stored[:half], range(half))
    index.freeze()
    index.add(stored[half:], range(half, len(stored)))      # the rest stays in the delta
    if compress:
        index.compress()
    expected = brute_force_matches(stored, range(len(stored)), queries, k)
    assert _triples(index.query_batch(queries, k)) == _triples(expected)
    online = Matches.concat([
        Matches(np.full(len(m), position, dtype=np.int64), m.id, m.distance)
        for position, q in enumerate(queries) for m in [index.query(q, k)]])
    assert _triples(online) == _triples(expected)


@given(clustered(), clustered(), st.sampled_from(DESIGNS), st.integers(0, 3), st.booleans(),
       st.integers(0, 2))
@settings(max_examples=30, deadline=None)
def test_queries_answered_together_equal_each_online_query(
        stored: list[int], queries: list[int], design: HammingDesign, k: int, compress: bool,
        segments: int) -> None:
    """``query_each`` gives the brute force's matches sorted by query, then nearest first,
    and what ``query`` gives each fingerprint, over frozen segments (plain or compressed) and
    the delta."""
    k = min(k, design.max_k)
    queries = queries + stored[:5]
    index = HammingIndex(design, design.max_k)
    cut = [len(stored) * n // 3 for n in range(4)]
    for n in range(3):
        index.add(stored[cut[n]:cut[n + 1]], range(cut[n], cut[n + 1]))
        if n < segments:
            index.freeze()
    if compress:
        index.compress()
    together = index.query_each(queries, k)
    alone = [index.query(q, k) for q in queries]
    assert together.query.tolist() == [p for p, m in enumerate(alone) for _ in range(len(m))]
    assert together.id.tolist() == [i for m in alone for i in m.id.tolist()]
    assert together.distance.tolist() == [d for m in alone for d in m.distance.tolist()]
    expected = brute_force_matches(stored, range(len(stored)), queries, k).sorted()
    for field in ("query", "id", "distance"):
        assert getattr(together, field).tolist() == getattr(expected, field).tolist()
    assert len(index.query_each([], k)) == 0


@given(st.lists(fingerprint, min_size=1, max_size=60), st.integers(0, 2))
@settings(max_examples=60, deadline=None)
def test_a_fingerprint_always_finds_itself(values: list[int], k: int) -> None:
    segment = PermutedTables.build(DESIGNS[0].plans(), values)
    for position, value in enumerate(values):
        found = segment.query(value, k)
        assert position in found.id.tolist()
        assert found.distance[found.id == position].tolist() == [0]


def test_results_are_nearest_first_and_reported_once() -> None:
    base = 0x0123_4567_89AB_CDEF
    stored = [base ^ 0b111, base, base ^ 0b1, base ^ (1 << 40), base]
    index = HammingIndex(DESIGNS[1], 3)
    index.add(stored, [10, 11, 12, 13, 14])
    index.freeze()
    found = index.query(base)
    assert found.id.tolist() == [11, 14, 12, 13, 10]
    assert found.distance.tolist() == [0, 0, 1, 1, 3]


def _runs(bits: list[int]) -> tuple[tuple[int, int], ...]:
    """An ordered list of bit positions as segments of consecutive bits."""
    segments: list[list[int]] = []
    for bit in bits:
        if segments and segments[-1][0] + segments[-1][1] == bit:
            segments[-1][1] += 1
        else:
            segments.append([bit, 1])
    return tuple((start, width) for start, width in segments)


def test_a_two_level_design_finds_every_pair() -> None:
    # Manku's 16 tables: 4 blocks of 16 choose 1, the other 48 bits in 4 blocks of 12 choose 1
    plans = []
    for lead in range(4):
        lead_bits = list(range(16 * lead, 16 * lead + 16))
        rest = [bit for bit in range(64) if bit not in lead_bits]
        for second in range(4):
            chosen = rest[12 * second:12 * second + 12]
            order = lead_bits + chosen + [bit for bit in rest if bit not in chosen]
            plans.append(TablePlan(_runs(order), 28))
    rng = np.random.default_rng(5)
    base = rng.integers(0, 2**63, 300, dtype=np.uint64)
    near = base.copy()
    for _ in range(3):
        near ^= np.uint64(1) << rng.integers(0, 64, base.size).astype(np.uint64)
    stored = np.concatenate([base, near])
    index = HammingIndex(plans, 3)
    index.add(stored, np.arange(stored.size))
    index.freeze()
    expected = brute_force_matches(stored, np.arange(stored.size), stored, 3)
    assert len(expected) > stored.size
    assert _triples(index.query_batch(stored, 3)) == _triples(expected)


def test_k_beyond_the_design_is_refused() -> None:
    with pytest.raises(ConfigError, match="k=4"):
        HammingIndex(DESIGNS[0], 4)
    index = HammingIndex(DESIGNS[0], 3)
    with pytest.raises(ConfigError, match="k=5"):
        index.query(0, 5)


PLANNED = [(tables, None) for tables in (4, 10, 16, 20)] + [(None, p) for p in (20, 28, 32)]


@given(clustered(), st.sampled_from(PLANNED), st.booleans())
@settings(max_examples=60, deadline=None)
def test_every_planner_design_equals_brute_force(stored: list[int],
                                                  choice: tuple[int | None, int | None],
                                                  compress: bool) -> None:
    from neardup.index.planner import plan

    tables, min_prefix = choice
    design = plan(64, 3, 2**34, tables=tables, min_prefix=min_prefix)
    index = HammingIndex(design.tables, 3)
    index.add(stored, range(len(stored)))
    index.freeze()
    if compress:
        index.compress()
    expected = brute_force_matches(stored, range(len(stored)), stored, 3)
    assert _triples(index.query_batch(stored, 3)) == _triples(expected)
    online = Matches.concat([
        Matches(np.full(len(m), position, dtype=np.int64), m.id, m.distance)
        for position, q in enumerate(stored) for m in [index.query(q, 3)]])
    assert _triples(online) == _triples(expected)


def test_an_unfrozen_delta_answers_as_brute_force_nearest_first() -> None:
    rng = np.random.default_rng(7)
    base = int(rng.integers(0, 2**63))
    near = [base ^ (1 << int(bit)) ^ (1 << int(other)) for bit, other
            in rng.integers(0, 64, size=(150, 2))]                    # more than one buffer
    stored = near + rng.integers(0, 2**63, size=500).tolist()
    index = HammingIndex(HammingDesign((11, 11, 11, 11, 10, 10), 3), 3)
    index.add(stored, range(len(stored)))
    found = index.query(base, 2)
    expected = brute_force_matches(stored, range(len(stored)), [base], 2)
    assert _triples(found) == _triples(expected) and len(found) >= 100
    assert found.distance.tolist() == sorted(found.distance.tolist())


def test_a_delta_grown_in_small_adds_is_indexed_in_runs_and_answers_as_brute_force() -> None:
    """A delta several tails long, added a few at a time (a crawler's adds), is mostly in runs
    of permuted tables, and its online, together and batch answers equal brute force; a freeze
    leaves no run behind."""
    rng = np.random.default_rng(11)
    bases = rng.integers(0, 2**63, size=400).tolist()
    copies = [b ^ (1 << int(bit)) ^ (1 << int(other)) for b in bases
              for bit, other in rng.integers(0, 64, size=(3, 2))]
    stored = bases + copies + rng.integers(0, 2**63, size=3 * DELTA_TAIL).tolist()
    order = rng.permutation(len(stored))
    stored = [stored[i] for i in order]
    index = HammingIndex(DESIGNS[2], 3)
    for start in range(0, len(stored), 7):
        index.add(stored[start:start + 7], range(start, min(start + 7, len(stored))))
    assert index.delta_size == len(stored)
    assert index._indexed() > len(stored) - DELTA_TAIL          # only the tail is scanned
    queries = bases[:50] + rng.integers(0, 2**63, size=20).tolist()
    expected = brute_force_matches(stored, range(len(stored)), queries, 3).sorted()
    together = index.query_each(queries, 3)
    for field in ("query", "id", "distance"):
        assert getattr(together, field).tolist() == getattr(expected, field).tolist()
    assert _triples(index.query_batch(queries, 3)) == _triples(expected)
    assert _triples(index.query(queries[0], 3)) == {
        (0, i, d) for q, i, d in _triples(expected) if q == 0}
    segment = index.freeze()
    assert segment is not None and len(segment) == len(stored) and index._runs == []
    assert _triples(index.query_batch(queries, 3)) == _triples(expected)
