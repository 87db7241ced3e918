"""A Spark failure as one line naming its cause.

A job that fails on an executor reaches the driver as a Java exception whose text holds the
executor's Python traceback or the scheduler's reason (a Python worker that died, a lost
executor, a task failing too many times); :func:`failure_line` picks the line that names the
cause.
"""

from __future__ import annotations

import re

from neardup.errors import NeardupError

__all__ = ["SparkJobError", "as_job_error", "failure_line", "is_lost_worker", "is_spark_error"]


class SparkJobError(NeardupError):
    """A Spark job failed; the message is one line naming the cause."""


_PYTHON_ERROR = re.compile(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception)): (.+)$")
_REASON = re.compile(r"Job aborted due to stage failure: (.+?)(?:$|,? most recent failure| Driver)",
                     re.IGNORECASE | re.MULTILINE)
_LOST = re.compile(r"(Python worker exited unexpectedly \(crashed\)|ExecutorLostFailure \([^\n]*?\)"
                   r"|Executor heartbeat timed out[^\n.]*)")
_WHERE = re.compile(r"Lost task (\S+) in stage (\S+) \(TID \d+\) \(([^)]*)\)")


def is_spark_error(error: BaseException) -> bool:
    """Whether ``error`` comes from Spark or its Java gateway (not from neardup itself)."""
    module = type(error).__module__
    return module.startswith(("py4j", "pyspark"))


def is_lost_worker(error: BaseException) -> bool:
    """Whether a Spark job failed because a Python worker or an executor was lost (not because
    of what a task read)."""
    return bool(_LOST.search(str(error)))


def failure_line(error: BaseException) -> str:
    """One line naming why a Spark job failed."""
    text = str(error)
    python = [match for line in text.splitlines()
              if (match := _PYTHON_ERROR.match(line.strip())) and "py4j" not in line
              and "org.apache" not in line]
    if python:
        name, message = python[-1].groups()
        return f"Spark task failed: {name}: {message}"
    lost = _LOST.search(text)
    if lost:
        where = _WHERE.search(text)
        place = f" (task {where.group(1)} of stage {where.group(2)}, {where.group(3)})" \
            if where else ""
        return f"Spark job failed: {lost.group(1)}{place}"
    reason = _REASON.search(text)
    if reason:
        return f"Spark job failed: {reason.group(1).strip()}"
    first = next((line.strip() for line in text.splitlines() if line.strip()),
                 type(error).__name__)
    return f"Spark failed: {first[:300]}"


def as_job_error(error: BaseException) -> SparkJobError | None:
    """The :class:`SparkJobError` for a Spark or gateway error, None for any other."""
    return SparkJobError(failure_line(error)) if is_spark_error(error) else None
