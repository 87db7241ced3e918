"""Run a per-item function over a stream, in order, in this process or a pool of processes.

Results come back in input order whatever the number of workers, so the output of a run never
depends on it. Items travel in batches to amortise pickling. Inside :func:`shared_pool`, every
:func:`task_map` of that many workers maps in one pool started once (a batch run's stages share
it instead of each forking and warming new processes).

The process pool's modules (``concurrent.futures.process``, ``multiprocessing``) are imported
when a pool starts: a run in one process does not load them.
"""

from __future__ import annotations

import ctypes
import itertools
import os
import signal
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

__all__ = ["Mapper", "default_workers", "ignore_interrupts", "ordered_map", "pool_cpu_seconds",
           "serial_map", "shared_pool", "stop_pool", "task_map"]

T = TypeVar("T")
R = TypeVar("R")
_worker_fn: Callable[..., object] | None = None
_SHARED: list[tuple[int, ProcessPoolExecutor]] = []


def default_workers() -> int:
    """The number of cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def ignore_interrupts() -> None:
    """In a worker: leave Ctrl-C to the parent, which stops the pool (no traceback per worker);
    and die with the parent, even one killed by SIGKILL (Linux's parent-death signal, else a
    thread watching the parent)."""
    import multiprocessing

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is None:
        return
    try:
        if ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL) != 0:  # PR_SET_PDEATHSIG
            raise OSError(ctypes.get_errno(), "prctl")
    except (OSError, AttributeError):

        def watch() -> None:
            parent.join()
            os._exit(1)
        threading.Thread(target=watch, daemon=True).start()
    if not parent.is_alive():       # the parent died before the signal was set
        os._exit(1)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Cancel what has not started and end the workers now (Ctrl-C, or an error in the parent)."""
    workers = dict(getattr(pool, "_processes", None) or {})  # taken before shutdown clears it
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers.values():
        if worker.is_alive():
            worker.terminate()


def _start_pool(workers: int, initializer: Callable[..., None],
                initargs: tuple[Any, ...] = ()) -> ProcessPoolExecutor:
    """A process pool of ``workers`` (its modules imported now)."""
    from concurrent.futures import ProcessPoolExecutor

    return ProcessPoolExecutor(workers, initializer=initializer, initargs=initargs)


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
    with _start_pool(workers, _init_worker, (factory,)) as pool:
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


Mapper = Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[Any]]
"""``mapper(function, tasks)``: the results of ``function`` over ``tasks``, in task order."""


def serial_map(function: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
    """The :data:`Mapper` of one process."""
    return map(function, tasks)


def pool_cpu_seconds() -> float:
    """The CPU seconds the live processes of the shared pools have used so far (Linux: read
    from /proc; 0 elsewhere). Once a pool has ended, its processes count among this process's
    reaped children (``resource.RUSAGE_CHILDREN``) instead."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    total = 0
    for _, pool in _SHARED:
        for pid in list(getattr(pool, "_processes", None) or {}):
            try:
                with open(f"/proc/{pid}/stat", "rb") as stat:
                    fields = stat.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
    return total / ticks


def _shared_worker() -> None:
    """In a worker of a shared pool: no Ctrl-C, and no pool of the parent's to map in."""
    ignore_interrupts()
    _SHARED.clear()


@contextmanager
def shared_pool(workers: int) -> Iterator[None]:
    """Inside, :func:`task_map` of ``workers`` (more than one) runs in one pool, whose
    processes start at its first task and end on leaving (now, on an error)."""
    if workers <= 1:
        yield
        return
    pool = _start_pool(workers, _shared_worker)
    _SHARED.append((workers, pool))
    try:
        yield
    except BaseException:
        stop_pool(pool)
        raise
    finally:
        _SHARED.remove((workers, pool))
        pool.shutdown(wait=True)


def task_map(workers: int) -> Mapper:
    """A :data:`Mapper` over ``workers`` processes (this process alone for one), with at most
    two tasks per worker in flight (tasks may carry data); the pool lives for one call, or is
    the :func:`shared_pool` of as many workers."""
    if workers <= 1:
        return serial_map

    def run(function: Callable[[Any], Any], tasks: Iterable[Any]) -> Iterator[Any]:
        shared = [pool for count, pool in _SHARED if count == workers]
        pool = shared[-1] if shared else _start_pool(workers, ignore_interrupts)
        try:
            yield from _in_flight(pool, function, tasks, 2 * workers)
        except GeneratorExit:  # the caller stopped early: the pool goes on
            raise
        except BaseException:  # Ctrl-C or an error: end the workers now, quietly
            stop_pool(pool)
            raise
        finally:
            if not shared:
                pool.shutdown(wait=True)
    return run


def _in_flight(pool: ProcessPoolExecutor, function: Callable[[Any], Any],
               tasks: Iterable[Any], most: int) -> Iterator[Any]:
    """The results of ``tasks`` in order, with at most ``most`` submitted and not yet taken."""
    flight: deque[Future[Any]] = deque()
    for task in tasks:
        flight.append(pool.submit(function, task))
        if len(flight) >= most:
            yield flight.popleft().result()
    while flight:
        yield flight.popleft().result()
