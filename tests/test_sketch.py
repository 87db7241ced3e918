"""Broder's MIN_s and MOD_m sketches: golden values, the permutation, and unbiased estimators."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config import SketchConfig
from neardup.errors import ConfigError
from neardup.fingerprints.sketch import (
    Sketcher,
    common_modulus,
    estimate_containment,
    estimate_resemblance,
    mod_estimates,
    modulus_for,
)

TEXT = " ".join(f"w{i}" for i in range(300))
PROBES = np.array([0, 1, 2**40 - 1, 2**40, 0xDEADBEEFCAFEBABE], dtype=np.uint64)


def test_permutation_golden_values_40_bits() -> None:
    # Only the low 40 bits count: 0 and 2**40 are the same 40-bit fingerprint.
    assert [int(v) for v in Sketcher().permute(PROBES)] == [
        0x116700916C, 0xAD57572EAA, 0x51ABAE75DD, 0x116700916C, 0xB6036DC505]


def test_permutation_golden_values_64_bits() -> None:
    assert [int(v) for v in Sketcher(SketchConfig(bits=64)).permute(PROBES)] == [
        0xF1BD46383D04CF85, 0x4E44A5BB82839D46, 0xD9534F94F036BAB9, 0x3131F0BAF4B0EE85,
        0x239EF34434993CD4]


def test_sketch_golden_values() -> None:
    # 300 tokens -> 291 ten-word shingles; MOD_25 keeps 12 of them (about 291 / 25).
    assert [int(v) for v in Sketcher().of_canonical(TEXT)] == [
        0x846504C65, 0x1FF18D4CBA, 0x28F705D564, 0x2E02669349, 0x31533557BC, 0x41FB2C573F,
        0xB039CFFAD7, 0xCAD2353D31, 0xD6FC4606A8, 0xE45F36047C, 0xE653E41F49, 0xF39681030A]
    assert [int(v) for v in Sketcher(SketchConfig(kind="min", size=4)).of_canonical(TEXT)] == [
        0x83D04128, 0x162045A10, 0x1BA39CABC, 0x1D22AAAD5]
    assert SketchConfig().tag == "sketch:mod25:b40:seed1:w10s0"
    assert SketchConfig(kind="mod", size=1, adaptive=50).tag == "sketch:mod1:a50:b40:seed1:w10s0"


def _inverse(values: np.ndarray, sketcher: Sketcher, bits: int) -> np.ndarray:
    """pi^-1: undo the affine maps with modular inverses and the xorshift by itself."""
    mask, modulus = (1 << bits) - 1, 1 << bits
    a1, a2 = (int(a) for a in sketcher._a)
    b1, b2 = (int(b) for b in sketcher._b)
    out = []
    for y in values.tolist():
        y = ((y - b2) * pow(a2, -1, modulus)) & mask
        y ^= y >> (bits // 2)
        out.append(((y - b1) * pow(a1, -1, modulus)) & mask)
    return np.array(out, dtype=np.uint64)


@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=50), st.sampled_from([40, 64]),
       st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_permutation_is_a_bijection_of_the_fingerprint_space(
        values: list[int], bits: int, seed: int) -> None:
    sketcher = Sketcher(SketchConfig(bits=bits, seed=seed))
    x = np.array(values, dtype=np.uint64) & np.uint64((1 << bits) - 1)
    y = sketcher.permute(x)
    assert np.all(y <= np.uint64((1 << bits) - 1))
    assert np.array_equal(_inverse(y, sketcher, bits), x)


@given(st.lists(st.integers(0, 2**64 - 1), max_size=300), st.randoms(use_true_random=False))
@settings(max_examples=40, deadline=None)
def test_sketch_is_a_function_of_the_set(values: list[int], rnd: object) -> None:
    shuffled = values * 2
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    for config in (SketchConfig(size=3), SketchConfig(kind="min", size=7)):
        sketcher = Sketcher(config)
        one = sketcher.of_shingles(np.array(values, dtype=np.uint64))
        two = sketcher.of_shingles(np.array(shuffled, dtype=np.uint64))
        assert np.array_equal(one, two)
        assert np.all(np.diff(one.astype(np.float64)) > 0)


def test_min_sketch_is_the_s_smallest_and_mod_sketch_the_multiples() -> None:
    values = np.arange(1, 2000, dtype=np.uint64)
    sketcher = Sketcher(SketchConfig(kind="min", size=10))
    permuted = np.sort(sketcher.permute(values))
    assert np.array_equal(sketcher.of_shingles(values), permuted[:10])
    mod = Sketcher(SketchConfig(size=7))
    permuted = mod.permute(values)
    assert np.array_equal(mod.of_shingles(values), np.sort(permuted[permuted % 7 == 0]))


def test_adaptive_moduli_follow_the_document_length() -> None:
    config = SketchConfig(size=1, adaptive=50)
    # Under 100 shingles every one is kept; then the expected sample stays in [50, 100).
    assert [modulus_for(n, config) for n in (0, 99, 100, 199, 200, 6400, 12799)] == [
        1, 1, 2, 2, 4, 128, 128]
    assert modulus_for(10**6, SketchConfig()) == 25
    assert modulus_for(10**6, SketchConfig(kind="min", size=8)) == 1
    rng = np.random.default_rng(3)
    sizes = []
    for n in (150, 1000, 10_000, 100_000):
        sketch, modulus = Sketcher(config).with_modulus(rng.integers(0, 2**63, n, dtype=np.uint64))
        assert modulus == modulus_for(n, config)
        sizes.append(sketch.size)
    assert all(30 <= size <= 130 for size in sizes), sizes


def test_longer_documents_modulus_is_used_for_both() -> None:
    config = SketchConfig(size=1, adaptive=50)
    sketcher = Sketcher(config)
    rng = np.random.default_rng(5)
    long = rng.integers(0, 2**63, 20_000, dtype=np.uint64)
    short = long[:1_000]
    (big, m_big), (small, m_small) = sketcher.with_modulus(long), sketcher.with_modulus(short)
    assert m_big > m_small
    assert common_modulus(config, (m_small, m_big)) == m_big
    # the short text is wholly inside the long one: every sampled value of it is shared
    assert estimate_containment(small, big, config, (m_small, m_big)) == 1.0
    assert estimate_resemblance(small, big, config, (m_small, m_big)) < 0.15
    assert mod_estimates(small, big, config, (m_small, m_big)) == (
        estimate_resemblance(small, big, config, (m_small, m_big)),
        estimate_containment(small, big, config, (m_small, m_big)),
        estimate_containment(big, small, config, (m_big, m_small)))
    with pytest.raises(ConfigError, match="moduli"):
        estimate_resemblance(small, big, config)
    with pytest.raises(ConfigError, match="moduli"):
        common_modulus(config, (3, 8))


def test_estimates_on_hand_made_sketches() -> None:
    mod = SketchConfig(size=1)
    a = np.array([1, 2, 3, 4], dtype=np.uint64)
    b = np.array([3, 4, 5, 6, 7, 8], dtype=np.uint64)
    assert estimate_resemblance(a, b, mod) == 2 / 8
    assert estimate_containment(a, b, mod) == 2 / 4
    assert estimate_containment(b, a, mod) == 2 / 6
    # MIN_4: the union's 4 smallest are 1, 2, 3, 4, of which 3 and 4 are in both sketches.
    assert estimate_resemblance(a, b[:4], SketchConfig(kind="min", size=4)) == 2 / 4
    empty = np.empty(0, dtype=np.uint64)
    assert estimate_resemblance(empty, empty, mod) == 0.0
    assert estimate_containment(empty, a, mod) == 0.0


def test_containment_needs_mod_sketches() -> None:
    a = np.array([1, 2], dtype=np.uint64)
    with pytest.raises(ConfigError, match="kind='min'"):
        estimate_containment(a, a, SketchConfig(kind="min", size=2))


@pytest.mark.parametrize("kwargs", [dict(kind="max"), dict(size=0), dict(bits=32),
                                    dict(kind="min", adaptive=50), dict(seed=-1)])
def test_config_names_the_bad_value(kwargs: dict[str, object]) -> None:
    name = next(iter(kwargs)) if "adaptive" not in kwargs else "adaptive"
    with pytest.raises(ConfigError, match=name):
        SketchConfig(**kwargs)  # type: ignore[arg-type]


def _sets(only_a: int, only_b: int, shared: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    values = np.random.default_rng(seed).integers(0, 2**63, only_a + only_b + shared,
                                                  dtype=np.uint64)
    common = values[:shared]
    return (np.concatenate([common, values[shared : shared + only_a]]),
            np.concatenate([common, values[shared + only_a :]]))


SEEDS = 120


@given(st.integers(0, 1500), st.integers(0, 1500), st.integers(1, 1500), st.integers(0, 2**20))
@settings(max_examples=15, deadline=None)
def test_min_resemblance_is_unbiased(only_a: int, only_b: int, shared: int, seed: int) -> None:
    """Mean over 120 permutations within 0.04 of the exact Jaccard (MIN_100: the estimate is a
    hypergeometric share with standard deviation at most 0.05, so 0.005 for the mean)."""
    a, b = _sets(only_a, only_b, shared, seed)
    exact = shared / (only_a + only_b + shared)
    estimates = []
    for s in range(SEEDS):
        config = SketchConfig(kind="min", size=100, seed=s)
        sketcher = Sketcher(config)
        estimates.append(estimate_resemblance(sketcher.of_shingles(a), sketcher.of_shingles(b),
                                              config))
    assert abs(np.mean(estimates) - exact) < 0.04


@given(st.integers(0, 3000), st.integers(0, 3000), st.integers(1, 3000), st.integers(0, 2**20))
@settings(max_examples=15, deadline=None)
def test_mod_resemblance_and_containment_are_unbiased(
        only_a: int, only_b: int, shared: int, seed: int) -> None:
    """MOD_10 over sets of at least 1,000 shingles (100 samples expected each): the mean over 120
    permutations lies within 0.04 of the exact resemblance and of both containments."""
    shared = max(shared, 1000 - only_a, 1000 - only_b)
    a, b = _sets(only_a, only_b, shared, seed)
    exact = (shared / (only_a + only_b + shared), shared / (shared + only_a),
             shared / (shared + only_b))
    config_sums = np.zeros(3)
    for s in range(SEEDS):
        config = SketchConfig(size=10, seed=s)
        sketcher = Sketcher(config)
        sa, sb = sketcher.of_shingles(a), sketcher.of_shingles(b)
        config_sums += (estimate_resemblance(sa, sb, config), estimate_containment(sa, sb, config),
                        estimate_containment(sb, sa, config))
    assert np.all(np.abs(config_sums / SEEDS - np.array(exact)) < 0.04)


@given(st.lists(st.lists(st.integers(0, 2**64 - 1), max_size=60), max_size=12),
       st.sampled_from([SketchConfig(size=3), SketchConfig(kind="min", size=5),
                        SketchConfig(size=1, adaptive=4), SketchConfig(bits=64, size=2)]))
@settings(max_examples=60, deadline=None)
def test_sketching_many_sets_at_once_equals_one_by_one(sets: list[list[int]],
                                                        config: SketchConfig) -> None:
    sketcher = Sketcher(config)
    arrays = [np.array(s * 2, dtype=np.uint64) for s in sets]  # repeats are ignored
    offsets = np.concatenate(([0], np.cumsum([a.size for a in arrays]))).astype(np.int64)
    flat = np.concatenate(arrays) if arrays else np.empty(0, np.uint64)
    values, sketch_offsets, moduli = sketcher.of_many(flat, offsets)
    for index, array in enumerate(arrays):
        sketch, modulus = sketcher.with_modulus(array)
        assert np.array_equal(values[sketch_offsets[index]:sketch_offsets[index + 1]], sketch)
        assert moduli[index] == modulus


@given(st.lists(st.integers(0, 400), max_size=60), st.lists(st.integers(0, 400), max_size=60),
       st.sampled_from([(1, 1), (1, 2), (4, 2), (8, 8), (2, 16)]), st.booleans())
@settings(max_examples=200, deadline=None)
def test_mod_estimates_equal_the_estimates_one_at_a_time(
        a: list[int], b: list[int], moduli: tuple[int, int], shuffled: bool) -> None:
    config = SketchConfig(size=1, adaptive=50)
    first = np.unique(np.array(a, dtype=np.uint64))
    second = np.unique(np.array(b, dtype=np.uint64))
    expected = (estimate_resemblance(first, second, config, moduli),
                estimate_containment(first, second, config, moduli),
                estimate_containment(second, first, config, moduli[::-1]))
    if shuffled:                      # not as a Sketcher makes them: sorted before the merge
        first, second = first[::-1].copy(), second[::-1].copy()
    assert mod_estimates(first, second, config, moduli) == expected
