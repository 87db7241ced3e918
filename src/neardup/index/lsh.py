"""Locality-sensitive hashing over min-hash signatures: b bands of r rows.

Two documents become candidates when all r values of at least one band agree; a pair of Jaccard
resemblance s does so with probability ``1 - (1 - s**r)**b``. The bands are chosen for a threshold t
by minimising the weighted area of false positives (below t) and false negatives (above t) under
that curve, with equal weights by default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from neardup._types import F64, I64, U64
from neardup.errors import ConfigError
from neardup.index.hamming import equal_key_pairs, pack_pairs, unique_pairs

__all__ = ["LSHBands", "band_keys", "choose_bands", "lsh_pairs"]

_GRID = 201


@dataclass(frozen=True, slots=True)
class LSHBands:
    bands: int
    rows: int

    def probability(self, resemblance: float) -> float:
        """The chance that a pair of this resemblance becomes a candidate."""
        return float(1.0 - (1.0 - resemblance**self.rows) ** self.bands)


def _areas(curves: F64, grid: F64) -> F64:
    """The trapezoid area under each row of ``curves`` over ``grid``."""
    if grid.size < 2:
        return np.zeros(curves.shape[0])
    return np.asarray(np.sum((curves[:, 1:] + curves[:, :-1]) * np.diff(grid), axis=1) / 2.0)


def _candidates(num_perm: int) -> tuple[I64, I64]:
    """Every (bands, rows) with bands * rows <= num_perm: bands ascending, then rows."""
    pairs = [(bands, rows) for bands in range(1, num_perm + 1)
             for rows in range(1, num_perm // bands + 1)]
    both = np.array(pairs, dtype=np.int64).T
    return both[0], both[1]


def _curves(grid: F64, num_perm: int, missed: bool) -> F64:
    """One row per banding of :func:`_candidates`: the chance ``1 - (1 - s**r)**b`` that a pair
    of resemblance s (each point of ``grid``) becomes a candidate, or (``missed``) the chance it
    does not. Each power is taken with a scalar exponent, as numpy takes ``grid**r``."""
    powers = np.stack([grid**rows for rows in range(1, num_perm + 1)])
    curves = np.concatenate([(1.0 - powers[: num_perm // bands]) ** bands
                             for bands in range(1, num_perm + 1)])
    return np.asarray(curves if missed else 1.0 - curves)


def _errors(num_perm: int, threshold: float, fp_weight: float) -> F64:
    """The weighted error of each banding of :func:`_candidates`: the area of false positives
    below the threshold and of false negatives above it."""
    low = np.linspace(0.0, threshold, _GRID)
    high = np.linspace(threshold, 1.0, _GRID)
    false_pos = _areas(_curves(low, num_perm, missed=False), low)
    false_neg = _areas(_curves(high, num_perm, missed=True), high)
    return np.asarray(fp_weight * false_pos + (1.0 - fp_weight) * false_neg)


@functools.lru_cache(maxsize=256)
def choose_bands(num_perm: int, threshold: float, fp_weight: float = 0.5) -> LSHBands:
    """The (bands, rows) with bands * rows <= num_perm that minimise the weighted error.

    Ties go to one band of every row, else to the fewest bands, then the fewest rows. At
    threshold 1 no banding misses a pair (equal sets have equal signatures), and one band of
    every row admits the fewest others."""
    if not 0.0 < threshold <= 1.0:
        raise ConfigError(f"threshold={threshold!r}: must be in (0, 1] for LSH")
    if threshold == 1.0:
        return LSHBands(1, num_perm)
    bands, rows = _candidates(num_perm)
    errors = _errors(num_perm, threshold, fp_weight)
    whole = num_perm - 1  # (1, num_perm): the last banding of one band
    best = whole if errors[whole] <= errors.min() else int(np.argmin(errors))
    return LSHBands(int(bands[best]), int(rows[best]))


def band_keys(signatures: U64, band: int, rows: int) -> U64:
    """One 64-bit key per document for one band (a polynomial mix of its rows)."""
    block = signatures[:, band * rows : (band + 1) * rows]
    key = np.full(block.shape[0], ((band + 1) * 0x9E3779B97F4A7C15) & (2**64 - 1), dtype=np.uint64)
    for column in range(rows):
        key = (key ^ block[:, column]) * np.uint64(0xFF51AFD7ED558CCD)
        key ^= key >> np.uint64(29)
    return key


def lsh_pairs(signatures: U64, bands: LSHBands) -> tuple[I64, I64]:
    """Every pair (i < j) of rows whose signatures agree on all rows of at least one band."""
    if signatures.ndim != 2 or signatures.shape[1] < bands.bands * bands.rows:
        raise ConfigError(f"signatures of shape {signatures.shape} too short for {bands}")
    packed = [pack_pairs(*equal_key_pairs(band_keys(signatures, band, bands.rows)))
              for band in range(bands.bands)]
    return unique_pairs(packed)
