"""A progress display that shows on a terminal and stays silent in a pipe."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

__all__ = ["progress_counter"]


@contextmanager
def progress_counter(label: str, enabled: bool | None = None) -> Iterator[Callable[[int], None]]:
    """Yields a callback taking the number of items done so far."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda _done: None
        return
    columns = (SpinnerColumn(), TextColumn("{task.description}"),
               TextColumn("{task.completed} documents"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int) -> None:
            if done % 64 == 0:
                bar.update(task, completed=done)

        yield update
