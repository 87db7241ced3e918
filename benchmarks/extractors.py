"""HTML to text: each extractor against the article text of Zyte's benchmark, and its speed.

``python benchmarks/extractors.py`` reads the 181 pages of
``../shared/data/html/zyte-article-benchmark/`` (each with its article body as ground truth) and
extracts every page with ``full`` (resiliparse, whole text), ``main`` (resiliparse's main
content) and ``trafilatura``. Quality: token precision, recall and F1 of the extracted text
against the article body (bags of canonical tokens, :mod:`neardup.evaluation.extraction`), the
mean over pages and the median. Speed: pages per CPU second over the same pages (decoding
included), best of 3, one process pinned to one core. Writes ``results/extractors.json``.
"""

from __future__ import annotations

import gzip
import json
import statistics
import time
from typing import Any

from common import (
    RESULTS_DIR,
    environment,
    load_average,
    markdown_table,
    pin_single_core,
    require_data,
    write_results,
)
from neardup.evaluation.extraction import token_overlap
from neardup.text.extract import extract

EXTRACTORS = ("full", "main", "trafilatura")


def pages() -> list[tuple[bytes, str]]:
    root = require_data("html", "zyte-article-benchmark")
    truth = json.loads((root / "ground-truth.json").read_text())
    return [(gzip.decompress((root / "html" / f"{name}.html.gz").read_bytes()),
             truth[name]["articleBody"]) for name in sorted(truth)]


def speed(raw: list[bytes], extractor: str) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.process_time()
        for page in raw:
            extract(page, extractor)  # type: ignore[arg-type]
        best = min(best, time.process_time() - started)
    return len(raw) / best


def quality(data: list[tuple[bytes, str]], extractor: str) -> dict[str, Any]:
    overlaps = [token_overlap(extract(raw, extractor), truth)  # type: ignore[arg-type]
                for raw, truth in data]
    out: dict[str, Any] = {}
    for name in ("precision", "recall", "f1"):
        values = [getattr(o, name) for o in overlaps]
        out[name] = round(statistics.fmean(values), 4)
        out[f"{name}_median"] = round(statistics.median(values), 4)
    out["extracted_tokens_per_true_token"] = round(
        sum(o.extracted for o in overlaps) / max(1, sum(o.truth for o in overlaps)), 3)
    return out


def main() -> None:
    pin_single_core()
    data = pages()
    results = {}
    for extractor in EXTRACTORS:
        results[extractor] = quality(data, extractor)
        results[extractor]["pages_per_cpu_second"] = round(speed([r for r, _ in data],
                                                                 extractor), 1)
    rows = [[name, f"{r['precision']:.3f}", f"{r['recall']:.3f}", f"{r['f1']:.3f}",
             f"{r['f1_median']:.3f}", f"{r['extracted_tokens_per_true_token']:.2f}",
             f"{r['pages_per_cpu_second']:.0f}"] for name, r in results.items()]
    table = markdown_table(["--extract", "token precision", "token recall", "F1 (mean)",
                            "F1 (median)", "tokens extracted per article token",
                            "pages per CPU s"], rows)
    payload = {"pages": len(data), "results": results, "load_average": load_average(),
               "environment": environment(["resiliparse", "trafilatura"])}
    write_results(RESULTS_DIR / "extractors.json", payload, table)


if __name__ == "__main__":
    main()
