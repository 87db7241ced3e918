"""Stage 1 on Spark: the fingerprint tasks of the local engine, mapped by Spark tasks.

The driver lists the input splits exactly as the local engine does (the same files, blocks and
dealt line blocks, so the same partitions and document numbers); each Spark task runs
:func:`neardup.engine.fingerprint.fingerprint_task` on one split or block: it reads whole files
with the project's own readers and writes its partitions into the work directory, which must be
on a file system every executor shares with the driver. Only the small split records (sizes,
source counts, error lines) come back. Tasks are submitted in waves of at most
``WAVE_TASKS`` per core and ``WAVE_BYTES`` of dealt lines, so the line blocks of a dealt file
(which carry their lines) are never all held by the driver; a Spark task runs a few of them in
turn (many small files make many small tasks). The lines of a dealt block go to the tasks
through a file of the work directory (``fingerprint/lines``, removed once its wave is done), not
through the driver's JVM, whose memory then holds no document. Inputs given as URIs are read
through Spark instead (:mod:`neardup.engine.spark.sources`).

Each task of a wave is a Spark task of its own, so that Spark hands the next one to whichever
core is free, as the local engine's pool does: with a few Spark tasks of several splits each, the
work was dealt before it ran: nine splits (eight files and a file of labels, skipped) made four
Spark tasks of 2, 2, 2 and 3 splits, so one core ran five files while the other ran three. A
Spark task costs milliseconds with the Python workers reused.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.engine.fingerprint import STAGE, BlockTask, FingerprintJob, partition_name
from neardup.engine.spark.session import sql_session
from neardup.methods.workers import Mapper
from neardup.sources.lineblocks import LineBlock

if TYPE_CHECKING:
    from pyspark import SparkContext

    from neardup.engine.spark.inputs import RemoteFile

__all__ = ["spark_mapper"]

WAVE_TASKS = 32
WAVE_BYTES = 256 << 20


def _waves(tasks: Iterator[Any], most: int) -> Iterator[list[Any]]:
    """``tasks`` in lists of at most ``most`` tasks and about ``WAVE_BYTES`` of dealt lines."""
    wave: list[Any] = []
    carried = 0
    for task in tasks:
        wave.append(task)
        carried += len(task.block.data) if isinstance(task, BlockTask) else 0
        if len(wave) >= most or carried >= WAVE_BYTES:
            yield wave
            wave, carried = [], 0
    if wave:
        yield wave


def spark_mapper(context: SparkContext, remote: dict[str, RemoteFile] | None = None,
                 partitions: int = 2) -> Callable[[int], Mapper]:
    """A mapper for :func:`neardup.engine.fingerprint.run_fingerprint` whose tasks run on Spark
    (the ``workers`` argument of the local mapper is ignored: Spark's parallelism counts). The
    splits of ``remote`` files (URI inputs) are read through Spark
    (:func:`neardup.engine.spark.sources.read_remote`, shuffling into ``partitions``)."""
    cores = max(1, context.defaultParallelism)
    remote = remote or {}

    def make(_workers: int) -> Mapper:
        def run(function: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
            held: list[FingerprintJob] = []
            local = (task for task in tasks if not _held(task, remote, held))
            for wave in _waves(map(_spooled, local), WAVE_TASKS * cores):
                yield from context.parallelize(wave, len(wave)).map(
                    partial(_unspooled, function)).collect()
                for task in wave:
                    if isinstance(task, BlockTask) and task.block.spool is not None:
                        Path(task.block.spool).unlink(missing_ok=True)
            if held:
                from neardup.engine.spark.sources import read_remote

                yield from read_remote(sql_session(context, partitions), held, remote,
                                       partitions)
        return run
    return make


def _spooled(task: Any) -> Any:
    """A dealt block with its lines in a file of the work directory instead of the task."""
    if not isinstance(task, BlockTask) or task.block.spool is not None:
        return task
    folder = task.job.root / STAGE / "lines"
    folder.mkdir(parents=True, exist_ok=True)
    name = f"{partition_name(task.job.split.file, task.block.index)}.jsonl"
    return BlockTask(task.job, task.block.spooled(folder / name))


def _unspooled(function: Callable[[Any], Any], task: Any) -> Any:
    """Executor: ``function`` of ``task``, a spooled block's lines read first (the file stays
    for a retried attempt; the driver removes it after the wave)."""
    if isinstance(task, BlockTask) and task.block.spool is not None:
        block = task.block
        task = BlockTask(task.job, LineBlock(block.index, block.first, block.lines(),
                                             block.failure))
    return function(task)


def _held(task: Any, remote: dict[str, RemoteFile], held: list[FingerprintJob]) -> bool:
    """Whether ``task`` reads a URI input (then it is kept in ``held`` for Spark's readers)."""
    if isinstance(task, FingerprintJob) and task.split.path in remote:
        held.append(task)
        return True
    return False
