"""Method ``chunks`` out of core: S&GM's FPrint-DocID relation and Overlap table on disk.

Each survivor's chunk fingerprints (without the chunks its host repeats, when templates are on)
become (fprint, doc) rows routed by fingerprint; fingerprints held by more than ``drop_common``
documents are dropped; the pairs of each fingerprint are counted out of core
(:mod:`neardup.engine.counting`) and every pair sharing at least T chunks is a candidate, with
its count in ``shared``: the Overlap table of the in-memory sort-based join (coarse counting,
S&GM's alternative, finds the same table; here the sort-based join computes it either way).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from neardup.config import DedupConfig
from neardup.engine.buckets import BucketWriter, bucket_count, spread
from neardup.engine.catalog import Catalog
from neardup.engine.counting import count_shared, shared_counts
from neardup.engine.keys import KEYED, chunk_rows
from neardup.engine.scoring import found_rows
from neardup.engine.survivors import survivor_features
from neardup.engine.templates import host_keys
from neardup.features.templates import prune
from neardup.overlap.phases import PhaseMeter

__all__ = ["chunks_found"]

U32 = npt.NDArray[np.uint32]
U64 = npt.NDArray[np.uint64]


def _chunk_set(feature: object, name: str) -> U32:
    if feature is None:
        return np.empty(0, dtype=np.uint32)
    if not isinstance(feature, np.ndarray):
        raise TypeError(f"document {name!r} has no chunk fingerprints")
    return feature.astype(np.uint32, copy=False)


def _route(catalog: Catalog, survivors: npt.NDArray[np.bool_], templates: dict[int, U64],
           writer: BucketWriter) -> int:
    """Route every survivor's (fprint, doc) rows; returns the documents with chunks."""
    with_chunks = 0
    for chunk in survivor_features(catalog, survivors):
        sets = [_chunk_set(f, str(doc)) for f, doc in zip(chunk.features, chunk.docs.tolist(),
                                                          strict=True)]
        if templates:
            keys = host_keys(chunk.part)[0][chunk.local].tolist()
            sets = [prune(s.astype(np.uint64), templates.get(int(key))).astype(np.uint32)
                    if int(key) in templates else s for s, key in zip(sets, keys, strict=True)]
        with_chunks += sum(s.size > 0 for s in sets)
        rows = chunk_rows(sets, chunk.docs)
        writer.add(rows, spread(rows["key"]))
    writer.close()
    return with_chunks


def chunks_found(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                 templates: dict[int, U64], folder: Path,
                 budget: int) -> tuple[Path, int, dict[str, object]]:
    """Write the pairs sharing at least T chunks to ``folder/found.bin``; returns the path, the
    number of pairs (candidates) and the method's parameters."""
    meter = PhaseMeter(trace=False)
    stored = sum((part.folder / "features.pkl").stat().st_size for part in catalog.parts)
    writer = BucketWriter(folder / "fprints", bucket_count(8 * stored, budget), KEYED)
    with meter.phase("fprint_docid"):
        with_chunks = _route(catalog, survivors, templates, writer)
    limit = config.overlap.drop_common or 0
    threshold = config.overlap.threshold(config.chunks)
    with meter.phase("expand_sort_runs"):
        pairs, counts = count_shared(writer, folder / "pairs", budget, limit)
    found, total = folder / "found.bin", 0
    with meter.phase("merge_count"), open(found, "wb") as out:
        for a, b, shared in shared_counts(pairs, threshold):
            out.write(found_rows(a, b, shared).tobytes())
            total += int(a.size)
    meter.phases["expand_sort_runs"]["pairs_expanded"] = counts.triplets
    meter.phases["merge_count"]["candidates"] = total
    parameters: dict[str, object] = {
        "chunk": config.chunks.spec, "min_shared": threshold,
        "algorithm": config.overlap.algorithm, "documents_with_chunks": with_chunks,
        "fprint_docid_rows": writer.rows,
        "drop_common": {"limit": config.overlap.drop_common,
                        "chunks_dropped": int(counts.dropped_keys.size),
                        "rows_dropped": counts.dropped_entries},
        "overlap_pairs": total, "phases": meter.phases,
    }
    return found, total, parameters
