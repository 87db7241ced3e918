"""Time and peak memory of the phases of an overlap algorithm, for ``summary.json``.

Memory is measured with :mod:`tracemalloc`, which sees every numpy buffer (numpy reports its
allocations to it): a phase's ``peak_bytes`` is the largest amount of memory the algorithm held at
any moment of the phase, above what was allocated when the algorithm started (its input, the
FPrint-DocID relation, is not counted), so it includes what earlier phases still hold (the
bitmaps and candidates of coarse counting, say). Memory inside numba kernels is not traced; the
kernels here allocate nothing large (their buffers are numpy arrays passed in). Tracing is
started for the duration of the algorithm when it is not already on, and stopped afterwards.
The keys match :class:`neardup.pipeline.phases.PhaseMeter`'s: ``cpu_seconds``,
``wall_seconds``, ``peak_bytes``.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

__all__ = ["PhaseLog"]


class PhaseLog:
    """A context manager that records each ``with log.phase(name) as record:`` block: CPU and
    wall seconds, peak memory in bytes, and the counts the block puts into ``record``."""

    def __init__(self) -> None:
        self.phases: dict[str, dict[str, object]] = {}
        self._peaks: list[int] = []
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
        cpu, wall = time.process_time(), time.perf_counter()
        yield record
        peak = max(tracemalloc.get_traced_memory()[1] - self._baseline, 0)
        seconds = round(time.perf_counter() - wall, 4)
        self._peaks.append(peak)
        self._seconds.append(seconds)
        self.phases[name] = {"cpu_seconds": round(time.process_time() - cpu, 4),
                             "wall_seconds": seconds, "peak_bytes": peak, **record}

    @property
    def peak_bytes(self) -> int:
        """The largest peak over the phases."""
        return max(self._peaks, default=0)

    @property
    def seconds(self) -> float:
        """Wall seconds over the phases."""
        return round(sum(self._seconds), 4)
