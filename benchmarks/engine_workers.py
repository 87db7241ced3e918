"""``neardup dedup --workers 2`` against ``--workers 1``: the engine's use of both cores.

Whole ``neardup dedup`` processes (PYTHONDONTWRITEBYTECODE unset, so imports are cached as users
have them) on the generated corpus of :mod:`scale_corpus` (``--documents`` documents, default
100,000), laid out as one single-stream JSONL.gz file and as its 8 part files, with simhash and
minhash. For each (layout, method) the ``--workers 1`` and ``--workers 2`` runs alternate
``--repeat`` times (default 3); the result is the ratio of their median wall times (and CPU,
with children), with the median per-stage wall and CPU seconds of each side from
``summary.json`` (CPU of the process and its workers: what a loaded machine does not change)
and the load average before and after every run (the machine is shared: the load is part of
the result). The outputs of the two
sides are compared byte for byte (documents, pairs, clusters). Corpora and outputs go to
``benchmarks/work/``; results to ``benchmarks/results/engine_workers.json``::

    python benchmarks/engine_workers.py --documents 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import filecmp
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from common import (
    BENCHMARKS_DIR,
    RESULTS_DIR,
    environment,
    load_average,
    markdown_table,
    write_results,
)
from scale_corpus import corpus_parts, make_corpus

WORK = BENCHMARKS_DIR / "work"
RESULTS = RESULTS_DIR / "engine_workers.json"
NEARDUP = str(Path(sys.executable).with_name("neardup"))
OUTPUTS = ("documents.parquet", "pairs.parquet", "clusters.parquet")


def layouts(documents: int) -> dict[str, list[Path]]:
    """The generated corpus as its 8 part files, and as one single-member JSONL.gz (made
    once: one gzip stream, as most crawl exports are, so nothing can seek into it)."""
    folder = WORK / f"workers-corpus-{documents}"
    make_corpus(folder, documents)
    parts = corpus_parts(folder)
    whole = WORK / f"workers-corpus-{documents}.jsonl.gz"
    if not whole.exists():
        temporary = whole.with_name(whole.name + ".tmp")
        with gzip.open(temporary, "wb", compresslevel=6) as out:
            for part in parts:
                with gzip.open(part, "rb") as source:
                    shutil.copyfileobj(source, out, 1 << 20)
        temporary.replace(whole)
    return {"one file": [whole], f"{len(parts)} files": parts}


def run(inputs: list[Path], out: Path, method: str, workers: int) -> dict[str, Any]:
    """One whole ``neardup dedup``: wall, CPU (with children), stage seconds, load average."""
    shutil.rmtree(out, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    before = load_average()
    started = time.perf_counter()
    process = subprocess.Popen([NEARDUP, "dedup", *map(str, inputs), "--out", str(out),
                                "--method", method, "--workers", str(workers), "--quiet",
                                "--work", str(out / "work")], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"neardup dedup {method} --workers {workers}: failed")
    summary = json.loads((out / "summary.json").read_text())
    return {"wall_s": round(wall, 3), "cpu_s": round(usage.ru_utime + usage.ru_stime, 3),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "stage_seconds": summary["seconds"],
            "stage_cpu_seconds": summary["cpu_seconds"],
            "load_before": before, "load_after": load_average()}


def _median_stages(runs: list[dict[str, Any]], key: str) -> dict[str, float]:
    names = runs[0][key].keys()
    return {name: round(statistics.median(r[key][name] for r in runs), 3) for name in names}


def compare(inputs: list[Path], method: str, repeat: int) -> dict[str, Any]:
    """Interleaved ``--workers 1`` / ``--workers 2`` runs; medians, ratio, identical outputs."""
    runs: dict[int, list[dict[str, Any]]] = {1: [], 2: []}
    for _ in range(repeat):
        for workers in (1, 2):
            runs[workers].append(run(inputs, WORK / f"workers-out-{workers}", method, workers))
    identical = all(filecmp.cmp(WORK / "workers-out-1" / name, WORK / "workers-out-2" / name,
                                shallow=False) for name in OUTPUTS)
    median = {workers: {key: round(statistics.median(r[key] for r in found), 3)
                        for key in ("wall_s", "cpu_s", "peak_rss_mb")}
              for workers, found in runs.items()}
    return {"runs": runs, "median": median,
            "median_stage_seconds": {w: _median_stages(found, "stage_seconds")
                                     for w, found in runs.items()},
            "median_stage_cpu_seconds": {w: _median_stages(found, "stage_cpu_seconds")
                                         for w, found in runs.items()},
            "wall_speedup": round(median[1]["wall_s"] / median[2]["wall_s"], 3),
            "identical_outputs": identical}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=["simhash", "minhash"])
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {"environment": environment(["neardup", "numpy", "pyarrow"]),
                               "documents": args.documents, "repeat": args.repeat, "cases": {}}
    rows = []
    for layout, inputs in layouts(args.documents).items():
        for method in args.methods:
            found = compare(inputs, method, args.repeat)
            results["cases"][f"{layout} / {method}"] = found
            loads = [r["load_before"][0] for rs in found["runs"].values() for r in rs
                     if r["load_before"]]
            rows.append([layout, method, found["median"][1]["wall_s"],
                         found["median"][2]["wall_s"], f"{found['wall_speedup']:.2f}x",
                         found["median"][1]["cpu_s"], found["median"][2]["cpu_s"],
                         f"{min(loads):.1f}-{max(loads):.1f}" if loads else "?",
                         found["identical_outputs"]])
    results["load_average_end"] = load_average()
    table = markdown_table(["layout", "method", "wall s, 1 worker", "wall s, 2 workers",
                            "speed-up", "CPU s, 1", "CPU s, 2", "load (1 min)",
                            "identical outputs"], rows)
    write_results(RESULTS, results, table)


if __name__ == "__main__":
    main()
