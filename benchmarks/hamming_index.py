"""Manku's Hamming index: batch all-pairs, online queries, inserts, bytes per fingerprint.

Run: ``python benchmarks/hamming_index.py [--sizes 1000000,10000000] [--queries 20000]``.

(a) Batch all-pairs within k = 3 over N random 64-bit fingerprints of which 5% are planted
    near-copies (0 to 3 bits flipped from another fingerprint): ``hamming_pairs`` against
    sorting the same fingerprints once per table in the same run (``np.sort``); five rounds,
    the two interleaved, the median of the per-round ratios.
(b) Online queries against N stored fingerprints, in process and warm: p50 and p99 latency of
    ``HammingIndex.query`` for near-copies of stored fingerprints, uncompressed and compressed.
(c) Inserts per second: fingerprints into a HammingIndex (add + freeze into sorted tables), and
    documents into a persistent store (fingerprinting, SQLite commit, clusters, flush).
(d) Bytes per fingerprint on disk (a store segment) and in RAM, compressed and not.
Results: ``benchmarks/results/hamming_index.json``.
"""

from __future__ import annotations

import argparse
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from common import (
    RESULTS_DIR,
    environment,
    interleaved_timings,
    load_average,
    markdown_table,
    write_results,
)
from neardup.config import StoreConfig
from neardup.document import Document
from neardup.index.hamming import HammingDesign, design_for, hamming_pairs
from neardup.index.segmented import HammingIndex
from neardup.store import open_store

K = 3


def planted(count: int, seed: int) -> np.ndarray:
    """Random fingerprints; 5% replaced by copies of others with 0..3 bits flipped."""
    rng = np.random.default_rng(seed)
    values = rng.integers(0, 2**64 - 1, count, dtype=np.uint64, endpoint=True)
    copies = count // 20
    targets = rng.choice(count, copies, replace=False)
    near = values[rng.integers(0, count, copies)]
    for _ in range(K):
        flip = rng.random(copies) < 0.75
        near ^= (np.uint64(1) << rng.integers(0, 64, copies).astype(np.uint64)) * flip
    values[targets] = near
    return values


def batch_all_pairs(count: int) -> dict[str, Any]:
    values = planted(count, seed=count)
    design = design_for(K, count)
    tables = len(design.tables())
    hamming_pairs(values[:1000], K, design)           # compile outside the timing
    pairs: list[int] = []

    def join() -> None:
        a, _ = hamming_pairs(values, K, design)
        pairs.append(a.size)

    def sorts() -> None:
        for _ in range(tables):
            np.sort(values)

    times = interleaved_timings({"join": join, "sorts": sorts}, repeat=5)
    ratios = [j / s for j, s in zip(times["join"], times["sorts"], strict=True)]
    return {"fingerprints": count, "tables": tables, "blocks": list(design.blocks),
            "choose": design.choose, "pairs": pairs[-1],
            "join_seconds": round(min(times["join"]), 3),
            "sorts_seconds": round(min(times["sorts"]), 3),
            "ratio_of_best": round(min(times["join"]) / min(times["sorts"]), 2),
            "ratio": round(float(np.median(ratios)), 2),
            "ratios": [round(r, 2) for r in ratios], "load_average": load_average()}


def latencies(index: HammingIndex, queries: np.ndarray) -> tuple[float, float]:
    for q in queries[:200].tolist():
        index.query(q)
    spent = []
    for q in queries.tolist():
        started = time.perf_counter_ns()
        index.query(q)
        spent.append(time.perf_counter_ns() - started)
    return float(np.percentile(spent, 50)) / 1000, float(np.percentile(spent, 99)) / 1000


def online(count: int, query_count: int, compress: bool) -> dict[str, Any]:
    values = planted(count, seed=count + 1)
    design = HammingDesign((16, 16, 16, 16), 1)
    index = HammingIndex(design, K)
    started = time.perf_counter()
    index.add(values, np.arange(count))
    index.freeze()
    build = time.perf_counter() - started
    if compress:
        index.compress()
    rng = np.random.default_rng(7)
    queries = values[rng.integers(0, count, query_count)]
    flips = rng.integers(0, 64, query_count).astype(np.uint64)
    queries = queries ^ (np.uint64(1) << flips)
    p50, p99 = latencies(index, queries)
    segment = index.segments[0]
    return {"fingerprints": count, "tables": len(design.tables()), "compressed": compress,
            "p50_us": round(p50, 2), "p99_us": round(p99, 2),
            "inserts_per_second": round(count / build),
            "ram_bytes_per_fingerprint": round(segment.nbytes / count, 2)}


def store_inserts(documents: int) -> dict[str, Any]:
    rng = random.Random(1)
    vocabulary = [f"w{i}" for i in range(20000)]
    docs = [Document(id=str(i), raw=" ".join(rng.choices(vocabulary, k=300)).encode(),
                     kind="text", url=f"http://h{i % 50}.example/{i}") for i in range(documents)]
    directory = Path(tempfile.mkdtemp(prefix="neardup-bench-"))
    try:
        result: dict[str, Any] = {"documents": documents}
        for compress in (False, True):
            target = directory / f"store-{compress}"
            started = time.perf_counter()
            with open_store(target, StoreConfig(compress=compress)) as store:
                store.add(docs)
                store.flush()
            seconds = time.perf_counter() - started
            disk = sum(p.stat().st_size for p in (target / "segments").rglob("*.npy"))
            key = "compressed" if compress else "plain"
            result[key] = {"documents_per_second": round(documents / seconds),
                           "segment_bytes_per_fingerprint": round(disk / documents, 2)}
        return result
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--queries", type=int, default=20000)
    parser.add_argument("--documents", type=int, default=20000)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    batch = [batch_all_pairs(n) for n in sizes]
    queries = [online(n, args.queries, c) for n in sizes[-1:] for c in (False, True)]
    inserts = store_inserts(args.documents)
    rows = [[f"all-pairs k=3, {b['fingerprints']:,} fps ({b['tables']} tables)",
             f"{b['join_seconds']} s (sorts {b['sorts_seconds']} s)",
             f"{b['ratio']}x the sorts, median of 5 interleaved rounds (target <= 1.5x)"]
            for b in batch]
    rows += [[f"online query, {q['fingerprints']:,} stored, "
              f"{'compressed' if q['compressed'] else 'plain'}",
              f"p50 {q['p50_us']} us, p99 {q['p99_us']} us",
              f"{q['ram_bytes_per_fingerprint']} B/fp in RAM"] for q in queries]
    rows += [[f"store inserts ({inserts['documents']:,} 300-word docs), {key}",
              f"{inserts[key]['documents_per_second']:,} docs/s",
              f"{inserts[key]['segment_bytes_per_fingerprint']} B/fp on disk"]
             for key in ("plain", "compressed")]
    table = markdown_table(["measure", "result", "note"], rows)
    write_results(RESULTS_DIR / "hamming_index.json",
                  {"environment": environment(["numpy", "numba"]), "batch": batch,
                   "online": queries, "store_inserts": inserts}, table)


if __name__ == "__main__":
    main()
