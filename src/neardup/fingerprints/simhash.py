"""Charikar's simhash, as Manku, Jain and Das Sarma use it for crawling (f = 64).

Every feature has a 64-bit hash and a weight. A vector of 64 counters starts at zero; each feature
adds its weight to counter i where bit i of its hash is 1 and subtracts it where the bit is 0. Bit i
of the fingerprint is 1 where counter i ends positive. With equal weights this is the bitwise
majority of the feature hashes: 0xABCD, 0xBCDE, 0xCDEF give 0xADCF.

Here the features are the w-shingles of the canonical text, optionally without stop words and
stemmed as Manku et al. do (``SimHashConfig.stop_words``, ``.stemming``). With
``weighting="tf"`` a shingle's weight is the number of times it occurs (each occurrence adds 1);
with ``"binary"`` each distinct shingle counts once.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._types import F64, U64
from neardup.config import SimHashConfig
from neardup.errors import ConfigError
from neardup.features.shingles import _shingles, distinct, shingle_hashes
from neardup.text.compiled import njit
from neardup.text.stemming import filter_terms, stemmer
from neardup.text.stopwords import stop_words

__all__ = ["SimHash", "hamming_distance", "simhash_from_hashes"]


@njit(cache=True)
def _weighted_counters(hashes: U64, weights: F64) -> F64:
    counters = np.zeros(64, dtype=np.float64)
    for index in range(hashes.size):
        h = hashes[index]
        w = weights[index]
        for bit in range(64):
            counters[bit] += w * (2.0 * np.float64((h >> np.uint64(bit)) & np.uint64(1)) - 1.0)
    return counters


@njit(cache=True)
def _majority_counters(hashes: U64) -> F64:
    """Equal weights: counter i is (number of 1-bits) - (number of 0-bits) at bit i."""
    ones = np.zeros(64, dtype=np.int64)
    for h in hashes:
        for bit in range(64):
            ones[bit] += np.int64((h >> np.uint64(bit)) & np.uint64(1))
    return (2 * ones - hashes.size).astype(np.float64)


@njit(cache=True)
def _without_repeats(values: U64) -> U64:  # pragma: no cover - compiled
    """Each distinct value once, in no particular order (an open-addressing table: the
    values are hashes, their low bits spread them; a sort costs three times as much)."""
    size = 1
    while size < 2 * values.size:
        size *= 2
    table = np.empty(size, dtype=np.uint64)
    used = np.zeros(size, dtype=np.bool_)
    out = np.empty(values.size, dtype=np.uint64)
    count = 0
    mask = np.uint64(size - 1)
    for value in values:
        slot = np.int64(value & mask)
        while used[slot] and table[slot] != value:
            slot = (slot + 1) & np.int64(size - 1)
        if not used[slot]:
            used[slot] = True
            table[slot] = value
            out[count] = value
            count += 1
    return out[:count]


@njit(cache=True)
def _majority(hashes: U64) -> np.uint64:  # pragma: no cover - compiled
    """``_signs(_majority_counters(hashes))``: bit i set where more hashes have it than not.
    The bits are counted eight at a time, in the bytes of eight 64-bit accumulators (each
    byte counts one bit position over at most 255 hashes)."""
    ones = np.zeros(64, dtype=np.int64)
    spread = np.uint64(0x0101010101010101)
    for start in range(0, hashes.size, 255):
        packed = np.zeros(8, dtype=np.uint64)
        for index in range(start, min(start + 255, hashes.size)):
            h = hashes[index]
            for j in range(8):
                packed[j] += (h >> np.uint64(j)) & spread
        for j in range(8):
            for byte in range(8):
                ones[8 * byte + j] += np.int64((packed[j] >> np.uint64(8 * byte)) & np.uint64(255))
    fingerprint = np.uint64(0)
    for bit in range(64):
        if 2 * ones[bit] - hashes.size > 0:
            fingerprint |= np.uint64(1) << np.uint64(bit)
    return fingerprint


@njit(cache=True)
def _token_simhash(tokens: U64, width: int, seed: np.uint64,
                   binary: bool) -> np.uint64:  # pragma: no cover - compiled
    """The simhash of the w-shingles of ``tokens`` (token hashes) with equal weights, each
    distinct shingle once (``binary``) or each occurrence (tf), in one call."""
    features = _shingles(tokens, width, seed)
    return _majority(_without_repeats(features) if binary else features)


@njit(cache=True)
def _signs(counters: F64) -> np.uint64:
    fingerprint = np.uint64(0)
    for bit in range(64):
        if counters[bit] > 0:
            fingerprint |= np.uint64(1) << np.uint64(bit)
    return fingerprint


def simhash_from_hashes(
    hashes: npt.ArrayLike, weights: npt.ArrayLike | None = None
) -> int:
    """The plain Charikar combination of 64-bit feature hashes (equal weights by default)."""
    values = np.ascontiguousarray(np.asarray(hashes, dtype=np.uint64).ravel())
    if weights is None:
        return int(_signs(_majority_counters(values)))
    scale = np.ascontiguousarray(np.asarray(weights, dtype=np.float64).ravel())
    if scale.size != values.size:
        raise ConfigError(f"weights has {scale.size} values for {values.size} hashes")
    return int(_signs(_weighted_counters(values, scale)))


def hamming_distance(a: int, b: int) -> int:
    """The number of bits in which two 64-bit fingerprints differ."""
    return (a ^ b).bit_count()


class SimHash:
    """64-bit simhash of canonical text over weighted shingle features."""

    def __init__(self, config: SimHashConfig = SimHashConfig()) -> None:
        self.config = config
        self._seed = np.uint64(config.shingles.seed)  # made once: a numpy scalar costs 0.7 us
        if config.stop_words is not None:
            stop_words(config.stop_words)  # an unknown language fails here, not per document
        if config.stemming is not None:
            stemmer(config.stemming)

    @property
    def tag(self) -> str:
        return self.config.tag

    def of_canonical(self, canonical: bytes | str) -> int:
        """The simhash of a canonical text (see :mod:`neardup.text.canonical`); stop words
        removed and tokens stemmed first when the config asks."""
        config = self.config
        if config.stop_words is not None or config.stemming is not None:
            data = canonical.encode("utf-8") if isinstance(canonical, str) else canonical
            canonical = filter_terms(data, config.stop_words, config.stemming)
        features = shingle_hashes(canonical, config.shingles.width, config.shingles.seed)
        if self.config.weighting == "binary":
            features = distinct(features)
        return int(_signs(_majority_counters(features)))

    def of_tokens(self, tokens: U64, canonical: bytes) -> int:
        """:meth:`of_canonical` from the canonical text's token hashes (``canonical_tokens``),
        without scanning the text again; the text itself when stop words or stemming change
        its tokens."""
        config = self.config
        if config.stop_words is not None or config.stemming is not None:
            return self.of_canonical(canonical)
        shingles = config.shingles
        return int(_token_simhash(tokens, shingles.width, self._seed,
                                  config.weighting == "binary"))
