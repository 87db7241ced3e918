"""A newcomer's first hour (issue 16): one-line errors, owned output folders, no silent zero,
capped decompression, plain wording, grouped help, a fast ``--help``."""

from __future__ import annotations

import datetime as dt
import gzip
import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import click
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from neardup.cli.dedup import dedup_command
from neardup.cli.main import cli
from neardup.demo.synthetic import generate_crawl
from neardup.demo.warcwriter import WarcWriter
from neardup.sources import open_sources
from neardup.sources.http import decode_body

SRC = Path(__file__).resolve().parents[1] / "src"
DATE = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _page(words: int, salt: str = "") -> bytes:
    body = " ".join(f"{salt}word{i}" for i in range(words))
    return f"<html><body><p>{body}</p></body></html>".encode()


def _run(*args: str) -> click.testing.Result:
    return CliRunner().invoke(cli, list(args))


def _neardup(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    return subprocess.run([sys.executable, "-c", "from neardup.cli.main import main; main()",
                           *args], capture_output=True, text=True, env=env, check=False,
                          timeout=300, **kwargs)  # type: ignore[call-overload]


@pytest.fixture(scope="module")
def crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crawl") / "crawl.warc.gz"
    generate_crawl(path, seed=3, pages=80)
    return path


# -- an output folder is owned by its run ---------------------------------------------------


def test_reused_out_folder_links_then_no_links_then_report(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = _run("dedup", str(crawl), "--out", str(out), "--links", "--workers", "1")
    assert first.exit_code == 0, first.output
    assert (out / "links.parquet").exists()
    small = tmp_path / "small.jsonl"
    small.write_text("".join(json.dumps({"text": f"text number {i} " * 20}) + "\n"
                             for i in range(3)))
    second = _run("dedup", str(small), "--out", str(out), "--workers", "1")
    assert second.exit_code == 0, second.output
    assert not (out / "links.parquet").exists()  # the other run's table is gone
    assert pq.read_table(out / "documents.parquet").num_rows == 3
    report = _run("report", "--from", str(out), "-o", str(tmp_path / "r.html"))
    assert report.exit_code == 0, report.output
    assert "Traceback" not in report.output


def test_format_change_leaves_no_table_of_the_other_format(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    assert _run("dedup", str(crawl), "--out", str(out), "--workers", "1").exit_code == 0
    result = _run("dedup", str(crawl), "--out", str(out), "--format", "jsonl", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir() if p.is_file()) == [
        "clusters.jsonl", "documents.jsonl", "pairs.jsonl", "summary.json"]


def test_folder_of_other_files_is_refused_unless_forced(crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    refused = _run("dedup", str(crawl), "--out", str(out), "--workers", "1")
    assert refused.exit_code == 1
    assert "holds files that are not a neardup run's (notes.txt)" in refused.output
    assert "--force" in refused.output
    forced = _run("dedup", str(crawl), "--out", str(out), "--force", "--workers", "1")
    assert forced.exit_code == 0, forced.output
    assert (out / "notes.txt").read_text() == "mine"
    assert (out / "clusters.parquet").exists()


# -- errors: one line, no traceback ---------------------------------------------------------


def _one_error_line(result: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("neardup: error: "), lines
    for part in parts:
        assert part in lines[0]


def test_store_that_is_a_file_is_one_line(crawl: Path, tmp_path: Path) -> None:
    store = tmp_path / "a-file"
    store.write_text("x")
    _one_error_line(_neardup("index", str(crawl), "--store", str(store)), str(store),
                    "not a directory")


def test_demo_into_an_unwritable_place_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    _one_error_line(_neardup("demo", "--out", str(blocker / "demo")), str(blocker / "demo"))


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    result = _neardup("--debug", "demo", "--out", str(blocker / "demo"))
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "NotADirectoryError" in result.stderr


def test_lost_and_found_unknown_url_and_query_missing_file(crawl: Path, tmp_path: Path) -> None:
    store = tmp_path / "store"
    indexed = _run("index", str(crawl), "--store", str(store), "--workers", "1")
    assert indexed.exit_code == 0, indexed.output
    assert "segments)" not in indexed.output and "1 segment)" in indexed.output
    lost = _run("lost-and-found", "--store", str(store), "http://unknown.example/")
    assert lost.exit_code == 1
    assert "http://unknown.example/: no document with this URL" in lost.output
    query = _run("query", "--store", str(store), str(tmp_path / "missing.html"))
    assert query.exit_code == 1
    assert "missing.html: no such file or directory" in query.output
    compact = _run("compact", "--store", str(store))
    assert compact.exit_code == 0
    assert "1 segment merged into 1 segment" in compact.output


# -- damaged input is skipped and counted, the read goes on ---------------------------------


def test_nul_byte_in_charset_is_skipped_and_later_files_read(tmp_path: Path) -> None:
    first, second = tmp_path / "a.warc.gz", tmp_path / "b.warc.gz"
    with WarcWriter(first, seed=1) as writer:
        writer.write_response("http://a.example/1", _page(80, "a"), DATE)
        writer.write_response("http://a.example/2", _page(80, "b"), DATE,
                              content_type="text/html; charset=ut\x00f-8")
        writer.write_response("http://a.example/3", _page(80, "c"), DATE)
    with WarcWriter(second, seed=2) as writer:
        writer.write_response("http://b.example/1", _page(80, "d"), DATE)
    reader = open_sources([str(first), str(second)])
    urls = [doc.url for doc in reader]
    assert urls == ["http://a.example/1", "http://a.example/3", "http://b.example/1"]
    assert reader.stats.skipped == {"bad-http": 1}
    out = tmp_path / "out"
    result = _run("dedup", str(first), str(second), "--out", str(out), "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "documents: 3 from 4 records in 2 files; skipped: bad-http 1" in result.output


def _brotli_bomb(size: int) -> bytes:
    brotli = pytest.importorskip("brotli")
    engine = brotli.Compressor(quality=5)
    zeros = bytes(1 << 20)
    return b"".join(engine.process(zeros) for _ in range(size >> 20)) + engine.finish()


def test_brotli_bomb_stays_within_the_cap() -> None:
    bomb = _brotli_bomb(1 << 30)  # 1 GiB of zeros in about 1.6 KB
    cap = 10 << 20
    tracemalloc.start()
    try:
        decoded = decode_body(bomb, {"content-encoding": "br"}, cap + 1)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert decoded is not None and len(decoded) == cap + 1
    assert peak < 8 * cap  # was the whole gigabyte (and more) before the cap


def _raw_record(url: str, http: bytes) -> bytes:
    head = (f"WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: {url}\r\n"
            "WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Record-ID: <urn:uuid:0000>\r\n"
            "Content-Type: application/http; msgtype=response\r\n"
            f"Content-Length: {len(http)}\r\n\r\n").encode()
    return head + http + b"\r\n\r\n"


@pytest.mark.slow
def test_truncated_brotli_payload_is_visible_in_the_printed_summary(tmp_path: Path) -> None:
    page = _page(2000)
    brotli = pytest.importorskip("brotli")
    body = brotli.compress(page * 8000)  # about 160 MB of HTML once decoded
    http = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Encoding: br\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body
    warc = tmp_path / "bomb.warc.gz"
    warc.write_bytes(gzip.compress(_raw_record("http://bomb.example/", http)))
    result = _run("dedup", str(warc), "--out", str(tmp_path / "out"), "--workers", "1")
    assert result.exit_code == 0, result.output
    assert "truncated: 1 payload longer than 10 MiB, cut to it" in result.output
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["sources"]["truncated_payloads"] == 1


def test_jsonl_line_beyond_the_cap_is_skipped_and_counted(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl.gz"
    lines = [json.dumps({"text": "short one"}), json.dumps({"text": "x" * 100_000}),
             json.dumps({"text": "short two"})]
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    reader = open_sources([str(path)], max_bytes=100)
    assert [doc.raw for doc in reader] == [b"short one", b"short two"]
    assert reader.stats.skipped == {"too-large": 1}


# -- a run that reads no document says why and fails ---------------------------------------


@pytest.mark.parametrize("kind", ["empty-file", "empty-folder", "binaries", "random-warc",
                                  "parquet-without-text"])
def test_no_document_exits_non_zero_with_the_reasons(tmp_path: Path, kind: str) -> None:
    import pyarrow as pa

    target = tmp_path / "input"
    expected = {"empty-file": "1 file read, 0 records", "empty-folder": "no file found there",
                "binaries": "binary 1 (a binary file)", "random-warc": "bad-record",
                "parquet-without-text": "missing-text 1"}[kind]
    if kind == "empty-file":
        target = tmp_path / "empty.jsonl"
        target.write_bytes(b"")
    elif kind == "empty-folder":
        target.mkdir()
    elif kind == "binaries":
        target.mkdir()
        (target / "blob.bin").write_bytes(bytes(range(256)) * 40)
    elif kind == "random-warc":
        target = tmp_path / "random.warc.gz"
        target.write_bytes(os.urandom(5000))
    else:
        target = tmp_path / "rows.parquet"
        pq.write_table(pa.table({"body": ["some words"]}), target)
    result = _run("dedup", str(target), "--out", str(tmp_path / "out"), "--workers", "1")
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.startswith(f"neardup: error: no document read from {target}: ")
    assert expected in first


# -- words, options, help -------------------------------------------------------------------


def test_summary_is_in_plain_words(crawl: Path, tmp_path: Path) -> None:
    result = _run("dedup", str(crawl), "--out", str(tmp_path / "out"), "--workers", "1")
    assert result.exit_code == 0
    assert "{" not in result.output  # no Python dict
    assert "exact groups: " in result.output and " identical, " in result.output
    assert " verified of " not in result.output
    assert "near pairs: " in result.output and "candidate pairs checked" in result.output


def test_threshold_is_refused_where_it_would_be_ignored(crawl: Path, tmp_path: Path) -> None:
    refused = _run("dedup", str(crawl), "--out", str(tmp_path / "a"), "--method", "simhash",
                   "--threshold", "0.9")
    assert refused.exit_code == 2
    assert "threshold 0.9 has no effect with method simhash" in refused.output
    accepted = _run("dedup", str(crawl), "--out", str(tmp_path / "b"), "--method", "minhash",
                    "--threshold", "1.0", "--workers", "1")
    assert accepted.exit_code == 0, accepted.output
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["near"]["threshold"] == 1.0


def test_dedup_help_shows_the_common_options_and_help_all_every_one_grouped() -> None:
    brief = _run("dedup", "--help")
    assert brief.exit_code == 0
    assert len(brief.output.splitlines()) <= 60
    for option in ("--out", "--write", "--text-field", "--method", "--workers", "--help-all"):
        assert f"  {option} " in brief.output
    assert "--sketch-bits" not in brief.output
    result = _run("dedup", "--help-all")
    assert result.exit_code == 0
    for heading in ("Input and output:", "Method:", "simhash:", "minhash, sketch and keyword:",
                    "sketch and supershingle:", "chunks, smfa and shingle-paragraphs:",
                    "Running:"):
        assert heading in result.output
    assert "Other options:" not in result.output
    for param in dedup_command.params:
        if isinstance(param, click.Option):
            assert param.help, f"{param.name} has no help"
            assert param.hidden or param.opts[0] in result.output


def test_top_level_help_loads_no_command(tmp_path: Path) -> None:
    code = ("import sys\nfrom neardup.cli.main import cli\n"
            "try:\n    cli(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('numpy', 'numba', 'pyarrow') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(SRC)}, check=True, timeout=60)
    assert "lost-and-found" in result.stdout
    assert result.stdout.strip().splitlines()[-1] == "[]"


# -- Ctrl-C and progress, through real processes ----------------------------------------------


@pytest.fixture(scope="module")
def big_crawl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("big")
    for index in range(4):
        generate_crawl(folder / f"c{index}.warc.gz", seed=index, pages=1500)
    return folder


def _interrupt(args: list[str], started: Path, delay: float) -> tuple[int, str]:
    """Run ``neardup ARGS``, press Ctrl-C (SIGINT to its process group, as a terminal does)
    ``delay`` seconds after ``started`` appears; the exit status and stderr."""
    import signal
    import time

    process = subprocess.Popen(
        [sys.executable, "-c", "from neardup.cli.main import main; main()", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(SRC)})
    deadline = time.monotonic() + 120
    while not started.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.02)
    time.sleep(delay)
    assert process.poll() is None, "the run ended before Ctrl-C"
    os.killpg(process.pid, signal.SIGINT)
    _, err = process.communicate(timeout=120)
    return process.returncode, err


@pytest.mark.slow
def test_ctrl_c_during_dedup_stops_workers_quietly(big_crawl: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, err = _interrupt(["dedup", str(big_crawl), "--out", str(out), "--workers", "2"],
                           out / ".neardup-work" / "fingerprint", 0.5)
    assert code == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert err.strip().splitlines() == [
        f"neardup: interrupted (Ctrl-C): no table written to {out}; the finished steps stay "
        f"in {out / '.neardup-work'}, and the same command resumes from them"]
    assert not list(out.glob("*.parquet"))
    again = _neardup("dedup", str(big_crawl), "--out", str(out), "--workers", "2")
    assert again.returncode == 0, again.stderr
    assert "documents: " in again.stdout


@pytest.mark.slow
def test_ctrl_c_during_index_keeps_what_was_acknowledged(big_crawl: Path,
                                                         tmp_path: Path) -> None:
    import re

    import neardup

    store = tmp_path / "store"
    code, err = _interrupt(["index", str(big_crawl), "--store", str(store), "--workers", "2"],
                           store / "meta.sqlite", 1.0)
    assert code == 130
    assert "Traceback" not in err and "Aborted!" not in err
    found = re.fullmatch(r"neardup: interrupted \(Ctrl-C\): \S+ keeps ([\d,]+) added by this "
                         r"run, ([\d,]+) documents in all \(committed batches stay; the rest "
                         r"was not added\)", err.strip())
    assert found is not None, err
    with neardup.open_store(store, read_only=True) as opened:
        assert len(opened) == int(found.group(2).replace(",", ""))


@pytest.mark.slow
def test_progress_on_a_terminal_shows_totals_per_stage(big_crawl: Path, tmp_path: Path) -> None:
    import pty

    master, slave = pty.openpty()
    process = subprocess.Popen(
        [sys.executable, "-c", "from neardup.cli.main import main; main()", "dedup",
         str(big_crawl), "--out", str(tmp_path / "out"), "--workers", "2"],
        stdout=subprocess.DEVNULL, stderr=slave,
        env={**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "150"})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 1 << 16)
        except OSError:  # the other end closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert process.wait(timeout=300) == 0
    shown = b"".join(chunks).decode(errors="replace")
    assert "4/4" in shown and "files" in shown  # the total of the fingerprint stage
    assert "left" in shown and "elapsed" in shown
    for stage in ("fingerprint", "exact", "near", "cluster", "outputs"):
        assert stage in shown


def test_every_option_of_every_command_is_described() -> None:
    ctx = click.Context(cli)
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None and command.help, name
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{name} {param.opts[0]} has no help"
