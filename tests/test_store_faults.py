"""The store under faults: a writer killed during add, flush, merge and compaction; readers
opening while segments merge; a full disk; damaged files. Nothing acknowledged is lost, nothing
is stored twice, and a damaged store fails with an error naming the file or answers correctly,
never wrongly.

Writers run in forked children (the real process, killed with SIGKILL), so that each of the many
trials costs no interpreter start."""

from __future__ import annotations

import json
import os
import random
import resource
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pytest

from corpora import edited_documents
from neardup.errors import NeardupError
from neardup.store import Store, open_store
from neardup.store.collection import BATCH

ROUND = 25
"""Documents per add in the writer children (one SQLite transaction each)."""


def _round_docs(number: int) -> list:  # type: ignore[type-arg]
    return edited_documents(ROUND, seed=1000 + number)


def _child(work: Callable[[Callable[[str], None]], None]) -> tuple[int, int]:
    """Fork a child that runs ``work(say)``; ``say`` writes a line to the parent. Returns the
    child's pid and the read end of its pipe."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:       # pragma: no cover - the child
        os.close(read)
        code = 0
        try:
            work(lambda line: os.write(write, (line + "\n").encode()) and None)
        except BaseException as error:
            os.write(write, f"error {type(error).__name__}: {error}\n".encode())
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    return pid, read


def _lines(read: int) -> list[str]:
    with os.fdopen(read, "r") as pipe:
        return pipe.read().splitlines()


def _writer(store_dir: Path, start: int) -> Callable[[Callable[[str], None]], None]:
    def work(say: Callable[[str], None]) -> None:
        store = open_store(store_dir, flush_every=60)
        for number in range(start, start + 10_000):
            say(f"add {number}")
            store.add(_round_docs(number))
            say(f"ok {number}")
            if number % 3 == 2:
                say("flush")      # a flush merges segments as they accumulate
                store.flush()
            if number % 5 == 4:
                say("compact")
                store.compact()
    return work


def _kill_during(store_dir: Path, start: int, phase: str, rng: random.Random) -> list[str]:
    """Run a writer until it enters ``phase`` for the second time, kill it with SIGKILL 0-30 ms
    later; returns what it said."""
    pid, read = _child(_writer(store_dir, start))
    said = []
    seen = 0
    with os.fdopen(read, "r") as pipe:
        for line in pipe:
            said.append(line.strip())
            seen += line.split()[0] == phase
            if seen == 2 or line.startswith("error"):
                break
        time.sleep(rng.uniform(0.0, 0.03))
        os.kill(pid, signal.SIGKILL)
        said += [line.strip() for line in pipe]
    os.waitpid(pid, 0)
    assert not [line for line in said if line.startswith("error")], said
    return said


def _check_store(store_dir: Path, acknowledged: set[int], rng: random.Random) -> None:
    with open_store(store_dir) as store:      # opens: recovery, debris, cross-checks
        ids = [row[0] for row in store.db.execute("SELECT id FROM documents")]
        counts = Counter(ids)
        assert not [i for i, n in counts.items() if n > 1], "a document stored twice"
        for number in acknowledged:
            docs = _round_docs(number)
            assert all(d.id in counts for d in docs), f"acknowledged round {number} lost"
        if acknowledged:
            doc = rng.choice(_round_docs(rng.choice(sorted(acknowledged))))
            assert any(m.id == doc.id and m.distance == 0 for m in store.query(doc))


@pytest.mark.slow
def test_writers_killed_during_add_flush_merge_compaction_lose_nothing(tmp_path: Path) -> None:
    rng = random.Random(13)
    store_dir = tmp_path / "s"
    acknowledged: set[int] = set()
    phases = ["add", "flush", "compact"] * 18          # 54 trials
    for phase in phases:
        start = max(acknowledged, default=-1) + 1
        said = _kill_during(store_dir, start, phase, rng)
        acknowledged |= {int(line.split()[1]) for line in said if line.startswith("ok ")}
        _check_store(store_dir, acknowledged, rng)
    assert len(acknowledged) >= 2 * len(phases)
    with open_store(store_dir, read_only=True) as store:
        rounds = Counter(row[0].split("-")[0] for row in store.db.execute("SELECT id FROM "
                                                                         "documents"))
    assert set(rounds.values()) == {ROUND}             # every add whole, or not at all
    assert len(rounds) >= len(acknowledged)


def _segment_names(store_dir: Path) -> set[str]:
    with open_store(store_dir, read_only=True) as store:
        return {s.name for s in store.segments}


def test_readers_opening_during_merges_never_fail(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    with open_store(store_dir) as store:
        store.add(_round_docs(0))
        store.flush()
    before = _segment_names(store_dir)
    pid, read = _child(_writer(store_dir, 1))
    opens, failures, generations = 0, [], set()
    deadline = time.monotonic() + 4.0
    probe = _round_docs(0)[0]
    while time.monotonic() < deadline:
        try:
            with open_store(store_dir, read_only=True) as store:
                generations.add(tuple(s.name for s in store.segments))
                assert any(m.id == probe.id for m in store.query(probe))
            opens += 1
        except (NeardupError, AssertionError, OSError, sqlite3.Error) as error:
            failures.append(repr(error))
    os.kill(pid, signal.SIGKILL)
    said = _lines(read)
    os.waitpid(pid, 0)
    assert not [line for line in said if line.startswith("error")], said
    assert failures == [], f"{len(failures)} of {opens + len(failures)} opens failed"
    assert opens >= 20 and len(generations) >= 3, (opens, generations)
    assert sum(line == "compact" for line in said) >= 1
    assert _segment_names(store_dir) != before


def _fill_until_full(store_dir: Path, limit: int) -> Callable[[Callable[[str], None]], None]:
    """Add rounds under a file-size limit until an add fails; then, under a tighter limit,
    flush (which fails too); query the last acknowledged round after each failure."""
    def work(say: Callable[[str], None]) -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))
        store = open_store(store_dir, flush_every=10**6)
        last = 0
        for number in range(1, 400):
            try:
                store.add(_round_docs(number))
            except NeardupError as error:
                say(f"full {number} {error}")
                break
            say(f"ok {number}")
            last = number
        probe = _round_docs(last)[1]
        say(f"query {sum(m.id == probe.id for m in store.query(probe))}")
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.RLIM_INFINITY))
        try:
            store.flush()
            say("flushed")
        except NeardupError as error:
            say(f"flush-failed {error}")
        say(f"query {sum(m.id == probe.id for m in store.query(probe))}")
        store.close()
    return work


def test_a_full_disk_rolls_back_and_leaves_the_store_readable(tmp_path: Path) -> None:
    store_dir = tmp_path / "s"
    with open_store(store_dir) as store:
        store.add(_round_docs(0))
        store.flush()
    largest = max(p.stat().st_size for p in store_dir.rglob("*") if p.is_file())
    pid, read = _child(_fill_until_full(store_dir, largest + 600_000))
    said = _lines(read)
    os.waitpid(pid, 0)
    full = [line for line in said if line.startswith("full ")]
    assert len(full) == 1, said[-3:]
    message = full[0].split(" ", 2)[2]
    assert message.startswith(f"{store_dir / 'meta.sqlite'}: "), message
    assert "nothing of this transaction was stored" in message
    flush = [line for line in said if line.startswith("flush-failed ")]
    assert len(flush) == 1 and f"{store_dir / 'segments'}" in flush[0], said[-3:]
    assert "write failed" in flush[0]
    assert said.count("query 1") == 2, said[-4:]      # readable after both failures
    acknowledged = {int(line.split()[1]) for line in said if line.startswith("ok ")}
    failed = int(full[0].split()[1])
    assert len(acknowledged) >= 3
    with open_store(store_dir) as store:
        ids = Counter(row[0] for row in store.db.execute("SELECT id FROM documents"))
        assert max(ids.values()) == 1
        assert all(d.id in ids for n in acknowledged | {0} for d in _round_docs(n))
        assert not any(d.id in ids for d in _round_docs(failed))   # rolled back, all of it
        report = store.add(_round_docs(failed))                     # the retry
        assert report.added == ROUND and report.already_stored == 0
        assert not list((store_dir / "segments").glob(".*"))       # no debris left


# -- damaged files -------------------------------------------------------------------------

def _answers(store: Store) -> list[object]:
    docs = _round_docs(0)[:8] + _round_docs(1)[:4]
    out: list[object] = [[m.as_dict() for m in store.query(d)] for d in docs]
    out += [store.query_url(d.url or "")[1] for d in docs[:3]]
    out += [[m.as_dict() for m in store.similar(d, resemblance=0.3)] for d in docs[:3]]
    out += [len(store), store.document(5), store.cluster(2)]
    return out


def _pristine(tmp_path: Path, killed: bool) -> Path:
    """A store with two segments; ``killed``: its writer died without closing (a WAL holds the
    rows), else it closed cleanly (no WAL)."""
    store_dir = tmp_path / ("killed" if killed else "closed")

    def work(say: Callable[[str], None]) -> None:
        store = open_store(store_dir)
        for number in range(3):
            store.add(_round_docs(number))
            if number != 1:
                store.flush()
        if not killed:
            store.close()
        say("done")

    pid, read = _child(work)
    assert _lines(read) == ["done"]
    os.waitpid(pid, 0)
    return store_dir


def _damages(store_dir: Path, rng: random.Random) -> list[tuple[str, str, Callable[[Path], None]]]:
    """(file, description, apply) for each damage: truncations and bit flips in every file."""
    cases = []
    for path in sorted(p for p in store_dir.rglob("*") if p.is_file() and p.stat().st_size):
        name = str(path.relative_to(store_dir))
        size = path.stat().st_size
        for keep in (0, size // 2, size - 1):
            cases.append((name, f"truncated to {keep}", _truncate(name, keep)))
        for _ in range(12):
            position, bit = rng.randrange(size), rng.randrange(8)
            cases.append((name, f"bit {bit} of byte {position}", _flip(name, position, bit)))
    return cases


def _truncate(name: str, keep: int) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        os.truncate(root / name, keep)
    return apply


def _flip(name: str, position: int, bit: int) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        with (root / name).open("r+b") as data:
            data.seek(position)
            byte = data.read(1)[0]
            data.seek(position)
            data.write(bytes([byte ^ (1 << bit)]))
    return apply


def _outcome(root: Path, name: str, reference: list[object]) -> str:
    try:
        with open_store(root, read_only=True) as store:
            answers = _answers(store)
    except NeardupError as error:
        named = Path(name).name.replace("-wal", "").replace("-shm", "")
        parent = Path(name).parent.name
        return "error" if named in str(error) or (parent and parent in str(error)) \
            else f"error not naming {name}: {error}"
    return "correct" if answers == reference else "WRONG"


@pytest.mark.slow
@pytest.mark.parametrize("killed", [False, True])
def test_damaged_files_give_an_error_naming_them_or_the_right_answer(
        tmp_path: Path, killed: bool) -> None:
    pristine = _pristine(tmp_path, killed)
    assert (pristine / "meta.sqlite-wal").exists() == killed
    copy = tmp_path / "copy"
    shutil.copytree(pristine, copy)
    with open_store(copy, read_only=True) as store:
        reference = _answers(store)
    outcomes: Counter[str] = Counter()
    bad = []
    for name, what, apply in _damages(pristine, random.Random(5)):
        shutil.rmtree(copy)
        shutil.copytree(pristine, copy)
        apply(copy)
        outcome = _outcome(copy, name, reference)
        outcomes[outcome.split(" ")[0]] += 1
        if outcome not in ("error", "correct"):
            bad.append(f"{name} {what}: {outcome}")
    print(dict(outcomes))
    assert bad == [], bad
    assert outcomes["error"] >= 20


@pytest.mark.slow
def test_index_killed_then_rerun_stores_each_document_once(tmp_path: Path) -> None:
    total = BATCH * 5 // 2                      # two whole transactions, then part of a third
    corpus = tmp_path / "docs.jsonl"
    rng = random.Random(3)
    words = [f"v{i}" for i in range(5000)]
    with corpus.open("w") as out:
        for i in range(total):
            text = " ".join(rng.choices(words, k=60))
            out.write(f'{{"id": "j{i}", "url": "http://j.example/{i}", "text": "{text}"}}\n')
    store_dir = tmp_path / "s"
    command = [sys.executable, "-c", "from neardup.cli.main import cli; cli()", "index",
               str(corpus), "--store", str(store_dir), "--workers", "1", "--json"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    first = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and _rows(store_dir) < BATCH:
        time.sleep(0.05)
    first.kill()
    first.communicate()
    killed_at = _rows(store_dir)
    assert BATCH <= killed_at < total, killed_at          # killed between transactions or in one
    again = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["already_stored"] == killed_at
    assert report["added"] == total - killed_at
    assert report["documents_in_store"] == total
    with open_store(store_dir, read_only=True) as store:
        ids = [row[0] for row in store.db.execute("SELECT id FROM documents")]
    assert len(ids) == len(set(ids)) == total


def _rows(store_dir: Path) -> int:
    """Committed document rows, read without opening the store (its writer may be running)."""
    path = store_dir / "meta.sqlite"
    if not path.exists():
        return 0
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)) as db:
            count: int = db.execute("SELECT count(*) FROM documents").fetchone()[0]
        return count
    except sqlite3.Error:
        return 0
