"""Manku's batch mode on Spark: the stored fingerprints scanned in parallel chunks.

The driver fingerprints nothing here: it receives the new documents' prints and broadcasts their
simhashes (as a :class:`PermutedTables`; the query file is small, the stored file is large, as
in the paper's MapReduce job). The stored fingerprints are cut into slices
(:func:`neardup.store.batch.stored_chunks`), one Spark task per slice: each memory-maps its
slice of the segment's arrays on the store's path (a shared file system on a cluster), after
checking the segment's files against its listing and the manifest, and runs
``PermutedTables.query_batch`` of the broadcast queries against it: the slice sorted under each
table's permutation, each query looked up by its table prefix, every (query, stored document)
within ``k`` bits reported once. The driver merges the tasks' pairs, removes any repeat and
sorts them: the pairs equal those of the store's own ``query_batch``.

The driver opened the store with its checksums verified, and holds the readers' lock while the
job runs, so no writer removes a segment the tasks still read. A task never raises: a damaged
or missing file comes back as a value, and the driver raises it as one line naming the file.
"""

from __future__ import annotations

import math
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from neardup import errors
from neardup.engine.spark.session import spark_session
from neardup.errors import ConfigError, NeardupError
from neardup.index.tables import Matches, PermutedTables
from neardup.store.batch import (
    QueryPrint,
    StoredChunk,
    chunk_fingerprints,
    indexed,
    stored_chunks,
)
from neardup.store.formats import readers_sharing
from neardup.store.settings import plans

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from neardup.store import Store

__all__ = ["chunk_size", "failure_line", "merge_pairs", "spark_pairs"]

MAX_CHUNK = 1 << 20
"""At most this many stored fingerprints per task (8 MiB of them, plus the task's sorting)."""

QUIET = {"spark.ui.showConsoleProgress": "false"}
_Result = tuple[str, Any, Any, Any]


def chunk_size(stored: int, partitions: int) -> int:
    """Slices of the stored fingerprints: ``partitions`` of them, none above ``MAX_CHUNK``."""
    return max(1, min(MAX_CHUNK, math.ceil(stored / max(partitions, 1))))


def _scan(root: str, chunk: StoredChunk, queries: PermutedTables, k: int) -> _Result:
    """One task: the (query position, stored doc, distance) of one slice, or the error."""
    try:
        values, ids = chunk_fingerprints(Path(root), chunk)
        found = queries.query_batch(values, k)   # the slice sorted per table, queries probe it
        return ("ok", found.id, ids[found.query], found.distance)
    except NeardupError as error:
        return ("error", type(error).__name__, str(error), None)
    except Exception as error:  # any other failure on an executor: one line, not a trace
        return ("error", "NeardupError", f"{root}: {type(error).__name__}: {error}", None)


def _error(kind: str, line: str) -> NeardupError:
    """A task's error as the driver raises it: its own class when that takes one line."""
    found = getattr(errors, kind, None)
    if isinstance(found, type) and issubclass(found, NeardupError):
        try:
            return found(line)
        except TypeError:           # a class built from several fields (SourceError, ...)
            pass
    return NeardupError(line)


def merge_pairs(results: list[_Result]) -> Matches:
    """The tasks' pairs as one sorted set (each (query, doc) once); a task's error raised."""
    parts = []
    for status, first, second, third in results:
        if status != "ok":
            raise _error(str(first), str(second))
        parts.append(Matches(np.asarray(first, dtype=np.int64),
                             np.asarray(second, dtype=np.int64),
                             np.asarray(third, dtype=np.int64)))
    merged = Matches.concat(parts).sorted()
    if not len(merged):
        return merged
    keep = np.ones(len(merged), dtype=np.bool_)
    keep[1:] = (merged.query[1:] != merged.query[:-1]) | (merged.id[1:] != merged.id[:-1])
    return Matches(merged.query[keep], merged.id[keep], merged.distance[keep])


def spark_pairs(store: Store, prints: list[QueryPrint], k: int, master: str = "local[2]",
                partitions: int | None = None, session: SparkSession | None = None) -> Matches:
    """Every (query position, stored doc, distance) within ``k`` bits, found by Spark tasks
    that scan the stored fingerprints in slices; sorted by query, distance, doc. Runs in
    ``session`` if given, else in a session of its own on ``master``."""
    if session is not None:
        return _scan_store(session, store, prints, k, partitions)
    # PySpark starts its Python workers with $PYSPARK_PYTHON, else a "python3" on PATH that
    # may lack neardup: default it to this interpreter (a cluster's own setting is kept).
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    with spark_session(master, partitions, QUIET) as own:
        own.sparkContext.setLogLevel("ERROR")
        return _scan_store(own, store, prints, k, partitions)


def _scan_store(session: SparkSession, store: Store, prints: list[QueryPrint], k: int,
                partitions: int | None) -> Matches:
    context = session.sparkContext
    values, positions = indexed(prints)
    with readers_sharing(store.root):
        chunks = _chunks(store, partitions or context.defaultParallelism)
        if not values.size or not chunks:
            return Matches.empty()
        tables = context.broadcast(PermutedTables.build(plans(store.config), values,
                                                        positions))
        root = str(store.root)
        try:
            results = (context.parallelize(chunks, len(chunks))
                       .map(lambda chunk: _scan(root, chunk, tables.value, k)).collect())
        except Exception as error:  # the job itself failed (a lost executor, a dead JVM)
            raise ConfigError(f"Spark job on {context.master!r} failed: "
                              f"{failure_line(error)}") from error
        finally:
            tables.unpersist()
    return merge_pairs(results)


def failure_line(error: Exception) -> str:
    """One line for a failed job: the Python error a worker raised (the last ``XError: ...``
    line of its traceback) when there is one, else the first line of the message."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"^[A-Za-z_.]*(Error|Exception): ", line)]
    return raised[-1] if raised else lines[0] if lines else type(error).__name__


def _chunks(store: Store, slices: int) -> list[StoredChunk]:
    stored = sum(entry.count for entry in store.segments) + store.index.delta_size
    return stored_chunks(store, chunk_size(stored, slices)) if stored else []
