"""Non-content pages: ``robots.txt`` files, error pages and empty pages, labelled so the report
counts them apart from the content a reader cares about.

A page's kind is read from what every run keeps for every document (its URL and its number of
tokens): a URL whose path ends in ``/robots.txt`` is ``robots``; a URL naming an error page
(``/404``, ``/error``, ``not-found``, ...) is ``error``; a page with fewer than
:data:`EMPTY_TOKENS` tokens is ``empty``. The text of a page, where the report reads it (the
members of the clusters it shows), can also mark it ``error`` (:func:`text_kind`: a short text
opening with an HTTP error phrase, or saying that the page, item or file asked for cannot be
found: the "soft 404" a server sends with status 200).
"""

from __future__ import annotations

import re
from typing import Literal
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc

from neardup._types import I8

__all__ = ["CONTENT", "EMPTY_TOKENS", "KINDS", "PageKind", "page_kind", "page_kinds",
           "text_kind"]

PageKind = Literal["content", "robots", "error", "empty"]
CONTENT: PageKind = "content"
#: Every kind, the non-content ones after ``content``.
KINDS: tuple[PageKind, ...] = ("content", "robots", "error", "empty")
#: Pages with fewer tokens than this are ``empty``.
EMPTY_TOKENS = 3
#: Texts longer than this many characters are never read as error pages.
ERROR_TEXT_CHARS = 600

#: What comes before a URL's path (the scheme and the host), as the standard library splits it.
_SCHEME_HOST = r"^[A-Za-z][A-Za-z0-9+.-]*:(//[^/?#]*)?"
_ERROR_PATH = re.compile(r"(^|[/_.-])(40[0-9]|50[0-9]|error|errors|not[-_]?found|"
                         r"page[-_]?not[-_]?found)([/_.-]|$)", re.IGNORECASE)
_ERROR_TEXT = re.compile(
    r"^\W*(error\W*)?(40[0134]|50[0234])?\W*(not found|page not found|forbidden|"
    r"access denied|internal server error|service unavailable|bad gateway|bad request|"
    r"the page you requested|this page (does not|doesn't) exist|file not found)",
    re.IGNORECASE)
_MISSING_TEXT = re.compile(
    r"\b(page|item|file|document|url|resource)\b[^.]{0,40}?\b(was not found|not found|"
    r"cannot be found|could not be found|does not exist|no longer exists)\b", re.IGNORECASE)


def page_kind(url: str | None, tokens: int) -> PageKind:
    """The kind of one page from its URL and its number of tokens."""
    if url:
        path = urlsplit(url).path
        if path.lower().endswith("/robots.txt"):
            return "robots"
        if _ERROR_PATH.search(path):
            return "error"
    return "empty" if tokens < EMPTY_TOKENS else "content"


def page_kinds(urls: pa.ChunkedArray | pa.Array, tokens: npt.NDArray[np.int64]) -> I8:
    """:func:`page_kind` of every page, as indices into :data:`KINDS` (vectorized: the same
    rules over whole columns)."""
    text = pc.fill_null(pc.cast(urls, pa.string()), "")
    path = pc.replace_substring_regex(text, _SCHEME_HOST, "")
    path = pc.replace_substring_regex(path, r"[?#].*$", "")
    robots = pc.ends_with(pc.utf8_lower(path), "/robots.txt").to_numpy(zero_copy_only=False)
    error = pc.match_substring_regex(path, _ERROR_PATH.pattern, ignore_case=True).to_numpy(
        zero_copy_only=False)
    codes = np.where(np.asarray(tokens) < EMPTY_TOKENS, KINDS.index("empty"), 0)
    codes = np.where(error, KINDS.index("error"), codes)
    return np.asarray(np.where(robots, KINDS.index("robots"), codes), dtype=np.int8)


def text_kind(kind: PageKind, text: str) -> PageKind:
    """``kind`` refined by the page's text: a short content page whose text opens with an HTTP
    error phrase is an ``error`` page."""
    short = kind == "content" and len(text) <= ERROR_TEXT_CHARS
    if short and (_ERROR_TEXT.search(text.strip()) or _MISSING_TEXT.search(text)):
        return "error"
    return kind
