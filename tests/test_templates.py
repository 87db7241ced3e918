"""Site templates removed from the evidence (Bar-Yossef and Rajagopalan 2002, by frequency).

A generated site: one frame (navigation, sidebar, footer) around 50 different articles, and a
second site with its own frame; one article appears in both sites' frames. With templates
removed, no two pages of one frame pair, and the article in two frames does; without, the frame
decides. The engine, which counts templates out of core, gives the in-memory result.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from corpora import framed_sites
from neardup.cli.dedup import run_dedup
from neardup.config import DedupConfig, TemplateConfig, TextConfig
from neardup.document import Document
from neardup.engine import EngineOptions, run_engine
from neardup.errors import ConfigError
from neardup.features.templates import content_set, find_templates, host_key, prune
from neardup.pipeline import DedupResult, find_duplicates

PAGES = 50


def two_sites(seed: int = 0) -> list[Document]:
    """Site a: one frame, 50 articles; site b: another frame, 50 articles, its first article
    being site a's first. The frames are about three times the length of an article."""
    return framed_sites(PAGES, seed)


def near_ids(result: DedupResult) -> set[tuple[str, str]]:
    near = result.pairs.select(result.pairs.relation >= 3)
    return {(result.ids[a], result.ids[b])
            for a, b in zip(near.a.tolist(), near.b.tolist(), strict=True)}


@pytest.mark.parametrize("method", ["minhash", "simhash", "sketch", "chunks"])
def test_a_frame_shared_by_50_pages_gives_no_pair(method: str) -> None:
    result = find_duplicates(two_sites(), DedupConfig(method=method))
    assert not {(a, b) for a, b in near_ids(result) if a[0] == b[0]}
    templates = result.stats["templates"]
    assert isinstance(templates, dict)
    assert templates["hosts_with_templates"] == 2 and templates["template_shingles"] > 1000


def test_the_same_article_in_two_frames_is_a_pair() -> None:
    found = near_ids(find_duplicates(two_sites(), DedupConfig(method="minhash")))
    assert found == {("a0", "b0")}


def test_without_template_removal_the_frame_decides() -> None:
    """On the full view alone (the article view, which finds the pair without templates, is
    off: ``tests/test_views.py``)."""
    off = DedupConfig(method="minhash", threshold=0.5, templates=TemplateConfig(enabled=False),
                      text=TextConfig(article_view=False))
    found = near_ids(find_duplicates(two_sites(), off))
    assert ("a0", "b0") not in found
    assert len({(a, b) for a, b in found if a[0] == b[0]}) > 100


def test_template_chunks_leave_the_chunk_counts() -> None:
    kept = find_duplicates(two_sites(), DedupConfig(method="chunks",
                                                    templates=TemplateConfig(enabled=False)))
    removed = find_duplicates(two_sites(), DedupConfig(method="chunks"))
    before, after = kept.stats["near"], removed.stats["near"]
    assert isinstance(before, dict) and isinstance(after, dict)
    assert before["candidates"] > 1000 and after["candidates"] < 10
    templates = removed.stats["templates"]
    assert isinstance(templates, dict) and templates["template_chunks"] > 20


def test_small_hosts_and_rare_shingles_are_kept() -> None:
    sets = [np.array([1, 2, 3], dtype=np.uint64), np.array([1, 2, 4], dtype=np.uint64),
            np.array([1, 5, 6], dtype=np.uint64)]
    config = TemplateConfig(share=0.5, min_pages=3)
    found = find_templates(["h", "H", "h"], sets, config)
    assert found.of(host_key("h")).tolist() == [1, 2]  # on 3 and 2 of 3 pages: > half
    assert find_templates(["h", "h", "g"], sets, config).shingles == {}  # 2 pages < min_pages
    assert find_templates([None, None, None], sets, config).shingles == {}
    assert prune(sets[0], found.of(host_key("h"))).tolist() == [3]
    assert content_set(np.array([1, 2], dtype=np.uint64), np.array([1, 2], dtype=np.uint64),
                       99).tolist() == [99]  # all template: resembles nothing


def test_template_config_is_validated() -> None:
    with pytest.raises(ConfigError, match="share"):
        TemplateConfig(share=1.0)
    with pytest.raises(ConfigError, match="min_pages"):
        TemplateConfig(min_pages=1)
    assert DedupConfig().tags["templates"] == "templates:0.5:p10"
    assert DedupConfig(templates=TemplateConfig(enabled=False)).tags["templates"] == \
        "templates:off"


@pytest.mark.parametrize("method", ["minhash", "simhash", "chunks"])
def test_the_engine_removes_the_same_templates(method: str, tmp_path: Path) -> None:
    docs = two_sites(seed=3)
    paths = []
    for part in range(2):
        path = tmp_path / f"site-{part}.jsonl"
        path.write_text("".join(json.dumps({"id": d.id, "url": d.url, "html": d.raw.decode()})
                                + "\n" for d in docs[part::2]))
        paths.append(str(path))
    config = DedupConfig(method=method)
    _, memory = run_dedup(tuple(paths), tmp_path / "memory", config, show_progress=False)
    engine = run_engine(paths, tmp_path / "engine", config,
                        EngineOptions(work=tmp_path / "work", chunk_docs=17, bucket_bytes=4096))
    assert engine["templates"] == memory["templates"]
    assert engine["templates"]["hosts_with_templates"] == 2
    for key in ("candidates", "verified", "rejected"):
        assert engine["near"][key] == memory["near"][key], key
    for name in ("pairs", "clusters"):
        assert (pq.read_table(tmp_path / "engine" / f"{name}.parquet").to_pylist()
                == pq.read_table(tmp_path / "memory" / f"{name}.parquet").to_pylist())


def test_dedup_reports_templates_and_switches_them_off(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from neardup.cli.main import cli

    path = tmp_path / "sites.jsonl"
    path.write_text("".join(json.dumps({"id": d.id, "url": d.url, "html": d.raw.decode()}) + "\n"
                            for d in two_sites()))
    summaries = {}
    for name, extra in (("on", []), ("off", ["--no-templates"])):
        result = CliRunner().invoke(cli, ["dedup", str(path), "--out", str(tmp_path / name),
                                          "--quiet", "--workers", "1", *extra])
        assert result.exit_code == 0, result.output
        summaries[name] = json.loads((tmp_path / name / "summary.json").read_text())
    on, off = summaries["on"]["templates"], summaries["off"]["templates"]
    assert on["enabled"] and on["per_host"]["a.example"]["pages"] == PAGES
    assert on["per_host"]["a.example"]["template_shingles"] > 500
    assert not off["enabled"] and off["template_shingles"] == 0
    assert summaries["on"]["config"]["templates"] == "templates:0.5:p10"
    assert summaries["on"]["near"]["verification"] == {"relation": "near", "rule": "resemblance",
                                                       "threshold": 0.8}
