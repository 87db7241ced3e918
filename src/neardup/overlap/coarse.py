"""S&GM98's probabilistic-counting ("coarse counting") all-pairs overlap.

Memory stays bounded by the ``m`` counters, the bitmaps and the candidates, whatever the number
of pairs: no pass ever holds the pairs themselves. The phases:

1. **exact copies**: a fingerprint of each document's whole chunk set (its count and two 64-bit
   sums of mixed fingerprints); documents with equal ones are copies, the smallest doc is the
   centre and the others' rows are dropped;
2. **pilot** (``pilot > 0``): the pairs of a sample of the fingerprints (the fraction ``pilot``,
   chosen by hash) are counted; pairs seen at least ``max(2, ceil(T * pilot))`` times are likely
   heavy and are *deferred*: counted exactly later and kept out of the counters, where they would
   make buckets heavy for everyone (the iceberg paper's Defer-Count);
3. **hashing scans**, one per hash function h_j: ``A[h_j(a, b)] += 1`` for every pair sharing a
   fingerprint (one pair per shared fingerprint), skipping deferred pairs and pairs already light
   under an earlier h_i (Multi-Stage); ``BITMAP_j[i] = A[i] >= T``; A is freed;
4. **candidate scan**: the pairs heavy under every h_j, plus the deferred ones;
5. **count scan**: the candidates' exact counts; those below T are the false positives removed;
6. the copies dropped in 1 get their centre's pairs back, and copies pair with each other, so the
   result is the sort-based join's, pair for pair and count for count.

A pair sharing F >= T fingerprints adds F to its bucket under every h_j, so it is never lost.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
from numba import njit

from neardup.features.shingles import _fmix64, distinct
from neardup.overlap.phases import PhaseLog
from neardup.overlap.relation import ChunkRelation, PairCursor
from neardup.overlap.sortbased import Overlap, _run_length

__all__ = ["coarse_overlap"]

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
BATCH = 1 << 18
_SEED_MIX = 0x9E3779B97F4A7C15


@njit(cache=True, inline="always")
def _bucket(key: np.uint64, seed: np.uint64, buckets: int) -> int:
    # Lemire's multiply-shift of the top 32 bits into [0, buckets): no division.
    top = _fmix64(key ^ seed) >> np.uint64(32)
    return int((top * np.uint64(buckets)) >> np.uint64(32))


@njit(cache=True, inline="always")
def _lower_bound(ordered: U64, key: np.uint64) -> int:
    """The first index of ``ordered`` holding a value >= ``key``."""
    low, high = 0, ordered.size
    while low < high:
        middle = (low + high) >> 1
        if ordered[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low


@njit(cache=True, inline="always")
def _contains(ordered: U64, key: np.uint64) -> bool:
    # The search is written out: np.searchsorted, or calling _lower_bound from here, made the
    # scans 10 to 20 times slower (measured here with numba 0.68).
    low, high = 0, ordered.size
    while low < high:
        middle = (low + high) >> 1
        if ordered[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low < ordered.size and ordered[low] == key


@njit(cache=True, inline="always")
def _heavy(key: np.uint64, bitmaps: U8, stages: int, seeds: U64,
           buckets: int) -> bool:  # pragma: no cover - compiled
    for j in range(stages):
        b = _bucket(key, seeds[j], buckets)
        if not (bitmaps[j, b >> 3] >> (7 - (b & 7))) & 1:
            return False
    return True


@njit(cache=True)
def _hash_walk(fprints: U32, docs: U32, deferred: U64, bitmaps: U8, stage: int, seeds: U64,
               buckets: int, counters: npt.NDArray[np.unsignedinteger],
               limit: int) -> int:  # pragma: no cover - compiled
    """Count every pair heavy under the hashes before ``stage`` and not deferred into
    ``counters`` under h_stage, each counter saturating at ``limit``; the number counted."""
    size, n, start = docs.size, 0, 0
    while start < size:
        end = start + 1
        while end < size and fprints[end] == fprints[start]:
            end += 1
        for row in range(start, end):
            high = np.uint64(docs[row]) << np.uint64(32)
            for partner in range(row + 1, end):
                key = high | np.uint64(docs[partner])
                if not _heavy(key, bitmaps, stage, seeds, buckets):
                    continue
                if _contains(deferred, key):
                    continue
                b = _bucket(key, seeds[stage], buckets)
                if counters[b] < limit:
                    counters[b] += 1
                n += 1
        start = end
    return n


@njit(cache=True)
def _count_walk(fprints: U32, docs: U32, deferred: U64, bitmaps: U8, seeds: U64, buckets: int,
                candidates: U64, counts: U32) -> None:  # pragma: no cover - compiled
    """The exact number of shared fingerprints of every pair in the sorted ``candidates`` (the
    pairs heavy under every hash, and the deferred ones)."""
    size, start, stages = docs.size, 0, bitmaps.shape[0]
    while start < size:
        end = start + 1
        while end < size and fprints[end] == fprints[start]:
            end += 1
        for row in range(start, end):
            high = np.uint64(docs[row]) << np.uint64(32)
            for partner in range(row + 1, end):
                key = high | np.uint64(docs[partner])
                if not _heavy(key, bitmaps, stages, seeds, buckets):
                    if not _contains(deferred, key):
                        continue
                at = _lower_bound(candidates, key)
                if at < candidates.size:  # noqa: SIM102 - one `and` here made numba's loop slower
                    if candidates[at] == key:
                        counts[at] += 1
        start = end


@njit(cache=True)
def _candidate_fill(fprints: U32, docs: U32, deferred: U64, bitmaps: U8, stages: int,
                    seeds: U64, buckets: int, state: I64,
                    out: U64) -> int:  # pragma: no cover - compiled
    """Write the keys of the pairs heavy under every hash into ``out``, resuming from ``state``
    (group start, row, partner); the number written."""
    size, capacity, n = docs.size, out.size, 0
    start, row, partner = state[0], state[1], state[2]
    while start < size:
        end = start + 1
        while end < size and fprints[end] == fprints[start]:
            end += 1
        while row < end:
            high = np.uint64(docs[row]) << np.uint64(32)
            while partner < end:
                key = high | np.uint64(docs[partner])
                if _heavy(key, bitmaps, stages, seeds, buckets) and not _contains(deferred, key):
                    if n == capacity:
                        state[0], state[1], state[2] = start, row, partner
                        return n
                    out[n] = key
                    n += 1
                partner += 1
            row += 1
            partner = row + 1
        start = end
    state[0], state[1], state[2] = size, size, size + 1
    return n


@njit(cache=True)
def _set_prints(fprints: U32, docs: U32, counts: I64, first: U64,
                second: U64) -> None:  # pragma: no cover - compiled
    for i in range(docs.size):
        f = np.uint64(fprints[i])
        counts[docs[i]] += 1
        first[docs[i]] += _fmix64(f ^ np.uint64(0x5851F42D4C957F2D))
        second[docs[i]] += _fmix64(f ^ np.uint64(0x14057B7EF767814F))


class _Scan:
    """The relation and the state every scan shares: deferred pairs, bitmaps, hash seeds."""

    def __init__(self, relation: ChunkRelation, hashes: int, buckets: int, seed: int) -> None:
        self.relation = relation
        self.buckets = buckets
        self.deferred = np.empty(0, dtype=np.uint64)
        self.bitmaps = np.zeros((hashes, (buckets + 7) // 8), dtype=np.uint8)
        mix = np.arange(1, hashes + 1, dtype=np.uint64) * np.uint64(_SEED_MIX)
        self.seeds = mix ^ np.uint64(seed)

    def hash_scan(self, stage: int, counters: npt.NDArray[np.unsignedinteger], limit: int) -> int:
        r = self.relation
        return int(_hash_walk(r.fprints, r.docs, self.deferred, self.bitmaps, stage, self.seeds,
                              self.buckets, counters, limit))

    def candidates(self, state: I64, out: U64) -> int:
        r = self.relation
        return int(_candidate_fill(r.fprints, r.docs, self.deferred, self.bitmaps,
                                   self.bitmaps.shape[0], self.seeds, self.buckets, state, out))

    def count(self, candidates: U64, counts: U32) -> None:
        r = self.relation
        _count_walk(r.fprints, r.docs, self.deferred, self.bitmaps, self.seeds, self.buckets,
                    candidates, counts)


def _copies(relation: ChunkRelation) -> tuple[I64, I64]:
    """For each document its group of copies (an id, -1 when it has no rows) and the group
    centres: documents whose chunk sets are equal, the smallest doc first."""
    n = relation.documents
    counts = np.zeros(n, dtype=np.int64)
    first, second = np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.uint64)
    _set_prints(relation.fprints, relation.docs, counts, first, second)
    order = np.lexsort((np.arange(n), second, first, counts))
    order = order[counts[order] > 0]
    keys = np.stack([counts[order].astype(np.uint64), first[order], second[order]])
    new = np.ones(order.size, dtype=np.bool_)
    new[1:] = np.any(keys[:, 1:] != keys[:, :-1], axis=0)
    group = np.full(n, -1, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return group, order[new]


def _pilot(scan: _Scan, fraction: float, threshold: int, seed: int) -> dict[str, object]:
    """Count the pairs of a sample of the fingerprints; defer those likely to be heavy."""
    relation = scan.relation
    sizes = relation.group_sizes()
    heads = relation.fprints[np.cumsum(sizes) - sizes] if sizes.size else relation.fprints
    mixed = heads.astype(np.uint64) * np.uint64(_SEED_MIX) ^ np.uint64(seed)
    chosen = (mixed >> np.uint64(11)).astype(np.float64) / 2.0**53 < fraction
    sample = relation.select(np.repeat(chosen, sizes))
    keys = np.empty(max(sample.pair_total(), 1), dtype=np.uint64)
    filled = PairCursor(sample).fill(keys)
    keys = keys[:filled]
    keys.sort()
    counts = np.empty(keys.size, dtype=np.uint32)
    distinct = _run_length(keys, counts)
    least = max(2, math.ceil(threshold * fraction))
    scan.deferred = keys[:distinct][counts[:distinct] >= least].copy()
    return {"fingerprints_sampled": int(chosen.sum()), "pairs_sampled": filled,
            "defer_at": least, "deferred": int(scan.deferred.size)}


def _counter_type(threshold: int) -> type[np.unsignedinteger]:
    """The smallest counter that reaches T: counters saturate at T, which is all a bitmap needs."""
    for kind in (np.uint8, np.uint16, np.uint32):
        if threshold <= np.iinfo(kind).max:
            return kind
    return np.uint64


def _hash_scan(scan: _Scan, stage: int, threshold: int) -> dict[str, object]:
    counters = np.zeros(scan.buckets, dtype=_counter_type(threshold))
    counted = scan.hash_scan(stage, counters, threshold)
    heavy = counters >= threshold
    scan.bitmaps[stage] = np.packbits(heavy)
    return {"pairs_counted": counted, "buckets": scan.buckets,
            "counter_bytes": int(counters.nbytes), "heavy_buckets": int(heavy.sum())}


def _candidate_scan(scan: _Scan, stages: int) -> U64:
    buffer = np.empty(BATCH, dtype=np.uint64)
    found: list[U64] = [scan.deferred]
    held, state = scan.deferred.size, np.array([0, 0, 1], dtype=np.int64)
    while True:
        filled = scan.candidates(state, buffer)
        found.append(distinct(buffer[:filled]))
        held += found[-1].size
        if len(found) > 8:
            found = [distinct(np.concatenate(found))]
            held = found[0].size
        if filled < buffer.size:
            return distinct(np.concatenate(found))


def _expand_copies(overlap: Overlap, group: I64, centres: I64, sizes: I64, threshold: int
                   ) -> tuple[U64, I64]:
    """Give every copy its centre's pairs and pair the copies of a group with each other."""
    members = np.argsort(group, kind="stable")[np.sort(group) >= 0]
    offsets = np.searchsorted(group[members], np.arange(centres.size + 1))
    width = np.diff(offsets)
    ga, gb = group[overlap.a], group[overlap.b]
    na, nb = width[ga], width[gb]
    total = na * nb
    pair = np.repeat(np.arange(total.size), total)
    rank = np.arange(pair.size) - np.repeat(np.cumsum(total) - total, total)
    x = members[offsets[ga][pair] + rank // nb[pair]]
    y = members[offsets[gb][pair] + rank % nb[pair]]
    counts = [overlap.shared[pair]]
    parts = [(np.minimum(x, y), np.maximum(x, y))]
    for g in np.flatnonzero((width > 1) & (sizes[centres] >= threshold)).tolist():
        inside = members[offsets[g]:offsets[g + 1]]
        i, j = np.triu_indices(inside.size, 1)
        parts.append((inside[i], inside[j]))
        counts.append(np.full(i.size, sizes[centres[g]], dtype=np.int64))
    keys = np.concatenate([(a.astype(np.uint64) << np.uint64(32)) | b.astype(np.uint64)
                           for a, b in parts])
    order = np.argsort(keys)
    return keys[order], np.concatenate(counts)[order]


def coarse_overlap(relation: ChunkRelation, threshold: int, buckets: int = 1 << 22,
                   hashes: int = 2, pilot: float = 0.0, seed: int = 0) -> Overlap:
    """Pairs of documents sharing at least ``threshold`` fingerprints, by coarse counting."""
    with PhaseLog() as log:
        with log.phase("exact_copies") as record:
            group, centres = _copies(relation)
            sizes = np.bincount(relation.docs, minlength=relation.documents)
            is_centre = np.zeros(relation.documents, dtype=np.bool_)
            is_centre[centres] = True
            copies = int(np.count_nonzero(group >= 0)) - centres.size
            scan = _Scan(relation.select(is_centre[relation.docs]) if copies else relation,
                         hashes, buckets, seed)
            record.update(copy_groups=int(np.count_nonzero(np.bincount(group[group >= 0]) > 1)),
                          copies_removed=copies, pairs_to_scan=scan.relation.pair_total())
        if pilot > 0:
            with log.phase("pilot") as record:
                record.update(_pilot(scan, pilot, threshold, seed))
        for stage in range(hashes):
            with log.phase(f"hash_scan_{stage + 1}") as record:
                record.update(_hash_scan(scan, stage, threshold))
        with log.phase("candidate_scan") as record:
            candidates = _candidate_scan(scan, hashes)
            record.update(candidates=int(candidates.size))
        with log.phase("count_scan") as record:
            counts = np.zeros(candidates.size, dtype=np.uint32)
            scan.count(candidates, counts)
            keep = counts >= threshold
            record.update(false_positives_removed=int(np.count_nonzero(~keep)),
                          overlap_pairs=int(np.count_nonzero(keep)))
        with log.phase("expand_copies") as record:
            centre_overlap = Overlap.from_keys(candidates[keep], counts[keep], {})
            keys, shared = _expand_copies(centre_overlap, group, centres, sizes, threshold)
            record.update(overlap_pairs=int(keys.size))
    return Overlap.from_keys(keys, shared, log.phases)
