"""Command help grouped by topic: ``--help`` lists options under headings instead of one list.

A command with ``essentials`` shows only those options under ``--help``, each with a one-line
text, and every option, grouped, under ``--help-all``."""

from __future__ import annotations

from typing import Any

import click

__all__ = ["GroupedCommand"]

_ALL = "neardup.help_all"


def _show_all(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    ctx.meta[_ALL] = True
    click.echo(ctx.get_help(), color=ctx.color)
    ctx.exit()


class GroupedCommand(click.Command):
    """A command whose ``--help`` shows its options in the sections of ``sections``
    (heading -> option names, as the function's parameters are named); an option in no section
    is listed under "Other options". With ``essentials`` (option name -> one-line help),
    ``--help`` lists those only and ``--help-all`` everything."""

    def __init__(self, *args: Any, sections: dict[str, tuple[str, ...]] | None = None,
                 essentials: dict[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.sections = sections or {}
        self.essentials = essentials or {}
        if self.essentials:
            self.params.append(click.Option(
                ["--help-all"], is_flag=True, expose_value=False, is_eager=True,
                callback=_show_all, help="Show every option, grouped by topic, and exit."))

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows: dict[str, tuple[str, str]] = {}
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if isinstance(param, click.Option) and record is not None and param.name:
                is_help = "--help" in param.opts
                rows["help" if is_help else param.name] = record
        if self.essentials and not ctx.meta.get(_ALL):
            self._format_essentials(rows, formatter)
            return
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

    def _format_essentials(self, rows: dict[str, tuple[str, str]],
                           formatter: click.HelpFormatter) -> None:
        brief = [(rows[name][0], text) for name, text in self.essentials.items() if name in rows]
        brief += [rows[name] for name in ("help_all", "help") if name in rows]
        with formatter.section("Options most runs need (--help-all: every option, grouped)"):
            formatter.write_dl(brief)
