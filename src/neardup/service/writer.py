"""One writer thread with group commit: adds queue up; the writer takes as many as fit in one
group, commits them in one store transaction, and answers each with its own documents. An add
that arrives less than ``window`` seconds after the last commit waits for that window's end, so
that a busy service's adds share commits (a commit costs about as much as the documents it
holds, for a crawler's one-page adds); an idle service commits at once."""

from __future__ import annotations

import logging
import queue
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field

from neardup.document import Document
from neardup.errors import NeardupError
from neardup.store import Store

__all__ = ["Busy", "GroupWriter", "Outcome"]

LOG = logging.getLogger("neardup.service")

Outcome = tuple[str, int, bool]
"""(id, document number, already stored) of one added document."""


class Busy(NeardupError):
    """The writer's queue is full: the caller should retry later (HTTP 503)."""


@dataclass(slots=True)
class _Add:
    docs: list[Document]
    sweep: str | None
    done: Future[list[Outcome]] = field(default_factory=Future)


class GroupWriter:
    """The only thread that writes to ``store``."""

    def __init__(self, store: Store, group_max: int, queue_limit: int,
                 window: float = 0.0) -> None:
        self.store = store
        self.group_max = group_max
        self.window = window
        self._committed = float("-inf")
        """``time.monotonic()`` at the end of the last commit."""
        self.pending: queue.Queue[_Add | None] = queue.Queue(maxsize=queue_limit)
        self.groups = 0
        self.grouped_adds = 0
        self._thread = threading.Thread(target=self._run, name="neardup-writer", daemon=True)
        self._thread.start()

    def submit(self, docs: list[Document], sweep: str | None) -> Future[list[Outcome]]:
        """Queue an add; its future resolves once the add is committed (or has failed)."""
        add = _Add(docs, sweep)
        try:
            self.pending.put_nowait(add)
        except queue.Full:
            raise Busy(f"{self.store.root}: {self.pending.maxsize} adds waiting") from None
        return add.done

    def close(self) -> None:
        self.pending.put(None)
        self._thread.join()

    def _run(self) -> None:
        while True:
            first = self.pending.get()
            if first is None:
                return
            wait = self._committed + self.window - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            group, stop = self._gather(first)
            self._commit(group)
            self._committed = time.monotonic()
            if stop:
                return

    def _gather(self, first: _Add) -> tuple[list[_Add], bool]:
        """The first add, and those queued behind it with the same sweep, up to the group size."""
        group, size = [first], len(first.docs)
        while size < self.group_max:
            try:
                add = self.pending.get_nowait()
            except queue.Empty:
                return group, False
            if add is None:
                return group, True
            if add.sweep != first.sweep or size + len(add.docs) > self.group_max:
                self._commit(group)
                group, size = [add], 0
                first = add
            else:
                group.append(add)
            size += len(add.docs)
        return group, False

    def _commit(self, group: list[_Add]) -> None:
        docs = [doc for add in group for doc in add.docs]
        try:
            report = self.store.add(docs, sweep=group[0].sweep, record=True)
        except BaseException as error:  # every waiting caller learns of the failure
            for add in group:
                add.done.set_exception(error)
            return
        for warning in report.warnings:     # committed all the same: said, not failed
            LOG.warning("neardup: %s", warning)
        outcomes = report.outcomes or []
        self.groups += 1
        self.grouped_adds += len(group)
        start = 0
        for add in group:
            add.done.set_result(outcomes[start:start + len(add.docs)])
            start += len(add.docs)
