"""Labeled pairs with controlled edits, for tests and for checking that a method behaves.

Each pair is an original page (a site template: title, navigation and footer lines, around a body
of paragraphs of words drawn from a seeded Zipf-like vocabulary) and a second page made from it
by one *kind* of change. The kind is the pair's ``group``; its label is ``1`` (a near-duplicate)
or ``0`` (not one):

===============  =====  ==========================================================================
kind             label  the second page
===============  =====  ==========================================================================
``insert``       1      ``edit_rate`` of the body's word count inserted at random places
``delete``       1      ``edit_rate`` of the body's words deleted
``template``     1      the same body inside another site's template
``ad``           1      an advertisement block of ``ad_words`` words inserted between paragraphs
``reorder``      1      the body's paragraphs in another order
``copy``         1      the same page, byte for byte (Broder's *identical* level)
``lexical``      1      the same words, some capitalised, some followed by punctuation, spaced
                        differently (*lexically equivalent* under the canonical form)
``rewrite``      0      ``rewrite_rate`` of the body's words replaced: a heavy rewrite
``same-site``    0      another body inside the same template
``unrelated``    0      another body inside another template
===============  =====  ==========================================================================

Kinds take turns (pair i has kind ``KINDS[i % 10]``), so every prefix of the output is balanced.
Each pair has ``text_a``/``text_b`` (one line per template line and per paragraph) and
``html_a``/``html_b`` (the same page as HTML, blocks as ``<div>`` and ``<p>``). The same config
gives the same pairs.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from neardup.errors import ConfigError, OutputError
from neardup.evaluation.labeled import LabeledPair

__all__ = ["KINDS", "POSITIVE_KINDS", "SyntheticConfig", "synthetic_pairs", "write_jsonl"]

POSITIVE_KINDS = ("insert", "delete", "template", "ad", "reorder", "copy", "lexical")
NEGATIVE_KINDS = ("rewrite", "same-site", "unrelated")
KINDS = POSITIVE_KINDS + NEGATIVE_KINDS
_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "de", "ba", "po", "gu", "fe",
              "ri", "an", "el", "or", "us", "th", "ch")


@dataclass(frozen=True, slots=True)
class SyntheticConfig:
    """How many pairs, the seed, and the size of each edit."""

    pairs: int = 80
    seed: int = 0
    edit_rate: float = 0.03
    rewrite_rate: float = 0.5
    ad_words: int = 30
    paragraphs: tuple[int, int] = (4, 7)
    paragraph_words: tuple[int, int] = (40, 90)
    vocabulary: int = 5000

    def __post_init__(self) -> None:
        checks = (
            (1 <= self.pairs <= 1_000_000, "pairs", self.pairs, "must be in 1..1000000"),
            (0 <= self.seed < 2**32, "seed", self.seed, "must be in 0..2**32-1"),
            (0.0 < self.edit_rate <= 0.2, "edit_rate", self.edit_rate, "must be in (0, 0.2]"),
            (0.2 <= self.rewrite_rate <= 1.0, "rewrite_rate", self.rewrite_rate,
             "must be in [0.2, 1]"),
            (1 <= self.ad_words <= 500, "ad_words", self.ad_words, "must be in 1..500"),
            (2 <= self.paragraphs[0] <= self.paragraphs[1] <= 50, "paragraphs",
             self.paragraphs, "must be (low, high) with 2 <= low <= high <= 50"),
            (5 <= self.paragraph_words[0] <= self.paragraph_words[1] <= 1000,
             "paragraph_words", self.paragraph_words,
             "must be (low, high) with 5 <= low <= high <= 1000"),
            (100 <= self.vocabulary <= 1_000_000, "vocabulary", self.vocabulary,
             "must be in 100..1000000"),
        )
        for ok, name, value, rule in checks:
            if not ok:
                raise ConfigError(f"{name}={value!r}: {rule}")

    @property
    def tag(self) -> str:
        return (f"synthetic:n{self.pairs}:seed{self.seed}:e{self.edit_rate}:r{self.rewrite_rate}"
                f":ad{self.ad_words}:p{self.paragraphs[0]}-{self.paragraphs[1]}"
                f":w{self.paragraph_words[0]}-{self.paragraph_words[1]}:v{self.vocabulary}")


@dataclass(frozen=True, slots=True)
class _Page:
    template: tuple[list[str], list[str]]  # header lines, footer lines
    body: list[list[str]]  # paragraphs of words
    separator: str = " "

    def lines(self) -> list[str]:
        header, footer = self.template
        return [*header, *(self.separator.join(p) for p in self.body), *footer]

    def text(self) -> str:
        return "\n".join(self.lines())

    def html(self) -> str:
        header, footer = self.template
        title = html.escape(header[0])
        blocks = [f"<div>{html.escape(line)}</div>" for line in header]
        blocks += [f"<p>{html.escape(self.separator.join(p))}</p>" for p in self.body]
        blocks += [f"<div>{html.escape(line)}</div>" for line in footer]
        return (f"<!doctype html><html><head><title>{title}</title></head><body>"
                + "".join(blocks) + "</body></html>")


class _Writer:
    """Words, paragraphs, templates and edits from one seeded generator."""

    def __init__(self, config: SyntheticConfig) -> None:
        self.config = config
        self.rng = np.random.default_rng(config.seed)
        parts = self.rng.integers(0, len(_SYLLABLES), size=(config.vocabulary, 3))
        lengths = self.rng.integers(1, 4, size=config.vocabulary)
        self.words = [
            "".join(_SYLLABLES[s] for s in row[:length]) + str(index % 7 or "")
            for index, (row, length) in enumerate(zip(parts, lengths, strict=True))]
        ranks = np.arange(1, config.vocabulary + 1, dtype=np.float64)
        self.weights = (1.0 / ranks) / np.sum(1.0 / ranks)

    def draw(self, count: int) -> list[str]:
        picks = self.rng.choice(len(self.words), size=count, p=self.weights)
        return [self.words[i] for i in picks]

    def body(self) -> list[list[str]]:
        low, high = self.config.paragraphs
        w_low, w_high = self.config.paragraph_words
        return [self.draw(int(self.rng.integers(w_low, w_high + 1)))
                for _ in range(int(self.rng.integers(low, high + 1)))]

    def template(self) -> tuple[list[str], list[str]]:
        header = [" ".join(self.draw(4)) for _ in range(3)]
        footer = [" ".join(self.draw(6)) for _ in range(2)]
        return header, footer

    def page(self) -> _Page:
        return _Page(self.template(), self.body())


def _insert(writer: _Writer, body: list[list[str]], count: int) -> list[list[str]]:
    out = [list(p) for p in body]
    sizes = np.array([len(p) for p in out], dtype=np.float64)
    for word in writer.draw(count):
        paragraph = out[int(writer.rng.choice(len(out), p=sizes / sizes.sum()))]
        paragraph.insert(int(writer.rng.integers(0, len(paragraph) + 1)), word)
    return out


def _delete(writer: _Writer, body: list[list[str]], count: int) -> list[list[str]]:
    owner = np.repeat(np.arange(len(body)), [len(p) for p in body])
    keep = np.ones(owner.size, dtype=np.bool_)
    keep[writer.rng.choice(owner.size, size=min(count, owner.size - 1), replace=False)] = False
    words = [w for p in body for w in p]
    out: list[list[str]] = [[] for _ in body]
    for index in np.flatnonzero(keep).tolist():
        out[owner[index]].append(words[index])
    return [p for p in out if p]


def _rewrite(writer: _Writer, body: list[list[str]], rate: float) -> list[list[str]]:
    out = [list(p) for p in body]
    places = [(i, j) for i, p in enumerate(out) for j in range(len(p))]
    chosen = writer.rng.choice(len(places), size=round(rate * len(places)), replace=False)
    for index, word in zip(chosen.tolist(), writer.draw(chosen.size), strict=True):
        i, j = places[index]
        out[i][j] = word
    return out


def _lexical(writer: _Writer, body: list[list[str]]) -> list[list[str]]:
    out = []
    for paragraph in body:
        marks = writer.rng.random(len(paragraph))
        out.append([w.capitalize() if m < 0.2 else f"{w}," if m > 0.9 else w
                    for w, m in zip(paragraph, marks.tolist(), strict=True)])
    return out


def _reordered(writer: _Writer, body: list[list[str]]) -> list[list[str]]:
    order = writer.rng.permutation(len(body))
    while np.array_equal(order, np.arange(len(body))):
        order = writer.rng.permutation(len(body))
    return [list(body[i]) for i in order]


def _edited(writer: _Writer, page: _Page, kind: str) -> _Page:
    """The second page of a pair of ``kind`` made from ``page``."""
    config, body = writer.config, page.body
    count = max(1, round(config.edit_rate * sum(len(p) for p in body)))
    if kind == "insert":
        return _Page(page.template, _insert(writer, body, count))
    if kind == "delete":
        return _Page(page.template, _delete(writer, body, count))
    if kind == "rewrite":
        return _Page(page.template, _rewrite(writer, body, config.rewrite_rate))
    if kind == "ad":
        edited = [list(p) for p in body]
        edited.insert(int(writer.rng.integers(1, len(edited))), writer.draw(config.ad_words))
        return _Page(page.template, edited)
    if kind == "reorder":
        return _Page(page.template, _reordered(writer, body))
    if kind == "copy":
        return page
    if kind == "lexical":
        return _Page(page.template, _lexical(writer, body), separator="  ")
    if kind == "same-site":
        return _Page(page.template, writer.body())
    if kind in ("template", "unrelated"):
        return _Page(writer.template(), writer.body() if kind == "unrelated" else body)
    raise ConfigError(f"kind={kind!r}: one of {', '.join(KINDS)}")


def synthetic_pairs(config: SyntheticConfig = SyntheticConfig()) -> list[LabeledPair]:
    """``config.pairs`` labeled pairs, kinds in turn (see the module docstring)."""
    writer = _Writer(config)
    pairs = []
    for index in range(config.pairs):
        kind = KINDS[index % len(KINDS)]
        first = writer.page()
        second = _edited(writer, first, kind)
        pairs.append(LabeledPair(
            pair_id=f"synthetic-{index}", label="1" if kind in POSITIVE_KINDS else "0",
            text_a=first.text(), text_b=second.text(), html_a=first.html(),
            html_b=second.html(), group=kind))
    return pairs


def write_jsonl(pairs: list[LabeledPair], path: str | Path) -> None:
    """Write pairs as labeled JSONL (the format :func:`~neardup.evaluation.read_labeled` reads)."""
    rows = []
    for pair in pairs:
        row = {"pair_id": pair.pair_id, "label": pair.label, "group": pair.group,
               "text_a": pair.text_a, "text_b": pair.text_b, "html_a": pair.html_a,
               "html_b": pair.html_b, **pair.extra}
        rows.append(json.dumps({k: v for k, v in row.items() if v is not None}))
    try:
        Path(path).write_text("".join(f"{row}\n" for row in rows), encoding="utf-8")
    except OSError as error:
        raise OutputError(f"{path}: {error.strerror or error}") from None
