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
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup._types import F64, I64, U64
from neardup.config import DedupConfig, MethodSpec, SketchMethod
from neardup.config.checks import require
from neardup.document import Document
from neardup.fingerprints.sketch import Sketcher, estimate_resemblance
from neardup.fingerprints.supershingle import supershingles
from neardup.methods.joins import SketchCounts
from neardup.methods.scoring import UNIT_CURVE, Rule, ScoredPairs, Scorer
from neardup.methods.unit import FeatureExtractor, NearMethod
from neardup.overlap.phases import PhaseMeter

if TYPE_CHECKING:
    from neardup.cluster.broder import SharedCounts, ShingleRuns

__all__ = ["SPEC", "UNIT", "SketchFeatures", "SketchFound", "csr", "document_sketches",
           "phase_counts", "sketch_arrays", "sketch_estimates_of",
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
    sketcher = Sketcher(config.of(SketchMethod).sketch)
    seed = config.of(SketchMethod).sketch.seed

    def extract(doc: Document, text: str, canonical: bytes) -> SketchFeatures:
        started = time.process_time()
        sketch, modulus = sketcher.with_modulus(sketcher.shingles_of(canonical))
        supers = supershingles(sketch, window, seed) if window else None
        return SketchFeatures(sketch, modulus, supers, time.process_time() - started)

    return extract


def csr(arrays: list[U64]) -> tuple[U64, I64]:
    """Sorted arrays concatenated, with their offsets."""
    offsets = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum([a.size for a in arrays], out=offsets[1:])
    flat = np.concatenate(arrays) if arrays else np.empty(0, dtype=np.uint64)
    return flat.astype(np.uint64, copy=False), offsets


def phase_counts(meter: PhaseMeter, sets: list[U64], limit: int,
                  stats: dict[str, object]) -> tuple[ShingleRuns, SharedCounts]:
    """Phases 2 and 3 over ``sets``: the runs and the shared counts."""
    from neardup.cluster.broder import count_shared, drop_common, expand_sorted

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


@dataclass(frozen=True, slots=True)
class SketchFound:
    """Kept pairs in the positions of the chosen documents, before verification."""

    a: I64
    b: I64
    estimate: F64
    shared: I64
    relation: str
    candidates: int


Select = Callable[[DedupConfig, list[SketchFeatures], I64, PhaseMeter, dict[str, object]],
                  SketchFound]
"""Phases 2 to 4 of a sketch method over the chosen documents' features and lengths."""


def document_sketches(documents: ScoredPairs, config: DedupConfig) -> list[tuple[U64, int]]:
    """Each distinct document's sketch and modulus (for the scorers)."""
    sketcher = Sketcher(config.of(SketchMethod).sketch)
    return [sketcher.with_modulus(sketcher.shingles_of(tokens)) for tokens in documents.canonical]


def sketch_estimates_of(documents: ScoredPairs, config: DedupConfig) -> F64:
    """Broder's resemblance estimate from the two sketches (MOD pairs under the larger modulus)."""
    sketches, view = document_sketches(documents, config), documents.text
    adaptive = config.of(SketchMethod).sketch.adaptive > 0
    return np.array([
        estimate_resemblance(sketches[i][0], sketches[j][0], config.of(SketchMethod).sketch,
                             (sketches[i][1], sketches[j][1]) if adaptive else None)
        for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
        dtype=np.float64)


def _sketch_check(config: DedupConfig) -> None:
    if config.relation == "contained":
        require(config.of(SketchMethod).sketch.kind == "mod", "relation", config.relation,
                "needs method 'sketch' with MOD sketches (containment)")


SPEC = MethodSpec("sketch", lambda c: {"sketch": c.of(SketchMethod).sketch.tag}, threshold=True,
                  default_threshold=0.5, estimates=True, containment=True,
                  check=_sketch_check, params=SketchMethod)
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[SketchFeatures] = NearMethod(
    join=SketchCounts(),
    spec=SPEC, features=sketch_features,
    verification="estimated resemblance (or containment) >= the threshold, then the exact "
                 "resemblance >= the floor (containment >= the threshold for contained links)",
    scorer=Scorer("sketch", sketch_estimates_of,
                  Rule("estimated resemblance", "t", curve=UNIT_CURVE,
                       default=SPEC.default_threshold),
                  summary="Broder's sketch estimate (DedupConfig.sketch: MOD_25 of 10-word "
                          "shingles)"))
