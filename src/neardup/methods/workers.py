"""Run a per-item function over a stream, in order, in this process or a pool of processes.

Results come back in input order whatever the number of workers, so the output of a run never
depends on it. Items travel in batches to amortise pickling.
"""

from __future__ import annotations

import itertools
import os
import signal
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import TypeVar

__all__ = ["default_workers", "ignore_interrupts", "ordered_map", "stop_pool"]

T = TypeVar("T")
R = TypeVar("R")
_worker_fn: Callable[..., object] | None = None


def default_workers() -> int:
    """The number of cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def ignore_interrupts() -> None:
    """In a worker: leave Ctrl-C to the parent, which stops the pool (no traceback per worker)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (Ctrl-C, or an error in the parent)."""
    workers = dict(getattr(pool, "_processes", None) or {})  # taken before shutdown clears it
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers.values():
        if worker.is_alive():
            worker.terminate()


def _init_worker(factory: Callable[[], Callable[[T], R]]) -> None:
    global _worker_fn
    ignore_interrupts()
    _worker_fn = factory()


def _run_batch(batch: list[object]) -> list[object]:
    assert _worker_fn is not None, "worker not initialised"
    return [_worker_fn(item) for item in batch]


def _batches(items: Iterable[T], size: int) -> Iterator[list[T]]:
    iterator = iter(items)
    while batch := list(itertools.islice(iterator, size)):
        yield batch


def ordered_map(
    factory: Callable[[], Callable[[T], R]],
    items: Iterable[T],
    workers: int = 1,
    batch_size: int = 64,
) -> Iterator[R]:
    """``factory()(item)`` for every item, in order; ``factory`` builds the function once per
    process (it must be picklable for ``workers > 1``)."""
    if workers <= 1:
        function = factory()
        yield from (function(item) for item in items)
        return
    with ProcessPoolExecutor(workers, initializer=_init_worker, initargs=(factory,)) as pool:
        pending: list[Future[list[object]]] = []
        try:
            for batch in _batches(items, batch_size):
                pending.append(pool.submit(_run_batch, list(batch)))
                if len(pending) >= 4 * workers:
                    yield from pending.pop(0).result()  # type: ignore[misc]
            for future in pending:
                yield from future.result()  # type: ignore[misc]
        except BaseException:
            stop_pool(pool)
            raise
