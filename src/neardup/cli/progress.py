"""Progress displays that show on a terminal and stay silent in a pipe.

``stage_progress`` follows a staged run (callback ``(stage, done, total)``): one line per stage
with a bar, ``done/total`` and its unit, the rate and the time left when the total is known, and
the elapsed time. ``progress_counter`` counts the documents of a stream whose length is unknown
(``index``, ``demo``), with the rate.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["STAGE_UNITS", "progress_counter", "stage_progress"]

STAGE_UNITS = {"fingerprint": "files", "documents": "documents"}
"""The unit of each stage's counts; a stage not listed is counted in steps."""

StageCallback = Callable[[str, int, int], None]


def _rate_column(unit_of: Callable[[str], str]) -> Any:
    from rich.progress import ProgressColumn, Task
    from rich.text import Text

    class RateColumn(ProgressColumn):
        """``12.5 files/s`` (blank until a rate is measured)."""

        def render(self, task: Task) -> Text:
            speed = task.finished_speed or task.speed
            if not speed:
                return Text("")
            return Text(f"{speed:,.1f} {unit_of(task.description)}/s")

    return RateColumn()


def _columns(unit_of: Callable[[str], str]) -> tuple[Any, ...]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return (SpinnerColumn(), TextColumn("{task.description:<12}"), BarColumn(bar_width=24),
            MofNCompleteColumn(), TextColumn("{task.fields[unit]}"), _rate_column(unit_of),
            TextColumn("left"), TimeRemainingColumn(), TextColumn("elapsed"),
            TimeElapsedColumn())


@contextmanager
def stage_progress(enabled: bool | None = None) -> Iterator[StageCallback | None]:
    """A ``(stage, done, total)`` callback drawing one line per stage; None in a pipe."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress, TaskID

    def unit_of(stage: str) -> str:
        return STAGE_UNITS.get(stage.strip(), "steps")

    tasks: dict[str, TaskID] = {}
    with Progress(*_columns(unit_of), console=Console(stderr=True), transient=False) as bar:

        def update(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                for other in tasks.values():  # a new stage: the previous ones have finished
                    task = bar.tasks[other]
                    if task.total is not None:
                        bar.update(other, completed=task.total)
                tasks[stage] = bar.add_task(stage, total=total or None, unit=unit_of(stage))
            bar.update(tasks[stage], completed=done, total=total or None)

        yield update


@contextmanager
def progress_counter(label: str, enabled: bool | None = None) -> Iterator[Callable[[int], None]]:
    """Yields a callback taking the number of documents done so far (no total known)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled:
        yield lambda _done: None
        return
    from rich.console import Console
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    columns = (SpinnerColumn(), TextColumn("{task.description}"),
               TextColumn("{task.completed:,} documents"),
               _rate_column(lambda _stage: "documents"), TimeElapsedColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int) -> None:
            bar.update(task, completed=done)  # rich redraws a few times a second, not per call

        yield update
