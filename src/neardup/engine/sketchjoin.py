"""Methods ``sketch`` and ``supershingle`` out of core: Broder's clustering over bucket files.

The steps of :mod:`neardup.methods.sketch`, each a pass over partitions or buckets:

1. sketch equivalence: one (digest of the sketch, doc) row per survivor with a sketch, routed by
   the digest; each group of equal sketches pairs its members with its first document
   (``shingle-equivalent``) and the members leave the later steps; the sketches are stored per
   partition (:class:`neardup.engine.sketchstore.SketchStore`);
2. (sketch value, doc) rows, or (super-shingle, doc), of the remaining survivors, routed by
   value; values shared by more than ``drop_common`` documents dropped and counted; the
   per-pair shared counts aggregated out of core (:mod:`neardup.engine.counting`);
3. per bucket of pairs: the estimates from the two sketches (very common values left out for
   ``sketch``), pairs at or above the threshold kept; with ``relation="contained"`` each
   document's best container is chosen among the rows routed by that document
   (:mod:`neardup.engine.containers`).

The found pairs go to ``found.bin`` for verification (:mod:`neardup.engine.scoring`).
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from neardup._types import F64, I64, U64
from neardup.cluster.broder import without_values
from neardup.config import DedupConfig, SketchMethod
from neardup.engine.buckets import BucketWriter, bucket_count, spread
from neardup.engine.catalog import Catalog
from neardup.engine.containers import Containers
from neardup.engine.counting import KeyCounts, count_shared, shared_counts, sorted_keys, star_rows
from neardup.engine.keys import KEYED, equivalence_rows, supershingle_rows, value_rows
from neardup.engine.scoring import found_rows
from neardup.engine.sketchstore import SketchStore
from neardup.engine.survivors import survivor_features
from neardup.features.shingles import distinct
from neardup.fingerprints.sketch_pairs import mod_ratios, pair_estimates
from neardup.methods.joins import SketchCounts
from neardup.methods.sketch import SketchFeatures
from neardup.overlap.phases import PhaseMeter

__all__ = ["sketch_found"]



def _features(features: list[object], docs: I64) -> list[SketchFeatures]:
    for feature, doc in zip(features, docs.tolist(), strict=True):
        if not isinstance(feature, SketchFeatures):
            raise TypeError(f"document {doc} has no sketch features")
    return features  # type: ignore[return-value]


def _equivalence(catalog: Catalog, survivors: npt.NDArray[np.bool_], store: SketchStore,
                 folder: Path, budget: int, meter: PhaseMeter) -> BucketWriter:
    """Pass 1: store the sketches, route the equivalence rows; sums the sketching CPU."""
    count = int(survivors.sum())
    writer = BucketWriter(folder / "equal", bucket_count(count * KEYED.itemsize, budget), KEYED)
    cpu = 0.0
    for chunk in survivor_features(catalog, survivors):
        store.write(chunk.part, chunk.kept)
        cpu += sum(f.cpu_seconds for f in chunk.kept if isinstance(f, SketchFeatures))
        rows = equivalence_rows(_features(chunk.features, chunk.docs), chunk.docs)
        writer.add(rows, spread(rows["key"]))
    writer.close()
    meter.add("sketch", cpu)
    return writer


def _collapse(writer: BucketWriter, collapsed: npt.NDArray[np.bool_],
              out: BinaryIO) -> tuple[int, int]:
    """Pair each member of a group of equal sketches with the group's first document; mark the
    members collapsed. Returns (groups, members collapsed)."""
    groups = members = 0
    for bucket in range(writer.count):
        rows = sorted_keys(writer.folder, bucket)
        heads, others, runs = star_rows(rows)
        collapsed[rows["doc"][others]] = True
        out.write(found_rows(rows["doc"][heads], rows["doc"][others], rows["weight"][heads],
                             np.ones(others.size), "shingle-equivalent").tobytes())
        groups += runs
        members += int(others.size)
    return groups, members


def _values(join: SketchCounts, catalog: Catalog, chosen: npt.NDArray[np.bool_],
            entries: int, folder: Path, budget: int) -> BucketWriter:
    """Pass 2: (value, doc) rows of the documents left after the equivalence step."""
    writer = BucketWriter(folder / "values", bucket_count(entries * KEYED.itemsize, budget), KEYED)
    rows_of = supershingle_rows if join.supershingles else value_rows
    for chunk in survivor_features(catalog, chosen):
        rows = rows_of(_features(chunk.features, chunk.docs), chunk.docs)
        writer.add(rows, spread(rows["key"]))
    writer.close()
    return writer


def _estimates(config: DedupConfig, join: SketchCounts, store: SketchStore, dropped: U64,
               a: I64, b: I64, shared: I64) -> tuple[F64, F64, F64]:
    """r(a, b), c(a, b), c(b, a) of one bucket of pairs, as the in-memory phase 4 gives them."""
    sketch = config.of(SketchMethod).sketch
    docs = distinct(np.concatenate([a, b]))
    flat, offsets, moduli = store.gather(docs)
    i, j = np.searchsorted(docs, a), np.searchsorted(docs, b)
    if join.supershingles:
        return pair_estimates(flat, offsets, moduli, i, j, sketch)
    flat, offsets = without_values(flat, offsets, dropped)
    if sketch.kind == "mod" and not sketch.adaptive:
        sizes = np.diff(offsets)
        return mod_ratios(shared, sizes[i], sizes[j])
    return pair_estimates(flat, offsets, moduli, i, j, sketch)


def _select(config: DedupConfig, join: SketchCounts, catalog: Catalog, store: SketchStore,
            pairs: BucketWriter, counts: KeyCounts, folder: Path, budget: int,
            out: BinaryIO) -> int:
    """Pass 3: the kept pairs of each bucket to ``out``; returns the number of pairs counted."""
    candidates, dropped = 0, counts.dropped_keys
    containers = Containers(catalog, folder / "containers", counts.triplets, budget) \
        if config.relation == "contained" else None
    for a, b, shared in shared_counts(pairs):
        candidates += int(a.size)
        r, c_ab, c_ba = _estimates(config, join, store, dropped, a, b, shared)
        if containers is not None:
            containers.add(a, b, c_ab, c_ba, shared, config.threshold)
            continue
        keep = np.ones(a.size, np.bool_) if join.supershingles else r >= config.threshold
        out.write(found_rows(a[keep], b[keep], shared[keep], r[keep]).tobytes())
    if containers is not None:
        containers.write_best(out)
    return candidates


def sketch_found(config: DedupConfig, join: SketchCounts, catalog: Catalog,
                 survivors: npt.NDArray[np.bool_], folder: Path,
                 budget: int) -> tuple[Path, int, dict[str, object]]:
    """Write the equivalence pairs and the kept pairs to ``folder/found.bin``; returns the path,
    the number of pairs counted (candidates) and the method's parameters."""
    meter, method = PhaseMeter(trace=False), config.of(SketchMethod)
    store = SketchStore(folder / "sketches", catalog)
    collapsed = np.zeros(survivors.size, dtype=np.bool_)
    found = folder / "found.bin"
    with open(found, "wb") as out:
        with meter.phase("sketch_equivalence"):
            equal = _equivalence(catalog, survivors, store, folder, budget, meter)
            groups, members = _collapse(equal, collapsed, out)
        with meter.phase("shingle_merging"):
            values = _values(join, catalog, survivors & ~collapsed, store.entries, folder,
                             budget)
        with meter.phase("pair_formation_and_merging"):
            pairs, counts = count_shared(values, folder / "pairs", budget, method.drop_common)
        with meter.phase("estimates"):
            candidates = _select(config, join, catalog, store, pairs, counts, folder, budget,
                                 out)
    parameters: dict[str, object] = {
        "sketch": method.sketch.tag, "drop_common": method.drop_common,
        "sketch_equivalent_groups": groups, "sketch_equivalent_collapsed": members,
        "entries": counts.entries, "dropped_shingles": int(counts.dropped_keys.size),
        "dropped_entries": counts.dropped_entries, "triplets": counts.triplets,
        "phases": meter.as_dict()}
    if join.supershingles:
        parameters["supershingle_size"] = method.supershingle_size
    else:
        parameters.update(threshold=config.threshold, relation=config.relation)
    return found, candidates, parameters
