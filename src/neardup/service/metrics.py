"""Prometheus metrics of the service, rendered in the text exposition format (version 0.0.4)."""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections import defaultdict

__all__ = ["BUCKETS", "Metrics"]

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
"""Upper bounds (seconds) of the latency histogram's buckets."""


class Metrics:
    """Request counts by route, method and status; latency histograms by route; gauges set by
    the caller when rendering (store size, queue depth)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.requests: dict[tuple[str, str, int], int] = defaultdict(int)
        self.buckets: dict[str, list[int]] = {}
        self.sums: dict[str, float] = defaultdict(float)
        self.query_batches = 0
        self.batched_queries = 0
        self.largest_batch = 0

    def observe(self, route: str, method: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests[(route, method, status)] += 1
            counts = self.buckets.setdefault(route, [0] * (len(BUCKETS) + 1))
            counts[bisect_left(BUCKETS, seconds)] += 1
            self.sums[route] += seconds

    def observe_batch(self, queries: int) -> None:
        """A batch of ``queries`` queries answered together."""
        with self._lock:
            self.query_batches += 1
            self.batched_queries += queries
            self.largest_batch = max(self.largest_batch, queries)

    def render(self, gauges: dict[str, tuple[str, float]]) -> str:
        """The exposition text; ``gauges`` maps a metric name to (help, value)."""
        lines = ["# HELP neardup_requests_total HTTP requests answered.",
                 "# TYPE neardup_requests_total counter"]
        with self._lock:
            for (route, method, status), count in sorted(self.requests.items()):
                lines.append(f'neardup_requests_total{{route="{route}",method="{method}",'
                             f'code="{status}"}} {count}')
            lines += ["# HELP neardup_request_duration_seconds Time to answer a request.",
                      "# TYPE neardup_request_duration_seconds histogram"]
            for route, counts in sorted(self.buckets.items()):
                lines += _histogram(route, counts, self.sums[route])
            lines += [
                "# HELP neardup_query_batches_total Batches of queries answered together.",
                "# TYPE neardup_query_batches_total counter",
                f"neardup_query_batches_total {self.query_batches}",
                "# HELP neardup_batched_queries_total Queries answered in those batches.",
                "# TYPE neardup_batched_queries_total counter",
                f"neardup_batched_queries_total {self.batched_queries}",
                "# HELP neardup_largest_query_batch Most queries answered in one batch.",
                "# TYPE neardup_largest_query_batch gauge",
                f"neardup_largest_query_batch {self.largest_batch}"]
        for name, (text, value) in sorted(gauges.items()):
            lines += [f"# HELP {name} {text}", f"# TYPE {name} gauge", f"{name} {value:g}"]
        return "\n".join(lines) + "\n"


def _histogram(route: str, counts: list[int], total: float) -> list[str]:
    name = "neardup_request_duration_seconds"
    lines, running = [], 0
    for bound, count in zip((*BUCKETS, float("inf")), counts, strict=True):
        running += count
        label = "+Inf" if bound == float("inf") else f"{bound:g}"
        lines.append(f'{name}_bucket{{route="{route}",le="{label}"}} {running}')
    lines.append(f'{name}_sum{{route="{route}"}} {total:.6f}')
    lines.append(f'{name}_count{{route="{route}"}} {running}')
    return lines
