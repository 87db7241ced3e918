"""Broder's sketches: MIN_s and MOD_m samples of a permuted w-shingle set, and their estimators.

**Fingerprints.** Each w-shingle's 64-bit hash (:mod:`neardup.features.shingles`) is cut to its
low ``bits`` bits (40 as in Broder's system, or 64).

**The permutation.** One random bijection pi of the ``bits``-bit space, fixed by the seed::

    pi(x) = a2 * xorshift(a1 * x + b1) + b2   (mod 2**bits),   xorshift(y) = y ^ (y >> bits // 2)

with ``a1``, ``a2`` odd. Each step is a bijection of the ``bits``-bit integers, so pi is one too;
the xorshift makes divisibility by m depend on every bit of x, not only on its low bits (an affine
map alone keeps ``pi(x) mod 2**i`` a function of ``x mod 2**i``). The parameters come from
SplitMix64 over the seed (as for min-hash), so they are the same on every platform.

**Sketches** are sorted arrays of distinct permuted values:

- MIN_s: the s smallest permuted values (fewer when the document has fewer shingles);
- MOD_m: every permuted value divisible by m. With ``adaptive = N`` each document gets its own
  modulus ``size * 2**i``, the smallest whose expected sample ``|S| / (size * 2**i)`` is under 2N;
  the modulus is not recoverable from the values, so it is returned beside the sketch
  (:meth:`Sketcher.with_modulus`) and passed to the estimators (``moduli``). Moduli of one config
  divide one another, so a sample under modulus m yields the sample under any multiple M of it by
  keeping the values divisible by M: a pair is compared under the larger modulus (the longer
  document's), as the paper says.

**Estimators** (Broder et al. 1997, section 3):

- MIN_s resemblance: ``|MIN_s(F_A u F_B) n F_A n F_B| / |MIN_s(F_A u F_B)|``; the denominator is s
  whenever either document has s shingles, as in the paper, and the true union size otherwise;
- MOD_m resemblance: ``|V_A n V_B| / |V_A u V_B|``; containment of A in B: ``|V_A n V_B| / |V_A|``.
  Containment needs MOD_m: it raises :class:`ConfigError` for MIN_s.

With no sample at all (an empty union, or an empty V_A for containment) the estimate is 0: the
sketches give no evidence of overlap. Short documents have few samples and noisy estimates.
"""

from __future__ import annotations

import numpy as np

from neardup._types import I64, U64
from neardup.config import SketchConfig
from neardup.errors import ConfigError
from neardup.features.shingles import _shingles, distinct, shingle_hashes, shingles_of_tokens
from neardup.fingerprints.minhash import permutation_parameters
from neardup.text.compiled import njit

__all__ = [
    "Sketcher",
    "common_modulus",
    "estimate_containment",
    "estimate_resemblance",
    "mod_estimates",
    "modulus_for",
    "sample_under",
]


@njit(cache=True, interpretable=True)
def _permuted_sample(tokens: U64, width: int, seed: np.uint64, mask: np.uint64, a: U64, b: U64,
                     shift: np.uint64, modulus: np.uint64,
                     ordered: bool) -> U64:  # pragma: no cover - compiled
    """pi of the w-shingles of ``tokens`` (token hashes) that are divisible by ``modulus``
    (1: all), as :meth:`Sketcher.permute` gives them, in one pass without the intermediate
    arrays; ``ordered``: distinct and sorted (for a small sample: numpy sorts hundreds of
    values faster than a compiled sort)."""
    shingles = _shingles(tokens, width, seed)
    kept = np.empty(shingles.size, dtype=np.uint64)
    count = 0
    for index in range(shingles.size):
        x = shingles[index] & mask
        x = (x * a[0] + b[0]) & mask
        x ^= x >> shift
        x = (x * a[1] + b[1]) & mask
        if x % modulus == 0:
            kept[count] = x
            count += 1
    if not ordered:
        return kept[:count].copy()
    kept = np.sort(kept[:count])
    count = min(kept.size, 1)
    for index in range(1, kept.size):
        if kept[index] != kept[count - 1]:
            kept[count] = kept[index]
            count += 1
    return kept[:count].copy()


def modulus_for(shingle_count: int, config: SketchConfig) -> int:
    """The MOD modulus of a document with ``shingle_count`` distinct shingles (1 for MIN_s)."""
    if config.kind == "min":
        return 1
    modulus = config.size
    if config.adaptive:
        limit = 2 * config.adaptive
        while shingle_count >= limit * modulus and modulus < 2 ** (config.bits - 2):
            modulus *= 2
    return modulus


class Sketcher:
    """Sketches of shingle sets under the permutation fixed by a :class:`SketchConfig`."""

    def __init__(self, config: SketchConfig = SketchConfig()) -> None:
        self.config = config
        mask = (1 << config.bits) - 1
        multipliers, offsets = permutation_parameters(2, config.seed)
        self._mask = np.uint64(mask)
        self._a = multipliers & self._mask
        self._b = offsets & self._mask
        self._shift = np.uint64(config.bits // 2)
        self._fixed = config.kind == "mod" and not config.adaptive
        """MOD_m with one modulus: the sample is kept as the shingles are permuted."""
        self._seed = np.uint64(config.shingles.seed)
        self._modulus = np.uint64(config.size if self._fixed else 1)

    @property
    def tag(self) -> str:
        return self.config.tag

    def permute(self, shingle_hashes: U64) -> U64:
        """pi of each value's low ``bits`` bits, in the same order (repeats kept)."""
        x: U64 = np.asarray(shingle_hashes, dtype=np.uint64) & self._mask
        x = (x * self._a[0] + self._b[0]) & self._mask
        x ^= x >> self._shift
        permuted: U64 = (x * self._a[1] + self._b[1]) & self._mask
        return permuted

    def with_modulus(self, shingle_hashes: U64) -> tuple[U64, int]:
        """The sketch of a set (or bag) of shingle hashes and its modulus (1 for MIN_s)."""
        config = self.config
        permuted = self.permute(shingle_hashes)
        if config.kind == "min" or config.adaptive:
            return self._sample(distinct(permuted))
        kept = permuted[permuted % np.uint64(config.size) == 0]
        return distinct(kept), config.size

    def of_shingles(self, shingle_hashes: U64) -> U64:
        """The sketch: sorted distinct kept permuted values."""
        return self.with_modulus(shingle_hashes)[0]

    def shingles_of(self, canonical: bytes | str) -> U64:
        """The hashes of the canonical text's w-shingles, in order (the sketch's input)."""
        shingles = self.config.shingles
        return shingle_hashes(canonical, shingles.width, shingles.seed)

    def shingles_of_tokens(self, tokens: U64) -> U64:
        """:meth:`shingles_of` from the canonical text's token hashes (``canonical_tokens``)."""
        shingles = self.config.shingles
        return shingles_of_tokens(tokens, shingles.width, shingles.seed)

    def with_modulus_of_tokens(self, tokens: U64) -> tuple[U64, int]:
        """:meth:`with_modulus` of the canonical text's shingles, from its token hashes
        (``canonical_tokens``): the text is not scanned again, and a fixed MOD_m sample is
        kept as the shingles are permuted."""
        config = self.config
        values = _permuted_sample(tokens, config.shingles.width, self._seed, self._mask,
                                  self._a, self._b, self._shift, self._modulus, self._fixed)
        return (values, config.size) if self._fixed else self._sample(distinct(values))

    def _sample(self, values: U64) -> tuple[U64, int]:
        """The sketch of the distinct permuted values of a set (MIN_s, adaptive MOD_m)."""
        config = self.config
        if config.kind == "min":
            return values[: config.size], 1
        modulus = modulus_for(values.size, config)
        return values[values % np.uint64(modulus) == 0], modulus

    def of_canonical(self, canonical: bytes | str) -> U64:
        """The sketch of a canonical text (see :mod:`neardup.text.canonical`)."""
        return self.of_shingles(self.shingles_of(canonical))

    def of_many(self, flat: U64, offsets: I64) -> tuple[U64, I64, I64]:
        """The sketches of many shingle sets at once, as CSR (flat values, offsets), and each
        one's modulus: the same values as :meth:`with_modulus` on each set, vectorized."""
        config = self.config
        docs = np.repeat(np.arange(offsets.size - 1, dtype=np.int64), np.diff(offsets))
        permuted = self.permute(flat)
        if config.kind == "mod" and not config.adaptive:
            kept = permuted % np.uint64(config.size) == 0
            permuted, docs = permuted[kept], docs[kept]
        values, docs = _distinct_per_set(permuted, docs)
        counts = np.bincount(docs, minlength=offsets.size - 1)
        moduli = _moduli(counts, config)
        if config.kind == "min":
            starts = np.concatenate(([0], np.cumsum(counts)[:-1]))
            keep = np.arange(values.size) - starts[docs] < config.size
        else:
            keep = values % moduli[docs].astype(np.uint64) == 0
        values, docs = values[keep], docs[keep]
        sizes = np.bincount(docs, minlength=offsets.size - 1)
        return values, np.concatenate(([0], np.cumsum(sizes))).astype(np.int64), moduli


def _distinct_per_set(values: U64, docs: I64) -> tuple[U64, I64]:
    """The distinct values of each set, sorted by (set, value)."""
    order = np.lexsort((values, docs))
    values, docs = values[order], docs[order]
    first = np.ones(values.size, dtype=np.bool_)
    first[1:] = (values[1:] != values[:-1]) | (docs[1:] != docs[:-1])
    return values[first], docs[first]


def _moduli(counts: I64, config: SketchConfig) -> I64:
    """:func:`modulus_for` of each set's number of distinct shingles."""
    if config.kind == "min":
        return np.ones(counts.size, dtype=np.int64)
    moduli = np.full(counts.size, config.size, dtype=np.int64)
    if config.adaptive:
        limit, cap = 2 * config.adaptive, 2 ** (config.bits - 2)
        grow = (counts >= limit * moduli) & (moduli < cap)
        while np.any(grow):
            moduli[grow] *= 2
            grow = (counts >= limit * moduli) & (moduli < cap)
    return moduli


def common_modulus(config: SketchConfig, moduli: tuple[int, int] | None) -> int:
    """The modulus two MOD sketches are compared under: the larger of theirs (the longer
    document's); ``config.size`` without per-document moduli."""
    if moduli is None:
        if config.adaptive:
            raise ConfigError(f"adaptive={config.adaptive}: pass the two sketches' moduli")
        return config.size
    small, large = sorted(int(m) for m in moduli)
    if small < 1 or large % small or large % config.size:
        raise ConfigError(f"moduli={moduli!r}: not moduli of {config.tag}")
    return large


def sample_under(sketch: U64, modulus: int) -> U64:
    """The values of a MOD sketch divisible by ``modulus`` (its sample under a larger modulus)."""
    values = np.asarray(sketch, dtype=np.uint64)
    return values if modulus == 1 else values[values % np.uint64(modulus) == 0]


def _min_resemblance(a: U64, b: U64, size: int) -> float:
    first, second = a[:size], b[:size]
    union = np.union1d(first, second)[:size]
    if union.size == 0:
        return 0.0
    shared = np.intersect1d(first, second, assume_unique=True)
    return int(np.count_nonzero(shared <= union[-1])) / union.size


def _mod_samples(a: U64, b: U64, config: SketchConfig,
                 moduli: tuple[int, int] | None) -> tuple[U64, U64, int]:
    modulus = common_modulus(config, moduli)
    first, second = sample_under(a, modulus), sample_under(b, modulus)
    shared = np.intersect1d(first, second, assume_unique=True).size
    return first, second, shared


def estimate_resemblance(a: U64, b: U64, config: SketchConfig,
                         moduli: tuple[int, int] | None = None) -> float:
    """Broder's estimate of r(A, B) from two sketches of ``config`` (see the module docstring)."""
    if config.kind == "min":
        return _min_resemblance(np.asarray(a, np.uint64), np.asarray(b, np.uint64), config.size)
    first, second, shared = _mod_samples(a, b, config, moduli)
    union = first.size + second.size - shared
    return shared / union if union else 0.0


@njit(cache=True)
def _ascending(values: U64) -> bool:  # pragma: no cover - compiled
    for i in range(1, values.size):  # noqa: SIM110 - a loop numba compiles (no generators)
        if values[i] <= values[i - 1]:
            return False
    return True


@njit(cache=True)
def _sampled_overlap(a: U64, b: U64,
                     modulus: np.uint64) -> tuple[int, int, int]:  # pragma: no cover
    """(|A'|, |B'|, |A' & B'|) for the values of two sketches divisible by ``modulus``, in
    one merge (values sorted and distinct; sorted here first if they are not)."""
    if not _ascending(a):
        a = np.unique(a)
    if not _ascending(b):
        b = np.unique(b)
    first = second = shared = 0
    i = j = 0
    while i < a.size or j < b.size:
        if i < a.size and a[i] % modulus:
            i += 1
        elif j < b.size and b[j] % modulus:
            j += 1
        elif j == b.size or (i < a.size and a[i] < b[j]):
            first += 1
            i += 1
        elif i == a.size or b[j] < a[i]:
            second += 1
            j += 1
        else:
            first, second, shared = first + 1, second + 1, shared + 1
            i, j = i + 1, j + 1
    return first, second, shared


def mod_estimates(a: U64, b: U64, config: SketchConfig,
                  moduli: tuple[int, int] | None = None) -> tuple[float, float, float]:
    """r(A, B), c(A, B) and c(B, A) from two MOD sketches, sampled once in one compiled merge
    (what :func:`estimate_resemblance` and :func:`estimate_containment` give one at a
    time)."""
    modulus = np.uint64(common_modulus(config, moduli))
    first, second, shared = _sampled_overlap(np.asarray(a, dtype=np.uint64),
                                             np.asarray(b, dtype=np.uint64), modulus)
    union = first + second - shared
    return (shared / union if union else 0.0, shared / first if first else 0.0,
            shared / second if second else 0.0)


def estimate_containment(a: U64, b: U64, config: SketchConfig,
                         moduli: tuple[int, int] | None = None) -> float:
    """Broder's estimate of c(A, B), how much of A lies in B, from two MOD sketches."""
    if config.kind != "mod":
        raise ConfigError(f"kind={config.kind!r}: containment needs MOD_m sketches (kind='mod')")
    first, _, shared = _mod_samples(a, b, config, moduli)
    return shared / first.size if first.size else 0.0
