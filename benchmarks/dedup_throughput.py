"""Throughput of `dedup --method simhash` against reading the WARC and extracting text alone.

The 923 trafilatura pages are written once into a WARC (benchmarks/work/, not committed). Then, in
the same run and interleaved, single core:
- reference: read the WARC with neardup's sources and extract every page's text;
- dedup: the whole simhash pipeline (read, extract, canonicalise, fingerprint, exact levels,
  Hamming tables, verification, clusters), as ``find_duplicates`` runs it for the CLI.
Target: dedup throughput >= 50% of the reference's.

    python benchmarks/dedup_throughput.py [--repeat 3] [--copies 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import json
from pathlib import Path

from common import (
    BENCHMARKS_DIR,
    RESULTS_DIR,
    environment,
    interleaved_timings,
    markdown_table,
    pin_single_core,
    require_data,
    write_results,
)
from neardup.config import DedupConfig
from neardup.demo.warcwriter import WarcWriter
from neardup.pipeline.dedup import find_duplicates
from neardup.pipeline.fingerprint import document_text
from neardup.sources import open_sources

TARGET_RATIO = 0.5


def build_warc(pages_dir: Path, evaldata: Path, copies: int) -> Path:
    """The trafilatura pages (each ``copies`` times) as one gzipped WARC, built once."""
    target = BENCHMARKS_DIR / "work" / f"trafilatura-x{copies}.warc.gz"
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    urls = {entry["file"]: url for url, entry in json.loads(evaldata.read_text()).items()}
    date = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    with WarcWriter(target, seed=1) as writer:
        for copy in range(copies):
            for page in sorted(pages_dir.iterdir()):
                raw = page.read_bytes()
                html = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
                name = page.name.removesuffix(".gz")
                url = urls.get(name, f"http://example.org/{name}")
                writer.write_response(f"{url}#copy{copy}" if copy else url, html, date)
    return target


def read_and_extract(warc: Path) -> int:
    count = 0
    for doc in open_sources([str(warc)]):
        document_text(doc, "full")
        count += 1
    return count


def dedup(warc: Path) -> int:
    return len(find_duplicates(open_sources([str(warc)]), DedupConfig(method="simhash")).documents)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "dedup_throughput.json")
    args = parser.parse_args()
    pages = require_data("html", "trafilatura-eval", "pages")
    warc = build_warc(pages, pages.parent / "evaldata.json", args.copies)
    cpu = pin_single_core()
    documents = dedup(warc)  # warm-up: JIT and page cache
    times = interleaved_timings({"read+extract": lambda: read_and_extract(warc),
                                 "dedup simhash": lambda: dedup(warc)}, args.repeat)
    best = {name: min(values) for name, values in times.items()}
    rate = {name: documents / seconds for name, seconds in best.items()}
    ratio = rate["dedup simhash"] / rate["read+extract"]
    rows = [(name, documents, f"{best[name]:.2f}", f"{rate[name]:.0f}") for name in best]
    table = markdown_table(("run", "documents", "best s", "docs/s"), rows)
    table += f"\n\ndedup / read+extract throughput: {ratio:.2f} (target >= {TARGET_RATIO})"
    payload = {"benchmark": "dedup_throughput", "environment": environment(["neardup", "numpy"]),
               "pinned_cpu": cpu, "warc": str(warc), "warc_bytes": warc.stat().st_size,
               "documents": documents, "seconds": times, "docs_per_s": rate, "ratio": ratio,
               "target_ratio": TARGET_RATIO, "meets_target": ratio >= TARGET_RATIO}
    write_results(args.out, payload, table)


if __name__ == "__main__":
    main()
