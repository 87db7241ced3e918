"""Manku's planner: Example 3.1 reproduced, the recursion X(f, k, d), completeness of every design
(exhaustively over difference patterns, and against brute force on clustered fingerprints), the
CLI."""

from __future__ import annotations

import itertools
import json
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.cli.main import cli
from neardup.errors import ConfigError
from neardup.index.hamming import brute_force_pairs, hamming_pairs, permute_table
from neardup.index.planner import MAX_TABLES, Plan, Split, plan, tables_needed

N = 2**34
# Example 3.1 (f = 64, k = 3, 2^34 fingerprints): the table count, p_i -> how many tables, and the
# paper's "on average, a probe retrieves at most" 2^(34 - min p_i) fingerprints per table.
EXAMPLE_3_1 = [
    (20, 31, {31: 4, 32: 12, 33: 4}, 8, Split((11, 11, 11, 11, 10, 10), 3, (None,) * 20)),
    (16, 28, {28: 16}, 64, Split((16,) * 4, 1, (Split((12,) * 4, 1, (None,) * 4),) * 4)),
    (10, 25, {25: 4, 26: 6}, 512, Split((13, 13, 13, 13, 12), 2, (None,) * 10)),
    (4, 16, {16: 4}, 256 * 1024, Split((16,) * 4, 1, (None,) * 4)),
]


@pytest.mark.parametrize(("count", "p_min", "prefixes", "per_table", "design"), EXAMPLE_3_1)
def test_example_3_1_by_min_prefix_and_by_budget(
    count: int, p_min: int, prefixes: dict[int, int], per_table: int, design: Split
) -> None:
    for result in (plan(64, 3, N, min_prefix=p_min), plan(64, 3, N, tables=count)):
        assert len(result.tables) == count == result.paper_recursion
        assert Counter(result.prefix_bits) == prefixes
        assert result.min_prefix == p_min
        assert result.expected_matches(min(result.prefix_bits)) == per_table
        assert result.design == design
        assert result.bytes_uncompressed == 8 * N * count
        assert 0.5 < result.bytes_compressed / result.bytes_uncompressed < 0.56  # about half


def test_sixteen_tables_lead_with_a_16_bit_block_then_a_12_bit_block() -> None:
    result = plan(64, 3, N, tables=16)
    assert result.blocks == ("4 blocks of 16,16,16,16 bits, 1 leading; then, for each choice, the "
                             "other 48 bits in 4 blocks of 12,12,12,12 bits, 1 leading")
    leads = {tuple(w for _, w in layout.leading_segments()) for layout in result.layouts}
    assert (16, 12) in leads and (28,) in leads  # 0-15 then 16-27 merge into one segment
    second = result.layouts[5]  # block 16-31 leads, then the second 12 bits of 0-15, 32-63
    assert second.leading_segments() == ((16, 16), (12, 4), (32, 8))


def test_recursion_values() -> None:
    expected = {1: 4, 16: 4, 17: 10, 25: 10, 26: 16, 28: 16, 29: 20, 31: 20, 32: 32, 33: 35}
    assert {p: tables_needed(64, 3, 34, p) for p in expected} == expected
    assert tables_needed(64, 3, 34, 32, whole_bits=False) == 20  # 3 of 6 blocks of 10.67 bits
    assert tables_needed(64, 3, 34, 28) == tables_needed(64, 3, 12.5, 28)  # d cancels out
    assert tables_needed(64, 3, 34, 0) == 1  # d <= tau at once: one unpermuted table
    assert tables_needed(64, 3, 34, 61) == 41664 == tables_needed(64, 3, 34, 61, whole_bits=False)
    assert tables_needed(8, 1, 10, 4) == 2  # two 4-bit blocks, one leads
    assert tables_needed(64, 0, 34, 64) == 1
    with pytest.raises(ConfigError, match="p_min=62"):
        tables_needed(64, 3, 34, 62)


def test_recursion_grows_with_the_prefix() -> None:
    for k in (1, 2, 3, 4):
        counts = [tables_needed(64, k, 30, p) for p in range(1, 64 - k + 1)]
        assert counts == sorted(counts)
        assert counts[0] == k + 1


def test_budget_gives_the_longest_shortest_prefix() -> None:
    for budget in range(4, 60):
        result = plan(64, 3, 10**9, tables=budget)
        assert len(result.layouts) <= budget
        assert tables_needed(64, 3, 30, result.min_prefix + 1) > budget


def _prefix_masks(result: Plan) -> np.ndarray:
    masks = []
    for layout in result.layouts:
        mask = 0
        for start, width in layout.leading_segments():
            for bit in range(start, start + width):
                mask |= 1 << (63 - bit)
        masks.append(mask)
    return np.array(masks, dtype=np.uint64)


def _patterns(k: int) -> np.ndarray:
    """Every XOR of two fingerprints within distance k."""
    out = [0]
    for weight in range(1, k + 1):
        out += [sum(1 << b for b in bits) for bits in itertools.combinations(range(64), weight)]
    return np.array(out, dtype=np.uint64)


DESIGNS = [(3, {"min_prefix": p}) for p in (16, 25, 28, 31, 32)] + [
    (1, {"min_prefix": 32}), (1, {"tables": 9}), (2, {"min_prefix": 30}), (2, {"tables": 12}),
    (3, {"tables": 45}), (0, {"min_prefix": 64}), (4, {"min_prefix": 24})]


@pytest.mark.parametrize(("k", "kwargs"), DESIGNS)
def test_every_pattern_within_k_misses_some_tables_prefix(k: int, kwargs: dict[str, int]) -> None:
    """Pigeonhole, checked exhaustively: a pair within k is found by a table iff their XOR has no
    bit in that table's prefix, so every XOR of weight <= k must avoid some prefix."""
    masks = _prefix_masks(plan(64, k, 2**30, **kwargs))
    patterns = _patterns(k)
    found = np.zeros(patterns.size, dtype=bool)
    for mask in masks:
        found |= (patterns & mask) == 0
    assert found.all()


@pytest.mark.parametrize(("count", "p_min"), [(20, 31), (16, 28), (10, 25), (4, 16)])
def test_no_table_of_the_papers_designs_is_redundant(count: int, p_min: int) -> None:
    masks = _prefix_masks(plan(64, 3, N, min_prefix=p_min))
    patterns = _patterns(3)
    covered = np.stack([(patterns & mask) == 0 for mask in masks])
    alone = covered & (covered.sum(axis=0) == 1)
    assert alone.any(axis=1).all()  # each table is the only one to find some pattern


@st.composite
def clustered(draw: st.DrawFn, k: int) -> np.ndarray:
    """Random fingerprints, each with near-copies at every distance 0..k+1."""
    bases = draw(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=12))
    values = list(bases)
    for base in bases:
        for distance in range(k + 2):
            bits = draw(st.lists(st.integers(0, 63), min_size=distance, max_size=distance,
                                 unique=True))
            values.append(base ^ sum(1 << b for b in bits))
    return np.array(values, dtype=np.uint64)


def _pairs(found: tuple[np.ndarray, np.ndarray]) -> set[tuple[int, int]]:
    return set(zip(found[0].tolist(), found[1].tolist(), strict=True))


@given(st.sampled_from(DESIGNS), st.data())
@settings(max_examples=120, deadline=None)
def test_every_design_finds_what_brute_force_finds(design: tuple[int, dict[str, int]],
                                                   data: st.DataObject) -> None:
    k, kwargs = design
    values = data.draw(clustered(k))
    tables = plan(64, k, 2**30, **kwargs).tables
    assert _pairs(hamming_pairs(values, k, tables)) == _pairs(brute_force_pairs(values, k))


def test_permutation_places_the_segments_in_order() -> None:
    value = np.array([0x0123_4567_89AB_CDEF], dtype=np.uint64)
    bits = format(int(value[0]), "064b")
    for p_min in (28, 31, 32):
        result = plan(64, 3, N, min_prefix=p_min)
        for layout, table in zip(result.layouts, result.tables, strict=True):
            placed = format(int(permute_table(value, table)[0]), "064b")
            assert placed == "".join(bits[s : s + w] for s, w in layout.segments)
            leading = "".join(bits[s : s + w] for s, w in layout.leading_segments())
            assert placed[: layout.prefix_bits] == leading


def test_plan_rejects_bad_requests() -> None:
    with pytest.raises(ConfigError, match="exactly one"):
        plan(64, 3, N)
    with pytest.raises(ConfigError, match="exactly one"):
        plan(64, 3, N, min_prefix=20, tables=10)
    with pytest.raises(ConfigError, match="tables=3"):
        plan(64, 3, N, tables=3)
    with pytest.raises(ConfigError, match="min_prefix=62"):
        plan(64, 3, N, min_prefix=62)
    with pytest.raises(ConfigError, match=f"at most {MAX_TABLES}"):
        plan(64, 3, N, min_prefix=61)
    with pytest.raises(ConfigError, match="k=64"):
        plan(64, 64, N, min_prefix=1)
    other = plan(32, 2, 10**6, min_prefix=20)
    assert len(other.layouts) == 15
    with pytest.raises(ConfigError, match="64-bit"):
        _ = other.tables


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["plan", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_cli_json_reproduces_example_3_1() -> None:
    for count, p_min, prefixes, per_table, _ in EXAMPLE_3_1:
        report = json.loads(_run("--bits", "64", "--k", "3", "--fingerprints", "2^34",
                                 "--tables", str(count), "--json"))
        assert report["tables"] == count == len(report["table_plans"])
        assert Counter(t["prefix_bits"] for t in report["table_plans"]) == prefixes
        assert report["min_prefix"] == p_min
        assert report["max_expected_per_table"] == per_table
        assert report["memory"]["uncompressed_bytes"] == 8 * N * count
        by_min = json.loads(_run("--fingerprints", "2**34", "--min-prefix", str(p_min), "--json"))
        assert by_min["table_plans"] == report["table_plans"]


def test_cli_counts_and_text_output() -> None:
    for text in ("2^34", "2**34", "1.7179869184e10", "17179869184", "17_179_869_184"):
        assert json.loads(_run("--fingerprints", text, "--tables", "4", "--json"))[
            "fingerprints"] == N
    report = _run("--fingerprints", "8e9", "--min-prefix", "31")
    assert "20 tables, every prefix p_i >= 31 bits" in report
    assert "6 blocks of 11,11,11,11,10,10 bits, 3 leading" in report


def test_cli_errors_are_one_line() -> None:
    runner = CliRunner()
    bad = runner.invoke(cli, ["plan", "--fingerprints", "lots", "--tables", "4"])
    assert bad.exit_code == 2 and "not a count" in bad.output
    both = runner.invoke(cli, ["plan", "--fingerprints", "1e9"])
    assert both.exit_code == 2 and "exactly one of --min-prefix and --tables" in both.output
    small = runner.invoke(cli, ["plan", "--fingerprints", "1e9", "--tables", "2"])
    assert small.exit_code == 1
    assert small.output.strip() == "neardup: error: tables=2: k=3 needs at least 4 tables"
