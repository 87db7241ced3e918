"""The ``oph`` method: one-permutation min-hash (Li, Owen and Zhang 2012) with optimal
densification (Shrivastava 2017), in the band join of k-permutation min-hash.

The method reads min-hash's parameters (its ``MinHashConfig``: ``num_perm`` bins, seed,
shingles) and threshold; its candidates come from the LSH bands of its signatures and are
verified on the shingle sets (resemblance >= the threshold), as min-hash's are. One hash per
shingle instead of ``num_perm``.

Each shingle hash x is hashed once: ``h = fmix64(x ^ key)``, the MurmurHash3 finaliser, a
bijection of the 64-bit space, so distinct shingles never share an h. The high 32 bits of h pick
one of K bins (``(h >> 32) * K >> 32``, uniform); each bin keeps the smallest h that falls in it.
A slot's value is the whole h, so a value also names its bin and two different bins never hold
equal values.

With fewer shingles than about K log K some bins stay empty. Optimal densification fills each
empty bin i from the first non-empty bin along a probe sequence fixed by (seed, i) alone:
``j = bin(fmix64(probe_key ^ (i << 32 | a)))`` for attempts a = 0, 1, 2, ..., then, if ``4 K``
attempts all missed, the bins i+1, i+2, ... in turn. Because the sequence does not depend on the
set, two sets agree on slot i exactly when the smallest element of their union in the first bin
along it that the union fills is in both sets (both then stop there and copy it; otherwise one
copies an element the other lacks): each slot matches with probability J, as in k-permutation
min-hash, at the cost of one hash per shingle instead of K.

The empty set has every slot at ``2**64 - 1``, as :class:`~neardup.fingerprints.minhash.MinHash`
gives it. ``key`` and ``probe_key`` come from SplitMix64 seeded with the config's seed.
"""

from __future__ import annotations

import numpy as np

from neardup._types import BOOL, U64
from neardup.config import MethodSpec, MinHashConfig
from neardup.features.shingles import fmix64, shingle_hashes
from neardup.fingerprints.minhash import EMPTY_SLOT, splitmix64
from neardup.methods.joins import SignatureBands
from neardup.methods.scoring import UNIT_CURVE, Rule, Scorer
from neardup.methods.unit import NearMethod
from neardup.text.compiled import njit

__all__ = ["EMPTY_SLOT", "SPEC", "UNIT", "OnePermutationMinHash", "oph_keys"]

_PROBE_ROUNDS = 4  # random probes per bin, in multiples of K, before the linear fallback


def oph_keys(seed: int) -> tuple[np.uint64, np.uint64]:
    """The shingle key and the probe key of ``seed``: two SplitMix64 outputs."""
    state, key = splitmix64(seed)
    _, probe_key = splitmix64(state)
    return np.uint64(key), np.uint64(probe_key)


@njit(cache=True, inline="always")
def _bin(h: np.uint64, bins: np.uint64) -> np.int64:  # pragma: no cover - compiled
    return np.int64(((h >> np.uint64(32)) * bins) >> np.uint64(32))


@njit(cache=True)
def _fill_bins(shingles: U64, key: np.uint64, out: U64, filled: BOOL) -> None:  # pragma: no cover
    # Two passes: the hashing loop stores nothing into ``out``, so it vectorises.
    bins = np.uint64(out.size)
    hashes = np.empty(shingles.size, dtype=np.uint64)
    where = np.empty(shingles.size, dtype=np.int64)
    for n in range(shingles.size):
        hashes[n] = fmix64(shingles[n] ^ key)
        where[n] = _bin(hashes[n], bins)
    for n in range(shingles.size):
        b = where[n]
        filled[b] = True
        out[b] = min(out[b], hashes[n])


@njit(cache=True)
def _source_bin(i: int, probe_key: np.uint64, filled: BOOL) -> int:  # pragma: no cover - compiled
    k = filled.size
    bins = np.uint64(k)
    for attempt in range(_PROBE_ROUNDS * k):
        j = _bin(fmix64(probe_key ^ ((np.uint64(i) << np.uint64(32)) | np.uint64(attempt))),
                 bins)
        if filled[j]:
            return int(j)
    for step in range(1, k):
        if filled[(i + step) % k]:
            return (i + step) % k
    return i


@njit(cache=True)
def _signature(shingles: U64, key: np.uint64, probe: np.uint64, k: int) -> U64:  # pragma: no cover
    signature = np.full(k, np.uint64(2**64 - 1), dtype=np.uint64)
    if shingles.size == 0:
        return signature
    filled = np.zeros(k, dtype=np.bool_)
    _fill_bins(shingles, key, signature, filled)
    for i in range(k):
        if not filled[i]:
            signature[i] = signature[_source_bin(i, probe, filled)]
    return signature


class OnePermutationMinHash:
    """One-permutation min-hash signatures of ``num_perm`` bins, densified; slots compare like
    :class:`~neardup.fingerprints.minhash.MinHash`'s (the share of equal slots estimates J)."""

    def __init__(self, config: MinHashConfig = MinHashConfig()) -> None:
        self.config = config
        self.key, self.probe_key = oph_keys(config.seed)

    @property
    def tag(self) -> str:
        return "oph:" + self.config.tag.removeprefix("minhash:")

    def of_shingles(self, shingles: U64) -> U64:
        """The signature of a set (or bag) of shingle hashes; all slots empty for no shingles."""
        values = np.ascontiguousarray(shingles, dtype=np.uint64)
        return _signature(values, self.key, self.probe_key, self.config.num_perm)

    def of_canonical(self, canonical: bytes | str) -> U64:
        """The signature of a canonical text's shingles."""
        width, seed = self.config.shingles.width, self.config.shingles.seed
        return self.of_shingles(shingle_hashes(canonical, width, seed))


SPEC = MethodSpec("oph", lambda c: {"oph": OnePermutationMinHash(c.of(MinHashConfig)).tag},
                  threshold=True, estimates=True, params=MinHashConfig,
                  views=True)
"""The method as configs see it (declared to the config layer by the registry)."""

JOIN = SignatureBands(OnePermutationMinHash)

UNIT: NearMethod[None] = NearMethod(
    join=JOIN,
    spec=SPEC,
    verification="LSH bands of the one-permutation signatures, then resemblance >= the "
                 "threshold",
    scorer=Scorer("oph", JOIN.estimates,
                  Rule("estimated resemblance", "t", curve=UNIT_CURVE,
                       default=SPEC.default_threshold),
                  summary="share of equal one-permutation min-hash slots (densified)"))
