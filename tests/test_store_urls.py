"""Broder's queries by URL (URL -> cluster -> URLs per sweep; sketch search by URL) and
lost-and-found over sketch clusters chosen when the store is created."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import text_documents, vocabulary
from neardup.cli.main import cli
from neardup.cluster.sweeps import lost_and_found_report
from neardup.config import SketchConfig, StoreConfig
from neardup.document import Document
from neardup.errors import ConfigError
from neardup.store import open_store
from neardup.store.urls import sightings, similar_to_url, url_cluster

VOCABULARY = vocabulary(5000, prefix="v", suffix="x")


def _pages(count: int, words: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [[rng.choice(VOCABULARY) for _ in range(words)] for _ in range(count)]


def _edited(words: list[str], edits: int, rng: random.Random) -> list[str]:
    out = list(words)
    for at in rng.sample(range(len(out)), edits):
        out[at] = rng.choice(VOCABULARY) + "e"
    return out


def _docs(pages: list[list[str]], prefix: str) -> list[Document]:
    return text_documents([" ".join(p) for p in pages], prefix,
                          url=lambda i: f"http://{prefix}.example/{i}")


def _found(store_dir: Path, config: StoreConfig, old: list[Document],
           new: list[Document]) -> int:
    with open_store(store_dir, config) as store:
        store.add(old, sweep="2024")
        store.add(new, sweep="2025")
        found, order = sightings(store)
    report = lost_and_found_report(found, order)
    moved = {r.url: r.replacement.url for r in report if r.replacement is not None}
    return sum(moved.get(d.url or "") == n.url for d, n in zip(old, new, strict=True))


def test_lost_and_found_over_sketch_clusters_finds_lightly_edited_pages(tmp_path: Path) -> None:
    rng = random.Random(3)
    pages = _pages(200, 2000, seed=1)
    old = _docs(pages, "old")
    new = _docs([_edited(p, 40, rng) for p in pages], "new")  # 2% of the words replaced
    by_simhash = _found(tmp_path / "simhash", StoreConfig(), old, new)
    by_sketch = _found(tmp_path / "sketch", StoreConfig(sketch_clusters=0.5), old, new)
    assert by_sketch == 200
    assert by_simhash < 100  # simhash moves by more than k = 3 bits for most of them


def test_sketch_clusters_are_incremental_and_merge_stored_clusters(tmp_path: Path) -> None:
    pages = _pages(3, 600, seed=2)
    bridge = pages[0][:300] + pages[1][300:]  # resembles neither page 0 nor 1 at 0.5...
    middle = pages[0][:450] + pages[1][450:]  # ...but this resembles page 0, and
    rng = random.Random(0)
    with open_store(tmp_path / "s", StoreConfig(sketch_clusters=0.3)) as store:
        store.add(_docs(pages, "a"), sweep="1")
        store.add(_docs([bridge, _edited(pages[2], 5, rng), middle], "b"), sweep="2")
        first = url_cluster(store, "http://a.example/0")
        third = url_cluster(store, "http://a.example/2")
    assert first.clustered_by == "sketch"
    assert {m.url for m in third.members} == {"http://a.example/2", "http://b.example/1"}
    assert "http://b.example/2" in {m.url for m in first.members}
    assert third.by_sweep() == {"1": ["http://a.example/2"], "2": ["http://b.example/1"]}


def test_query_url_cluster_and_sketch_search_by_url(tmp_path: Path) -> None:
    pages = _pages(4, 400, seed=5)
    rng = random.Random(1)
    runner = CliRunner()
    store = tmp_path / "s"
    for sweep, docs in (("2024", _docs(pages, "old")),
                        ("2025", _docs([_edited(p, 2, rng) for p in pages[:2]], "new"))):
        path = tmp_path / f"{sweep}.jsonl"
        path.write_text("".join(json.dumps({"id": d.id, "url": d.url, "text": d.raw.decode()})
                                + "\n" for d in docs))
        result = runner.invoke(cli, ["index", str(path), "--store", str(store), "--sweep", sweep,
                                     "--workers", "1"])
        assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["query", "--store", str(store), "--url",
                                 "http://old.example/0", "--cluster", "--json"])
    assert result.exit_code == 0, result.output
    cluster = json.loads(result.output)
    assert cluster["clustered_by"] == "simhash"
    assert cluster["by_sweep"] == {"2024": ["http://old.example/0"],
                                   "2025": ["http://new.example/0"]}
    text = runner.invoke(cli, ["query", "--store", str(store), "--url", "http://old.example/1",
                               "--cluster"])
    assert "sweep 2025: http://new.example/1" in text.output
    result = runner.invoke(cli, ["query", "--store", str(store), "--url",
                                 "http://new.example/1", "--containment", "0.8", "--json"])
    assert result.exit_code == 0, result.output
    assert [m["url"] for m in json.loads(result.output)] == ["http://old.example/1"]
    missing = runner.invoke(cli, ["query", "--store", str(store), "--url", "http://nope/",
                                  "--cluster"])
    assert missing.exit_code != 0 and "http://nope/" in missing.output
    with open_store(store, read_only=True) as opened:
        doc, matches = similar_to_url(opened, "http://old.example/2", resemblance=0.5,
                                      containment=0.0)
        assert matches == [] and doc == 2


def test_sketch_clusters_need_a_sketch_and_a_resemblance() -> None:
    with pytest.raises(ConfigError, match="sketch_clusters"):
        StoreConfig(sketch=None, sketch_clusters=0.5)
    with pytest.raises(ConfigError, match="sketch_clusters"):
        StoreConfig(sketch_clusters=1.5)
    assert StoreConfig(sketch=SketchConfig(), sketch_clusters=0.5).tags["clusters"] == \
        "sketch:r0.5"
    assert "clusters" not in StoreConfig().tags
