"""Method ``shingle-paragraphs`` out of core: Pereira, Baeza-Yates & Ziviani in the engine.

1. **Collection**: the survivors' shingle-paragraph prints are read one partition at a time;
   each survivor with shingle paragraphs becomes eligible document k (in doc order) with its
   number of keys, its multiset hash and its weight, and its keys go to bucket files as
   ``(key, k)`` rows routed by key. The weight of a survivor is the size of its exact-level group
   (revisits left out), counted from the exact stage's pair file with a union-find over the doc
   numbers, as :func:`neardup.methods.paragraphs.exact_weights` counts it in memory.
2. **Iterations** (:mod:`neardup.engine.paragraphiter`): the same seeded sub-collections, the
   same duplicates, near pairs and growth records as :mod:`neardup.overlap.iterative`.
3. **Pairs**: every duplicate with the smallest document of its cluster; every near pair between
   the smallest documents of two clusters, once, with the shared count of its first finding (in
   iteration, probe, table-doc order, as the in-memory ``np.unique`` keeps it). Near pairs are
   routed by ranges of their first cluster to buckets, each reduced alone. The pairs are then
   verified on the content sets (:func:`neardup.engine.scoring.score_found`).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.cluster.relations import RELATIONS
from neardup.cluster.unionfind import flatten, union_into
from neardup.config import DedupConfig, ParagraphConfig
from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket, spread
from neardup.engine.catalog import Catalog
from neardup.engine.clusters import pair_blocks
from neardup.engine.keys import KEYED, keyed
from neardup.engine.paragraphiter import NEAR, Collection, iterate
from neardup.engine.scoring import found_rows, resemblance_rule, score_found
from neardup.engine.survivors import survivor_features
from neardup.engine.templates import ContentReader
from neardup.fingerprints.paragraphprint import ParagraphPrint
from neardup.methods.paragraphs import paragraph_parameters
from neardup.store.durable import sync

__all__ = ["paragraphs_near"]

_KEY = np.dtype([("key", "<u8"), ("iteration", "<i8"), ("y", "<i8"), ("x", "<i8"),
                 ("shared", "<i8")])


def _print_of(feature: object, doc: int) -> ParagraphPrint | None:
    if feature is None or isinstance(feature, ParagraphPrint):
        return feature
    raise TypeError(f"document {doc} has no shingle-paragraph print")


def _collect(catalog: Catalog, survivors: npt.NDArray[np.bool_], folder: Path,
             budget: int) -> tuple[I64, I64, U64, BucketWriter, int]:
    """Eligible survivors' doc numbers, sizes, multiset hashes and key rows; and the number
    of survivors without shingle paragraphs."""
    stored = sum((part.folder / "features.pkl").stat().st_size for part in catalog.parts)
    writer = BucketWriter(folder, bucket_count(4 * stored, budget), KEYED)
    docs: list[I64] = []
    sizes: list[I64] = []
    multisets: list[U64] = []
    too_short = 0
    for chunk in survivor_features(catalog, survivors):
        prints = [(doc, _print_of(f, doc)) for f, doc in zip(chunk.features, chunk.docs.tolist(),
                                                             strict=True)]
        chosen = [(doc, p) for doc, p in prints if p is not None and len(p)]
        too_short += len(prints) - len(chosen)
        if not chosen:
            continue
        size = np.array([len(p) for _, p in chosen], dtype=np.int64)
        first = sum(s.size for s in sizes)
        rows = keyed(np.concatenate([p.keys for _, p in chosen]).astype(np.uint64),
                     np.repeat(np.arange(first, first + size.size, dtype=np.int64), size))
        writer.add(rows, spread(rows["key"]))
        docs.append(np.array([doc for doc, _ in chosen], dtype=np.int64))
        sizes.append(size)
        multisets.append(np.array([p.multiset for _, p in chosen], dtype=np.uint64))
    writer.close()
    return (_joined(docs, np.int64), _joined(sizes, np.int64), _joined(multisets, np.uint64),
            writer, too_short)


def _joined(arrays: list[Any], dtype: Any) -> Any:
    return np.concatenate(arrays).astype(dtype) if arrays else np.empty(0, dtype=dtype)


def _weights(catalog: Catalog, exact_pairs: Path, docs: I64) -> I64:
    """For each of ``docs``, the number of non-revisit documents of its exact-level group."""
    parent = np.arange(catalog.documents, dtype=np.int64)
    for block in pair_blocks([exact_pairs]):
        union_into(parent, block["a"], block["b"])
    flatten(parent)
    revisit = np.concatenate([catalog.columns(part)["revisit_of"] >= 0 for part in catalog.parts]
                             ) if catalog.parts else np.empty(0, dtype=np.bool_)
    sizes = np.bincount(parent[~revisit], minlength=catalog.documents)
    return sizes[parent[docs]].astype(np.int64)


def _first_near(labels: I64, near: Path, folder: Path, budget: int) -> BucketWriter:
    """Near rows keyed by their pair of cluster labels (different clusters only), routed by
    ranges of the first label so that the buckets come in label order."""
    total = near.stat().st_size // NEAR.itemsize
    writer = BucketWriter(folder, bucket_count(2 * total * _KEY.itemsize, budget), _KEY)
    span = max(1, -(-labels.size // writer.count))
    for start in range(0, total, 1 << 20):
        rows = np.fromfile(near, dtype=NEAR, count=min(1 << 20, total - start),
                           offset=start * NEAR.itemsize)
        first, second = labels[rows["y"]], labels[rows["x"]]
        low, high = np.minimum(first, second), np.maximum(first, second)
        rows, low, high = rows[low != high], low[low != high], high[low != high]
        out = np.empty(rows.size, dtype=_KEY)
        out["key"] = (low.astype(np.uint64) << np.uint64(32)) | high.astype(np.uint64)
        for name in ("iteration", "y", "x", "shared"):
            out[name] = rows[name]
        writer.add(out, (low // span).astype(np.uint64))
    writer.close()
    return writer


def _write_found(docs: I64, sizes: I64, labels: I64, near: Path, folder: Path,
                 budget: int) -> tuple[Path, int]:
    """The pairs of the iterations, as found rows over doc numbers; and their number."""
    members = np.flatnonzero(labels != np.arange(labels.size))
    found = folder / "found.bin"
    with open(found, "wb") as out:
        out.write(found_rows(docs[labels[members]], docs[members], sizes[members]).tobytes())
        total = int(members.size)
        keyed_near = _first_near(labels, near, folder / "near", budget)
        for bucket in range(keyed_near.count):
            rows = read_bucket(keyed_near.folder, bucket, _KEY)
            rows = rows[np.lexsort((rows["x"], rows["y"], rows["iteration"], rows["key"]))]
            first = np.ones(rows.size, dtype=np.bool_)
            first[1:] = rows["key"][1:] != rows["key"][:-1]
            rows = rows[first]
            low = (rows["key"] >> np.uint64(32)).astype(np.int64)
            high = (rows["key"] & np.uint64(0xFFFFFFFF)).astype(np.int64)
            out.write(found_rows(docs[low], docs[high], rows["shared"]).tobytes())
            total += int(rows.size)
        sync(out)
    return found, total


def paragraphs_near(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                    exact_pairs: Path, folder: Path, budget: int,
                    content: ContentReader) -> dict[str, Any]:
    """Write the verified pairs to ``folder/pairs.bin`` and the growth table; returns the
    near stage's counts and the method's parameters."""
    work = folder / "paragraphs"
    docs, sizes, multiset, keys, too_short = _collect(catalog, survivors, work / "keys", budget)
    weights = _weights(catalog, exact_pairs, docs)
    cfg = config.of(ParagraphConfig)
    labels, growth = iterate(Collection(sizes, multiset, weights, keys), cfg.level,
                             cfg.iterations, cfg.seed, work, budget)
    found, candidates = _write_found(docs, sizes, labels, work / "near.bin", work, budget)
    kept = score_found(config, catalog, content, found, folder / "pairs.bin", budget,
                       resemblance_rule)
    shutil.rmtree(work)
    verified = int(kept[RELATIONS.index("near")])
    parameters = paragraph_parameters(config, int(weights.sum()), int(docs.size), too_short,
                                      growth)
    return {"candidates": candidates, "verified": verified, "rejected": candidates - verified,
            **parameters}
