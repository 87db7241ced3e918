"""Candidate search: permuted Hamming tables and LSH bands against brute force."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.errors import ConfigError
from neardup.index.hamming import (
    HammingDesign,
    brute_force_pairs,
    design_for,
    hamming_pairs,
    permute,
)
from neardup.index.lsh import LSHBands, _candidates, _errors, choose_bands, lsh_pairs

fingerprint = st.integers(0, 2**64 - 1)


@st.composite
def clustered_fingerprints(draw: st.DrawFn) -> list[int]:
    """Random fingerprints plus near-copies at every distance 0..5 of some of them."""
    bases = draw(st.lists(fingerprint, min_size=1, max_size=25))
    values = list(bases)
    for base in bases:
        for _ in range(draw(st.integers(0, 3))):
            flips = draw(st.lists(st.integers(0, 63), max_size=5, unique=True))
            values.append(base ^ sum(1 << bit for bit in flips))
    return values


def _as_set(pairs: tuple[np.ndarray, np.ndarray]) -> set[tuple[int, int]]:
    return set(zip(pairs[0].tolist(), pairs[1].tolist(), strict=True))


@given(clustered_fingerprints(), st.integers(0, 3))
@settings(max_examples=150, deadline=None)
def test_hamming_tables_equal_brute_force(values: list[int], k: int) -> None:
    array = np.array(values, dtype=np.uint64)
    assert _as_set(hamming_pairs(array, k)) == _as_set(brute_force_pairs(array, k))


@given(clustered_fingerprints(), st.sampled_from([(4, 1), (5, 2), (6, 3), (7, 4)]))
@settings(max_examples=60, deadline=None)
def test_every_design_equals_brute_force_at_k3(values: list[int], shape: tuple[int, int]) -> None:
    count, choose = shape
    base, extra = divmod(64, count)
    design = HammingDesign(tuple(base + (i < extra) for i in range(count)), choose)
    array = np.array(values, dtype=np.uint64)
    assert _as_set(hamming_pairs(array, 3, design)) == _as_set(brute_force_pairs(array, 3))


def test_permutation_moves_the_chosen_blocks_to_the_top() -> None:
    design = HammingDesign((16, 16, 16, 16), 1)
    value = np.array([0x1111_2222_3333_4444], dtype=np.uint64)
    assert int(permute(value, design, (2,))[0]) == 0x3333_1111_2222_4444
    assert int(permute(value, design, (0,))[0]) == 0x1111_2222_3333_4444


def test_design_for_grows_tables_with_the_input() -> None:
    assert design_for(3, 1000).tables() == [(0,), (1,), (2,), (3,)]
    assert len(design_for(3, 10_000_000).tables()) == 10
    with pytest.raises(ConfigError):
        hamming_pairs(np.zeros(3, dtype=np.uint64), 4, HammingDesign((16, 16, 16, 16), 1))


def test_crowded_bucket_yields_every_pair_once() -> None:
    values = np.zeros(300, dtype=np.uint64)  # one bucket of 300 equal fingerprints
    a, b = hamming_pairs(values, 3)
    assert a.size == 300 * 299 // 2
    assert np.all(a < b)


def test_choose_bands_balances_the_errors() -> None:
    bands = choose_bands(128, 0.8, fp_weight=0.5)
    assert bands.bands * bands.rows <= 128
    assert bands.probability(0.95) > 0.99
    assert bands.probability(0.5) < 0.01
    recall_first = choose_bands(128, 0.8, fp_weight=0.1)
    assert recall_first.probability(0.8) > bands.probability(0.8)


def _loop_error(bands: int, rows: int, threshold: float, fp_weight: float) -> float:
    """One banding's weighted error as ``choose_bands`` computed it one banding at a time."""
    low, high = np.linspace(0.0, threshold, 201), np.linspace(threshold, 1.0, 201)

    def area(curve: np.ndarray, grid: np.ndarray) -> float:
        return float(np.sum((curve[1:] + curve[:-1]) * np.diff(grid)) / 2.0)

    false_pos = area(1.0 - (1.0 - low**rows) ** bands, low)
    false_neg = area((1.0 - high**rows) ** bands, high)
    return fp_weight * false_pos + (1.0 - fp_weight) * false_neg


def _loop_choice(num_perm: int, threshold: float, fp_weight: float) -> tuple[int, int]:
    """The banding the loop over every (bands, rows) chose: the first strictly better one
    after (1, num_perm)."""
    best, best_error = (1, num_perm), _loop_error(1, num_perm, threshold, fp_weight)
    for bands in range(1, num_perm + 1):
        for rows in range(1, num_perm // bands + 1):
            error = _loop_error(bands, rows, threshold, fp_weight)
            if error < best_error:
                best, best_error = (bands, rows), error
    return best


@pytest.mark.parametrize("num_perm", [1, 2, 3, 7, 16, 64, 128])
def test_choose_bands_picks_what_the_loop_over_every_banding_picked(num_perm: int) -> None:
    for threshold in (0.1, 0.5, 0.8, 0.95):
        for fp_weight in (0.1, 0.5, 0.9):
            chosen = choose_bands.__wrapped__(num_perm, threshold, fp_weight)
            assert (chosen.bands, chosen.rows) == _loop_choice(num_perm, threshold, fp_weight), \
                (threshold, fp_weight)


def test_every_bandings_error_equals_the_loops_to_the_bit() -> None:
    bands, rows = _candidates(128)
    for threshold, fp_weight in ((0.8, 0.1), (0.85, 0.5), (0.95, 0.5)):
        expected = [_loop_error(b, r, threshold, fp_weight) for b, r in
                    zip(bands.tolist(), rows.tolist(), strict=True)]
        assert _errors(128, threshold, fp_weight).tolist() == expected


def test_lsh_pairs_find_equal_bands_only() -> None:
    signatures = np.array([[1, 2, 3, 4], [1, 2, 9, 9], [7, 7, 3, 4], [5, 6, 7, 8]], dtype=np.uint64)
    assert _as_set(lsh_pairs(signatures, LSHBands(2, 2))) == {(0, 1), (0, 2)}
    with pytest.raises(ConfigError):
        lsh_pairs(signatures, LSHBands(3, 2))
