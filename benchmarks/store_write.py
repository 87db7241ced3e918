"""The store's write path: documents per CPU second and bytes written per stored document.

``neardup index`` of N generated JSONL documents (store_path's corpus: 300-word texts on 500
hosts, one in ten a near-copy; sketches and template counts on; one worker) runs as its own
process, from this tree and, interleaved, from ``--baseline-src`` (e.g. an export of main). For
each run: CPU seconds (user + system, wait4), and the process's own I/O counters read from
``/proc/self/io`` as it exits: ``write_bytes`` (bytes it dirtied in the page cache, what the
device will write) and ``wchar`` (bytes passed to write calls). Divided by the documents stored,
and beside the store's size on disk: a write path whose bytes per document stay flat from 20k
to 100k documents does not rewrite the store at each batch.

    python benchmarks/store_write.py [--documents 20000 100000] [--rounds 1]
        [--baseline-src /tmp/main-src] [--lock /work/notes/heavy.lock]

``--lock FILE`` holds an exclusive lock on FILE for each ``neardup index`` run alone (the
machine's shared lock for heavy benchmarks: one configuration per hold, released between
runs), the corpus being written outside it.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from common import REPO_DIR, RESULTS_DIR, environment, load_average, markdown_table, write_results
from store_path import write_corpus

RUNNER = ("import atexit, sys\n"
          "_path = sys.argv.pop(1)\n"
          "def _io():\n"
          "    with open(_path, 'w') as out:\n"
          "        out.write(open('/proc/self/io').read())\n"
          "atexit.register(_io)\n"
          "from neardup.cli.main import cli\n"
          "cli()\n")


def _counters(path: Path) -> dict[str, int]:
    pairs = (line.split(":") for line in path.read_text().splitlines() if ":" in line)
    return {key.strip(): int(value) for key, value in pairs}


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


@contextlib.contextmanager
def held(lock: Path | None) -> Iterator[None]:
    """An exclusive lock on ``lock`` for the block (nothing when None)."""
    if lock is None:
        yield
        return
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def index_run(src: Path, corpus: Path, work: Path) -> dict[str, Any]:
    """One ``neardup index`` from ``src`` into a fresh store: CPU, wall, bytes written."""
    store, io_file = work / "store", work / "io.txt"
    shutil.rmtree(store, ignore_errors=True)
    command = [sys.executable, "-c", RUNNER, str(io_file), "index", str(corpus), "--store",
               str(store), "--workers", "1", "--media", "any", "--json"]
    load = load_average()
    start = time.perf_counter()
    with (work / "out.json").open("w+b") as out, (work / "err.txt").open("w+b") as err:
        child = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(src)},
                                 stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if status != 0:
            raise SystemExit(f"index from {src} failed: {err.read().decode()}")
        added = json.loads(out.read())["added"]
    return _row(added, usage, wall, _counters(io_file), _size(store), load)


def _row(added: int, usage: Any, wall: float, io: dict[str, int], size: int,
         load: list[float] | None) -> dict[str, Any]:
    cpu = usage.ru_utime + usage.ru_stime
    return {"documents": added, "cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 1),
            "documents_per_cpu_second": round(added / cpu, 1),
            "write_bytes": io["write_bytes"], "wchar": io["wchar"], "store_bytes": size,
            "write_bytes_per_document": round(io["write_bytes"] / added),
            "wchar_per_document": round(io["wchar"] / added),
            "store_bytes_per_document": round(size / added), "load_average_before": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--baseline-src", type=Path, default=None)
    parser.add_argument("--lock", type=Path, default=None,
                        help="hold an exclusive lock on this file for each index run")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="store-write-") as tmp:
        results = run(args, Path(tmp))
    write_results(RESULTS_DIR / "store_write.json", results, table(results))


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    trees = {"this tree": REPO_DIR / "src"}
    if args.baseline_src is not None:
        trees["baseline"] = args.baseline_src.resolve()
    runs: dict[str, dict[int, list[dict[str, Any]]]] = {name: {} for name in trees}
    for count in args.documents:
        corpus = work / f"corpus-{count}.jsonl"
        write_corpus(corpus, count, seed=7)
        for _ in range(args.rounds):                  # interleaved: tree, baseline, tree, ...
            for name, src in trees.items():
                with held(args.lock):
                    row = index_run(src, corpus, work)
                runs[name].setdefault(count, []).append(row)
        corpus.unlink()
    medians = {name: {str(n): _medians(rows) for n, rows in by_count.items()}
               for name, by_count in runs.items()}
    return {"environment": environment(["numpy"]), "rounds": args.rounds,
            "trees": {name: str(src) for name, src in trees.items()},
            "marginal_documents_per_cpu_second": {name: _marginal(by_count)
                                                  for name, by_count in medians.items()},
            "growth_write_bytes_per_document": {name: _growth(by_count)
                                                for name, by_count in medians.items()},
            "runs": {name: {str(n): rows for n, rows in by_count.items()}
                     for name, by_count in runs.items()},
            "medians": medians}


def _marginal(by_count: dict[str, dict[str, float]]) -> float | None:
    """Documents per CPU second between the smallest and the largest run (the start-up,
    imports and JIT loading, cancels out)."""
    if len(by_count) < 2:
        return None
    small, large = min(by_count, key=int), max(by_count, key=int)
    extra = by_count[large]["cpu_seconds"] - by_count[small]["cpu_seconds"]
    return round((int(large) - int(small)) / extra, 1) if extra > 0 else None


def _growth(by_count: dict[str, dict[str, float]]) -> float | None:
    """Bytes written per document at the largest run over those at the smallest."""
    if len(by_count) < 2:
        return None
    small, large = min(by_count, key=int), max(by_count, key=int)
    return round(by_count[large]["write_bytes_per_document"]
                 / by_count[small]["write_bytes_per_document"], 2)


def _medians(rows: list[dict[str, Any]]) -> dict[str, float]:
    keys = ("documents_per_cpu_second", "cpu_seconds", "write_bytes_per_document",
            "wchar_per_document", "store_bytes_per_document")
    return {key: statistics.median(row[key] for row in rows) for key in keys}


def table(results: dict[str, Any]) -> str:
    rows = []
    for name, by_count in results["medians"].items():
        for count, m in by_count.items():
            loads = [r["load_average_before"][0] for r in results["runs"][name][count]
                     if r["load_average_before"]]
            rows.append([name, f"{int(count):,}", f"{m['documents_per_cpu_second']:,.0f}",
                         f"{m['cpu_seconds']:.1f}", f"{m['write_bytes_per_document'] / 1e3:.1f}",
                         f"{m['wchar_per_document'] / 1e3:.1f}",
                         f"{m['store_bytes_per_document'] / 1e3:.1f}",
                         ", ".join(f"{x:.1f}" for x in loads)])
    lines = [markdown_table(["tree", "documents", "docs / CPU s", "CPU s", "written KB / doc",
                             "write calls KB / doc", "store KB / doc", "load (1 min)"], rows)]
    for name, marginal in results["marginal_documents_per_cpu_second"].items():
        lines.append(f"{name}: marginal docs / CPU s {marginal}, written per document "
                     f"largest / smallest {results['growth_write_bytes_per_document'][name]}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
