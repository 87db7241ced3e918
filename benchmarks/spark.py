"""Spark: ``neardup dedup --engine spark --spark-master local[2]`` beside the local engine.

The corpus is the engine benchmark's (scale_corpus.py: 2 to 5 KB documents with planted exact
and near copies, generated once under benchmarks/work/ as benchmarks/scale.py does). For each
method, the local engine (``--workers 2``) and the Spark engine (``local[2]``) run as whole
processes over it, interleaved, ``--repeat`` times each; recorded per run: wall seconds, CPU
seconds of the whole process tree (the JVM and Spark's Python workers included: every process
of the tree is sampled every 50 ms from /proc and its last user+system time kept), and the peak
RSS summed over the tree; the summary's per-stage seconds, the load average before and after,
and for Spark the component stage's report (pairs, rounds, open edges per round, seconds:
``cluster/spark-components.json`` of the work directory). The two runs' tables must be
identical (checked after each pair). Results go to benchmarks/results/spark.json, keyed by
size (and by ``--label`` when given, e.g. to keep runs of two versions apart).

``--parquet-shards N`` writes the corpus as N Parquet files instead (a dataset of many shards);
the local engine reads their folder, and Spark reads it as a ``file://`` URI, through its own
Parquet reader (the path whose cost grows with the number of files).

    python benchmarks/spark.py --documents 1000000
    python benchmarks/spark.py --documents 100000 --parquet-shards 200 --methods minhash
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj
import pyarrow.parquet as pq

from common import BENCHMARKS_DIR, RESULTS_DIR, TreeSampler, environment, load_average
from scale_corpus import make_corpus

WORK = BENCHMARKS_DIR / "work"
RESULTS = RESULTS_DIR / "spark.json"
NEARDUP = str(Path(sys.executable).with_name("neardup"))


def measure(command: Sequence[str]) -> dict[str, Any]:
    """Run ``command``; wall seconds, CPU seconds and peak RSS of its whole process tree."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree = TreeSampler()
    while process.poll() is None:
        tree.poll(process.pid)
        time.sleep(0.05)
    wall = time.perf_counter() - started
    errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode:
        raise SystemExit(f"{' '.join(command)}: exit status {process.returncode}\n{errors}")
    return {"wall_s": round(wall, 2), "cpu_s": round(tree.cpu_seconds, 2),
            "peak_tree_rss_mb": round(tree.peak_bytes / 2**20, 1), "processes": len(tree.cpu)}


def parquet_shards(corpus: Path, count: int) -> Path:
    """The JSONL.gz parts of ``corpus`` rewritten as ``count`` Parquet files (made once)."""
    folder = WORK / f"{corpus.name}-parquet-{count}"
    if (folder / "complete").exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    tables = []
    for part in sorted(corpus.glob("*.jsonl.gz")):
        with gzip.open(part) as lines:
            tables.append(pj.read_json(lines))
    table = pa.concat_tables(tables)
    size = -(-table.num_rows // count)
    for shard in range(count):
        pq.write_table(table.slice(shard * size, size), folder / f"shard-{shard:05d}.parquet")
    (folder / "complete").touch()
    return folder


def run(engine: str, corpus: Path, method: str, memory: str, uri: bool) -> dict[str, Any]:
    """One whole ``dedup`` process (Spark reads ``corpus`` as a ``file://`` URI if ``uri``)."""
    out = WORK / f"spark-bench-{engine}-{method}"
    shutil.rmtree(out, ignore_errors=True)
    before = load_average()
    source = corpus.as_uri() if engine == "spark" and uri else corpus
    command = [NEARDUP, "dedup", str(source), "--out", str(out), "--method", method,
               "--memory-limit", memory, "--quiet", "--work", str(out / "work")]
    command += (["--engine", "spark", "--spark-master", "local[2]"] if engine == "spark"
                else ["--workers", "2"])
    timing = measure(command)
    summary = json.loads((out / "summary.json").read_text())
    report = out / "work" / "cluster" / "spark-components.json"
    components = json.loads(report.read_text()) if report.exists() else None
    shutil.rmtree(out / "work", ignore_errors=True)  # the tables stay, for the comparison
    return {**timing, "stage_seconds": summary["seconds"], "components": components,
            "documents": summary["documents"], "clusters": summary["clusters"],
            "duplicates": summary["duplicates"], "load_average_before": before,
            "load_average": load_average()}


def _as_path(table: pa.Table) -> pa.Table:
    """Spark's table of a URI input, its sources written as the local run's paths."""
    if "source" not in table.column_names:
        return table
    paths = pc.replace_substring_regex(table["source"], "^file:", "")
    return table.set_column(table.column_names.index("source"), "source", paths)


def same_tables(method: str) -> bool:
    folders = [WORK / f"spark-bench-{engine}-{method}" for engine in ("local", "spark")]
    return all(pq.read_table(folders[0] / f"{name}.parquet").equals(
        _as_path(pq.read_table(folders[1] / f"{name}.parquet")))
        for name in ("documents", "pairs", "clusters"))


def compare(corpus: Path, method: str, repeat: int, memory: str, uri: bool) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {"local": [], "spark": []}
    identical = []
    for _ in range(repeat):
        for engine in ("local", "spark"):
            runs[engine].append(run(engine, corpus, method, memory, uri))
        identical.append(same_tables(method))
    medians = {engine: {**{key: statistics.median(r[key] for r in found)
                           for key in ("wall_s", "cpu_s", "peak_tree_rss_mb")},
                        "stage_seconds": {stage: round(statistics.median(
                            r["stage_seconds"][stage] for r in found), 3)
                            for stage in found[0]["stage_seconds"]}}
               for engine, found in runs.items()}
    for engine in runs:
        shutil.rmtree(WORK / f"spark-bench-{engine}-{method}", ignore_errors=True)
    return {"runs": runs, "median": medians, "identical_tables": all(identical)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--methods", default="minhash,simhash")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--memory-limit", default="2G")
    parser.add_argument("--label", default="", help="results key suffix (e.g. before/after)")
    parser.add_argument("--parquet-shards", type=int, default=0,
                        help="read the corpus as this many Parquet files")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = WORK / f"scale-{args.documents}"  # as benchmarks/scale.py names it
    make_corpus(corpus, args.documents)
    if args.parquet_shards:
        corpus = parquet_shards(corpus, args.parquet_shards)
    found = {method: compare(corpus, method, args.repeat, args.memory_limit,
                             bool(args.parquet_shards))
             for method in args.methods.split(",")}
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    key = str(args.documents) + (f"-parquet-{args.parquet_shards}" if args.parquet_shards
                                 else "") + (f"-{args.label}" if args.label else "")
    results[key] = {"documents": args.documents, "parquet_shards": args.parquet_shards,
                    "methods": found, "cores": os.cpu_count(),
                    "environment": environment(["neardup", "pyspark"]),
                    "load_average_after": load_average()}
    temporary = RESULTS.with_suffix(".tmp")
    with open(temporary, "w") as out:
        out.write(json.dumps(results, indent=2) + "\n")
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, RESULTS)
    for method, entry in found.items():
        print(method, json.dumps(entry["median"]), "identical:", entry["identical_tables"],
              flush=True)


if __name__ == "__main__":
    main()
