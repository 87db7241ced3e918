"""Workers die with their parent: a ``neardup dedup`` killed with SIGKILL mid-run (as the OOM
killer does) leaves none of its worker processes behind."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"


def _corpus(path: Path, count: int) -> None:
    rng = random.Random(11)
    words = [f"w{i}" for i in range(20_000)]
    with path.open("w") as out:
        for i in range(count):
            text = " ".join(rng.choices(words, k=120))
            out.write(f'{{"id": "k{i}", "url": "http://k{i % 97}.example/{i}", '
                      f'"text": "{text}"}}\n')


def _session(sid: int) -> dict[int, str]:
    """Every process of session ``sid`` with its state letter (Z: a zombie, dead)."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:              # fields after the name: state, ppid, pgrp, sid
            found[int(entry.name)] = fields[0]
    return found


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs Linux /proc")
def test_dedup_killed_mid_run_leaves_no_worker_alive(tmp_path: Path) -> None:
    corpus = tmp_path / "docs.jsonl"
    _corpus(corpus, 40_000)
    command = [sys.executable, "-c", "from neardup.cli.main import cli; cli()", "dedup",
               str(corpus), "--out", str(tmp_path / "out"), "--work", str(tmp_path / "work"),
               "--workers", "2", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    run = subprocess.Popen(command, env=env, start_new_session=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    workers: set[int] = set()
    while time.monotonic() < deadline and run.poll() is None and len(workers) < 2:
        workers = {pid for pid in _session(run.pid) if pid != run.pid}
        time.sleep(0.05)
    assert run.poll() is None, f"the run ended before its workers were seen: {run.stderr}"
    assert len(workers) >= 2, "no workers started within 120 s"
    time.sleep(0.5)                          # the workers are busy
    os.kill(run.pid, signal.SIGKILL)
    run.wait()
    assert run.stderr is not None
    run.stderr.close()
    time.sleep(5)
    alive = {pid: state for pid, state in _session(run.pid).items() if state != "Z"}
    for pid in alive:                        # leave nothing behind, then fail
        os.kill(pid, signal.SIGKILL)
    assert alive == {}, f"processes of the killed run still alive 5 s later: {alive}"
