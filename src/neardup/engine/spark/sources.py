"""Stage 1 on Spark for inputs given as URIs: the bytes come through Spark, not a shared path.

- WARC, ARC, HTML, text and gzipped JSONL: one task per file. ``SparkContext.binaryFiles`` hands
  the task the file's bytes; the task writes them to a scratch file on its own disk and reads it
  with the local engine's reader (:func:`neardup.sources.copies.read_copy`), so the documents,
  counts and error lines are exactly those of a local read.
- Plain JSONL: split across tasks by Hadoop's ``TextInputFormat`` (lines end at ``\\n`` only,
  as locally). A first job counts the lines of every split, so each line gets its number in the
  file, and notes the lines holding U+FFFD: Hadoop decodes bytes that are not UTF-8 to it, so
  the driver reads those lines' bytes again and the ones that are not UTF-8 reach the parser as
  the file holds them (counted ``json-error`` as locally). The lines are then shuffled by block
  (``chunk_docs`` lines, blank ones included, as locally) and each block is parsed by
  :func:`neardup.engine.fingerprint.fingerprint_block`.
- Parquet: Spark's Parquet reader; each row's number is ``_metadata.row_index``; the files of
  one schema are read by one job (up to ``_FILES_PER_JOB``), their rows shuffled by (file,
  block), and each block becomes documents as locally (scalar columns only). Spark's reader
  fails the job on damaged data; each file of the job is then tried alone, and the damaged one
  is read again whole by one task with the local reader (through a scratch copy), which skips
  and counts the damaged row group as locally. Blocks fingerprinted before the failure are kept.
- A file whose name starts with ``_`` or ``.`` (which every Hadoop input format skips, even when
  named alone): the driver copies it to its scratch disk through Hadoop's ``FileSystem`` and
  reads it there with the local reader, whatever its format.

Every task writes its fingerprint partitions into the work directory and returns the same
records as the local engine, so the link stage numbers the documents by (file, block, record)
exactly as locally. A bad line or row is skipped and counted on the executor.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.engine.fingerprint import (
    BlockTask,
    FingerprintJob,
    fingerprint_block,
    fingerprint_split,
)
from neardup.engine.spark.failure import is_lost_worker, is_spark_error
from neardup.engine.spark.inputs import RemoteFile, hadoop_path, java_cause
from neardup.engine.spark.parquet import parquet_blocks, parquet_schema
from neardup.engine.workdir import WorkDir
from neardup.sources.copies import read_copy
from neardup.sources.lineblocks import LineBlock
from neardup.sources.sniff import Sniffed
from neardup.sources.stats import SourceStats

if TYPE_CHECKING:
    from pyspark import RDD
    from pyspark.sql import SparkSession

__all__ = ["read_remote"]

_TEXT_INPUT = "org.apache.hadoop.mapreduce.lib.input.TextInputFormat"
_FILES_PER_JOB = 64
"""Parquet files of one schema read by one Spark job (a job per file costs its start-up on
each of thousands of shards; a union of many scans makes a large plan)."""
_CODECS = (".gz", ".bz2", ".deflate", ".snappy", ".lz4", ".zst")
"""Names Hadoop's line reader would decompress: a plain file named so is read whole."""


def _record(job: FingerprintJob, stats: SourceStats) -> dict[str, Any]:
    """The record of a split read by the driver alone (no partition)."""
    return {"index": job.index, "file": job.split.file, "path": job.split.path, "blocks": [],
            "stats": stats.as_dict(), "error_blocks": [0] * len(stats.errors),
            "cpu_seconds": 0.0, "extract_summed": 0.0, "fingerprint_summed": 0.0}


def _unread(job: FingerprintJob, remote: RemoteFile, line: str | None = None) -> dict[str, Any]:
    """A file not read: unreadable (``line`` or the cause found on opening it), binary or of
    unknown format."""
    stats = SourceStats()
    if remote.found is None or line is not None:
        stats.skip("unreadable-file")
        stats.error(line or f"{remote.uri}: cannot read ({remote.problem})")
    else:
        stats.skip("binary" if remote.found.fmt == "binary" else "unknown-format")
    record = _record(job, stats)
    WorkDir.mark_at(job.root, job.marker, record)
    return record


def _merged(job: FingerprintJob, blocks: list[dict[str, Any]]) -> dict[str, Any]:
    """One split's record from the records of its blocks (as a dealt file's)."""
    found = sorted(blocks, key=lambda record: [block for block, _ in record["blocks"]] or [-1])
    if not any(int(record["stats"]["files"]) for record in found):
        stats = SourceStats()
        stats.files = 1  # a readable file without any record
        found.insert(0, _record(job, stats))
    merged = {"index": job.index, "path": job.split.path, "records": found}
    WorkDir.mark_at(job.root, job.marker, merged)
    return merged


def _whole_task(job: FingerprintJob, found: Sniffed, item: tuple[str, bytes]) -> dict[str, Any]:
    """Executor: fingerprint one whole file from its bytes (through a scratch copy)."""
    with tempfile.NamedTemporaryFile(prefix="neardup-input-") as copy:
        copy.write(item[1])
        copy.flush()
        return _read_whole(job, found, copy.name)


def _read_whole(job: FingerprintJob, found: Sniffed, copy: str) -> dict[str, Any]:
    """Fingerprint one whole file from ``copy``, a local copy of its bytes."""
    return fingerprint_split(job, partial(read_copy, copy, job.split.path, found, media=job.media))


def _hidden(uri: str) -> bool:
    """Whether Hadoop's input formats skip the file (its name starts with ``_`` or ``.``)."""
    return uri.rsplit("/", 1)[-1].startswith(("_", "."))


def _driver_files(session: SparkSession, jobs: list[tuple[FingerprintJob, Sniffed]]
                  ) -> Iterator[dict[str, Any]]:
    """The records of files that no Hadoop input format reads (:func:`_hidden`): the driver
    copies each to its own scratch disk through Hadoop's FileSystem and reads it there."""
    for job, found in jobs:
        fs, path = hadoop_path(session, job.split.path)
        with tempfile.TemporaryDirectory(prefix="neardup-input-") as scratch:
            copy = Path(scratch, "copy")
            fs.copyToLocalFile(False, path, hadoop_path(session, copy.as_uri())[1], True)
            yield _read_whole(job, found, str(copy))  # source kept; no .crc file written


def _whole_files(session: SparkSession, jobs: list[tuple[FingerprintJob, Sniffed]]
                 ) -> list[dict[str, Any]]:
    context = session.sparkContext
    rdds = [context.binaryFiles(job.split.path).map(partial(_whole_task, job, found))
            for job, found in jobs]
    records = context.union(rdds).collect() if rdds else []
    seen = {int(record["index"]) for record in records}
    missing = [_unread(job, RemoteFile(job.split.path, True, found), f"{job.split.path}: "
                       "cannot read (Spark's binaryFiles returned no bytes for it)")
               for job, found in jobs if job.index not in seen]
    return records + missing


def _count(lines: Iterable[tuple[int, str]]) -> Iterator[tuple[int, list[tuple[int, int]]]]:
    """The number of lines of one Hadoop split, and (index in the split, byte offset) of those
    holding U+FFFD: Hadoop writes it for bytes that are not UTF-8."""
    count, suspects = 0, []
    for offset, line in lines:
        if "\ufffd" in line:
            suspects.append((count, offset))
        count += 1
    yield count, suspects


def _number(owners: list[int], firsts: list[int], split: int,
            lines: Iterable[tuple[int, str]]) -> Iterator[tuple[tuple[int, int], str]]:
    """((file, line number), line) of the lines of one Hadoop split."""
    owner, first = owners[split], firsts[split]
    for index, (_, line) in enumerate(lines):
        yield (owner, first + index), line


def _line_block_of(size: int, key: tuple[int, int]) -> int:
    return key[0] * 1_000_003 + (key[1] - 1) // size


def _line_blocks(jobs: list[FingerprintJob], raw: dict[tuple[int, int], bytes],
                 items: Iterable[tuple[tuple[int, int], str]]) -> Iterator[dict[str, Any]]:
    """Executor: the sorted lines of whole blocks, each block fingerprinted as a dealt one
    (``raw``: the bytes of the lines that are not UTF-8, as the file holds them)."""
    current: tuple[int, int] | None = None
    lines: list[bytes] = []

    def flush() -> dict[str, Any]:
        assert current is not None
        job = jobs[current[0]]
        block = LineBlock(current[1], current[1] * job.chunk_docs + 1, b"".join(lines))
        return fingerprint_block(BlockTask(job, block))

    for (owner, number), line in items:
        key = (owner, (number - 1) // jobs[owner].chunk_docs)
        if key != current and current is not None:
            yield flush()
            lines = []
        current = key
        text = raw.get((owner, number))
        lines.append((text if text is not None else line.encode("utf-8", "surrogateescape"))
                     + b"\n")
    if current is not None:
        yield flush()


def _raw_line(session: SparkSession, uri: str, offset: int) -> bytes:
    """The bytes of the line at ``offset`` of ``uri`` (up to ``\\n``), read on the driver."""
    fs, path = hadoop_path(session, uri)
    stream = fs.open(path)
    found = b""
    try:
        stream.seek(offset)
        while b"\n" not in found:
            chunk = bytes(stream.readNBytes(1 << 16))
            if not chunk:
                break
            found += chunk
    finally:
        stream.close()
    return found.split(b"\n", 1)[0]


def _not_utf8(session: SparkSession, jobs: list[FingerprintJob], owners: list[int],
              firsts: list[int], suspects: list[list[tuple[int, int]]]
              ) -> dict[tuple[int, int], bytes]:
    """(file, line number) -> bytes of the lines Hadoop decoded with replacement characters
    that are not UTF-8 in the file (a line holding U+FFFD itself is left as read)."""
    raw: dict[tuple[int, int], bytes] = {}
    for split, found in enumerate(suspects):
        for index, offset in found:
            line = _raw_line(session, jobs[owners[split]].split.path, offset)
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                raw[(owners[split], firsts[split] + index)] = line
    return raw


def _numbered_lines(session: SparkSession, jobs: list[FingerprintJob]
                    ) -> tuple[RDD[Any], dict[tuple[int, int], bytes]]:
    context = session.sparkContext
    conf = {"textinputformat.record.delimiter": "\n"}
    rdds: list[RDD[tuple[int, str]]] = [
        context.newAPIHadoopFile(job.split.path, _TEXT_INPUT, "org.apache.hadoop.io.LongWritable",
                                 "org.apache.hadoop.io.Text", conf=conf)
        for job in jobs]
    union = context.union(rdds)
    owners = [k for k, rdd in enumerate(rdds) for _ in range(rdd.getNumPartitions())]
    counts = union.mapPartitions(_count).collect()
    firsts: list[int] = []
    running: dict[int, int] = {}
    for owner, (count, _) in zip(owners, counts, strict=True):
        firsts.append(running.get(owner, 0) + 1)
        running[owner] = running.get(owner, 0) + count
    raw = _not_utf8(session, jobs, owners, firsts, [found for _, found in counts])
    return union.mapPartitionsWithIndex(partial(_number, owners, firsts)), raw


def _line_files(session: SparkSession, jobs: list[FingerprintJob],
                partitions: int) -> list[dict[str, Any]]:
    if not jobs:
        return []
    numbered, raw = _numbered_lines(session, jobs)
    size = jobs[0].chunk_docs
    blocks = numbered.repartitionAndSortWithinPartitions(partitions, partial(_line_block_of, size))
    return blocks.mapPartitions(partial(_line_blocks, jobs, raw)).collect()


def read_remote(session: SparkSession, jobs: list[FingerprintJob], remote: dict[str, RemoteFile],
                partitions: int) -> Iterator[dict[str, Any]]:
    """The records of the splits of URI inputs, each file read by Spark as its format wants."""
    whole: list[tuple[FingerprintJob, Sniffed]] = []
    hidden: list[tuple[FingerprintJob, Sniffed]] = []
    lines: list[FingerprintJob] = []
    tables: list[FingerprintJob] = []
    for job in jobs:
        found = remote[job.split.path].found
        if found is None or found.fmt in ("binary", "unknown"):
            yield _unread(job, remote[job.split.path])
        elif _hidden(job.split.path):
            hidden.append((job, found))
        elif found.fmt == "parquet":
            tables.append(job)
        elif found.fmt == "jsonl" and not found.gz and not job.split.path.endswith(_CODECS):
            lines.append(job)
        else:
            whole.append((job, found))
    yield from _whole_files(session, whole)
    yield from _driver_files(session, hidden)
    yield from _by_split(lines, _line_files(session, lines, partitions))
    yield from _table_files(session, tables, remote, partitions)


def _table_files(session: SparkSession, jobs: list[FingerprintJob],
                 remote: dict[str, RemoteFile], partitions: int) -> Iterator[dict[str, Any]]:
    """The records of Parquet files: those of one schema read together, by one Spark job for
    each :data:`_FILES_PER_JOB` of them."""
    groups: dict[str, list[FingerprintJob]] = {}
    for job in jobs:
        try:
            schema = parquet_schema(session, job)
        except Exception as error:  # the footer cannot be read: counted, as locally
            if not is_spark_error(error):
                raise
            yield _unread(job, remote[job.split.path], f"{job.split.path}: not a readable "
                          f"Parquet file ({java_cause(error)})")
            continue
        groups.setdefault(schema, []).append(job)
    for group in groups.values():
        for start in range(0, len(group), _FILES_PER_JOB):
            yield from _table_group(session, group[start:start + _FILES_PER_JOB], remote,
                                    partitions)


def _table_group(session: SparkSession, jobs: list[FingerprintJob],
                 remote: dict[str, RemoteFile], partitions: int) -> Iterator[dict[str, Any]]:
    """The records of Parquet files of one schema, by Spark's reader. When it fails on damaged
    data, each file is tried alone, and the damaged one is read whole by one task with the
    local reader."""
    try:
        blocks = parquet_blocks(session, jobs, partitions)
    except Exception as error:  # damaged data: read as the local engine reads it
        if not is_spark_error(error) or is_lost_worker(error):
            raise
        if len(jobs) > 1:
            for job in jobs:
                yield from _table_group(session, [job], remote, partitions)
            return
        found = remote[jobs[0].split.path].found
        assert found is not None
        yield from _whole_files(session, [(jobs[0], found)])
        return
    yield from _by_split(jobs, blocks)


def _by_split(jobs: list[FingerprintJob], blocks: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    found: dict[int, list[dict[str, Any]]] = {job.index: [] for job in jobs}
    for record in blocks:
        found[int(record["index"])].append(record)
    for job in jobs:
        yield _merged(job, found[job.index])
