"""Pereira, Baeza-Yates & Ziviani's iterations out of core: each sub-collection joined with
the rest of the collection through bucketed key files.

The collection is held as a few numpy columns per eligible document (multiset hash, size,
weight, sub-collection, two flags and two union-find forests: about 60 bytes a document, no
Python object per document); the shingle-paragraph keys stay on disk as
:data:`neardup.engine.keys.KEYED` rows routed by key. Iteration i does what
:func:`neardup.overlap.iterative.find_paragraph_pairs` does, with the same seeded draw of the
sub-collections:

- duplicates: the multisets of S_i's documents against those of the documents still in C (one
  sort of a column);
- near-duplicates (level below 100): every key bucket is read alone, its rows of S_i form the
  table and its rows of C the probes; the (probe, table doc) pair of each shared key goes to
  pair buckets routed by the probe, a piece of at most ``PIECE`` pairs at a time, and each pair
  bucket is counted alone (:func:`neardup.engine.counting.shared_counts`); the pairs at the
  level are appended, with their iteration, to ``near.bin``. The key rows of documents that can
  no longer be loaded or probed are dropped on the way (the key files shrink every iteration);
- the growth record, from the two forests (exact pairs; exact and near pairs), whose smallest
  member labels equal those of the in-memory components.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

from neardup._types import BOOL, I64, U64
from neardup.cluster.unionfind import flatten, union_into
from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket, spread
from neardup.engine.counting import PAIR, PIECE, shared_counts
from neardup.engine.keys import KEYED
from neardup.overlap.iterative import exact_matches, found_probability, iteration_parts
from neardup.overlap.phases import PhaseMeter

__all__ = ["NEAR", "Collection", "iterate"]

NEAR = np.dtype([("iteration", "<i8"), ("y", "<i8"), ("x", "<i8"), ("shared", "<i8")])
"""A near pair of an iteration: probe y, table doc x, their shared shingle paragraphs."""


@dataclass(slots=True)
class Collection:
    """The eligible documents 0..n-1 (columns) and their keys on disk."""

    sizes: I64
    multiset: U64
    weights: I64
    keys: BucketWriter

    def __len__(self) -> int:
        return int(self.sizes.size)


@dataclass(slots=True)
class _State:
    part: I64
    duplicate: BOOL
    remaining: BOOL
    exact: I64
    near: I64

    @staticmethod
    def start(count: int, iterations: int, seed: int) -> _State:
        return _State(iteration_parts(count, iterations, seed), np.zeros(count, dtype=np.bool_),
                      np.ones(count, dtype=np.bool_), np.arange(count, dtype=np.int64),
                      np.arange(count, dtype=np.int64))


def _pieces(counts: I64) -> Iterator[tuple[int, int]]:
    """Ranges of probe rows with about ``PIECE`` matches each (at least one row)."""
    ends = np.cumsum(counts)
    start = 0
    while start < counts.size:
        base = int(ends[start - 1]) if start else 0
        stop = max(int(np.searchsorted(ends, base + PIECE, side="right")), start + 1)
        yield start, min(stop, counts.size)
        start = stop


def _bucket_pairs(rows: npt.NDArray[Any], table: BOOL, probe: BOOL) -> Iterator[tuple[I64, I64]]:
    """(probe doc, table doc) of every key the two share in one key bucket, in pieces."""
    held = rows[table[rows["doc"]]]
    held = held[np.argsort(held["key"], kind="stable")]
    keys, docs = held["key"], held["doc"]
    asked = rows[probe[rows["doc"]]]
    low = np.searchsorted(keys, asked["key"], side="left")
    counts = (np.searchsorted(keys, asked["key"], side="right") - low).astype(np.int64)
    for start, stop in _pieces(counts):
        count = counts[start:stop]
        at = np.repeat(np.arange(start, stop), count)
        within = np.arange(at.size) - np.repeat(np.cumsum(count) - count, count)
        y, x = asked["doc"][at], docs[low[at] + within]
        yield y[x != y], x[x != y]


def _matches(keys: BucketWriter, table: BOOL, probe: BOOL) -> int:
    """The number of (probe key, table key) matches over every key bucket."""
    total = 0
    for bucket in range(keys.count):
        rows = read_bucket(keys.folder, bucket, KEYED)
        held = np.sort(rows["key"][table[rows["doc"]]])
        asked = rows["key"][probe[rows["doc"]]]
        total += int(np.sum(np.searchsorted(held, asked, side="right")
                            - np.searchsorted(held, asked, side="left")))
    return total


def _join(collection: Collection, table: BOOL, probe: BOOL, live: BOOL, folder: Path,
          budget: int) -> tuple[BucketWriter, BucketWriter]:
    """The shared-key pairs bucketed by probe, and the key rows of the ``live`` documents."""
    total = _matches(collection.keys, table, probe)
    pairs = BucketWriter(folder / "pairs", bucket_count(3 * total * PAIR.itemsize, budget), PAIR)
    kept = BucketWriter(folder / "keys", collection.keys.count, KEYED)
    for bucket in range(collection.keys.count):
        rows = read_bucket(collection.keys.folder, bucket, KEYED)
        for y, x in _bucket_pairs(rows, table, probe):
            out = np.empty(y.size, dtype=PAIR)
            out["a"], out["b"] = y, x
            pairs.add(out, spread(y))
        rows = rows[live[rows["doc"]]]
        kept.add(rows, spread(rows["key"]))
    pairs.close()
    kept.close()
    return pairs, kept


def _near(collection: Collection, state: _State, iteration: int, loaded: I64, probes: I64,
          level: int, folder: Path, budget: int, out: BinaryIO) -> None:
    """The near pairs of one iteration, appended to ``out``; the key files shrink to the
    documents still to be loaded or probed."""
    count = len(collection)
    table, probe = np.zeros(count, dtype=np.bool_), np.zeros(count, dtype=np.bool_)
    table[loaded[~state.duplicate[loaded]]] = True
    probe[probes[~state.duplicate[probes]]] = True
    live = state.remaining & (state.part != iteration) & ~state.duplicate
    pairs, kept = _join(collection, table, probe, live, folder / "join", budget)
    sizes = collection.sizes
    for y, x, shared in shared_counts(pairs):
        keep = 100 * shared >= level * np.maximum(sizes[x], sizes[y])
        rows = np.empty(int(keep.sum()), dtype=NEAR)
        rows["iteration"], rows["y"], rows["x"], rows["shared"] = (iteration, y[keep], x[keep],
                                                                    shared[keep])
        out.write(rows.tobytes())
        union_into(state.near, y[keep], x[keep])
    shutil.rmtree(pairs.folder)
    shutil.rmtree(collection.keys.folder)
    kept.folder.rename(collection.keys.folder)
    collection.keys = BucketWriter(collection.keys.folder, kept.count, KEYED)


def _clusters(labels: I64, weights: I64, loaded: BOOL) -> tuple[I64, I64, I64]:
    """As :func:`neardup.overlap.iterative._found_clusters`, from smallest member labels."""
    count = labels.size
    found = np.zeros(count, dtype=np.bool_)
    found[labels[loaded]] = True
    weight = np.bincount(labels, weights, minlength=count).astype(np.int64)
    size = np.bincount(labels, minlength=count).astype(np.int64)
    roots = np.flatnonzero(found & (weight > 1))
    return roots, weight[roots], size[roots]


def _record(collection: Collection, state: _State, iteration: int,
            probed: int) -> dict[str, object]:
    loaded = state.part <= iteration
    weights = collection.weights
    flatten(state.exact)
    flatten(state.near)
    roots, weight, size = _clusters(state.exact, weights, loaded)
    near_roots, near_weight, _ = _clusters(state.near, weights, loaded)
    chance = found_probability(len(collection), int(loaded.sum()), size)
    return {"iteration": iteration + 1,
            "documents_loaded": int(weights[loaded].sum()), "documents_probed": probed,
            "clusters": int(roots.size), "duplicates": int(np.sum(weight - 1)),
            "near_clusters": int(near_roots.size),
            "near_duplicates": int(np.sum(near_weight - 1)),
            "estimated_duplicates": round(float(np.sum((weight - 1) / chance)), 1)}


def _iterate_once(collection: Collection, state: _State, iteration: int, level: int,
                  folder: Path, budget: int, out: BinaryIO) -> None:
    """Load S_i, probe with the rest of C (duplicates, then near pairs), C <- C - S_i."""
    member = state.part == iteration
    loaded = np.flatnonzero(member & ~state.duplicate)
    probes = np.flatnonzero(state.remaining & ~state.duplicate)
    x, y = exact_matches(collection.multiset, loaded, probes)
    state.duplicate[y] = True
    union_into(state.exact, x, y)
    union_into(state.near, x, y)
    if level < 100 and loaded.size:
        _near(collection, state, iteration, loaded, probes, level, folder, budget, out)
    state.remaining[member] = False


def iterate(collection: Collection, level: int, iterations: int, seed: int, folder: Path,
            budget: int) -> tuple[I64, list[dict[str, object]]]:
    """Run the iterations; the near pairs go to ``folder/near.bin`` (:data:`NEAR` rows).
    Returns each document's smallest exact-duplicate label and the growth records."""
    state = _State.start(len(collection), iterations, seed)
    records: list[dict[str, object]] = []
    with PhaseMeter() as log, open(folder / "near.bin", "wb") as out:
        for iteration in range(iterations):
            probed = int(collection.weights[state.remaining].sum())
            with log.phase(str(iteration)):
                _iterate_once(collection, state, iteration, level, folder, budget, out)
            times = log.phases[str(iteration)]
            records.append({**_record(collection, state, iteration, probed),
                            "wall_seconds": times["wall_seconds"],
                            "peak_bytes": times["peak_bytes"]})
    flatten(state.exact)
    return state.exact, records
