"""``--text-field``, ``--html-field``, ``--id-field``, ``--url-field``: the columns of JSONL
lines and Parquet rows that hold a document's fields, on every command that reads rows."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from neardup.errors import ConfigError
from neardup.sources.fields import RowFields

__all__ = ["FIELD_OPTIONS", "field_options", "row_fields"]

F = TypeVar("F", bound=Callable[..., Any])

FIELD_OPTIONS = ("text_field", "html_field", "id_field", "url_field")
"""The parameter names of the options (for help sections)."""

_OPTIONS = (
    ("--text-field", "text", "Column (JSONL, Parquet) holding the plain text"),
    ("--html-field", "html", "Column holding the HTML, read when the text column is absent"),
    ("--id-field", "id", "Column holding the document id"),
    ("--url-field", "url", "Column holding the URL"),
)


def field_options(command: F) -> F:
    """Add the four options to a command (they arrive as ``text_field``... keyword arguments)."""
    for flag, default, help_text in reversed(_OPTIONS):
        command = click.option(flag, default=default, show_default=True, metavar="NAME",
                               help=f"{help_text}.")(command)
    return command


def row_fields(*, text_field: str, html_field: str, id_field: str,
               url_field: str) -> RowFields:
    """The :class:`RowFields` of the options."""
    try:
        return RowFields(text=text_field, html=html_field, id=id_field, url=url_field)
    except ConfigError as err:
        raise click.UsageError(str(err)) from err
