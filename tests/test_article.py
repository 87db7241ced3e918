"""neardup.text.article: the element holding the text-dense paragraphs, without its link lists;
the same article in two real frames gives the same text, two articles in one frame differ."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.html import HTMLTree

from neardup.evaluation.extraction import token_overlap
from neardup.text.article import (
    _region_alone,
    _wrapped_html,
    article_of_tree,
    article_region,
    article_text,
)
from neardup.text.extract import extract, views
from neardup.text.html import parse_html

STORY = ("The council voted on Tuesday to rebuild the old harbour bridge, which has been closed "
         "to traffic since the storm of last winter damaged two of its piers.")
MORE = ("Work is due to start in the spring and the engineers expect the bridge to reopen "
        "within eighteen months, at a cost the council puts at four million.")
LAST = ("Residents asked how long the works would close the footpath along the quay, and the "
        "council promised a temporary ferry across the harbour mouth.")
TEASER = ("Ferry fares rise again as the operator blames fuel costs and a shortage of crews on "
          "the island routes this summer.")


def frame(article: str, sidebar: str = "") -> bytes:
    """A news page: navigation, the article in its element, related teasers with excerpts
    beside it (inside ``main``), a sidebar and a footer."""
    nav = "".join(f'<li><a href="/s{i}">Section {i}</a></li>' for i in range(6))
    teasers = (f'<div class="block"><h3>More stories</h3><div class="card">'
               f'<a href="/a"><h4>Fares rise</h4></a><p>{TEASER}</p></div></div>')
    return (f"<html><head><title>t</title></head><body><nav><ul>{nav}</ul></nav><main>"
            f'<div class="share"><a href="/f">Share on Facebook</a></div>'
            f'<div class="story">{article}</div>{teasers}</main>'
            f"<aside>{sidebar}</aside><footer><p>Copyright 2024 The Gazette. All rights "
            f"reserved. Contact us. Privacy policy.</p></footer></body></html>").encode()


def text_of(tree: HTMLTree, main_content: bool) -> str:
    return extract_plain_text(tree, preserve_formatting="minimal_html", main_content=main_content,
                              links=True, comments=False, list_bullets=False, alt_texts=False)


def paragraphs(*texts: str) -> str:
    return "".join(f"<p>{text}</p>" for text in texts)


def test_the_article_is_its_element_without_teasers_or_frame() -> None:
    raw = frame(paragraphs(STORY, MORE, LAST), sidebar=paragraphs(TEASER * 2))
    assert article_text(raw) == f"{STORY}\n\n{MORE}\n\n{LAST}"
    assert TEASER in extract(raw, "main")  # what the pass is for: main content keeps teasers


def test_link_lists_inside_the_article_are_dropped() -> None:
    links = '<p>Read more: <a href="/x">Bridge closures across the county this winter</a></p>'
    raw = frame(paragraphs(STORY, MORE) + links + paragraphs(LAST))
    assert article_text(raw) == f"{STORY}\n\n{MORE}\n\n{LAST}"


def test_an_article_cut_into_sections_is_kept_whole() -> None:
    sections = "".join(f'<section class="part"><h2>Part {i}</h2>{paragraphs(text)}</section>'
                       for i, text in enumerate((STORY, MORE, LAST)))
    text = article_text(frame(sections + paragraphs(STORY + " " + MORE)))
    assert all(part in text for part in (STORY, MORE, LAST, "Part 1"))


def test_scripts_without_spaces_count_by_characters() -> None:
    japanese = ("市議会は火曜日、昨冬の嵐で橋脚二本が損傷し通行止めとなっている古い港の橋を"
                "再建することを決めた。工事は春に始まる予定だ。")
    raw = frame(paragraphs(*(japanese[i:] + japanese[:i] for i in range(0, 60, 10))))
    assert article_text(raw).split("\n\n")[0] == japanese


def test_a_table_cell_holding_the_article_keeps_its_text() -> None:
    raw = frame(f"<table><tr><td>menu</td><td>{paragraphs(STORY, MORE, LAST)}</td></tr></table>")
    assert article_text(raw) == f"{STORY}\n\n{MORE}\n\n{LAST}"


def test_a_region_nesting_too_deep_skips_the_main_content_pass() -> None:
    # The main-content pass is quadratic in depth: 50,000 nested divs would take minutes.
    nested = "<div>" * 50_000 + "deep text" + "</div>" * 50_000
    raw = frame(paragraphs(STORY, MORE, LAST) + nested)
    assert article_text(raw).split("\n\n") == [STORY, MORE, LAST, "deep text"]


@pytest.mark.parametrize("holder", ["div", "section", "td", "li", "dd"])
def test_the_region_cut_out_of_the_page_reads_as_its_html_parsed_alone(holder: str) -> None:
    around = {"td": "<table><tr><td>menu</td>{}</tr></table>", "li": "<ul>{}</ul>",
              "dd": "<dl><dt>term</dt>{}</dl>"}.get(holder, "{}")
    body = f'<{holder} class="x">{paragraphs(STORY, MORE, LAST)}<div hidden>gone</div></{holder}>'
    raw = frame(around.format(body + body.replace(MORE, MORE.upper())))
    region = article_region(parse_html(raw))
    alone = HTMLTree.parse("".join(map(_wrapped_html, region)))
    tree = parse_html(raw)
    cut, deep = _region_alone(tree, article_region(tree))
    assert cut is tree and not deep and len(region) == 2
    assert text_of(cut, False) == text_of(alone, False) != ""
    assert text_of(cut, True) == text_of(alone, True)


def test_a_region_of_link_lists_falls_back_to_the_whole_pages_main_content() -> None:
    # Few characters in links (the paragraphs count) but most words (the blocks drop them).
    line = " ".join(f'<a href="/{c}">{c}</a>' for c in "abcdef")
    lists = paragraphs(*(f"{line} {'x' * 30} {'y' * 30}" for _ in range(5)))
    raw = frame(lists)
    assert article_region(parse_html(raw)) and article_of_tree(parse_html(raw)) is None
    assert article_text(raw) == extract(raw, "main") != ""
    assert TEASER in article_text(raw)  # the whole page's, not the region cut out of it


def test_pages_without_an_article() -> None:
    gallery = frame(paragraphs("Photo one", "Photo two", "Photo three"))
    assert article_of_tree(parse_html(gallery)) is None
    assert views(gallery)[1] is None
    assert article_text(gallery) == extract(gallery, "main") != ""  # one view keeps its text
    assert article_text(b"") == "" and views(b"") == ("", None)


def test_views_give_both_texts_from_one_parse() -> None:
    raw = frame(paragraphs(STORY, MORE, LAST))
    full, article = views(raw)
    assert full == extract(raw, "full") and "Section 3" in full
    assert article == extract(raw, "article") == f"{STORY}\n\n{MORE}\n\n{LAST}"


# -- real pages -----------------------------------------------------------------------------------


def _zyte(shared_data: Path, count: int) -> list[tuple[bytes, str]]:
    root = shared_data / "html" / "zyte-article-benchmark"
    truth = json.loads((root / "ground-truth.json").read_text())
    return [(gzip.decompress((root / "html" / f"{name}.html.gz").read_bytes()),
             truth[name]["articleBody"]) for name in sorted(truth)[:count]]


def test_closer_to_the_article_than_main_content_on_real_pages(shared_data: Path) -> None:
    """On 60 pages of the Zyte article benchmark: more precise than resiliparse's main content,
    losing little recall (means over pages of token precision and recall)."""
    mine, main = [], []
    for raw, body in _zyte(shared_data, 60):
        mine.append(token_overlap(article_text(raw), body))
        main.append(token_overlap(extract(raw, "main"), body))

    def mean(values: list[float]) -> float:
        return sum(values) / len(values)

    assert mean([o.precision for o in mine]) > mean([o.precision for o in main]) + 0.05
    assert mean([o.recall for o in mine]) > mean([o.recall for o in main]) - 0.06


def _framed(page: bytes, body: str) -> bytes | None:
    """A real page with ``body`` (one paragraph a line) in place of the paragraphs of the
    element whose ``<p>`` children hold the most text (chosen by that rule, not this module's)."""
    tree = HTMLTree.parse(page.decode("utf-8", "replace"))
    assert tree.document is not None
    held: dict[object, int] = {}
    for p in tree.document.query_selector_all("p").values():
        if p.parent is not None:
            held[p.parent] = held.get(p.parent, 0) + len(p.text or "")
    if not held:
        return None
    box = max(held, key=held.__getitem__)
    old = [child for child in box.child_nodes if child.tag == "p"]
    for child in old[1:]:
        box.remove_child(child)
    old[0].html = "".join(f"<p>{line}</p>" for line in body.split("\n") if line.strip())
    return (tree.document.html or "").encode()


def test_same_article_in_real_frames_and_different_articles_in_one(shared_data: Path) -> None:
    """Zyte article bodies put into the paragraphs' element of 12 real pages of the trafilatura
    evaluation: in most frames the article text is the body and nothing else (the others keep
    a story of their own elsewhere, which a real frame does not), and two articles in one frame
    share almost none of it."""
    pages = sorted((shared_data / "html" / "trafilatura-eval" / "pages").glob("*.html.gz"))[:12]
    bodies = [body for _, body in _zyte(shared_data, 40) if len(body.split()) > 200][:2]
    clean = 0
    for path in pages:
        texts = []
        for body in bodies:
            framed = _framed(gzip.decompress(path.read_bytes()), body)
            assert framed is not None
            texts.append(article_text(framed))
        overlaps = [token_overlap(text, body) for text, body in zip(texts, bodies, strict=True)]
        if all(o.precision > 0.95 and o.recall > 0.95 for o in overlaps):
            clean += 1
            assert token_overlap(texts[0], texts[1]).f1 < 0.5
    assert clean >= 8


def test_region_is_in_document_order(shared_data: Path) -> None:
    raw, _ = _zyte(shared_data, 1)[0]
    region = article_region(parse_html(raw))
    assert region and len({node.parent for node in region}) == 1
