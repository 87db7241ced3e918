"""Before candidates and verification: the per-host template shingles, counted out of core.

Each exact-level survivor's (host key, shingle) rows are routed by host to buckets on disk, so
that every row of one host lands in one bucket; each bucket is counted with
:func:`neardup.features.templates.templates_of_rows`. Only the template sets (small: the frame
of each large host) stay in memory (for method ``chunks`` the chunk fingerprints are counted
the same way, :func:`run_chunk_templates`). :class:`ContentReader` then hands the later stages each
document's content set (its set without its host's templates) and, for min-hash, the signature
of that set: the same values as the in-memory path (:mod:`neardup.pipeline.templates`).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.config import DedupConfig
from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket, spread
from neardup.engine.catalog import Catalog, Part
from neardup.engine.partition import read_features, read_meta, shingle_slices
from neardup.engine.workdir import read_array
from neardup.features.templates import (
    TemplateSet,
    content_block,
    host_key,
    host_rows,
    templates_of_rows,
)
from neardup.fingerprints.minhash import MinHash

__all__ = ["ContentReader", "host_keys", "run_chunk_templates", "run_templates"]

ROW = np.dtype([("host", "<u8"), ("shingle", "<u8")])


def host_keys(part: Part) -> tuple[U64, list[str | None]]:
    hosts = read_meta(part.folder, ["host"]).column("host").to_pylist()
    kept = [hosts[row] for row in part.kept_rows().tolist()]
    return np.array([host_key(h) for h in kept], dtype=np.uint64), kept


SetsOf = Callable[[Part, I64], tuple[U64, I64]]
"""(partition, survivors' rows among its kept rows) -> their value sets as (flat, offsets)."""


def _shingle_sets(part: Part, local: I64) -> tuple[U64, I64]:
    return shingle_slices(part.folder, part.kept_rows()[local])


def _chunk_sets(part: Part, local: I64) -> tuple[U64, I64]:
    stored = read_features(part.folder)
    rows = part.kept_rows()[local].tolist()
    sets = [np.asarray(stored[r] if stored[r] is not None else np.empty(0, np.uint32),
                       dtype=np.uint64) for r in rows]
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([s.size for s in sets], out=offsets[1:])
    return (np.concatenate(sets) if sets else np.empty(0, np.uint64)), offsets


def _count_templates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                     writer: BucketWriter | None, sets_of: SetsOf) -> TemplateSet:
    """Route each survivor's (host key, value) rows by host, then count bucket by bucket."""
    found = TemplateSet()
    for part in catalog.parts:
        keys, hosts = host_keys(part)
        local = np.flatnonzero(survivors[part.start:part.start + part.count]).astype(np.int64)
        for key, host in zip(keys[local].tolist(), [hosts[i] for i in local.tolist()],
                             strict=True):
            found.pages[key] = found.pages.get(key, 0) + 1
            if host:
                found.names.setdefault(key, host.lower())
        if writer is None or local.size == 0:
            continue
        row_hosts, row_values = host_rows(keys[local], *sets_of(part, local))
        rows = np.empty(row_hosts.size, dtype=ROW)
        rows["host"], rows["shingle"] = row_hosts, row_values
        writer.add(rows, spread(row_hosts))
    if writer is None:
        return found
    writer.close()
    for bucket in range(writer.count):
        rows = read_bucket(writer.folder, bucket, ROW)
        found.shingles.update(templates_of_rows(rows["host"], rows["shingle"], found.pages,
                                                config.templates))
    return found


def run_templates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                  folder: Path, budget: int) -> TemplateSet:
    """The template shingles of every host among the survivors."""
    shingles = sum(int(read_array(part.folder / "shingle_offsets.npy")[-1])
                   for part in catalog.parts)
    writer = BucketWriter(folder, bucket_count(shingles * ROW.itemsize, budget), ROW) \
        if config.templates.enabled else None
    return _count_templates(config, catalog, survivors, writer, _shingle_sets)


def run_chunk_templates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                        folder: Path, budget: int) -> dict[int, U64]:
    """Method ``chunks``: the chunk fingerprints each host repeats on more than the share of
    its pages (the rule of the shingles, as :mod:`neardup.pipeline.templates` applies it)."""
    if not config.templates.enabled:
        return {}
    stored = sum((part.folder / "features.pkl").stat().st_size for part in catalog.parts)
    writer = BucketWriter(folder, bucket_count(4 * stored, budget), ROW)
    return _count_templates(config, catalog, survivors, writer, _chunk_sets).shingles


class ContentReader:
    """Content sets and signatures of a partition's documents, given the template set."""

    def __init__(self, config: DedupConfig, catalog: Catalog, templates: TemplateSet) -> None:
        self.catalog = catalog
        self.templates = templates
        self._keys: dict[str, U64] = {}
        self.minhash = MinHash(config.minhash) if (
            config.method == "minhash"
            and config.minhash.shingles == config.verify_shingles) else None

    @property
    def active(self) -> bool:
        return bool(self.templates.shingles)

    def sets(self, part: Part, local: I64) -> tuple[U64, I64]:
        """The content sets of ``local`` (rows among the part's kept rows), as CSR."""
        flat, offsets = shingle_slices(part.folder, part.kept_rows()[local])
        if not self.active:
            return flat, offsets
        if part.name not in self._keys:
            self._keys[part.name] = host_keys(part)[0]
        keys = self._keys[part.name]
        sentinels = self.catalog.columns(part)["shingle"][local]
        return content_block(flat, offsets, keys[local], sentinels, self.templates)

    def adjuster(self, part: Part, local: I64) -> Callable[[U64], U64] | None:
        """:meth:`signatures` for ``local`` as a function of the stored signatures (None when
        no template is removed: the stored signatures, or their band keys, stand)."""
        if not self.active or self.minhash is None:
            return None
        return lambda stored: self.signatures(part, local, stored)

    def signatures(self, part: Part, local: I64, stored: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """The stored signatures, those of pruned documents recomputed from their content."""
        if not self.active or self.minhash is None:
            return stored
        flat, offsets = self.sets(part, local)
        original, original_offsets = shingle_slices(part.folder, part.kept_rows()[local])
        out = np.array(stored)
        for row in range(local.size):
            mine = flat[offsets[row]:offsets[row + 1]]
            if not np.array_equal(mine, original[original_offsets[row]:original_offsets[row + 1]]):
                out[row] = self.minhash.of_shingles(mine)
        return out
