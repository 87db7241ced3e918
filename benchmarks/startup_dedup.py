"""A 1-document ``neardup dedup`` as a whole process: CPU over the process tree and peak memory.

Each run is a fresh ``neardup dedup ONE.jsonl --out OUT`` with the default
options (bytecode written once beforehand, as after an install; ``PYTHONDONTWRITEBYTECODE``
removed from the environment). CPU is user + system seconds of the process and every process
below it (``os.wait4`` counts the children it reaped; /proc sampling counts any it did not);
peak memory is the largest of ``wait4``'s maximum resident set and the largest sum of resident
sets seen over the tree in one sample. Runs are interleaved between trees, ``--repeat`` times;
the medians count. ``--compare SRC`` runs another source tree (e.g. an older commit exported
with ``git archive``) in the same rounds (``--compare-name`` names its row). ``--docs N``
writes N documents instead of one.

    python benchmarks/startup_dedup.py [--repeat 5] [--compare /tmp/base/src]
                                       [--compare-name NAME] [--docs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from common import (
    REPO_DIR,
    RESULTS_DIR,
    TreeSampler,
    environment,
    load_average,
    markdown_table,
    write_results,
)

POLL_SECONDS = 0.005


def write_input(folder: Path, count: int) -> Path:
    """A JSONL of ``count`` short distinct documents."""
    path = folder / "docs.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for number in range(count):
            text = f"Document {number} says the quick brown fox jumps over the lazy dog again."
            out.write(json.dumps({"id": f"d{number}", "text": text}) + "\n")
    return path


def run_once(source: Path, data: Path, out: Path) -> tuple[float, int]:
    """(CPU seconds over the tree, peak resident bytes) of one whole ``dedup`` process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(source)
    args = [sys.executable, "-c", "from neardup.cli.main import main; main()", "dedup", str(data),
            "--out", str(out)]
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
    sampler = TreeSampler()
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        sampler.poll(process.pid)
        time.sleep(POLL_SECONDS)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"dedup exited with {process.returncode} ({source})")
    cpu = max(usage.ru_utime + usage.ru_stime, sampler.cpu_seconds)
    return cpu, max(usage.ru_maxrss * 1024, sampler.peak_bytes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--docs", type=int, default=1)
    parser.add_argument("--compare", type=Path, default=None,
                        help="another source tree (its src folder) run in the same rounds")
    parser.add_argument("--compare-name", default=None,
                        help="the compared tree's row name (default: 'compared: SRC')")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "startup_dedup.json")
    args = parser.parse_args()
    trees = {"this tree": REPO_DIR / "src"}
    if args.compare is not None:
        trees[args.compare_name or f"compared: {args.compare}"] = args.compare
    with tempfile.TemporaryDirectory(prefix="startup-dedup-") as folder:
        data = write_input(Path(folder), args.docs)
        for name, source in trees.items():  # write the bytecode, warm the page cache
            run_once(source, data, Path(folder) / f"warm-{len(name)}")
        started = load_average()
        cpu: dict[str, list[float]] = {name: [] for name in trees}
        peak: dict[str, list[int]] = {name: [] for name in trees}
        for round_ in range(args.repeat):
            for index, (name, source) in enumerate(trees.items()):
                seconds, resident = run_once(source, data, Path(folder) / f"o{round_}-{index}")
                cpu[name].append(seconds)
                peak[name].append(resident)
    ended = load_average()
    medians = {name: (statistics.median(cpu[name]), statistics.median(peak[name]) / 2**20)
               for name in trees}
    rows = [(name, args.docs, f"{medians[name][0]:.2f}", f"{min(cpu[name]):.2f}",
             f"{max(cpu[name]):.2f}", f"{medians[name][1]:.0f}") for name in trees]
    table = markdown_table(("tree", "documents", "median CPU s", "min CPU s", "max CPU s",
                            "median peak MB"), rows)
    table += (f"\n\n{args.repeat} interleaved whole-process runs of `neardup dedup ONE.jsonl "
              f"--out OUT` (default options), CPU over the process tree; load average "
              f"(1, 5, 15 min) {started} at start, {ended} at end")
    write_results(args.out, {
        "benchmark": "startup_dedup", "environment": environment(["neardup", "pyarrow", "numba"]),
        "repeat": args.repeat, "documents": args.docs, "cpu_seconds": cpu,
        "peak_bytes": peak, "median_cpu_seconds": {k: v[0] for k, v in medians.items()},
        "median_peak_mb": {k: v[1] for k, v in medians.items()},
        "load_average": {"start": started, "end": ended}}, table)


if __name__ == "__main__":
    main()
