"""Spark standalone cluster: ``dedup --engine spark --spark-master spark://127.0.0.1:PORT`` beside
the local engine.

A master and two workers (``--cores 1 --memory 1g`` each: the 2 cores of this machine) are
started with PySpark's ``spark-class`` (``tests/standalone.py``, the test suite's helper), the
driver runs as the CLI does (its own process, ``spark.driver.memory 1g``, set in a
``spark-defaults.conf`` through ``SPARK_CONF_DIR``). The corpus is the engine benchmark's
(``scale_corpus.py``, made once under benchmarks/work/). For each method, the local engine
(``--workers 2``) and the cluster run as whole processes, interleaved, ``--repeat`` times;
recorded per run: wall seconds, CPU seconds of the process tree (for the cluster: the driver's
tree plus the two workers' trees, i.e. the executors and their Python workers, sampled from /proc
every 50 ms), peak RSS of those trees, the summary's stage seconds, what Spark retried, the
component rounds, and the load average before and after. The tables must be identical. The
cluster's own start (about 30 s) is not counted. Results go to
benchmarks/results/spark_cluster.json, keyed by size.

    python benchmarks/spark_cluster.py --documents 100000 --methods minhash
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import BENCHMARKS_DIR, RESULTS_DIR, TreeSampler, environment, load_average
from scale_corpus import make_corpus
from spark import NEARDUP, WORK, same_tables

sys.path.insert(0, str(BENCHMARKS_DIR.parent / "tests"))
from standalone import Standalone, daemon_environment, standalone_cluster

RESULTS = RESULTS_DIR / "spark_cluster.json"


def _tick(roots: list[int], cpu: dict[int, float]) -> int:
    """One sample of the trees under ``roots``: each process's CPU into ``cpu``; the summed
    resident bytes."""
    resident = 0
    for root in roots:
        sample = TreeSampler()
        sample.poll(root)
        cpu.update(sample.cpu)
        resident += sample.peak_bytes
    return resident


def measure(command: list[str], env: dict[str, str], cluster: Standalone | None
            ) -> dict[str, Any]:
    """Wall, CPU and peak RSS of ``command``'s tree, with the cluster daemons' trees (their
    executors and Python workers) when ``cluster``; the daemons' CPU before the run is taken
    off."""
    daemons = [process.pid for process in cluster.processes] if cluster else []
    idle: dict[int, float] = {}
    _tick(daemons, idle)
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=env)
    cpu: dict[int, float] = {}
    peak = 0
    while process.poll() is None:
        peak = max(peak, _tick([process.pid, *daemons], cpu))
        time.sleep(0.05)
    _tick(daemons, cpu)
    wall = time.perf_counter() - started
    errors = process.stderr.read().decode(errors="replace") if process.stderr else ""
    if process.returncode:
        raise SystemExit(f"{' '.join(command)}: exit status {process.returncode}\n{errors}")
    used = sum(cpu.values()) - sum(idle.get(pid, 0.0) for pid in cpu)
    return {"wall_s": round(wall, 2), "cpu_s": round(used, 2),
            "peak_tree_rss_mb": round(peak / 2**20, 1), "processes": len(cpu)}


def run(engine: str, corpus: Path, method: str, memory: str,
        cluster: Standalone) -> dict[str, Any]:
    out = WORK / f"spark-bench-{engine}-{method}"  # as benchmarks/spark.py names them
    shutil.rmtree(out, ignore_errors=True)
    before = load_average()
    command = [NEARDUP, "dedup", str(corpus), "--out", str(out), "--method", method,
               "--memory-limit", memory, "--quiet", "--work", str(out / "work")]
    env = dict(os.environ)
    if engine == "spark":
        command += ["--engine", "spark", "--spark-master", cluster.master]
        conf = Path(tempfile.mkdtemp(prefix="spark-conf-"))
        (conf / "spark-defaults.conf").write_text("spark.driver.memory 1g\n")
        env = {**daemon_environment(cluster.folder), "SPARK_CONF_DIR": str(conf)}
    else:
        command += ["--workers", "2"]
    timing = measure(command, env, cluster if engine == "spark" else None)
    summary = json.loads((out / "summary.json").read_text())
    shutil.rmtree(out / "work", ignore_errors=True)  # the tables stay, for the comparison
    spark = summary["engine"].get("spark", {})
    return {**timing, "stage_seconds": summary["seconds"], "documents": summary["documents"],
            "clusters": summary["clusters"], "duplicates": summary["duplicates"],
            "retries": spark.get("retries"), "components": spark.get("components"),
            "load_average_before": before, "load_average": load_average()}


def compare(corpus: Path, method: str, repeat: int, memory: str,
            cluster: Standalone) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {"local": [], "spark": []}
    identical = []
    for _ in range(repeat):
        for engine in ("local", "spark"):
            runs[engine].append(run(engine, corpus, method, memory, cluster))
        identical.append(same_tables(method))
    medians = {engine: {key: statistics.median(r[key] for r in found)
                        for key in ("wall_s", "cpu_s", "peak_tree_rss_mb")}
               for engine, found in runs.items()}
    ratio = round(medians["spark"]["wall_s"] / medians["local"]["wall_s"], 2)
    return {"runs": runs, "median": medians, "wall_ratio": ratio,
            "identical_tables": all(identical)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--methods", default="minhash")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--memory-limit", default="2G")
    parser.add_argument("--label", default="", help="results key suffix (e.g. quiet, loaded)")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = WORK / f"scale-{args.documents}"
    make_corpus(corpus, args.documents)
    daemons = Path(tempfile.mkdtemp(prefix="standalone-"))
    with standalone_cluster(daemons) as cluster:
        found = {method: compare(corpus, method, args.repeat, args.memory_limit, cluster)
                 for method in args.methods.split(",")}
    shutil.rmtree(daemons, ignore_errors=True)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    results[str(args.documents) + (f"-{args.label}" if args.label else "")] = {
        "documents": args.documents, "cluster": "standalone, 2 workers x 1 core x 1 GiB",
        "methods": found, "cores": os.cpu_count(),
        "environment": environment(["neardup", "pyspark"]),
        "load_average_after": load_average()}
    temporary = RESULTS.with_suffix(".tmp")
    temporary.write_text(json.dumps(results, indent=2) + "\n")
    os.replace(temporary, RESULTS)
    for method, entry in found.items():
        print(method, json.dumps(entry["median"]), "wall ratio:", entry["wall_ratio"],
              "identical:", entry["identical_tables"], flush=True)


if __name__ == "__main__":
    main()
