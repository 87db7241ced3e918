"""Broder's sketch clustering at scale, its estimators' error, and datasketch on the same input.

1. **Throughput and peak memory vs the number of documents** (10^4, 10^5, 10^6 by default):
   generated documents of ``--shingles`` random 64-bit shingle hashes with planted resemblance
   (:func:`neardup.evaluation.planted.planted_sets`: groups of 5 near-copies at about 0.8
   resemblance to their base, three single documents between groups). Each size and each side
   runs in its own process (so that its peak RSS is its own), single core, and **neither side is
   traced** (tracemalloc slows Python-level code, datasketch's most): phase 1 (MOD_25 sketches
   of 40-bit fingerprints, vectorized over chunks of 50,000 documents; generating the shingles
   is not timed), phase 2 (shingle merging), phase 3 (pair formation and merging), phase 4
   (estimates and union-find at 0.5). CPU and wall seconds per phase and the peak RSS of the
   process (generation and imports included). Quality: precision and recall of the
   same-cluster pairs against the planted groups.
2. **datasketch on the same input, same run** (sizes up to ``--datasketch-max``), in a process
   of its own, untraced: MinHash(128, scheme affine64, the same shingle hashes as input,
   permutations made once) and MinHashLSH at threshold 0.5; candidates kept when their MinHash
   Jaccard >= 0.5; union-find; wall seconds (shingle generation included, 1-2% of it) and peak
   RSS.
3. **Estimator error vs sketch size**: pairs of 2,000-shingle sets at resemblance 0.2, 0.5, 0.8;
   MIN_s (s = 25..400), MOD_m with m chosen for the same expected sample (80..5), and datasketch
   MinHash with k = s permutations; bias and RMSE against the exact Jaccard.

    python benchmarks/sketch_clustering.py [--sizes 10000 100000 1000000] [--shingles 500]
                                           [--datasketch-max 100000] [--pairs 200]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from common import (
    RESULTS_DIR,
    environment,
    load_average,
    markdown_table,
    pin_single_core,
    write_results,
)
from neardup.cluster.broder import count_shared, drop_common, expand_sorted, sketch_estimates
from neardup.cluster.unionfind import components
from neardup.config import SketchConfig
from neardup.evaluation.planted import planted_sets, resembling_pair
from neardup.fingerprints.sketch import Sketcher, estimate_resemblance
from neardup.overlap.phases import PhaseMeter

THRESHOLD = 0.5
PATTERN = (1, 1, 1, 5)


def pair_quality(labels: np.ndarray, group: np.ndarray) -> dict[str, float]:
    """Precision and recall of same-cluster pairs against the planted same-group pairs."""
    def pairs(counts: np.ndarray) -> int:
        return int((counts * (counts - 1) // 2).sum())
    _, both = np.unique(np.stack([labels, group]), axis=1, return_counts=True)
    true_positive = pairs(both)
    found = pairs(np.unique(labels, return_counts=True)[1])
    planted = pairs(np.unique(group, return_counts=True)[1])
    return {"precision": round(true_positive / found, 4) if found else 1.0,
            "recall": round(true_positive / planted, 4) if planted else 1.0}


def sketch_corpus(count: int, shingles: int, meter: PhaseMeter) -> tuple[Any, ...]:
    """Phase 1 over generated chunks: only the sketching is timed."""
    sketcher = Sketcher(SketchConfig())
    values, sizes, moduli, groups, seconds = [], [], [], [], [0.0, 0.0]
    for chunk in planted_sets(count, shingles, 0.8, PATTERN, seed=7):
        cpu, wall = time.process_time(), time.perf_counter()
        flat, offsets, chunk_moduli = sketcher.of_many(chunk.flat, chunk.offsets)
        seconds[0] += time.process_time() - cpu
        seconds[1] += time.perf_counter() - wall
        values.append(flat)
        sizes.append(np.diff(offsets))
        moduli.append(chunk_moduli)
        groups.append(chunk.group)
    meter.phases["sketch"] = {"cpu_seconds": round(seconds[0], 3),
                              "wall_seconds": round(seconds[1], 3)}
    offsets = np.concatenate(([0], np.cumsum(np.concatenate(sizes)))).astype(np.int64)
    return (np.concatenate(values), offsets, np.concatenate(moduli), np.concatenate(groups))


def run_neardup(count: int, shingles: int) -> dict[str, Any]:
    meter = PhaseMeter(trace=False)
    flat, offsets, moduli, group = sketch_corpus(count, shingles, meter)
    with meter.phase("shingle_merging"):
        runs = drop_common(expand_sorted(flat, offsets), 1000)
    with meter.phase("pair_formation_and_merging"):
        shared = count_shared(runs, count)
    with meter.phase("estimates_and_union_find"):
        resemblance, _, _ = sketch_estimates(flat, offsets, moduli, runs, shared, SketchConfig())
        keep = resemblance >= THRESHOLD
        labels = components(count, shared.a[keep], shared.b[keep])
    phases = meter.as_dict()
    total = sum(float(p["wall_seconds"]) for k, p in phases.items() if isinstance(p, dict))
    return {"documents": count, "shingles_per_document": shingles, "phases": phases,
            "sketch_values": int(flat.size), "triplets": shared.triplets,
            "pairs": int(shared.a.size), "linked_pairs": int(keep.sum()),
            "clusters": int(np.count_nonzero(np.bincount(labels, minlength=count) > 1)),
            "wall_seconds": round(total, 3), "documents_per_second": round(count / total),
            **pair_quality(labels, group)}


def run_datasketch(count: int, shingles: int) -> dict[str, Any]:
    from datasketch import MinHash, MinHashLSH

    template = MinHash(num_perm=128, scheme="affine64", hashfunc=int)
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=128)
    signatures: list[Any] = []
    groups = []
    wall = time.perf_counter()
    for chunk in planted_sets(count, shingles, 0.8, PATTERN, seed=7):
        groups.append(chunk.group)
        for index in range(chunk.offsets.size - 1):
            values = chunk.flat[chunk.offsets[index]:chunk.offsets[index + 1]].tolist()
            minhash = MinHash(num_perm=128, scheme="affine64", hashfunc=int,
                              permutations=template.permutations)
            minhash.update_batch(values)
            lsh.insert(len(signatures), minhash)
            signatures.append(minhash)
    a, b = [], []
    for key, minhash in enumerate(signatures):
        for other in lsh.query(minhash):
            if other > key and minhash.jaccard(signatures[other]) >= THRESHOLD:
                a.append(key)
                b.append(other)
    labels = components(count, np.array(a, np.int64), np.array(b, np.int64))
    seconds = time.perf_counter() - wall
    return {"documents": count, "wall_seconds": round(seconds, 3),
            "documents_per_second": round(count / seconds),
            "peak_rss_bytes": PhaseMeter().as_dict()["peak_rss_bytes"],
            "note": "shingle generation included in the time (about 1-2% of it)",
            **pair_quality(labels, np.concatenate(groups))}


def one_side(count: int, shingles: int, side: str) -> dict[str, Any]:
    pin_single_core()
    if side == "datasketch":
        return run_datasketch(count, shingles)
    run_neardup(400, shingles)  # warm-up: load the compiled numba functions
    return run_neardup(count, shingles)


def estimator_errors(pairs: int) -> list[dict[str, Any]]:
    from datasketch import MinHash

    rng = np.random.default_rng(11)
    rows = []
    for resemblance in (0.2, 0.5, 0.8):
        sets = [resembling_pair(2000, resemblance, rng) for _ in range(pairs)]
        exact = np.array([np.intersect1d(a, b).size / np.union1d(a, b).size for a, b in sets])
        for samples in (25, 50, 100, 200, 400):
            methods = {f"MIN_{samples}": SketchConfig(kind="min", size=samples),
                       f"MOD_{4000 // samples // 2}": SketchConfig(size=4000 // samples // 2)}
            for name, config in methods.items():
                sketcher = Sketcher(config)
                estimates = np.array([estimate_resemblance(sketcher.of_shingles(a),
                                                           sketcher.of_shingles(b), config)
                                      for a, b in sets])
                rows.append(_error_row(name, samples, resemblance, estimates - exact))
            template = MinHash(num_perm=samples, scheme="affine64", hashfunc=int)
            estimates = []
            for a, b in sets:
                first, second = (MinHash(num_perm=samples, scheme="affine64", hashfunc=int,
                                         permutations=template.permutations) for _ in "ab")
                first.update_batch(a.tolist())
                second.update_batch(b.tolist())
                estimates.append(first.jaccard(second))
            rows.append(_error_row(f"datasketch k={samples}", samples, resemblance,
                                   np.array(estimates) - exact))
    return rows


def _error_row(name: str, samples: int, resemblance: float, error: np.ndarray) -> dict[str, Any]:
    return {"estimator": name, "expected_samples": samples, "resemblance": resemblance,
            "bias": round(float(error.mean()), 4),
            "rmse": round(float(np.sqrt((error ** 2).mean())), 4)}


def _tables(sizes: list[dict[str, Any]], errors: list[dict[str, Any]]) -> str:
    scale = markdown_table(
        ["documents", "sketch s", "merge s", "pairs s", "estimate+union-find s", "docs/s",
         "peak RSS MB", "precision", "recall", "datasketch docs/s", "datasketch peak RSS MB",
         "datasketch precision", "datasketch recall", "speed ratio"],
        [_scale_row(entry) for entry in sizes])
    by_name: dict[str, dict[float, float]] = {}
    for row in errors:
        by_name.setdefault(row["estimator"], {})[row["resemblance"]] = row["rmse"]
    error = markdown_table(["estimator", "RMSE at r=0.2", "r=0.5", "r=0.8"],
                           [[name, *(f"{v:.4f}" for v in values.values())]
                            for name, values in by_name.items()])
    return f"{scale}\n\n{error}"


def _scale_row(entry: dict[str, Any]) -> list[object]:
    ours, theirs = entry["neardup"], entry.get("datasketch")
    phases = ours["phases"]
    ratio = (f"{ours['documents_per_second'] / theirs['documents_per_second']:.0f}x"
             if theirs else "")
    return [f"{ours['documents']:,}", phases["sketch"]["wall_seconds"],
            phases["shingle_merging"]["wall_seconds"],
            phases["pair_formation_and_merging"]["wall_seconds"],
            phases["estimates_and_union_find"]["wall_seconds"],
            f"{ours['documents_per_second']:,}",
            round(phases["peak_rss_bytes"] / 2**20), ours["precision"], ours["recall"],
            f"{theirs['documents_per_second']:,}" if theirs else "not run",
            round(theirs["peak_rss_bytes"] / 2**20) if theirs else "",
            theirs["precision"] if theirs else "", theirs["recall"] if theirs else "", ratio]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--shingles", type=int, default=500)
    parser.add_argument("--datasketch-max", type=int, default=100_000)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--side", choices=["neardup", "datasketch"], help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "sketch_clustering.json")
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one_side(args.one, args.shingles, args.side)))
        return
    sizes = []
    for count in args.sizes:
        entry: dict[str, Any] = {"load_average": load_average()}
        for side in ("neardup", "datasketch")[:1 + (count <= args.datasketch_max)]:
            command = [sys.executable, __file__, "--one", str(count), "--shingles",
                       str(args.shingles), "--side", side]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            entry[side] = json.loads(output.splitlines()[-1])
        sizes.append(entry)
        print(f"{count:,} documents done (load {load_average()})", file=sys.stderr)
    errors = estimator_errors(args.pairs)
    write_results(args.out, {"benchmark": "sketch_clustering", "threshold": THRESHOLD,
                             "pattern": PATTERN, "environment": environment(
                                 ["numpy", "numba", "datasketch"]),
                             "sizes": sizes, "estimator_errors": errors},
                  _tables(sizes, errors))


if __name__ == "__main__":
    main()
