"""Seeded corpora for the tests: words, texts with planted copies, HTML pages, documents and
JSONL files. The same arguments always give the same corpus.

The builders are parameterized rather than specialized: a test says how many documents, which
vocabulary, how long, and which share of exact copies, case variants and near-copies it needs.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from neardup.document import Document

Edits = Callable[[random.Random, int], int]
"""How many words a near-copy changes, given the random source and the copied text's length."""


def vocabulary(size: int, prefix: str = "w", suffix: str = "") -> list[str]:
    """``size`` distinct words: ``w0``, ``w1``, ... (with the given prefix and suffix)."""
    return [f"{prefix}{i}{suffix}" for i in range(size)]


def words(rng: random.Random, count: int, vocabulary: Sequence[str]) -> str:
    """``count`` words drawn from ``vocabulary``, separated by spaces."""
    return " ".join(rng.choice(vocabulary) for _ in range(count))


def prose(seed: int, count: int, vocabulary: Sequence[str]) -> str:
    """:func:`words` from a fresh random source seeded with ``seed``."""
    return words(random.Random(seed), count, vocabulary)


def one_edit(rng: random.Random, length: int) -> int:
    """A near-copy changes one word."""
    return 1


def edit_words(rng: random.Random, text: str, edits: int, vocabulary: Sequence[str]) -> str:
    """``text`` with ``edits`` words, at random positions, replaced by words of ``vocabulary``."""
    tokens = text.split()
    for _ in range(edits):
        tokens[rng.randrange(len(tokens))] = rng.choice(vocabulary)
    return " ".join(tokens)


def planted_texts(count: int, seed: int, *, vocabulary: Sequence[str],
                  lengths: tuple[int, int], exact: float = 0.0, upper: float = 0.0,
                  near: float = 0.0, edits: Edits = one_edit) -> list[str]:
    """Random texts of ``lengths`` words (inclusive bounds); each text after the first is, with
    the given probabilities, an exact copy of an earlier one, an upper-cased copy, or a
    near-copy with ``edits`` words changed; otherwise it is new."""
    rng = random.Random(seed)
    texts: list[str] = []
    for _ in range(count):
        kind = rng.random()
        if texts and kind < exact:
            texts.append(rng.choice(texts))
        elif texts and kind < exact + upper:
            texts.append(rng.choice(texts).upper())
        elif texts and kind < exact + upper + near:
            copied = rng.choice(texts)
            texts.append(edit_words(rng, copied, edits(rng, len(copied.split())), vocabulary))
        else:
            texts.append(words(rng, rng.randint(*lengths), vocabulary))
    return texts


def html_page(blocks: Sequence[str], title: str | None = None) -> str:
    """An HTML page with one ``<p>`` per block, one per line (and a ``<title>`` when given)."""
    head = f"<head><title>{title}</title></head>" if title is not None else ""
    body = "\n".join(f"<p>{block}</p>" for block in blocks)
    return f"<html>{head}<body>\n{body}\n</body></html>\n"


def text_rows(texts: Sequence[str], prefix: str = "d",
              url: Callable[[int], str] | None = None) -> list[dict[str, Any]]:
    """One JSONL row per text: ``{"id": prefix + index, "text": ...}``, plus ``url(index)``."""
    return [{"id": f"{prefix}{index}", "text": text} | ({"url": url(index)} if url else {})
            for index, text in enumerate(texts)]


def text_documents(texts: Sequence[str], prefix: str = "d",
                   url: Callable[[int], str] | None = None) -> list[Document]:
    """One plain-text :class:`Document` per text, ids and URLs as in :func:`text_rows`."""
    return [Document(id=row["id"], raw=row["text"].encode(), kind="text", url=row.get("url"))
            for row in text_rows(texts, prefix, url)]


def write_jsonl(folder: Path, rows: Sequence[Mapping[str, Any] | str], files: int = 1,
                stem: str = "part") -> list[str]:
    """``rows`` dealt round-robin into ``files`` JSONL files ``<stem>-NN.jsonl`` in ``folder``
    (created); a row given as a string is written as it is (to plant a bad line)."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for part in range(files):
        path = folder / f"{stem}-{part:02d}.jsonl"
        path.write_text("".join((row if isinstance(row, str) else json.dumps(row)) + "\n"
                                for row in rows[part::files]), encoding="utf-8")
        paths.append(str(path))
    return paths


def write_corpus(folder: Path, documents: int, files: int, seed: int) -> list[str]:
    """The tests' usual corpus: JSONL files of 80 to 240 random words (400-word vocabulary) with
    15% exact copies, 10% case variants and 25% near-copies (one word in 60 changed)."""
    texts = planted_texts(documents, seed, vocabulary=vocabulary(400), lengths=(80, 240),
                          exact=0.15, upper=0.1, near=0.25, edits=lambda _, n: max(1, n // 60))
    return write_jsonl(folder, text_rows(texts), files)


def write_sites(folder: Path, documents: int, seed: int) -> list[str]:
    """Two JSONL files of HTML pages on three hosts; one host puts a shared frame (header, menu,
    footer) around every page; exact copies (20%), near-copies (25%: a word changed, one
    added) and contained pages (10%: an article inside a longer one) are planted."""
    rng = random.Random(seed)
    terms = vocabulary(300)
    frame = [words(rng, 40, terms) for _ in range(3)]
    articles: list[list[str]] = []
    rows = []
    for index in range(documents):
        host = rng.choice(["framed.example", "a.example", "b.example"])
        kind = rng.random()
        if articles and kind < 0.2:
            body = list(rng.choice(articles))
        elif articles and kind < 0.45:
            body = [p.replace("w1 ", "w2 ", 1) for p in rng.choice(articles)]
            body[-1] = body[-1] + " w7"
        elif articles and kind < 0.55:
            body = [*rng.choice(articles), words(rng, 30, terms)]
        else:
            body = [words(rng, rng.randint(30, 80), terms) for _ in range(rng.randint(2, 4))]
        articles.append(body)
        shown = [frame[0], *body, frame[1], frame[2]] if host == "framed.example" else body
        rows.append({"id": f"d{index}", "url": f"http://{host}/{index}", "html": html_page(shown)})
    return write_jsonl(folder, rows, 2, stem="sites")


def _sentence(rng: random.Random) -> str:
    return words(rng, rng.randint(6, 12), vocabulary(400)) + "."


def _variant(rng: random.Random, sentences: list[str]) -> list[str]:
    """A planted copy: reordered by blocks of three sentences (the same shingle paragraphs,
    other shingles), one sentence changed, or a few sentences added."""
    kind = rng.random()
    if kind < 0.35:
        blocks = [sentences[i:i + 3] for i in range(0, len(sentences), 3)]
        rng.shuffle(blocks)
        return [s for block in blocks for s in block]
    if kind < 0.75:
        changed = list(sentences)
        changed[rng.randrange(len(changed))] = _sentence(rng)
        return changed
    return [*sentences, *(_sentence(rng) for _ in range(3))]


def write_articles(folder: Path, documents: int, seed: int) -> list[str]:
    """Two JSONL files of one-paragraph pages of sentences on three hosts (one framing every
    page with the same header and footer): exact copies, reordered, edited and extended copies,
    and short pages."""
    rng = random.Random(seed)
    frame = [_sentence(rng) for _ in range(3)]
    written: list[list[str]] = []
    rows = []
    for index in range(documents):
        host = rng.choice(["framed.example", "a.example", "b.example"])
        kind = rng.random()
        if written and kind < 0.15:
            sentences = list(rng.choice(written))
        elif written and kind < 0.55:
            sentences = _variant(rng, rng.choice(written))
        elif kind < 0.65:
            sentences = [_sentence(rng) for _ in range(3)]
        else:
            sentences = [_sentence(rng) for _ in range(rng.randint(9, 24))]
        written.append(sentences)
        shown = [*frame, *sentences, *frame] if host == "framed.example" else sentences
        rows.append({"id": f"d{index}", "url": f"http://{host}/{index}",
                     "html": html_page([" ".join(shown)])})
    return write_jsonl(folder, rows, 2, stem="articles")


def write_pages(folder: Path, seed: int = 7) -> None:
    """Six unrelated HTML files ``page0.html``.. of 80 paragraphs (3 of them long), and a
    near-copy of the first, ``page6.html``, with two words of one short paragraph changed."""
    rng = random.Random(seed)
    terms = vocabulary(3000, suffix="x")
    folder.mkdir()
    pages = [[[rng.choice(terms) for _ in range(40 if i < 3 else 12)] for i in range(80)]
             for _ in range(6)]
    copy = [list(p) for p in pages[0]]
    copy[50][3], copy[50][7] = "changed", "edited"
    for index, paragraphs in enumerate([*pages, copy]):
        page = html_page([" ".join(p) + "." for p in paragraphs], title="t")
        (folder / f"page{index}.html").write_text(page, encoding="utf-8")


def edited_documents(count: int, seed: int) -> list[Document]:
    """Text documents of 200 random words (3,000-word vocabulary) on seven hosts; every third
    is a copy of an earlier one with 0 to 3 words changed. Ids and URLs carry the seed, so
    corpora of different seeds can go into one store."""
    rng = random.Random(seed)
    terms = vocabulary(3000, prefix="word")
    texts: list[str] = []
    for index in range(count):
        if index % 3 == 2:
            texts.append(edit_words(rng, texts[rng.randrange(len(texts))], rng.randrange(4),
                                    terms))
        else:
            texts.append(words(rng, 200, terms))
    return text_documents(texts, f"d{seed}-",
                          url=lambda index: f"http://site{index % 7}.example/{seed}/{index}")


def word_lines(rng: random.Random, count: int, words: int = 12,
               vocabulary: Sequence[str] = tuple(f"w{i}" for i in range(4000))) -> list[str]:
    """``count`` lines of ``words`` random words each."""
    return [" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(count)]


def framed_page(frame: tuple[list[str], list[str], list[str]], article: list[str]) -> bytes:
    """A page of one site's frame (navigation links, a list of linked headlines, a footer)
    around an article of paragraphs."""
    nav, headlines, footer = frame
    return ("<html><body><header><nav><ul>"
            + "".join(f"<li><a href='/n{i}'>{x}</a></li>" for i, x in enumerate(nav))
            + "</ul></nav></header><main><article><h1>Story</h1>"
            + "".join(f"<p>{x}</p>" for x in article)
            + "</article><aside><ul>"
            + "".join(f"<li><a href='/h{i}'>{x}</a></li>" for i, x in enumerate(headlines))
            + "</ul></aside></main><footer>" + "".join(f"<p>{x}</p>" for x in footer)
            + "</footer></body></html>").encode()


def framed_sites(pages: int, seed: int = 0) -> list[Document]:
    """Sites a and b, ``pages`` pages each in the site's own frame (about three times the
    length of an article); page 0 of both sites holds the same article, every other page its
    own."""
    rng = random.Random(seed)
    shared = word_lines(rng, 20)
    docs = []
    for site in "ab":
        frame = (word_lines(rng, 50, 4), word_lines(rng, 25, 8), word_lines(rng, 25))
        for page in range(pages):
            article = shared if page == 0 else word_lines(rng, 20)
            docs.append(Document(f"{site}{page}", framed_page(frame, article),
                                 url=f"https://{site}.example/story/{page}",
                                 host=f"{site}.example"))
    return docs
