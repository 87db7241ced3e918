"""Article extractors, candidates for the default: quality on two labelled page sets, and speed.

``python benchmarks/article_extractors.py [--only NAME,...]`` extracts every page of
``../shared/data/html/zyte-article-benchmark/`` (181 pages, each with its article body) and of
``../shared/data/html/trafilatura-eval/`` (the pages named in ``evaldata.json``, each with
snippets that belong to the main text, ``with``, and snippets that do not, ``without``) by each
candidate:

- ``full``: resiliparse, every visible word (``--extract full``);
- ``main``: resiliparse's main content (``--extract main``);
- ``article``: :mod:`neardup.text.article`, resiliparse's main content with its blocks judged by
  length, link density and neighbours;
- ``trafilatura``: trafilatura as ``--extract trafilatura`` runs it;
- ``trafilatura-fast``: the same with ``fast=True`` (no fallback extractors).

Quality on Zyte: token precision, recall and F1 against the article body (bags of canonical
tokens, :mod:`neardup.evaluation.extraction`), means over pages. Quality on the trafilatura
pages, as trafilatura's own evaluation counts it: a ``with`` snippet found in the canonical
extracted text is a true positive, one missing a false negative, a ``without`` snippet found a
false positive; precision and recall over all snippets. Speed: pages per CPU second
(``time.process_time``, decoding included), one pass over both page sets, one process pinned to
one core. Writes ``results/article_extractors.json``.
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from collections.abc import Callable
from pathlib import Path
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
from neardup.text.article import article_text
from neardup.text.canonical import canonical_text
from neardup.text.extract import extract, trafilatura_text
from neardup.text.html import decode_payload, extract_text


def _trafilatura_fast(raw: bytes) -> str:
    import trafilatura

    text = trafilatura.extract(decode_payload(raw), include_comments=False, include_tables=True,
                               deduplicate=False, fast=True)
    return str(text) if text else extract_text(raw, main_content=True)


CANDIDATES: dict[str, Callable[[bytes], str]] = {
    "full": lambda raw: extract(raw, "full"),
    "main": lambda raw: extract(raw, "main"),
    "article": article_text,
    "trafilatura": trafilatura_text,
    "trafilatura-fast": _trafilatura_fast,
}


def zyte_pages() -> list[tuple[bytes, str]]:
    root = require_data("html", "zyte-article-benchmark")
    truth = json.loads((root / "ground-truth.json").read_text())
    return [(gzip.decompress((root / "html" / f"{name}.html.gz").read_bytes()),
             truth[name]["articleBody"]) for name in sorted(truth)]


def trafilatura_pages() -> list[tuple[bytes, list[str], list[str]]]:
    root = require_data("html", "trafilatura-eval")
    entries = json.loads((root / "evaldata.json").read_text())
    out = []
    for _, entry in sorted(entries.items()):
        path = root / "pages" / f"{entry['file']}.gz"
        if path.exists():
            out.append((gzip.decompress(path.read_bytes()), entry["with"], entry["without"]))
    return out


def zyte_quality(texts: list[str], truths: list[str]) -> dict[str, float]:
    overlaps = [token_overlap(text, truth) for text, truth in zip(texts, truths, strict=True)]
    return {name: round(statistics.fmean(getattr(o, name) for o in overlaps), 4)
            for name in ("precision", "recall", "f1")}


def _holds(text: str, snippet: str) -> bool:
    return f" {canonical_text(snippet)} " in text


def snippet_quality(texts: list[str], labels: list[tuple[list[str], list[str]]]) -> dict[str,
                                                                                       float]:
    tp = fn = fp = 0
    for text, (inside, outside) in zip(texts, labels, strict=True):
        padded = f" {canonical_text(text)} "
        found = sum(_holds(padded, s) for s in inside)
        tp, fn = tp + found, fn + len(inside) - found
        fp += sum(_holds(padded, s) for s in outside)
    precision, recall = tp / max(1, tp + fp), tp / max(1, tp + fn)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4)}


def timed(run: Callable[[bytes], str], pages: list[bytes]) -> tuple[list[str], float]:
    started = time.process_time()
    texts = [run(raw) for raw in pages]
    return texts, time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", default=",".join(CANDIDATES))
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "article_extractors.json")
    args = parser.parse_args()
    pin_single_core()
    zyte, traf = zyte_pages(), trafilatura_pages()
    results: dict[str, Any] = {}
    for name in args.only.split(","):
        zyte_texts, zyte_cpu = timed(CANDIDATES[name], [raw for raw, _ in zyte])
        traf_texts, traf_cpu = timed(CANDIDATES[name], [raw for raw, _, _ in traf])
        results[name] = {
            "zyte": zyte_quality(zyte_texts, [truth for _, truth in zyte]),
            "trafilatura_eval": snippet_quality(traf_texts, [(w, o) for _, w, o in traf]),
            "pages_per_cpu_second": round((len(zyte) + len(traf)) / (zyte_cpu + traf_cpu), 1)}
        print(name, json.dumps(results[name]), flush=True)
    rows = [[name, *(f"{r['zyte'][k]:.3f}" for k in ("precision", "recall", "f1")),
             *(f"{r['trafilatura_eval'][k]:.3f}" for k in ("precision", "recall", "f1")),
             f"{r['pages_per_cpu_second']:.0f}"] for name, r in results.items()]
    table = markdown_table(["extractor", "Zyte P", "Zyte R", "Zyte F1", "trafilatura-eval P",
                            "trafilatura-eval R", "trafilatura-eval F1", "pages per CPU s"],
                           rows)
    payload = {"pages": {"zyte": len(zyte), "trafilatura_eval": len(traf)}, "results": results,
               "load_average": load_average(),
               "environment": environment(["resiliparse", "trafilatura"])}
    write_results(args.out, payload, table)


if __name__ == "__main__":
    main()
