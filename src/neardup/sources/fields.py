"""The fields every source fills: which row columns hold them (:class:`RowFields`), and
normalising URL, host, date and record id."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Final
from urllib.parse import urlsplit

from neardup.errors import ConfigError

__all__ = [
    "DEFAULT_FIELDS",
    "WEB_SCHEMES",
    "RowFields",
    "clean_record_id",
    "clean_url",
    "host_of",
    "normalize_date",
    "scheme_of",
]

WEB_SCHEMES: Final = frozenset({"http", "https", "ftp", "file"})



@dataclass(frozen=True, slots=True)
class RowFields:
    """The columns of a JSONL line or Parquet row that hold a document's text, HTML, id and URL
    (the other columns keep their names: ``date``, ``fetched``, ``sweep``)."""

    text: str = "text"
    html: str = "html"
    id: str = "id"
    url: str = "url"

    def __post_init__(self) -> None:
        names = {"text": self.text, "html": self.html, "id": self.id, "url": self.url}
        for role, name in names.items():
            if not isinstance(name, str) or not name:
                raise ConfigError(f"the {role} field must be a non-empty column name, "
                                  f"got {name!r}")
        if len(set(names.values())) < len(names):
            raise ConfigError(f"one column cannot hold two fields: {names}")

    @property
    def tag(self) -> str:
        """A short stable description (empty for the default names)."""
        if self == DEFAULT_FIELDS:
            return ""
        return ",".join(f"{role}={getattr(self, role)}" for role in ("text", "html", "id", "url"))


DEFAULT_FIELDS: Final = RowFields()

_UNSAFE = re.compile(r"[\x00-\x20\x7f]")
_DIGITS = re.compile(r"\d{8,}")


def clean_url(value: str | None) -> str | None:
    """Strip whitespace and surrounding ``<>`` (wget writes them); percent-encode inner blanks.

    Returns None when nothing is left.
    """
    if value is None:
        return None
    url = value.strip()
    if url.startswith("<") and url.endswith(">"):
        url = url[1:-1].strip()
    if not url:
        return None
    return _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", url)


def scheme_of(url: str) -> str:
    """The lower-case scheme of ``url`` ('' when it has none)."""
    head, sep, _ = url.partition(":")
    if not sep or not head.isascii() or not head[:1].isalpha():
        return ""
    return head.lower()


def host_of(url: str | None) -> str | None:
    """The lower-case host name of ``url``, without port; None when it has none or is unparsable."""
    if not url:
        return None
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    return host or None


def clean_record_id(value: str | None) -> str | None:
    """A WARC-Record-ID without its angle brackets (``urn:uuid:...``); None when empty."""
    if value is None:
        return None
    rid = value.strip()
    if rid.startswith("<") and rid.endswith(">"):
        rid = rid[1:-1].strip()
    return rid or None


def _iso(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    text = moment.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


def _from_digits(text: str) -> datetime | None:
    """ARC and Wayback dates: ``YYYYMMDDhhmmss`` (some writers add more digits)."""
    digits = text[:14].ljust(14, "0")
    try:
        return datetime.strptime(digits, "%Y%m%d%H%M%S")
    except ValueError:
        return None


def normalize_date(value: str | float | None) -> str | None:
    """An ISO-8601 UTC string (``2014-01-26T20:06:24Z``) from a WARC, ARC, HTTP or epoch date.

    A string that does not parse is returned unchanged (ClueWeb has dates such as
    ``2009-03-65T08:43:19-0800``); an empty value or ``null`` gives None.
    """
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        try:
            return _iso(datetime.fromtimestamp(value, UTC))
        except (OverflowError, OSError, ValueError):
            return None
    text = value.strip()
    if not text or text.lower() in {"null", "none", "-"}:
        return None
    moment: datetime | None = None
    if _DIGITS.fullmatch(text):
        moment = _from_digits(text)
    else:
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            moment = _from_http_date(text)
    return _iso(moment) if moment is not None else text


def _from_http_date(text: str) -> datetime | None:
    """An RFC 2822 date (``Memento-Datetime``, HTTP ``Date``)."""
    from email.utils import parsedate_to_datetime  # rare: its import (socket...) costs 15 ms

    try:
        return parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
