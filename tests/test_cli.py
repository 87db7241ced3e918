"""The command line through click's runner: dedup on real crawls and on generated inputs, demo."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.cli.main import cli
from runs import assert_same_tables, summary_facts


def run(*args: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return {"output": result.output}


def summary(out: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((out / "summary.json").read_text())  # type: ignore[no-any-return]


def warc_files(shared: Path) -> list[Path]:
    files = sorted(p for p in (shared / "warc").rglob("*") if p.is_file())
    assert len(files) >= 19
    return files


@pytest.mark.slow
def test_every_real_and_malformed_crawl_goes_through(shared_data: Path, tmp_path: Path) -> None:
    for index, path in enumerate(warc_files(shared_data)):
        out = tmp_path / str(index)
        result = CliRunner().invoke(cli, ["dedup", str(path), "--out", str(out), "--quiet",
                                          "--workers", "1"], catch_exceptions=False)
        report = summary(out)
        if report["documents"]:
            assert result.exit_code == 0, result.output
        else:  # a run that reads no document fails, saying why (the summary is still written)
            assert result.exit_code == 1
            assert result.output.startswith(f"neardup: error: no document read from {path}: ")
        sources = report["sources"]
        assert report["documents"] + sum(sources["skipped"].values()) >= 1, path
        assert {"documents", "pairs", "clusters"} <= {p.stem for p in out.glob("*.parquet")}


@pytest.mark.slow
def test_all_crawls_together_with_counts(shared_data: Path, tmp_path: Path) -> None:
    run("dedup", str(shared_data / "warc"), "--out", str(tmp_path), "--quiet", "--workers", "2")
    report = summary(tmp_path)
    assert report["sources"]["skipped"]["truncated-record"] >= 1
    assert report["documents"] > 300
    clusters = pq.read_table(tmp_path / "clusters.parquet").to_pylist()
    assert len(clusters) == report["documents"]
    assert sum(not row["kept"] for row in clusters) == report["duplicates"]


def test_the_same_archive_as_warc_and_arc_is_found_identical(shared_data: Path,
                                                              tmp_path: Path) -> None:
    warc = shared_data / "warc"
    run("dedup", str(warc / "archive-org-2008-warc017.warc.gz"),
        str(warc / "archive-org-2008.arc.gz"), "--out", str(tmp_path), "--quiet",
        "--method", "exact", "--workers", "1")
    report = summary(tmp_path)
    assert report["documents"] == 2 * 129
    assert report["exact_collapsed"]["identical"] >= 129


def test_jsonl_corpus_with_formats_and_keep(tmp_path: Path) -> None:
    text = " ".join(f"word{i}" for i in range(400))
    lines = [{"id": "a", "text": text}, {"id": "b", "text": text.upper() + "!"},
             {"id": "c", "text": "something else entirely " * 20}]
    source = tmp_path / "corpus.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    out = tmp_path / "out"
    run("dedup", str(source), "--out", str(out), "--format", "jsonl", "--method", "minhash",
        "--keep", "longest", "--quiet")
    pairs = [json.loads(line) for line in (out / "pairs.jsonl").read_text().splitlines()]
    assert [(p["a"], p["b"], p["relation"]) for p in pairs] == [(0, 1, "lexical")]
    clusters = [json.loads(line) for line in (out / "clusters.jsonl").read_text().splitlines()]
    assert [c["kept"] for c in clusters] == [False, True, True]
    assert summary(out)["sources"]["skipped"] == {"json-error": 1}


@pytest.mark.parametrize(("limit", "warned"), [("64M", True), ("448M", False), ("none", False)])
def test_a_memory_limit_the_stages_cannot_keep_is_said(limit: str, warned: bool,
                                                       tmp_path: Path) -> None:
    source = tmp_path / "corpus.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "one two three four five six"}) + "\n")
    result = CliRunner().invoke(cli, ["dedup", str(source), "--out", str(tmp_path / "out"),
                                      "--quiet", "--memory-limit", limit])
    assert result.exit_code == 0, result.output
    said = f"warning: --memory-limit {limit} is below what the stages can keep to (448M"
    assert (said in result.stderr) is warned
    assert summary(tmp_path / "out")["documents"] == 1


def test_an_input_named_twice_is_read_once(tmp_path: Path) -> None:
    source = tmp_path / "corpus.jsonl"
    source.write_text(json.dumps({"id": "a", "text": "one two three four five six"}) + "\n")
    run("dedup", str(source), str(tmp_path / "*.jsonl"), "--out", str(tmp_path / "out"),
        "--quiet", "--write", "kept")
    found = summary(tmp_path / "out")
    assert found["documents"] == 1 and found["duplicates"] == 0
    assert found["sources"]["skipped"] == {"repeated-input": 1}
    assert (tmp_path / "out" / "kept" / "corpus.jsonl").read_text().count("\n") == 1


@pytest.mark.parametrize("collide", [False, True])
def test_repeated_ids_are_counted_exactly(collide: bool, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import numpy as np

    import neardup.engine.outputs as outputs

    if collide:  # every id hashed alike: only the ids themselves may count a repeat
        monkeypatch.setattr(outputs, "_id_hashes",
                            lambda table: np.zeros(table.num_rows, dtype=np.int64))
    source = tmp_path / "corpus.jsonl"
    rows = [{"id": name, "text": f"{name} {i} " + "words of this row " * 5}
            for i, name in enumerate(["a", "b", "a", "c", "a", "d"])]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows))
    output = run("dedup", str(source), "--out", str(tmp_path / "out"), "--partition-docs", "2")
    assert summary(tmp_path / "out")["repeated_ids"] == 2
    assert "ids: 2 documents repeat the id of an earlier one" in output["output"]


def test_missing_input_is_one_line_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["dedup", str(tmp_path / "nope.warc"), "--out",
                                      str(tmp_path / "o")])
    assert result.exit_code == 1
    assert "nope.warc" in result.output and "no such file" in result.output


@pytest.mark.slow
def test_demo_finds_what_was_planted(tmp_path: Path) -> None:
    output = run("demo", "--out", str(tmp_path))["output"]
    assert isinstance(output, str)
    rows = {line.split()[0]: line.split() for line in output.splitlines() if "%" in line}
    for kind in ("exact", "lexical", "revisit"):
        assert rows[kind][3] == "100%", output
    assert "precision 100%" in output
    assert (tmp_path / "crawl.warc.gz").exists() and (tmp_path / "truth.json").exists()


def test_iana_repeated_captures_come_out_as_exact_duplicates(shared_data: Path,
                                                             tmp_path: Path) -> None:
    # Every revisit in the iana crawl repeats a stylesheet, script, SVG or font capture, so they
    # become documents only when every media type is accepted.
    run("dedup", str(shared_data / "warc" / "iana-revisits.warc.gz"), "--media", "any",
        "--method", "exact", "--out", str(tmp_path), "--quiet", "--workers", "1")
    report = summary(tmp_path)
    assert report["sources"]["revisits_linked"] == 123
    pairs = pq.read_table(tmp_path / "pairs.parquet").to_pylist()
    revisits = [p for p in pairs if p["method"] == "revisit"]
    assert len(revisits) == 123
    assert {p["relation"] for p in revisits} == {"identical"}
    assert report["duplicates"] >= 123


@pytest.mark.parametrize(("method", "option", "value"), [
    ("minhash", "--min-shared", "3"), ("chunks", "--k", "2"), ("simhash", "--drop-common", "5"),
    ("oph", "--supershingle-size", "4"), ("sketch", "--segments", "2"),
])
def test_an_option_of_another_method_is_refused_by_name(tmp_path: Path, method: str, option: str,
                                                        value: str) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"text": "one two three four five six"}\n')
    refused = CliRunner().invoke(cli, ["dedup", str(corpus), "--out", str(tmp_path / "out"),
                                       "--method", method, option, value])
    assert refused.exit_code == 2
    assert f"{option} has no effect with --method {method}" in refused.output


def test_an_option_the_method_reads_is_taken(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"text": f"w{i} " * 30}) + "\n" for i in range(4)))
    out = tmp_path / "out"
    taken = CliRunner().invoke(cli, ["dedup", str(corpus), "--out", str(out), "--quiet",
                                     "--workers", "1", "--method", "chunks", "--drop-common",
                                     "5", "--chunk", "words:4", "--min-shared", "2"])
    assert taken.exit_code == 0, taken.output
    assert summary(out)["config"]["chunks"] == "overlap:T2:drop5:chunk:words:4:s0"


def _fingerprint_files(work: Path) -> dict[str, int]:
    """The bytes of each kind of file of the fingerprint partitions (``article/...`` for the
    article views')."""
    found: dict[str, int] = {}
    for path in (work / "fingerprint").rglob("*"):
        parts = path.relative_to(work / "fingerprint").parts
        if path.is_file() and len(parts) > 1:  # in a partition: its kind, without the partition
            kind = "/".join(parts[1:])
            found[kind] = found.get(kind, 0) + path.stat().st_size
    return found


def test_compact_work_gives_the_same_tables_from_a_smaller_work_directory(
        shared_data: Path, tmp_path: Path) -> None:
    """Real pages (both views of each page: full text and article), revisits, several
    partitions: --compact-work stores token sequences (article views too) instead of sets,
    and every table and the summary's findings are those of the default run."""
    warc = shared_data / "warc"
    inputs = [str(warc / name) for name in ("commoncrawl-2015-excerpt.warc.gz",
                                             "clueweb12-one-shop-site.warc.gz",
                                             "dupes-revisits.warc.gz")]
    files = {}
    for name, flags in (("default", []), ("compact", ["--compact-work"])):
        run("dedup", *inputs, "--out", str(tmp_path / name), "--work", str(tmp_path / f"{name}-w"),
            "--method", "minhash", "--partition-docs", "25", "--workers", "1", "--quiet", *flags)
        files[name] = _fingerprint_files(tmp_path / f"{name}-w")
    assert_same_tables(tmp_path / "compact", tmp_path / "default")
    assert summary_facts(tmp_path / "compact") == summary_facts(tmp_path / "default")
    assert summary(tmp_path / "default")["near"]["verified"] > 0
    assert "shingles.npy" in files["default"] and "sequences.npy" not in files["default"]
    assert "article/shingles.npy" in files["default"]
    assert "shingles.npy" not in files["compact"] and "article/shingles.npy" not in files["compact"]
    assert files["compact"]["sequences.npy"] > 0 and files["compact"]["article/sequences.npy"] > 0
    assert sum(files["compact"].values()) < 0.6 * sum(files["default"].values())
