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

The relation is read as a sequence of :class:`Relations`: one sorted relation in memory, or
(the batch engine, out of core) the buckets of its rows on disk, every row of a fingerprint in
one bucket, each read again by every scan. Only the counters, the bitmaps, the deferred pairs,
the candidates and three numbers per document stay in memory between scans.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator

import numpy as np
import numpy.typing as npt

from neardup._types import BOOL, I64, U8, U32, U64
from neardup.features.shingles import distinct, fmix64
from neardup.overlap.phases import PhaseMeter
from neardup.overlap.relation import ChunkRelation, PairCursor
from neardup.overlap.sortbased import Overlap, _run_length
from neardup.text.compiled import njit

__all__ = ["Relations", "auto_buckets", "coarse_overlap", "coarse_overlap_of"]

Relations = Callable[[], Iterator[ChunkRelation]]
"""Each call yields the pieces of one relation again (each piece sorted by (fprint, doc), every
row of a fingerprint in one piece, documents numbered over the whole relation)."""

BATCH = 1 << 16
_SEED_MIX = 0x9E3779B97F4A7C15
_SCREEN_SEED = 0xD6E8FEB86659FD93


@njit(cache=True, inline="always")
def _bucket(key: np.uint64, seed: np.uint64, buckets: int) -> int:
    # Lemire's multiply-shift of the top 32 bits into [0, buckets): no division.
    top = fmix64(key ^ seed) >> np.uint64(32)
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
def _is_deferred(key: np.uint64, deferred: U64, screen: U8) -> bool:
    """Whether ``key`` is in the sorted ``deferred``; ``screen``, a one-hash Bloom filter of it,
    spares almost every pair the binary search (whose mispredicted branches cost more than the
    rest of a scan's work per pair)."""
    bit = int(fmix64(key ^ np.uint64(_SCREEN_SEED)) & np.uint64(screen.size * 8 - 1))
    if not (screen[bit >> 3] >> (bit & 7)) & 1:
        return False
    # Written out: np.searchsorted, or calling _lower_bound from here, made the scans 10 to 20
    # times slower (measured here with numba 0.68).
    low, high = 0, deferred.size
    while low < high:
        middle = (low + high) >> 1
        if deferred[middle] < key:
            low = middle + 1
        else:
            high = middle
    return low < deferred.size and deferred[low] == key


@njit(cache=True)
def _screen_bits(keys: U64, bits: int) -> I64:  # pragma: no cover - compiled
    """The screen bit of each key, as :func:`_is_deferred` computes it."""
    out = np.empty(keys.size, dtype=np.int64)
    for i in range(keys.size):
        out[i] = int(fmix64(keys[i] ^ np.uint64(_SCREEN_SEED)) & np.uint64(bits - 1))
    return out


@njit(cache=True, inline="always")
def _heavy(key: np.uint64, bitmaps: U8, stages: int, seeds: U64,
           buckets: int) -> bool:  # pragma: no cover - compiled
    # A flag and a break, not a return inside the loop: returning from the loop of an inlined
    # function made numba's scans 3 to 4 times slower (measured here with numba 0.68).
    heavy = True
    for j in range(stages):
        b = _bucket(key, seeds[j], buckets)
        if not (bitmaps[j, b >> 3] >> (7 - (b & 7))) & 1:
            heavy = False
            break
    return heavy


@njit(cache=True)
def _count_batch(keys: U64, deferred: U64, screen: U8, bitmaps: U8, stage: int, seeds: U64,
                 buckets: int, counters: npt.NDArray[np.unsignedinteger], limit: int,
                 pending: I64) -> int:  # pragma: no cover - compiled
    """Count the pairs of ``keys`` heavy under the hashes before ``stage`` and not deferred into
    ``counters`` under h_stage, each counter saturating at ``limit``; the number counted. The
    buckets are listed first (in ``pending``), then counted in a loop of independent memory
    accesses that the processor overlaps (about twice as fast here as counting in one loop)."""
    counted = 0
    for i in range(keys.size):
        key = keys[i]
        if _heavy(key, bitmaps, stage, seeds, buckets) and \
                not _is_deferred(key, deferred, screen):
            pending[counted] = _bucket(key, seeds[stage], buckets)
            counted += 1
    for i in range(counted):
        b = pending[i]
        if counters[b] < limit:
            counters[b] += 1
    return counted


@njit(cache=True)
def _select_batch(keys: U64, deferred: U64, screen: U8, bitmaps: U8, seeds: U64, buckets: int,
                  out: U64) -> int:  # pragma: no cover - compiled
    """Write the pairs of ``keys`` heavy under every hash, and not deferred, into ``out``."""
    stages, selected = bitmaps.shape[0], 0
    for i in range(keys.size):
        key = keys[i]
        if _heavy(key, bitmaps, stages, seeds, buckets) and \
                not _is_deferred(key, deferred, screen):
            out[selected] = key
            selected += 1
    return selected


@njit(cache=True)
def _exact_batch(keys: U64, deferred: U64, screen: U8, bitmaps: U8, seeds: U64, buckets: int,
                 candidates: U64, counts: U32, pending: U64) -> None:  # pragma: no cover
    """Count the pairs of ``keys`` found in the sorted ``candidates``; only those heavy under
    every hash, or deferred, are looked up (listed first, then searched, as in _count_batch)."""
    stages, listed = bitmaps.shape[0], 0
    for i in range(keys.size):
        key = keys[i]
        wanted = _heavy(key, bitmaps, stages, seeds, buckets)
        if not wanted:
            wanted = _is_deferred(key, deferred, screen)
        if wanted:
            pending[listed] = key
            listed += 1
    for i in range(listed):
        key = pending[i]
        at = _lower_bound(candidates, key)
        if at < candidates.size:  # noqa: SIM102 - one `and` here made numba's loop slower
            if candidates[at] == key:
                counts[at] += 1


@njit(cache=True)
def _set_prints(fprints: U32, docs: U32, counts: I64, first: U64,
                second: U64) -> None:  # pragma: no cover - compiled
    for i in range(docs.size):
        f = np.uint64(fprints[i])
        counts[docs[i]] += 1
        first[docs[i]] += fmix64(f ^ np.uint64(0x5851F42D4C957F2D))
        second[docs[i]] += fmix64(f ^ np.uint64(0x14057B7EF767814F))


class _Scan:
    """The relation and the state every scan shares: deferred pairs, bitmaps, hash seeds."""

    def __init__(self, relations: Relations, hashes: int, buckets: int, seed: int) -> None:
        self.relations = relations
        self.buckets = buckets
        self.bitmaps = np.zeros((hashes, (buckets + 7) // 8), dtype=np.uint8)
        mix = np.arange(1, hashes + 1, dtype=np.uint64) * np.uint64(_SEED_MIX)
        self.seeds = mix ^ np.uint64(seed)
        self.defer(np.empty(0, dtype=np.uint64))

    def defer(self, keys: U64) -> None:
        """Keep the sorted pair ``keys`` out of the counters (and screen them)."""
        self.deferred = keys
        bits = 1 << max(10, int(16 * keys.size).bit_length())  # about 1 in 16 screened in
        marks = np.zeros(bits, dtype=np.bool_)
        marks[_screen_bits(keys, bits)] = True
        self.screen = np.packbits(marks, bitorder="little")

    def batches(self) -> Iterator[U64]:
        """The relation's pair keys, a buffer of BATCH at a time (the buffer is reused): the
        scans enumerate pairs sequentially, then touch counters and bitmaps in a separate loop,
        so that the memory accesses of a batch overlap."""
        buffer = np.empty(BATCH, dtype=np.uint64)
        for relation in self.relations():
            cursor = PairCursor(relation)
            while filled := cursor.fill(buffer):
                yield buffer[:filled]

    def hash_scan(self, stage: int, counters: npt.NDArray[np.unsignedinteger], limit: int) -> int:
        pending = np.empty(BATCH, dtype=np.int64)
        return sum(int(_count_batch(keys, self.deferred, self.screen, self.bitmaps, stage,
                                    self.seeds, self.buckets, counters, limit, pending))
                   for keys in self.batches())

    def select(self, keys: U64, out: U64) -> int:
        return int(_select_batch(keys, self.deferred, self.screen, self.bitmaps, self.seeds,
                                 self.buckets, out))

    def count(self, candidates: U64, counts: U32) -> None:
        pending = np.empty(BATCH, dtype=np.uint64)
        for keys in self.batches():
            _exact_batch(keys, self.deferred, self.screen, self.bitmaps, self.seeds,
                         self.buckets, candidates, counts, pending)


def _copies(relations: Relations, n: int) -> tuple[I64, I64, I64]:
    """For each of the ``n`` documents its group of copies (an id, -1 when it has no rows), the
    group centres (documents whose chunk sets are equal, the smallest doc first) and each
    document's number of fingerprints."""
    counts = np.zeros(n, dtype=np.int64)
    first, second = np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.uint64)
    for relation in relations():
        _set_prints(relation.fprints, relation.docs, counts, first, second)
    order = np.lexsort((np.arange(n), second, first, counts))
    order = order[counts[order] > 0]
    keys = np.stack([counts[order].astype(np.uint64), first[order], second[order]])
    new = np.ones(order.size, dtype=np.bool_)
    new[1:] = np.any(keys[:, 1:] != keys[:, :-1], axis=0)
    group = np.full(n, -1, dtype=np.int64)
    group[order] = np.cumsum(new) - 1
    return group, order[new], counts


@njit(cache=True)
def _sample_rows(fprints: U32, seed: np.uint64, cutoff: np.uint64,
                 chosen: BOOL) -> int:  # pragma: no cover - compiled
    """Mark the rows whose fingerprint is sampled (its hash below ``cutoff``); the number of
    distinct fingerprints sampled."""
    sampled = 0
    for i in range(fprints.size):
        chosen[i] = fmix64(np.uint64(fprints[i]) ^ seed) < cutoff
        if chosen[i] and (i == 0 or fprints[i] != fprints[i - 1]):
            sampled += 1
    return sampled


def _pilot(scan: _Scan, fraction: float, threshold: int, seed: int) -> dict[str, object]:
    """Count the pairs of a sample of the fingerprints; defer those likely to be heavy."""
    cutoff = np.uint64(min(int(fraction * 2.0**64), 2**64 - 1))
    sampled, pieces = 0, []
    for relation in scan.relations():
        chosen = np.empty(len(relation), dtype=np.bool_)
        sampled += _sample_rows(relation.fprints, np.uint64(seed) ^ np.uint64(_SEED_MIX), cutoff,
                                chosen)
        sample = relation.select(chosen)
        keys = np.empty(max(sample.pair_total(), 1), dtype=np.uint64)
        pieces.append(keys[:PairCursor(sample).fill(keys)])
    keys = np.concatenate(pieces) if pieces else np.empty(0, dtype=np.uint64)
    keys.sort()
    counts = np.empty(keys.size, dtype=np.uint32)
    distinct_keys = _run_length(keys, counts)
    least = max(2, math.ceil(threshold * fraction))
    scan.defer(keys[:distinct_keys][counts[:distinct_keys] >= least].copy())
    return {"fingerprints_sampled": sampled, "pairs_sampled": int(keys.size),
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
    heavy = 0
    for start in range(0, scan.buckets, 1 << 23):  # BITMAP_j by slices: no m-sized temporary
        part = counters[start:start + (1 << 23)] >= threshold
        scan.bitmaps[stage, start >> 3:(start + part.size + 7) >> 3] = np.packbits(part)
        heavy += int(part.sum())
    return {"pairs_counted": counted, "buckets": scan.buckets,
            "counter_bytes": int(counters.nbytes), "heavy_buckets": heavy}


def _candidate_scan(scan: _Scan) -> U64:
    selected = np.empty(BATCH, dtype=np.uint64)
    found: list[U64] = [scan.deferred]
    for keys in scan.batches():
        found.append(distinct(selected[:scan.select(keys, selected)]))
        if len(found) > 64:
            found = [distinct(np.concatenate(found))]
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


def auto_buckets(pairs: int, threshold: int) -> int:
    """m for ``pairs`` pair occurrences: the power of two at or above 2 * pairs / T, so that a
    bucket holds T / 2 occurrences on average; between 2**16 and 2**28 (counters of one byte
    while T <= 255: 64 KiB to 256 MiB)."""
    wanted = max(1, 2 * pairs // max(threshold, 1))
    return 1 << min(28, max(16, (wanted - 1).bit_length()))


@functools.cache
def _warm_up() -> None:
    """Load every compiled kernel once per process, before anything is measured (loading them
    allocates memory that tracemalloc would count in the first phase)."""
    tiny = ChunkRelation.from_sets([np.arange(3, dtype=np.uint32)] * 3)
    _coarse(lambda: iter([tiny]), 3, 1, 64, 2, 0.5, 0)


def coarse_overlap(relation: ChunkRelation, threshold: int, buckets: int | None = None,
                   hashes: int = 2, pilot: float = 0.0, seed: int = 0) -> Overlap:
    """Pairs of documents sharing at least ``threshold`` fingerprints, by coarse counting with
    ``buckets`` counters (None: :func:`auto_buckets` of the pairs to scan)."""
    _warm_up()
    return _coarse(lambda: iter([relation]), relation.documents, threshold, buckets, hashes,
                   pilot, seed)


def coarse_overlap_of(relations: Relations, documents: int, threshold: int,
                      buckets: int | None = None, hashes: int = 2, pilot: float = 0.0,
                      seed: int = 0) -> Overlap:
    """:func:`coarse_overlap` of a relation read in pieces (see :data:`Relations`), each scan
    reading them again; ``documents``: the number of documents of the whole relation."""
    return _coarse(relations, documents, threshold, buckets, hashes, pilot, seed)


def _coarse(relations: Relations, documents: int, threshold: int, buckets: int | None,
            hashes: int, pilot: float, seed: int) -> Overlap:
    with PhaseMeter() as log:
        with log.phase("exact_copies") as record:
            group, centres, sizes = _copies(relations, documents)
            is_centre = np.zeros(documents, dtype=np.bool_)
            is_centre[centres] = True
            copies = int(np.count_nonzero(group >= 0)) - centres.size
            kept: Relations = ((lambda: (r.select(is_centre[r.docs]) for r in relations()))
                               if copies else relations)
            pairs = sum(relation.pair_total() for relation in kept())
            scan = _Scan(kept, hashes, buckets or auto_buckets(pairs, threshold), seed)
            record.update(copy_groups=int(np.count_nonzero(np.bincount(group[group >= 0]) > 1)),
                          copies_removed=copies, pairs_to_scan=pairs)
        if pilot > 0:
            with log.phase("pilot") as record:
                record.update(_pilot(scan, pilot, threshold, seed))
        for stage in range(hashes):
            with log.phase(f"hash_scan_{stage + 1}") as record:
                record.update(_hash_scan(scan, stage, threshold))
        with log.phase("candidate_scan") as record:
            candidates = _candidate_scan(scan)
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
