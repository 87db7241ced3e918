"""Command help grouped by topic: ``--help`` lists options under headings instead of one list."""

from __future__ import annotations

from typing import Any

import click

__all__ = ["GroupedCommand"]


class GroupedCommand(click.Command):
    """A command whose ``--help`` shows its options in the sections of ``sections``
    (heading -> option names, as the function's parameters are named); an option in no section
    is listed under "Other options"."""

    def __init__(self, *args: Any, sections: dict[str, tuple[str, ...]] | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections or {}

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if isinstance(param, click.Option) and record is not None and param.name:
                is_help = "--help" in param.opts
                rows["help" if is_help else param.name] = record
        placed: set[str] = set()
        for heading, names in self.sections.items():
            section = [rows[name] for name in names if name in rows]
            placed.update(names)
            if section:
                with formatter.section(heading):
                    formatter.write_dl(section)
        rest = [record for name, record in rows.items() if name not in placed]
        if rest:
            with formatter.section("Other options"):
                formatter.write_dl(rest)
