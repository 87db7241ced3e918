"""The Python daemon of a neardup job's executors: PySpark's own, warmed up before it forks.

Spark starts one Python daemon per executor (``python -m`` the module named by
``spark.python.daemon.module``) and the daemon forks a Python worker for each task slot; with
``spark.python.worker.reuse`` (the default) a worker serves task after task. PySpark's daemon
imports PySpark alone, so every worker imported numpy, pyarrow and the fingerprinting modules
and loaded numba's cached kernels on its first task: about 1.5 to 2.3 CPU s per worker, one
worker per core. This daemon does that once, as the local engine's process does before its pool
forks (:func:`neardup.engine.fingerprint.warm_up`: two small documents fingerprinted and written
as a partition in a scratch folder, then removed), and then runs PySpark's daemon, whose workers
inherit the loaded modules and kernels. A warm-up that fails changes nothing but the time: the
workers then import what they need themselves, and report their own errors.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from pathlib import Path

__all__ = ["main", "warm"]


def warm() -> None:
    """Import the stages' modules and compile (load) the default method's kernels here."""
    import neardup.engine.spark.near  # noqa: F401 - the later stages' modules, imported once
    from neardup.config import DedupConfig
    from neardup.engine.fingerprint import warm_up
    from neardup.text.compiled import kernel_mode

    scratch = Path(tempfile.mkdtemp(prefix="neardup-daemon-"))
    try:
        with kernel_mode("compile"):
            warm_up(DedupConfig(), scratch / "warm-up")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def main() -> None:
    with contextlib.suppress(Exception):  # only time is lost: each worker loads what it needs
        warm()
    from pyspark.daemon import manager

    manager()


if __name__ == "__main__":
    main()
