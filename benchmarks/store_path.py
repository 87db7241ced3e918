"""The store's write and read paths, as a crawler and an indexer use them.

1. ``neardup index`` of N JSONL documents (300-word texts, one in ten a near-copy; sketches on,
   one worker) as a whole process: documents per CPU second (user + system of the process).
   Against it, interleaved, the same command from another source tree (``--baseline-src``,
   e.g. a checkout of main, whose store commits every row on its own) on a smaller corpus.
2. A crawler's path: one document added (``Store.add([doc])``: fingerprint, idempotency check,
   SQLite transaction, delta) and one query (``Store.query``: fingerprint, Hamming tables of
   every segment plus the delta, SQLite rows) at a time, on the store of step 1: p50 and p99.
3. The cost of checking segment checksums on open: ``open_store`` with and without ``verify``.

    python benchmarks/store_path.py [--documents 100000] [--crawler 2000]
        [--baseline-src ../main/src --baseline-documents 20000 --rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from common import REPO_DIR, RESULTS_DIR, environment, markdown_table, write_results

WORDS = [f"w{i}" for i in range(20_000)]


def write_corpus(path: Path, count: int, seed: int, prefix: str = "d") -> None:
    rng = random.Random(seed)
    kept: list[list[str]] = []
    with path.open("w") as out:
        for i in range(count):
            if i % 10 == 9 and kept:
                words = list(rng.choice(kept))
                words[rng.randrange(len(words))] = rng.choice(WORDS)
            else:
                words = rng.choices(WORDS, k=300)
            if len(kept) < 1000:
                kept.append(words)
            out.write(json.dumps({"id": f"{prefix}{i}", "url": f"http://h{i % 500}.example/{i}",
                                  "text": " ".join(words)}) + "\n")


def index_process(src: Path, corpus: Path, store: Path) -> dict[str, float]:
    """Run ``neardup index`` from ``src`` as its own process; its CPU and wall seconds."""
    shutil.rmtree(store, ignore_errors=True)
    command = [sys.executable, "-c", "from neardup.cli.main import cli; cli()", "index",
               str(corpus), "--store", str(store), "--workers", "1", "--media", "any",
               "--json"]
    start = time.perf_counter()
    child = subprocess.Popen(command, env={**os.environ, "PYTHONPATH": str(src)},
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    out = child.stdout.read() if child.stdout else b""
    if status != 0:
        raise SystemExit(f"index from {src} failed: "
                         f"{child.stderr.read().decode() if child.stderr else ''}")
    added = json.loads(out)["added"]
    cpu = usage.ru_utime + usage.ru_stime
    return {"documents": added, "cpu_seconds": round(cpu, 2),
            "system_seconds": round(usage.ru_stime, 2), "wall_seconds": round(wall, 2),
            "documents_per_cpu_second": round(added / cpu, 1)}


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {"p50_us": round(statistics.median(ordered) * 1e6, 1),
            "p99_us": round(ordered[int(0.99 * (len(ordered) - 1))] * 1e6, 1),
            "mean_us": round(statistics.fmean(ordered) * 1e6, 1)}


def crawler_path(store_dir: Path, count: int) -> dict[str, Any]:
    from neardup.document import Document
    from neardup.store import open_store

    rng = random.Random(99)
    adds, queries, found = [], [], 0
    with open_store(store_dir) as store:
        stored = len(store)
        for i in range(count):
            words = rng.choices(WORDS, k=300)
            doc = Document(id=f"crawl{i}", raw=" ".join(words).encode(), kind="text",
                           url=f"http://crawl.example/{i}")
            start = time.perf_counter()
            store.add([doc])
            adds.append(time.perf_counter() - start)
            words[rng.randrange(300)] = "changed"
            probe = " ".join(words)
            start = time.perf_counter()
            matches = store.query(probe)
            queries.append(time.perf_counter() - start)
            found += any(m.id == doc.id for m in matches)
    return {"stored_before": stored, "operations": count, "near_copy_found": found,
            "add": percentiles(adds),
            "query": percentiles(queries)}


def open_cost(store_dir: Path, rounds: int = 3) -> dict[str, Any]:
    from neardup.store import open_store

    times: dict[str, list[float]] = {"verify": [], "no_verify": []}
    for _ in range(rounds):
        for name, verify in (("verify", True), ("no_verify", False)):
            start = time.perf_counter()
            with open_store(store_dir, read_only=True, verify=verify):
                pass
            times[name].append(time.perf_counter() - start)
    segment_bytes = sum(p.stat().st_size for p in (store_dir / "segments").rglob("*.npy"))
    return {"segment_bytes": segment_bytes,
            **{f"open_{k}_seconds": round(min(v), 4) for k, v in times.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--crawler", type=int, default=2_000)
    parser.add_argument("--baseline-src", type=Path, default=REPO_DIR.parent / "main" / "src")
    parser.add_argument("--baseline-documents", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO_DIR / "src"))       # this tree's neardup, in process too
    work = Path(tempfile.mkdtemp(prefix="neardup-store-path-"))
    try:
        results = run(args, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    write_results(RESULTS_DIR / "store_path.json", results, table(results))


def run(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    results: dict[str, Any] = {"environment": environment(["numpy"]),
                               "command": " ".join(sys.argv)}
    small = work / "small.jsonl"
    write_corpus(small, args.baseline_documents, seed=1)
    if args.baseline_src.exists() and args.rounds:
        pairs: dict[str, list[dict[str, float]]] = {"this": [], "baseline": []}
        for _ in range(args.rounds):
            pairs["this"].append(index_process(REPO_DIR / "src", small, work / "a"))
            pairs["baseline"].append(index_process(args.baseline_src, small, work / "b"))
        results["comparison"] = {
            "documents": args.baseline_documents, "baseline_src": str(args.baseline_src),
            "runs": pairs, **{f"{name}_median_cpu_seconds": statistics.median(
                r["cpu_seconds"] for r in runs) for name, runs in pairs.items()}}
    big = work / "big.jsonl"
    write_corpus(big, args.documents, seed=2)
    results["index"] = index_process(REPO_DIR / "src", big, work / "store")
    results["open"] = open_cost(work / "store")
    results["crawler"] = crawler_path(work / "store", args.crawler)
    return results


def table(results: dict[str, Any]) -> str:
    index, crawler = results["index"], results["crawler"]
    rows = [[f"index {index['documents']:,} JSONL docs, sketches, 1 worker",
             f"{index['documents_per_cpu_second']:,.0f} docs per CPU s "
             f"({index['cpu_seconds']} CPU s, {index['system_seconds']} system)"]]
    if "comparison" in results:
        c = results["comparison"]
        rows.append([f"index {c['documents']:,} docs: this tree / baseline (median CPU s)",
                     f"{c['this_median_cpu_seconds']:.1f} / {c['baseline_median_cpu_seconds']:.1f}"
                     f" ({c['baseline_median_cpu_seconds'] / c['this_median_cpu_seconds']:.2f}x)"])
    rows.append([f"crawler add, one doc, {crawler['stored_before']:,} stored",
                 f"p50 {crawler['add']['p50_us']:,.0f} µs, p99 {crawler['add']['p99_us']:,.0f} µs"])
    rows.append(["crawler query, one doc", f"p50 {crawler['query']['p50_us']:,.0f} µs, "
                 f"p99 {crawler['query']['p99_us']:,.0f} µs"])
    o = results["open"]
    rows.append([f"open with checksums / without ({o['segment_bytes'] / 1e6:.1f} MB segments)",
                 f"{o['open_verify_seconds'] * 1e3:.1f} / "
                 f"{o['open_no_verify_seconds'] * 1e3:.1f} ms"])
    return markdown_table(["measure", "result"], rows)


if __name__ == "__main__":
    main()
