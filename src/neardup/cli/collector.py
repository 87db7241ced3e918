"""The garbage collector of a ``neardup`` process: paused while a command's modules load, and
left out of the interpreter's teardown.

Importing a command allocates some 300,000 long-lived objects (modules, classes, functions,
code); the collector walked them about 90 times on the way (about 0.03 CPU s of a one-document
``dedup``), and again, all of them, in each full collection of the interpreter's teardown
(about 0.1 CPU s) although the process is about to exit and the system takes its memory back.
So, in a process that ``neardup`` started (:meth:`neardup.cli.main.LazyGroup.__call__`, the
console script's entry; not ``main()`` as a library or test runner calls it), the collector is
paused while the command's module is imported; the objects alive then are moved to its
permanent generation (:func:`gc.freeze`, meant for long-lived objects) and it runs again as
before for the work itself; when the command ends the process (``SystemExit``), everything is
frozen so that the teardown frees by reference counts alone. Garbage cycles left at exit are
not collected: the system frees their memory with the process (an import leaves about 200
unreachable objects, frozen with the rest). Files are closed by the code that opens them, and
``atexit`` callbacks run as before.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["loading", "owned", "process_ending"]

_OWNED: list[bool] = []
"""True while a command runs as the whole process (see :func:`owned`)."""


@contextmanager
def owned() -> Iterator[None]:
    """The command runs as the whole process: its imports pause the collector, and when it
    exits the process (``SystemExit``), the teardown skips the collector's walks."""
    _OWNED.append(True)
    try:
        yield
    except SystemExit:
        process_ending()
        raise
    finally:
        _OWNED.pop()


@contextmanager
def loading() -> Iterator[None]:
    """Import a command's modules: in a process the command owns, with the collector paused,
    then its objects frozen as long-lived; elsewhere, nothing changes."""
    if not _OWNED or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def process_ending() -> None:
    """Move every object to the collector's permanent generation: the interpreter's teardown
    then frees by reference counts without walking them (the process exits next)."""
    gc.freeze()
