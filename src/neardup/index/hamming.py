"""Permuted Hamming tables (Manku, Jain and Das Sarma, section 3): batch self-join.

The 64 bits are split into blocks. Each table permutes the bits so that ``choose`` of the blocks
lead; two fingerprints within Hamming distance k, with ``blocks - choose >= k``, agree on all the
leading blocks of at least one table (pigeonhole), so sorting each table's permuted fingerprints
and pairing those with equal leading bits finds every pair within distance k, and the full distance
check removes the rest. The result equals a brute-force scan.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.errors import ConfigError

__all__ = ["HammingDesign", "TablePlan", "brute_force_pairs", "design_for", "hamming_pairs",
           "permute_table"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
BITS = 64


@dataclass(frozen=True, slots=True)
class TablePlan:
    """One permuted table: the bit segments of a fingerprint in the order the table places them,
    each as (start, width) with bit 0 the most significant, and how many leading bits of the
    permuted fingerprint key the table (Manku's ``p_i``)."""

    segments: tuple[tuple[int, int], ...]
    prefix_bits: int

    def __post_init__(self) -> None:
        covered = sorted(bit for start, width in self.segments
                         for bit in range(start, start + width))
        if covered != list(range(BITS)):
            raise ConfigError(f"segments={self.segments!r}: must cover bits 0..63 once each")
        if not 1 <= self.prefix_bits <= BITS:
            raise ConfigError(f"prefix_bits={self.prefix_bits!r}: must be in 1..64")


@dataclass(frozen=True, slots=True)
class HammingDesign:
    """Blocks (widths, most significant first) and how many of them lead each table."""

    blocks: tuple[int, ...]
    choose: int

    def __post_init__(self) -> None:
        if sum(self.blocks) != BITS or min(self.blocks) < 1:
            raise ConfigError(f"blocks={self.blocks!r}: widths must be positive and sum to 64")
        if not 1 <= self.choose <= len(self.blocks):
            raise ConfigError(f"choose={self.choose!r}: must be in 1..{len(self.blocks)}")

    @property
    def max_k(self) -> int:
        """The largest distance for which the design finds every pair."""
        return len(self.blocks) - self.choose

    def tables(self) -> list[tuple[int, ...]]:
        """Per table, the indices of its leading blocks."""
        return list(itertools.combinations(range(len(self.blocks)), self.choose))

    def prefix_bits(self, leading: tuple[int, ...]) -> int:
        return sum(self.blocks[i] for i in leading)

    def plans(self) -> list[TablePlan]:
        """The tables as :class:`TablePlan`: leading blocks first, the others after, in order."""
        starts = np.cumsum((0, *self.blocks)).tolist()
        plans = []
        for leading in self.tables():
            order = list(leading) + [i for i in range(len(self.blocks)) if i not in leading]
            segments = tuple((starts[i], self.blocks[i]) for i in order)
            plans.append(TablePlan(segments, self.prefix_bits(leading)))
        return plans


def _even_blocks(count: int) -> tuple[int, ...]:
    base, extra = divmod(BITS, count)
    return tuple(base + 1 if i < extra else base for i in range(count))


def design_for(k: int, fingerprints: int) -> HammingDesign:
    """A design that finds every pair within ``k``: k+1 blocks choose 1 for small inputs
    (fewer tables), k+2 blocks choose 2 when 16-bit-ish prefixes would make crowded buckets."""
    if not 0 <= k < BITS - 1:
        raise ConfigError(f"k={k!r}: must be in 0..62")
    single = HammingDesign(_even_blocks(k + 1), 1)
    if fingerprints <= 2 ** (BITS // (k + 1)) or k + 2 > BITS:
        return single
    return HammingDesign(_even_blocks(k + 2), 2)


def permute_table(fingerprints: U64, plan: TablePlan) -> U64:
    """Fingerprints with their bit segments rearranged in the order of ``plan``."""
    out = np.zeros_like(fingerprints)
    position = BITS
    for start, width in plan.segments:
        block = (fingerprints >> np.uint64(BITS - start - width)) & np.uint64((1 << width) - 1)
        position -= width
        out |= block << np.uint64(position)
    return out


def permute(fingerprints: U64, design: HammingDesign, leading: tuple[int, ...]) -> U64:
    """Fingerprints with the ``leading`` blocks of ``design`` moved to the top."""
    plan = design.plans()[design.tables().index(leading)]
    return permute_table(fingerprints, plan)


def _sorted_equal_pairs(keys: U64) -> tuple[I64, I64]:
    """All (i, j), i < j in sorted position, of entries with equal keys; ``keys`` sorted."""
    firsts: list[I64] = []
    seconds: list[I64] = []
    candidates = np.flatnonzero(keys[1:] == keys[:-1]).astype(np.int64)
    distance = 1
    while candidates.size:
        firsts.append(candidates)
        seconds.append(candidates + distance)
        distance += 1
        reach = candidates + distance
        candidates = candidates[reach < keys.size]
        candidates = candidates[keys[candidates + distance] == keys[candidates]]
    if not firsts:
        empty = np.empty(0, dtype=np.int64)
        return empty, empty
    return np.concatenate(firsts), np.concatenate(seconds)


def equal_key_pairs(keys: U64) -> tuple[I64, I64]:
    """Every pair (a < b) of positions whose keys are equal, by one sort of the keys."""
    order = np.argsort(keys, kind="stable")
    i, j = _sorted_equal_pairs(keys[order])
    a, b = order[i], order[j]
    return np.minimum(a, b).astype(np.int64), np.maximum(a, b).astype(np.int64)


def pack_pairs(a: I64, b: I64) -> I64:
    """Pairs of positions below 2**31 as one int64 each (a in the high half), for np.unique."""
    codes: I64 = (a << 32) | b
    return codes


def unique_pairs(packed: list[I64]) -> tuple[I64, I64]:
    """The distinct pairs of several packed lists, sorted, unpacked."""
    codes: I64 = np.unique(np.concatenate(packed)) if packed else np.empty(0, dtype=np.int64)
    return codes >> 32, codes & 0xFFFFFFFF


def _table_pairs(fingerprints: U64, k: int, plan: TablePlan) -> I64:
    permuted = permute_table(fingerprints, plan)
    a, b = equal_key_pairs(permuted >> np.uint64(BITS - plan.prefix_bits))
    close = np.bitwise_count(fingerprints[a] ^ fingerprints[b]) <= k
    return pack_pairs(a[close], b[close])


def hamming_pairs(
    fingerprints: npt.ArrayLike, k: int,
    design: HammingDesign | list[TablePlan] | None = None,
) -> tuple[I64, I64]:
    """Every pair (i < j) of positions whose fingerprints differ in at most ``k`` bits.

    ``design`` is a block design, or table plans that find every pair within ``k`` (a planner's
    design); by default :func:`design_for` picks one.
    """
    values = np.ascontiguousarray(np.asarray(fingerprints, dtype=np.uint64))
    if values.size >= 2**31:
        raise ConfigError(f"{values.size} fingerprints: at most 2**31 per join")
    design = design or design_for(k, values.size)
    if isinstance(design, HammingDesign):
        if k > design.max_k:
            raise ConfigError(f"k={k}: design {design} finds pairs only up to {design.max_k}")
        design = design.plans()
    return unique_pairs([_table_pairs(values, k, plan) for plan in design])


def brute_force_pairs(fingerprints: npt.ArrayLike, k: int) -> tuple[I64, I64]:
    """The reference: compare every pair (quadratic; for tests)."""
    values = np.asarray(fingerprints, dtype=np.uint64)
    i, j = np.triu_indices(values.size, 1)
    close = np.bitwise_count(values[i] ^ values[j]) <= k
    return i[close].astype(np.int64), j[close].astype(np.int64)
