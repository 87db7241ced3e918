"""Golden values and invariants of the canonical form, shingles and every fingerprint."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neardup.config import ExactConfig, MinHashConfig, ShingleConfig, SimHashConfig
from neardup.errors import ConfigError
from neardup.features.shingles import distinct, shingle_hashes, shingle_set, token_hashes
from neardup.fingerprints.exact import digest64, exact_prints
from neardup.fingerprints.minhash import MinHash, estimate_jaccard, permutation_parameters
from neardup.fingerprints.simhash import SimHash, hamming_distance, simhash_from_hashes
from neardup.text.canonical import canonical_bytes, canonical_text, canonical_tokens

ROSE = canonical_bytes("A rose is a rose is a rose.")
GOLDEN_DEFAULT_SIMHASH = "0x869037baec90f10d"  # distinct tokens a, rose, is: their majority


def test_canonical_form_ignores_case_punctuation_and_spacing() -> None:
    assert canonical_text("  Hello,   WORLD!\n\tIt's 2024 --- ok_then ") == (
        "hello world it s 2024 ok then"
    )
    assert canonical_text("") == ""
    assert canonical_text("... !!! ---") == ""


def test_canonical_form_is_unicode_aware() -> None:
    assert canonical_tokens("Straße Ünïcode") == ["strasse", "ünïcode"]
    assert canonical_tokens("Привет, мир!") == ["привет", "мир"]
    assert canonical_tokens("नमस्ते दुनिया") == ["नमस्ते", "दुनिया"]  # combining marks stay in words


def test_cjk_characters_are_tokens_of_their_own() -> None:
    assert canonical_tokens("東京タワーへ行く。Tokyo") == [
        "東", "京", "タ", "ワ", "ー", "へ", "行", "く", "tokyo"
    ]
    assert len(shingle_set(canonical_bytes("我们今天去北京看天安门"), 3)) == 9


def test_emoji_and_symbols_only_separate() -> None:
    assert canonical_tokens("a😀b © c") == ["a", "b", "c"]


def test_the_papers_four_shingling_example() -> None:
    # Broder: the 4-shingling of (a,rose,is,a,rose,is,a,rose) has three distinct shingles.
    assert len(shingle_hashes(ROSE, 4)) == 5
    assert len(shingle_set(ROSE, 4)) == 3


def test_golden_token_and_shingle_hashes() -> None:
    assert [hex(x) for x in token_hashes(ROSE)[:3]] == [
        "0x82a2a958a9bece5b", "0xc9c4893d90a7418c", "0x3a8a0ef6b49e57cb"]
    assert [hex(x) for x in shingle_set(ROSE, 4)] == [
        "0x75107617bf33ba97", "0x77487006f698a0b0", "0xd96a5a0ad036a9e3"]


def test_short_text_has_one_shingle_and_empty_text_none() -> None:
    assert shingle_hashes(b"two words", 5).size == 1
    assert shingle_hashes(b"", 5).size == 0


def test_shingle_seed_changes_hashes() -> None:
    assert not np.array_equal(shingle_set(ROSE, 4, seed=0), shingle_set(ROSE, 4, seed=1))


def test_charikar_known_vector() -> None:
    assert simhash_from_hashes([0xABCD, 0xBCDE, 0xCDEF]) == 0xADCF
    assert simhash_from_hashes([0xABCD, 0xBCDE, 0xCDEF], weights=[1, 1, 1]) == 0xADCF


def test_simhash_weights_move_the_majority() -> None:
    assert simhash_from_hashes([0b01, 0b10], weights=[3, 1]) == 0b01
    assert simhash_from_hashes([0b01, 0b10], weights=[1, 3]) == 0b10
    with pytest.raises(ConfigError):
        simhash_from_hashes([1, 2], weights=[1])


def test_golden_simhash() -> None:
    tf3 = SimHash(SimHashConfig(shingles=ShingleConfig(width=3), weighting="tf"))
    assert hex(tf3.of_canonical(ROSE)) == "0x90a8b9321107dd2a"
    assert hex(SimHash().of_canonical(ROSE)) == GOLDEN_DEFAULT_SIMHASH
    assert SimHash().of_canonical(b"") == 0


def test_binary_weighting_ignores_repeats() -> None:
    binary = SimHash(SimHashConfig(shingles=ShingleConfig(width=3), weighting="binary"))
    assert binary.of_canonical(b"x y z x y z x y z") == binary.of_canonical(b"x y z x y z")


def test_golden_minhash_and_permutations() -> None:
    multipliers, _ = permutation_parameters(4, 1)
    assert all(int(m) % 2 == 1 for m in multipliers)
    signature = MinHash(MinHashConfig(num_perm=4)).of_canonical(ROSE)
    assert [hex(x) for x in signature] == [
        "0xd3e668f18377041", "0x49eb14a1722de471", "0x3d306fbaf2cc8a3", "0xb610b5a3b6039fc"]


def test_golden_exact_levels() -> None:
    raw = b"<p>A rose is a rose is a rose.</p>"
    xxh = exact_prints(raw, ROSE, shingle_set(ROSE, 5))
    assert (hex(xxh.identical), hex(xxh.lexical), hex(xxh.shingle)) == (
        "0x7d407cdb9a9671c3", "0xd038d84e694387c6", "0x7f5bba4b1d9bceea")
    md5 = exact_prints(raw, ROSE, shingle_set(ROSE, 5), ExactConfig("md5"))
    assert (hex(md5.identical), hex(md5.lexical), hex(md5.shingle)) == (
        "0x2a6193930831a24", "0xf3c367b8595d5b69", "0x835f03f4f179ea66")
    assert digest64(b"abc", "md5") == 0x900150983CD24FB0  # MD5("abc") starts 900150983cd24fb0


def test_exact_levels_grade_equivalence() -> None:
    a = canonical_bytes("Hello, World")
    b = canonical_bytes("hello world!!")
    prints_a = exact_prints(b"<b>Hello, World</b>", a, shingle_set(a, 5))
    prints_b = exact_prints(b"hello world!!", b, shingle_set(b, 5))
    assert prints_a.identical != prints_b.identical
    assert prints_a.lexical == prints_b.lexical
    assert prints_a.shingle == prints_b.shingle
    c = canonical_bytes("x y x y x y")  # same 2-shingle set as "x y x y", different text
    d = canonical_bytes("x y x y")
    assert exact_prints(b"", c, shingle_set(c, 2)).shingle == exact_prints(
        b"", d, shingle_set(d, 2)).shingle
    assert exact_prints(b"", c, shingle_set(c, 2)).lexical != exact_prints(
        b"", d, shingle_set(d, 2)).lexical


words = st.lists(st.sampled_from(
    ["alpha", "beta", "gamma", "delta", "eps", "zeta", "eta", "theta", "iota", "kappa"]),
                 min_size=1, max_size=60)


@given(words)
@settings(max_examples=60, deadline=None)
def test_a_document_matches_itself(tokens: list[str]) -> None:
    text = " ".join(tokens).encode()
    assert hamming_distance(SimHash().of_canonical(text), SimHash().of_canonical(text)) == 0
    signature = MinHash().of_canonical(text)
    assert estimate_jaccard(signature, MinHash().of_canonical(text)) == 1.0


@given(st.lists(st.integers(0, 2**64 - 1), min_size=1, max_size=40), st.randoms())
@settings(max_examples=60, deadline=None)
def test_simhash_and_minhash_do_not_depend_on_feature_order(values: list[int], rnd) -> None:  # type: ignore[no-untyped-def]
    shuffled = list(values)
    rnd.shuffle(shuffled)
    assert simhash_from_hashes(values) == simhash_from_hashes(shuffled)
    minhash = MinHash(MinHashConfig(num_perm=32))
    a = minhash.of_shingles(np.array(values, dtype=np.uint64))
    b = minhash.of_shingles(np.array(shuffled, dtype=np.uint64))
    assert np.array_equal(a, b)


def test_minhash_estimate_tracks_jaccard() -> None:
    rng = np.random.default_rng(3)
    universe = rng.integers(0, 2**63, 3000, dtype=np.int64).astype(np.uint64)
    a, b = universe[:2000], universe[1000:]  # Jaccard 1000 / 3000
    minhash = MinHash(MinHashConfig(num_perm=512))
    estimate = estimate_jaccard(minhash.of_shingles(a), minhash.of_shingles(b))
    assert abs(estimate - 1 / 3) < 0.07  # 3 standard deviations at k = 512 is about 0.062


def test_configs_validate_and_tag() -> None:
    with pytest.raises(ConfigError, match="width=0"):
        ShingleConfig(width=0)
    with pytest.raises(ConfigError, match="num_perm"):
        MinHashConfig(num_perm=0)
    assert SimHashConfig().tag == "simhash:f64:w1s0:binary"
    assert MinHashConfig().tag == "minhash:k128:seed1:w5s0"


@given(st.lists(st.integers(0, 2**64 - 1), max_size=50))
@settings(max_examples=80, deadline=None)
def test_distinct_equals_numpy_unique(values: list[int]) -> None:
    array = np.array(values, dtype=np.uint64)
    assert np.array_equal(distinct(array), np.unique(array))


def _reference_signature(shingles: np.ndarray, num_perm: int, seed: int) -> np.ndarray:
    """The definition, in numpy: per permutation, the smallest a * x + b mod 2**64."""
    a, b = permutation_parameters(num_perm, seed)
    if shingles.size == 0:
        return np.full(num_perm, 2**64 - 1, dtype=np.uint64)
    with np.errstate(over="ignore"):
        images = a[:, None] * shingles[None, :] + b[:, None]
    result: np.ndarray = images.min(axis=1)
    return result


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(0, 2**64 - 1), max_size=9), st.integers(1, 9))
def test_minhash_signature_equals_its_definition(values: list[int], num_perm: int) -> None:
    shingles = np.array(values, dtype=np.uint64)
    found = MinHash(MinHashConfig(num_perm=num_perm, seed=7)).of_shingles(shingles)
    assert found.tolist() == _reference_signature(shingles, num_perm, 7).tolist()


def test_minhash_signature_equals_its_definition_on_long_inputs() -> None:
    rng = np.random.default_rng(5)
    for size, num_perm in [(1, 128), (1001, 128), (1000, 130), (257, 3)]:
        shingles = rng.integers(0, 2**64 - 1, size, dtype=np.uint64)
        found = MinHash(MinHashConfig(num_perm=num_perm)).of_shingles(shingles)
        assert found.tolist() == _reference_signature(shingles, num_perm, 1).tolist()
