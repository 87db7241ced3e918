"""The URL a page declares for itself: ``<link rel=canonical>``, ``og:url`` or ``<base href>``.

A loose ``.html`` file has no URL, so it has no host and per-host template removal cannot see
it. Most saved pages still name their address in the head: the canonical link (search engines
ask for it), the Open Graph ``og:url`` (social previews), or a ``<base href>``. This module
finds the first absolute ``http``/``https`` one, in that order of trust.

It is a scan of the raw bytes, not a parse: the text layer parses each page once later, and a
second parse per file would cost more than reading it. The scan reads the head only (up to
``</head>`` or ``<body``, at most ``HEAD_BYTES``), takes ``<link>``, ``<meta>`` and ``<base>``
tags with their attributes quoted, single-quoted or bare, decodes character references
(``&amp;``), and ignores relative URLs (``/story/1`` names no host). A declaration inside an HTML
comment is skipped. Bytes are read as UTF-8 with replacement: every character of a host name
that matters here survives that, whatever the page's encoding (UTF-16 pages declare nothing
this scan can see).
"""

from __future__ import annotations

import html
import re
from typing import Final

from neardup.sources.fields import host_of

__all__ = ["HEAD_BYTES", "declared_host", "declared_url"]

#: How much of a page the scan reads at most when it finds no end of the head.
HEAD_BYTES: Final = 256 * 1024

_TAG: Final = re.compile(rb"<!--.*?-->|<(link|meta|base)\b([^>]*)>", re.IGNORECASE | re.DOTALL)
_ATTR: Final = re.compile(
    r"""([^\s"'=<>/]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?""")
_HEAD_END: Final = re.compile(rb"</head\s*>|<body[\s>]", re.IGNORECASE)
_WEB: Final = re.compile(r"https?://", re.IGNORECASE)
# The order of trust: a canonical link names the page; og:url usually does; <base> often
# names only the site (its host is still the page's host).
_RANKS: Final = ("canonical", "og:url", "base")
# What a tag's text must hold to be worth parsing.
_WANTED: Final = {b"link": b"canonical", b"meta": b"og:url", b"base": b"href"}


def _attributes(text: bytes) -> dict[str, str]:
    found: dict[str, str] = {}
    for name, double, single, bare in _ATTR.findall(text.decode("utf-8", "replace")):
        found.setdefault(name.lower(), html.unescape(double or single or bare).strip())
    return found


def _declaration(tag: bytes, text: bytes) -> tuple[str, str] | None:
    """(kind, URL) when the tag declares the page's address, else None."""
    name, lowered = tag.lower(), text.lower()
    if _WANTED[name] not in lowered:  # most <link> and <meta> tags: no attribute parsing
        return None
    attrs = _attributes(text)
    if name == b"link" and "canonical" in attrs.get("rel", "").lower().split():
        return "canonical", attrs.get("href", "")
    if name == b"meta" and "og:url" in (attrs.get("property", "").lower(),
                                        attrs.get("name", "").lower()):
        return "og:url", attrs.get("content", "")
    if name == b"base":
        return "base", attrs.get("href", "")
    return None


def _head(raw: bytes) -> bytes:
    end = _HEAD_END.search(raw, 0, HEAD_BYTES)
    return raw[: end.start() if end else HEAD_BYTES]


def declared_url(raw: bytes) -> str | None:
    """The absolute http(s) URL the page's head declares (canonical, then og:url, then base);
    None when it declares none."""
    if b"<" not in raw:
        return None
    best: dict[str, str] = {}
    for match in _TAG.finditer(_head(raw)):
        if match.group(1) is None:  # a comment
            continue
        found = _declaration(match.group(1), match.group(2))
        if found is not None and _WEB.match(found[1]) and host_of(found[1]):
            best.setdefault(*found)
    return next((best[kind] for kind in _RANKS if kind in best), None)


def declared_host(raw: bytes) -> str | None:
    """The host of :func:`declared_url` (lower case, no port), or None."""
    return host_of(declared_url(raw))
