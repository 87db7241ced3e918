"""Article text: the element of a page that holds its text-dense paragraphs, without its link
lists (``--extract article``, and the article view of :func:`neardup.text.extract.views`).

The same article in two sites' frames must give the same text, and two articles in one frame
different texts. Resiliparse's main-content mode (``--extract main``) keeps what surrounds the
article in its frame (related-story teasers with their excerpts, author boxes, notices), and
that differs between frames; trafilatura removes most of it at a tenth of the speed. This
module finds the article's own element instead, in the manner of Readability (Mozilla's
reader view), on the lexbor tree the full text is extracted from:

1. **Paragraphs**: the ``<p>`` and ``<pre>`` elements outside ``<aside>``, ``<footer>`` and
   ``<nav>`` with at least :data:`MIN_PARAGRAPH_CHARS` non-space characters, of which at most
   half are link text (a teaser's linked headline is not a paragraph).
2. **Container**: each paragraph adds its unlinked characters to its parent, half of them to its
   grandparent and a third to the element above; the element with the highest score is the
   article's container. Below :data:`MIN_ARTICLE_CHARS` the page has no article.
3. **Region**: the container and those of its siblings that are of its kind (same tag and
   class, holding paragraphs: an article cut into sections) or that are paragraphs themselves
   (a lead paragraph beside the body). Siblings of another kind stay out even when they hold
   paragraphs: a "more stories" block of teasers with their excerpts often sits right beside
   the article, and it differs from frame to frame.
4. **Text**: the region as its HTML parsed on its own gives it (mostly the page's own tree cut
   down to the region, which the caller cannot use for anything else afterwards), passed
   through resiliparse's main-content mode (share bars, hidden elements and advertisements
   inside the article go; not when the region nests too deep for it, see
   :func:`neardup.text.html.too_deep`); of its blocks, those with more than half of their
   words in links are dropped (link lists, "read more").

Only counts of characters and the markup are used, no word lists, so any language and script
is judged alike. The cost is one CSS query, a few Python calls per paragraph (each node that
resiliparse hands to Python costs a few microseconds) and the main-content pass of the region:
less than the page's full-text extraction (``benchmarks/article_extractors.py``: a page's two
views cost 1.8 times its full text alone).
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Final

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import DocumentNode, DOMNode, ElementNode, HTMLTree

from neardup.text.html import nests_too_deep, parse_html, too_deep, tree_text

__all__ = [
    "MIN_ARTICLE_CHARS",
    "MIN_PARAGRAPH_CHARS",
    "Block",
    "article_blocks",
    "article_of_tree",
    "article_region",
    "article_text",
]

MIN_PARAGRAPH_CHARS: Final = 40
"""Non-space characters a paragraph needs to count toward its container."""
MIN_ARTICLE_CHARS: Final = 250
"""The least score of a container (unlinked paragraph characters, see the module docstring)."""
_LEAD_CHARS: Final = 80
_MAX_LINK_SHARE: Final = 0.5
_MAX_LEAD_LINK_SHARE: Final = 0.25
_ANCESTOR_WEIGHTS: Final = (1.0, 1 / 2, 1 / 3)
_MAX_PARAGRAPHS: Final = 5000
# One query (its matching in lexbor's C) rather than the paragraphs and those outside apart.
_PARAGRAPHS: Final = "p:not(aside *, footer *, nav *), pre:not(aside *, footer *, nav *)"
_ROOTS: Final = frozenset({"html", "#document"})
# Table and list parts alone lose their structure: they are wrapped back.
_WRAP: Final = {"td": ("table", "tbody", "tr"), "th": ("table", "tbody", "tr"),
                "tr": ("table", "tbody"), "tbody": ("table",), "thead": ("table",),
                "tfoot": ("table",), "li": ("ul",), "dd": ("dl",), "dt": ("dl",)}
# Elements that the page's tree, cut down to them, holds as a parse of their HTML alone would
# (not so a noscript or template, whose HTML alone opens the head, nor the body).
_IN_PLACE: Final = frozenset({"article", "blockquote", "dd", "div", "dl", "dt", "li", "main",
                              "ol", "p", "section", "span", "table", "tbody", "td", "tfoot",
                              "th", "thead", "tr", "ul"})

_TAG: Final = re.compile(r"<[^>]+>")
_LINK: Final = re.compile(r"<a\b[^>]*>(.*?)</a>", re.DOTALL)
_HEADING: Final = re.compile(r"<h[1-6]\b")


@dataclass(frozen=True, slots=True)
class Block:
    """One block of the article region: its text, its words, and those inside links."""

    text: str
    words: int
    link_words: int
    heading: bool

    @property
    def linked(self) -> bool:
        """More than half of the words are link text (a link list, a "read more" line)."""
        return self.link_words > _MAX_LINK_SHARE * self.words


def _dense(text: str) -> int:
    """Characters other than white space."""
    return len("".join(text.split()))


def _paragraph_score(paragraph: ElementNode) -> tuple[int, int]:
    """(non-space characters, of them in links) of a paragraph element."""
    chars = _dense(paragraph.text or "")
    if chars < MIN_PARAGRAPH_CHARS:
        return chars, 0
    links = paragraph.get_elements_by_tag_name("a")  # a fifth of a CSS query's cost
    if not len(links):  # most paragraphs: no link node made (each costs a weak-reference entry)
        return chars, 0
    return chars, sum(_dense(a.text or "") for a in links.values())


def _paragraphs(doc: DocumentNode) -> list[ElementNode]:
    """The page's paragraph elements outside the article's reach left out, in document order
    (the first :data:`_MAX_PARAGRAPHS`)."""
    return doc.query_selector_all(_PARAGRAPHS).values()[:_MAX_PARAGRAPHS]


def _scores(tree: HTMLTree) -> dict[DOMNode, float]:
    """Each ancestor of a paragraph (three levels up) with its share of the paragraph's
    unlinked characters."""
    doc = tree.document
    if doc is None:
        return {}
    scores: dict[DOMNode, float] = {}
    parents: dict[DOMNode, DOMNode | None] = {}  # resiliparse makes a new node object per
    for paragraph in _paragraphs(doc):  # .parent: each ancestor's asked once
        chars, linked = _paragraph_score(paragraph)
        if chars < MIN_PARAGRAPH_CHARS or linked > _MAX_LINK_SHARE * chars:
            continue
        node = paragraph.parent
        for weight in _ANCESTOR_WEIGHTS:
            if node is None or node.tag in _ROOTS:
                break
            scores[node] = scores.get(node, 0.0) + weight * (chars - linked)
            node = parents[node] if node in parents else parents.setdefault(node, node.parent)
    return scores


def _lead(node: DOMNode) -> bool:
    """A paragraph element that reads as text (a lead beside the article's body)."""
    if node.tag != "p" or not isinstance(node, ElementNode):
        return False
    chars, linked = _paragraph_score(node)
    return chars >= _LEAD_CHARS and linked <= _MAX_LEAD_LINK_SHARE * chars


def _kin(node: DOMNode, best: DOMNode) -> bool:
    """Of the container's kind: same tag and class (another section of one article)."""
    return (isinstance(node, ElementNode) and isinstance(best, ElementNode)
            and node.tag == best.tag and node.class_name == best.class_name)


def article_region(tree: HTMLTree) -> list[DOMNode]:
    """The elements that hold the article, in document order; empty when the page has none
    (see the module docstring)."""
    scores = _scores(tree)
    if not scores:
        return []
    best = max(scores, key=scores.__getitem__)
    if scores[best] < MIN_ARTICLE_CHARS:
        return []
    parent = best.parent
    if not isinstance(parent, ElementNode) or parent.tag in _ROOTS or best.tag == "body":
        return [best]
    return [node for node in parent.children.values()  # elements only: no text node made
            if node is best or (node in scores and _kin(node, best)) or _lead(node)]


def _block(line: str) -> Block | None:
    words = html.unescape(_TAG.sub(" ", line)).split()
    if not words:
        return None
    linked = (sum(len(_TAG.sub(" ", inner).split()) for inner in _LINK.findall(line))
              if "<a" in line else 0)
    return Block(" ".join(words), len(words), linked, bool(_HEADING.match(line)))


def _wrapped_html(node: DOMNode) -> str:
    tags = _WRAP.get(node.tag or "", ())
    return "".join(f"<{tag}>" for tag in tags) + node.html + "".join(
        f"</{tag}>" for tag in reversed(tags))


def _wrapped_node(tree: HTMLTree, node: DOMNode) -> DOMNode:
    outer = node
    for tag in reversed(_WRAP.get(node.tag or "", ())):
        element = tree.create_element(tag)
        if element is None:
            raise ValueError(f"lexbor made no <{tag}> element")
        element.append_child(outer)
        outer = element
    return outer


def _region_alone(tree: HTMLTree, region: list[DOMNode]) -> tuple[HTMLTree, bool]:
    """A tree holding the region alone, as its HTML parsed on its own gives it, and whether
    it nests too deep for the main-content pass (:func:`neardup.text.html.too_deep`). The
    page's own tree, its body's content replaced by the region, where that gives the same
    tree (a third of the cost of a second parse), else the region's HTML parsed."""
    body = tree.body
    if body is None or not all(node.tag in _IN_PLACE for node in region):
        fragment = "".join(map(_wrapped_html, region))
        alone = HTMLTree.parse(fragment)
        return alone, too_deep(fragment, alone)
    for node in region:  # detached first: lexbor links a node in without unlinking it
        parent = node.parent
        if parent is not None:
            parent.remove_child(node)
    body.replace_children(*(_wrapped_node(tree, node) for node in region))
    return tree, nests_too_deep(tree)


def article_blocks(tree: HTMLTree, region: list[DOMNode]) -> list[Block]:
    """The blocks of the region's text, in document order: the region alone (the page's
    ``tree`` is cut down to it, see :func:`_region_alone`), through resiliparse's
    main-content mode unless the region nests too deep for it."""
    alone, deep = _region_alone(tree, region)
    marked = extract_plain_text(alone, preserve_formatting="minimal_html",
                                main_content=not deep, links=True, comments=False,
                                list_bullets=False, alt_texts=False)
    return [block for block in map(_block, map(str.strip, marked.split("\n")))
            if block is not None]


def _article(tree: HTMLTree, region: list[DOMNode]) -> str | None:
    blocks = [block.text for block in article_blocks(tree, region) if not block.linked]
    return "\n\n".join(blocks) or None


def article_of_tree(tree: HTMLTree) -> str | None:
    """The article text of a parsed page, its blocks separated by blank lines; None when the
    page has no article. When the page has an article region, the tree is cut down to it:
    take anything else from the tree first."""
    region = article_region(tree)
    return _article(tree, region) if region else None


def article_text(raw: bytes, charset: str | None = None) -> str:
    """The article text of a page (``--extract article``); resiliparse's main content when
    the page has no article, so that no page loses its text."""
    tree = parse_html(raw, charset)
    region = article_region(tree)
    if region:
        article = _article(tree, region)
        if article is not None:
            return article
        tree = parse_html(raw, charset)  # cut down to the region: parsed again
    return tree_text(tree, main_content=not too_deep(raw, tree))
