"""Article text: resiliparse's main content, then its blocks kept or dropped by length, link
density and their neighbours (a jusText-like pass written for neardup).

Resiliparse's main-content mode (``--extract main``) drops navigation, footers and sidebars by
element names and classes, but keeps what sits inside the article's container: share buttons,
"more stories" headings, author boxes, date and update lines. On the Zyte article benchmark
that is 12 % of its tokens. Trafilatura removes most of it, at about a tenth of the speed.

This pass asks resiliparse for the main content as minimal HTML (one block a line, links kept as
``<a>``), which costs about the same as plain text, and then judges each block from its text
alone, in the manner of jusText (Pomikálek 2011):

- **bad**: more than half of its words are link text (menus, link lists, tag clouds);
- **good**: at least ``GOOD_WORDS`` words (or ``GOOD_CHARS`` characters in scripts written
  without spaces) of which at most a third are link text;
- **short** (the rest) and **headings** are decided by their neighbours: a short block between
  two good blocks (skipping other short blocks and headings) is good, a heading followed by a good
  block is good, everything else is dropped.

The good blocks are joined by blank lines. A page where nothing is good (a gallery, a page of
short lines, a page nested too deep for the main-content pass) gets what ``--extract main``
gives, so that no page loses its text to the pass.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final, Literal

from resiliparse.extract.html2text import extract_plain_text

from neardup.text.html import extract_text, parse_html, too_deep

__all__ = ["GOOD_CHARS", "GOOD_WORDS", "Block", "article_blocks", "article_text", "judge"]

GOOD_WORDS: Final = 10
GOOD_CHARS: Final = 100
_SPACELESS_WORDS: Final = 3
_MAX_GOOD_LINKS: Final = 1 / 3
_MAX_LINKS: Final = 1 / 2

_TAG: Final = re.compile(r"<[^>]+>")
_LINK: Final = re.compile(r"<a\b[^>]*>(.*?)</a>", re.DOTALL)
_HEADING: Final = re.compile(r"<h[1-6]\b")

Verdict = Literal["good", "bad", "short", "heading"]


@dataclass(frozen=True, slots=True)
class Block:
    """One block of the main content: its text, its words, and those inside links."""

    text: str
    words: int
    link_words: int
    heading: bool


def _block(line: str) -> Block | None:
    text = " ".join(html.unescape(_TAG.sub(" ", line)).split())
    if not text:
        return None
    linked = sum(len(_TAG.sub(" ", inner).split()) for inner in _LINK.findall(line))
    return Block(text, len(text.split()), linked, bool(_HEADING.match(line)))


def article_blocks(raw: bytes, charset: str | None = None) -> Iterator[Block]:
    """The blocks of resiliparse's main content, in document order (none for a page nested
    too deep for the main-content pass, see :func:`neardup.text.html.too_deep`)."""
    tree = parse_html(raw, charset)
    if too_deep(raw, tree):
        return
    marked = extract_plain_text(tree, preserve_formatting="minimal_html", main_content=True,
                                links=True, comments=False, list_bullets=False,
                                alt_texts=False)
    for line in marked.split("\n"):
        block = _block(line.strip())
        if block is not None:
            yield block


def _first_verdict(block: Block) -> Verdict:
    links = block.link_words / block.words
    if links > _MAX_LINKS:
        return "bad"
    long = block.words >= GOOD_WORDS or (block.words <= _SPACELESS_WORDS
                                          and len(block.text) >= GOOD_CHARS)
    if long and links <= _MAX_GOOD_LINKS:
        return "good"
    return "heading" if block.heading else "short"


def _neighbour(verdicts: list[Verdict], index: int, step: int) -> Verdict:
    """The first verdict from ``index`` in direction ``step`` that is not short or a heading;
    ``bad`` past either end."""
    index += step
    while 0 <= index < len(verdicts) and verdicts[index] in ("short", "heading"):
        index += step
    return verdicts[index] if 0 <= index < len(verdicts) else "bad"


def judge(blocks: list[Block]) -> list[bool]:
    """Which blocks belong to the article (see the module docstring)."""
    first = [_first_verdict(block) for block in blocks]
    kept = []
    for index, verdict in enumerate(first):
        if verdict == "short":
            verdict = "good" if _neighbour(first, index, -1) == _neighbour(
                first, index, 1) == "good" else "bad"
        elif verdict == "heading":
            verdict = _neighbour(first, index, 1)
        kept.append(verdict == "good")
    return kept


def article_text(raw: bytes, charset: str | None = None) -> str:
    """The article text of a page: its good blocks, separated by blank lines; resiliparse's
    main content when no block is good."""
    blocks = list(article_blocks(raw, charset))
    text = "\n\n".join(block.text for block, kept in zip(blocks, judge(blocks), strict=True)
                       if kept)
    return text or extract_text(raw, charset=charset, main_content=True)
