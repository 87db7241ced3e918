"""HTML to text by the extractor a config names: ``full``, ``main``, ``article`` or
``trafilatura``; and both views of a page from one parse (:func:`views`).

``full`` and ``main`` are resiliparse's (:mod:`neardup.text.html`): the whole visible text, or
its main-content mode. ``article`` is :mod:`neardup.text.article`: the element holding the
page's text-dense paragraphs, without its link lists, at about resiliparse's speed.
``trafilatura`` is Barbaresi's extractor (the ``quality`` extra): slower, and in the
measurements of docs/templates.md closer to the article text, sidebars and related-story lists
left out. When trafilatura finds no main text in a page (it returns nothing), the page gets
resiliparse's main content instead, so that a page never loses its text to the extractor.
"""

from __future__ import annotations

import functools
from types import ModuleType

from neardup.config import EXTRACTORS, Extractor
from neardup.errors import ConfigError
from neardup.text.article import article_of_tree, article_text
from neardup.text.html import decode_payload, extract_text, parse_html, tree_text

__all__ = ["extract", "require_extractor", "trafilatura_text", "views"]


@functools.cache
def _trafilatura() -> ModuleType:
    try:
        import trafilatura
    except ImportError:
        raise ConfigError("extract='trafilatura' needs trafilatura: "
                          "pip install 'neardup[quality]'") from None
    return trafilatura


def require_extractor(extractor: str) -> None:
    """Fail early, with one line, when ``extractor`` is unknown or not installed."""
    if extractor not in EXTRACTORS:
        raise ConfigError(f"extract={extractor!r}: one of {', '.join(EXTRACTORS)}")
    if extractor == "trafilatura":
        _trafilatura()


def trafilatura_text(raw: bytes, charset: str | None = None) -> str:
    """Trafilatura's main text of a page (paragraphs on their own lines; comments left out,
    tables kept); resiliparse's main content when trafilatura finds none."""
    html = decode_payload(raw, charset)
    text = None
    if html.strip():
        text = _trafilatura().extract(html, include_comments=False, include_tables=True,
                                      deduplicate=False)
    if not text:
        return extract_text(raw, charset=charset, main_content=True)
    return str(text)


def extract(raw: bytes, extractor: Extractor, charset: str | None = None) -> str:
    """The text of an HTML payload by ``extractor``."""
    if extractor == "trafilatura":
        return trafilatura_text(raw, charset)
    if extractor == "article":
        return article_text(raw, charset)
    return extract_text(raw, charset=charset, main_content=extractor == "main")


def views(raw: bytes, charset: str | None = None) -> tuple[str, str | None]:
    """The two views of an HTML payload from one parse: its full text (as ``extract(raw,
    "full")``) and its article text (as ``extract(raw, "article")``), None when the page has
    no article (too little text-dense content, see :mod:`neardup.text.article`)."""
    tree = parse_html(raw, charset)
    full = tree_text(tree)  # first: the article pass cuts the tree down to its region
    return full, article_of_tree(tree)
