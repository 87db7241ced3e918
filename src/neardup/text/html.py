"""HTML to text with resiliparse: decoding, plain text, main content, out-links, block segments.

Every function takes the payload bytes as stored (with the charset of the HTTP header, if any, as a
hint) and never raises on empty, binary, mis-encoded, huge or broken input: the worst case is an
empty result or replacement characters.

The pipeline calls :func:`parse_page` once per document: it builds the lexbor tree once and
returns a :class:`Page` with the text, the title and, on request, the out-links and the blocks.

Choices (all deliberate, pinned by ``tests/test_html.py``):

- **Text** is resiliparse's formatted extraction: one line per block element, a blank line after
  paragraphs and headings (``h1``-``h4``), the cells of a table row on one line separated by two
  tabs. Scripts, styles, ``noscript``, ``template``, form controls, buttons and iframes are
  dropped; entities are decoded; ``&nbsp;`` stays U+00A0. Image alt texts are kept, inline where
  the image is: with ``alt_texts=False`` resiliparse 2 drops whole ``figure``, ``picture`` and
  ``svg`` elements, captions and paragraphs inside them included. No list bullets are inserted,
  and every line is stripped, so neither bullets nor list indentation reach the fingerprints.
- **Main content** (``main_content=True``) is resiliparse's boilerplate removal (navigation,
  footers, sidebars, ads, hidden elements...) with user comments dropped too: comments differ
  between copies of one article, and the trafilatura evaluation counts them as boilerplate. Its cost
  grows with elements x nesting depth, so a page nested deeper than ``MAX_MAIN_CONTENT_DEPTH``
  (256) elements gets its full text instead (real pages stay under 64).
- **Links** are the ``href`` of ``<a>`` elements, resolved against ``<base href>`` (itself
  resolved against the page URL) or the page URL; fragments are cut, only ``http``/``https`` URLs
  with a host are kept, scheme and host are lower-cased, duplicates dropped in document order.
- **Blocks** (for SMFA, Wang & Chen) are the text runs between block boundaries, so the text of
  nested blocks is never repeated in their ancestors: ``<div>a<p>b</p>c</div>`` gives ``a``,
  ``b``, ``c``. The block elements are those of resiliparse's formatter: ``address article aside
  blockquote center dd details div dl dt fieldset figcaption figure footer form h1-h6 header
  hgroup hr li main nav ol p pre section table tbody tfoot thead tr ul``, and each table cell
  (``td``, ``th``) is a block of its own; ``<br>`` is *not* a boundary (it breaks lines inside a
  paragraph), but each line of a ``<pre>`` is a block. Segments are white-space collapsed, in
  document order; empty ones are dropped. The segmentation is resiliparse's (C), several times
  faster than walking the tree from Python (each node visited from Python costs about 4
  microseconds in resiliparse 2). A quirk inherited from resiliparse: a ``<table>`` right after an
  inline *element* (not text) of the same parent does not start a new block
  (``<span>a</span><table><tr><td>b`` gives ``ab``).
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import urljoin, urlsplit, urlunsplit

from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import detect_encoding, map_encoding_to_html5
from resiliparse.parse.html import DocumentNode, HTMLParserException, HTMLTree

__all__ = [
    "Page",
    "decode_payload",
    "decode_utf8",
    "extract_links",
    "extract_text",
    "html_blocks",
    "nests_too_deep",
    "parse_html",
    "parse_page",
    "too_deep",
    "tree_text",
]

_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_BOM_PREFIXES = tuple(bom for bom, _ in _BOMS)
_UTF16 = frozenset({"utf-16-le", "utf-16-be"})
#: Deeper pages get the full text even when main content is asked for (see :func:`too_deep`).
MAX_MAIN_CONTENT_DEPTH = 256
_DEPTH_CHECK_TAGS = 4000
_DEPTH_SELECTOR = "*" + " > *" * MAX_MAIN_CONTENT_DEPTH
_URL_JUNK = re.compile(r"[\t\n\r]")
_WEB_SCHEMES = frozenset({"http", "https"})
# Shapes whose resolution needs no urllib: an absolute http(s) URL with a plain host, and a
# root-relative path without dot segments, white space or backslashes.
_SIMPLE_URL = re.compile(r"(https?)://([-A-Za-z0-9._~%:]+)((?:[/?#][^\s\\]*)?)", re.IGNORECASE)
_SIMPLE_PATH = re.compile(r"/(?![/\\.])(?:(?!/\.)[^\s\\])*")


@dataclass(frozen=True, slots=True)
class Page:
    """What the pipeline needs from one HTML page, from a single parse.

    ``links`` and ``blocks`` are empty unless :func:`parse_page` was asked for them.
    """

    text: str
    title: str = ""
    links: tuple[str, ...] = ()
    blocks: tuple[str, ...] = ()


# -- decoding --------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _codec(name: str | None) -> str | None:
    """The Python codec for a charset label, after the WHATWG mapping; ``None`` when unusable."""
    if not name:
        return None
    try:
        label = map_encoding_to_html5(name.strip(), fallback_utf8=False)
        return codecs.lookup(label).name if label else None
    except (LookupError, ValueError, TypeError):
        return None


def decode_payload(raw: bytes, charset: str | None = None) -> str:
    """Decode an HTML payload to ``str``; never raises.

    Order: a byte-order mark wins; a declared UTF-16 is honoured; then bytes that are valid UTF-8
    are UTF-8 whatever the declaration says (a Latin-1 HTTP default over a UTF-8 page is the common
    lie, and real text in another encoding is almost never valid UTF-8); then the declared
    ``charset`` (when it names a known encoding and decodes cleanly); then the ``<meta>`` charset,
    then the detected encoding; last, the best guess with U+FFFD for the bytes that do not decode.
    """
    if not raw:
        return ""
    for bom, encoding in _BOMS:
        if raw.startswith(bom):
            return raw[len(bom) :].decode(encoding, "replace")
    declared = _codec(charset)
    if declared in _UTF16:
        return raw.decode(declared, "replace")
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        pass
    tried = {"utf-8"}
    best = declared
    for guess in _guesses(raw, declared):
        best = best or guess
        if guess in tried:
            continue
        tried.add(guess)
        try:
            return raw.decode(guess)
        except UnicodeDecodeError:
            continue
    return raw.decode(best or "cp1252", "replace")


def decode_utf8(raw: bytes, charset: str | None = None) -> str | None:
    """What :func:`decode_payload` returns when it reads ``raw`` as UTF-8 as it stands (no
    byte-order mark, no declared UTF-16, valid UTF-8), whose UTF-8 form is then ``raw``
    itself; else None (the payload needs :func:`decode_payload`)."""
    if not raw or raw.startswith(_BOM_PREFIXES) or _codec(charset) in _UTF16:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _guesses(raw: bytes, declared: str | None) -> Iterator[str]:
    """Candidate encodings for bytes that are not UTF-8, best first, detected only when needed."""
    if declared:
        yield declared
    from_meta = _codec(detect_encoding(raw, from_html_meta=True))
    if from_meta and from_meta not in _UTF16:
        yield from_meta
    if from_meta in (None, "utf-8", *_UTF16):
        detected = _codec(detect_encoding(raw))
        if detected and detected not in _UTF16:
            yield detected


# -- parsing and text -----------------------------------------------------------------------------


def parse_html(raw: bytes | str, charset: str | None = None) -> HTMLTree:
    """Parse a payload (bytes, decoded with :func:`decode_payload`, or text) into a lexbor tree."""
    text = raw if isinstance(raw, str) else decode_payload(raw, charset)
    try:
        return HTMLTree.parse(text)
    except HTMLParserException:
        return HTMLTree.parse("")


def too_deep(raw: bytes | str, tree: HTMLTree) -> bool:
    """Whether the tree (parsed from ``raw``) nests deeper than :data:`MAX_MAIN_CONTENT_DEPTH`
    elements.

    Resiliparse's main-content pass costs (elements x depth): 16,000 nested ``<div>`` take seconds,
    100,000 take minutes. A page with fewer tags than the limit cannot be that deep, so the check
    (a CSS query, about 0.3 ms) only runs on pages with many tags.
    """
    tags = raw.count(b"<") if isinstance(raw, bytes) else raw.count("<")
    return tags > _DEPTH_CHECK_TAGS and _depth_query(tree)


def nests_too_deep(tree: HTMLTree) -> bool:
    """:func:`too_deep` of a tree whose source is not at hand: the elements of its body are
    counted first (fewer than the limit cannot nest deeper than it; a few microseconds per
    hundred elements), then the CSS query."""
    body = tree.body
    if body is None or len(body.get_elements_by_tag_name("*")) + 2 <= MAX_MAIN_CONTENT_DEPTH:
        return False  # + 2: <html> and <body> above them
    return _depth_query(tree)


def _depth_query(tree: HTMLTree) -> bool:
    doc = tree.document
    return doc is not None and doc.query_selector(_DEPTH_SELECTOR) is not None


def tree_text(tree: HTMLTree, *, main_content: bool = False) -> str:
    """Plain text of a parsed page (see :func:`extract_text`; the caller checks
    :func:`too_deep` before asking for the main content)."""
    text = extract_plain_text(
        tree,
        main_content=main_content,
        list_bullets=False,
        alt_texts=True,
        comments=False,
    )
    if not text:
        return ""
    text = "\n".join(map(str.strip, text.split("\n")))
    while "\n\n\n" in text:  # runs of blank lines to one (a replace pass: a tenth of a regex)
        text = text.replace("\n\n\n", "\n\n")
    return text.strip("\n")


def extract_text(raw: bytes, *, charset: str | None = None, main_content: bool = False) -> str:
    """Plain text of an HTML page: block elements on their own lines, paragraphs separated by a
    blank line; ``main_content=True`` removes the boilerplate first."""
    tree = parse_html(raw, charset)
    return tree_text(tree, main_content=main_content and not too_deep(raw, tree))


# -- links ----------------------------------------------------------------------------------------


def _absolute_slow(href: str, base: str | None) -> str | None:
    try:
        parts = urlsplit(urljoin(base, href) if base else href)
    except ValueError:
        return None
    if parts.scheme not in _WEB_SCHEMES or not parts.netloc:
        return None
    return urlunsplit((parts.scheme, parts.netloc.lower(), parts.path, parts.query, ""))


def _absolute(href: str, base: str | None, origin: str | None) -> str | None:
    """``href`` as an absolute http(s) URL without fragment, or ``None``.

    The common shapes (absolute http(s) URLs and root-relative paths) skip urllib, which costs
    tens of microseconds per link; the result is the same as :func:`_absolute_slow`.
    """
    href = href.strip()
    if not href or href[0] == "#":
        return None
    if "\t" in href or "\n" in href or "\r" in href:
        href = _URL_JUNK.sub("", href)
    if href[0] == "/" and origin and _SIMPLE_PATH.fullmatch(href):
        url = origin + href.partition("#")[0]
        return url[:-1] if url[-1] == "?" else url
    simple = _SIMPLE_URL.fullmatch(href)
    if simple is None:
        return _absolute_slow(href, base)
    scheme, netloc, rest = simple.groups()
    rest = rest.partition("#")[0]
    if rest.endswith("?"):
        rest = rest[:-1]
    return f"{scheme.lower()}://{netloc.lower()}{rest}"


def _origin(base: str | None) -> str | None:
    """``scheme://host`` of an http(s) base URL, for root-relative links."""
    if base is None:
        return None
    url = _absolute_slow(base, None)
    if url is None:
        return None
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _base(doc: DocumentNode, base_url: str | None) -> str | None:
    """The URL relative links resolve against: ``<base href>`` (resolved), else the page URL."""
    base_el = doc.query_selector("base[href]")
    if base_el is None:
        return base_url
    href = _URL_JUNK.sub("", (base_el.get_attribute("href") or "").strip())
    if not href:
        return base_url
    try:
        return urljoin(base_url, href) if base_url else href
    except ValueError:
        return base_url


def _links(tree: HTMLTree, base_url: str | None) -> list[str]:
    doc = tree.document
    if doc is None:
        return []
    base = _base(doc, base_url)
    origin = _origin(base)
    anchors = doc.query_selector_all("a[href]").values()
    seen: dict[str, None] = {}
    for href in dict.fromkeys(a.get_attribute("href") or "" for a in anchors):
        url = _absolute(href, base, origin)
        if url is not None:
            seen[url] = None
    return list(seen)


def extract_links(
    raw: bytes | HTMLTree, base_url: str | None = None, *, charset: str | None = None
) -> list[str]:
    """Absolute http(s) out-links of ``<a href>``, in document order, without duplicates."""
    tree = raw if isinstance(raw, HTMLTree) else parse_html(raw, charset)
    return _links(tree, base_url)


# -- blocks ---------------------------------------------------------------------------------------


def _blocks(tree: HTMLTree) -> list[str]:
    """Block segments; replaces every ``<br>`` of ``tree`` by a space, so call it last on a tree."""
    doc = tree.document
    if doc is None:
        return []
    # Resiliparse makes a line break of <br>; a space keeps it inside its block. (Its minimal-HTML
    # output marks <br> but escapes text inconsistently in 2.0.1, so it cannot be used here.)
    for br in doc.query_selector_all("br").values():
        with contextlib.suppress(ValueError):
            br.outer_html = " "
    text = extract_plain_text(tree, list_bullets=False, alt_texts=True)
    out: list[str] = []
    for line in text.split("\n"):
        for cell in line.split("\t\t"):
            segment = " ".join(cell.split())
            if segment:
                out.append(segment)
    return out


def html_blocks(raw: bytes, *, charset: str | None = None) -> list[str]:
    """Block-level text segments of a page in document order (see the module docstring)."""
    return _blocks(parse_html(raw, charset))


# -- everything at once ---------------------------------------------------------------------------


def parse_page(
    raw: bytes,
    *,
    charset: str | None = None,
    base_url: str | None = None,
    main_content: bool = False,
    want_links: bool = False,
    want_blocks: bool = False,
) -> Page:
    """Parse once; return the text (full or main content), the title, and optionally the out-links
    and the block segments."""
    tree = parse_html(raw, charset)
    text = tree_text(tree, main_content=main_content and not too_deep(raw, tree))
    links = tuple(_links(tree, base_url)) if want_links else ()
    blocks = tuple(_blocks(tree)) if want_blocks else ()  # last: it edits the tree
    return Page(text, " ".join((tree.title or "").split()), links, blocks)
