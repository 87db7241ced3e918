"""Two views of a web page: its full text (site templates removed) and its article text.

Two small sites (too few pages each for per-host template removal), each with its own frame
(navigation, a list of linked headlines, a footer) three times the length of an article. One
article appears in both sites' frames; every other page holds its own article. By default the
min-hash run finds the shared article on the article view and never pairs two articles of one
frame; with one view the frames decide and the shared article is missed. Text documents keep one
view, and a config that cannot have two views is refused when it asks for them.
"""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest

from corpora import framed_sites, word_lines
from neardup.config import DedupConfig, SimHashMethod, TemplateConfig, TextConfig
from neardup.document import Document
from neardup.engine.fingerprint import FingerprintJob, fingerprint_split
from neardup.engine.partition import read_layout, read_meta
from neardup.errors import ConfigError
from neardup.pipeline import DedupResult, find_duplicates
from neardup.sources.splits import InputSplit


def two_small_sites(seed: int = 0) -> list[Document]:
    """Sites a and b, three pages each; page 0 of both holds the same article."""
    return framed_sites(3, seed)


def id_pairs(result: DedupResult) -> list[tuple[str, str]]:
    pairs = result.pairs
    return [(result.ids[a], result.ids[b]) for a, b in zip(pairs.a.tolist(), pairs.b.tolist(),
                                                          strict=True)]


def test_the_same_article_in_two_frames_pairs_on_the_article_view() -> None:
    result = find_duplicates(two_small_sites(), DedupConfig())
    assert id_pairs(result) == [("a0", "b0")]
    table = result.pairs.columns()
    assert table["view"].to_pylist() == ["article"]
    article, full = table["article_resemblance"][0].as_py(), table["full_resemblance"][0].as_py()
    assert article == result.pairs.resemblance[0] == 1.0
    assert full is not None and full < 0.5  # the frames differ: the full view alone misses it
    near = result.stats["near"]
    assert near["views"] == {"compared": ["full", "article"], "article_views": 6,
                             "pairs": {"full": 0, "article": 1}}


def test_one_view_misses_it_and_never_pairs_one_frames_articles() -> None:
    one = find_duplicates(two_small_sites(), DedupConfig(text=TextConfig(article_view=False)))
    assert id_pairs(one) == []
    assert "views" not in one.stats["near"]
    two = find_duplicates(two_small_sites(seed=1), DedupConfig())
    assert all(a[0] != b[0] or a == b for a, b in id_pairs(two))  # no two pages of one site
    assert id_pairs(two) == [("a0", "b0")]


def test_text_documents_keep_one_view() -> None:
    body = " ".join(word_lines(random.Random(2), 20))
    docs = [Document("t0", body.encode(), kind="text"),
            Document("t1", (body + " one more sentence").encode(), kind="text")]
    result = find_duplicates(docs, DedupConfig())
    assert id_pairs(result) == [("t0", "t1")]
    assert result.pairs.columns()["view"].to_pylist() == ["full"]
    assert math.isnan(result.pairs.other_resemblance[0])
    assert result.stats["near"]["views"]["article_views"] == 0


def test_two_views_asked_of_a_config_that_cannot_have_them_is_refused() -> None:
    with pytest.raises(ConfigError, match="article_view"):
        DedupConfig(method="simhash", params=SimHashMethod(), text=TextConfig(article_view=True))
    with pytest.raises(ConfigError, match="extract='full'"):
        TextConfig(extract="main", article_view=True)
    assert DedupConfig(method="simhash", params=SimHashMethod()).views == ("full",)
    assert DedupConfig(text=TextConfig(extract="main")).views == ("full",)
    assert DedupConfig().views == ("full", "article")
    assert DedupConfig(method="oph").views == ("full", "article")


def test_two_articles_in_one_frame_never_pair_even_where_the_frame_dominates() -> None:
    """Without template removal the frame decides the full view (``test_templates.py``); the
    article view tells the stories apart and only the shared article pairs."""
    off = DedupConfig(threshold=0.5, templates=TemplateConfig(enabled=False))
    assert set(id_pairs(find_duplicates(framed_sites(50), off))) == {("a0", "b0")}


def test_a_partition_left_half_written_by_a_killed_attempt_is_written_again(
        tmp_path: Path) -> None:
    """A task attempt killed while writing a partition (a lost Spark executor) leaves its
    temporary folder, article views included, in the same run; the next attempt of the task
    writes the partition in a folder of its own."""
    page = tmp_path / "page.html"
    page.write_bytes(framed_sites(1)[0].raw)
    job = FingerprintJob(DedupConfig(), InputSplit(str(page), True), 0, tmp_path / "work", 100,
                         "html")
    stale = job.folder(0).with_name(job.folder(0).name + ".tmp") / "article"
    stale.mkdir(parents=True)
    (stale / "meta.parquet").write_bytes(b"half written")
    record = fingerprint_split(job)
    assert record["blocks"] == [(0, 1)]
    assert read_layout(job.folder(0)).article
    assert read_meta(job.folder(0) / "article", ["tokens"]).column("tokens")[0].as_py() >= 50
