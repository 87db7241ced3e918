"""The command-line options that choose how HTML becomes text (``--extract``) and whether site
templates are removed (``--templates``), shared by dedup, index, query and evaluate."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from neardup.config import EXTRACTORS, TemplateConfig, TextConfig

__all__ = ["article_view_option", "extract_options", "template_config", "template_options",
           "text_config"]

F = TypeVar("F", bound=Callable[..., Any])


def extract_options(function: F) -> F:
    """``--extract full|main|trafilatura`` and its older spelling ``--main-content``."""
    function = click.option(
        "--main-content", is_flag=True, default=None, hidden=True,
        help="Same as --extract main.")(function)
    return click.option(
        "--extract", type=click.Choice(EXTRACTORS), default=None,
        help="HTML to text: full (resiliparse, every visible word), main (resiliparse's main "
             "content, fast), article (the element holding the page's text-dense paragraphs, "
             "fast) or trafilatura (article text, the quality extra; slower) "
             "[default: full].")(function)


def article_view_option(function: F) -> F:
    """``--article-view/--no-article-view`` (unset: wherever the method supports it)."""
    return click.option(
        "--article-view/--no-article-view", default=None,
        help="Compare each web page on its article text as well as on its full text: a pair "
             "found on either view is kept, and the pairs table says which view it stands on "
             "[default: on for minhash and oph with --extract full].")(function)


def text_config(extract: str | None, main_content: bool | None, *,
                thai_words: bool = False, article_view: bool | None = None) -> TextConfig:
    """The TextConfig of ``--extract`` (``--main-content`` alone means ``main``),
    ``--thai-words`` and ``--article-view``."""
    if extract is None:
        extract = "main" if main_content else "full"
    elif main_content and extract != "main":
        raise click.BadParameter(f"--main-content contradicts --extract {extract}")
    return TextConfig(extract=extract, thai_words=thai_words,  # type: ignore[arg-type]
                      article_view=article_view)


def template_options(function: F) -> F:
    """``--templates/--no-templates``, ``--template-share``, ``--template-min-pages``."""
    default = TemplateConfig()
    function = click.option(
        "--template-min-pages", type=click.IntRange(2, None), default=default.min_pages,
        show_default=True, help="Hosts with fewer pages than this keep every shingle.")(function)
    function = click.option(
        "--template-share", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True),
        default=default.share, show_default=True,
        help="A shingle on more than this share of one host's pages is template.")(function)
    return click.option(
        "--templates/--no-templates", default=True, show_default=True,
        help="Leave each host's template shingles (site frame: navigation, footers...) out "
             "of the near methods' evidence (Bar-Yossef and Rajagopalan 2002).")(function)


def template_config(options: dict[str, Any]) -> TemplateConfig:
    return TemplateConfig(enabled=options.get("templates", True),
                          share=options.get("template_share", TemplateConfig().share),
                          min_pages=options.get("template_min_pages", TemplateConfig().min_pages))
