"""Work-directory bytes per document of one ``neardup dedup`` run, and the cost of its stages.

One whole ``neardup dedup`` process over the given inputs (``--workers 2``, default memory
limit), run from the source tree ``--src`` (default: this repository's ``src``, so that an
earlier tree, e.g. ``git archive`` of main, is measured the same way). Recorded: wall and CPU
seconds (the process tree, sampled from /proc), the work directory's largest size (polled every
second) and its size at the end, the bytes per document of each kind of partition file (full and
article views together), the summary's stage seconds, and the load average before and after.
``--compare OUT`` checks that the run's documents, pairs and clusters tables equal those of an
earlier run's output folder. ``--compact-work`` passes the option to dedup (a tree before the
option stored token sequences always). The run's output folder is kept (``--out``); results are
merged into ``benchmarks/results/workdir_sets.json`` under ``--name``.

    python benchmarks/workdir_sets.py --name 100k-after --out /tmp/o \\
        /work/scratch/sparkscale/scale-100000/part-*.jsonl.gz
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from common import REPO_DIR, RESULTS_DIR, TreeSampler, environment, load_average, markdown_table

RESULTS = RESULTS_DIR / "workdir_sets.json"
TABLES = ("documents", "pairs", "clusters")


def _folder_bytes(folder: Path) -> int:
    total = 0
    for root, _, files in os.walk(folder):
        for name in files:
            with contextlib.suppress(FileNotFoundError):  # renamed or removed meanwhile
                total += os.stat(os.path.join(root, name)).st_size
    return total


def _file_kinds(work: Path, documents: int) -> dict[str, float]:
    """Bytes per document of each kind of file of the fingerprint partitions (both views)."""
    found: dict[str, int] = {}
    for path in (work / "fingerprint").rglob("*"):
        if path.is_file():
            found[path.name] = found.get(path.name, 0) + path.stat().st_size
    return {name: round(size / max(1, documents), 1) for name, size in sorted(found.items())}


def run(src: Path, inputs: list[str], out: Path, method: str, workers: int,
        flags: list[str]) -> dict[str, Any]:
    """One dedup process; wall, CPU, the work directory's peak and final bytes."""
    shutil.rmtree(out, ignore_errors=True)
    work = out / "work"
    command = [sys.executable, "-c", "from neardup.cli.main import cli; cli()", "dedup", *inputs,
               "--out", str(out), "--method", method, "--workers", str(workers), "--quiet",
               "--work", str(work), *flags]
    env = {**os.environ, "PYTHONPATH": str(src)}
    load_before = load_average()
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, start_new_session=True)
    sampler, peak, polled = TreeSampler(), 0, 0.0
    while process.poll() is None:
        sampler.poll(process.pid)
        if time.perf_counter() - polled >= 1.0:
            peak, polled = max(peak, _folder_bytes(work)), time.perf_counter()
        time.sleep(0.05)
    wall = time.perf_counter() - started
    if process.returncode:
        raise SystemExit(f"dedup exited with status {process.returncode}")
    return {"wall_s": round(wall, 2), "cpu_s": round(sampler.cpu_seconds, 2),
            "work_peak_bytes": max(peak, _folder_bytes(work)),
            "work_final_bytes": _folder_bytes(work),
            "load_before": load_before, "load_after": load_average()}


def same_tables(out: Path, other: Path) -> dict[str, bool]:
    """Whether each output table of ``out`` equals that of ``other``."""
    return {name: pq.read_table(out / f"{name}.parquet").equals(
        pq.read_table(other / f"{name}.parquet")) for name in TABLES}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", nargs="+")
    parser.add_argument("--name", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--src", type=Path, default=REPO_DIR / "src")
    parser.add_argument("--method", default="minhash")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--compare", type=Path)
    parser.add_argument("--compact-work", action="store_true",
                        help="run dedup --compact-work (token sequences instead of sets)")
    args = parser.parse_args()
    flags = ["--compact-work"] if args.compact_work else []
    found = run(args.src, args.inputs, args.out, args.method, args.workers, flags)
    summary = json.loads((args.out / "summary.json").read_text())
    documents = int(summary["documents"])
    found.update(documents=documents, method=args.method, src=str(args.src),
                 compact_work=args.compact_work,
                 peak_bytes_per_doc=round(found["work_peak_bytes"] / documents, 1),
                 final_bytes_per_doc=round(found["work_final_bytes"] / documents, 1),
                 files_per_doc=_file_kinds(args.out / "work", documents),
                 seconds=summary["seconds"], cpu_seconds=summary["cpu_seconds"],
                 near_phases=summary["near"].get("phases", {}),
                 pairs=int(summary["near"]["verified"]))
    if args.compare is not None:
        found["identical_to"] = {"run": str(args.compare), **same_tables(args.out, args.compare)}
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"runs": {}}
    results["runs"][args.name] = found
    results["environment"] = environment(["numpy", "numba", "pyarrow"])
    rows = [(name, f"{r['documents']:,}", r["wall_s"], r["cpu_s"], r["peak_bytes_per_doc"],
             r["final_bytes_per_doc"], r["load_before"][0] if r["load_before"] else "")
            for name, r in results["runs"].items()]
    results["markdown"] = markdown_table(
        ["run", "documents", "wall s", "CPU s", "peak B/doc", "final B/doc", "load"], rows)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n")
    print(json.dumps(found, indent=1))


if __name__ == "__main__":
    main()
