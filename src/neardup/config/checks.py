"""The one validation rule of every config: a failed condition raises ConfigError, naming it."""

from __future__ import annotations

import re

from neardup.errors import ConfigError

__all__ = ["LANGUAGE", "require"]

LANGUAGE = re.compile(r"[a-z][a-z_]*")
"""A language name in lower case (stop words, stemming)."""


def require(condition: bool, name: str, value: object, rule: str) -> None:
    """Raise :class:`ConfigError` ``name=value: rule`` unless ``condition`` holds."""
    if not condition:
        raise ConfigError(f"{name}={value!r}: {rule}")
