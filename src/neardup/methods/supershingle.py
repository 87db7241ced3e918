"""The ``supershingle`` method (Broder et al.): documents sharing a super-shingle, a hash of
``supershingle_size`` consecutive sketch values, are candidates; each pair carries the sketch
estimate and is verified on the shingle sets.

It shares the sketch machinery of :mod:`.sketch` (features, sketch-equivalence, the phases and
verification); only the selection of pairs and the parameters differ.
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64, I64
from neardup.config import DedupConfig, MethodSpec, SketchMethod
from neardup.config.checks import require
from neardup.fingerprints.sketch_pairs import pair_estimates
from neardup.fingerprints.supershingle import supershingles
from neardup.methods.joins import SketchCounts
from neardup.methods.scoring import Rule, ScoredPairs, Scorer
from neardup.methods.sketch import (
    SketchFeatures,
    SketchFound,
    document_sketches,
    phase_counts,
    sketch_arrays,
    sketch_features,
)
from neardup.methods.unit import FeatureExtractor, NearMethod
from neardup.overlap.phases import PhaseMeter

__all__ = ["SPEC", "UNIT", "shared_supershingles", "supershingle_features"]


def supershingle_features(config: DedupConfig) -> FeatureExtractor[SketchFeatures]:
    """The sketch extractor, with the super-shingles of each sketch."""
    return sketch_features(config, config.of(SketchMethod).supershingle_size)


def _select(config: DedupConfig, chosen: list[SketchFeatures], lengths: I64, meter: PhaseMeter,
            stats: dict[str, object]) -> SketchFound:
    supers = [f.supershingles if f.supershingles is not None else np.empty(0, np.uint64)
              for f in chosen]
    method = config.of(SketchMethod)
    _, shared = phase_counts(meter, supers, method.drop_common, stats)
    with meter.phase("estimates"):
        flat, offsets, moduli = sketch_arrays(chosen)
        r, _, _ = pair_estimates(flat, offsets, moduli, shared.a, shared.b, method.sketch)
    return SketchFound(shared.a, shared.b, r, shared.count, "near", int(shared.a.size))


def shared_supershingles(documents: ScoredPairs, config: DedupConfig) -> F64:
    """The number of super-shingles the two documents have in common."""
    method = config.of(SketchMethod)
    size, seed = method.supershingle_size, method.sketch.seed
    supers = [supershingles(sketch, size, seed) for sketch, _ in
              document_sketches(documents, config)]
    view = documents.text
    return np.array([
        np.intersect1d(supers[i], supers[j], assume_unique=True).size
        for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
        dtype=np.float64)


def _supershingle_check(config: DedupConfig) -> None:
    adaptive = config.of(SketchMethod).sketch.adaptive
    require(adaptive == 0, "sketch.adaptive", adaptive,
            "super-shingles need one modulus for every document")


def _tags(config: DedupConfig) -> dict[str, str]:
    method = config.of(SketchMethod)
    return {"sketch": method.sketch.tag,
            "supershingle": f"supershingle:n{method.supershingle_size}"}


SPEC = MethodSpec("supershingle", _tags, check=_supershingle_check, params=SketchMethod)
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT: NearMethod[SketchFeatures] = NearMethod(
    join=SketchCounts(supershingles=True),
    spec=SPEC, features=supershingle_features,
    verification="a shared super-shingle, then resemblance >= the floor",
    scorer=Scorer("supershingle", shared_supershingles,
                  Rule("shared super-shingles", "n", integral=True, default=1.0),
                  summary="super-shingles (DedupConfig.supershingle_size sketch values) in "
                          "common"))
