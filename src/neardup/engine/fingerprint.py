"""Stage 1, fingerprint: a map over the input splits, each read and fingerprinted by one worker.

A worker reads its own split (no document crosses a process boundary), fingerprints every
document with :class:`neardup.pipeline.fingerprint.Fingerprinter`, and writes a partition every
``chunk_docs`` documents (:mod:`neardup.engine.partition`). When a split has finished, its marker
records its partitions' sizes and its source counts. A re-run skips finished splits, and inside
an unfinished split skips the documents of its finished partitions (they are read again, not
fingerprinted again).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from neardup.config import DedupConfig
from neardup.document import Document
from neardup.engine.partition import write_partition
from neardup.engine.workdir import WorkDir, publish_dir
from neardup.pipeline.fingerprint import DocumentPrints, Fingerprinter
from neardup.pipeline.methods import near_method
from neardup.sources.context import Media
from neardup.sources.splits import InputSplit, read_split
from neardup.sources.stats import SourceStats

__all__ = ["FingerprintJob", "fingerprint_split", "partition_name"]

STAGE = "fingerprint"


def partition_name(split: int, chunk: int) -> str:
    return f"s{split:06d}-c{chunk:05d}"


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
        return f"{STAGE}/s{self.index:06d}"

    def folder(self, chunk: int) -> Path:
        return self.root / STAGE / partition_name(self.index, chunk)


def _finished_chunks(job: FingerprintJob) -> list[int]:
    """Sizes of the split's partitions already on disk, in order (a gap ends the list)."""
    sizes: list[int] = []
    while (folder := job.folder(len(sizes))).is_dir():
        sizes.append(pq.ParquetFile(folder / "meta.parquet").metadata.num_rows)
    return sizes


def _write(job: FingerprintJob, chunk: int, prints: list[DocumentPrints]) -> None:
    final = job.folder(chunk)
    temporary = final.with_name(final.name + ".tmp")
    temporary.mkdir(parents=True, exist_ok=True)
    method = near_method(job.config.method)
    write_partition(temporary, prints, links=job.config.links,
                    signatures=job.config.minhash.num_perm if job.config.method == "minhash"
                    else 0,
                    features=method is not None and method.features is not None)
    publish_dir(temporary, final)


def _skip(documents: Iterator[Document], count: int) -> None:
    for _ in range(count):
        if next(documents, None) is None:
            return


def fingerprint_split(job: FingerprintJob) -> dict[str, Any]:
    """Fingerprint one split into partitions; returns (and marks) its record."""
    sizes = _finished_chunks(job)
    stats = SourceStats()
    documents = iter(read_split(job.split, stats, media=job.media))
    _skip(documents, sum(sizes))
    fingerprinter = Fingerprinter(job.config)
    cpu = {"extract_cpu": 0.0, "fingerprint_cpu": 0.0}
    started = time.process_time()
    batch: list[DocumentPrints] = []
    for doc in documents:
        prints = fingerprinter(doc)
        cpu["extract_cpu"] += prints.extract_seconds
        cpu["fingerprint_cpu"] += prints.fingerprint_seconds
        batch.append(prints)
        if len(batch) == job.chunk_docs:
            _write(job, len(sizes), batch)
            sizes.append(len(batch))
            batch = []
    if batch or not sizes:
        _write(job, len(sizes), batch)
        sizes.append(len(batch))
    record = {"index": job.index, "path": job.split.path, "sizes": sizes, "stats": stats.as_dict(),
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
