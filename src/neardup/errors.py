"""Errors raised by neardup.

The tree::

    NeardupError                 every error the library raises on purpose
    ├── ConfigError              a parameter out of range or inconsistent (names the value)
    ├── SourceError              an input file that cannot be read at all (names the file)
    ├── OutputError              an output location that cannot be written (a full disk, ...)
    │   └── StoreError           a store cannot be opened as asked (missing, not a directory,
    │                            another writer holds it, opened read-only)
    ├── CorruptDataError         stored data fails its checks (truncated, altered, inconsistent)
    └── ServiceError             a neardup service answered with an error (HTTP status, its
                                 JSON message, Retry-After on 503), or could not be reached

A bad *record* inside a readable file is not an error: it is skipped and counted by reason
(see :class:`neardup.sources.SourceStats`).
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "CorruptDataError",
    "NeardupError",
    "OutputError",
    "ServiceError",
    "SourceError",
    "StoreError",
]


class NeardupError(Exception):
    """Base class of every error neardup raises on purpose."""


class ConfigError(NeardupError, ValueError):
    """A configuration value is invalid; the message names the field and the value."""


class SourceError(NeardupError):
    """An input cannot be opened or read; the message names the path and the cause."""

    def __init__(self, path: str, cause: str) -> None:
        super().__init__(f"{path}: {cause}")
        self.path = path
        self.cause = cause


class OutputError(NeardupError):
    """An output cannot be written; the message names the path and the cause."""


class StoreError(OutputError):
    """A store cannot be opened as asked; the message names the path and the cause."""


class CorruptDataError(NeardupError):
    """Stored data is truncated, altered or inconsistent; the message says what failed. Such data
    is never half-read: the check fails before any value is returned."""


class ServiceError(NeardupError):
    """A call to a neardup service failed: ``status`` is the HTTP status (0 when the service
    could not be reached), ``retry_after`` the seconds a 503 asked the caller to wait."""

    def __init__(self, url: str, status: int, message: str,
                 retry_after: float | None = None) -> None:
        super().__init__(f"{url}: {status or 'unreachable'}: {message}")
        self.url = url
        self.status = status
        self.message = message
        self.retry_after = retry_after
