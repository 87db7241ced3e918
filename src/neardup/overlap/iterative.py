"""Pereira, Baeza-Yates & Ziviani's duplicate detection over m sub-collections, with growth.

The collection C (documents as multisets of shingle-paragraph keys,
:mod:`neardup.fingerprints.paragraphprint`) is split into m sub-collections S_0..S_m-1 (documents
assigned at random, equal sizes, seeded). Iteration i loads the shingle paragraphs of S_i into a
table (sorted arrays; only S_i is ever held) and probes it with every document still in C:

- a **duplicate** is a document whose multiset of shingle paragraphs equals a loaded document's
  (same number, each found in the other: the paper's Definition 2, without its false matches); it
  joins the cluster of the first loaded document with that multiset;
- a **near-duplicate** at level L shares at least L% of the shingle paragraphs of both documents
  (``100 * shared >= L * max(n_a, n_b)``); found only when L < 100;

then C <- C - S_i. Documents already found as duplicates are neither loaded nor probed again
(their cluster is known through the document they duplicate, which gives them the same pairs).
After each iteration a growth record counts the clusters and duplicates found so far, as the
paper's Figure 5 does. Documents carry weights (a document standing for w documents, such as the
representative of an exact-level group, counts w times: its cluster has w - 1 duplicates more).

**Estimate of the final number of duplicates** after a few iterations. The paper scales by the
growth curve of another collection; here the estimate needs no other collection. A cluster of
exact duplicates is found, whole, at the first iteration that loads one of its documents, so with
L of the N documents loaded a cluster of n documents has been found with probability
p = 1 - C(N - L, n) / C(N, n). Each cluster found stands for 1/p clusters like it
(Horvitz-Thompson): estimate = sum over found clusters of (duplicates in it) / p. It is unbiased
when the assignment to sub-collections is random, which is why it is.

The pairs returned do not depend on m or on the seed: duplicates are paired with the smallest
document of their cluster, near pairs are between the smallest documents of two clusters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from neardup._types import BOOL, F64, I64, U64
from neardup.cluster.unionfind import components
from neardup.overlap.phases import PhaseMeter

__all__ = ["Growth", "ParagraphSets", "exact_matches", "find_paragraph_pairs", "found_probability",
           "iteration_parts"]

BLOCK = 1 << 22


@dataclass(frozen=True, slots=True)
class ParagraphSets:
    """Documents 0..n-1: their keys (sorted within each document, CSR), multiset hashes and
    weights."""

    flat: U64
    offsets: I64
    multiset: U64
    weights: I64

    def __len__(self) -> int:
        return int(self.multiset.size)

    @property
    def sizes(self) -> I64:
        return np.diff(self.offsets)

    def keys_of(self, docs: I64) -> tuple[U64, I64]:
        """The keys of ``docs`` concatenated, and the document of each key."""
        sizes = self.sizes[docs]
        starts = np.repeat(self.offsets[docs], sizes)
        within = np.arange(starts.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        return self.flat[starts + within], np.repeat(docs, sizes)


@dataclass(slots=True)
class Growth:
    """What the iterations found so far, and the records written after each."""

    exact: list[tuple[I64, I64]] = field(default_factory=list)
    near: list[tuple[I64, I64, I64]] = field(default_factory=list)
    records: list[dict[str, object]] = field(default_factory=list)

    def exact_pairs(self) -> tuple[I64, I64]:
        if not self.exact:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return (np.concatenate([a for a, _ in self.exact]),
                np.concatenate([b for _, b in self.exact]))

    def near_pairs(self) -> tuple[I64, I64, I64]:
        if not self.near:
            return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
        return tuple(np.concatenate([t[k] for t in self.near]) for k in range(3))  # type: ignore[return-value]


def iteration_parts(count: int, parts: int, seed: int) -> I64:
    """A random sub-collection for every document, the sub-collections of equal sizes."""
    order = np.random.default_rng(seed).permutation(count)
    part = np.empty(count, dtype=np.int64)
    part[order] = np.arange(count, dtype=np.int64) * parts // max(count, 1)
    return part


def exact_matches(multiset: U64, loaded: I64, probes: I64) -> tuple[I64, I64]:
    """(x, y): probe y has the multiset of loaded x, the first loaded document with it; y != x."""
    order = np.lexsort((loaded, multiset[loaded]))
    keys, docs = multiset[loaded][order], loaded[order]
    first = np.ones(keys.size, dtype=np.bool_)
    first[1:] = keys[1:] != keys[:-1]
    keys, docs = keys[first], docs[first]
    at = np.minimum(np.searchsorted(keys, multiset[probes]), max(keys.size - 1, 0))
    hit = (keys[at] == multiset[probes]) if keys.size else np.zeros(probes.size, np.bool_)
    x, y = docs[at[hit]], probes[hit]
    return x[x != y], y[x != y]


def _blocks(matches_per_doc: I64) -> list[tuple[int, int]]:
    """Ranges of consecutive probe documents holding about BLOCK matches each."""
    ends = np.cumsum(matches_per_doc)
    bounds, start, size = [], 0, matches_per_doc.size
    while start < size:
        base = ends[start - 1] if start else 0
        stop = max(int(np.searchsorted(ends, base + BLOCK, side="right")), start + 1)
        bounds.append((start, min(stop, size)))
        start = stop
    return bounds


def _count_block(table_keys: U64, table_docs: I64, probe_keys: U64, probe_docs: I64
                 ) -> tuple[I64, I64, I64]:
    """(probe, table doc, shared keys) for every pair with a shared key, probe != table doc."""
    low = np.searchsorted(table_keys, probe_keys, side="left")
    count = np.searchsorted(table_keys, probe_keys, side="right") - low
    rows = np.repeat(np.arange(probe_keys.size), count)
    within = np.arange(rows.size) - np.repeat(np.cumsum(count) - count, count)
    y, x = probe_docs[rows], table_docs[low[rows] + within]
    keys = (y.astype(np.uint64) << np.uint64(32)) | x.astype(np.uint64)
    keys = np.sort(keys[x != y])
    first = np.flatnonzero(np.diff(keys, prepend=~keys[:1]) != 0) if keys.size else rows[:0]
    shared = np.diff(np.append(first, keys.size))
    keys = keys[first]
    return ((keys >> np.uint64(32)).astype(np.int64),
            (keys & np.uint64(0xFFFFFFFF)).astype(np.int64), shared.astype(np.int64))


def _near_matches(sets: ParagraphSets, table: I64, probes: I64, level: int
                  ) -> tuple[I64, I64, I64]:
    """Pairs (probe, table doc, shared) sharing at least ``level``% of both documents' keys."""
    table_keys, table_docs = sets.keys_of(table)
    order = np.argsort(table_keys)
    table_keys, table_docs = table_keys[order], table_docs[order]
    probe_keys, probe_docs = sets.keys_of(probes)
    matches = (np.searchsorted(table_keys, probe_keys, side="right")
               - np.searchsorted(table_keys, probe_keys, side="left"))
    per_doc = np.bincount(np.repeat(np.arange(probes.size), sets.sizes[probes]), matches,
                          minlength=probes.size).astype(np.int64)
    key_start = np.concatenate([[0], np.cumsum(sets.sizes[probes])])
    found = []
    sizes = sets.sizes
    for start, stop in _blocks(per_doc):
        keys = slice(key_start[start], key_start[stop])
        y, x, shared = _count_block(table_keys, table_docs, probe_keys[keys], probe_docs[keys])
        keep = 100 * shared >= level * np.maximum(sizes[x], sizes[y])
        found.append((y[keep], x[keep], shared[keep]))
    if not found:
        return np.empty(0, np.int64), np.empty(0, np.int64), np.empty(0, np.int64)
    return tuple(np.concatenate([f[k] for f in found]) for k in range(3))  # type: ignore[return-value]


def _found_clusters(count: int, pairs: tuple[I64, I64], weights: I64, loaded: BOOL
                    ) -> tuple[I64, I64, I64]:
    """The clusters found so far (components holding a loaded document and more than one
    weighted document): their labels, weights and sizes in documents of the collection."""
    label = components(count, *pairs)
    found = np.zeros(count, dtype=np.bool_)
    found[label[loaded]] = True
    weight = np.bincount(label, weights, minlength=count).astype(np.int64)
    size = np.bincount(label, minlength=count).astype(np.int64)
    roots = np.flatnonzero(found & (weight > 1))
    return roots, weight[roots], size[roots]


def found_probability(count: int, processed: int, sizes: I64) -> F64:
    """The probability that a random set of ``processed`` of ``count`` documents holds at least
    one member of a cluster of each of ``sizes``: ``1 - C(n - s, k) / C(n, k)``."""
    largest = int(sizes.max()) if sizes.size else 0
    steps = (count - processed - np.arange(largest)) / (count - np.arange(largest))
    missed = np.concatenate([[1.0], np.cumprod(np.clip(steps, 0.0, None))])
    return np.asarray(1.0 - missed[sizes], dtype=np.float64)


def _record(sets: ParagraphSets, growth: Growth, part: I64, iteration: int,
            probed: int) -> dict[str, object]:
    count = len(sets)
    loaded = part <= iteration
    roots, weight, size = _found_clusters(count, growth.exact_pairs(), sets.weights, loaded)
    a, b, _ = growth.near_pairs()
    exact_a, exact_b = growth.exact_pairs()
    near_roots, near_weight, _ = _found_clusters(
        count, (np.concatenate([exact_a, a]), np.concatenate([exact_b, b])), sets.weights, loaded)
    chance = found_probability(count, int(loaded.sum()), size)
    return {"iteration": iteration + 1,
            "documents_loaded": int(sets.weights[loaded].sum()), "documents_probed": probed,
            "clusters": int(roots.size), "duplicates": int(np.sum(weight - 1)),
            "near_clusters": int(near_roots.size),
            "near_duplicates": int(np.sum(near_weight - 1)),
            "estimated_duplicates": round(float(np.sum((weight - 1) / chance)), 1)}


def _iterate(sets: ParagraphSets, level: int, part: I64, iteration: int, duplicate: BOOL,
             remaining: BOOL, growth: Growth) -> None:
    """One iteration: load S_i, probe with the rest of C, then C <- C - S_i."""
    member = part == iteration
    loaded = np.flatnonzero(member & ~duplicate)
    probes = np.flatnonzero(remaining & ~duplicate)
    x, y = exact_matches(sets.multiset, loaded, probes)
    duplicate[y] = True
    growth.exact.append((x, y))
    if level < 100 and loaded.size:
        growth.near.append(_near_matches(sets, loaded[~duplicate[loaded]],
                                         probes[~duplicate[probes]], level))
    remaining[member] = False


def _normalised(sets: ParagraphSets, growth: Growth) -> tuple[I64, I64, I64]:
    """The pairs, independent of the sub-collections: every duplicate with the smallest document
    of its cluster, near pairs between the smallest documents of two clusters."""
    count = len(sets)
    label = components(count, *growth.exact_pairs())
    members = np.flatnonzero(label != np.arange(count))
    a, b, shared = growth.near_pairs()
    low, high = np.minimum(label[a], label[b]), np.maximum(label[a], label[b])
    keys = (low.astype(np.uint64) << np.uint64(32)) | high.astype(np.uint64)
    keys, first = np.unique(keys[low != high], return_index=True)
    near_shared = shared[low != high][first]
    return (np.concatenate([label[members], (keys >> np.uint64(32)).astype(np.int64)]),
            np.concatenate([members, (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)]),
            np.concatenate([sets.sizes[members], near_shared]))


def find_paragraph_pairs(sets: ParagraphSets, level: int, iterations: int, seed: int
                         ) -> tuple[I64, I64, I64, list[dict[str, object]]]:
    """Pairs (a, b, shared shingle paragraphs), a < b, and the growth record of each iteration
    (with its wall seconds and the peak memory of its tables, ``peak_bytes``)."""
    count = len(sets)
    part = iteration_parts(count, iterations, seed)
    duplicate = np.zeros(count, dtype=np.bool_)
    remaining = np.ones(count, dtype=np.bool_)
    growth = Growth()
    with PhaseMeter() as log:
        for iteration in range(iterations):
            probed = int(sets.weights[remaining].sum())
            with log.phase(str(iteration)):
                _iterate(sets, level, part, iteration, duplicate, remaining, growth)
            times = log.phases[str(iteration)]
            growth.records.append({**_record(sets, growth, part, iteration, probed),
                                   "wall_seconds": times["wall_seconds"],
                                   "peak_bytes": times["peak_bytes"]})
    a, b, shared = _normalised(sets, growth)
    return a, b, shared, growth.records
