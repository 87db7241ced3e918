"""Site templates in the store: per-host counts kept up to date, frames left out of comparisons."""

from __future__ import annotations

import json
import random
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from neardup.cli.main import cli
from neardup.config import DedupConfig, ShingleConfig, StoreConfig, TemplateConfig
from neardup.document import Document
from neardup.errors import CorruptDataError
from neardup.features.templates import find_templates, host_key
from neardup.fingerprints.sketch import Sketcher
from neardup.methods.fingerprinter import Fingerprinter
from neardup.pipeline import find_duplicates
from neardup.store import Store, open_store
from neardup.store.formats import ROW_FIELDS
from neardup.store.hosts import (
    SHINGLE,
    SKETCH,
    PageValues,
    recount,
    stored_counts,
)
from neardup.store.lookup import stored_sketches
from neardup.store.records import documents_where, unsigned

VOCABULARY = [f"v{i}" for i in range(5000)]


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(VOCABULARY, k=count))


def _frame(rng: random.Random) -> tuple[str, str]:
    """A site's frame: 1,500 words of navigation before the article, 750 of footer after."""
    return _words(rng, 1500), _words(rng, 750)


def _page(host: str, number: int, frame: tuple[str, str], article: str) -> Document:
    html = (f"<html><body><nav>{frame[0]}</nav><article><p>{article}</p></article>"
            f"<footer>{frame[1]}</footer></body></html>")
    return Document(id=f"{host}/{number}", raw=html.encode(), kind="html",
                    url=f"http://{host}/{number}", host=host)


def _site(rng: random.Random, host: str, pages: int) -> tuple[tuple[str, str], list[Document]]:
    frame = _frame(rng)
    return frame, [_page(host, i, frame, _words(rng, 150)) for i in range(pages)]


def _matched_one_by_one(store: Store, pages: list[Document]) -> list[int]:
    return [store.add([page]).matched_stored for page in pages]


def test_pages_sharing_a_frame_are_not_paired_once_the_host_has_enough(tmp_path: Path) -> None:
    _, pages = _site(random.Random(3), "site-a.example", 50)
    with open_store(tmp_path / "on") as store:
        matched = _matched_one_by_one(store, pages)
        late = range(TemplateConfig().min_pages, 50)
        assert [matched[i] for i in late] == [0] * len(late)
        assert all(store.document(i)["cluster"] == i for i in late)  # type: ignore[index]
        assert store.query(pages[30]) == [m for m in store.query(pages[30]) if m.doc == 30]
        assert store.query(pages[30])[0].template_values > 0
    off = StoreConfig(templates=TemplateConfig(enabled=False))
    with open_store(tmp_path / "off", off) as store:
        matched = _matched_one_by_one(store, pages)
        # without templates, the frame makes most late pages near-copies of earlier ones
        assert sum(matched[i] > 0 for i in late) >= len(late) // 2  # 22 of 40 here


def test_the_same_article_inside_two_frames_is_matched(tmp_path: Path) -> None:
    rng = random.Random(5)
    frame_a, site_a = _site(rng, "site-a.example", 30)
    frame_b, site_b = _site(rng, "site-b.example", 30)
    article = _words(rng, 400)
    in_a, in_b = _page("site-a.example", 99, frame_a, article), \
        _page("site-b.example", 99, frame_b, article)
    with open_store(tmp_path / "store") as store:
        store.add([*site_a, in_a, *site_b])
        found = store.similar(in_b, resemblance=0.5)
        assert [m.id for m in found] == [in_a.id]
        assert found[0].resemblance is not None and found[0].resemblance > 0.8
        assert found[0].template_values > 0
        # on every value, the frames decide: its own site's pages, not the article's copy
        framed = store.similar(in_b, resemblance=0.5, templates=False)
        assert in_a.id not in [m.id for m in framed]
        assert {m.host for m in framed} == {"site-b.example"}
    clusters = StoreConfig(sketch_clusters=0.5)
    with open_store(tmp_path / "clusters", clusters) as store:
        for page in [*site_a, in_a, *site_b, in_b]:
            store.add([page])
        rows = dict(store.db.execute("SELECT doc, cluster FROM sketch_clusters"))
        doc_a, doc_b = len(site_a), len(site_a) + 1 + len(site_b)
        assert rows[doc_a] == rows[doc_b]
        late_b = range(len(site_a) + 1 + TemplateConfig().min_pages, doc_b)
        assert all(rows[d] == d for d in late_b)


def _stored_pages(store: Store) -> list[PageValues]:
    """Every stored page's count input, read back from the store's own rows."""
    rows = documents_where(store.db, store.meta_path, "1 ORDER BY doc")
    sketches = stored_sketches(store, [row[0] for row in rows])
    pages = []
    for row in rows:
        fields = dict(zip(ROW_FIELDS, row, strict=True))
        features = sketches.get(int(fields["doc"]))
        values = {} if features is None else {SKETCH: features.sketch}
        if features is not None and features.shingles is not None:
            values[SHINGLE] = features.shingles
        pages.append(PageValues(fields["host"], unsigned(fields["shingle"]),
                                int(fields["tokens"]), values))
    return pages


POOL_RNG = random.Random(11)
POOL_FRAMES = {host: _frame(POOL_RNG) for host in ("a.example", "b.example")}
POOL_ARTICLES = [_words(POOL_RNG, 60) for _ in range(6)]


def _pool(index: int) -> Document:
    """Pool documents: two hosts, articles repeated across ids (shingle-equal pages), a page
    without a host, an empty one."""
    if index == 12:
        return Document(id="no-host", raw=POOL_ARTICLES[0].encode(), kind="text")
    if index == 13:
        return Document(id="empty", raw=b"<html></html>", kind="html", host="a.example")
    host = "a.example" if index % 2 else "b.example"
    page = _page(host, index, POOL_FRAMES[host], POOL_ARTICLES[index % 6])
    return Document(id=f"p{index}", raw=page.raw, kind="html", url=page.url, host=host)


OPERATIONS = st.lists(st.one_of(
    st.lists(st.integers(0, 13), min_size=1, max_size=6).map(lambda docs: ("add", docs)),
    st.just(("compact", [])), st.just(("reopen", []))), min_size=1, max_size=8)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations=OPERATIONS)
def test_counts_equal_a_recount_after_adds_re_adds_and_compactions(
        tmp_path_factory: pytest.TempPathFactory, operations: list[tuple[str, list[int]]]) -> None:
    path = tmp_path_factory.mktemp("store")
    config = StoreConfig(keep_shingles=True, templates=TemplateConfig(min_pages=2))
    store = open_store(path, config, flush_every=3)
    try:
        for name, docs in operations:
            if name == "add":
                store.add([_pool(i) for i in docs])
            elif name == "compact":
                store.compact()
            else:
                store.close()
                store = open_store(path, flush_every=3)
        assert stored_counts(store.db, store.meta_path, store.tally()) == \
            recount(_stored_pages(store))
    finally:
        store.close()


def test_a_damaged_count_is_refused_naming_the_file_and_table(tmp_path: Path) -> None:
    frame, pages = _site(random.Random(8), "site-a.example", 20)
    with open_store(tmp_path / "store") as store:
        store.add(pages)
    for table, change in (("host_pages", "UPDATE host_pages SET pages = pages - 5"),):
        damaged = tmp_path / table
        damaged.mkdir()
        for item in (tmp_path / "store").iterdir():
            if item.is_file():
                (damaged / item.name).write_bytes(item.read_bytes())
        (damaged / "segments").symlink_to(tmp_path / "store" / "segments")
        with sqlite3.connect(damaged / "meta.sqlite") as db:
            db.execute(change)
        with open_store(damaged) as store:
            for action in (lambda: store.query(pages[3]),
                           lambda: store.add([_page("site-a.example", 77, frame, "new")]),
                           store.host_templates):
                with pytest.raises(CorruptDataError, match=f"meta.sqlite: table {table}"):
                    action()
            assert len(store) == 20  # the refused add stored nothing


def _store_templates(store: Store) -> dict[tuple[int, int], set[int]]:
    hosts, values = stored_counts(store.db, store.meta_path, store.tally())
    rule = store.config.templates
    found: dict[tuple[int, int], set[int]] = {}
    for (host, kind, value), pages in values.items():
        if hosts[host] >= rule.min_pages and pages > rule.share * hosts[host]:
            found.setdefault((host, kind), set()).add(value)
    return found


def test_batch_dedup_and_the_store_agree_on_a_hosts_templates(tmp_path: Path) -> None:
    rng = random.Random(21)
    _, site_a = _site(rng, "site-a.example", 24)
    _, site_b = _site(rng, "site-b.example", 6)  # too few pages: no templates
    copied = Document(id="copy", raw=site_a[0].raw, kind="html", url="http://site-b.example/c",
                      host="site-b.example")  # an exact copy: counted on site-a only
    pages = site_a + site_b + [copied]
    with open_store(tmp_path / "store", StoreConfig(keep_shingles=True)) as store:
        for start in range(0, len(pages), 7):
            store.add(pages[start:start + 7])
        stored = _store_templates(store)
        sketcher = Sketcher(store.config.sketch)  # type: ignore[arg-type]
    batch_config = DedupConfig(verify_shingles=ShingleConfig(width=10))
    result = find_duplicates(pages, batch_config)
    summary = result.stats["templates"]
    assert isinstance(summary, dict)
    fingerprinter = Fingerprinter(batch_config)
    survivors = [fingerprinter(p) for p in pages if p.id != "copy"]
    batch = find_templates([p.host for p in survivors], [p.shingles for p in survivors],
                           batch_config.templates)
    key = host_key("site-a.example")
    assert set(stored) == {(key, SKETCH), (key, SHINGLE)}
    assert stored[(key, SHINGLE)] == set(batch.shingles[key].tolist())
    assert summary["per_host"]["site-a.example"] == {
        "pages": len(site_a), "template_shingles": len(stored[(key, SHINGLE)])}
    assert stored[(key, SKETCH)] == set(sketcher.of_shingles(batch.shingles[key]).tolist())


def test_the_commands_report_and_switch_templates(tmp_path: Path) -> None:
    _, pages = _site(random.Random(4), "site-a.example", 15)
    corpus = tmp_path / "site.jsonl"
    corpus.write_text("".join(json.dumps({"id": p.id, "url": p.url, "html": p.raw.decode()})
                              + "\n" for p in pages))
    store_dir = tmp_path / "store"
    runner = CliRunner()
    added = runner.invoke(cli, ["index", str(corpus), "--store", str(store_dir), "--workers",
                                "1", "--media", "any", "--json"])
    assert added.exit_code == 0, added.output
    report = runner.invoke(cli, ["query", "--store", str(store_dir), "--host-templates",
                                 "--json"])
    found = json.loads(report.output)
    assert found["hosts_with_templates"] == 1
    assert found["per_host"]["site-a.example"]["pages"] == 15
    assert found["per_host"]["site-a.example"]["sketch_values"] > 0
    page = tmp_path / "page.html"
    page.write_bytes(pages[5].raw)
    explained = runner.invoke(cli, ["query", "--store", str(store_dir), str(page), "--explain"])
    assert "sketch values left out" in explained.output
    on = json.loads(runner.invoke(cli, ["query", "--store", str(store_dir), str(page),
                                        "--json"]).output)
    off = json.loads(runner.invoke(cli, ["query", "--store", str(store_dir), str(page),
                                         "--json", "--no-templates"]).output)
    assert on[0]["template_values"] > 0 and off[0]["template_values"] == 0
    assert len(off) >= len(on)
    refused = runner.invoke(cli, ["index", str(corpus), "--store", str(store_dir),
                                  "--no-templates"])
    assert refused.exit_code != 0 and "templates.enabled" in refused.output


def test_a_host_with_too_few_pages_keeps_every_value(tmp_path: Path) -> None:
    _, small = _site(random.Random(6), "small.example", TemplateConfig().min_pages - 1)
    with open_store(tmp_path / "store") as store:
        matched = _matched_one_by_one(store, small)
        assert sum(matched) > 0  # the frame still pairs them: too few pages to learn from
        assert all(m.template_values == 0 for m in store.query(small[4]))
        assert store.host_templates()["hosts_with_templates"] == 0


def test_a_damaged_tally_or_counted_row_is_refused_on_open_naming_it(tmp_path: Path) -> None:
    _, pages = _site(random.Random(8), "site-a.example", 20)
    with open_store(tmp_path / "store", flush_every=10) as store:
        store.add(pages[:10])       # a segment with a tally, ...
        store.add(pages[10:15])     # ... and counted pages in the log
        name = store.segments[0].name
    copy = tmp_path / "copy"
    shutil.copytree(tmp_path / "store", copy)
    target = tmp_path / "store" / "segments" / name / "tallies.pages.npy"
    data = bytearray(target.read_bytes())
    data[-1] ^= 0x01
    target.write_bytes(bytes(data))
    with pytest.raises(CorruptDataError, match=r"tallies\.pages\.npy: checksum mismatch"):
        open_store(tmp_path / "store")
    with sqlite3.connect(copy / "meta.sqlite") as db:
        assert db.execute("UPDATE counted SET crc = crc + 1 WHERE doc = 12").rowcount == 1
    with pytest.raises(CorruptDataError, match=r"meta.sqlite: table counted, row 12"):
        open_store(copy, read_only=True)


def test_a_tallys_pages_equal_a_count_over_its_rows() -> None:
    """Counts (compiled binary searches) answer as counting the tally's rows does, for
    hosts and kinds present and absent, and a run of the delta adds up as the whole; counts
    of many groups asked together, summed over tallies, equal each group's."""
    from neardup.store import tallies

    def counted(add: Any, host: int, kind: int, wanted: Any) -> Any:
        counts = tallies.Counts([(host, kind, wanted)])
        add(counts)
        return counts.total

    rng = np.random.default_rng(3)
    hosts = rng.integers(0, 12, size=4_000, dtype=np.int64)
    kinds = rng.integers(0, 2, size=4_000, dtype=np.int64)
    values = rng.integers(0, 300, size=4_000, dtype=np.int64)
    tally = tallies.tally_of(hosts, kinds, values)
    delta = tallies.TallyDelta()
    for part in np.array_split(np.arange(4_000), 7):
        delta.add(tallies.tally_of(hosts[part], kinds[part], values[part]))
    asked, answers = [], []
    for host in range(13):
        for kind in (0, 1, 2):
            wanted = np.unique(rng.integers(0, 310, size=40, dtype=np.int64))
            expected = [int(np.sum((hosts == host) & (kinds == kind) & (values == v)))
                        for v in wanted]
            assert counted(lambda c: c.add(tally), host, kind, wanted).tolist() == expected
            assert counted(delta.add_to, host, kind, wanted).tolist() == expected
            asked.append((host, kind, wanted))
            answers.append(expected)
    together = tallies.Counts([*asked[::-1], (5, 1, np.empty(0, dtype=np.int64))])
    together.add(tally)
    delta.add_to(together)
    assert [t.tolist() for t in together.groups()] == \
        [[2 * n for n in expected] for expected in answers[::-1]] + [[]]


def test_host_counts_kept_between_queries_follow_every_add(tmp_path: Path) -> None:
    """A store keeps its hosts' page counts between queries: the same query before and after
    adds that bring the host to ``min_pages`` answers as a store opened afresh does, in the
    writer and in a read-only store that takes the adds in."""
    _, pages = _site(random.Random(11), "site-c.example", 14)
    few = TemplateConfig().min_pages - 2
    with open_store(tmp_path / "s") as store, \
            open_store(tmp_path / "s", read_only=True) as reader:
        store.add(pages[:few])
        before = store.query(pages[0])
        reader.refresh()
        assert reader.query(pages[0]) == before and before[0].template_values == 0
        store.add(pages[few:])                      # the host now has enough pages
        after = store.query(pages[0])
        assert after[0].template_values > 0 and after != before
        reader.refresh()
        assert reader.query(pages[0]) == after
    with open_store(tmp_path / "s", read_only=True) as fresh:
        assert fresh.query(pages[0]) == after


def test_queries_answered_together_equal_each_alone(tmp_path: Path) -> None:
    """A batch of queries (framed pages of two hosts, the same article in both frames, bytes
    stored as HTML asked as text, near-copies, an empty text, a text nothing resembles, the
    same query twice) answers each as it is answered alone, in the writer and read-only."""
    rng = random.Random(17)
    frame_a, site_a = _site(rng, "site-a.example", 14)
    frame_b, site_b = _site(rng, "site-b.example", 6)
    article = _words(rng, 300)
    framed = [_page("site-a.example", 90, frame_a, article),
              _page("site-b.example", 90, frame_b, article)]
    plain = _words(rng, 200)
    edited = plain.replace(plain.split()[7], "changed", 1)
    stored = [*site_a, *site_b, framed[0],
              Document(id="plain", raw=plain.encode(), kind="text")]
    tagged = Document(id="tagged", kind="html", raw=(
        "<html><head><title>a title here</title><style>p { margin: 0 } div { x: y }</style>"
        f"</head><body><p>{_words(rng, 25)}</p></body></html>").encode())
    stored.append(tagged)
    as_text = Document(id="q", raw=tagged.raw, kind="text")   # the same bytes, as text
    queries: list[Document | str] = [site_a[5], framed[1], as_text, edited, plain, "",
                                     _words(random.Random(99), 150), site_b[2], edited]
    with open_store(tmp_path / "s") as store:
        store.add(stored)
        for options in ({}, {"k": 1, "explain": True}, {"templates": False}):
            alone = [store.query(q, **options) for q in queries]  # type: ignore[arg-type]
            assert store.query_many(queries, **options) == alone  # type: ignore[arg-type]
        assert [len(m) for m in alone] != [0] * len(queries)
        assert any(m.relation == "identical" for m in store.query(as_text))
        together = store.query_many(queries)
    with open_store(tmp_path / "s", read_only=True) as reader:
        assert reader.query_many(queries) == together
        assert reader.query_many([]) == []
