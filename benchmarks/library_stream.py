"""``neardup.dedup(generator)`` streams: its peak memory at 1M rows against 100k rows.

Each size runs in a fresh process (``--child N``) that feeds ``neardup.dedup`` a generator of N
rows made on the fly (never a list): texts of 60-140 words over a 20,000-word vocabulary, one row
in ten a near copy (one word changed) of an earlier row and one in twenty an exact copy. The
process reports its peak RSS (``ru_maxrss``), its CPU time and wall time, and the duplicates it
found; the parent writes them to ``results/library_stream.json``.
Target (issue "One batch path"): peak RSS at 1M within 1.3x of 100k. The engine's stages work
on buckets of at most the budget's share of ``memory_limit`` and at most 32 MiB:
``--memory-limit-mb`` sets the limit (runs of other limits stay in the results file).

    python benchmarks/library_stream.py [--sizes 100000 1000000] [--memory-limit-mb 2048]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

from common import RESULTS_DIR, environment, markdown_table, write_results

VOCABULARY = [f"w{i}" for i in range(20_000)]


def rows(count: int, seed: int = 1) -> Iterator[dict[str, str]]:
    """``count`` rows with planted exact and near copies, made as they are asked for."""
    rng = random.Random(seed)
    recent: list[str] = []
    for index in range(count):
        draw = rng.random()
        if recent and draw < 0.05:
            text = rng.choice(recent)
        elif recent and draw < 0.15:
            words = rng.choice(recent).split()
            words[rng.randrange(len(words))] = rng.choice(VOCABULARY)
            text = " ".join(words)
        else:
            text = " ".join(rng.choices(VOCABULARY, k=rng.randint(60, 140)))
        recent.append(text)
        if len(recent) > 1000:
            recent.pop(rng.randrange(len(recent)))
        yield {"id": str(index), "text": text}


def child(count: int, memory_limit: int) -> dict[str, Any]:
    import neardup

    started, cpu = time.perf_counter(), time.process_time()
    result = neardup.dedup(rows(count), id="id", memory_limit=memory_limit)
    kept = result.column("kept").to_pylist()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"rows": count, "memory_limit_mb": memory_limit >> 20, "duplicates": kept.count(False),
            "wall_s": round(time.perf_counter() - started, 2),
            "cpu_s": round(time.process_time() - cpu, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--memory-limit-mb", type=int, default=2048,
                        help="neardup.dedup(memory_limit=...) [default: the command line's 2G]")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(child(args.child, args.memory_limit_mb << 20)))
        return
    env = environment(["neardup", "numpy", "pyarrow"])
    runs = []
    for size in args.sizes:
        done = subprocess.run([sys.executable, __file__, "--child", str(size),
                               "--memory-limit-mb", str(args.memory_limit_mb)], check=True,
                              capture_output=True, text=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(runs[-1], flush=True)
    path = RESULTS_DIR / "library_stream.json"
    earlier = json.loads(path.read_text()).get("runs", []) if path.exists() else []
    every = [r for r in earlier if r.get("memory_limit_mb", args.memory_limit_mb)
             != args.memory_limit_mb] + runs
    write_results(path, {"environment": env, "runs": every}, _table(every))


def _table(runs: list[dict[str, Any]]) -> str:
    smallest = {r["memory_limit_mb"]: r["peak_rss_mb"] for r in reversed(runs)}
    return markdown_table(
        ["rows", "memory limit MB", "duplicates found", "wall s", "CPU s", "peak RSS MB",
         "RSS vs the smallest run of its limit"],
        [[f"{r['rows']:,}", r["memory_limit_mb"], f"{r['duplicates']:,}", r["wall_s"],
          r["cpu_s"], r["peak_rss_mb"],
          f"{r['peak_rss_mb'] / smallest[r['memory_limit_mb']]:.2f}x"] for r in runs])

if __name__ == "__main__":
    main()
