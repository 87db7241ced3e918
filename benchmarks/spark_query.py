"""``neardup query --batch``: N new documents against a store of M, local engine vs Spark.

1. Whole processes, as a user runs them, interleaved: ``neardup query --store S --batch Q.jsonl
   --engine local`` and ``--engine spark --spark-master local[2]``: wall seconds, and the CPU
   seconds and peak RSS of the process tree (the JVM and Spark's Python workers included),
   sampled from /proc every 50 ms (a process ending between samples loses at most its last
   50 ms of CPU). Both must write the same matches.
2. The pair-finding step alone, in one process, interleaved (the first Spark call starts the
   Python workers; later ones reuse them): ``local_pairs`` (the store's
   ``HammingIndex.query_batch``) vs ``spark_pairs`` on an already running local[2] session (the
   stored fingerprints scanned in slices by Spark tasks), on the same query prints.

The store: M JSONL texts of 300 words, indexed with ``neardup index --no-sketch``. The queries:
N texts, half of them a stored text with 3 words changed, half fresh.

    python benchmarks/spark_query.py [--stored 200000] [--queries 20000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    REPO_DIR,
    RESULTS_DIR,
    TreeSampler,
    environment,
    load_average,
    markdown_table,
    write_results,
)

WORDS = [f"w{i}" for i in range(20_000)]
SRC = REPO_DIR / "src"
QUIET = "ignore:PySpark does not yet fully support pandas:FutureWarning"


def write_corpora(stored: Path, queries: Path, m: int, n: int) -> None:
    rng = random.Random(11)
    kept: list[list[str]] = []
    with stored.open("w") as out:
        for i in range(m):
            words = rng.choices(WORDS, k=300)
            if len(kept) < n:
                kept.append(words)
            out.write(json.dumps({"id": f"s{i}", "url": f"http://s.example/{i}",
                                  "text": " ".join(words)}) + "\n")
    with queries.open("w") as out:
        for i in range(n):
            words = list(kept[i // 2]) if i % 2 == 0 else rng.choices(WORDS, k=300)
            for _ in range(3 if i % 2 == 0 else 0):
                words[rng.randrange(300)] = rng.choice(WORDS)
            out.write(json.dumps({"id": f"q{i}", "url": f"http://q.example/{i}",
                                  "text": " ".join(words)}) + "\n")


def whole_process(store: Path, queries: Path, out: Path, engine: str) -> dict[str, Any]:
    command = [sys.executable, "-W", QUIET, "-c", "from neardup.cli.main import main; main()",
               "query", "--store", str(store), "--batch", str(queries), "--media", "any",
               "--workers", "1", "--engine", engine, "--out", str(out), "--json"]
    env = {**os.environ, "PYTHONPATH": str(SRC), "PYSPARK_PYTHON": sys.executable}
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tree = TreeSampler()
    while child.poll() is None:
        tree.poll(child.pid)
        time.sleep(0.05)
    wall = time.perf_counter() - start
    output, errors = child.communicate()
    if child.returncode != 0:
        raise SystemExit(f"{engine}: {errors.decode()[-2000:]}")
    counts = json.loads(output)
    return {"wall_seconds": round(wall, 2), "cpu_seconds": round(tree.cpu_seconds, 2),
            "peak_rss_mb": round(tree.peak_bytes / 2**20, 1), "matches": counts["matches"],
            "queries": counts["queries"], "rows_sha": _digest(out)}


def _digest(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def pair_step(store_dir: Path, queries: Path, rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(SRC))
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ["PYTHONPATH"] = str(SRC)          # for Spark's Python workers
    from neardup.engine.query import query_prints
    from neardup.engine.spark.query import spark_pairs
    from neardup.engine.spark.session import spark_session
    from neardup.sources import open_sources
    from neardup.store import open_store
    from neardup.store.batch import local_pairs

    times: dict[str, list[float]] = {"local": [], "spark": []}
    with open_store(store_dir, read_only=True) as store, \
            spark_session("local[2]", None, {"spark.ui.showConsoleProgress": "false"}) as spark:
        spark.sparkContext.setLogLevel("ERROR")
        prints = query_prints(store.config, open_sources([str(queries)], media="any"))
        for _ in range(rounds):
            start = time.perf_counter()
            local = local_pairs(store, prints, 3)
            times["local"].append(time.perf_counter() - start)
            start = time.perf_counter()
            remote = spark_pairs(store, prints, 3, session=spark)
            times["spark"].append(time.perf_counter() - start)
            assert (local.query.tolist(), local.id.tolist()) == \
                (remote.query.tolist(), remote.id.tolist()), "spark pairs differ"
        return {"pairs": len(local), "local_seconds": [round(t, 3) for t in times["local"]],
                "spark_seconds": [round(t, 3) for t in times["spark"]]}


def build_store(work: Path, m: int, n: int) -> tuple[Path, Path, dict[str, Any]]:
    stored, queries, store = work / "stored.jsonl", work / "queries.jsonl", work / "s.store"
    write_corpora(stored, queries, m, n)
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "from neardup.cli.main import main; main()",
                    "index", str(stored), "--store", str(store), "--media", "any",
                    "--no-sketch", "--json"], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(SRC)})
    return store, queries, {"index_wall_seconds": round(time.perf_counter() - start, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stored", type=int, default=200_000)
    parser.add_argument("--queries", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    where = environment(["numpy", "pyspark"])
    with tempfile.TemporaryDirectory(prefix="spark_query_") as tmp:
        work = Path(tmp)
        store, queries, built = build_store(work, args.stored, args.queries)
        runs: dict[str, list[dict[str, Any]]] = {"local": [], "spark": []}
        for _ in range(args.rounds):
            for engine in runs:
                runs[engine].append(whole_process(store, queries, work / f"{engine}.jsonl",
                                                  engine))
        step = pair_step(store, queries, max(args.rounds, 2) + 1)
    shas = {run["rows_sha"] for engine in runs.values() for run in engine}
    assert len(shas) == 1, f"the engines wrote different matches: {runs}"
    med = {engine: {key: round(statistics.median(r[key] for r in rs), 2)
                    for key in ("wall_seconds", "cpu_seconds", "peak_rss_mb")}
           for engine, rs in runs.items()}
    table = markdown_table(
        ["measure", "local", "spark local[2]"],
        [[f"whole `query --batch`: {args.queries:,} queries vs {args.stored:,} stored, "
          "median wall s", med["local"]["wall_seconds"], med["spark"]["wall_seconds"]],
         ["  CPU s (process tree)", med["local"]["cpu_seconds"], med["spark"]["cpu_seconds"]],
         ["  peak RSS MB (process tree)", med["local"]["peak_rss_mb"],
          med["spark"]["peak_rss_mb"]],
         [f"pair finding alone ({step['pairs']:,} pairs), first call, s",
          step["local_seconds"][0], step["spark_seconds"][0]],
         ["  later calls (session warm), median s",
          round(statistics.median(step["local_seconds"][1:]), 3),
          round(statistics.median(step["spark_seconds"][1:]), 3)]])
    payload = {"environment": where,
               "command": "benchmarks/spark_query.py " + " ".join(sys.argv[1:]),
               "stored": args.stored, "queries": args.queries, "store": built,
               "whole_process": runs, "median": med, "pair_step": step,
               "load_average_after": load_average(), "same_matches": True}
    write_results(RESULTS_DIR / "spark_query.json", payload, table)


if __name__ == "__main__":
    main()
