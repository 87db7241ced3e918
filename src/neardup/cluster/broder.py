"""Broder's clustering phases 2 and 3 over sketches held as one CSR array (divide, compute, merge).

- Phase 2, **shingle merging**: expand every sketch to ``(shingle, doc)`` entries, sort each piece
  of about ``piece`` entries by shingle (compute), then merge the sorted runs (a stable sort of the
  concatenated runs, which timsort performs as a merge). Entries of one shingle are contiguous and
  in document order.
- **Very common shingles**, shared by more than ``drop_common`` documents (Broder: 1000), are
  dropped from every sketch and counted: they are mostly machine-made and make the pair expansion
  quadratic.
- Phase 3, **ID-ID pair formation and merging**: for each shingle shared by k documents, emit the
  k(k-1)/2 ``(doc, doc, 1)`` triplets; each piece of about ``piece`` triplets is reduced to
  ``(doc, doc, count)`` by a sort (compute), and the pieces are merge-summed into one list sorted
  by (first, second) document.

- Phase 4, **cluster formation**: each pair's estimate from the sketches (very common shingles
  left out), and union-find over the pairs at or above the threshold.

Phase 1 (sketching) is :mod:`neardup.fingerprints.sketch`. :func:`cluster_sketches` runs phases 2
to 4 over arrays. **Incremental sweeps** (:func:`extend_clusters`): the new documents are numbered
after the old ones, their sorted entries are merged into the old runs, and only pairs touching a
new document are formed; the old clusters stand. This gives the clusters of clustering everything
from scratch, except where a shingle becomes "very common" only with the new sweep (its old pairs
were already counted): use ``drop_common=0`` for an exact match.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from neardup._types import F64, I64, U64
from neardup.cluster.unionfind import components
from neardup.config import SketchConfig
from neardup.fingerprints.sketch_pairs import mod_ratios, pair_estimates

__all__ = [
    "SharedCounts",
    "ShingleRuns",
    "cluster_sketches",
    "count_shared",
    "drop_common",
    "expand_sorted",
    "extend_clusters",
    "merge_runs",
    "sketch_estimates",
    "without_values",
]

DEFAULT_PIECE = 1 << 22


@dataclass(frozen=True, slots=True)
class ShingleRuns:
    """``(shingle, doc)`` entries sorted by shingle, then document."""

    values: U64
    docs: I64
    dropped: U64 = field(default_factory=lambda: np.empty(0, np.uint64))
    dropped_entries: int = 0

    @property
    def dropped_shingles(self) -> int:
        """The number of distinct shingles dropped as too common."""
        return int(self.dropped.size)


@dataclass(frozen=True, slots=True)
class SharedCounts:
    """``(a, b, count)``: documents a < b share ``count`` sketch shingles (count >= 1)."""

    a: I64
    b: I64
    count: I64
    triplets: int


def expand_sorted(flat: U64, offsets: I64, piece: int = DEFAULT_PIECE) -> ShingleRuns:
    """Phase 2: every sketch value with its document, sorted by (value, doc)."""
    values = np.empty(flat.size, dtype=np.uint64)
    docs = np.empty(flat.size, dtype=np.int64)
    bounds = [*range(0, flat.size, max(piece, 1)), flat.size]
    for start, end in itertools.pairwise(bounds):
        order = np.argsort(flat[start:end], kind="stable")
        values[start:end] = flat[start:end][order]
        owners = np.searchsorted(offsets, np.arange(start, end), side="right") - 1
        docs[start:end] = owners[order]
    if len(bounds) > 2:
        order = np.argsort(values, kind="stable")  # timsort: merges the sorted runs
        values = values[order]
        docs = docs[order]
    return ShingleRuns(values, docs)


def _run_bounds(values: U64 | I64) -> tuple[I64, I64]:
    """Start and length of each run of equal values."""
    if values.size == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], values[1:] != values[:-1])))
    lengths = np.diff(np.append(starts, values.size))
    return starts.astype(np.int64), lengths.astype(np.int64)


def drop_common(runs: ShingleRuns, limit: int) -> ShingleRuns:
    """Remove the shingles shared by more than ``limit`` documents (none when limit is 0)."""
    if limit <= 0:
        return runs
    starts, lengths = _run_bounds(runs.values)
    common = lengths > limit
    if not np.any(common):
        return runs
    keep = np.repeat(~common, lengths)
    return ShingleRuns(runs.values[keep], runs.docs[keep], runs.values[starts[common]],
                       int(lengths[common].sum()))


def _run_pairs(docs: I64, starts: I64, lengths: I64, first_new: int) -> tuple[I64, I64]:
    """All (first, second) document pairs within each run, first < second, second >= first_new."""
    total = int(lengths.sum())
    run_offsets = np.cumsum(lengths) - lengths
    position = np.arange(total, dtype=np.int64) - np.repeat(run_offsets, lengths)
    entry_doc = docs[np.repeat(starts, lengths) + position]
    entry_len = np.repeat(lengths, lengths)
    firsts, seconds = [], []
    live = np.arange(total, dtype=np.int64)
    for gap in range(1, int(lengths.max(initial=1))):
        live = live[position[live] + gap < entry_len[live]]
        first, second = entry_doc[live], entry_doc[live + gap]
        if first_new:
            new = second >= first_new
            first, second = first[new], second[new]
        firsts.append(first)
        seconds.append(second)
    if not firsts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(firsts), np.concatenate(seconds)


def _reduce(keys: I64, counts: I64 | None = None) -> tuple[I64, I64]:
    """Sum the counts of equal keys (each key counts 1 when ``counts`` is None)."""
    order = np.argsort(keys, kind="stable")
    keys = keys[order]
    starts, _ = _run_bounds(keys)
    if counts is None:
        return keys[starts], np.diff(np.append(starts, keys.size)).astype(np.int64)
    return keys[starts], np.add.reduceat(counts[order], starts) if starts.size else counts[:0]


def _pieces(lengths: I64, piece: int) -> list[tuple[int, int]]:
    """Consecutive ranges of runs holding about ``piece`` triplets each."""
    pairs = lengths * (lengths - 1) // 2
    cumulative = np.cumsum(pairs)
    bounds, start = [], 0
    while start < lengths.size:
        base = cumulative[start - 1] if start else 0
        end = int(np.searchsorted(cumulative, base + piece, side="right"))
        end = max(end, start + 1)
        bounds.append((start, end))
        start = end
    return bounds


def count_shared(runs: ShingleRuns, documents: int, piece: int = DEFAULT_PIECE,
                 first_new: int = 0) -> SharedCounts:
    """Phase 3: ``(doc, doc, count)`` merge-summed over the shingles shared by 2+ documents."""
    starts, lengths = _run_bounds(runs.values)
    shared = lengths > 1
    starts, lengths = starts[shared], lengths[shared]
    keys, counts, triplets = [], [], 0
    for low, high in _pieces(lengths, piece):
        first, second = _run_pairs(runs.docs, starts[low:high], lengths[low:high], first_new)
        triplets += first.size
        piece_keys, piece_counts = _reduce(first * documents + second)
        keys.append(piece_keys)
        counts.append(piece_counts)
    if not keys:
        empty = np.empty(0, np.int64)
        return SharedCounts(empty, empty.copy(), empty.copy(), 0)
    merged, total = _reduce(np.concatenate(keys), np.concatenate(counts))
    return SharedCounts(merged // documents, merged % documents, total, triplets)


def merge_runs(old: ShingleRuns, new: ShingleRuns) -> ShingleRuns:
    """Merge the sorted entries of new documents (numbered after the old ones) into old runs."""
    values = np.concatenate([old.values, new.values])
    docs = np.concatenate([old.docs, new.docs])
    order = np.argsort(values, kind="stable")  # two sorted runs: a merge; old entries first
    return ShingleRuns(values[order], docs[order])


def without_values(flat: U64, offsets: I64, dropped: U64) -> tuple[U64, I64]:
    """The CSR sets with the ``dropped`` values removed."""
    if dropped.size == 0:
        return flat, offsets
    keep = ~np.isin(flat, dropped)
    cumulative = np.concatenate(([0], np.cumsum(keep))).astype(np.int64)
    return flat[keep], cumulative[offsets]


def sketch_estimates(flat: U64, offsets: I64, moduli: I64, runs: ShingleRuns,
                     shared: SharedCounts, config: SketchConfig) -> tuple[F64, F64, F64]:
    """Phase 4 estimates r(a, b), c(a, b), c(b, a) of each pair, very common shingles left out:
    from the counts for one MOD modulus (as Broder did), else by walking the two sketches."""
    if config.kind == "mod" and not config.adaptive:
        sizes = np.bincount(runs.docs, minlength=offsets.size - 1)
        return mod_ratios(shared.count, sizes[shared.a], sizes[shared.b])
    kept_flat, kept_offsets = without_values(flat, offsets, runs.dropped)
    return pair_estimates(kept_flat, kept_offsets, moduli, shared.a, shared.b, config)


def cluster_sketches(flat: U64, offsets: I64, moduli: I64, config: SketchConfig,
                     threshold: float, limit: int = 1000, piece: int = DEFAULT_PIECE) -> I64:
    """Phases 2 to 4: each document's cluster (its smallest member) at ``threshold``."""
    documents = offsets.size - 1
    runs = drop_common(expand_sorted(flat, offsets, piece), limit)
    shared = count_shared(runs, documents, piece)
    resemblance, _, _ = sketch_estimates(flat, offsets, moduli, runs, shared, config)
    keep = resemblance >= threshold
    return components(documents, shared.a[keep], shared.b[keep])


def extend_clusters(labels: I64, old_runs: ShingleRuns, flat: U64, offsets: I64, moduli: I64,
                    config: SketchConfig, threshold: float,
                    limit: int = 1000) -> tuple[I64, ShingleRuns]:
    """Merge a new sweep into existing clusters (see the module docstring).

    ``labels``: the clusters of the ``len(labels)`` old documents; ``old_runs``: their entries
    (before dropping common shingles); ``flat``/``offsets``/``moduli``: the sketches of all
    documents, old then new. Returns the clusters of all documents and the merged runs."""
    first_new = labels.size
    total = offsets.size - 1
    new_offsets = offsets[first_new:] - offsets[first_new]
    new = expand_sorted(flat[offsets[first_new]:], new_offsets)
    runs = merge_runs(old_runs, ShingleRuns(new.values, new.docs + first_new))
    kept = drop_common(runs, limit)
    shared = count_shared(kept, total, first_new=first_new)
    resemblance, _, _ = sketch_estimates(flat, offsets, moduli, kept, shared, config)
    keep = resemblance >= threshold
    old = np.arange(first_new, dtype=np.int64)
    merged = components(total, np.concatenate([old, shared.a[keep]]),
                        np.concatenate([labels.astype(np.int64), shared.b[keep]]))
    return merged, runs
