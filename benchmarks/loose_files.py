"""A folder of loose HTML files against the same pages as one JSONL, whole ``neardup dedup``
processes.

The folder is ``../shared/data/html/trafilatura-eval/pages`` read in place (one gzipped HTML
page per file); the JSONL, written to a temporary folder, holds the same pages, one row each
(``{"id": file name, "html": the page decoded}``). Each run is a fresh
``neardup dedup INPUT --out OUT`` with the default options; runs alternate between the two
inputs, ``--repeat`` times, and the medians count: wall time, and CPU (user + system) over the
process tree. ``--compare SRC`` adds the folder run by another source tree (an older commit
exported with ``git archive``) to the same rounds.

    python benchmarks/loose_files.py [--repeat 3] [--compare /tmp/base/src]
"""

from __future__ import annotations

import argparse
import gzip
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
    environment,
    load_average,
    markdown_table,
    require_data,
    write_results,
)


def write_jsonl(pages: list[Path], path: Path) -> Path:
    """The pages as one JSONL: an ``html`` column decoded as the HTML layer would (UTF-8, with
    replacement: a comparison of cost, not of text)."""
    with path.open("w", encoding="utf-8") as out:
        for page in pages:
            html = gzip.decompress(page.read_bytes()).decode("utf-8", "replace")
            out.write(json.dumps({"id": page.name, "html": html}, ensure_ascii=False) + "\n")
    return path


def run_once(source: Path, data: Path, out: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds over the tree) of one whole ``dedup`` process."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(source)
    args = [sys.executable, "-c", "from neardup.cli.main import main; main()", "dedup", str(data),
            "--out", str(out), "--quiet"]
    started = time.perf_counter()
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"dedup of {data} exited with {os.waitstatus_to_exitcode(status)}")
    return wall, usage.ru_utime + usage.ru_stime  # wait4 counts the children it reaped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--compare", type=Path, default=None,
                        help="another source tree (its src folder): the folder run by it too")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "loose_files.json")
    args = parser.parse_args()
    folder = require_data("html", "trafilatura-eval", "pages")
    pages = sorted(folder.glob("*.html.gz"))
    source = REPO_DIR / "src"
    with tempfile.TemporaryDirectory(prefix="loose-files-") as scratch:
        jsonl = write_jsonl(pages, Path(scratch) / "pages.jsonl")
        cases = {"loose files": (source, folder), "one JSONL": (source, jsonl)}
        if args.compare is not None:
            cases[f"loose files, {args.compare}"] = (args.compare, folder)
        for name, (tree, data) in cases.items():  # bytecode, numba's cache, the page cache
            run_once(tree, data, Path(scratch) / f"warm-{len(name)}")
        started = load_average()
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
        for round_ in range(args.repeat):
            for index, (name, (tree, data)) in enumerate(cases.items()):
                runs[name].append(run_once(tree, data, Path(scratch) / f"o{round_}-{index}"))
    ended = load_average()
    walls = {name: statistics.median(w for w, _ in values) for name, values in runs.items()}
    cpus = {name: statistics.median(c for _, c in values) for name, values in runs.items()}
    reference = walls["one JSONL"]
    rows = [(name, len(pages), f"{walls[name]:.1f}", f"{cpus[name]:.1f}",
             f"{walls[name] / reference:.2f}x") for name in runs]
    table = markdown_table(("input", "pages", "median wall s", "median CPU s",
                            "wall vs one JSONL"), rows)
    table += (f"\n\n{args.repeat} interleaved whole-process runs of `neardup dedup INPUT --out "
              f"OUT` (default options); load average (1, 5, 15 min) {started} at start, {ended} "
              "at end")
    write_results(args.out, {
        "benchmark": "loose_files", "environment": environment(["neardup", "resiliparse"]),
        "repeat": args.repeat, "pages": len(pages), "folder": str(folder),
        "runs": {name: [{"wall_seconds": w, "cpu_seconds": c} for w, c in values]
                 for name, values in runs.items()},
        "median_wall_seconds": walls, "median_cpu_seconds": cpus,
        "load_average": {"start": started, "end": ended}}, table)


if __name__ == "__main__":
    main()
