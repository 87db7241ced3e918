"""Ctrl-C: one line saying what was kept, exit status 130, and no wait for stopped workers.

Worker processes ignore SIGINT (:func:`neardup.methods.workers.ignore_interrupts`) and the
parent terminates them (:func:`~neardup.methods.workers.stop_pool`). A process pool's feeder
thread can still be blocked writing a batch to a pipe that no worker reads any more, and the
interpreter would wait for it at exit; so, once every file is closed and the line printed, the
command leaves at once.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn

import click

__all__ = ["EXIT_INTERRUPTED", "exit_interrupted"]

EXIT_INTERRUPTED = 130


def exit_interrupted(detail: str = "") -> NoReturn:
    """Print ``neardup: interrupted (Ctrl-C)[: detail]`` and end the process with status 130."""
    click.echo("neardup: interrupted (Ctrl-C)" + (f": {detail}" if detail else ""), err=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(EXIT_INTERRUPTED)
