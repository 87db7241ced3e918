"""A real Spark standalone cluster on 127.0.0.1 for tests: a master and workers started with
PySpark's own ``spark-class`` (``org.apache.spark.deploy.master.Master`` and
``org.apache.spark.deploy.worker.Worker``), each worker with its own cores and memory.

Every daemon runs in its own process group (a worker's executors are its children, in its
group), so :meth:`Standalone.stop` kills a whole daemon with one ``killpg``, also when the test
failed. The master's JSON status (``http://127.0.0.1:<webui>/json``) says when the workers have
registered. The executors' Python workers run ``sys.executable`` with this ``neardup`` on their
``PYTHONPATH`` (the daemons' environment, which executors inherit).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import neardup

__all__ = ["Standalone", "standalone_cluster"]

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
EXECUTOR = "org.apache.spark.executor.CoarseGrainedExecutorBackend"
START_SECONDS = 120.0


def _spark_class() -> Path:
    import pyspark

    return Path(pyspark.__file__).parent / "bin" / "spark-class"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def daemon_environment(folder: Path) -> dict[str, str]:
    """The daemons' environment: local addresses, logs under ``folder``, and the Python (this
    interpreter, this ``neardup``) their executors' Python workers run."""
    source = str(Path(neardup.__file__).resolve().parents[1])
    python_path = os.pathsep.join(filter(None, [source, os.environ.get("PYTHONPATH", "")]))
    return {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "SPARK_LOG_DIR": str(folder),
            "SPARK_NO_DAEMONIZE": "1", "PYSPARK_PYTHON": sys.executable,
            "PYTHONPATH": python_path}


@dataclass
class Standalone:
    """A running cluster: its master URL, its master's web UI, and its daemons."""

    master: str
    webui: str
    folder: Path
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)
    logs: list[IO[bytes]] = field(default_factory=list)

    def status(self) -> dict[str, Any]:
        """The master's JSON status (workers, their state, cores and memory, applications)."""
        with urllib.request.urlopen(f"{self.webui}/json", timeout=5) as answer:
            found: dict[str, Any] = json.load(answer)
            return found

    def alive_workers(self) -> list[dict[str, Any]]:
        with contextlib.suppress(OSError, ValueError):
            return [worker for worker in self.status()["workers"] if worker["state"] == "ALIVE"]
        return []

    def start(self, name: str, arguments: list[str]) -> None:
        log = open(self.folder / f"{name}.log", "wb")  # noqa: SIM115 - closed by stop()
        self.logs.append(log)
        self.processes.append(subprocess.Popen(
            [str(_spark_class()), *arguments], stdout=log, stderr=subprocess.STDOUT,
            env=daemon_environment(self.folder), start_new_session=True))

    def wait_for_workers(self, count: int) -> None:
        deadline = time.monotonic() + START_SECONDS
        while len(self.alive_workers()) < count:
            dead = [p.args for p in self.processes if p.poll() is not None]
            if dead or time.monotonic() > deadline:
                raise RuntimeError(f"the standalone cluster did not start ({count} workers "
                                   f"wanted; exited: {dead}); logs in {self.folder}")
            time.sleep(0.5)

    def executor_pids(self) -> list[int]:
        """The process ids of this cluster's executor JVMs (in its workers' process groups)."""
        groups = {process.pid for process in self.processes}
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError):
                if _group(entry) in groups and \
                        EXECUTOR.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
        return found

    def stop(self) -> None:
        for process in reversed(self.processes):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        for process in self.processes:
            process.wait(timeout=30)
        for log in self.logs:
            log.close()


@contextlib.contextmanager
def standalone_cluster(folder: Path, workers: int = 2, cores: int = 1,
                       memory: str = "1g") -> Iterator[Standalone]:
    """A master and ``workers`` workers (``cores`` and ``memory`` each) on 127.0.0.1, all
    registered; every daemon and executor killed on exit."""
    port, webui = free_port(), free_port()
    cluster = Standalone(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{webui}", folder)
    try:
        cluster.start("master", [MASTER, "--host", "127.0.0.1", "--port", str(port),
                                 "--webui-port", str(webui)])
        for number in range(workers):
            work = folder / f"worker-{number}"
            work.mkdir()
            cluster.start(f"worker-{number}", [
                WORKER, "--host", "127.0.0.1", "--cores", str(cores), "--memory", memory,
                "--webui-port", str(free_port()), "--work-dir", str(work), cluster.master])
        cluster.wait_for_workers(workers)
        yield cluster
    finally:
        cluster.stop()


def _group(entry: Path) -> int:
    """The process group of the process ``entry`` (/proc/<pid>): the fifth field of its stat."""
    stat = (entry / "stat").read_text()
    return int(stat[stat.rindex(")") + 2:].split()[2])
