"""Entry point: ``neardup <command>``; errors print one line and exit non-zero."""

from __future__ import annotations

import sys

import click

from neardup.cli.dedup import dedup_command
from neardup.cli.demo import demo_command
from neardup.cli.evaluate import evaluate_command
from neardup.cli.plan import plan_command
from neardup.cli.report import report_command
from neardup.cli.serve import serve_command
from neardup.cli.store import (
    compact_command,
    index_command,
    lost_and_found_command,
    query_command,
)
from neardup.errors import NeardupError

__all__ = ["cli", "main"]


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> object:
        try:
            return super().invoke(ctx)
        except NeardupError as error:
            click.echo(f"neardup: error: {error}", err=True)
            sys.exit(1)


@click.group(cls=_Group)
@click.version_option(package_name="neardup")
def cli() -> None:
    """Find exact and near-duplicate documents in web crawls and text corpora."""


cli.add_command(dedup_command)
cli.add_command(demo_command)
cli.add_command(evaluate_command)
cli.add_command(report_command)
cli.add_command(index_command)
cli.add_command(query_command)
cli.add_command(compact_command)
cli.add_command(lost_and_found_command)
cli.add_command(plan_command)
cli.add_command(serve_command)


def main() -> None:
    cli()
