"""Stage 1, fingerprint: a map over the input splits, each read and fingerprinted by one worker.

A worker reads its own split (no document crosses a process boundary): one file, or one phase of
the blocks of a large file that several workers share (:mod:`neardup.sources.blocks`). It
fingerprints every document with :class:`neardup.methods.fingerprinter.Fingerprinter` and writes
one partition per block (``chunk_docs`` records: lines, rows or documents), named by file and
block, so that the partitions, and the document numbers drawn from their order, do not depend on
the number of workers. Each partition has its own marker, sealing its files (sizes and
checksums: :mod:`neardup.engine.markers`). When a split has finished, its marker records its
blocks' sizes, its source counts and the block of each error line. A re-run skips finished
splits whose partitions are intact, and inside an unfinished split (or one with a damaged
partition) skips the fingerprinting of blocks whose partition is intact (they are read again).

A large JSONL file shared by few workers is dealt: the parent cuts its stream into line blocks
(:mod:`neardup.sources.lineblocks`) and each block is one task; for workers on this machine the
block's lines go through a spool file of the work directory (removed once fingerprinted), which
costs less CPU than carrying them through the pool's pipe. Before the pool starts, the parent
fingerprints and writes two tiny documents (:func:`warm_up`) so that the workers it forks start
with the compiled kernels and pyarrow's lazily loaded modules.
"""

from __future__ import annotations

import shutil
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neardup.config import DedupConfig
from neardup.document import Document
from neardup.engine.heap import release_freed, sparing_older_objects
from neardup.engine.markers import folder_files, read_marker
from neardup.engine.partition import Layout, PartitionWriter, layout_for
from neardup.engine.workdir import WorkDir, publish_dir
from neardup.methods.fingerprinter import DocumentPrints, Fingerprinter
from neardup.methods.registry import near_method
from neardup.sources.blocks import BlockCursor
from neardup.sources.context import Media, ReadContext
from neardup.sources.fields import DEFAULT_FIELDS, RowFields
from neardup.sources.lineblocks import LineBlock, deal_lines, read_line_block
from neardup.sources.sniff import read_head, sniff
from neardup.sources.splits import InputSplit, read_split
from neardup.sources.stats import SourceStats

__all__ = ["BlockTask", "FingerprintJob", "errors_in_order", "fingerprint_split",
           "fingerprint_task", "partition_marker", "partition_name", "partitions_intact",
           "partitions_of", "run_fingerprint"]

STAGE = "fingerprint"


def partition_name(file: int, block: int) -> str:
    return f"s{file:06d}-c{block:05d}"


def partition_marker(file: int, block: int) -> str:
    """The marker of one partition (its rows and the seals of its files)."""
    return f"{STAGE}/{partition_name(file, block)}"


def partitions_intact(work: WorkDir, record: dict[str, Any]) -> bool:
    """Whether every partition of a split's (or a block's) record is marked and intact."""
    return all(work.done(partition_marker(int(part["file"]), int(block))) is not None
               for part in record.get("records", [record]) for block, _ in part["blocks"])


@dataclass(frozen=True, slots=True)
class FingerprintJob:
    """Everything a worker needs to fingerprint one split (picklable)."""

    config: DedupConfig
    split: InputSplit
    index: int
    root: Path
    chunk_docs: int
    media: Media
    fields: RowFields = DEFAULT_FIELDS
    compact_sets: bool = False
    """Partitions store the verification sets as token sequences (``EngineOptions``)."""

    @property
    def marker(self) -> str:
        blocks = self.split.blocks
        return f"{STAGE}/f{self.split.file:06d}-p{blocks.phase}of{blocks.stride}"

    def folder(self, block: int) -> Path:
        return self.root / STAGE / partition_name(self.split.file, block)

    def fingerprinter(self) -> Fingerprinter[Any]:
        """The fingerprinter of this job's documents (their token hashes kept for a
        partition of token sequences)."""
        return Fingerprinter(self.config, token_hashes=self.compact_sets)

    def layout(self) -> Layout:
        """The layout of this job's partitions."""
        method = near_method(self.config.method)
        features = method is not None and method.features is not None
        return layout_for(self.config, features=features, sequences=self.compact_sets)


class _Partition:
    """One partition being written, a document at a time (its shingle sets go to disk as they
    come: :class:`PartitionWriter`), into a folder of this attempt's own, published when
    complete: an attempt killed on a lost Spark executor leaves its folder in the same run
    (removed as debris when a work directory is opened), and may even still be writing it."""

    def __init__(self, job: FingerprintJob, block: int) -> None:
        self.job, self.block, self.rows = job, block, 0
        self.final = job.folder(block)
        self.temporary = self.final.with_name(f"{self.final.name}.{uuid.uuid4().hex}.tmp")
        self.temporary.mkdir(parents=True)
        self.writer = PartitionWriter(self.temporary, job.layout())

    def add(self, prints: DocumentPrints) -> None:
        self.writer.add(prints)
        self.rows += 1

    def publish(self) -> None:
        self.writer.close()
        publish_dir(self.temporary, self.final)
        WorkDir.mark_at(self.job.root, partition_marker(self.job.split.file, self.block),
                        {"rows": self.rows}, folder_files(self.final))
        release_freed()  # the block's arrays


def _write(job: FingerprintJob, block: int, prints: list[DocumentPrints]) -> None:
    """Write one partition of ``prints`` (see :class:`_Partition`)."""
    partition = _Partition(job, block)
    try:
        for found in prints:
            partition.add(found)
        partition.publish()
    finally:
        partition.writer.abort()


class _BlockWriter:
    """Writes the prints of the current block as they come; publishes it when the next begins
    (a block already on disk is counted, not fingerprinted again)."""

    def __init__(self, job: FingerprintJob) -> None:
        self.job = job
        self.sizes: dict[int, int] = {}
        self.block = -1
        self.partition: _Partition | None = None
        self.on_disk = False

    def begin(self, block: int) -> None:
        self.finish()
        self.block = block
        record = read_marker(self.job.root, partition_marker(self.job.split.file, block))
        self.on_disk = record is not None
        if record is not None:
            self.sizes[block] = int(record["rows"])
        else:
            self.partition = _Partition(self.job, block)

    def add(self, prints: DocumentPrints) -> None:
        assert self.partition is not None, "a block begun and not on disk"
        self.partition.add(prints)

    def __enter__(self) -> _BlockWriter:
        return self

    def __exit__(self, *error: object) -> None:
        """A run that fails mid-block closes the block's open files (its folder is debris)."""
        if self.partition is not None:
            self.partition.writer.abort()

    def finish(self) -> None:
        if self.partition is not None:
            self.partition.publish()
            self.sizes[self.block] = self.partition.rows
        self.block, self.partition = -1, None


def fingerprint_split(job: FingerprintJob, documents: Callable[[BlockCursor], Iterator[Document]]
                      | None = None) -> dict[str, Any]:
    """Fingerprint one split into partitions; returns (and marks) its record. ``documents``
    reads the split instead of :func:`read_split` (a copy of a remote file: Spark)."""
    cursor = BlockCursor(job.split.blocks, SourceStats())
    fingerprinter = job.fingerprinter()
    summed = {"extract_summed": 0.0, "fingerprint_summed": 0.0}
    started = time.process_time()
    writer = _BlockWriter(job)
    reading = documents(cursor) if documents else read_split(job.split, cursor, media=job.media,
                                                                   fields=job.fields)
    with writer, sparing_older_objects():
        for doc in reading:
            if cursor.current != writer.block:
                writer.begin(cursor.current)
            if writer.on_disk:
                continue
            prints = fingerprinter(doc)
            summed["extract_summed"] += prints.extract_seconds
            summed["fingerprint_summed"] += prints.fingerprint_seconds
            writer.add(prints)
        writer.finish()
    record = {"index": job.index, "file": job.split.file, "path": job.split.path,
              "blocks": sorted(writer.sizes.items()), "stats": cursor.stats.as_dict(),
              "error_blocks": cursor.error_blocks(),
              "cpu_seconds": round(time.process_time() - started, 4),
              **{name: round(value, 4) for name, value in summed.items()}}
    WorkDir.mark_at(job.root, job.marker, record)
    return record


@dataclass(frozen=True, slots=True)
class BlockTask:
    """One line block of a dealt JSONL file, for a worker (picklable)."""

    job: FingerprintJob
    block: LineBlock

    @property
    def marker(self) -> str:
        return f"{STAGE}/f{self.job.split.file:06d}-b{self.block.index:06d}"


def fingerprint_block(task: BlockTask, documents: Callable[[ReadContext], Iterator[Document]]
                      | None = None) -> dict[str, Any]:
    """Fingerprint one line block into its partition; returns (and marks) its record.
    ``documents`` reads the block's records instead of its lines (rows read by Spark)."""
    job, block = task.job, task.block
    stats = SourceStats()
    stats.files += int(block.index == 0)
    fingerprinter = job.fingerprinter()
    started = time.process_time()
    ctx = ReadContext(stats, media=job.media, fields=job.fields)
    with sparing_older_objects():
        prints = [fingerprinter(doc) for doc in (documents(ctx) if documents else
                                                 read_line_block(block, job.split.path, ctx))]
    if prints:
        _write(job, block.index, prints)
    if block.spool is not None:
        Path(block.spool).unlink(missing_ok=True)
    record = {"index": job.index, "file": job.split.file, "path": job.split.path,
              "blocks": [[block.index, len(prints)]] if prints else [],
              "stats": stats.as_dict(), "error_blocks": [block.index] * len(stats.errors),
              "cpu_seconds": round(time.process_time() - started, 4),
              "extract_summed": round(sum(p.extract_seconds for p in prints), 4),
              "fingerprint_summed": round(sum(p.fingerprint_seconds for p in prints), 4)}
    WorkDir.mark_at(job.root, task.marker, record)
    return record


def fingerprint_task(task: FingerprintJob | BlockTask) -> dict[str, Any]:
    """What a worker runs: a whole split, or one block of a dealt file."""
    if isinstance(task, BlockTask):
        return fingerprint_block(task)
    return fingerprint_split(task)


class _Dealer:
    """Yields the tasks of the pending splits, dealing out the blocks of dealt files (blocks
    already marked are not dealt again); :meth:`finish` marks each dealt file once all its
    blocks have come back."""

    def __init__(self, work: WorkDir, jobs: list[FingerprintJob], spool: Path | None) -> None:
        self.work, self.jobs, self.spool = work, jobs, spool
        self.blocks: dict[int, list[dict[str, Any]]] = {}
        self.dealt: dict[int, int] = {}

    def tasks(self) -> Iterator[FingerprintJob | BlockTask]:
        for job in self.jobs:
            if not job.split.dealt:
                yield job
                continue
            with open(job.split.path, "rb") as raw:
                gz = sniff(read_head(raw), job.split.path, explicit=True).gz
            count = 0
            for block in deal_lines(job.split.path, gz, job.chunk_docs):
                count += 1
                task = BlockTask(job, block)
                record = self.work.done(task.marker)
                if record is not None and partitions_intact(self.work, record):
                    self.blocks.setdefault(job.index, []).append(record)
                elif self.spool is None:
                    yield task
                else:
                    name = f"{partition_name(job.split.file, block.index)}.jsonl"
                    yield BlockTask(job, block.spooled(self.spool / name))
            self.dealt[job.index] = count

    def finish(self, record: dict[str, Any]) -> list[dict[str, Any]]:
        """The split records complete after ``record`` came back."""
        job = next(j for j in self.jobs if j.index == int(record["index"]))
        if not job.split.dealt:
            return [record]
        found = self.blocks.setdefault(job.index, [])
        found.append(record)
        if job.index not in self.dealt or len(found) < self.dealt[job.index]:
            return []  # more blocks to come (or still being dealt: see run_fingerprint)
        merged = {"index": job.index, "path": job.split.path, "records": found}
        self.work.mark(job.marker, merged)
        return [merged]


def warm_up(config: DedupConfig, scratch: Path, *, compact_sets: bool = False) -> None:
    """Fingerprint two small documents in this process and write them as a partition in
    ``scratch`` (then removed; of token sequences with ``compact_sets``), so that worker
    processes forked from it inherit the compiled kernels and the modules pyarrow loads lazily
    (pandas) instead of each loading them (about 0.4 s and 0.4 s of CPU apiece)."""
    job = FingerprintJob(config, InputSplit("warm-up", True), 0, scratch, 1, "html",
                         compact_sets=compact_sets)
    fingerprinter = job.fingerprinter()
    prints = [fingerprinter(Document(id="warm-up", raw=b"one two three four five six",
                                     kind="text")),
              fingerprinter(Document(id="warm-up",
                                     raw=b"<html><body><p>one two three</p></body></html>"))]
    _write(job, 0, prints)
    shutil.rmtree(scratch, ignore_errors=True)


def run_fingerprint(work: WorkDir, jobs: list[FingerprintJob],
                    map_jobs: Callable[[Callable[[Any], dict[str, Any]], Iterator[Any]],
                                       Iterator[dict[str, Any]]],
                    progress: Callable[[int], None] | None = None, *,
                    workers: int = 1, spool: bool = False) -> list[dict[str, Any]]:
    """Fingerprint every split not yet marked done; the records of all splits, in order (a
    dealt file's record lists its blocks' records). With ``spool``, the lines of dealt blocks
    go to the workers through files of the work directory, not with the tasks (for workers
    on this machine: a pipe costs more CPU than the page cache)."""
    records: dict[int, dict[str, Any]] = {}
    pending = []
    for job in jobs:
        record = work.done(job.marker)
        if record is not None and record["path"] == job.split.path and \
                partitions_intact(work, record):
            records[job.index] = record
        else:
            pending.append(job)
    if progress is not None:
        progress(len(records))
    if pending and workers > 1:
        warm_up(pending[0].config, work.root / "warm-up", compact_sets=pending[0].compact_sets)
    folder = work.root / STAGE / "lines" if spool and workers > 1 else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    dealer = _Dealer(work, pending, folder)
    for record in map_jobs(fingerprint_task, dealer.tasks()):
        for done in dealer.finish(record):
            records[int(done["index"])] = done
            if progress is not None:
                progress(len(records))
    for index, count in dealer.dealt.items():  # files whose last blocks came back before the
        if index not in records and len(dealer.blocks.get(index, [])) == count:  # end of dealing
            records[index] = dealer.finish(dealer.blocks[index].pop())[0]
    return [part for job in jobs for part in records[job.index].get("records",
                                                                    [records[job.index]])]


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
