"""Stage 1, fingerprint: a map over the input splits, each read and fingerprinted by one worker.

A worker reads its own split (no document crosses a process boundary): one file, or one phase of
the blocks of a large file that several workers share (:mod:`neardup.sources.blocks`). It
fingerprints every document with :class:`neardup.pipeline.fingerprint.Fingerprinter` and writes
one partition per block (``chunk_docs`` records: lines, rows or documents), named by file and
block, so that the partitions, and the document numbers drawn from their order, do not depend on
the number of workers. When a split has finished, its marker records its blocks' sizes, its
source counts and the block of each error line. A re-run skips finished splits, and inside an
unfinished split skips the fingerprinting of blocks already on disk (they are read again).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from neardup.config import DedupConfig
from neardup.engine.partition import write_partition
from neardup.engine.workdir import WorkDir, publish_dir
from neardup.pipeline.fingerprint import DocumentPrints, Fingerprinter
from neardup.pipeline.methods import near_method
from neardup.sources.blocks import BlockCursor
from neardup.sources.context import Media
from neardup.sources.splits import InputSplit, read_split
from neardup.sources.stats import SourceStats

__all__ = ["FingerprintJob", "errors_in_order", "fingerprint_split", "partition_name",
           "partitions_of", "run_fingerprint"]

STAGE = "fingerprint"


def partition_name(file: int, block: int) -> str:
    return f"s{file:06d}-c{block:05d}"


@dataclass(frozen=True, slots=True)
class FingerprintJob:
    """Everything a worker needs to fingerprint one split (picklable)."""

    config: DedupConfig
    split: InputSplit
    index: int
    root: Path
    chunk_docs: int
    media: Media

    @property
    def marker(self) -> str:
        blocks = self.split.blocks
        return f"{STAGE}/f{self.split.file:06d}-p{blocks.phase}of{blocks.stride}"

    def folder(self, block: int) -> Path:
        return self.root / STAGE / partition_name(self.split.file, block)


def _write(job: FingerprintJob, block: int, prints: list[DocumentPrints]) -> None:
    final = job.folder(block)
    temporary = final.with_name(final.name + ".tmp")
    temporary.mkdir(parents=True, exist_ok=True)
    method = near_method(job.config.method)
    write_partition(temporary, prints, links=job.config.links,
                    signatures=job.config.minhash.num_perm if job.config.method == "minhash"
                    else 0,
                    features=method is not None and method.features is not None)
    publish_dir(temporary, final)


class _BlockWriter:
    """Collects the prints of the current block; writes it when the next begins (a block
    already on disk is counted, not fingerprinted again)."""

    def __init__(self, job: FingerprintJob) -> None:
        self.job = job
        self.sizes: dict[int, int] = {}
        self.block = -1
        self.batch: list[DocumentPrints] = []
        self.on_disk = False

    def begin(self, block: int) -> None:
        self.finish()
        self.block, self.batch = block, []
        folder = self.job.folder(block)
        self.on_disk = folder.is_dir()
        if self.on_disk:
            self.sizes[block] = pq.ParquetFile(folder / "meta.parquet").metadata.num_rows

    def finish(self) -> None:
        if self.block >= 0 and not self.on_disk:
            _write(self.job, self.block, self.batch)
            self.sizes[self.block] = len(self.batch)
        self.block = -1


def fingerprint_split(job: FingerprintJob) -> dict[str, Any]:
    """Fingerprint one split into partitions; returns (and marks) its record."""
    cursor = BlockCursor(job.split.blocks, SourceStats())
    fingerprinter = Fingerprinter(job.config)
    cpu = {"extract_cpu": 0.0, "fingerprint_cpu": 0.0}
    started = time.process_time()
    writer = _BlockWriter(job)
    for doc in read_split(job.split, cursor, media=job.media):
        if cursor.current != writer.block:
            writer.begin(cursor.current)
        if writer.on_disk:
            continue
        prints = fingerprinter(doc)
        cpu["extract_cpu"] += prints.extract_seconds
        cpu["fingerprint_cpu"] += prints.fingerprint_seconds
        writer.batch.append(prints)
    writer.finish()
    record = {"index": job.index, "file": job.split.file, "path": job.split.path,
              "blocks": sorted(writer.sizes.items()), "stats": cursor.stats.as_dict(),
              "error_blocks": cursor.error_blocks(),
              "cpu_seconds": round(time.process_time() - started, 4),
              **{name: round(value, 4) for name, value in cpu.items()}}
    WorkDir.mark_at(job.root, job.marker, record)
    return record


def run_fingerprint(work: WorkDir, jobs: list[FingerprintJob],
                    map_jobs: Callable[[Callable[[FingerprintJob], dict[str, Any]],
                                        list[FingerprintJob]], Iterator[dict[str, Any]]],
                    progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Fingerprint every split not yet marked done; the records of all splits, in order."""
    records: dict[int, dict[str, Any]] = {}
    pending = []
    for job in jobs:
        record = work.done(job.marker)
        if record is not None and record["path"] == job.split.path:
            records[job.index] = record
        else:
            pending.append(job)
    if progress is not None:
        progress(len(records))
    for record in map_jobs(fingerprint_split, pending):
        records[int(record["index"])] = record
        if progress is not None:
            progress(len(records))
    return [records[job.index] for job in jobs]


def partitions_of(root: Path, records: list[dict[str, Any]]) -> list[tuple[str, Path, int]]:
    """(name, folder, rows) of every partition of the splits, in (file, block) order."""
    found = sorted((int(r["file"]), int(block), int(size))
                   for r in records for block, size in r["blocks"])
    return [(partition_name(file, block), root / STAGE / partition_name(file, block), size)
            for file, block, size in found]


def errors_in_order(records: list[dict[str, Any]]) -> list[str]:
    """The error lines of the splits in reading order (file, block, then as they came)."""
    tagged = [(int(r["file"]), int(block), line) for r in records
              for block, line in zip(r["error_blocks"], r["stats"]["errors"], strict=True)]
    return [line for _, _, line in sorted(tagged, key=lambda item: item[:2])]
