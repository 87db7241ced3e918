"""The persistent store: add, query, reopen, clusters, config checks, corruption, kill -9."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from corpora import edited_documents, framed_sites
from neardup.cli.main import cli
from neardup.config import StoreConfig
from neardup.document import Document
from neardup.errors import ConfigError, CorruptDataError, OutputError
from neardup.index.tables import brute_force_matches
from neardup.store import open_store

VOCABULARY = [f"word{i}" for i in range(3000)]


def _simhashes(store_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    with open_store(store_dir, read_only=True) as store:
        rows = store.db.execute("SELECT doc, simhash FROM documents ORDER BY doc").fetchall()
    docs = np.array([r[0] for r in rows], dtype=np.int64)
    return docs, np.array([r[1] for r in rows], dtype=np.int64).view(np.uint64)


def test_queries_equal_brute_force_across_segments_and_delta(tmp_path: Path) -> None:
    docs = edited_documents(300, seed=1)
    with open_store(tmp_path / "s", flush_every=70) as store:
        store.add(docs[:250])
        store.add(docs[250:])          # 50 stay in the delta (the insert log)
        assert len(store.segments) >= 1 and store.index.delta_size > 0
    ids, fps = _simhashes(tmp_path / "s")
    with open_store(tmp_path / "s", read_only=True) as store:
        for k in (0, 3):
            expected = brute_force_matches(fps, ids, fps, k)
            found = store.index.query_batch(fps, k)
            assert sorted(zip(found.query.tolist(), found.id.tolist(), strict=True)) == \
                sorted(zip(expected.query.tolist(), expected.id.tolist(), strict=True))
        for doc in docs[:40]:
            matches = store.query(doc)
            own = [m for m in matches if m.id == doc.id]
            assert own and own[0].distance == 0 and own[0].relation == "identical"


def test_a_query_reports_relation_distance_and_sketch_scores(tmp_path: Path) -> None:
    base = " ".join(VOCABULARY[:400])
    with open_store(tmp_path / "s") as store:
        store.add([Document(id="a", raw=base.encode(), kind="text", url="http://a/"),
                   Document(id="b", raw=(base + " extra").encode(), kind="text")])
        matches = store.query(base, explain=True)
        assert [m.id for m in matches] == ["a", "b"]
        assert matches[0].relation == "identical" and matches[0].resemblance == 1.0
        assert matches[1].relation == "near" and matches[1].distance <= 3
        assert matches[1].containment == 1.0          # all of the query is in b
        shared = matches[1].shared_shingles
        assert shared and all(len(s.split()) == 10 and s in base for s in shared)
        doc, near = store.query_url("http://a/")
        assert doc == 0 and [m.id for m in near] == ["b"]
        with pytest.raises(KeyError):
            store.query_url("http://nowhere/")


def test_clusters_do_not_depend_on_batches(tmp_path: Path) -> None:
    docs = edited_documents(240, seed=2)
    with open_store(tmp_path / "one") as store:
        store.add(docs)
        whole = store.db.execute("SELECT cluster FROM documents ORDER BY doc").fetchall()
    with open_store(tmp_path / "many", flush_every=50) as store:
        for start in range(0, 240, 37):
            store.add(docs[start:start + 37], sweep=f"s{start}")
        parts = store.db.execute("SELECT cluster FROM documents ORDER BY doc").fetchall()
    assert whole == parts
    assert len(set(whole)) < len(whole)


@pytest.mark.parametrize("compress", [False, True])
def test_reopening_keeps_everything_and_compaction_merges(tmp_path: Path, compress: bool) -> None:
    docs = edited_documents(150, seed=3)
    with open_store(tmp_path / "s", StoreConfig(compress=compress), flush_every=40) as store:
        store.add(docs[:100])
        store.add(docs[100:])
        before = [[m.doc for m in store.query(d)] for d in docs[:20]]
    with open_store(tmp_path / "s") as store:
        assert len(store) == 150
        assert store.compact() >= 1 and len(store.segments) == 1
        assert store.index.delta_size == 0
        assert [[m.doc for m in store.query(d)] for d in docs[:20]] == before


def test_another_config_is_refused_with_the_differences(tmp_path: Path) -> None:
    open_store(tmp_path / "s", StoreConfig(max_k=3)).close()
    with pytest.raises(ConfigError, match="max_k: store has 3, asked for 2"):
        open_store(tmp_path / "s", StoreConfig(max_k=2))
    with pytest.raises(CorruptDataError, match="not a neardup store"):
        (tmp_path / "other").mkdir()
        (tmp_path / "other" / "x").write_text("x")
        open_store(tmp_path / "other")


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    with open_store(tmp_path / "s"), pytest.raises(OutputError, match="another process"):
        open_store(tmp_path / "s")
    with open_store(tmp_path / "s", read_only=True) as reader, \
            pytest.raises(OutputError, match="read-only"):
        reader.add(edited_documents(1, seed=4))


def test_truncated_segment_and_manifest_are_named(tmp_path: Path) -> None:
    with open_store(tmp_path / "s") as store:
        store.add(edited_documents(30, seed=5))
        store.flush()
        segment = tmp_path / "s" / "segments" / store.segments[0].name
    tables = segment / "tables.npy"
    tables.write_bytes(tables.read_bytes()[:-8])
    with pytest.raises(CorruptDataError, match=r"tables\.npy.*truncated"):
        open_store(tmp_path / "s")
    manifest = tmp_path / "s" / "manifest.json"
    manifest.write_bytes(manifest.read_bytes()[:-20])
    with pytest.raises(CorruptDataError, match=r"manifest\.json: truncated"):
        open_store(tmp_path / "s")


WRITER = """
import sys
sys.path.insert(0, {tests!r})
from corpora import edited_documents
from neardup.store import open_store
store = open_store({store!r}, flush_every=90)
print("ready", flush=True)
for round in range(1000):
    report = store.add(edited_documents(40, seed=100 + round))
    print(len(store) - 1, flush=True)
"""


def _kill_writer_once(store_dir: Path, delay: float) -> int:
    code = WRITER.format(tests=str(Path(__file__).parent), store=str(store_dir))
    writer = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
    acknowledged = [int(writer.stdout.readline()) for _ in range(3)]  # past the first flush
    time.sleep(delay)
    writer.send_signal(signal.SIGKILL)
    out, _ = writer.communicate()
    acknowledged += [int(line) for line in out.split()]
    return acknowledged[-1]


@pytest.mark.slow
def test_acknowledged_inserts_survive_kill_9(tmp_path: Path) -> None:
    rng = random.Random(7)
    store_dir = tmp_path / "s"
    acknowledged = []
    for _ in range(4):
        last = _kill_writer_once(store_dir, rng.uniform(0.0, 1.5))
        acknowledged.append(last)
        with open_store(store_dir) as store:       # recovers, removes debris
            stored = store.db.execute("SELECT max(doc), count(*) FROM documents").fetchone()
            assert stored[0] is None or stored[1] == stored[0] + 1
            assert (stored[0] if stored[0] is not None else -1) >= last
            ids, fps = (np.array(x) for x in zip(*store.db.execute(
                "SELECT doc, simhash FROM documents").fetchall(), strict=True)) \
                if stored[1] else (np.empty(0), np.empty(0))
            fps = fps.astype(np.int64).view(np.uint64)
            for position in range(0, len(ids), max(1, len(ids) // 20)):
                found = store.index.query(int(fps[position]), 0).id.tolist()
                assert int(ids[position]) in found
            segments = sorted(p.name for p in (store_dir / "segments").glob("*"))
            assert segments == sorted(s.name for s in store.segments)
    assert min(acknowledged) >= 119, acknowledged      # every writer got past a flush
    with open_store(store_dir, read_only=True) as store:
        assert store.segments


def test_index_query_compact_commands(tmp_path: Path) -> None:
    docs = edited_documents(30, seed=6)
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("".join(json.dumps({"id": d.id, "url": d.url, "text": d.raw.decode()})
                             + "\n" for d in docs))
    runner = CliRunner()
    store = str(tmp_path / "s")
    result = runner.invoke(cli, ["index", str(jsonl), "--store", store, "--sweep", "a",
                                 "--workers", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["added"] == 30
    result = runner.invoke(cli, ["query", "--store", store, "--text", docs[2].raw.decode(),
                                 "--json"])
    assert result.exit_code == 0, result.output
    assert docs[2].id in [m["id"] for m in json.loads(result.output)]
    result = runner.invoke(cli, ["query", "--store", store, "--url", docs[0].url or ""])
    assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["compact", "--store", store])
    assert result.exit_code == 0 and "1 documents" not in result.output
    result = runner.invoke(cli, ["query", "--store", str(tmp_path / "none"), "--text", "x"])
    assert result.exit_code == 1 and "manifest.json" in result.output
    result = runner.invoke(cli, ["index", str(jsonl), "--store", store, "--k", "2"])
    assert result.exit_code == 1 and "max_k" in result.output


def test_sketch_search_finds_containment_that_simhash_misses(tmp_path: Path) -> None:
    rng = random.Random(9)
    long = [rng.choice(VOCABULARY) for _ in range(2000)]
    quote = " ".join(long[500:800])                       # 15% of the long page
    with open_store(tmp_path / "s", StoreConfig(keep_shingles=True)) as store:
        store.add([Document(id="long", raw=" ".join(long).encode(), kind="text"),
                   Document(id="other", raw=" ".join(rng.choices(VOCABULARY, k=2000)).encode(),
                            kind="text")])
        assert [m.id for m in store.query(quote)] == []   # far apart in simhash
        found = store.similar(quote, containment=0.7, explain=True)
        assert [m.id for m in found] == ["long"]
        assert found[0].containment is not None and found[0].containment >= 0.7
        assert found[0].containment_reverse is not None and found[0].containment_reverse < 0.3
        assert all(s in quote for s in found[0].shared_shingles)
        assert found[0].exact_containment == 1.0            # every shingle of the quote
        exact_reverse = found[0].exact_containment_reverse
        assert exact_reverse is not None and abs(exact_reverse - 291 / 1991) < 1e-9
        assert store.similar(quote, resemblance=0.5) == []


def test_lost_and_found_across_sweeps(tmp_path: Path) -> None:
    page = " ".join(VOCABULARY[1000:1400])
    runner = CliRunner()
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"id": "1", "url": "http://old.example/page", "text": page})
                     + "\n" + json.dumps({"id": "2", "url": "http://old.example/gone",
                                          "text": " ".join(VOCABULARY[:300])}) + "\n")
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps({"id": "3", "url": "http://new.example/moved",
                                  "text": page + " updated"}) + "\n")
    store = str(tmp_path / "s")
    for path, sweep in ((first, "2024"), (second, "2025")):
        result = runner.invoke(cli, ["index", str(path), "--store", store, "--sweep", sweep,
                                     "--workers", "1"])
        assert result.exit_code == 0, result.output
    result = runner.invoke(cli, ["lost-and-found", "--store", store, "http://old.example/page"])
    assert result.exit_code == 0 and result.output.startswith("http://new.example/moved")
    result = runner.invoke(cli, ["lost-and-found", "--store", store, "--report", "--json"])
    report = {r["url"]: r["replacement"] for r in json.loads(result.output)}
    assert report["http://old.example/page"]["url"] == "http://new.example/moved"
    assert report["http://old.example/gone"] is None
    result = runner.invoke(cli, ["query", "--store", store, "--text", page,
                                 "--containment", "0.9", "--json"])
    assert result.exit_code == 0, result.output
    assert {m["url"] for m in json.loads(result.output)} == {"http://old.example/page",
                                                              "http://new.example/moved"}


def test_the_report_reads_a_store(tmp_path: Path) -> None:
    with open_store(tmp_path / "s") as store:
        store.add(edited_documents(60, seed=11), sweep="a")
        documents, clusters = store.tables()
        assert documents.num_rows == clusters.num_rows == 60
        kept = clusters.column("kept").to_pylist()
        assert 0 < sum(kept) < 60                      # near-copies share a cluster
    result = CliRunner().invoke(cli, ["report", "--store", str(tmp_path / "s"),
                                      "-o", str(tmp_path / "r.html"), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "r.json").read_text())
    assert "Cluster sizes" in json.dumps(report)


def test_a_planned_design_drives_the_store(tmp_path: Path) -> None:
    jsonl = tmp_path / "docs.jsonl"
    docs = edited_documents(45, seed=12)
    jsonl.write_text("".join(json.dumps({"id": d.id, "text": d.raw.decode()}) + "\n"
                             for d in docs))
    store = str(tmp_path / "s")
    result = CliRunner().invoke(cli, ["index", str(jsonl), "--store", store, "--tables", "10",
                                      "--expected", "2^30", "--compress", "--workers", "1"])
    assert result.exit_code == 0, result.output
    with open_store(store, read_only=True) as opened:
        assert len(opened.config.tables) == 10 and opened.config.compress
        assert {bits for _, bits in opened.config.tables} == {25, 26}
        ids, fps = _simhashes(tmp_path / "s")
        expected = brute_force_matches(fps, ids, fps, 3)
        found = opened.index.query_batch(fps, 3)
        assert len(found) == len(expected)
        for doc in docs[:10]:
            assert doc.id in [m.id for m in opened.query(doc)]


@pytest.mark.parametrize("config", [
    StoreConfig(), StoreConfig(max_k=2, compress=True, keep_shingles=True),
    StoreConfig(sketch=None), StoreConfig(tables=(((((0, 64),), 16)),))])
def test_the_manifest_keeps_the_whole_config(tmp_path: Path, config: StoreConfig) -> None:
    open_store(tmp_path / "s", config).close()
    with open_store(tmp_path / "s", read_only=True) as store:
        assert store.config == config


def test_index_is_idempotent_on_id_and_bytes(tmp_path: Path) -> None:
    docs = edited_documents(20, seed=11)
    jsonl = tmp_path / "docs.jsonl"
    jsonl.write_text("".join(json.dumps({"id": d.id, "url": d.url, "text": d.raw.decode()})
                             + "\n" for d in docs))
    store = str(tmp_path / "s")
    runner = CliRunner()
    first = runner.invoke(cli, ["index", str(jsonl), "--store", store, "--workers", "1",
                                "--json"])
    again = runner.invoke(cli, ["index", str(jsonl), "--store", store, "--workers", "1",
                                "--json"])
    assert first.exit_code == 0 and again.exit_code == 0, again.output
    assert json.loads(first.output)["added"] == 20
    assert json.loads(again.output)["already_stored"] == 20
    assert json.loads(again.output)["added"] == 0
    assert json.loads(again.output)["documents_in_store"] == 20
    text = runner.invoke(cli, ["index", str(jsonl), "--store", store, "--workers", "1"])
    assert "20 already-stored" in text.output
    changed = Document(id=docs[0].id, raw=docs[0].raw + b" more", kind="text")
    with open_store(store) as opened:
        report = opened.add([changed, changed, docs[1]], record=True)
        assert (report.added, report.already_stored) == (1, 2)
        assert report.outcomes == [(docs[0].id, 20, False), (docs[0].id, 20, True),
                                   (docs[1].id, 1, True)]


def test_store_paths_that_are_not_stores_fail_in_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    missing = runner.invoke(cli, ["compact", "--store", str(tmp_path / "nothing")])
    assert missing.exit_code == 1 and "no such store" in missing.output
    assert not (tmp_path / "nothing").exists()
    afile = tmp_path / "afile"
    afile.write_text("x")
    for command in (["compact"], ["query", "--text", "x"], ["index", str(afile)]):
        result = runner.invoke(cli, [*command, "--store", str(afile)])
        assert result.exit_code == 1, result.output
        assert result.output.strip().count("\n") == 0
        assert f"{afile}: not a directory" in result.output


READER_AFTER_WARM_UP = """
import sys
sys.path.insert(0, {tests!r})
import numpy as np
from corpora import framed_sites
from neardup.index import tables
from neardup.store import open_store, postings, tallies
docs = framed_sites(30)[:60]
with open_store({store!r}) as store:       # a service's writer: it opens, warms up, forks
    store.warm_up()
    kernels = [postings._holding, tallies._add_pages, tables._query_plain_each,
               tables._within_each]
    made = [len(kernel.compiled.overloads) for kernel in kernels]
    with open_store({store!r}, read_only=True) as reader:    # what a service's reader reads
        values = store.db.execute("SELECT data FROM sketches WHERE doc = 3").fetchone()[0]
        wanted = np.unique(np.frombuffer(values, dtype="<i8"))
        for doc in docs[::5]:
            assert reader.query(doc) and reader.similar(doc)
        assert 3 in reader.sharing(wanted.tolist())
        host = int(reader.tally()[0][0])
        assert reader.value_pages(host, 0, wanted).any()
    print([len(kernel.compiled.overloads) for kernel in kernels] == made, made)
"""


def test_a_warmed_up_store_compiles_nothing_when_a_reader_reads(tmp_path: Path) -> None:
    """What a service's readers inherit: after ``warm_up`` a read-only store's queries,
    sketch searches and counts make no new kernel specialisation (a compile in a reader stalls
    its queries for seconds). A fresh process, so that no other test compiled them first."""
    docs = framed_sites(30)[:60]                         # two sites, frames their templates
    with open_store(tmp_path / "s", flush_every=30) as store:
        for start in range(0, 60, 20):
            store.add(docs[start:start + 20])            # a segment, and an insert log
        assert store.segments and len(store.postings) and len(store.tallies)
    code = READER_AFTER_WARM_UP.format(tests=str(Path(__file__).parent),
                                       store=str(tmp_path / "s"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.startswith("True"), done.stdout + done.stderr
