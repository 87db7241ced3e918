"""Building the report (HTML, JSON and the cluster browser) of a large run: wall time, CPU and
peak RSS of ``neardup report`` as a whole process.

The run is made to measure: a generated crawl (``--pages`` pages) is deduplicated for real,
then its documents, clusters and pairs tables are repeated until they hold ``--documents`` rows
(each copy's clusters apart from the others', its URLs made distinct), so that the report reads
the tables of a run of that size and the browser reads its texts again from a real WARC file.
The issue's target: 1M documents in under 2 minutes and under 1 GB.

    python benchmarks/report_build.py [--documents 1000000] [--pages 400]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common import (
    RESULTS_DIR,
    TreeSampler,
    environment,
    load_average,
    markdown_table,
    write_results,
)
from neardup.cli.dedup import run_dedup
from neardup.config import DedupConfig
from neardup.demo.synthetic import generate_crawl

RESULTS = RESULTS_DIR / "report_build.json"
NEARDUP = str(Path(sys.executable).with_name("neardup"))
TARGET_SECONDS = 120.0
TARGET_BYTES = 10**9


def _repeat(table: pa.Table, copies: int, count: int, shifts: dict[str, int]) -> pa.Table:
    """``table`` repeated ``copies`` times, cut to ``count`` rows; each column of ``shifts``
    gets ``copy * shift`` added (document numbers, cluster labels)."""
    copy = np.repeat(np.arange(copies, dtype=np.int64), table.num_rows)[:count]
    rows = np.tile(np.arange(table.num_rows), copies)[:count]
    out = table.take(pa.array(rows))
    for name, shift in shifts.items():
        column = out.column(name).to_numpy(zero_copy_only=False)
        valid = ~pc.is_null(out.column(name)).to_numpy(zero_copy_only=False)
        shifted = np.where(valid, np.nan_to_num(column).astype(np.int64) + copy * shift, 0)
        out = out.set_column(out.column_names.index(name), name,
                             pa.array(shifted, pa.int64(), mask=~valid))
    if "url" in out.column_names:
        suffix = pa.array([f"?copy={c}" for c in copy.tolist()])
        out = out.set_column(out.column_names.index("url"), "url",
                             pc.binary_join_element_wise(out.column("url"), suffix, ""))
    return out


def make_run(root: Path, documents: int, pages: int) -> Path:
    warc = root / "crawl.warc.gz"
    generate_crawl(warc, seed=11, pages=pages)
    base = root / "base"
    run_dedup((str(warc),), base, DedupConfig(method="minhash"), workers=1)
    docs, clusters = pq.read_table(base / "documents.parquet"), pq.read_table(
        base / "clusters.parquet")
    pairs = pq.read_table(base / "pairs.parquet")
    n = docs.num_rows
    copies = -(-documents // n)
    big = root / "big"
    big.mkdir()
    pq.write_table(_repeat(docs, copies, documents, {"doc": n, "revisit_of": n}),
                   big / "documents.parquet")
    pq.write_table(_repeat(clusters, copies, documents, {"doc": n, "cluster": n, "kept_doc": n}),
                   big / "clusters.parquet")
    full = _repeat(pairs, copies, copies * pairs.num_rows, {"a": n, "b": n})
    keep = pc.and_(pc.less(full.column("a"), documents), pc.less(full.column("b"), documents))
    pq.write_table(full.filter(keep), big / "pairs.parquet")
    summary = json.loads((base / "summary.json").read_text())
    summary["documents"] = documents
    (big / "summary.json").write_text(json.dumps(summary))
    return big


def measure(run: Path, out: Path) -> dict[str, float]:
    sampler = TreeSampler()
    started = time.perf_counter()
    process = subprocess.Popen([NEARDUP, "report", "--from", str(run), "-o",
                                str(out / "report.html"), "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    while process.poll() is None:
        sampler.poll(process.pid)
        time.sleep(0.05)
    wall = time.perf_counter() - started
    output, errors = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"neardup report failed: {errors.decode()[-2000:]}")
    pages = len(list((out / "report-clusters").glob("c*.html")))
    size = sum(p.stat().st_size for p in (out / "report-clusters").iterdir())
    return {"wall_seconds": round(wall, 2), "cpu_seconds": round(sampler.cpu_seconds, 2),
            "peak_rss_bytes": sampler.peak_bytes, "browser_pages": pages,
            "browser_bytes": size, "html_bytes": (out / "report.html").stat().st_size,
            "output_lines": len(output.decode().splitlines())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=1_000_000)
    parser.add_argument("--pages", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="report-build-") as scratch:
        root = Path(scratch)
        run = make_run(root, args.documents, args.pages)
        out = root / "out"
        out.mkdir()
        numbers = measure(run, out)
    meets = (numbers["wall_seconds"] < TARGET_SECONDS
             and numbers["peak_rss_bytes"] < TARGET_BYTES)
    table = markdown_table(
        ["documents", "wall (s)", "CPU (s)", "peak RSS (MB)", "browser pages", "browser (MB)",
         "target met (< 120 s, < 1 GB)"],
        [[f"{args.documents:,}", numbers["wall_seconds"], numbers["cpu_seconds"],
          round(numbers["peak_rss_bytes"] / 1e6), numbers["browser_pages"],
          round(numbers["browser_bytes"] / 1e6, 1), "yes" if meets else "no"]])
    write_results(RESULTS, {"benchmark": "report_build", "documents": args.documents,
                            "base_pages": args.pages, **numbers, "target_met": meets,
                            "load_average": load_average(),
                            "environment": environment(["numpy", "pyarrow", "matplotlib"])},
                  table)


if __name__ == "__main__":
    main()
