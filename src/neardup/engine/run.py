"""A batch run through the stages, resumable, within a memory limit.

``run_engine`` chains the stages of :mod:`neardup.engine` over a work directory: fingerprint (in
worker processes, one input split each), link, exact, near (candidates and verification),
cluster, outputs. Each stage leaves a marker when it has finished, so re-running the same command
with the same work directory skips what was done; a work directory made with another
configuration is refused. It is the only batch implementation: the command line, the library
(:mod:`neardup.pipeline.library`, documents given as an iterable) and Spark run it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import resource
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from neardup.config import DEFAULT_MEMORY_LIMIT, DedupConfig, parse_bytes
from neardup.document import Document
from neardup.engine.against import (
    config_identity,
    old_keys,
    old_near_pairs,
    old_partitions,
    record_near_pairs,
    write_decisions,
)
from neardup.engine.buckets import parallel_buckets
from neardup.engine.catalog import Catalog, build_catalog
from neardup.engine.clusters import ClusterResult, Components, run_cluster
from neardup.engine.exact import ExactResult, run_exact
from neardup.engine.fingerprint import (
    FingerprintJob,
    errors_in_order,
    fingerprint_split,
    partitions_of,
    run_fingerprint,
)
from neardup.engine.heap import release_freed
from neardup.engine.keystore import reusing_keys
from neardup.engine.near import run_near, write_near_tables
from neardup.engine.outputs import write_outputs
from neardup.engine.pairfiles import to_records
from neardup.engine.sizing import work_bytes_for
from neardup.engine.verify import pairs_of_new
from neardup.engine.workdir import FORMAT, WorkDir, naming_full_disks, write_atomic
from neardup.methods.pairs import Pairs
from neardup.methods.registry import join_of
from neardup.methods.workers import Mapper, pool_cpu_seconds, shared_pool, task_map
from neardup.overlap.phases import PhaseMeter
from neardup.sources.blocks import BlockCursor, Blocks
from neardup.sources.context import Media
from neardup.sources.fields import DEFAULT_FIELDS, RowFields
from neardup.sources.splits import SHARED_BYTES, InputSplit, input_splits, merge_stats
from neardup.sources.stats import SourceStats
from neardup.store.durable import sync
from neardup.text.compiled import kernel_mode

__all__ = ["DOCUMENTS", "LEAST_LIMIT", "SMALL_INPUT_BYTES", "EngineOptions", "Executor",
           "run_engine"]

DOCUMENTS = "<documents>"
"""The input name of documents given to :func:`run_engine` as an iterable (the library)."""

BASE_RSS = 400 << 20
"""What a process holds before any stage data (interpreter, numpy, numba, pyarrow)."""
LEAST_BUCKET_BYTES = 8 << 20
"""The smallest bucket budget, whatever the memory limit."""
LEAST_LIMIT = BASE_RSS + 6 * LEAST_BUCKET_BYTES
"""The least memory limit the buckets are sized by (see :attr:`EngineOptions.budget`)."""


DEFAULT_MEMORY_BYTES = parse_bytes(DEFAULT_MEMORY_LIMIT) or 1 << 40
"""The stages' budget unless told (:data:`neardup.config.DEFAULT_MEMORY_LIMIT`)."""

SMALL_INPUT_BYTES = SHARED_BYTES
"""A run of one input file under this size whose number of workers was left to the engine runs
in this process alone: the file is one split, fingerprinted by one process anyway, and the
buckets of so few documents are small. Measured here (``benchmarks/startup_dedup.py``; 960
real-text documents, 4 MB): 2 workers took 0.46 CPU s and 260 MB more than one, and no less
wall time."""


@dataclass(frozen=True, slots=True)
class EngineOptions:
    """How a run executes (none of it changes the outputs but ``chunk_docs``, which fixes the
    partitioning and is part of the work directory's identity)."""

    work: Path
    memory_limit: int = DEFAULT_MEMORY_BYTES
    workers: int = 1
    chunk_docs: int = 10_000
    replace_other: bool = False
    """A work directory of another configuration is replaced (the default one inside the
    output folder) instead of refused (one the user named)."""
    shared_bytes: int = SHARED_BYTES
    """A JSONL or Parquet input at least this large is read by all the workers side by side
    (each its own blocks), when there are few input files."""
    bucket_bytes: int | None = None
    """Overrides :attr:`budget` (tests use tiny buckets to exercise the partitioning)."""
    small_input_bytes: int = 0
    """Inputs (local files only) totalling fewer bytes run in this process, with no worker pool
    whatever ``workers`` says (0: never; the command line gives :data:`SMALL_INPUT_BYTES` when
    its ``--workers`` is not set)."""
    compact_sets: bool = False
    """The fingerprint partitions store each document's token sequence instead of its
    verification set, rebuilt when read (:mod:`neardup.engine.sequences`): about 2.4 times less
    disk for the work directory, for more CPU (measured +16% to +30% on real text, +6% on
    generated text: ``benchmarks/workdir_sets.py``). A work directory holding partitions of
    either form resumes (each read in its own form): not part of its identity."""

    @property
    def budget(self) -> int:
        """Bytes one bucket may hold in memory: a share of what the limit leaves after the
        process's base, since sorting a bucket needs a few copies of it."""
        if self.bucket_bytes is not None:
            return self.bucket_bytes
        return max(LEAST_BUCKET_BYTES, (self.memory_limit - BASE_RSS) // 6)

    @property
    def limit_kept(self) -> bool:
        """Whether the buckets can follow :attr:`memory_limit`: below :data:`LEAST_LIMIT` they
        stay at their least size, and the run may use more."""
        return self.memory_limit >= LEAST_LIMIT




@dataclass(frozen=True, slots=True)
class Executor:
    """Where the parallel stages run (none of it changes the outputs): ``mapper`` maps the
    fingerprint tasks, ``near`` replaces :func:`run_near`, ``components`` the cluster stage's
    union-find. Unset parts run locally (the Spark executor: :mod:`neardup.engine.spark`)."""

    name: str = "local"
    mapper: Callable[[int], Mapper] | None = None
    near: Callable[..., tuple[Path, dict[str, Any] | None]] | None = None
    components: Components | None = None
    about: dict[str, Any] = dataclasses.field(default_factory=dict)
    """Written to the summary's ``engine`` section under ``name``."""
    stamps: dict[str, tuple[int, int]] = dataclasses.field(default_factory=dict)
    """(bytes, modification time) of the inputs it reads that are not local paths (URIs):
    part of the work directory's identity, as a local file's size and time are."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("Executor.name must not be empty")


def _spool_stdin(work: Path) -> str:
    """Save stdin to a file of the work directory (once), so that the run can resume."""
    path = work / "stdin.input"
    if not path.exists():
        temporary = work / "stdin.input.tmp"
        with open(temporary, "wb") as out:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
            sync(out)
        os.replace(temporary, path)
    return str(path)


def _identity(config: DedupConfig, paths: list[str], media: str, options: EngineOptions,
              against: dict[str, Any] | None, stamps: dict[str, tuple[int, int]],
              fields: RowFields = DEFAULT_FIELDS) -> dict[str, Any]:
    files: dict[str, list[int] | None] = {}
    for path in paths:
        try:
            info = os.stat(path)
            files[path] = [info.st_size, info.st_mtime_ns]
        except OSError:
            files[path] = list(stamps[path]) if path in stamps else None
    identity = {"config": config_identity(config), "inputs": files, "media": media,
                "chunk_docs": options.chunk_docs, "format": FORMAT}
    if against is not None:
        identity["against"] = against
    if fields.tag:
        identity["fields"] = fields.tag
    return identity


def _small_input(splits: list[InputSplit], below: int) -> bool:
    """Whether the input is one local file (or group of loose files) of fewer than ``below``
    bytes (one split: its fingerprinting runs in one process whatever the number of workers)."""
    if below <= 0 or len(splits) != 1:
        return False
    try:
        return sum(os.stat(path).st_size for path in splits[0].paths) < below
    except OSError:  # documents given in memory, a URL: size unknown
        return False


def _revisit_pairs(work: WorkDir, catalog: Catalog) -> Path:
    path = work.stage("link") / "revisit_pairs.bin"
    if work.done("revisit-pairs") is None:
        with open(path, "wb") as out:
            for part in catalog.parts:
                original = catalog.columns(part)["revisit_of"]
                docs = np.flatnonzero(original >= 0).astype(np.int64)
                pairs = Pairs.exact(original[docs], docs + part.start, "revisit", "identical")
                out.write(to_records(pairs).tobytes())
            sync(out)
        work.mark("revisit-pairs", {}, [path])
    return path


def _taken(documents: Iterable[Document], cursor: BlockCursor) -> Iterator[Document]:
    """The documents, each noted by the cursor (which cuts them into blocks)."""
    for number, document in enumerate(documents):
        cursor.take(number)
        yield document


class _CpuLaps(PhaseMeter):
    """A :class:`PhaseMeter` that also notes the CPU seconds of each phase, of this process and
    its workers together (the machine's load changes wall times, not CPU times)."""

    def __init__(self) -> None:
        super().__init__()
        self.cpu: dict[str, float] = {}
        self._cpu_last = self._now()

    @staticmethod
    def _now() -> float:
        own = resource.getrusage(resource.RUSAGE_SELF)
        reaped = resource.getrusage(resource.RUSAGE_CHILDREN)
        return (own.ru_utime + own.ru_stime + reaped.ru_utime + reaped.ru_stime
                + pool_cpu_seconds())

    def lap(self, name: str) -> None:
        release_freed()  # the stage's freed memory, before the next stage grows the heap
        super().lap(name)
        now = self._now()
        self.cpu[name] = round(self.cpu.get(name, 0.0) + now - self._cpu_last, 3)
        self._cpu_last = now


def run_engine(inputs: list[str], out: Path, config: DedupConfig, options: EngineOptions, *,
               media: Media = "html", fmt: str = "parquet",
               progress: Callable[[str, int, int], None] | None = None,
               against: Path | None = None, executor: Executor | None = None,
               documents: Iterable[Document] | None = None,
               fields: RowFields = DEFAULT_FIELDS) -> dict[str, Any]:
    """Run every stage (skipping those already done in ``options.work`` whose files are
    intact); returns the summary written to ``out/summary.json``. With ``against`` (an earlier
    run's work directory), the inputs are compared with that run's documents too and the
    outputs keep what touches the new ones (:mod:`neardup.engine.against`). ``documents`` (the
    library's rows, read once, in this process, ``options.chunk_docs`` at a time) stand for
    ``inputs``, which must be empty. ``fields`` names the fields of JSONL and Parquet rows that
    hold the text, id and URL. A full disk raises an error naming the folder
    (:func:`neardup.engine.workdir.naming_full_disks`)."""
    with naming_full_disks([options.work, out],
                           lambda: _work_needed(inputs, config, options.compact_sets)):
        return _run(inputs, out, config, options, media=media, fmt=fmt, progress=progress,
                    against=against, executor=executor, documents=documents, fields=fields)


def _work_needed(inputs: list[str], config: DedupConfig, compact: bool) -> int | None:
    """What the work directory is expected to need for these inputs (local files only)."""
    files = [Path(path) for path in inputs]
    files += [found for folder in files if folder.is_dir() for found in folder.rglob("*")]
    sizes = [path.stat().st_size for path in files if path.is_file()]
    return work_bytes_for(sum(sizes), config.method, compact=compact) if sizes else None


def _run(inputs: list[str], out: Path, config: DedupConfig, options: EngineOptions, *,
         media: Media, fmt: str, progress: Callable[[str, int, int], None] | None,
         against: Path | None, executor: Executor | None,
         documents: Iterable[Document] | None, fields: RowFields) -> dict[str, Any]:
    started, laps = time.perf_counter(), _CpuLaps()
    executor = executor or Executor()
    options.work.mkdir(parents=True, exist_ok=True)
    if documents is not None and inputs:
        raise ValueError("run_engine: give inputs or documents, not both")
    paths = [_spool_stdin(options.work) if path == "-" else path for path in inputs]
    expansion = SourceStats()
    splits = ([InputSplit(DOCUMENTS, True, 0, Blocks(options.chunk_docs))] if documents is not None
              else input_splits(paths, expansion, block_size=options.chunk_docs,
                                workers=options.workers, shared_bytes=options.shared_bytes))
    if executor.mapper is None and _small_input(splits, options.small_input_bytes):
        options = dataclasses.replace(options, workers=1)
    old_parts, old_identity = old_partitions(against, config) if against else ([], None)
    old_run = old_identity and {"run": str(against), "inputs": old_identity["inputs"]}
    files = list(dict.fromkeys(path for split in splits for path in split.paths))
    work = WorkDir(options.work, _identity(config, files, media, options, old_run,
                                           executor.stamps, fields),
                   replace_other=options.replace_other)
    jobs = [FingerprintJob(config, split, index, work.root, options.chunk_docs, media, fields,
                           options.compact_sets) for index, split in enumerate(splits)]
    report = (lambda done: progress("fingerprint", done, len(jobs))) if progress else None
    if documents is not None:
        fingerprint_split(jobs[0], lambda cursor: _taken(documents, cursor))  # marks it done
    pooled = kernel_mode("compile") if options.workers > 1 else contextlib.nullcontext()
    with pooled, shared_pool(options.workers):  # one pool for every stage; kernels compiled
        records = run_fingerprint(work, jobs, (executor.mapper or task_map)(options.workers),
                                  report, workers=options.workers, spool=executor.mapper is None)
        laps.lap("read_extract_fingerprint")
        _step(progress, "exact", 0)
        catalog = build_catalog(work, old_parts + partitions_of(work.root, records))
        old = sum(part.count for part in catalog.parts[:len(old_parts)])
        reuse = old_near_pairs(against, config, [part.dropped for part in
                                                 catalog.parts[:len(old_parts)]]) \
            if against else None
        keys = old_keys(against) if against and reuse is not None else None
        with parallel_buckets(options.workers), pairs_of_new(old if reuse is not None else 0), \
                reusing_keys(old, keys):
            exact, near_folder, near, clusters, pair_files = _bucket_stages(
                work, config, catalog, options, progress, laps, reuse or (), executor)
    _step(progress, "outputs", 0)
    scratch = work.temporary(work.root / "outputs")
    written = write_outputs(catalog, clusters, [p for p in pair_files if p not in (reuse or ())],
                            out, fmt=fmt, policy=config.keep, with_simhash=_with_simhash(config),
                            links=config.links, scratch=scratch, budget=options.budget, first=old)
    write_near_tables(near_folder, out, fmt)
    shutil.rmtree(scratch, ignore_errors=True)
    decided = write_decisions(out, fmt, catalog, old) if against else None
    laps.lap("outputs")
    _step(progress, "outputs", 1)
    summary = _summary(inputs, config, media, records, expansion, catalog, exact, near,
                       clusters.stats, options)
    summary["repeated_ids"] = written.repeated_ids
    summary["engine"]["executor"] = executor.name
    if executor.about:
        summary["engine"][executor.name] = executor.about
    if decided is not None:
        summary["against"] = {"run": str(against), "old_documents": old,
                              "new_documents": catalog.documents - old, **decided}
    summary["seconds"] = laps.seconds | _summed(records) | {
        "total": round(time.perf_counter() - started, 4)}
    summary["cpu_seconds"] = laps.cpu | {"total": round(sum(laps.cpu.values()), 3)}
    write_atomic(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode())
    return summary


def _bucket_stages(work: WorkDir, config: DedupConfig, catalog: Catalog, options: EngineOptions,
                   progress: Callable[[str, int, int], None] | None,
                   laps: PhaseMeter, reused: tuple[Path, ...], executor: Executor
                   ) -> tuple[ExactResult, Path, dict[str, Any] | None, ClusterResult, list[Path]]:
    """Exact levels, near (candidates and verification) and clusters, their buckets spread
    over the workers (each with its share of the memory budget). ``reused``: the earlier run's
    near pair files, which stand for the pairs among its documents when no template is removed
    (:mod:`neardup.engine.against`)."""
    budget = max(1, options.budget // options.workers)
    exact = run_exact(work, catalog, budget)
    laps.lap("exact")
    _step(progress, "near", 0)
    near_folder, near = (executor.near or run_near)(work, config, catalog, exact.survivors(),
                                                    budget)
    laps.lap("near_candidates_and_verification")
    _step(progress, "cluster", 0)
    near_files = [near_folder / "pairs.bin"]
    if reused and near is not None and not near["templates"].get("hosts_with_templates", 1):
        near_files = [*reused, *near_files]
    record_near_pairs(work.root, near_files)
    pair_files = [_revisit_pairs(work, catalog), exact.folder / "pairs.bin", *near_files]
    clusters = run_cluster(work, catalog, config.keep, pair_files, budget, executor.components)
    laps.lap("cluster")
    return exact, near_folder, near, clusters, pair_files


def _step(progress: Callable[[str, int, int], None] | None, stage: str, done: int) -> None:
    """Tell the display a stage without inner counts has started (0 of 1) or ended (1 of 1)."""
    if progress is not None:
        progress(stage, done, 1)


def _summed(records: list[dict[str, Any]]) -> dict[str, float]:
    """The wall seconds of the documents' text extraction and fingerprinting, each document's
    summed (over the workers too)."""
    return {name: round(sum(float(r.get(name, 0.0)) for r in records), 4)
            for name in ("extract_summed", "fingerprint_summed")}


def _with_simhash(config: DedupConfig) -> bool:
    """Whether the documents table shows each document's simhash (its method's join reads
    them)."""
    join = join_of(config)
    return join is not None and join.simhash_column


def _summary(inputs: list[str], config: DedupConfig, media: str, records: list[dict[str, Any]],
             expansion: SourceStats, catalog: Catalog, exact: Any, near: dict[str, Any] | None,
             clusters: dict[str, Any], options: EngineOptions) -> dict[str, Any]:
    tokens = sum(int(np.count_nonzero(catalog.columns(part)["tokens"] == 0))
                 for part in catalog.parts)
    summary: dict[str, Any] = {
        "inputs": list(inputs), "method": config.method, "media": media,
        "sources": merge_stats([expansion.as_dict(), *(r["stats"] for r in records)],
                              [*expansion.errors, *errors_in_order(records)]),
        "documents": catalog.documents, "revisits_linked": catalog.revisits_linked,
        "revisits_without_original": catalog.revisits_without_original, "empty_text": tokens,
        "exact_groups": exact.groups, "exact_collapsed": exact.collapsed}
    if near is not None:
        near = dict(near)
        summary["templates"] = near.pop("templates")
        summary["near"] = near
    summary.update(clusters)
    summary["config"] = config.tags
    summary["engine"] = {"work": str(options.work), "partitions": len(catalog.parts),
                         "splits": len(records), "workers": options.workers,
                         "memory_limit": options.memory_limit}
    return summary
