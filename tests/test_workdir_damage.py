"""A damaged work directory never gives a silent wrong answer (issue 29).

A finished work directory is built once per method; then, for every kind of file found in it
(paths with their numbers masked: ``fingerprint/sN-cN/bands.npy``, ``done/link.json``...), one
file of the kind is flipped, truncated or deleted in a fresh copy and the same command is run
again: it either gives the clean run's tables and summary, or exits non-zero naming the file;
never exit 0 with other outputs, never an "internal error". Where it gives the clean outputs
after damaging data it must have said so in a line naming the file.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from corpora import planted_texts, text_rows, vocabulary, write_jsonl
from neardup.cli.main import cli
from runs import assert_same_tables, summary_facts

RUNS = {"minhash": ("minhash", ()), "keyword": ("keyword", ()),
        "minhash-compact": ("minhash", ("--compact-work",))}
"""minhash: stored band keys and kept candidate buckets; keyword: pickled features and the
in-memory near stage's pickled tables; --compact-work: token sequences instead of sets."""

UNREAD = frozenset({"near-pairs.json"})
"""Files the same command rewrites without reading them (read by a later ``--against`` run)."""


@dataclass(frozen=True, slots=True)
class Finished:
    method: str
    flags: tuple[str, ...]
    corpus: Path
    work: Path
    out: Path


def _dedup(corpus: Path, out: Path, work: Path, method: str,
           flags: tuple[str, ...] = ()) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["dedup", str(corpus), "--out", str(out), "--work",
                                      str(work), "--method", method, "--partition-docs", "40",
                                      "--workers", "1", "--quiet", *flags])
    return result.exit_code, result.output


@pytest.fixture(scope="module", params=sorted(RUNS))
def finished(request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory) -> Finished:
    method, flags = RUNS[request.param]
    base = tmp_path_factory.mktemp(f"finished-{request.param}")
    texts = planted_texts(200, 11, vocabulary=vocabulary(300), lengths=(40, 120), exact=0.2,
                          upper=0.1, near=0.2)
    write_jsonl(base / "corpus", text_rows(texts))
    run = Finished(method, flags, base / "corpus", base / "work", base / "out")
    code, output = _dedup(run.corpus, run.out, run.work, method, flags)
    assert code == 0, output
    return run


def _kind(path: Path) -> str:
    return re.sub(r"\d+", "N", str(path))


def _kinds(work: Path) -> dict[str, Path]:
    """One file of each kind in ``work`` (the middle one of its kind), by kind."""
    found: dict[str, list[Path]] = {}
    for path in sorted(work.rglob("*")):
        if path.is_file():
            found.setdefault(_kind(path.relative_to(work)), []).append(path.relative_to(work))
    return {kind: paths[len(paths) // 2] for kind, paths in found.items()}


def _flip(path: Path) -> None:
    data = bytearray(path.read_bytes())
    if data:
        data[len(data) // 2] ^= 0x01
    else:
        data.append(0)
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:len(data) // 2])


DAMAGES: dict[str, Callable[[Path], None]] = {"flip": _flip, "truncate": _truncate,
                                               "delete": Path.unlink}


def _outcome(run: Finished, case: Path, file: Path, damage: str) -> str | None:
    """What went wrong when ``file`` (relative to the work directory) got ``damage`` in a copy
    of the finished work directory and the command ran again (None: nothing)."""
    work = case / "work"
    shutil.copytree(run.work, work)
    DAMAGES[damage](work / file)
    unchanged = (work / file).exists() and (work / file).read_bytes() == (run.work /
                                                                          file).read_bytes()
    code, output = _dedup(run.corpus, case / "out", work, run.method, run.flags)
    if "internal error" in output or "Traceback" in output:
        return f"exit {code}: {output.strip()}"
    if code != 0:
        return None if str(file) in output else f"exit {code} without naming it: {output}"
    try:
        assert_same_tables(case / "out", run.out)
        assert summary_facts(case / "out") == summary_facts(run.out)
    except AssertionError as err:
        return f"exit 0 with other outputs ({err})"
    silent = unchanged or (damage == "delete" and file.parts[0] == "done")  # a step not done
    if str(file) not in output and not silent and file.name not in UNREAD:
        return f"exit 0 without a line naming it: {output!r}"
    return None


@pytest.mark.slow
@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_each_kind_of_damaged_file_is_recomputed_or_named(finished: Finished, damage: str,
                                                          tmp_path: Path) -> None:
    kinds = _kinds(finished.work)
    assert any("fingerprint" in kind for kind in kinds) and any(kind.startswith("done/")
                                                                for kind in kinds)
    failures = {}
    for index, (kind, file) in enumerate(sorted(kinds.items())):
        problem = _outcome(finished, tmp_path / f"case{index}", file, damage)
        if problem is not None:
            failures[kind] = problem
    assert not failures, "\n".join(f"{kind}: {problem}" for kind, problem in failures.items())


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs (needs root; skipped where mounting is refused)."""
    folder = tmp_path / "tiny"
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(folder)],
                             capture_output=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield folder
    finally:  # detached even while a process still holds a file there (lazily, then)
        if subprocess.run(["umount", str(folder)], check=False).returncode != 0:
            subprocess.run(["umount", "--lazy", str(folder)], check=True)


def test_a_full_work_disk_names_the_folder_and_the_bytes(tiny_disk: Path,
                                                         tmp_path: Path) -> None:
    texts = planted_texts(600, 5, vocabulary=vocabulary(5000), lengths=(200, 300))
    write_jsonl(tmp_path / "corpus", text_rows(texts))
    work = tiny_disk / "work"
    code, output = _dedup(tmp_path / "corpus", tmp_path / "out", work, "minhash")
    assert code == 1
    assert "internal error" not in output
    line = output.strip().splitlines()[-1]
    assert line.startswith(f"neardup: error: {work}") and "the disk is full" in line
    free, needed = (int(number.replace(",", "")) for number in
                    re.findall(r"([\d,]+) bytes (?:free|there)", line))
    assert free < 64 << 10 and needed > 512 << 10


def test_a_damaged_earlier_run_stops_an_against_run_naming_the_file(
        finished: Finished, tmp_path: Path) -> None:
    """``--against`` reads an earlier run's partitions, which this run cannot compute again:
    a damaged one stops it with the file named; intact, the run succeeds."""
    old = tmp_path / "old"  # its own run: a work directory records its folders' paths
    assert _dedup(finished.corpus, tmp_path / "old-out", old, finished.method,
                  finished.flags)[0] == 0
    texts = planted_texts(60, 12, vocabulary=vocabulary(300), lengths=(40, 120))
    write_jsonl(tmp_path / "new", text_rows(texts, prefix="n"))
    arguments = ["dedup", str(tmp_path / "new"), "--against", str(old), "--method",
                 finished.method, "--partition-docs", "40", "--workers", "1", "--quiet"]
    intact = CliRunner().invoke(cli, [*arguments, "--out", str(tmp_path / "intact")])
    assert intact.exit_code == 0, intact.output
    sets = "sequences.npy" if finished.flags else "shingles.npy"
    shingles = sorted(old.glob(f"fingerprint/*/{sets}"))[1]
    _flip(shingles)
    damaged = CliRunner().invoke(cli, [*arguments, "--out", str(tmp_path / "damaged")])
    assert damaged.exit_code == 1
    assert f"{shingles}: damaged (checksum)" in damaged.output
    assert not (tmp_path / "damaged" / "documents.parquet").exists()
