"""A batch run with its parallel stages on Spark: ``neardup dedup --engine spark``.

The run is :func:`neardup.engine.run.run_engine` with a Spark :class:`Executor`: fingerprinting
(:mod:`.fingerprint`), candidates and verification for simhash and minhash (:mod:`.near`) and
connected components (:mod:`.components`) run as Spark jobs; the stages whose result must be
exactly the local one and that are bounded on the driver run there with the local engine's
functions (catalog and revisit links, exact levels, templates, the in-memory near methods, the
keep policy, the output writer). Work files stay in the run's work directory, which must be on a
file system the executors share with the driver. Outputs, document numbers and summary (but its
``engine`` and ``seconds``) equal those of the local engine.
"""

from __future__ import annotations

import dataclasses
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neardup.config import DedupConfig
from neardup.engine.run import EngineOptions, Executor, run_engine
from neardup.engine.spark.components import spark_components
from neardup.engine.spark.failure import as_job_error
from neardup.engine.spark.fingerprint import spark_mapper
from neardup.engine.spark.inputs import RemoteFile, Resolved, is_uri, resolve_inputs
from neardup.engine.spark.near import spark_near
from neardup.engine.spark.retries import RetryWatch
from neardup.engine.spark.session import spark_context, sql_session
from neardup.engine.workdir import write_atomic
from neardup.sources.context import Media

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

__all__ = ["SparkOptions", "run_in_context", "run_in_session", "run_spark", "spark_executor"]


@dataclasses.dataclass(frozen=True, slots=True)
class SparkOptions:
    """Where and how wide the Spark stages run."""

    master: str = "local[2]"
    partitions: int | None = None
    """Shuffle partitions (None: twice Spark's default parallelism)."""
    settings: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        if not self.master:
            raise ValueError("SparkOptions.master must not be empty")
        if self.partitions is not None and self.partitions < 1:
            raise ValueError(f"SparkOptions.partitions={self.partitions!r}: must be >= 1")


def spark_executor(context: SparkContext, partitions: int,
                   remote: dict[str, RemoteFile] | None = None,
                   budget: int | None = None) -> Executor:
    """The stages of a run on ``context``, shuffling into ``partitions`` partitions (``remote``:
    the files of the URI inputs, read through Spark; ``budget``: the run's in-memory bytes,
    which bound the component edges the driver finishes itself)."""
    stamps = {uri: file.stamp for uri, file in (remote or {}).items() if file.stamp is not None}
    return Executor("spark", spark_mapper(context, remote, partitions),
                    spark_near(context, partitions),
                    spark_components(context, budget, partitions),
                    {"master": context.master, "parallelism": context.defaultParallelism,
                     "partitions": partitions}, stamps)


def run_spark(inputs: list[str], out: Path, config: DedupConfig, options: EngineOptions,
              spark: SparkOptions, *, media: Media = "html", fmt: str = "parquet",
              progress: Callable[[str, int, int], None] | None = None,
              against: Path | None = None) -> dict[str, Any]:
    """Run every stage with Spark on ``spark.master``; returns the summary. A failed Spark job
    raises :class:`SparkJobError` with one line naming its cause."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
        with spark_context(spark.master, spark.partitions, dict(spark.settings)) as context:
            return run_in_context(context, inputs, out, config, options, spark.partitions,
                                  media=media, fmt=fmt, progress=progress, against=against)


def run_in_session(session: SparkSession, inputs: list[str], out: Path, config: DedupConfig,
                   options: EngineOptions, partitions: int | None = None,
                   **keywords: Any) -> dict[str, Any]:
    """:func:`run_in_context` on the context of a session already open."""
    return run_in_context(session.sparkContext, inputs, out, config, options, partitions,
                          **keywords)


def run_in_context(context: SparkContext, inputs: list[str], out: Path, config: DedupConfig,
                   options: EngineOptions, partitions: int | None = None,
                   **keywords: Any) -> dict[str, Any]:
    """:func:`run_spark` on a context already open (``keywords``: those of ``run_engine``).
    Inputs may be URIs and globs of any file system Spark reads
    (:mod:`neardup.engine.spark.inputs`); the summary lists the inputs as given."""
    parallelism = context.defaultParallelism
    partitions = partitions or 2 * parallelism
    options = dataclasses.replace(options, workers=max(1, parallelism))
    watch = RetryWatch(context)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "PySpark does not yet fully support", FutureWarning)
            resolved = (resolve_inputs(sql_session(context, partitions), inputs)
                        if any(is_uri(path) for path in inputs) else Resolved(tuple(inputs)))
            executor = spark_executor(context, partitions, resolved.remote, options.budget)
            summary = run_engine(list(resolved.paths), out, config, options, executor=executor,
                                 **keywords)
    except Exception as error:
        if (failed := as_job_error(error)) is not None:
            raise failed from error
        raise
    if list(resolved.paths) != list(inputs):
        summary["inputs"] = list(inputs)
    summary["engine"]["spark"].update(_spark_facts(watch, options.work))
    write_atomic(out / "summary.json", (json.dumps(summary, indent=2) + "\n").encode())
    return summary


def _spark_facts(watch: RetryWatch, work: Path) -> dict[str, Any]:
    """What Spark retried in this run, and the component stage's rounds from its report in the
    work directory (this run's, or that of the run it resumed)."""
    facts: dict[str, Any] = {"retries": watch.report()}
    report = work / "cluster" / "spark-components.json"
    if report.exists():
        components = json.loads(report.read_text())
        facts["components"] = {key: components[key] for key in
                               ("pairs", "rounds", "open_edges", "driver_edges", "driver_bound")}
    return facts
