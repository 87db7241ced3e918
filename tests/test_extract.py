"""Each extractor (--extract full|main|article|trafilatura) on pages whose main text is known."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from neardup.config import TextConfig
from neardup.errors import ConfigError
from neardup.evaluation.extraction import token_overlap
from neardup.text.extract import extract, require_extractor

ZYTE = (Path(__file__).resolve().parents[2] / "shared" / "data" / "html"
        / "zyte-article-benchmark")
ARTICLE = [
    "The river council met on Tuesday to discuss the new flood barriers planned for the old "
    "harbour district.",
    "Engineers presented three designs, each meant to hold back a storm surge of up to four "
    "metres above the usual tide.",
    "Residents asked how long the works would close the footpath along the quay, and the "
    "council promised a temporary bridge.",
    "A final vote on the design is expected next month, after a public consultation that opens "
    "on Monday.",
]
TITLE = "Council weighs flood barriers"
SECTIONS = ("News", "Sport", "Weather", "Culture", "Travel", "Opinion")
RELATED = ("schools", "roads", "markets", "parks")
FOOTER = "Copyright 2024 The Harbour Gazette. All rights reserved. Contact us. Privacy policy."


def news_page() -> bytes:
    nav = "".join(f'<li><a href="/s{i}">Section {w}</a></li>' for i, w in enumerate(SECTIONS))
    related = "".join(f'<li><a href="/r{i}">Related story about {w} in the region</a></li>'
                      for i, w in enumerate(RELATED))
    paragraphs = "".join(f"<p>{p}</p>" for p in ARTICLE)
    return (f"<html><head><title>Flood barriers</title></head><body><header><nav><ul>{nav}"
            f"</ul></nav></header><main><article><h1>{TITLE}</h1>{paragraphs}</article></main>"
            f"<aside><h2>Related</h2><ul>{related}</ul></aside>"
            f"<footer><p>{FOOTER}</p></footer></body></html>").encode()


@pytest.mark.parametrize("extractor", ["full", "main", "article", "trafilatura"])
def test_every_extractor_keeps_the_article(extractor: str) -> None:
    text = extract(news_page(), extractor)  # type: ignore[arg-type]
    overlap = token_overlap(text, TITLE + "\n" + "\n".join(ARTICLE))
    assert overlap.recall == 1.0
    if extractor == "full":
        assert "Section Sport" in text and FOOTER in text
        assert overlap.precision < 0.8
    else:
        assert "Section Sport" not in text and "Related story" not in text
        assert "Copyright" not in text
        assert overlap.precision == 1.0


def test_trafilatura_without_a_main_text_falls_back_to_resiliparse() -> None:
    raw = b"<html><body><p>one two</p></body></html>"
    assert extract(raw, "trafilatura") == extract(raw, "main")


def test_extractor_names_are_checked_and_main_content_is_the_old_spelling() -> None:
    with pytest.raises(ConfigError, match="extract='lxml'"):
        require_extractor("lxml")
    with pytest.raises(ConfigError, match="extract"):
        TextConfig(extract="lxml")  # type: ignore[arg-type]
    assert TextConfig(main_content=True) == TextConfig(extract="main")
    assert TextConfig(extract="trafilatura").tag == "text:trafilatura"
    assert TextConfig().tag == "text:full" and TextConfig(extract="main").tag == "text:main"


@pytest.mark.parametrize(("args", "tag"), [((), "text:full"), (("--main-content",), "text:main"),
                                           (("--extract", "article"), "text:article"),
                                           (("--extract", "trafilatura"), "text:trafilatura")])
def test_dedup_extracts_as_asked(tmp_path: Path, args: tuple[str, ...], tag: str) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    for i in range(3):
        (pages / f"p{i}.html").write_bytes(news_page())
    result = CliRunner().invoke(cli, ["dedup", str(pages), "--out", str(tmp_path / "out"),
                                      "--quiet", "--workers", "1", *args])
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["config"]["text"] == tag and summary["exact_collapsed"]["identical"] == 2


@pytest.mark.skipif(not ZYTE.is_dir(), reason=f"shared data absent: {ZYTE}")
def test_extractors_on_real_articles_with_their_ground_truth() -> None:
    truth = json.loads((ZYTE / "ground-truth.json").read_text())
    names = sorted(truth)[:12]
    scores: dict[str, list[float]] = {"full": [], "main": [], "article": [], "trafilatura": []}
    recalls: dict[str, list[float]] = {name: [] for name in scores}
    for name in names:
        raw = gzip.decompress((ZYTE / "html" / f"{name}.html.gz").read_bytes())
        for extractor in scores:
            overlap = token_overlap(extract(raw, extractor),  # type: ignore[arg-type]
                                    truth[name]["articleBody"])
            scores[extractor].append(overlap.precision)
            recalls[extractor].append(overlap.recall)
    mean = {name: sum(values) / len(values) for name, values in scores.items()}
    recall = {name: sum(values) / len(values) for name, values in recalls.items()}
    assert mean["trafilatura"] > mean["main"] > mean["full"]
    assert mean["article"] > mean["main"]
    assert min(recall.values()) > 0.8


def test_index_fixes_the_extractor_and_query_checks_it(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_bytes(news_page())
    store = tmp_path / "store"
    runner = CliRunner()
    added = runner.invoke(cli, ["index", str(page), "--store", str(store), "--extract", "main",
                                "--workers", "1"])
    assert added.exit_code == 0, added.output
    found = runner.invoke(cli, ["query", "--store", str(store), str(page), "--extract", "main",
                                "--json"])
    assert found.exit_code == 0, found.output
    assert json.loads(found.output)[0]["distance"] == 0
    refused = runner.invoke(cli, ["query", "--store", str(store), str(page), "--extract", "full"])
    assert refused.exit_code != 0 and "extracts main" in refused.output


def test_evaluate_extracts_html_pairs_as_asked(tmp_path: Path) -> None:
    other = news_page().replace(b"Section Sport", b"Section Games").replace(
        b"Related story about", b"More about")
    rows = [{"html_a": news_page().decode(), "html_b": other.decode(), "label": "1"},
            {"html_a": news_page().decode(), "html_b": other.decode(), "label": "0"}]
    labeled = tmp_path / "pairs.jsonl"
    labeled.write_text("".join(json.dumps(r) + "\n" for r in rows))
    values = {}
    for extractor in ("full", "trafilatura"):
        result = CliRunner().invoke(cli, ["evaluate", str(labeled), "--method", "jaccard",
                                          "--folds", "2", "--extract", extractor, "--json"])
        assert result.exit_code == 0, result.output
        values[extractor] = json.loads(result.output)["pairs"][0]["jaccard"]
    assert values["trafilatura"] == 1.0 > values["full"]
