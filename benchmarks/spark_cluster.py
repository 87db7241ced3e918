"""Spark standalone cluster (or ``local[2]``): ``dedup --engine spark`` beside the local engine.

A master and two workers (``--cores 1 --memory 1g`` each: the 2 cores of this machine) are
started with PySpark's ``spark-class`` (``tests/standalone.py``, the test suite's helper), the
driver runs as the CLI does (its own process, ``spark.driver.memory 1g``, set in a
``spark-defaults.conf`` through ``SPARK_CONF_DIR``). ``--master local[2]`` runs Spark in the
driver's JVM instead (no cluster; results in benchmarks/results/spark.json). The corpus is the
engine benchmark's (``scale_corpus.py``, made once under ``--work``, by default
benchmarks/work/; give a folder outside the repository for 1M documents). For each method, the
local engine
(``--workers 2``) and the cluster run as whole processes, interleaved, ``--repeat`` times;
recorded per run: wall seconds, CPU seconds of the process tree (for the cluster: the driver's
tree plus the two workers' trees, i.e. the executors and their Python workers, sampled from /proc
every 50 ms), peak RSS of those trees, the summary's stage seconds, what Spark retried, the
component rounds, the work directory's bytes at the end, and the load average before and
after. The tables must be identical. The cluster's own start (about 30 s) is not counted. Each
Spark run writes Spark's event log, from which ``spark_eventlog.py`` splits its wall (start-up
before the context, executors, the jobs, the stages on the driver, the stop: ``overhead`` in
each run's record). ``--compact-work`` gives both runs ``dedup --compact-work`` (work
directories of token sequences: what lets 10M documents fit this disk). Results go to
benchmarks/results/spark_cluster.json (standalone) or spark.json (``local[2]``), keyed by size,
master, ``compact`` and ``--label``. ``--engines local`` (or ``spark``) runs one side and keeps its
tables, compared with the other side's when an earlier invocation left them: the halves of a
pair that does not fit one sitting (10M documents take about 40 minutes a side here).

    python benchmarks/spark_cluster.py --documents 100000 --methods minhash
    python benchmarks/spark_cluster.py --documents 1000000 --work /work/scratch/bench \
        --master 'local[2]'
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import BENCHMARKS_DIR, RESULTS_DIR, TreeSampler, environment, load_average
from scale_corpus import make_corpus
from spark import NEARDUP, WORK, same_tables
from spark_eventlog import split

sys.path.insert(0, str(BENCHMARKS_DIR.parent / "tests"))
from standalone import Standalone, daemon_environment, standalone_cluster

RESULTS = RESULTS_DIR / "spark_cluster.json"
ENGINES = ("local", "spark")
LOCAL_RESULTS = RESULTS_DIR / "spark.json"


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


def _spark_conf(events: Path) -> dict[str, str]:
    """``SPARK_CONF_DIR`` of a Spark run: the driver's memory, and an uncompressed event log
    in ``events``."""
    conf = Path(tempfile.mkdtemp(prefix="spark-conf-"))
    (conf / "spark-defaults.conf").write_text(
        "spark.driver.memory 1g\n"
        f"spark.eventLog.enabled true\nspark.eventLog.dir {events.as_uri()}\n"
        "spark.eventLog.compress false\nspark.eventLog.rolling.enabled false\n")
    return {"SPARK_CONF_DIR": str(conf)}


def run(engine: str, corpus: Path, method: str, memory: str, master: str,
        cluster: Standalone | None, compact: bool = False) -> dict[str, Any]:
    out = WORK / f"spark-bench-{engine}-{method}"  # as benchmarks/spark.py names them
    shutil.rmtree(out, ignore_errors=True)
    before = load_average()
    command = [NEARDUP, "dedup", str(corpus), "--out", str(out), "--method", method,
               "--memory-limit", memory, "--quiet", "--work", str(out / "work")]
    command += ["--compact-work"] if compact else []
    env = dict(os.environ)
    events = out.with_name(out.name + "-events")
    if engine == "spark":
        shutil.rmtree(events, ignore_errors=True)
        events.mkdir(parents=True)
        command += ["--engine", "spark", "--spark-master", cluster.master if cluster else master]
        env = {**(daemon_environment(cluster.folder) if cluster else env), **_spark_conf(events)}
    else:
        command += ["--workers", "2"]
    launched = time.time()
    timing = measure(command, env, cluster if engine == "spark" else None)
    overhead = (split(events, launched, launched + timing["wall_s"], out / "summary.json")
                if engine == "spark" else None)
    shutil.rmtree(events, ignore_errors=True)
    summary = json.loads((out / "summary.json").read_text())
    work_bytes = sum(path.stat().st_size for path in (out / "work").rglob("*") if path.is_file())
    shutil.rmtree(out / "work", ignore_errors=True)  # the tables stay, for the comparison
    spark = summary["engine"].get("spark", {})
    return {**timing, "stage_seconds": summary["seconds"], "documents": summary["documents"],
            "clusters": summary["clusters"], "duplicates": summary["duplicates"],
            "retries": spark.get("retries"), "components": spark.get("components"),
            "overhead": overhead, "work_bytes": work_bytes, "load_average_before": before,
            "load_average": load_average()}


def compare(corpus: Path, method: str, repeat: int, memory: str, master: str,
            cluster: Standalone | None, compact: bool = False,
            partial: Callable[[dict[str, Any]], None] = lambda runs: None,
            engines: tuple[str, ...] = ENGINES) -> dict[str, Any]:
    """The ``engines`` ``repeat`` times, interleaved; ``partial`` is given the runs so far after
    each run (a run of 10M documents takes most of an hour). With one engine, its tables are
    kept and compared with the other's when an earlier invocation left them (the halves of a
    pair too long for one sitting)."""
    runs: dict[str, list[dict[str, Any]]] = {engine: [] for engine in engines}
    identical = []
    for _ in range(repeat):
        for engine in engines:
            runs[engine].append(run(engine, corpus, method, memory, master, cluster, compact))
            partial({method: {"runs": runs, "complete": False}})
        if all((WORK / f"spark-bench-{engine}-{method}" / "pairs.parquet").exists()
               for engine in ENGINES):
            identical.append(same_tables(method))
    medians = {engine: {key: statistics.median(r[key] for r in found)
                        for key in ("wall_s", "cpu_s", "peak_tree_rss_mb")}
               for engine, found in runs.items()}
    ratio = (round(medians["spark"]["wall_s"] / medians["local"]["wall_s"], 2)
             if len(medians) == 2 else None)
    if len(engines) == 2:
        for engine in runs:
            shutil.rmtree(WORK / f"spark-bench-{engine}-{method}", ignore_errors=True)
    return {"runs": runs, "median": medians, "wall_ratio": ratio,
            "identical_tables": all(identical) if identical else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--methods", default="minhash")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--memory-limit", default="2G")
    parser.add_argument("--label", default="", help="results key suffix (e.g. quiet, loaded)")
    parser.add_argument("--master", default="standalone",
                        help="standalone (a cluster started here) or a Spark master URL such "
                             "as local[2]")
    parser.add_argument("--work", type=Path, default=WORK,
                        help="folder of the corpora and the runs' outputs")
    parser.add_argument("--engines", default=",".join(ENGINES),
                        help="local,spark (a pair), or one of them: its tables are kept and "
                             "compared with the other's if an earlier run left them")
    parser.add_argument("--compact-work", action="store_true",
                        help="both runs (local and Spark) with dedup --compact-work (work "
                             "directories of token sequences; results keyed ...-compact)")
    args = parser.parse_args()
    _work(args.work)
    corpus = WORK / f"scale-{args.documents}"
    make_corpus(corpus, args.documents)
    found = _compare_all(corpus, args, lambda runs: _save(args, runs))
    _save(args, found)
    for method, entry in found.items():
        print(method, json.dumps(entry["median"]), "wall ratio:", entry["wall_ratio"],
              "identical:", entry["identical_tables"], flush=True)


def _save(args: argparse.Namespace, found: dict[str, Any]) -> None:
    """Record ``found`` (runs so far, or the comparison) under this invocation's key."""
    path = RESULTS if args.master == "standalone" else LOCAL_RESULTS
    results = json.loads(path.read_text()) if path.exists() else {}
    cluster = ("standalone, 2 workers x 1 core x 1 GiB" if args.master == "standalone"
               else args.master)
    key = f"{args.documents}-{args.master}" + ("-compact" if args.compact_work else "")
    results[key + (f"-{args.label}" if args.label else "")] = {
        "documents": args.documents, "cluster": cluster, "compact_work": args.compact_work,
        "methods": found, "cores": os.cpu_count(),
        "environment": environment(["neardup", "pyspark"]),
        "load_average_after": load_average()}
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(results, indent=2) + "\n")
    os.replace(temporary, path)


def _work(folder: Path) -> None:
    """Corpora and outputs in ``folder`` (here and in :mod:`spark`, whose helpers read it)."""
    global WORK
    import spark

    folder.mkdir(parents=True, exist_ok=True)
    WORK = spark.WORK = folder.resolve()


def _compare_all(corpus: Path, args: argparse.Namespace,
                 partial: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    methods, engines = args.methods.split(","), tuple(args.engines.split(","))
    if args.master != "standalone" or "spark" not in engines:  # no cluster to start
        return {method: compare(corpus, method, args.repeat, args.memory_limit, args.master,
                                None, args.compact_work, partial, engines)
                for method in methods}
    daemons = Path(tempfile.mkdtemp(prefix="standalone-"))
    with standalone_cluster(daemons) as cluster:
        found = {method: compare(corpus, method, args.repeat, args.memory_limit, args.master,
                                 cluster, args.compact_work, partial, engines)
                 for method in methods}
    shutil.rmtree(daemons, ignore_errors=True)
    return found


if __name__ == "__main__":
    main()
