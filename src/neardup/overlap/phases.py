"""Time and peak memory of the phases of an algorithm or a stage: :class:`PhaseMeter`, the one
meter of the package (the overlap algorithms, the sketch and keyword methods, the stages of a
``dedup`` run and the benchmarks use it).

- ``with meter.phase(name) as record:`` measures a block: CPU seconds of this process
  (``time.process_time``), wall seconds and, when tracing, ``peak_bytes``, the largest amount
  of memory traced by :mod:`tracemalloc` during the block (numpy reports its buffers to it;
  memory that numba-compiled code allocates for itself is not traced), plus the counts the
  block puts into ``record``. A peak is counted above the memory traced when the phase began;
  inside ``with meter:`` it is counted above the memory traced when the meter was entered
  instead (the input of an algorithm is not counted, but what its earlier phases still hold
  is), and tracing runs for the whole block.
- ``meter.lap(name)`` closes a stage of consecutive stages: its wall seconds since the previous
  lap (or since the meter was made) go to ``meter.seconds``.
- ``as_dict()`` gives the phases plus ``peak_rss_bytes``, the process's peak resident set size
  so far (``ru_maxrss``), which covers everything but never goes down.
"""

from __future__ import annotations

import resource
import sys
import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

__all__ = ["PhaseMeter", "peak_rss_bytes"]


def peak_rss_bytes() -> int:
    """This process's peak resident set size so far, in bytes."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class PhaseMeter:
    """Measures named phases (``phases``) and consecutive laps (``seconds``)."""

    def __init__(self, trace: bool = True) -> None:
        self.phases: dict[str, dict[str, object]] = {}
        self.seconds: dict[str, float] = {}
        self.trace = trace
        """False: time only (tracemalloc slows Python-level code; a benchmark that times a peer
        untraced must time this side untraced too)."""
        self._baseline: int | None = None
        self._owner = False
        self._last = time.perf_counter()

    def __enter__(self) -> PhaseMeter:
        self._owner = self.trace and not tracemalloc.is_tracing()
        if self._owner:
            tracemalloc.start()
        if self.trace:
            self._baseline = tracemalloc.get_traced_memory()[0]
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        self._baseline = None
        if self._owner:
            tracemalloc.stop()
            self._owner = False

    @contextmanager
    def phase(self, name: str) -> Iterator[dict[str, object]]:
        record: dict[str, object] = {}
        started_tracing = self.trace and not tracemalloc.is_tracing()
        if started_tracing:
            tracemalloc.start()
        if self.trace:
            tracemalloc.reset_peak()
        base = (self._baseline if self._baseline is not None
                else tracemalloc.get_traced_memory()[0] if self.trace else 0)
        cpu, wall = time.process_time(), time.perf_counter()
        try:
            yield record
        finally:
            measured: dict[str, object] = {
                "cpu_seconds": round(time.process_time() - cpu, 4),
                "wall_seconds": round(time.perf_counter() - wall, 4)}
            if self.trace:
                measured["peak_bytes"] = max(int(tracemalloc.get_traced_memory()[1] - base), 0)
            if started_tracing:
                tracemalloc.stop()
            self.phases[name] = {**measured, **record}

    def add(self, name: str, cpu_seconds: float) -> None:
        """A phase measured elsewhere (e.g. summed over worker processes): CPU time only."""
        self.phases[name] = {"cpu_seconds": round(cpu_seconds, 4)}

    def lap(self, name: str) -> None:
        """Close the stage just run: its wall seconds since the previous lap."""
        now = time.perf_counter()
        self.seconds[name] = round(now - self._last, 4)
        self._last = now

    def as_dict(self) -> dict[str, object]:
        return {**self.phases, "peak_rss_bytes": peak_rss_bytes()}
