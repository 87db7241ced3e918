"""One Spark context (or session) for a neardup job: built from a master URL, with one-line errors.

PySpark is an optional extra and needs a Java runtime; both are checked before Spark starts, so
that a missing piece is reported as one line naming it, not as a JVM stack trace.

A ``dedup`` run starts a :func:`spark_context` alone: its stages are RDD jobs, and Spark's SQL
session (DataFrames: the component rounds of a large graph, inputs given as URIs) is made by
:func:`sql_session` only when a stage needs it. Making it loads Catalyst's classes into the
driver's JVM: 5 to 9 s of wall and CPU on this machine, more than a 100k-document run's
candidate and verification stages. The driver's JVM compiles with the client compiler only
(``-XX:TieredStopAtLevel=1``): it schedules tasks and moves the Python workers' bytes, work
that never pays for the server compiler's threads during its start (measured: 3 to 8 s of
wall less to the first job). The executors' Python workers are forked from a daemon that has
loaded the stages' modules and kernels (:mod:`neardup.engine.spark.daemon`).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from neardup.errors import ConfigError

if TYPE_CHECKING:
    from pyspark import SparkContext
    from pyspark.sql import SparkSession

__all__ = ["spark_context", "spark_session", "sql_session"]

APP_NAME = "neardup"
DRIVER_JIT = "-XX:TieredStopAtLevel=1"
DAEMON = "neardup.engine.spark.daemon"
"""The executors' Python daemon: PySpark's, with the stages' modules and kernels loaded before
it forks the workers (:mod:`neardup.engine.spark.daemon`)."""


def _check_runtime() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError as error:
        raise ConfigError("--engine spark needs PySpark: pip install 'neardup[spark]'") from error
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and os.path.isdir(java_home)):
        raise ConfigError("--engine spark needs a Java runtime (java on PATH or JAVA_HOME); "
                          "none was found")


def _settings(master: str, partitions: int | None,
              settings: dict[str, str] | None) -> dict[str, str]:
    """Every option of a neardup job's Spark (``settings`` last, so that they win)."""
    if master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        os.environ["PYSPARK_PYTHON"] = sys.executable  # the driver's interpreter and packages
    logging = f"-Dlog4j.configurationFile={Path(__file__).with_name('log4j2.properties')}"
    chosen = {"spark.master": master, "spark.app.name": APP_NAME,
              "spark.ui.enabled": "false", "spark.ui.showConsoleProgress": "false",
              "spark.driver.extraJavaOptions": f"{logging} {DRIVER_JIT}",
              "spark.python.daemon.module": DAEMON,
              "spark.sql.execution.arrow.pyspark.enabled": "true"}
    if partitions is not None:
        chosen["spark.sql.shuffle.partitions"] = str(partitions)
    return chosen | (settings or {})


def _started(master: str, error: Exception) -> ConfigError:
    """The JVM failed to start: one line, not a Java stack trace."""
    return ConfigError(f"Spark could not start on master {master!r}: "
                       f"{str(error).splitlines()[0] if str(error) else type(error).__name__}")


@contextmanager
def spark_context(master: str = "local[2]", partitions: int | None = None,
                  settings: dict[str, str] | None = None) -> Iterator[SparkContext]:
    """A Spark context on ``master`` (the one already active, if any), stopped on exit with the
    SQL session made on it, if one was. ``partitions`` sets the SQL shuffle partition count;
    ``settings`` are further ``spark.*`` options."""
    _check_runtime()
    from pyspark import SparkConf, SparkContext

    conf = SparkConf().setAll(list(_settings(master, partitions, settings).items()))
    try:
        context = SparkContext.getOrCreate(conf)
    except Exception as error:
        raise _started(master, error) from error
    try:
        yield context
    finally:
        _stop(context)


def _stop(context: SparkContext) -> None:
    from pyspark.sql import SparkSession

    session = SparkSession._instantiatedSession
    if session is not None and session.sparkContext is context:
        session.stop()  # the context and the session's own state
    else:
        context.stop()


def sql_session(context: SparkContext, partitions: int | None = None) -> SparkSession:
    """The SQL session on ``context``: the one open, or one made now (``partitions``: its
    shuffle partition count, when given)."""
    from pyspark.sql import SparkSession

    session = SparkSession.builder.getOrCreate()
    if session.sparkContext is not context:
        raise RuntimeError("sql_session: another Spark context is active")
    if partitions is not None:
        session.conf.set("spark.sql.shuffle.partitions", str(partitions))
    return session


@contextmanager
def spark_session(master: str = "local[2]", partitions: int | None = None,
                  settings: dict[str, str] | None = None) -> Iterator[SparkSession]:
    """A Spark session on ``master`` (the context of :func:`spark_context` with its SQL
    session), stopped on exit. ``partitions`` sets the shuffle partition count; ``settings``
    are further ``spark.*`` options."""
    with spark_context(master, partitions, settings) as context:
        yield sql_session(context, partitions)
