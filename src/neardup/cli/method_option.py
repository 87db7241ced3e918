"""``--method``: a choice among the methods the registry lists, read when the option is used or
shown (so that a method registered after the command was defined is offered too)."""

from __future__ import annotations

import click

from neardup.config import method_names

__all__ = ["MethodChoice"]


class MethodChoice(click.Choice[str]):
    """``--method``: the registry's methods, read when the option is used or shown (so a method
    registered after this module was imported is offered too)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return method_names()

    @choices.setter
    def choices(self, value: object) -> None:
        pass  # the registry decides
