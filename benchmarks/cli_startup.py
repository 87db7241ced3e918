"""Start-up time of the command line: ``neardup --help`` and ``import neardup``, whole processes.

Each command runs as a fresh Python process (bytecode written once beforehand, as after an
install; ``PYTHONDONTWRITEBYTECODE`` removed from the environment), interleaved with the others,
``--repeat`` times; the median wall time counts. ``--compare SRC`` times the same commands on
another source tree too (e.g. an older commit exported with ``git archive``), in the same rounds.

    python benchmarks/cli_startup.py [--repeat 10] [--compare /tmp/base/src]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from common import REPO_DIR, RESULTS_DIR, environment, load_average, markdown_table, write_results

COMMANDS = {"neardup --help": "from neardup.cli.main import main; main()",
            "import neardup": "import neardup"}


def run(source: Path, code: str) -> float:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(source)
    args = [sys.executable, "-c", code] + (["--help"] if "main()" in code else [])
    start = time.perf_counter()
    subprocess.run(args, env=env, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--compare", type=Path, default=None,
                        help="another source tree (its src folder) timed in the same rounds")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "cli_startup.json")
    args = parser.parse_args()
    trees = {"this tree": REPO_DIR / "src"}
    if args.compare is not None:
        trees[f"compared: {args.compare}"] = args.compare
    cases = [(tree, name) for tree in trees for name in COMMANDS]
    for tree, name in cases:  # write the bytecode, warm the page cache
        run(trees[tree], COMMANDS[name])
    started = load_average()
    times: dict[str, list[float]] = {f"{tree} | {name}": [] for tree, name in cases}
    for _ in range(args.repeat):
        for tree, name in cases:
            times[f"{tree} | {name}"].append(run(trees[tree], COMMANDS[name]))
    medians = {key: statistics.median(values) for key, values in times.items()}
    rows = [(*key.split(" | "), f"{medians[key]:.3f}", f"{min(values):.3f}",
             f"{max(values):.3f}") for key, values in times.items()]
    table = markdown_table(("tree", "command", "median s", "min s", "max s"), rows)
    table += (f"\n\n{args.repeat} interleaved runs per command, whole processes; load average "
              f"(1, 5, 15 min) {started} at start, {load_average()} at end")
    write_results(args.out, {"benchmark": "cli_startup", "environment": environment(
        ["neardup", "click", "rich"]), "repeat": args.repeat, "seconds": times,
        "median_seconds": medians}, table)


if __name__ == "__main__":
    main()
