"""One Spark session for a neardup job: built from a master URL, with one-line errors.

PySpark is an optional extra and needs a Java runtime; both are checked before Spark starts, so
that a missing piece is reported as one line naming it, not as a JVM stack trace.
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
    from pyspark.sql import SparkSession

__all__ = ["spark_session"]

APP_NAME = "neardup"


def _check_runtime() -> None:
    try:
        import pyspark  # noqa: F401
    except ImportError as error:
        raise ConfigError("--engine spark needs PySpark: pip install 'neardup[spark]'") from error
    java_home = os.environ.get("JAVA_HOME")
    if shutil.which("java") is None and not (java_home and os.path.isdir(java_home)):
        raise ConfigError("--engine spark needs a Java runtime (java on PATH or JAVA_HOME); "
                          "none was found")


@contextmanager
def spark_session(master: str = "local[2]", partitions: int | None = None,
                  settings: dict[str, str] | None = None) -> Iterator[SparkSession]:
    """A Spark session on ``master``, stopped on exit. ``partitions`` sets the shuffle partition
    count; ``settings`` are further ``spark.*`` options."""
    _check_runtime()
    from pyspark.sql import SparkSession

    if master.startswith("local") and "PYSPARK_PYTHON" not in os.environ:
        os.environ["PYSPARK_PYTHON"] = sys.executable  # the driver's interpreter and packages

    logging = f"-Dlog4j.configurationFile={Path(__file__).with_name('log4j2.properties')}"
    builder = (SparkSession.builder.master(master).appName(APP_NAME)
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.driver.extraJavaOptions", logging)
               .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    if partitions is not None:
        builder = builder.config("spark.sql.shuffle.partitions", str(partitions))
    for key, value in (settings or {}).items():
        builder = builder.config(key, value)
    try:
        session = builder.getOrCreate()
    except Exception as error:  # the JVM failed to start: one line, not a Java stack trace
        raise ConfigError(f"Spark could not start on master {master!r}: "
                          f"{str(error).splitlines()[0] if str(error) else type(error).__name__}"
                          ) from error
    try:
        yield session
    finally:
        session.stop()
