"""One-permutation min-hash: determinism, a reference implementation, and unbiased estimates.

The statistical tests average the share of equal slots over many seeds for one fixed pair of
sets of known resemblance J. Their bounds come from the estimator's variance: five standard
errors of the mean, with the variance either bounded in theory or measured on the same draws.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from neardup._types import U64
from neardup.config import MinHashConfig, ShingleConfig
from neardup.evaluation.planted import resembling_pair
from neardup.features.shingles import shingle_hashes, shingle_set
from neardup.fingerprints.minhash import MinHash
from neardup.methods.oph import EMPTY_SLOT, OnePermutationMinHash
from neardup.text.canonical import canonical_bytes

MASK = (1 << 64) - 1
Z = 5.0  # standard errors allowed: a false alarm about once in 1.7 million
TEXT = canonical_bytes(
    "The harbour master kept a ledger of every ship that came in from the northern coast, "
    "and in winter, when the canal froze, he wrote down the weather instead, day after day.")


def _splitmix(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & MASK
    z = ((state ^ (state >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return state, z ^ (z >> 31)


def _fmix(h: int) -> int:
    h ^= h >> 33
    h = (h * 0xFF51AFD7ED558CCD) & MASK
    h ^= h >> 33
    h = (h * 0xC4CEB9FE1A85EC53) & MASK
    return h ^ (h >> 33)


def reference(shingles: list[int], k: int, seed: int) -> list[int]:
    """The algorithm of the module's docstring, written out in plain Python."""
    state, key = _splitmix(seed)
    _, probe_key = _splitmix(state)
    bins: dict[int, int] = {}
    for x in shingles:
        h = _fmix(x ^ key)
        b = ((h >> 32) * k) >> 32
        bins[b] = min(bins.get(b, MASK), h)
    if not bins:
        return [MASK] * k
    out = []
    for i in range(k):
        probes = [((_fmix(probe_key ^ (i << 32 | a)) >> 32) * k) >> 32 for a in range(4 * k)]
        probes += [(i + step) % k for step in range(1, k)]
        out.append(bins[i] if i in bins else bins[next(j for j in probes if j in bins)])
    return out


def share_equal(a: U64, b: U64) -> float:
    return float(np.mean(a == b))


def shares_over_seeds(first: U64, second: U64, seeds: int, k: int = 128) -> np.ndarray:
    out = np.empty(seeds)
    for seed in range(seeds):
        signer = OnePermutationMinHash(MinHashConfig(num_perm=k, seed=seed))
        out[seed] = share_equal(signer.of_shingles(first), signer.of_shingles(second))
    return out


def pair(size: int, resemblance: float, seed: int) -> tuple[U64, U64, float]:
    """Two sets and their exact resemblance."""
    a, b = resembling_pair(size, resemblance, np.random.default_rng(seed))
    shared = np.intersect1d(a, b).size
    return a, b, shared / (a.size + b.size - shared)


def test_matches_the_plain_python_reference_with_and_without_empty_bins() -> None:
    rng = np.random.default_rng(3)
    for size, k, seed in [(1, 16, 0), (3, 64, 7), (40, 128, 1), (700, 100, 2**32 - 1)]:
        values = rng.integers(0, 2**64 - 1, size, dtype=np.uint64, endpoint=True)
        signer = OnePermutationMinHash(MinHashConfig(num_perm=k, seed=seed))
        expected = reference([int(v) for v in values], k, seed)
        assert [int(v) for v in signer.of_shingles(values)] == expected


def test_golden_signature() -> None:
    signer = OnePermutationMinHash(MinHashConfig(num_perm=4))
    assert [hex(v) for v in signer.of_canonical(TEXT)] == [
        "0x18059228eeb4a0", "0x45610ece49b0d3ea", "0x86d74dbf56e7988c", "0xc001bb5ff19c7409"]


def test_tag_names_the_method_and_differs_from_minhash() -> None:
    config = MinHashConfig(num_perm=64, seed=9, shingles=ShingleConfig(width=3))
    tag = OnePermutationMinHash(config).tag
    assert tag.startswith("oph:") and tag != MinHash(config).tag
    assert tag != OnePermutationMinHash(MinHashConfig(num_perm=64, seed=8)).tag


def test_deterministic_per_seed_and_different_across_seeds() -> None:
    values = np.random.default_rng(1).integers(0, 2**63, 500, dtype=np.uint64)
    first = OnePermutationMinHash(MinHashConfig(seed=5)).of_shingles(values)
    again = OnePermutationMinHash(MinHashConfig(seed=5)).of_shingles(values)
    other = OnePermutationMinHash(MinHashConfig(seed=6)).of_shingles(values)
    assert first.dtype == np.uint64 and first.shape == (128,)
    np.testing.assert_array_equal(first, again)
    assert share_equal(first, other) < 0.1  # another hash: slots agree by chance only


def test_equal_sets_give_equal_signatures_whatever_the_order_or_repeats() -> None:
    values = np.random.default_rng(2).integers(0, 2**63, 300, dtype=np.uint64)
    signer = OnePermutationMinHash()
    shuffled = np.random.default_rng(3).permutation(np.concatenate([values, values[:50]]))
    np.testing.assert_array_equal(signer.of_shingles(values), signer.of_shingles(shuffled))


def test_disjoint_sets_share_no_slot_even_when_densified() -> None:
    signer = OnePermutationMinHash()
    for size in (1, 5, 1000):
        a, b, resemblance = pair(size, 0.0, size)
        assert resemblance == 0.0
        assert share_equal(signer.of_shingles(a), signer.of_shingles(b)) == 0.0


def test_empty_set_gives_the_empty_signature_minhash_gives() -> None:
    empty = np.empty(0, dtype=np.uint64)
    signature = OnePermutationMinHash().of_shingles(empty)
    assert np.all(signature == EMPTY_SLOT)
    np.testing.assert_array_equal(signature, MinHash().of_shingles(empty))
    np.testing.assert_array_equal(OnePermutationMinHash().of_canonical(b""), signature)


def test_a_single_shingle_fills_every_slot() -> None:
    signature = OnePermutationMinHash().of_shingles(np.array([42], dtype=np.uint64))
    assert np.unique(signature).size == 1 and signature[0] != EMPTY_SLOT


def test_of_canonical_is_of_shingles_of_the_shingle_set() -> None:
    config = MinHashConfig(num_perm=64, seed=3, shingles=ShingleConfig(width=4, seed=2))
    signer = OnePermutationMinHash(config)
    signature = signer.of_canonical(TEXT)
    np.testing.assert_array_equal(signature, signer.of_shingles(shingle_set(TEXT, 4, 2)))
    np.testing.assert_array_equal(signature, signer.of_shingles(shingle_hashes(TEXT, 4, 2)))
    np.testing.assert_array_equal(signature, signer.of_canonical(TEXT.decode()))


@pytest.mark.parametrize("resemblance", [0.2, 0.5, 0.8, 0.95])
def test_unbiased_and_no_noisier_than_k_permutations_on_large_sets(resemblance: float) -> None:
    # 2,000 elements a set: no bin is empty (chance 128 * exp(-2000/128) < 1e-4), so each slot
    # samples the union without replacement and the per-signature variance is at most that of
    # k independent permutations, J (1 - J) / k.
    a, b, truth = pair(2000, resemblance, 11)
    seeds, k = 200, 128
    shares = shares_over_seeds(a, b, seeds, k)
    bound = truth * (1 - truth) / k
    assert abs(shares.mean() - truth) <= Z * np.sqrt(bound / seeds)
    # The sample variance of 200 draws is within about 10% of the true one (sd sqrt(2/199)).
    assert shares.var(ddof=1) <= bound * (1 + Z * np.sqrt(2 / (seeds - 1)))


@pytest.mark.parametrize("resemblance", [0.2, 0.5, 0.8])
def test_unbiased_on_small_sets_where_most_bins_are_empty(resemblance: float) -> None:
    # 12 elements a set, at most 24 in the union for 128 bins: over 100 bins empty in both, so
    # the estimate rests on densification. Counting two empty slots as equal would give about
    # 0.8 + 0.2 J; probes that depended on the set would fall short of J.
    a, b, truth = pair(12, resemblance, 5)
    seeds = 4000
    shares = shares_over_seeds(a, b, seeds)
    standard_error = shares.std(ddof=1) / np.sqrt(seeds)
    assert 0.0 < standard_error <= np.sqrt(truth * (1 - truth) / seeds)
    assert abs(shares.mean() - truth) <= Z * standard_error


# The method: the same doors as every method (library and engine here; evaluate and tags in
# tests/test_method_registry.py, Spark in tests/test_spark_engine.py), with min-hash's
# parameters and the band join.

def _planted_rows() -> list[str]:
    from corpora import planted_texts, vocabulary

    return planted_texts(300, 11, vocabulary=vocabulary(3000), lengths=(150, 300), exact=0.05,
                         near=0.2)


def test_the_library_and_the_engine_find_the_planted_copies_as_min_hash_does(
        tmp_path: Path) -> None:
    import neardup
    from corpora import text_rows, write_jsonl
    from neardup.config import DedupConfig
    from neardup.engine.run import EngineOptions, run_engine
    from runs import output_rows

    texts = _planted_rows()
    library = neardup.dedup(texts, method="oph")
    minhash = neardup.dedup(texts, method="minhash")
    removed = library.column("kept").to_pylist().count(False)
    assert removed > 50, "the planted copies are found"
    assert library.column("cluster").to_pylist() == minhash.column("cluster").to_pylist()
    inputs = write_jsonl(tmp_path / "in", text_rows(texts))
    run_engine(inputs, tmp_path / "out", DedupConfig(method="oph"),
               EngineOptions(work=tmp_path / "work", workers=2, chunk_docs=40))
    engine = [row["cluster"] for row in output_rows(tmp_path / "out", "clusters")]
    assert engine == library.column("cluster").to_pylist()
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"]["oph"].startswith("oph:k128")


def test_its_tag_is_its_own_and_it_refuses_simhash_s_k() -> None:
    import neardup
    from neardup.config import DedupConfig

    assert DedupConfig(method="oph").tags["oph"] != DedupConfig(method="minhash").tags["minhash"]
    assert DedupConfig(method="oph").threshold == DedupConfig(method="minhash").threshold
    with pytest.raises(neardup.ConfigError, match="no effect"):
        neardup.dedup(["a b c d e f"], method="oph", k=3)
