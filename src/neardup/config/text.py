"""How a payload becomes text, and which shingles are site template: frozen configs with tags."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from neardup.config.checks import require as _require

__all__ = ["EXTRACTORS", "Extractor", "TemplateConfig", "TextConfig"]

Extractor = Literal["full", "main", "article", "trafilatura"]
EXTRACTORS: tuple[Extractor, ...] = ("full", "main", "article", "trafilatura")
"""HTML to text: resiliparse's full text, resiliparse's main content, the article's element
(:mod:`neardup.text.article`), trafilatura's extraction."""


@dataclass(frozen=True, slots=True)
class TextConfig:
    """How a payload becomes text: ``extract`` is ``full`` (resiliparse's full text, default),
    ``main`` (resiliparse's main content), ``article`` (the element holding the page's
    text-dense paragraphs, :mod:`neardup.text.article`) or ``trafilatura`` (the ``quality``
    extra);
    ``thai_words`` cuts runs of Thai letters into words (PyThaiNLP, the ``thai`` extra).

    ``article_view``: compare each web page on its article text (``extract="article"``) as well
    as on its full text. None (the default): wherever the method supports two views and
    ``extract`` is ``full``; True: required (a config that cannot have it is refused); False:
    one view.

    ``main_content=True`` is the older spelling of ``extract="main"``; the two fields always
    agree after construction (stores written before ``extract`` existed read back as before).
    """

    extract: Extractor = "full"
    main_content: bool = False
    thai_words: bool = False
    article_view: bool | None = None

    def __post_init__(self) -> None:
        _require(self.extract in EXTRACTORS, "extract", self.extract,
                 f"one of {', '.join(EXTRACTORS)}")
        _require(not (self.article_view and self.extract != "full"), "article_view",
                 self.article_view, f"needs extract='full' (extract={self.extract!r} already "
                 "keeps one view of the page)")
        if self.main_content and self.extract == "full":
            object.__setattr__(self, "extract", "main")
        object.__setattr__(self, "main_content", self.extract == "main")

    @property
    def tag(self) -> str:
        return f"text:{self.extract}" + (":thai-words" if self.thai_words else "")


@dataclass(frozen=True, slots=True)
class TemplateConfig:
    """Site templates removed from the evidence of the near methods (Bar-Yossef and
    Rajagopalan 2002, template detection by frequency): on a host with at least ``min_pages``
    pages (exact-level survivors), a verification shingle found on more than ``share`` of them
    is template, not content. ``enabled=False`` keeps every shingle."""

    enabled: bool = True
    share: float = 0.5
    min_pages: int = 10

    def __post_init__(self) -> None:
        _require(0.0 < self.share < 1.0, "template share", self.share, "must be in (0, 1)")
        _require(2 <= self.min_pages <= 10**9, "template min_pages", self.min_pages,
                 "must be >= 2")

    @property
    def tag(self) -> str:
        return f"templates:{self.share:g}:p{self.min_pages}" if self.enabled else "templates:off"

