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

from neardup._types import I64, U64
from neardup.errors import ConfigError
from neardup.features.shingles import distinct
from neardup.index.bitperm import (
    PlanArrays,
    first_found,
    permute_values,
    plan_arrays,
    popcount,
    prefix_masks,
)
from neardup.text.compiled import njit

__all__ = ["HammingDesign", "TablePlan", "brute_force_pairs", "design_for", "hamming_pairs",
           "permute_table", "table_pairs"]

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
    return permute_values(np.asarray(fingerprints, dtype=np.uint64), plan_arrays([plan]), 0)


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
    """Pairs of positions below 2**31 as one int64 each (a in the high half), to sort."""
    codes: I64 = (a << 32) | b
    return codes


def unique_pairs(packed: list[I64]) -> tuple[I64, I64]:
    """The distinct pairs of several packed lists, sorted, unpacked."""
    codes: I64 = distinct(np.concatenate(packed)) if packed else np.empty(0, dtype=np.int64)
    return codes >> 32, codes & 0xFFFFFFFF


def _prefix_parts(arrays: PlanArrays, table: int, prefix_bits: int) -> tuple[U64, U64, U64]:
    """(source shift, mask, destination shift) of each segment that lands in the prefix."""
    starts, widths, _, _ = arrays
    parts: list[tuple[int, int, int]] = []
    position = prefix_bits
    for start, width in zip(starts[table].tolist(), widths[table].tolist(), strict=True):
        if position <= 0:
            break
        take = min(width, position)
        position -= take
        parts.append((BITS - start - take, (1 << take) - 1, position))
    columns = zip(*parts, strict=True)
    source, mask, destination = (np.array(column, dtype=np.uint64) for column in columns)
    return source, mask, destination


@njit(cache=True)
def _keys_of_four(values: U64, parts: U64, position_bits: int,
                  keys: U64) -> None:  # pragma: no cover - compiled
    """Keys from up to four (source shift, mask, destination shift) parts, in one fused loop."""
    s0, s1, s2, s3 = parts[0], parts[3], parts[6], parts[9]
    m0, m1, m2, m3 = parts[1], parts[4], parts[7], parts[10]
    d0, d1, d2, d3 = parts[2], parts[5], parts[8], parts[11]
    for i in range(values.size):
        v = values[i]
        key = ((v >> s0) & m0) << d0 | ((v >> s1) & m1) << d1
        key |= ((v >> s2) & m2) << d2 | ((v >> s3) & m3) << d3
        keys[i] = (key << np.uint64(position_bits)) | np.uint64(i)


def _position_keys(values: U64, source: U64, mask: U64, destination: U64,
                   position_bits: int, keys: U64) -> U64:
    """Per value, its table prefix (and following bits) in the high bits, its position in the
    low bits. The first four bit segments are combined in one loop the compiler vectorizes; the
    bits of any further segment stay zero, which groups by a shorter prefix: still every pair,
    more candidates."""
    parts = np.zeros((4, 3), dtype=np.uint64)
    used = min(4, source.size)
    parts[:used] = np.stack([source, mask, destination], axis=1)[:used]
    _keys_of_four(values, parts.ravel(), position_bits, keys)
    return keys


@njit(cache=True)
def _scan_runs(keys: U64, values: U64, position_bits: int, extra_bits: int, k: int,
               earlier: U64, out: I64) -> int:  # pragma: no cover - compiled
    """Pairs of positions within distance k among runs of keys with equal prefix: counted, and
    written packed (low position in the high half) when ``out`` is large enough. The
    ``extra_bits`` below the prefix reject most pairs before the values are read. A pair whose
    bits also agree on an earlier table's prefix (``earlier`` masks) is left to that table, so
    each pair comes out once."""
    shift = np.uint64(position_bits + extra_bits)
    low = np.uint64(position_bits)
    extra = (np.uint64(1) << np.uint64(extra_bits)) - np.uint64(1)
    position = (np.uint64(1) << low) - np.uint64(1)
    found, n, i = 0, keys.size, 0
    while i < n:
        key = keys[i] >> shift
        j = i + 1
        while j < n and (keys[j] >> shift) == key:
            j += 1
        for a in range(i, j if j - i > 1 else i):
            for b in range(a + 1, j):
                if popcount(((keys[a] ^ keys[b]) >> low) & extra) > k:
                    continue
                x, y = np.int64(keys[a] & position), np.int64(keys[b] & position)
                diff = values[x] ^ values[y]
                if popcount(diff) <= k and first_found(diff, earlier):
                    if found < out.size:
                        out[found] = (min(x, y) << 32) | max(x, y)
                    found += 1
        i = j
    return found


def _table_pairs(values: U64, k: int, arrays: PlanArrays, masks: U64, table: int,
                 keys: U64, out: I64) -> I64:
    """Packed pairs found by one table (and by no earlier table). Each fingerprint becomes one
    64-bit key: its table prefix, then as many following permuted bits as fit, then its
    position; one sort of the keys brings the candidates together. ``keys`` and ``out`` are
    work buffers, reused from table to table."""
    position_bits = max(1, int(values.size - 1).bit_length())
    prefix_bits = min(int(arrays[3][table]), BITS - position_bits)
    extra_bits = BITS - position_bits - prefix_bits
    _position_keys(values, *_prefix_parts(arrays, table, prefix_bits + extra_bits),
                   position_bits, keys)
    keys.sort()
    count = _scan_runs(keys, values, position_bits, extra_bits, k, masks[:table], out)
    if count > out.size:
        out = np.empty(count, dtype=np.int64)
        _scan_runs(keys, values, position_bits, extra_bits, k, masks[:table], out)
    return out[:count].copy()


def hamming_pairs(
    fingerprints: npt.ArrayLike, k: int,
    design: HammingDesign | list[TablePlan] | None = None,
) -> tuple[I64, I64]:
    """Every pair (i < j) of positions whose fingerprints differ in at most ``k`` bits, sorted.

    ``design`` is a block design, or table plans that find every pair within ``k`` (a planner's
    design); by default :func:`design_for` picks one. Each table sorts one 64-bit key per
    fingerprint (its table prefix above its position) and scans the runs of equal prefix; a pair
    is reported by the first table in which it shares the prefix, so no pair comes out twice.
    """
    values = np.ascontiguousarray(np.asarray(fingerprints, dtype=np.uint64))
    if values.size >= 2**31:
        raise ConfigError(f"{values.size} fingerprints: at most 2**31 per join")
    design = design or design_for(k, values.size)
    if isinstance(design, HammingDesign):
        if k > design.max_k:
            raise ConfigError(f"k={k}: design {design} finds pairs only up to {design.max_k}")
        design = design.plans()
    arrays = plan_arrays(design)
    masks = prefix_masks(arrays)
    keys = np.empty_like(values)
    out = np.empty(values.size // 8 + 1024, dtype=np.int64)
    packed = [_table_pairs(values, k, arrays, masks, t, keys, out) for t in range(len(design))]
    codes = np.sort(np.concatenate(packed)) if packed else np.empty(0, dtype=np.int64)
    return codes >> 32, codes & 0xFFFFFFFF


def table_pairs(fingerprints: U64, k: int, plans: list[TablePlan], table: int) -> tuple[I64, I64]:
    """The pairs (i < j) within ``k`` that table ``table`` of ``plans`` finds and no earlier
    table does: :func:`hamming_pairs` restricted to one table, for a caller that has split the
    fingerprints by the table's leading bits (every pair of the table shares them)."""
    values = np.ascontiguousarray(np.asarray(fingerprints, dtype=np.uint64))
    if values.size >= 2**31:
        raise ConfigError(f"{values.size} fingerprints: at most 2**31 per join")
    arrays = plan_arrays(plans)
    keys = np.empty_like(values)
    out = np.empty(values.size // 8 + 1024, dtype=np.int64)
    codes = np.sort(_table_pairs(values, k, arrays, prefix_masks(arrays), table, keys, out))
    return codes >> 32, codes & 0xFFFFFFFF


def brute_force_pairs(fingerprints: npt.ArrayLike, k: int) -> tuple[I64, I64]:
    """The reference: compare every pair (quadratic; for tests)."""
    values = np.asarray(fingerprints, dtype=np.uint64)
    i, j = np.triu_indices(values.size, 1)
    close = np.bitwise_count(values[i] ^ values[j]) <= k
    return i[close].astype(np.int64), j[close].astype(np.int64)
