"""Compressed Hamming tables (Manku section 3.2): size, build time and probe time.

For each fingerprint set, the 4-table design (4 blocks of 16 bits, one leads, p = 16) is built:
each table is the fingerprints permuted and sorted, then compressed (B = 1024 bytes). Per table:
- the compression ratio (compressed bytes / 8 N) and bits per fingerprint, against the size model
  for N uniformly random values (``modelled_bits_per_fingerprint``);
- build time (compression of the sorted table), and, as the reference measured in the same run,
  the time to sort the permuted fingerprints once;
- probe time, warm: the stored values sharing each query's top p bits, found for every query
  inside one compiled (numba) loop on each side: the compressed table through the kernel the
  store uses (``blockcodec.decode_range``), and, the reference, the uncompressed sorted table
  through a compiled binary search (``np.searchsorted`` in numba) and a copy of the run found;
  mean nanoseconds per probe, interleaved, median of 5 rounds. For information, the latency of
  one ``CompressedTable.range`` call from Python (p50, p99), which adds Python's call overhead.

Fingerprint sets:
- real: 64-bit simhash (neardup defaults) of the pages in ``html/trafilatura-eval`` and
  ``html/zyte-article-benchmark`` (full text, resiliparse), and of the same plus every document of
  the WARC and ARC files in ``warc/``; queries are the stored fingerprints, each with 0 to 3
  random bits flipped;
- random: N uniformly random 64-bit values (the paper's regime), N = 1M and 10M; random queries.

    python benchmarks/compression.py [--sizes 1000000 10000000] [--probes 20000] [--cpu 0]
"""

from __future__ import annotations

import argparse
import gzip
import time
from pathlib import Path
from typing import Any

import numpy as np
from numba import njit

from common import (
    DATA_DIR,
    RESULTS_DIR,
    environment,
    load_average,
    markdown_table,
    pin_single_core,
    require_data,
    write_results,
)
from neardup.fingerprints.simhash import SimHash
from neardup.index.blockcodec import decode_range
from neardup.index.compressed import (
    CompressedTable,
    leading_bit_histogram,
    modelled_bits_per_fingerprint,
)
from neardup.index.hamming import permute_table
from neardup.index.planner import plan
from neardup.methods.fingerprinter import document_text
from neardup.sources import open_sources
from neardup.text.canonical import canonical_bytes
from neardup.text.html import extract_text

BLOCK_BYTES = 1024


def page_fingerprints(directory: Path) -> list[int]:
    """Simhash of every HTML page under ``directory`` with some text."""
    simhash, out = SimHash(), []
    for path in sorted(directory.rglob("*.htm*")):
        raw = path.read_bytes()
        canonical = canonical_bytes(extract_text(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b"
                                                 else raw))
        if canonical:
            out.append(simhash.of_canonical(canonical))
    return out


def warc_fingerprints(directory: Path) -> list[int]:
    simhash, out = SimHash(), []
    files = sorted(str(p) for p in directory.glob("*.gz"))
    for doc in open_sources(files):
        canonical = canonical_bytes(document_text(doc, "full"))
        if canonical:
            out.append(simhash.of_canonical(canonical))
    return out


def real_sets() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    html = require_data("html")
    pages = page_fingerprints(html / "trafilatura-eval") + page_fingerprints(
        html / "zyte-article-benchmark")
    everything = pages + warc_fingerprints(DATA_DIR / "warc")
    rng = np.random.default_rng(11)
    sets = {}
    for name, values in (("real: trafilatura + zyte pages", pages),
                         ("real: pages + WARC/ARC documents", everything)):
        stored = np.array(values, dtype=np.uint64)
        queries = stored.copy()
        for _ in range(3):
            flip = rng.random(queries.size) < 0.5
            bits = rng.integers(0, 64, queries.size).astype(np.uint64)
            queries[flip] ^= np.uint64(1) << bits[flip]
        sets[name] = (stored, queries)
    return sets


@njit(cache=True)
def _plain_batch(plain: np.ndarray, lows: np.ndarray, highs: np.ndarray) -> int:
    found = 0
    for i in range(lows.size):
        start = np.searchsorted(plain, lows[i])
        end = np.searchsorted(plain, highs[i], side="right")
        found += plain[start:end].copy().size
    return found


@njit(cache=True)
def _compressed_batch(words: np.ndarray, keys: np.ndarray, offsets: np.ndarray,
                      table: np.ndarray, peek: int, block_words: int, lows: np.ndarray,
                      highs: np.ndarray) -> int:
    found = 0
    for i in range(lows.size):
        values, _ = decode_range(words, keys, offsets, table, peek, block_words, lows[i],
                                 highs[i])
        found += values.size
    return found


def _bounds(queries: np.ndarray, prefix: int) -> tuple[np.ndarray, np.ndarray]:
    shift = np.uint64(64 - prefix)
    low = (queries >> shift) << shift
    return low, low | ((np.uint64(1) << shift) - np.uint64(1))


def batch_times(table: CompressedTable, plain: np.ndarray, queries: np.ndarray,
                prefix: int, rounds: int = 5) -> dict[str, Any]:
    """Mean ns per probe of each side's compiled loop over all queries, interleaved; the
    median of ``rounds``. Both sides must find the same number of values."""
    low, high = _bounds(queries, prefix)
    low_bits, high_bits = low.view(np.int64), high.view(np.int64)
    decoder = table.decoder()
    compressed, reference = [], []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        got = _compressed_batch(*decoder, low_bits, high_bits)
        middle = time.perf_counter_ns()
        want = _plain_batch(plain, low, high)
        end = time.perf_counter_ns()
        if got != want:
            raise AssertionError("compressed and plain probes disagree")
        compressed.append((middle - start) / queries.size)
        reference.append((end - middle) / queries.size)
    return {"batch_ns_per_probe": float(np.median(compressed)),
            "reference_batch_ns_per_probe": float(np.median(reference)),
            "batch_ratio": float(np.median(compressed) / np.median(reference)),
            "values_per_probe": want / queries.size}


def call_latency(table: CompressedTable, queries: np.ndarray, prefix: int) -> dict[str, Any]:
    """p50 and p99 of one ``range`` call from Python (call overhead included)."""
    low, high = _bounds(queries, prefix)
    clock, spent = time.perf_counter_ns, []
    for a, b in zip(low.tolist(), high.tolist(), strict=True):
        start = clock()
        table.range(a, b)
        spent.append(clock() - start)
    micro = np.array(spent) / 1000
    return {"call_p50_us": float(np.percentile(micro, 50)),
            "call_p99_us": float(np.percentile(micro, 99))}


def measure_table(stored: np.ndarray, layout: Any, queries: np.ndarray) -> dict[str, Any]:
    permuted = permute_table(stored, layout)
    start = time.perf_counter()
    plain = np.sort(permuted)
    sort_s = time.perf_counter() - start
    start = time.perf_counter()
    table = CompressedTable.build(plain, BLOCK_BYTES)
    build_s = time.perf_counter() - start
    assert np.array_equal(table.decode_all(), plain)
    histogram = leading_bit_histogram(plain)
    h = np.arange(64)
    mean_h = float((histogram[:64] * h).sum() / max(histogram[:64].sum(), 1))
    permuted_queries = permute_table(queries, layout)
    probes = {**batch_times(table, plain, permuted_queries, layout.prefix_bits),
              **call_latency(table, permuted_queries, layout.prefix_bits)}
    return {"prefix_bits": layout.prefix_bits, "blocks": table.blocks,
            "compressed_bytes": table.nbytes, "ratio": table.nbytes / (8 * stored.size),
            "bits_per_fingerprint": table.bits_per_fingerprint, "mean_h": mean_h,
            "repeats": int(histogram[64]), "sort_s": sort_s, "build_s": build_s,
            "build_per_sort": build_s / sort_s, **probes}


def measure_set(stored: np.ndarray, queries: np.ndarray) -> dict[str, Any]:
    tables = plan(64, 3, stored.size, tables=4).tables
    warm = CompressedTable.build(np.sort(stored[:1000]), BLOCK_BYTES)  # JIT and caches
    warm.range(0, 2**64 - 1)
    per_table = [measure_table(stored, layout, queries) for layout in tables]
    return {"fingerprints": int(stored.size), "distinct": int(np.unique(stored).size),
            "queries": int(queries.size),
            "modelled_bits_per_fingerprint": modelled_bits_per_fingerprint(stored.size),
            "tables": per_table}


def rows(name: str, result: dict[str, Any]) -> list[list[str]]:
    out = []
    for index, t in enumerate(result["tables"], 1):
        out.append([name, f"{result['fingerprints']:,}", str(index), f"{t['ratio']:.3f}",
                    f"{t['bits_per_fingerprint']:.1f}",
                    f"{result['modelled_bits_per_fingerprint']:.1f}", f"{t['mean_h']:.1f}",
                    f"{t['build_s'] * 1000:.1f}", f"{t['sort_s'] * 1000:.1f}",
                    f"{t['batch_ns_per_probe']:.0f}", f"{t['reference_batch_ns_per_probe']:.0f}",
                    f"{t['batch_ratio']:.2f}", f"{t['call_p50_us']:.1f}",
                    f"{t['call_p99_us']:.1f}", f"{t['values_per_probe']:.1f}"])
    return out


HEADERS = ("fingerprints", "N", "table", "ratio", "bits/fp", "model bits/fp (random)", "mean h",
           "build ms", "sort ms", "compressed ns/probe (compiled loop)",
           "plain ns/probe (compiled searchsorted)", "compressed / plain",
           "one range() call from Python p50 µs", "p99 µs", "values/probe")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", type=int, nargs="*", default=[1_000_000, 10_000_000])
    parser.add_argument("--probes", type=int, default=20_000)
    parser.add_argument("--cpu", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "compression.json")
    args = parser.parse_args()
    sets = real_sets()
    cpu = pin_single_core(args.cpu)
    started_load = load_average()
    rng = np.random.default_rng(7)
    for size in args.sizes:
        stored = rng.integers(0, 2**64, size, dtype=np.uint64)
        sets[f"random: {size:,} uniform"] = (stored, rng.integers(0, 2**64, args.probes,
                                                                  dtype=np.uint64))
    warm = CompressedTable.build(np.sort(rng.integers(0, 2**64, 5000, dtype=np.uint64)))
    batch_times(warm, warm.decode_all(), warm.decode_all()[:100], 16, rounds=1)  # compile
    results = {name: measure_set(stored, queries) for name, (stored, queries) in sets.items()}
    table = markdown_table(HEADERS, [row for name, r in results.items() for row in rows(name, r)])
    table += ("\n\n4-table design (4 blocks of 16 bits, p = 16), B = 1024 bytes; ratio = "
              "compressed bytes / (8 N); probes: the values sharing each query's top 16 bits, "
              "every query in one compiled loop per side (compressed: blockcodec.decode_range; "
              "plain: np.searchsorted twice and a copy, in numba), interleaved, median of 5 "
              "rounds; the last columns: one CompressedTable.range call from Python.")
    payload = {"benchmark": "compression", "environment": environment(["neardup", "numpy",
                                                                        "numba"]),
               "pinned_cpu": cpu, "load_average_start": started_load,
               "load_average_end": load_average(), "block_bytes": BLOCK_BYTES,
               "design": "4 tables: 4 blocks of 16 bits, 1 leading (p = 16)", "sets": results}
    write_results(args.out, payload, table)


if __name__ == "__main__":
    main()
