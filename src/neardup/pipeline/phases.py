"""Per-phase CPU time, wall time and peak memory of a stage that runs in this process.

CPU seconds are this process's (``time.process_time``); peak memory is the largest amount of
memory traced by ``tracemalloc`` during the phase (numpy arrays and Python objects; memory that
numba-compiled code allocates for itself is not traced). ``peak_rss_bytes`` is the process's peak
resident set size so far (``ru_maxrss``), which covers everything but never goes down.
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["PhaseMeter", "StageLaps"]


def _peak_rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class PhaseMeter:
    """Measures named phases; ``as_dict()`` gives ``{phase: {cpu_seconds, wall_seconds,
    peak_bytes}}`` plus the process's peak RSS."""

    def __init__(self, trace: bool = True) -> None:
        self.phases: dict[str, dict[str, float]] = {}
        self.trace = trace
        """False: time only (tracemalloc slows Python-level code; a benchmark that times a peer
        untraced must time this side untraced too)."""

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        if not self.trace:
            cpu, wall = time.process_time(), time.perf_counter()
            try:
                yield
            finally:
                self.phases[name] = {"cpu_seconds": round(time.process_time() - cpu, 4),
                                     "wall_seconds": round(time.perf_counter() - wall, 4)}
            return
        started_tracing = not tracemalloc.is_tracing()
        if started_tracing:
            tracemalloc.start()
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            yield
        finally:
            peak = tracemalloc.get_traced_memory()[1] - base
            if started_tracing:
                tracemalloc.stop()
            self.phases[name] = {"cpu_seconds": round(time.process_time() - cpu, 4),
                                 "wall_seconds": round(time.perf_counter() - wall, 4),
                                 "peak_bytes": max(int(peak), 0)}

    def add(self, name: str, cpu_seconds: float) -> None:
        """A phase measured elsewhere (e.g. summed over worker processes): CPU time only."""
        self.phases[name] = {"cpu_seconds": round(cpu_seconds, 4)}

    def as_dict(self) -> dict[str, object]:
        return {**self.phases, "peak_rss_bytes": _peak_rss_bytes()}


class StageLaps:
    """Wall seconds of consecutive stages: each :meth:`lap` closes the stage just run."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self._last, 4)
        self._last = now
