"""``neardup report``: the HTML page is opened and every section present must carry its figures
(embedded PNG) and its numbers (the same as the JSON); missing inputs omit a section with a
reason. Real dedup runs over a generated crawl, the demo, and all of ../shared/data/warc."""

from __future__ import annotations

import base64
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.analysis import build_report, read_dedup_dir
from neardup.analysis.model import SECTION_TITLES, format_value
from neardup.analysis.render import render_html, write_report
from neardup.cli.dedup import WORK_DIR, run_dedup
from neardup.cli.main import cli
from neardup.config import DedupConfig
from neardup.demo.synthetic import generate_crawl
from neardup.engine import EngineOptions, run_engine

PNG = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """Per section (data-key): its images, its numbers (dd data-key -> text), its text."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, dict[str, Any]] = {}
        self._section: dict[str, Any] | None = None
        self._number: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section":
            self._section = {"images": [], "numbers": {}, "text": "",
                             "omitted": found.get("class") == "omitted"}
            self.sections[str(found["data-key"])] = self._section
        elif tag == "img" and self._section is not None:
            self._section["images"].append(found["src"])
        elif tag == "dd" and self._section is not None:
            self._number = found["data-key"]
            self._section["numbers"][self._number] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self._section = None
        if tag == "dd":
            self._number = None

    def handle_data(self, data: str) -> None:
        if self._section is not None:
            self._section["text"] += data
            if self._number is not None:
                self._section["numbers"][self._number] += data


def open_page(path: Path) -> Page:
    page = Page()
    page.feed(path.read_text(encoding="utf-8"))
    return page


def check_report(html_path: Path, json_path: Path) -> tuple[Page, dict[str, Any]]:
    """Every present section carries its figures and its numbers; omitted ones their reason."""
    page, data = open_page(html_path), json.loads(json_path.read_text())
    assert [s["key"] for s in data["sections"]] == list(SECTION_TITLES)
    assert list(page.sections) == list(SECTION_TITLES)
    for section in data["sections"]:
        shown = page.sections[section["key"]]
        if "omitted" in section:
            assert shown["omitted"] and section["omitted"] in shown["text"]
            continue
        assert len(shown["images"]) == len(section["figures"]), section["key"]
        assert section["figures"] or section["tables"], section["key"]
        for src in shown["images"]:
            assert src.startswith("data:image/png;base64,")
            assert base64.b64decode(src.split(",", 1)[1]).startswith(PNG)
        assert section["numbers"], section["key"]
        assert set(shown["numbers"]) == set(section["numbers"])
        for key, value in section["numbers"].items():
            assert shown["numbers"][key] in {format_value(value, unit) for unit in
                                             ("count", "share", "number", "bytes")}, key
        assert section["input"] and section["input"] in shown["text"]
        for table in section["tables"]:
            assert table["title"] in shown["text"]
    return page, data


def report(*args: str) -> str:
    result = CliRunner().invoke(cli, ["report", *args], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="module")
def crawl_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A generated crawl deduplicated twice: simhash with links (Parquet), exact (JSONL)."""
    root = tmp_path_factory.mktemp("crawl")
    warc = root / "crawl.warc.gz"
    generate_crawl(warc, seed=3, pages=80)
    simhash, exact = root / "simhash", root / "exact"
    run_dedup((str(warc),), simhash, DedupConfig(method="simhash", links=True), workers=1)
    run_engine([str(warc)], exact, DedupConfig(method="exact"),
               EngineOptions(work=exact / WORK_DIR), fmt="jsonl")
    return simhash, exact


def test_two_methods_render_every_section_with_figures_and_numbers(
        crawl_runs: tuple[Path, Path], tmp_path: Path) -> None:
    simhash, exact = crawl_runs
    output = report("--from", str(simhash), "--from", str(exact), "-o",
                    str(tmp_path / "r.html"), "--json")
    assert "wrote" in output and "omitted: no growth table" in output
    _, data = check_report(tmp_path / "r.html", tmp_path / "r.json")
    sections = {s["key"]: s for s in data["sections"]}
    assert set(sections) - {k for k, s in sections.items() if "omitted" in s} == {
        "largest", "rates", "noncontent", "replicas", "clusters", "servers", "savings", "links",
        "distribution"}
    replicas = sections["replicas"]["figures"][0]["series"]
    assert [s["name"] for s in replicas] == ["identical bytes", "simhash k=3", "exact"]
    for series in replicas:
        assert sum(series["y"]) == pytest.approx(1.0)
    savings = {row[0]: row for row in sections["savings"]["tables"][0]["rows"]}
    assert savings["simhash k=3"][2] >= savings["exact copies (identical bytes)"][2]
    links = {row[0]: row for row in sections["links"]["tables"][0]["rows"]}
    assert links["connected"][1] + links["disconnected"][1] == links["complete"][1]


def test_growth_section_reads_a_growth_table(crawl_runs: tuple[Path, Path],
                                             tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(crawl_runs[0], run)
    pq.write_table(pa.table({"iteration": [1, 2, 3, 4, 5], "clusters": [3, 5, 6, 6, 7],
                             "duplicates": [6, 8, 9, 9, 10],
                             "estimated_duplicates": [30.0, 12.0, 11.0, 10.0, 10.0]}),
                   run / "growth.parquet")
    write_report(build_report([read_dedup_dir(run)]), tmp_path / "g.html", tmp_path / "g.json")
    _, data = check_report(tmp_path / "g.html", tmp_path / "g.json")
    growth = next(s for s in data["sections"] if s["key"] == "growth")
    assert growth["numbers"]["iterations"] == 5
    assert growth["numbers"]["found:50%"] == pytest.approx(9 / 10)
    assert [s["name"] for s in growth["figures"][0]["series"]] == ["clusters", "duplicates"]
    rows = growth["tables"][0]["rows"]
    assert [row[1] for row in rows] == [1, 3]
    assert [row[-1] for row in rows] == [30.0, 11.0]


def test_missing_inputs_omit_sections_with_their_reason(crawl_runs: tuple[Path, Path],
                                                        tmp_path: Path) -> None:
    model = build_report([read_dedup_dir(crawl_runs[1])])
    omitted = {s.key: s.omitted for s in model.sections if s.omitted}
    assert omitted == {
        "servers": f"{crawl_runs[1]}: no cluster spans two servers",
        "links": "no links table: run dedup with --links",
        "growth": "no growth table: run dedup --method shingle-paragraphs --iterations m",
        "distribution": "no simhash column: run dedup --method simhash",
        "chunks": "no chunks run: run dedup --method chunks (one per chunking)"}
    (tmp_path / "o.html").write_text(render_html(model, draw=lambda fig: PNG))
    (tmp_path / "o.json").write_text(json.dumps(model.to_json()))
    check_report(tmp_path / "o.html", tmp_path / "o.json")


def test_a_corpus_without_urls_keeps_what_it_can(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    documents = {"doc": [0, 1, 2, 3], "url": [None] * 4, "host": [None] * 4,
                 "length": [5, 5, 7, 9], "identical": ["x", "x", "y", "z"]}
    clusters = {"doc": [0, 1, 2, 3], "cluster": [0, 0, 0, 3], "kept": [True, False, False, True]}
    pq.write_table(pa.table(documents), run / "documents.parquet")
    pq.write_table(pa.table(clusters), run / "clusters.parquet")
    model = build_report([read_dedup_dir(run)])
    sections = {s.key: s for s in model.sections}
    assert sections["servers"].omitted == f"{run}: no document has a host (URLs are needed)"
    largest = sections["largest"].tables[0].rows
    assert [row[:4] for row in largest] == [(0, 3, 0, "doc 0")]  # the kept copy has no URL
    assert largest[0][-1] == "(text not available)"
    assert sections["replicas"].tables[0].rows == (
        ("identical bytes", 0.5, 0.5, 0.0, 0.0, 0.0), ("unknown", 0.25, 0.0, 0.75, 0.0, 0.0))
    savings = sections["savings"].tables[0].rows
    assert [row[0] for row in savings] == ["exact copies (identical bytes)", "unknown"]
    assert [row[4] for row in savings] == [5, 12]
    (tmp_path / "r.html").write_text(render_html(model, draw=lambda fig: PNG))
    (tmp_path / "r.json").write_text(json.dumps(model.to_json()))
    check_report(tmp_path / "r.html", tmp_path / "r.json")


def test_the_browser_is_optional_and_never_replaces_a_foreign_folder(
        crawl_runs: tuple[Path, Path], tmp_path: Path) -> None:
    report("--from", str(crawl_runs[0]), "-o", str(tmp_path / "a.html"), "--json",
           "--browser-pages", "0")
    assert not (tmp_path / "a-clusters").exists()
    largest = json.loads((tmp_path / "a.json").read_text())["sections"][0]
    assert largest["key"] == "largest" and "links" not in largest["tables"][0]
    output = report("--from", str(crawl_runs[0]), "-o", str(tmp_path / "b.html"),
                    "--browser-pages", "3")
    assert "cluster browser: 3 cluster pages" in output
    pages = sorted(p.name for p in (tmp_path / "b-clusters").glob("c*.html"))
    assert len(pages) == 3
    report("--from", str(crawl_runs[0]), "-o", str(tmp_path / "b.html"), "--browser-pages", "2")
    assert len(list((tmp_path / "b-clusters").glob("c*.html"))) == 2  # replaced, not mixed
    mine = tmp_path / "c-clusters"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    result = CliRunner().invoke(cli, ["report", "--from", str(crawl_runs[0]), "-o",
                                      str(tmp_path / "c.html")])
    assert result.exit_code == 1
    assert f"{mine}: exists and is not a cluster browser" in result.output
    assert (mine / "notes.txt").read_text() == "keep me"
    assert not (tmp_path / "c.html").exists()  # refused before anything was written


def test_the_seeds_caption_counts_what_its_table_lists(crawl_runs: tuple[Path, Path]) -> None:
    links = next(s for s in build_report([read_dedup_dir(crawl_runs[0])], top=100).sections
                 if s.key == "links")
    seeds = links.tables[1]
    assert f"from {len(seeds.rows)} seed page" in links.caption
    assert seeds.note == f"{len(seeds.rows)} of {len(seeds.rows)} distinct seed URLs"


def test_seed_urls_choose_the_connected_part(crawl_runs: tuple[Path, Path],
                                             tmp_path: Path) -> None:
    run = read_dedup_dir(crawl_runs[0])
    url = run.documents.column("url").to_pylist()[0]
    links = next(s for s in build_report([run], seeds=[url]).sections if s.key == "links")
    assert links.tables[1].rows == ((url,),)
    result = CliRunner().invoke(cli, ["report", "--from", str(crawl_runs[0]), "-o",
                                      str(tmp_path / "x.html"), "--seed", "http://nowhere.example/"])
    assert result.exit_code == 1
    assert "seed='http://nowhere.example/'" in result.output


def test_dedup_links_writes_the_out_links(tmp_path: Path) -> None:
    rows = [{"id": "a", "url": "http://s/", "html": '<p>home <a href="/a">a</a> <a href="http:'
             '//T.example/x#top">t</a> <a href="mailto:x@s">m</a> <a href="/a">again</a></p>'},
            {"id": "b", "url": "http://s/a", "text": "plain text has no links"},
            {"id": "c", "url": "http://s/c", "html": "<p>no links here</p>"}]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = CliRunner().invoke(cli, ["dedup", str(source), "--out", str(tmp_path / "out"),
                                      "--links", "--format", "jsonl", "--quiet", "--workers", "1"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = (tmp_path / "out" / "links.jsonl").read_text().splitlines()
    links = [json.loads(line) for line in lines]
    assert links == [{"doc": 0, "url": "http://s/a"}, {"doc": 0, "url": "http://t.example/x"}]
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "links" not in json.dumps(summary["config"])
    CliRunner().invoke(cli, ["dedup", str(source), "--out", str(tmp_path / "none"), "--quiet",
                             "--workers", "1"], catch_exceptions=False)
    assert not (tmp_path / "none" / "links.parquet").exists()


def test_cli_errors_name_the_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", "--from", str(tmp_path / "none"), "-o",
                                      str(tmp_path / "x.html")])
    assert result.exit_code == 1
    assert result.output.strip() == (f"neardup: error: {tmp_path / 'none'}: no such directory "
                                     "(give a dedup --out directory)")


@pytest.mark.parametrize("method", ["minhash", "simhash"])
def test_report_of_demo_output(tmp_path: Path, method: str) -> None:
    result = CliRunner().invoke(cli, ["demo", "--out", str(tmp_path), "--pages", "60",
                                      "--method", method], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report("--from", str(tmp_path / "dedup"), "-o", str(tmp_path / "demo.html"), "--json")
    _, data = check_report(tmp_path / "demo.html", tmp_path / "demo.json")
    present = [s["key"] for s in data["sections"] if "omitted" not in s]
    fingerprints = ["distribution"] if method == "simhash" else []  # needs simhash column
    assert present == ["largest", "rates", "noncontent", "replicas", "clusters", "servers",
                       "savings", "links", *fingerprints]


@pytest.mark.slow
def test_report_of_every_shared_crawl_together(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "dedup"
    result = CliRunner().invoke(cli, ["dedup", str(shared_data / "warc"), "--out", str(out),
                                      "--method", "simhash", "--links", "--quiet",
                                      "--workers", "2"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert (out / "links.parquet").is_file()
    report("--from", str(out), "-o", str(tmp_path / "warc.html"), "--json")
    _, data = check_report(tmp_path / "warc.html", tmp_path / "warc.json")
    sections = {s["key"]: s for s in data["sections"]}
    assert "omitted" not in sections["links"]
    assert sections["servers"]["numbers"]["top_servers"] >= 2
    summary = json.loads((out / "summary.json").read_text())
    assert sections["distribution"]["numbers"]["fingerprints"] == summary["documents"]
    assert sections["clusters"]["numbers"]["duplicates"] == summary["duplicates"]
    assert sections["clusters"]["numbers"]["clusters"] == summary["clusters"]
    rates = {t["title"]: t for t in sections["rates"]["tables"]}
    assert set(rates) == {"Per input file", "Per host", "Per crawl date (by year)"}
    by_file = rates["Per input file"]
    assert sum(row[1] for row in by_file["rows"]) <= summary["documents"]
    assert by_file["note"].endswith("files, most duplicates first")
    kinds = sections["noncontent"]["numbers"]
    assert kinds["robots_documents"] >= 27 and kinds["robots_duplicates"] >= 26
    largest = sections["largest"]["tables"][0]
    assert all("robots.txt" not in row[3] for row in largest["rows"])
    assert all(link.endswith(f"c{row[0]}.html")
               for row, link in zip(largest["rows"], largest["links"], strict=True))
    assert (tmp_path / "warc-clusters" / "index.html").is_file()
