"""The ``sketch`` and ``supershingle`` near methods: Broder's clustering inside ``dedup``.

Phase 1 (per document, in the worker processes): the document's sketch (and, for
``supershingle``, its super-shingles). Then, over the documents that survive the spine's exact
levels (identical, lexically equivalent, equal 5-shingle sets):

- **sketch-equivalence**: documents with equal non-empty sketches (equal *selected* shingles, the
  paper's shingle-equivalence) are collapsed to their first member, paired with it (relation
  ``shingle-equivalent``, method ``sketch``) and join its cluster at the end;
- phase 2, shingle merging; very common shingles dropped; phase 3, ``(doc, doc, count)``
  (:mod:`neardup.cluster.broder`);
- phase 4: each pair's estimate from the sketches (:mod:`neardup.fingerprints.sketch_pairs`); pairs
  at or above the threshold are kept (``sketch``), or every pair sharing a super-shingle
  (``supershingle``, no counting). With ``relation="contained"`` each document is linked to the one
  document that contains the most of it (at least the threshold; ties: the longer container), so
  two unrelated pages quoting the same paragraph do not fall into one cluster.

Every kept pair is verified on the verify shingle sets (exact resemblance and containments); the
spine's union-find then forms the clusters. CPU time, wall time and peak traced memory of each
phase go to ``summary.json`` (``near.phases``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup._types import F64, I64, U64
from neardup.cluster.broder import (
    SharedCounts,
    ShingleRuns,
    count_shared,
    drop_common,
    expand_sorted,
    sketch_estimates,
)
from neardup.cluster.relations import RELATIONS, overlap_scores
from neardup.config import DedupConfig, method_spec
from neardup.document import Document
from neardup.fingerprints.exact import digest64
from neardup.fingerprints.sketch import Sketcher, estimate_resemblance
from neardup.fingerprints.supershingle import supershingles
from neardup.methods.pairs import Pairs, method_code
from neardup.methods.prints import Prints
from neardup.methods.scoring import UNIT_CURVE, Rule, ScoredPairs, Scorer
from neardup.methods.unit import FeatureExtractor, NearMethod, NearStage
from neardup.overlap.phases import PhaseMeter

__all__ = ["UNIT", "SketchFeatures", "SketchFound", "csr", "document_sketches", "find_sketch",
           "phase_counts", "run_sketches", "sketch_arrays", "sketch_estimates_of",
           "sketch_features"]


@dataclass(frozen=True, slots=True)
class SketchFeatures:
    """One document's sketch, its modulus (1 for MIN_s) and super-shingles (or None)."""

    sketch: U64
    modulus: int
    supershingles: U64 | None
    cpu_seconds: float


def sketch_features(config: DedupConfig, window: int = 0) -> FeatureExtractor[SketchFeatures]:
    """The per-document extractor of the sketch methods (runs in the worker processes): the
    sketch, and the super-shingles of ``window`` sketch values when ``window`` > 0."""
    sketcher = Sketcher(config.sketch)

    def extract(doc: Document, text: str, canonical: bytes) -> SketchFeatures:
        started = time.process_time()
        sketch, modulus = sketcher.with_modulus(sketcher.shingles_of(canonical))
        supers = supershingles(sketch, window, config.sketch.seed) if window else None
        return SketchFeatures(sketch, modulus, supers, time.process_time() - started)

    return extract


def csr(arrays: list[U64]) -> tuple[U64, I64]:
    """Sorted arrays concatenated, with their offsets."""
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([a.size for a in arrays], out=offsets[1:])
    flat = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.uint64)
    return flat.astype(np.uint64, copy=False), offsets


def _collapse_equal_sketches(features: list[SketchFeatures]) -> tuple[I64, I64, I64, int]:
    """(kept positions, representative, duplicate, groups) over documents with equal sketches."""
    keys = np.array([digest64(f.sketch.astype("<u8").tobytes() + f.modulus.to_bytes(8, "little"))
                     for f in features], dtype=np.uint64)
    nonempty = np.array([f.sketch.size > 0 for f in features], dtype=np.bool_)
    members = np.flatnonzero(nonempty).astype(np.int64)
    _, first, inverse, counts = np.unique(keys[members], return_index=True, return_inverse=True,
                                          return_counts=True)
    representative = members[first[inverse]]
    duplicate = representative != members
    kept = np.sort(np.concatenate([members[~duplicate], np.flatnonzero(~nonempty)]))
    return (kept.astype(np.int64), representative[duplicate], members[duplicate],
            int(np.count_nonzero(counts > 1)))


def phase_counts(meter: PhaseMeter, sets: list[U64], limit: int,
                  stats: dict[str, object]) -> tuple[ShingleRuns, SharedCounts]:
    """Phases 2 and 3 over ``sets``: the runs and the shared counts."""
    flat, offsets = csr(sets)
    with meter.phase("shingle_merging"):
        runs = drop_common(expand_sorted(flat, offsets), limit)
    with meter.phase("pair_formation_and_merging"):
        shared = count_shared(runs, len(sets))
    stats.update(entries=int(runs.values.size), dropped_shingles=runs.dropped_shingles,
                 dropped_entries=runs.dropped_entries, triplets=shared.triplets)
    return runs, shared


def sketch_arrays(chosen: list[SketchFeatures]) -> tuple[U64, I64, I64]:
    flat, offsets = csr([f.sketch for f in chosen])
    return flat, offsets, np.array([f.modulus for f in chosen], dtype=np.int64)


def _first_of_runs(*keys: I64) -> npt.NDArray[np.bool_]:
    """True at the first row of each run of equal keys (rows already sorted by them)."""
    change = np.zeros(keys[0].size, dtype=np.bool_)
    change[:1] = True
    for key in keys:
        change[1:] |= key[1:] != key[:-1]
    return change


def _best_containers(a: I64, b: I64, c_ab: F64, c_ba: F64, count: I64, threshold: float,
                     lengths: I64) -> tuple[I64, I64, F64, I64]:
    """For each document contained (>= threshold) in another, its one best container: the
    highest containment, then the longest container, then the first read. Returns the links as
    pairs (low, high) with the containment estimate and the shared count."""
    inner, outer = np.concatenate([a, b]), np.concatenate([b, a])
    score, shared = np.concatenate([c_ab, c_ba]), np.concatenate([count, count])
    ok = score >= threshold
    inner, outer, score, shared = inner[ok], outer[ok], score[ok], shared[ok]
    order = np.lexsort((outer, -lengths[outer], -score, inner))
    inner, outer, score, shared = inner[order], outer[order], score[order], shared[order]
    first = _first_of_runs(inner)
    low = np.minimum(inner, outer)[first]
    high = np.maximum(inner, outer)[first]
    score, shared = score[first], shared[first]
    order = np.lexsort((-score, high, low))  # a mutual link appears twice: keep its best row
    low, high, score, shared = low[order], high[order], score[order], shared[order]
    once = _first_of_runs(low, high)
    return low[once], high[once], score[once], shared[once]


@dataclass(frozen=True, slots=True)
class SketchFound:
    """Kept pairs in the positions of the chosen documents, before verification."""

    a: I64
    b: I64
    estimate: F64
    shared: I64
    relation: str
    candidates: int


def _select_sketch(config: DedupConfig, chosen: list[SketchFeatures], lengths: I64,
                   meter: PhaseMeter, stats: dict[str, object]) -> SketchFound:
    runs, shared = phase_counts(meter, [f.sketch for f in chosen], config.drop_common, stats)
    a, b, count = shared.a, shared.b, shared.count
    with meter.phase("estimates"):
        flat, offsets, moduli = sketch_arrays(chosen)
        r, c_ab, c_ba = sketch_estimates(flat, offsets, moduli, runs, shared, config.sketch)
        if config.relation == "contained":
            low, high, best, counts = _best_containers(a, b, c_ab, c_ba, count,
                                                       config.threshold, lengths)
            return SketchFound(low, high, best, counts, "contained", int(a.size))
        keep = r >= config.threshold
    return SketchFound(a[keep], b[keep], r[keep], count[keep], "near", int(a.size))


def _verified(config: DedupConfig, survivors: I64, prints: list[Prints[SketchFeatures]],
              a: I64, b: I64, estimate: F64, shared: I64, relation: I64) -> Pairs:
    flat, offsets = csr([prints[i].shingles for i in survivors.tolist()])
    resemblance, c_ab, c_ba = overlap_scores(flat, offsets, a, b)
    count = a.size
    return Pairs(a=survivors[a], b=survivors[b],
                 method=np.full(count, method_code(config.method), dtype=np.int8),
                 relation=relation.astype(np.int8), hamming=np.full(count, -1, dtype=np.int64),
                 estimate=estimate, resemblance=resemblance, containment_ab=c_ab,
                 containment_ba=c_ba, shared=shared)


def _passes(config: DedupConfig, pairs: Pairs) -> npt.NDArray[np.bool_]:
    """The verification rule on the exact scores: a ``contained`` link needs the exact
    containment of one document in the other at or above the threshold (not the estimate);
    every other pair (equal sketches included) the resemblance floor."""
    contained = pairs.relation == RELATIONS.index("contained")
    inside = np.maximum(pairs.containment_ab, pairs.containment_ba) >= config.threshold
    resembles = pairs.resemblance >= config.resemblance_floor
    return np.where(contained, inside, resembles)


def _features_of(prints: Prints[SketchFeatures]) -> SketchFeatures:
    if prints.features is None:
        raise TypeError(f"document {prints.id!r} has no sketch features")
    return prints.features


Select = Callable[[DedupConfig, list[SketchFeatures], I64, PhaseMeter, dict[str, object]],
                  SketchFound]
"""Phases 2 to 4 of a sketch method over the chosen documents' features and lengths."""


def run_sketches(config: DedupConfig, prints: list[Prints[SketchFeatures]],
                 survivors: I64, select: Select, parameters: dict[str, object]) -> NearStage:
    """Sketch-equivalence, then ``select``, then verification, each phase measured."""
    meter = PhaseMeter()
    features = [_features_of(prints[i]) for i in survivors.tolist()]
    meter.add("sketch", sum(p.features.cpu_seconds for p in prints if p.features is not None))
    with meter.phase("sketch_equivalence"):
        kept, rep, dup, groups = _collapse_equal_sketches(features)
    chosen = [features[i] for i in kept.tolist()]
    lengths = np.array([prints[i].tokens for i in survivors[kept].tolist()], dtype=np.int64)
    stats: dict[str, object] = {"sketch_equivalent_groups": groups,
                                "sketch_equivalent_collapsed": int(dup.size)}
    found = select(config, chosen, lengths, meter, stats)
    with meter.phase("verification"):
        sizes = np.array([f.sketch.size for f in features], dtype=np.int64)
        a = np.concatenate([rep, kept[found.a]])
        b = np.concatenate([dup, kept[found.b]])
        relation = np.concatenate([np.full(rep.size, RELATIONS.index("shingle-equivalent")),
                                   np.full(found.a.size, RELATIONS.index(found.relation))])
        pairs = _verified(config, survivors, prints, a, b,
                          np.concatenate([np.ones(rep.size), found.estimate]),
                          np.concatenate([sizes[rep], found.shared]), relation)
        passed = _passes(config, pairs)
        pairs = pairs.select(passed)
    kept_near = int(np.count_nonzero(passed[rep.size:]))
    return NearStage(pairs, found.candidates, found.candidates - kept_near,
                     {**parameters, **stats, "phases": meter.as_dict()})


def find_sketch(config: DedupConfig, prints: list[Prints[SketchFeatures]],
                survivors: I64) -> NearStage:
    """Broder's clustering over the sketches of the exact-level survivors (``--method sketch``)."""
    parameters: dict[str, object] = {"sketch": config.sketch.tag,
                                     "drop_common": config.drop_common,
                                     "threshold": config.threshold, "relation": config.relation}
    return run_sketches(config, prints, survivors, _select_sketch, parameters)


def document_sketches(documents: ScoredPairs, config: DedupConfig) -> list[tuple[U64, int]]:
    """Each distinct document's sketch and modulus (for the scorers)."""
    sketcher = Sketcher(config.sketch)
    return [sketcher.with_modulus(sketcher.shingles_of(tokens)) for tokens in documents.canonical]


def sketch_estimates_of(documents: ScoredPairs, config: DedupConfig) -> F64:
    """Broder's resemblance estimate from the two sketches (MOD pairs under the larger modulus)."""
    sketches, view = document_sketches(documents, config), documents.text
    adaptive = config.sketch.adaptive > 0
    return np.array([
        estimate_resemblance(sketches[i][0], sketches[j][0], config.sketch,
                             (sketches[i][1], sketches[j][1]) if adaptive else None)
        for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
        dtype=np.float64)


UNIT: NearMethod[SketchFeatures] = NearMethod(
    spec=method_spec("sketch"), find=find_sketch, features=sketch_features,
    verification="estimated resemblance (or containment) >= the threshold, then the exact "
                 "resemblance >= the floor (containment >= the threshold for contained links)",
    scorer=Scorer("sketch", sketch_estimates_of,
                  Rule("estimated resemblance", "t", curve=UNIT_CURVE,
                       default=method_spec("sketch").default_threshold),
                  summary="Broder's sketch estimate (DedupConfig.sketch: MOD_25 of 10-word "
                          "shingles)"))
