"""Method ``chunks`` out of core: S&GM's FPrint-DocID relation and Overlap table on disk.

Each survivor's chunk fingerprints (without the chunks its host repeats, when templates are on)
become (fprint, doc) rows routed by fingerprint; fingerprints held by more than ``drop_common``
documents are dropped; the pairs of each fingerprint are counted out of core
(:mod:`neardup.engine.counting`) and every pair sharing at least T chunks is a candidate, with
its count in ``shared``: S&GM's Overlap table. ``algorithm="sort"`` counts the pairs with the
external sort-based join (:mod:`neardup.engine.counting`, the expanded pairs spilled as sorted
runs); ``algorithm="coarse"`` with S&GM's probabilistic counting over the same fingerprint
buckets (:func:`neardup.overlap.coarse.coarse_overlap_of`: ``buckets`` counters and bitmaps in
memory, each scan reading the buckets again, no pair written but the candidates). Both give
the same table, pair for pair and count for count.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from neardup._types import U32, U64
from neardup.config import ChunkMethod, DedupConfig
from neardup.engine.buckets import BucketWriter, bucket_count, spread
from neardup.engine.catalog import Catalog
from neardup.engine.counting import (
    KeyCounts,
    count_shared,
    kept_runs,
    run_rows,
    shared_counts,
    sorted_keys,
)
from neardup.engine.keys import KEYED, chunk_rows
from neardup.engine.scoring import found_rows
from neardup.engine.survivors import survivor_features
from neardup.engine.templates import host_keys
from neardup.errors import ConfigError
from neardup.features.templates import prune
from neardup.overlap.coarse import coarse_overlap_of
from neardup.overlap.phases import PhaseMeter
from neardup.overlap.relation import ChunkRelation

__all__ = ["chunks_found"]



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


def _bucket_relations(writer: BucketWriter, documents: int, limit: int,
                      counts: KeyCounts) -> Iterator[ChunkRelation]:
    """Each fingerprint bucket as a sorted relation, without the fingerprints held by more than
    ``limit`` documents (the sort-based join's rule; counted on the first pass only)."""
    first = counts.entries == 0 and not counts.dropped
    for bucket in range(writer.count):
        rows = sorted_keys(writer.folder, bucket)
        starts, lengths = kept_runs(rows, limit, counts if first else None)
        if lengths.sum() < rows.size:
            rows = rows[run_rows(starts, lengths)]
        yield ChunkRelation(rows["key"].astype(np.uint32), rows["doc"].astype(np.uint32),
                            documents)


def _coarse_pairs(config: DedupConfig, writer: BucketWriter, documents: int, threshold: int,
                  out: BinaryIO) -> tuple[int, KeyCounts, dict[str, dict[str, object]]]:
    """Coarse counting over the fingerprint buckets; writes the found pairs to ``out``."""
    if documents >= 1 << 32:
        raise ConfigError(f"--algorithm coarse numbers documents in 32 bits; this run has "
                          f"{documents}: use --algorithm sort")
    counts, overlap_config = KeyCounts(), config.of(ChunkMethod).overlap
    overlap = coarse_overlap_of(
        lambda: _bucket_relations(writer, documents, overlap_config.drop_common or 0, counts),
        documents, threshold, overlap_config.buckets, overlap_config.hashes,
        overlap_config.pilot, overlap_config.seed)
    out.write(found_rows(overlap.a, overlap.b, overlap.shared).tobytes())
    return len(overlap), counts, overlap.phases


def _sorted_pairs(writer: BucketWriter, folder: Path, budget: int, limit: int, threshold: int,
                  out: BinaryIO, meter: PhaseMeter) -> tuple[int, KeyCounts]:
    """The sort-based join: every pair expanded, counted through sorted runs on disk."""
    with meter.phase("expand_sort_runs"):
        pairs, counts = count_shared(writer, folder / "pairs", budget, limit)
    total = 0
    with meter.phase("merge_count"):
        for a, b, shared in shared_counts(pairs, threshold):
            out.write(found_rows(a, b, shared).tobytes())
            total += int(a.size)
    meter.phases["expand_sort_runs"]["pairs_expanded"] = counts.triplets
    meter.phases["merge_count"]["candidates"] = total
    return total, counts


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
    method = config.of(ChunkMethod)
    limit = method.overlap.drop_common or 0
    threshold = method.overlap.threshold(method.chunks)
    found = folder / "found.bin"
    with open(found, "wb") as out:
        if method.overlap.algorithm == "coarse":
            total, counts, phases = _coarse_pairs(config, writer, catalog.documents, threshold,
                                                  out)
            meter.phases.update(phases)
        else:
            total, counts = _sorted_pairs(writer, folder, budget, limit, threshold, out, meter)
    parameters: dict[str, object] = {
        "chunk": method.chunks.spec, "min_shared": threshold,
        "algorithm": method.overlap.algorithm, "documents_with_chunks": with_chunks,
        "fprint_docid_rows": writer.rows,
        "drop_common": {"limit": method.overlap.drop_common,
                        "chunks_dropped": int(counts.dropped_keys.size),
                        "rows_dropped": counts.dropped_entries},
        "overlap_pairs": total, "phases": meter.phases,
    }
    return found, total, parameters
