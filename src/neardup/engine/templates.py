"""Before candidates and verification: the per-host template shingles, counted out of core.

A first pass counts each host's pages (exact-level survivors) from the partitions' metadata.
Then the (host key, shingle) rows of the survivors whose host has at least ``min_pages`` pages
(no other host can have templates) are routed by host to buckets on disk, so that every row of
one host lands in one bucket; only those documents' sets are read. Each bucket is counted with
:func:`neardup.features.templates.templates_of_rows`. Both steps run in the worker pool
(:func:`neardup.engine.buckets.bucket_map`): one task per partition routes its rows into its
own file, one task per bucket counts the bucket's rows read from every such file. Only the
template sets (small: the frame of each large host) stay in memory (for method ``chunks`` the
chunk fingerprints are counted the same way, :func:`run_chunk_templates`).
:class:`ContentReader` then hands the later stages each
document's content set (its set without its host's templates) and, for min-hash, the signature
of that set. :func:`content_prints` applies the same rule to prints held in memory (the near
methods that run in memory, such as ``keyword``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.config import DedupConfig, MinHashConfig
from neardup.config.text import TemplateConfig
from neardup.engine.buckets import bucket_count, bucket_map, read_routed, spread, write_routed
from neardup.engine.catalog import Catalog, Part
from neardup.engine.partition import read_features, read_meta, shingle_slices, stored_shingles
from neardup.features.templates import (
    NO_HOST,
    TemplateSet,
    content_block,
    content_set,
    find_templates,
    host_key,
    host_rows,
    templates_of_rows,
)
from neardup.methods.prints import DocumentPrints
from neardup.methods.registry import signer_of

__all__ = ["ContentReader", "content_prints", "host_keys", "resigns", "run_chunk_templates",
           "run_templates"]

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


@dataclass(frozen=True, slots=True)
class _RouteTask:
    """One partition's survivors (``local``: rows among its kept rows), for a worker: count
    their hosts' pages, or write the (host, value) rows of those whose host is ``eligible``
    (a sorted array in a file) routed to ``count`` buckets."""

    part: Part
    local: I64
    sets_of: SetsOf
    out: Path
    count: int
    eligible: Path


def _host_pages(task: _RouteTask) -> tuple[dict[int, int], dict[int, str]]:
    """The pages and names of the hosts of one partition's survivors (in document order)."""
    keys, hosts = host_keys(task.part)
    pages: dict[int, int] = {}
    names: dict[int, str] = {}
    for key, host in zip(keys[task.local].tolist(), [hosts[i] for i in task.local.tolist()],
                         strict=True):
        pages[key] = pages.get(key, 0) + 1
        if host:
            names.setdefault(key, host.lower())
    return pages, names


def _route_part(task: _RouteTask) -> None:
    """Write the (host, value) rows of the survivors whose host has enough pages: only their
    sets are read (a corpus without hosts, or of small hosts only, reads none)."""
    keys = host_keys(task.part)[0][task.local]
    eligible = np.load(task.eligible)
    at = np.minimum(np.searchsorted(eligible, keys), eligible.size - 1)
    chosen = eligible[at] == keys
    if not chosen.any():
        return  # no file: no bucket reads this partition
    row_hosts, row_values = host_rows(keys[chosen], *task.sets_of(task.part, task.local[chosen]))
    rows = np.empty(row_hosts.size, dtype=ROW)
    rows["host"], rows["shingle"] = row_hosts, row_values
    write_routed(task.out, rows, spread(row_hosts), task.count)


@dataclass(frozen=True, slots=True)
class _CountTask:
    """One bucket of (host, value) rows to count, with the page counts of its hosts."""

    sources: tuple[Path, ...]
    bucket: int
    pages: dict[int, int]
    config: TemplateConfig


def _count_bucket(task: _CountTask) -> dict[int, U64]:
    found = [read_routed(path, task.bucket, ROW) for path in task.sources]
    rows = np.concatenate(found) if found else np.empty(0, dtype=ROW)
    return templates_of_rows(rows["host"], rows["shingle"], task.pages, task.config)


def _count_templates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                     folder: Path, count: int | None, sets_of: SetsOf) -> TemplateSet:
    """Count each host's pages; then route the (host key, value) rows of the survivors of the
    hosts with enough pages by host, partition by partition, and count them bucket by bucket
    (``count`` buckets; None: the pages only), all in the worker pool. The rows of a bucket come
    in partition order, as one pass would route them."""
    found = TemplateSet()
    folder.mkdir(parents=True, exist_ok=True)
    tasks = [_RouteTask(part, np.flatnonzero(survivors[part.start:part.start + part.count])
                        .astype(np.int64), sets_of, folder / f"rows-{index:06d}.bin",
                        count or 1, folder / "eligible.npy")
             for index, part in enumerate(catalog.parts)]
    for pages, names in bucket_map(_host_pages, tasks):
        for key, value in pages.items():
            found.pages[key] = found.pages.get(key, 0) + value
        for key, name in names.items():
            found.names.setdefault(key, name)
    eligible = np.array(sorted(key for key, pages in found.pages.items()
                               if key != NO_HOST and pages >= config.templates.min_pages),
                        dtype=np.uint64)
    if count is None or not eligible.size:
        return found
    np.save(folder / "eligible.npy", eligible)
    for _ in bucket_map(_route_part, tasks):
        pass
    sources = tuple(task.out for task in tasks if task.out.exists())
    routes = (spread(eligible) & np.uint64(count - 1)).tolist()
    by_bucket: list[dict[int, int]] = [{} for _ in range(count)]
    for key, route in zip(eligible.tolist(), routes, strict=True):
        by_bucket[route][key] = found.pages[key]
    counts = [_CountTask(sources, bucket, by_bucket[bucket], config.templates)
              for bucket in range(count) if by_bucket[bucket]]
    for shingles in bucket_map(_count_bucket, counts):
        found.shingles.update(shingles)
    return found


def run_templates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                  folder: Path, budget: int) -> TemplateSet:
    """The template shingles of every host among the survivors."""
    shingles = sum(stored_shingles(part.folder) for part in catalog.parts)
    count = bucket_count(shingles * ROW.itemsize, budget) if config.templates.enabled else None
    return _count_templates(config, catalog, survivors, folder, count, _shingle_sets)


def run_chunk_templates(config: DedupConfig, catalog: Catalog, survivors: npt.NDArray[np.bool_],
                        folder: Path, budget: int) -> dict[int, U64]:
    """Method ``chunks``: the chunk fingerprints each host repeats on more than the share of
    its pages (the rule of the shingles, as :func:`content_prints` applies it)."""
    if not config.templates.enabled:
        return {}
    stored = sum((part.folder / "features.pkl").stat().st_size for part in catalog.parts)
    return _count_templates(config, catalog, survivors, folder,
                            bucket_count(4 * stored, budget), _chunk_sets).shingles


class ContentReader:
    """Content sets and signatures of a partition's documents, given the template set."""

    def __init__(self, config: DedupConfig, catalog: Catalog, templates: TemplateSet) -> None:
        self.catalog = catalog
        self.templates = templates
        self._keys: dict[str, U64] = {}
        self.signer = signer_of(config) if resigns(config) else None

    @property
    def active(self) -> bool:
        return bool(self.templates.shingles)

    def sets(self, part: Part, local: I64) -> tuple[U64, I64]:
        """The content sets of ``local`` (rows among the part's kept rows), as CSR."""
        return self._content(part, local, *shingle_slices(part.folder, part.kept_rows()[local]))

    def _content(self, part: Part, local: I64, flat: U64, offsets: I64) -> tuple[U64, I64]:
        """The content sets of ``local`` from their sets (flat, offsets)."""
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
        if not self.active or self.signer is None:
            return None
        return lambda stored: self.signatures(part, local, stored)

    def signatures(self, part: Part, local: I64, stored: npt.NDArray[Any]) -> npt.NDArray[Any]:
        """The stored signatures, those of pruned documents recomputed from their content."""
        if not self.active or self.signer is None:
            return stored
        original, original_offsets = shingle_slices(part.folder, part.kept_rows()[local])
        flat, offsets = self._content(part, local, original, original_offsets)  # read once
        out = np.array(stored)
        for row in range(local.size):
            mine = flat[offsets[row]:offsets[row + 1]]
            if not np.array_equal(mine, original[original_offsets[row]:original_offsets[row + 1]]):
                out[row] = self.signer.of_shingles(mine)
        return out


def resigns(config: DedupConfig) -> bool:
    """Whether the method's signatures are recomputed from the content sets (they are signed
    from the verification shingles)."""
    return (signer_of(config) is not None
            and config.of(MinHashConfig).shingles == config.verify_shingles)


def content_prints(config: DedupConfig, prints: list[DocumentPrints],
                   survivors: I64) -> tuple[list[DocumentPrints], TemplateSet]:
    """The documents with each survivor's shingles reduced to content, and the template set
    found (for the methods whose near stage runs in memory: they carry no signature)."""
    chosen = survivors.tolist()
    found = find_templates([prints[i].host for i in chosen], [prints[i].shingles for i in chosen],
                           config.templates)
    if not found.shingles:
        return prints, found
    out = list(prints)
    for i in chosen:
        p = prints[i]
        templates = found.of(host_key(p.host))
        if templates is None:
            continue
        kept = content_set(p.shingles, templates, p.shingle)
        if kept.size != p.shingles.size or not np.array_equal(kept, p.shingles):
            out[i] = dataclasses.replace(p, shingles=kept)
    return out, found
