"""``dedup --write``: the cost of writing the kept rows, against the run that found them.

The generated corpus of :mod:`scale_corpus` (``--documents``, default 100,000; 8 JSONL.gz
parts) and the same rows as 8 Parquet parts. For each layout: one ``neardup dedup --workers 1``
run (in process, its wall and CPU time), then the write pass alone (``write_rows`` with ``kept``,
then ``annotated``) ``--repeat`` times on the run's tables, each from scratch; medians of wall
and CPU seconds, the rows written, and the share of the run's time the pass adds. Corpora and
outputs go to ``benchmarks/work/``; results to ``benchmarks/results/write_rows.json``::

    python benchmarks/write_rows.py --documents 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from click.testing import CliRunner

from common import environment, markdown_table, write_results
from neardup.cli.main import cli
from neardup.output.dataset import write_rows
from scale_corpus import corpus_parts, make_corpus

WORK = Path(__file__).parent / "work" / "write_rows"
RESULTS = Path(__file__).parent / "results" / "write_rows.json"


def _parquet_parts(parts: list[Path], folder: Path) -> list[Path]:
    """The JSONL.gz parts as Parquet files of the same rows (written once)."""
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for part in parts:
        target = folder / part.name.replace(".jsonl.gz", ".parquet")
        if not target.exists():
            with gzip.open(part, "rt") as lines:
                rows = [json.loads(line) for line in lines]
            pq.write_table(pa.Table.from_pylist(rows), target)
        written.append(target)
    return written


def _clock(run: Any) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def _measure(name: str, inputs: list[Path], repeat: int) -> dict[str, Any]:
    out = WORK / f"out-{name}"
    shutil.rmtree(out, ignore_errors=True)
    result: list[Any] = []

    def dedup() -> None:
        result.append(CliRunner().invoke(cli, ["dedup", *map(str, inputs), "--out", str(out),
                                               "--workers", "1", "--quiet"]))

    run_wall, run_cpu = _clock(dedup)
    assert result[0].exit_code == 0, result[0].output
    measured: dict[str, Any] = {"layout": name, "run_wall_s": round(run_wall, 2),
                                "run_cpu_s": round(run_cpu, 2)}
    for mode in ("kept", "annotated"):
        walls, cpus, rows = [], [], 0
        for _ in range(repeat):
            shutil.rmtree(out / mode, ignore_errors=True)
            counts: list[dict[str, Any]] = []
            wall, cpu = _clock(lambda: counts.append(write_rows(out, [mode])))  # noqa: B023
            walls.append(wall)
            cpus.append(cpu)
            rows = counts[0][mode]["rows"]
        measured[mode] = {"wall_s": round(statistics.median(walls), 2),
                          "cpu_s": round(statistics.median(cpus), 2), "rows": rows,
                          "share_of_run_wall": round(statistics.median(walls) / run_wall, 3)}
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    corpus = WORK / f"corpus-{args.documents}"
    make_corpus(corpus, args.documents)
    jsonl = corpus_parts(corpus)
    parquet = _parquet_parts(jsonl, WORK / f"parquet-{args.documents}")
    runs = [_measure("jsonl.gz", jsonl, args.repeat), _measure("parquet", parquet, args.repeat)]
    table = markdown_table(
        ["layout", "dedup run wall s", "kept: wall s", "kept: CPU s", "kept rows",
         "annotated: wall s", "annotated rows", "kept pass / run wall"],
        [(r["layout"], r["run_wall_s"], r["kept"]["wall_s"], r["kept"]["cpu_s"],
          f"{r['kept']['rows']:,}", r["annotated"]["wall_s"], f"{r['annotated']['rows']:,}",
          r["kept"]["share_of_run_wall"]) for r in runs])
    write_results(RESULTS, {"documents": args.documents, "repeat": args.repeat, "runs": runs,
                            "environment": environment(["neardup", "pyarrow"])}, table)


if __name__ == "__main__":
    main()
