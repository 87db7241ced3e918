"""One-permutation min-hash (``neardup.methods.oph``) against k-permutation min-hash (``MinHash``).

Both at 128 slots and 5-word shingles (the defaults), one process pinned to one core.

- **Speed**: the plain text resiliparse extracts (``neardup.text.extract``, ``full``) from the
  trafilatura evaluation pages (``../shared/data/html/trafilatura-eval/pages/*.html.gz``),
  canonicalised beforehand, whole and cut short (see *short pages* below). Timed apart,
  round-robin, best of ``--repeat``: the shingle hashes of every page alone
  (``shingle_hashes``), each signer over the precomputed hashes (``of_shingles``: signatures
  per second), and each signer from canonical text (``of_canonical``: shingling included).
- **Quality**, on three corpora with planted near-copies, every resemblance exact (shingle sets):
  *pages*: every page with at least ``MIN_TOKENS`` tokens plus ``COPIES`` copies of it, each
  with a share of its words substituted, inserted or deleted (a rate drawn from
  ``EDIT_RATES``, replacement words from the other pages); *short pages*: the same with each
  page first cut to 20-120 tokens, fewer shingles than slots, so that most of OPH's bins are
  empty and densification decides; *synthetic*:
  ``neardup.evaluation.synthetic`` pairs (insertions, deletions, another template, an ad block,
  paragraphs reordered, copies, rewrites, unrelated pages) at several edit and rewrite rates.
  (1) The RMSE and the mean error of the estimate (share of equal slots) against the true
  resemblance of each planted pair, by resemblance bucket, pooled over the seeds ``SEEDS``.
  (2) LSH banding at threshold 0.8 with the bands the minhash method chooses
  (``choose_bands(128, 0.8, LSH_FALSE_POSITIVE_WEIGHT)``) for both signers, so the candidate
  curve, hence the false-positive rate, is the same: candidates, true positives (resemblance >=
  0.8), false positives and recall against every pair of the corpus at >= 0.8 (all pairs
  counted exactly through an inverted index of the shingles), per seed; the table shows the
  means over the seeds.

    python benchmarks/oph.py [--repeat 7] [--pages N] [--synthetic-pairs 400]

Writes ``results/oph.json`` and prints the tables.
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import statistics
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from common import (
    RESULTS_DIR,
    environment,
    interleaved_calls,
    load_average,
    markdown_table,
    pin_single_core,
    require_data,
    write_results,
)
from neardup.config import MinHashConfig
from neardup.evaluation.synthetic import SyntheticConfig, synthetic_pairs
from neardup.features.shingles import shingle_hashes, shingle_set
from neardup.fingerprints.minhash import MinHash
from neardup.index.lsh import choose_bands, lsh_pairs
from neardup.methods.minhash import LSH_FALSE_POSITIVE_WEIGHT
from neardup.methods.oph import OnePermutationMinHash
from neardup.text.canonical import canonical_bytes
from neardup.text.extract import extract

NUM_PERM = 128
THRESHOLD = 0.8
SEEDS = (1, 2, 3, 4, 5)
MIN_TOKENS = 20
COPIES = 2
SHORT_TOKENS = (20, 120)
EDIT_RATES = (0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2)
SYNTHETIC_RATES = ((0.01, 0.2), (0.03, 0.3), (0.06, 0.5), (0.1, 0.7), (0.2, 0.9))
BUCKETS = (0.0, 0.2, 0.4, 0.6, 0.8, 0.9, 0.95, 1.0)
SIGNERS: dict[str, Callable[[MinHashConfig], Any]] = {
    "oph": OnePermutationMinHash, "minhash": MinHash}
PACKAGES = ("neardup", "numpy", "numba", "resiliparse")

Pairs = list[tuple[int, int]]


# ---------------------------------------------------------------- inputs


def page_texts(limit: int | None) -> list[bytes]:
    """The canonical text of every page with at least MIN_TOKENS tokens (up to ``limit``)."""
    root = require_data("html", "trafilatura-eval", "pages")
    texts = []
    for path in sorted(root.glob("*.html.gz"))[:limit]:
        canonical = canonical_bytes(extract(gzip.decompress(path.read_bytes()), "full"))
        if canonical.count(b" ") + 1 >= MIN_TOKENS:
            texts.append(canonical)
    return texts


def edit_words(words: list[bytes], rate: float, vocabulary: list[bytes],
               rng: np.random.Generator) -> list[bytes]:
    """``words`` with ``rate`` of them (at least one) substituted, inserted or deleted."""
    out = list(words)
    for _ in range(max(1, round(rate * len(words)))):
        at, kind = int(rng.integers(0, len(out))), int(rng.integers(0, 3))
        word = vocabulary[int(rng.integers(0, len(vocabulary)))]
        if kind == 0:
            out[at] = word
        elif kind == 1:
            out.insert(at, word)
        elif len(out) > 1:
            del out[at]
    return out


def edited_pages(texts: Sequence[bytes], seed: int = 7) -> tuple[list[bytes], Pairs]:
    """The pages and COPIES edited copies of each; the (page, copy) pairs."""
    rng = np.random.default_rng(seed)
    vocabulary = sorted({w for text in texts for w in text.split(b" ")})
    docs, planted = list(texts), []
    for index, text in enumerate(texts):
        words = text.split(b" ")
        for _ in range(COPIES):
            rate = EDIT_RATES[int(rng.integers(0, len(EDIT_RATES)))]
            planted.append((index, len(docs)))
            docs.append(b" ".join(edit_words(words, rate, vocabulary, rng)))
    return docs, planted


def cut_pages(texts: Sequence[bytes], seed: int = 8) -> list[bytes]:
    """Each page cut to its first SHORT_TOKENS[0]..SHORT_TOKENS[1] tokens: fewer shingles than
    slots, so densification is at work."""
    rng = np.random.default_rng(seed)
    low, high = SHORT_TOKENS
    return [b" ".join(t.split(b" ")[: int(rng.integers(low, high + 1))]) for t in texts]


def synthetic_corpus(pairs: int) -> tuple[list[bytes], Pairs]:
    """The texts of neardup.evaluation.synthetic pairs at several edit rates; their pairs."""
    docs: list[bytes] = []
    planted: Pairs = []
    for seed, (edit, rewrite) in enumerate(SYNTHETIC_RATES):
        config = SyntheticConfig(pairs=pairs, seed=seed, edit_rate=edit, rewrite_rate=rewrite)
        for pair in synthetic_pairs(config):
            planted.append((len(docs), len(docs) + 1))
            docs += [canonical_bytes(pair.text_a or ""), canonical_bytes(pair.text_b or "")]
    return docs, planted


# ---------------------------------------------------------------- exact resemblance


def resemblance(sets: Sequence[np.ndarray], pairs: np.ndarray) -> np.ndarray:
    """The exact Jaccard resemblance of each (i, j) row of ``pairs``."""
    out = np.empty(len(pairs))
    for row, (i, j) in enumerate(pairs):
        shared = np.intersect1d(sets[i], sets[j], assume_unique=True).size
        union = sets[i].size + sets[j].size - shared
        out[row] = shared / union if union else 1.0
    return out


def similar_pairs(sets: Sequence[np.ndarray], threshold: float) -> set[tuple[int, int]]:
    """Every pair (i < j) of the corpus with resemblance >= ``threshold``, exactly: the pairs
    that share a shingle come from an inverted index, those whose sizes allow it are measured."""
    docs = np.repeat(np.arange(len(sets)), [s.size for s in sets])
    values = np.concatenate(sets)
    order = np.argsort(values, kind="stable")
    values, docs = values[order], docs[order]
    starts = np.flatnonzero(np.r_[True, values[1:] != values[:-1]])
    sizes = np.diff(np.r_[starts, values.size])
    keys = [docs[s:s + n] for s, n in zip(starts, sizes, strict=True) if n > 1]
    sharing = {(int(a), int(b)) for group in keys for a in group for b in group if a < b}
    candidates = np.array(sorted(sharing), dtype=np.int64).reshape(-1, 2)
    sizes = np.array([s.size for s in sets])
    small, large = np.sort(sizes[candidates], axis=1).T
    candidates = candidates[small >= threshold * large]  # J <= |small| / |large|
    measured = resemblance(sets, candidates)
    return {(int(i), int(j)) for (i, j), r in zip(candidates, measured, strict=True)
            if r >= threshold}


# ---------------------------------------------------------------- speed


def _each(function: Callable[[Any], object], items: Sequence[Any]) -> list[object]:
    return [function(item) for item in items]


def speed(texts: Sequence[bytes], repeat: int) -> dict[str, Any]:
    """Seconds (best of ``repeat``, round-robin) of shingling and of each signer."""
    hashes = [shingle_hashes(text, 5, 0) for text in texts]
    signers = {name: make(MinHashConfig(num_perm=NUM_PERM)) for name, make in SIGNERS.items()}
    runs: dict[str, Callable[[], object]] = {
        "shingle hashes alone": lambda: [shingle_hashes(text, 5, 0) for text in texts]}
    for name, signer in signers.items():
        runs[f"{name} of_shingles"] = partial(_each, signer.of_shingles, hashes)
        runs[f"{name} of_canonical"] = partial(_each, signer.of_canonical, texts)
    for run in runs.values():
        run()  # JIT warm-up
    calls = interleaved_calls(runs, repeat)
    counts = [h.size for h in hashes]
    result: dict[str, Any] = {"documents": len(texts),
                              "shingles_mean": round(statistics.fmean(counts), 1),
                              "shingles_median": statistics.median(counts), "runs": {}}
    for name, timings in calls.items():
        best = min(timings, key=lambda t: t.wall)
        cpu = min(t.cpu for t in timings)
        result["runs"][name] = {"best_wall_s": round(best.wall, 5),
                                "cpu_share": round(best.cpu_share, 3),
                                "docs_per_s": round(len(texts) / best.wall, 1),
                                "us_per_doc": round(best.wall / len(texts) * 1e6, 2),
                                "best_cpu_s": round(cpu, 5),
                                "cpu_us_per_doc": round(cpu / len(texts) * 1e6, 2)}
    return result


# ---------------------------------------------------------------- quality


def signatures(docs: Sequence[bytes], name: str, seed: int) -> np.ndarray:
    signer = SIGNERS[name](MinHashConfig(num_perm=NUM_PERM, seed=seed))
    return np.stack([signer.of_canonical(doc) for doc in docs])


def error_by_bucket(truth: np.ndarray, estimates: np.ndarray) -> list[dict[str, Any]]:
    """RMSE and mean error of the estimates per true-resemblance bucket."""
    rows = []
    for low, high in itertools.pairwise(BUCKETS):
        inside = (truth >= low) & ((truth < high) | (high == 1.0))
        if not inside.any():
            continue
        error = estimates[inside] - truth[inside]
        rows.append({"bucket": f"[{low}, {high}{']' if high == 1.0 else ')'}",
                     "pairs": int(inside.sum()), "rmse": float(np.sqrt(np.mean(error ** 2))),
                     "mean_error": float(error.mean())})
    return rows


def lsh_counts(sigs: np.ndarray, truth: set[tuple[int, int]]) -> dict[str, Any]:
    bands = choose_bands(NUM_PERM, THRESHOLD, LSH_FALSE_POSITIVE_WEIGHT)
    first, second = lsh_pairs(sigs, bands)
    found = {(int(min(a, b)), int(max(a, b))) for a, b in zip(first, second, strict=True)}
    hits = len(found & truth)
    return {"bands": bands.bands, "rows": bands.rows, "candidates": len(found),
            "true_positives": hits, "false_positives": len(found) - hits,
            "recall": hits / len(truth) if truth else 1.0}


def quality(docs: Sequence[bytes], planted: Pairs) -> dict[str, Any]:
    """Estimate errors on the planted pairs and LSH counts over the corpus, per signer."""
    sets = [shingle_set(doc, 5, 0) for doc in docs]
    pairs = np.array(planted, dtype=np.int64)
    true_r = resemblance(sets, pairs)
    truth = similar_pairs(sets, THRESHOLD)
    out: dict[str, Any] = {"documents": len(docs), "planted_pairs": len(planted),
                           "pairs_at_threshold": len(truth), "signers": {}}
    for name in SIGNERS:
        estimates, lsh = [], []
        for seed in SEEDS:
            sigs = signatures(docs, name, seed)
            estimates.append(np.mean(sigs[pairs[:, 0]] == sigs[pairs[:, 1]], axis=1))
            lsh.append(lsh_counts(sigs, truth))
        out["signers"][name] = {
            "error": error_by_bucket(np.tile(true_r, len(SEEDS)), np.concatenate(estimates)),
            "lsh": lsh}
    return out


# ---------------------------------------------------------------- report


def speed_table(results: dict[str, Any]) -> str:
    rows = []
    for texts, result in results.items():
        runs = result["runs"]
        wall = runs["minhash of_shingles"]["best_wall_s"]
        cpu = runs["minhash of_shingles"]["best_cpu_s"]
        for name, r in runs.items():
            ratio = "of_shingles" in name
            rows.append([f"{texts} ({result['shingles_mean']:,.0f} shingles)", name,
                         f"{r['docs_per_s']:,.0f}", f"{r['us_per_doc']:.2f}",
                         f"{r['cpu_share']:.2f}", f"{r['cpu_us_per_doc']:.2f}",
                         f"{wall / r['best_wall_s']:.1f}" if ratio else "",
                         f"{cpu / r['best_cpu_s']:.1f}" if ratio else ""])
    return markdown_table(["texts (mean shingles)", "run", "documents per s",
                           "µs per document", "CPU share", "CPU µs per document",
                           "vs minhash of_shingles (wall)", "(CPU)"], rows)


def error_table(corpora: dict[str, Any]) -> str:
    rows = []
    for corpus, result in corpora.items():
        oph, minhash = (result["signers"][n]["error"] for n in ("oph", "minhash"))
        for a, b in zip(oph, minhash, strict=True):
            rows.append([corpus, a["bucket"], a["pairs"], f"{a['rmse']:.4f}",
                         f"{b['rmse']:.4f}", f"{a['mean_error']:+.4f}", f"{b['mean_error']:+.4f}"])
    return markdown_table(["corpus", "true J", "pairs x seeds", "RMSE oph", "RMSE minhash",
                           "mean error oph", "mean error minhash"], rows)


def lsh_table(corpora: dict[str, Any]) -> str:
    rows = []
    for corpus, result in corpora.items():
        for name in SIGNERS:
            runs = result["signers"][name]["lsh"]
            mean = {key: statistics.fmean(r[key] for r in runs)
                    for key in ("candidates", "true_positives", "false_positives", "recall")}
            recalls = [r["recall"] for r in runs]
            rows.append([corpus, name, f"{runs[0]['bands']}x{runs[0]['rows']}",
                         f"{mean['candidates']:.1f}", f"{mean['true_positives']:.1f}",
                         f"{mean['false_positives']:.1f}", result["pairs_at_threshold"],
                         f"{mean['recall']:.4f}", f"{min(recalls):.4f}-{max(recalls):.4f}"])
    return markdown_table(["corpus", "signer", "bands x rows", "candidates", "true positives",
                           "false positives", "pairs >= 0.8", "recall",
                           f"recall range ({len(SEEDS)} seeds)"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--pages", type=int, default=None, help="read only the first N pages")
    parser.add_argument("--synthetic-pairs", type=int, default=400, help="per edit rate")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "oph.json")
    args = parser.parse_args()
    cpu = pin_single_core()
    load_start = load_average()
    texts = page_texts(args.pages)
    short = cut_pages(texts)
    speed_result = {"pages": speed(texts, args.repeat), "short pages": speed(short, args.repeat)}
    corpora = {"pages": quality(*edited_pages(texts)),
               "short pages": quality(*edited_pages(short, seed=8)),
               "synthetic": quality(*synthetic_corpus(args.synthetic_pairs))}
    table = "\n\n".join([speed_table(speed_result), error_table(corpora), lsh_table(corpora)])
    payload = {"num_perm": NUM_PERM, "threshold": THRESHOLD, "seeds": list(SEEDS),
               "edit_rates": list(EDIT_RATES), "synthetic_rates": SYNTHETIC_RATES,
               "pinned_cpu": cpu, "speed": speed_result, "quality": corpora,
               "load_average_start": load_start, "load_average_end": load_average(),
               "environment": environment(PACKAGES)}
    write_results(args.out, payload, table)


if __name__ == "__main__":
    main()
