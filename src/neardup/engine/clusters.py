"""Stage 6, cluster: connected components of every pair file, then the keep policy.

Union-find runs over a memory-mapped parent array (8 bytes per document, on disk), fed pair file
by pair file in blocks, so no pair list is held whole. Each component is labelled by its smallest
doc, as in memory. The keep policy picks a survivor per component: ``first`` is the label itself;
the other policies rank the members of clusters of two or more by the same keys as
:mod:`neardup.cluster.keep`, bucketed by label. Each document's strongest relation (for its
reason) is the minimum relation code over the pairs that touch it.

Writes ``cluster/labels.npy``, ``cluster/kept.npy`` (the survivor of each doc's cluster),
``cluster/strongest.npy`` (int8) and ``cluster/sizes.npy``.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup.cluster.keep import rank_keys
from neardup.cluster.relations import RELATIONS
from neardup.cluster.unionfind import flatten, union_into
from neardup.config import KeepPolicy
from neardup.engine.buckets import bucket_count
from neardup.engine.catalog import Catalog
from neardup.engine.markers import folder_files
from neardup.engine.pairfiles import PAIR
from neardup.engine.workdir import WorkDir, publish_dir, read_array

__all__ = ["ClusterResult", "Components", "pair_blocks", "run_cluster"]

STAGE = "cluster"
_BLOCK = 1 << 20

Components = Callable[[Path, int, list[Path]], npt.NDArray[Any]]
"""Writes ``labels.npy`` (each doc's smallest component member) and ``strongest.npy`` into a
folder for ``count`` docs and the pair files; returns the labels (memory-mapped)."""


def pair_blocks(files: list[Path]) -> Iterator[npt.NDArray[Any]]:
    """The pair records of ``files`` in blocks of at most a million."""
    for path in files:
        total = path.stat().st_size // PAIR.itemsize if path.exists() else 0
        for start in range(0, total, _BLOCK):
            yield np.fromfile(path, dtype=PAIR, count=min(_BLOCK, total - start),
                              offset=start * PAIR.itemsize)


def _open(folder: Path, name: str, dtype: Any, count: int) -> np.memmap[Any, Any]:
    array: np.memmap[Any, Any] = np.lib.format.open_memmap(
        folder / f"{name}.npy", mode="w+", dtype=dtype, shape=(count,))
    return array


def _components(folder: Path, count: int, files: list[Path]) -> npt.NDArray[Any]:
    labels = _open(folder, "labels", np.int64, count)
    for start in range(0, count, _BLOCK):
        labels[start:start + _BLOCK] = np.arange(start, min(count, start + _BLOCK))
    strongest = _open(folder, "strongest", np.int8, count)
    strongest[:] = len(RELATIONS)
    for block in pair_blocks(files):
        union_into(np.asarray(labels), block["a"], block["b"])
        np.minimum.at(strongest, block["a"], block["relation"])
        np.minimum.at(strongest, block["b"], block["relation"])
    flatten(np.asarray(labels))
    strongest.flush()
    return labels


def _sizes(folder: Path, labels: npt.NDArray[Any]) -> npt.NDArray[Any]:
    sizes = _open(folder, "sizes", np.int64, labels.size)
    for start in range(0, labels.size, _BLOCK):
        chunk = labels[start:start + _BLOCK]
        low = int(chunk.min()) if chunk.size else 0
        counts = np.bincount(chunk - low)
        sizes[low:low + counts.size] += counts
    return sizes


def _ranked_members(catalog: Catalog, policy: KeepPolicy, labels: npt.NDArray[Any],
                    sizes: npt.NDArray[Any], folder: Path, count: int) -> None:
    """Write (label, rank key) of every member of a cluster of two or more, by label bucket."""
    files = [open(folder / f"rank{b:05d}.pkl", "wb") for b in range(count)]  # noqa: SIM115
    try:
        for part in catalog.parts:
            docs = np.arange(part.start, part.start + part.count, dtype=np.int64)
            clustered = sizes[labels[docs]] > 1
            if not clustered.any():
                continue
            meta = part.kept_meta(["url", "fetched"])
            columns = catalog.columns(part)
            keys = rank_keys(policy, columns["text_chars"], meta.column("fetched").to_pylist(),
                             meta.column("url").to_pylist(), docs)
            chosen = np.flatnonzero(clustered).tolist()
            for row in chosen:
                label = int(labels[docs[row]])
                pickle.dump((label, keys[row]), files[label & (count - 1)])
    finally:
        for out in files:
            out.close()


def _best(folder: Path, count: int, kept: npt.NDArray[Any]) -> None:
    for bucket in range(count):
        best: dict[int, tuple[object, ...]] = {}
        with open(folder / f"rank{bucket:05d}.pkl", "rb") as source:
            while True:
                try:
                    label, key = pickle.load(source)
                except EOFError:
                    break
                if label not in best or key < best[label]:
                    best[label] = key
        for label, key in best.items():
            kept[label] = key[-1]
        (folder / f"rank{bucket:05d}.pkl").unlink()


def _keep(catalog: Catalog, policy: KeepPolicy, folder: Path, labels: npt.NDArray[Any],
          sizes: npt.NDArray[Any], budget: int) -> None:
    """``kept.npy``: for each doc, the survivor of its cluster."""
    kept = _open(folder, "kept", np.int64, labels.size)
    if policy != "first":
        clustered = int(np.count_nonzero(sizes > 1))
        count = bucket_count(clustered * 200, budget)
        best = _open(folder, "best", np.int64, labels.size)
        for start in range(0, labels.size, _BLOCK):
            best[start:start + _BLOCK] = np.arange(start, min(labels.size, start + _BLOCK))
        _ranked_members(catalog, policy, labels, sizes, folder, count)
        _best(folder, count, best)
    for start in range(0, labels.size, _BLOCK):
        chunk = np.asarray(labels[start:start + _BLOCK])
        kept[start:start + chunk.size] = chunk if policy == "first" else best[chunk]
    kept.flush()


class ClusterResult:
    """The arrays of the cluster stage, memory-mapped read-only, and its counts."""

    def __init__(self, folder: Path, record: dict[str, Any]) -> None:
        self.folder = folder
        self.stats: dict[str, Any] = record

    def array(self, name: str) -> npt.NDArray[Any]:
        array: npt.NDArray[Any] = read_array(self.folder / f"{name}.npy", mmap=True)
        return array


def _stats(labels: npt.NDArray[Any], sizes: npt.NDArray[Any],
           kept: npt.NDArray[Any]) -> dict[str, Any]:
    clusters = documents_in = largest = duplicates = 0
    for start in range(0, labels.size, _BLOCK):
        chunk = np.asarray(sizes[start:start + _BLOCK])
        clusters += int(np.count_nonzero(chunk > 1))
        documents_in += int(chunk[chunk > 1].sum())
        largest = max(largest, int(chunk.max()) if chunk.size else 0)
        docs = np.arange(start, start + chunk.size)
        duplicates += int(np.count_nonzero(np.asarray(kept[start:start + chunk.size]) != docs))
    return {"clusters": clusters, "documents_in_clusters": documents_in,
            "largest_cluster": largest, "duplicates": duplicates,
            "kept": int(labels.size - duplicates)}


def run_cluster(work: WorkDir, catalog: Catalog, policy: KeepPolicy, files: list[Path],
                budget: int, components: Components | None = None) -> ClusterResult:
    final = work.root / STAGE
    if (record := work.done(STAGE)) is not None:
        return ClusterResult(final, record)
    temporary = work.temporary(final)
    labels = (components or _components)(temporary, catalog.documents, files)
    sizes = _sizes(temporary, labels)
    _keep(catalog, policy, temporary, labels, sizes, budget)
    kept = np.load(temporary / "kept.npy", mmap_mode="r")
    record = _stats(labels, sizes, kept)
    del labels, sizes, kept
    (temporary / "best.npy").unlink(missing_ok=True)
    publish_dir(temporary, final)
    work.mark(STAGE, record, folder_files(final))
    return ClusterResult(final, record)
