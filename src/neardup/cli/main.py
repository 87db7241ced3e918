"""Entry point: ``neardup <command>``.

Commands are imported only when they run (``neardup --help`` loads none of numpy, numba or
pyarrow). Every error a user can cause ends in one line on stderr naming the file and the cause,
and a non-zero exit: 1 for an error, 130 for Ctrl-C; the traceback is shown only with
``neardup --debug``.

Before numpy loads, OpenBLAS is held to one thread (``OPENBLAS_NUM_THREADS=1`` unless the user
set it): neardup calls no multi-threaded BLAS routine (a dot product of two vectors at most),
and OpenBLAS's pool spins a second thread at start, about 0.1 CPU s in every process (the
command and each worker it starts).
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

from neardup.cli import collector

__all__ = ["COMMANDS", "cli", "main"]

COMMANDS: dict[str, tuple[str, str]] = {
    "dedup": ("neardup.cli.dedup:dedup_command",
              "Find exact and near-duplicate documents in a batch and cluster them."),
    "demo": ("neardup.cli.demo:demo_command",
             "Write a synthetic crawl with planted duplicates, dedup it, score the result."),
    "evaluate": ("neardup.cli.evaluate:evaluate_command",
                 "Score methods on labeled pairs (precision, recall, F1, curves)."),
    "report": ("neardup.cli.report:report_command",
               "Write the replication report (HTML, JSON) of dedup runs or stores."),
    "index": ("neardup.cli.store:index_command",
              "Add documents to a persistent store (created if absent)."),
    "query": ("neardup.cli.store:query_command",
              "The stored near-duplicates of a file, a text or a stored URL."),
    "compact": ("neardup.cli.store:compact_command", "Merge a store's segments into one."),
    "lost-and-found": ("neardup.cli.store:lost_and_found_command",
                       "Where did a URL go? The most recent URL of its cluster."),
    "plan": ("neardup.cli.plan:plan_command",
             "Plan permuted Hamming tables (Manku et al.), or size a dedup run."),
    "serve": ("neardup.cli.serve:serve_command",
              "Serve a store over HTTP to crawlers (add, query, clusters, metrics)."),
}
"""Each command: where it lives (module:attribute) and its one-line help for ``neardup --help``."""

EXIT_ERROR = 1
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "1")
"""Set in the environment at import, before numpy (which starts OpenBLAS) can load."""
os.environ.setdefault(*BLAS_THREADS)


def _os_error_line(error: OSError) -> str:
    """``path: cause`` for an error of the operating system (no Python repr)."""
    cause = error.strerror or str(error)
    names = [str(n) for n in (error.filename, error.filename2) if n is not None]
    return f"{' -> '.join(names)}: {cause}" if names else cause


def error_line(error: BaseException) -> str:
    """The one line a user sees for ``error``."""
    from neardup.errors import NeardupError

    if isinstance(error, NeardupError):
        return f"error: {error}"
    if isinstance(error, OSError):
        return f"error: {_os_error_line(error)}"
    if isinstance(error, MemoryError):
        return "error: out of memory (try a smaller --memory-limit or fewer --workers)"
    return (f"internal error: {type(error).__name__}: {error} (please report it; "
            "run with neardup --debug for the traceback)")


class LazyGroup(click.Group):
    """A group whose commands are imported on first use, and whose errors are one line."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        module, _, attribute = COMMANDS[cmd_name][0].partition(":")
        with collector.loading():
            command: click.Command = getattr(importlib.import_module(module), attribute)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][1]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The console script's entry: the command owns the process (the collector is paused
        while its modules load and kept out of the teardown: :mod:`neardup.cli.collector`)."""
        with collector.owned():
            return self.main(*args, **kwargs)

    def invoke(self, ctx: click.Context) -> Any:
        debug = bool(ctx.params.get("debug"))
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, click.Abort):
            raise
        except KeyboardInterrupt:
            if debug:
                raise
            from neardup.cli.interrupt import exit_interrupted

            exit_interrupted()
        except Exception as error:
            if debug:
                raise
            click.echo(f"neardup: {error_line(error)}", err=True)
            sys.exit(EXIT_ERROR)


@click.group(cls=LazyGroup)
@click.version_option(package_name="neardup")
@click.option("--debug", is_flag=True, help="Show the Python traceback of an error.")
def cli(debug: bool) -> None:
    """Find exact and near-duplicate documents in web crawls and text corpora."""


def main() -> None:
    cli()
