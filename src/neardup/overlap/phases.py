"""Time and peak memory of the phases of an overlap algorithm, for ``summary.json``.

Memory is measured with :mod:`tracemalloc`, which sees every numpy buffer (numpy reports its
allocations to it): a phase's ``peak_mb`` is the largest amount of memory the algorithm held at
any moment of the phase, above what was allocated when the algorithm started (its input, the
FPrint-DocID relation, is not counted). Memory inside numba kernels is not traced; the kernels here
allocate nothing large (their buffers are numpy arrays passed in). Tracing is started for the
duration of the algorithm when it is not already on, and stopped afterwards.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

__all__ = ["PhaseLog"]

_MB = 2**20


class PhaseLog:
    """A context manager that records each ``with log.phase(name) as record:`` block: seconds,
    peak memory in MB, and the counts the block puts into ``record``."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, object]] = {}
        self._peaks: list[float] = []
        self._seconds: list[float] = []
        self._owner = False
        self._baseline = 0

    def __enter__(self) -> PhaseLog:
        self._owner = not tracemalloc.is_tracing()
        if self._owner:
            tracemalloc.start()
        self._baseline = tracemalloc.get_traced_memory()[0]
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        if self._owner:
            tracemalloc.stop()

    @contextmanager
    def phase(self, name: str) -> Iterator[dict[str, object]]:
        record: dict[str, object] = {}
        tracemalloc.reset_peak()
        started = time.perf_counter()
        yield record
        peak = round(max(tracemalloc.get_traced_memory()[1] - self._baseline, 0) / _MB, 3)
        seconds = round(time.perf_counter() - started, 4)
        self._peaks.append(peak)
        self._seconds.append(seconds)
        self.phases[name] = {"seconds": seconds, "peak_mb": peak, **record}

    @property
    def peak_mb(self) -> float:
        """The largest peak over the phases."""
        return max(self._peaks, default=0.0)

    @property
    def seconds(self) -> float:
        return round(sum(self._seconds), 4)
