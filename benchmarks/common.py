"""Helpers shared by the benchmarks: the shared data, single-core timing, and the results files.

The benchmarks are scripts (``python benchmarks/<name>.py``), not tests. Each one locates its input
under ``../shared/data`` (next to the repository), skips cleanly with exit status 0 when that is
absent, times each method as the best of n runs over the full input, and writes a JSON file under
``benchmarks/results/`` plus a Markdown table on stdout.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, NoReturn

__all__ = [
    "BENCHMARKS_DIR",
    "DATA_DIR",
    "RESULTS_DIR",
    "Timing",
    "TreeSampler",
    "best_of",
    "environment",
    "interleaved_calls",
    "interleaved_timings",
    "load_average",
    "markdown_table",
    "pin_single_core",
    "require_data",
    "skip",
    "timed_call",
    "timings",
    "write_results",
]

BENCHMARKS_DIR = Path(__file__).resolve().parent
REPO_DIR = BENCHMARKS_DIR.parent
DATA_DIR = REPO_DIR.parent / "shared" / "data"
RESULTS_DIR = BENCHMARKS_DIR / "results"


def skip(reason: str) -> NoReturn:
    """Print why the benchmark cannot run and exit with status 0, writing no result file."""
    print(f"SKIPPED: {reason}")
    sys.exit(0)


def require_data(*parts: str) -> Path:
    """The path ``DATA_DIR / parts``; skips the benchmark (exit 0) when it does not exist."""
    path = DATA_DIR.joinpath(*parts)
    if not path.exists():
        skip(f"benchmark data not found at {path} (expected ../shared/data next to the repo)")
    return path


def pin_single_core(cpu: int = 0) -> int | None:
    """Pin this process to one CPU where the OS allows it; the CPU number, or None."""
    if not hasattr(os, "sched_setaffinity"):
        return None
    try:
        os.sched_setaffinity(0, {cpu})
    except OSError:
        return None
    return cpu


def timings(run: Callable[[], object], repeat: int = 3) -> list[float]:
    """Wall-clock seconds (``time.perf_counter``) of ``repeat`` consecutive calls of ``run``."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return times


def best_of(run: Callable[[], object], repeat: int = 3) -> float:
    """The smallest wall-clock time (seconds) of ``repeat`` calls: the least disturbed run."""
    return min(timings(run, repeat))


@dataclass(frozen=True, slots=True)
class Timing:
    """One timed call: wall-clock seconds (``perf_counter``) and this process's CPU seconds."""

    wall: float
    cpu: float

    @property
    def cpu_share(self) -> float:
        """CPU / wall: near 1 on an idle core, lower when other processes took the core."""
        return self.cpu / self.wall if self.wall > 0 else 1.0


def timed_call(run: Callable[[], object]) -> Timing:
    """Time one call of ``run`` by the wall clock and by the process CPU clock."""
    cpu, wall = time.process_time(), time.perf_counter()
    run()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


def interleaved_calls(
    runs: Mapping[str, Callable[[], object]], repeat: int = 3
) -> dict[str, list[Timing]]:
    """``repeat`` timings (wall and CPU) of each run, round-robin (a, b, c, then a, b, c, ...).

    Interleaving spreads a burst of load from other processes over all methods instead of
    penalising whichever one happened to be running; keep the fastest wall time of each.
    """
    times: dict[str, list[Timing]] = {name: [] for name in runs}
    for _ in range(repeat):
        for name, run in runs.items():
            times[name].append(timed_call(run))
    return times


def interleaved_timings(
    runs: Mapping[str, Callable[[], object]], repeat: int = 3
) -> dict[str, list[float]]:
    """Wall-clock seconds of ``repeat`` round-robin calls of each run (see interleaved_calls)."""
    calls = interleaved_calls(runs, repeat)
    return {name: [timing.wall for timing in timings] for name, timings in calls.items()}


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages, to show how busy the machine was (None if unknown)."""
    try:
        return [round(value, 2) for value in os.getloadavg()]
    except OSError:
        return None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def cpu_model() -> str:
    """The CPU model name from /proc/cpuinfo, else what ``platform`` knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def environment(packages: Iterable[str]) -> dict[str, Any]:
    """Where and when a benchmark ran: date, Python, CPU, and the versions of ``packages``."""
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "load_average": load_average(),
        "versions": {name: _version(name) for name in packages},
    }


def markdown_table(headers: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table; numbers are printed as given (format them first)."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_results(path: Path, payload: dict[str, Any], table: str) -> None:
    """Write ``payload`` (plus the Markdown ``table``) as JSON to ``path`` and print the table."""
    path.parent.mkdir(parents=True, exist_ok=True)
    document = {**payload, "markdown": table}
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(document, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    tmp.replace(path)
    print(table)
    print(f"\nresults written to {path}")


def _children(pid: int) -> list[int]:
    found: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as children:
                found.extend(int(child) for child in children.read().split())
    except OSError:
        pass
    return found


def _own_usage(pid: int) -> tuple[float, int] | None:
    """(own user + system seconds, resident bytes) of one process; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        with open(f"/proc/{pid}/statm") as statm:
            resident = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError):
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), resident


class TreeSampler:
    """CPU and peak resident memory of a process and everything below it, from /proc (Linux),
    sampled by :meth:`poll`: each process's CPU is its last seen (pool workers their parent
    never reaps count too, which wait4 misses); memory is the largest sum over one sample
    (pages a forked child shares with its parent count twice there) and, beside it, the
    largest resident size of one process."""

    def __init__(self) -> None:
        self.cpu: dict[int, float] = {}
        self.peak_bytes = self.peak_process_bytes = 0

    def poll(self, root: int) -> None:
        resident, queue = 0, [root]
        while queue:
            pid = queue.pop()
            if (usage := _own_usage(pid)) is not None:
                self.cpu[pid], rss = usage
                resident += rss
                self.peak_process_bytes = max(self.peak_process_bytes, rss)
            queue.extend(_children(pid))
        self.peak_bytes = max(self.peak_bytes, resident)

    @property
    def cpu_seconds(self) -> float:
        return sum(self.cpu.values())
