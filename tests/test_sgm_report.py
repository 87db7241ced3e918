"""S&GM98 in the report and the outputs: Table 1 per chunking and phase, the FPrint-DocID relation
and the URL and server maps written by ``dedup --write-relations``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow.parquet as pq
from click.testing import CliRunner

from neardup.analysis.dedupdir import read_dedup_dir
from neardup.analysis.report import build_report
from neardup.analysis.sgm_table import ROW_BYTES
from neardup.cli.main import cli


def write_corpus(path: Path) -> None:
    """Eight texts of 80 lines on three hosts; two near-copies (one line changed)."""
    rng = random.Random(4)
    texts = ["\n".join(" ".join(f"w{rng.randrange(3000)}" for _ in range(8)) for _ in range(80))
             for _ in range(6)]
    lines = texts[0].split("\n")
    lines[40] = "a changed line"
    texts += ["\n".join(lines), texts[1] + "\nan extra line"]
    hosts = ["a.example", "b.example", "c.example"]
    path.write_text("".join(json.dumps({"id": str(i), "url": f"http://{hosts[i % 3]}/{i}",
                                        "text": text}) + "\n" for i, text in enumerate(texts)))


def dedup(source: Path, out: Path, *extra: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["dedup", str(source), "--out", str(out), "--quiet",
                                      "--workers", "1", "--method", "chunks", *extra])
    assert result.exit_code == 0, result.output
    summary: dict[str, object] = json.loads((out / "summary.json").read_text())
    return summary


def test_write_relations_writes_the_relation_and_the_maps(tmp_path: Path) -> None:
    source = tmp_path / "corpus.jsonl"
    write_corpus(source)
    summary = dedup(source, tmp_path / "out", "--write-relations")
    near = summary["near"]
    assert isinstance(near, dict)
    relation = pq.read_table(tmp_path / "out" / "fprint_docid.parquet").to_pylist()
    assert len(relation) == near["fprint_docid_rows"] > 0
    assert relation == sorted(relation, key=lambda r: (r["fprint"], r["doc"]))
    assert {r["doc"] for r in relation} == set(range(8))
    urls = pq.read_table(tmp_path / "out" / "url_map.parquet").to_pylist()
    assert urls[0] == {"url": "http://a.example/0", "doc": 0} and len(urls) == 8
    servers = pq.read_table(tmp_path / "out" / "server_map.parquet").to_pylist()
    assert servers == [{"server": "a.example", "server_id": 0, "documents": 3},
                       {"server": "b.example", "server_id": 1, "documents": 3},
                       {"server": "c.example", "server_id": 2, "documents": 2}]
    dedup(source, tmp_path / "plain")
    assert not (tmp_path / "plain" / "fprint_docid.parquet").exists()
    refused = CliRunner().invoke(cli, ["dedup", str(source), "--out", str(tmp_path / "x"),
                                       "--method", "simhash", "--write-relations"])
    assert refused.exit_code == 2 and "--write-relations has no effect" in refused.output


def test_report_has_table_1_per_chunking_and_phase(tmp_path: Path) -> None:
    source = tmp_path / "corpus.jsonl"
    write_corpus(source)
    runs = []
    for spec, algorithm in (("lines:4", "sort"), ("lines:2", "coarse")):
        out = tmp_path / spec.replace(":", "")
        dedup(source, out, "--chunk", spec, "--algorithm", algorithm, "--min-shared", "5")
        runs.append(read_dedup_dir(out))
    model = build_report(runs)
    section = {s.key: s for s in model.sections}["chunks"]
    assert section.omitted is None
    table = section.tables[0]
    by_chunking: dict[object, list[tuple[object, ...]]] = {}
    for row in table.rows:
        by_chunking.setdefault(row[1], []).append(row)
    assert set(by_chunking) == {"lines:4", "lines:2"}
    for run, chunking in zip(runs, ("lines:4", "lines:2"), strict=True):
        near = run.summary["near"]
        rows = by_chunking[chunking]
        assert [r[6] for r in rows] == list(near["phases"])  # one row per phase, in order
        assert {r[4] for r in rows} == {near["fprint_docid_rows"]}
        assert {r[5] for r in rows} == {near["fprint_docid_rows"] * ROW_BYTES}
        assert all(isinstance(r[8], float) for r in rows)
    assert by_chunking["lines:2"][0][4] > by_chunking["lines:4"][0][4]  # more, smaller chunks
