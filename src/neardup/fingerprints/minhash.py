"""k-permutation min-hash signatures and their Jaccard estimate.

Permutation i maps a 64-bit shingle hash x to ``a_i * x + b_i mod 2**64`` with ``a_i`` odd: an
affine bijection of the 64-bit space, so a true permutation of the shingle universe. The signature
keeps, for each permutation, the smallest image over the document's shingles. ``a_i`` and ``b_i``
come from SplitMix64 seeded with the config's seed, so signatures are stable across platforms and
numpy versions. The fraction of equal positions in two signatures estimates their Jaccard
resemblance.
"""

from __future__ import annotations

import numpy as np

from neardup._types import U64
from neardup.config import MinHashConfig
from neardup.errors import ConfigError
from neardup.features.shingles import shingle_hashes
from neardup.text.compiled import njit

__all__ = ["EMPTY_SLOT", "MinHash", "estimate_jaccard", "permutation_parameters", "splitmix64"]

EMPTY_SLOT = np.uint64(2**64 - 1)
_MASK = (1 << 64) - 1


def splitmix64(state: int) -> tuple[int, int]:
    state = (state + 0x9E3779B97F4A7C15) & _MASK
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return state, z ^ (z >> 31)


def permutation_parameters(num_perm: int, seed: int) -> tuple[U64, U64]:
    """The multipliers (odd) and offsets of ``num_perm`` permutations, from ``seed``."""
    state = seed
    multipliers = np.empty(num_perm, dtype=np.uint64)
    offsets = np.empty(num_perm, dtype=np.uint64)
    for i in range(num_perm):
        state, a = splitmix64(state)
        state, b = splitmix64(state)
        multipliers[i] = a | 1
        offsets[i] = b
    return multipliers, offsets


@njit(cache=True, interpretable=True)
def _four_slots(shingles: U64, a: U64, b: U64, i: int,
                signature: U64) -> None:  # pragma: no cover - compiled
    """Slots ``i`` to ``i + 3``: two shingles at a time, so that eight independent minima
    (kept in registers) hide the multiplier's latency."""
    a0, a1, a2, a3 = a[i], a[i + 1], a[i + 2], a[i + 3]
    b0, b1, b2, b3 = b[i], b[i + 1], b[i + 2], b[i + 3]
    m0 = m1 = m2 = m3 = n0 = n1 = n2 = n3 = EMPTY_SLOT
    n = shingles.size
    for t in range(0, n - 1, 2):
        x, y = shingles[t], shingles[t + 1]
        m0, m1 = min(m0, a0 * x + b0), min(m1, a1 * x + b1)
        m2, m3 = min(m2, a2 * x + b2), min(m3, a3 * x + b3)
        n0, n1 = min(n0, a0 * y + b0), min(n1, a1 * y + b1)
        n2, n3 = min(n2, a2 * y + b2), min(n3, a3 * y + b3)
    if n % 2:
        x = shingles[n - 1]
        m0, m1 = min(m0, a0 * x + b0), min(m1, a1 * x + b1)
        m2, m3 = min(m2, a2 * x + b2), min(m3, a3 * x + b3)
    signature[i], signature[i + 1] = min(m0, n0), min(m1, n1)
    signature[i + 2], signature[i + 3] = min(m2, n2), min(m3, n3)


@njit(cache=True, interpretable=True)
def _signature(shingles: U64, multipliers: U64, offsets: U64) -> U64:  # pragma: no cover
    k = multipliers.size
    signature = np.full(k, EMPTY_SLOT, dtype=np.uint64)
    whole = k - k % 4
    for i in range(0, whole, 4):
        _four_slots(shingles, multipliers, offsets, i, signature)
    for i in range(whole, k):
        for x in shingles:
            signature[i] = min(multipliers[i] * x + offsets[i], signature[i])
    return signature


def estimate_jaccard(a: U64, b: U64) -> float:
    """The share of equal positions in two signatures: an estimate of their Jaccard resemblance."""
    if a.shape != b.shape:
        raise ConfigError(f"signatures differ in length: {a.size} and {b.size}")
    return float(np.count_nonzero(a == b)) / a.size if a.size else 0.0


class MinHash:
    """Min-hash signatures of canonical texts under ``num_perm`` fixed permutations."""

    def __init__(self, config: MinHashConfig = MinHashConfig()) -> None:
        self.config = config
        self.multipliers, self.offsets = permutation_parameters(config.num_perm, config.seed)

    @property
    def tag(self) -> str:
        return self.config.tag

    def of_shingles(self, shingles: U64) -> U64:
        """The signature of a set (or bag) of shingle hashes; all slots empty for no shingles."""
        values = np.ascontiguousarray(shingles, dtype=np.uint64)
        return _signature(values, self.multipliers, self.offsets)

    def of_canonical(self, canonical: bytes | str) -> U64:
        """The signature of a canonical text's shingles."""
        width, seed = self.config.shingles.width, self.config.shingles.seed
        return self.of_shingles(shingle_hashes(canonical, width, seed))
