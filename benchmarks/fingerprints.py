"""Fingerprint throughput, single core: neardup simhash and min-hash against their peers.

Peers: datasketch and rensa (min-hash), python-simhash (Rust, when installed) and a naive
pure-Python simhash. Each neardup method is quoted against the *fastest* peer of its family
measured in the same run (never the slowest).

    python benchmarks/fingerprints.py [--out benchmarks/results/fingerprints.json] [--docs N]

The input is 5,000-character texts cut, in order, from the plain text that resiliparse extracts from
the trafilatura evaluation pages (``../shared/data/html/trafilatura-eval/pages/*.html.gz``). Every
method is timed *from text*: the tokenisation and shingling it needs are inside the timed region.
datasketch and rensa get the same tokens and 5-word shingles as neardup's min-hash (neardup's
canonical form, joined by spaces). Each method is warmed up (numba JIT), then run over the full set
``--repeat`` times (3), round-robin with the others; the best time counts. neardup's own time is
also broken down into canonicalise, shingle and combine, each timed alone on the previous stage's
precomputed output, in the same round-robin.
"""

from __future__ import annotations

import argparse
import gzip
import importlib
import pkgutil
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from importlib import metadata
from pathlib import Path
from typing import Any

import datasketch
import numpy as np
import rensa
import xxhash
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import detect_encoding
from resiliparse.parse.html import HTMLTree

from common import (
    DATA_DIR,
    RESULTS_DIR,
    Timing,
    environment,
    interleaved_calls,
    load_average,
    markdown_table,
    pin_single_core,
    require_data,
    skip,
    write_results,
)
from neardup.features.shingles import distinct, shingle_hashes
from neardup.fingerprints.minhash import MinHash
from neardup.fingerprints.simhash import SimHash, simhash_from_hashes
from neardup.text.canonical import canonical_bytes, canonical_text

DOC_CHARS = 5_000
MIN_PAGE_CHARS = 500
NUM_PERM = 128
SEED = 1
REPEAT = 3
WARMUP_DOCS = 50
SIMHASH_TARGET = 5_000.0
MINHASH_TARGET = 3_000.0
PACKAGES = ("neardup", "numpy", "numba", "xxhash", "datasketch", "rensa", "python-simhash",
            "resiliparse")
_WORD = re.compile(r"\w+")

Run = Callable[[Sequence[str]], object]


@dataclass(frozen=True, slots=True)
class Method:
    """One way to fingerprint every text of the set; ``run`` covers text to fingerprint."""

    name: str
    run: Run
    includes: str
    target: float | None = None
    family: str = "minhash"
    """simhash or minhash: a neardup method is quoted against the fastest peer of its family."""


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a pipeline, run over the previous stage's precomputed output."""

    group: str
    name: str
    run: Callable[[], object]


# ---------------------------------------------------------------- texts


def page_text(path: Path) -> str:
    """The plain text resiliparse extracts from one gzipped HTML page."""
    raw = gzip.decompress(path.read_bytes())
    tree = HTMLTree.parse_from_bytes(raw, detect_encoding(raw) or "utf-8")
    return str(extract_plain_text(tree))


def load_texts(pages: Path, docs: int) -> tuple[list[str], int]:
    """Up to ``docs`` consecutive DOC_CHARS-character texts, and how many pages fed them."""
    parts: list[str] = []
    size = 0
    for path in sorted(pages.glob("*.html.gz")):
        text = page_text(path).strip()
        if len(text) < MIN_PAGE_CHARS:
            continue
        parts.append(text)
        size += len(text) + 1
        if size >= docs * DOC_CHARS:
            break
    corpus = "\n".join(parts)
    texts = [corpus[i : i + DOC_CHARS] for i in range(0, len(corpus) - DOC_CHARS + 1, DOC_CHARS)]
    return texts[:docs], len(parts)


# ---------------------------------------------------------------- tokenisers of the references


def canonical_shingles(text: str, width: int = 5) -> list[bytes]:
    """neardup's canonical tokens joined into w-shingles, as UTF-8 bytes (all tokens if fewer).

    Bytes suit both references: datasketch's hash functions take bytes, rensa takes str or bytes;
    splitting the canonical bytes and joining with ``zip`` is the fastest pure-Python way found
    (about 1.6x faster than decoding to str and slicing the token list).
    """
    tokens = canonical_bytes(text).split()
    if len(tokens) <= width:
        return [b" ".join(tokens)] if tokens else []
    return list(map(b" ".join, zip(*(tokens[i:] for i in range(width)), strict=False)))


def naive_simhash(text: str, width: int, binary: bool) -> int:
    """Pure-Python simhash: ``re`` tokens, xxh3 per w-shingle, 64 counters in a Python loop.

    With ``binary`` each distinct shingle counts once (a ``set``), else each occurrence counts.
    """
    tokens = _WORD.findall(text.casefold())
    count = max(1, len(tokens) - width + 1) if tokens else 0
    shingles = [" ".join(tokens[i : i + width]) for i in range(count)]
    counters = [0] * 64
    for shingle in set(shingles) if binary else shingles:
        h = xxhash.xxh3_64_intdigest(shingle.encode("utf-8"))
        for bit in range(64):
            counters[bit] += 1 if (h >> bit) & 1 else -1
    return sum(1 << bit for bit in range(64) if counters[bit] > 0)


# ---------------------------------------------------------------- the methods


def neardup_methods() -> list[Method]:
    simhash, minhash = SimHash(), MinHash()

    def run_simhash(texts: Sequence[str]) -> object:
        return [simhash.of_canonical(canonical_bytes(text)) for text in texts]

    def run_minhash(texts: Sequence[str]) -> object:
        return [minhash.of_canonical(canonical_bytes(text)) for text in texts]

    inside = ("canonical_bytes (str.casefold, encode, numba scan) + hashed shingles (numba) "
              "+ combine (numba)")
    distinct_step = " + distinct (sort)" if simhash.config.weighting == "binary" else ""
    return [
        Method(f"neardup SimHash ({simhash.tag})", run_simhash,
               inside.replace(" + combine", distinct_step + " + combine"), SIMHASH_TARGET,
               "simhash"),
        Method(f"neardup MinHash ({minhash.tag})", run_minhash, inside, MINHASH_TARGET,
               "minhash"),
    ]


def datasketch_methods() -> list[Method]:
    template = datasketch.MinHash(num_perm=NUM_PERM, seed=SEED)
    perms, scheme = template.permutations, template.scheme

    def run_reused(texts: Sequence[str]) -> object:
        signatures = []
        for text in texts:
            sketch = datasketch.MinHash(num_perm=NUM_PERM, permutations=perms, scheme=scheme)
            sketch.update_batch(canonical_shingles(text))
            signatures.append(sketch.hashvalues)
        return signatures

    def run_fresh(texts: Sequence[str]) -> object:
        signatures = []
        for text in texts:
            sketch = datasketch.MinHash(num_perm=NUM_PERM, seed=SEED)
            sketch.update_batch(canonical_shingles(text))
            signatures.append(sketch.hashvalues)
        return signatures

    inside = (f"neardup canonical tokens -> 5-shingle bytes (Python) + update_batch "
              f"(sha1_hash32 per shingle in Python, numpy {scheme})")
    return [
        Method("datasketch MinHash(128), permutations reused", run_reused, inside),
        Method("datasketch MinHash(128), new per doc (defaults)", run_fresh,
               inside + " + permutation generation per doc"),
    ]


def rensa_methods() -> list[Method]:
    def per_doc(cls: type[rensa.RMinHash] | type[rensa.CMinHash]) -> Run:
        def run(texts: Sequence[str]) -> object:
            digests = []
            for text in texts:
                sketch = cls(num_perm=NUM_PERM, seed=SEED)
                sketch.update(canonical_shingles(text))
                digests.append(sketch.digest())
            return digests

        return run

    def run_matrix(texts: Sequence[str]) -> object:
        sets = [canonical_shingles(text) for text in texts]
        return rensa.RMinHash.digest_matrix_from_token_sets(sets, NUM_PERM, SEED)

    inside = "neardup canonical tokens -> 5-shingle bytes (Python) + rensa (Rust) hash, min"
    return [
        Method("rensa RMinHash(128)", per_doc(rensa.RMinHash), inside + " + digest()"),
        Method("rensa CMinHash(128)", per_doc(rensa.CMinHash), inside + " + digest()"),
        Method("rensa RMinHash bulk digest_matrix_from_token_sets", run_matrix,
               inside + ", one call for the whole set"),
    ]


def naive_methods() -> list[Method]:
    """The naive simhash with neardup's default shingle width and weighting."""
    config = SimHash().config
    width, binary = config.shingles.width, config.weighting == "binary"

    def run(texts: Sequence[str]) -> object:
        return [naive_simhash(text, width, binary) for text in texts]

    inside = (f"re \\w+ tokens + {width}-shingle str ({config.weighting}) + xxh3_64 per "
              "shingle + 64 counters in Python")
    return [Method("naive Python simhash", run, inside, family="simhash")]


def python_simhash_methods() -> list[Method]:
    """python-simhash (Rust; its module is ``simhash``), fed neardup's canonical tokens."""
    try:
        peer = importlib.import_module("simhash")
        compute = peer.simhash
    except (ImportError, AttributeError):
        return []
    binary = SimHash().config.weighting == "binary"

    def run(texts: Sequence[str]) -> object:
        out = []
        for text in texts:
            tokens = canonical_text(text).split()
            out.append(compute(list(dict.fromkeys(tokens)) if binary else tokens, "xxh3"))
        return out

    inside = ("neardup canonical_text + str.split (Python)" + (" + distinct (dict)" if binary
              else "") + " + python-simhash (Rust: xxh3 per token, 64 counters)")
    return [Method("python-simhash (Rust), xxh3", run, inside, family="simhash")]


# ---------------------------------------------------------------- neardup's breakdown


def neardup_stages(texts: Sequence[str]) -> list[Stage]:
    """Each stage alone, on the precomputed output of the one before."""
    simhash, minhash = SimHash(), MinHash()
    w_sim, s_sim = simhash.config.shingles.width, simhash.config.shingles.seed
    w_min, s_min = minhash.config.shingles.width, minhash.config.shingles.seed
    folded = [text.casefold() for text in texts]
    canon = [canonical_bytes(text) for text in texts]
    sim_raw = [shingle_hashes(c, w_sim, s_sim) for c in canon]
    sim_feats = sim_raw
    min_feats = [shingle_hashes(c, w_min, s_min) for c in canon]
    stages = [
        Stage("both", "canonicalise: canonical_bytes(text)",
              lambda: [canonical_bytes(t) for t in texts]),
        Stage("both", "  of which str.casefold (Python)", lambda: [t.casefold() for t in texts]),
        Stage("both", "  of which .encode('utf-8') of the casefolded text",
              lambda: [t.encode("utf-8", "surrogatepass") for t in folded]),
        Stage("simhash", f"shingle: shingle_hashes(canonical, w={w_sim})",
              lambda: [shingle_hashes(c, w_sim, s_sim) for c in canon]),
    ]
    if simhash.config.weighting == "binary":
        stages.append(Stage("simhash", "distinct: features.shingles.distinct (binary weighting)",
                            lambda: [distinct(f) for f in sim_raw]))
        sim_feats = [distinct(f) for f in sim_raw]
    return [*stages,
            Stage("simhash", "combine: simhash_from_hashes (64 counters)",
                  lambda: [simhash_from_hashes(f) for f in sim_feats]),
            Stage("minhash", f"shingle: shingle_hashes(canonical, w={w_min})",
                  lambda: [shingle_hashes(c, w_min, s_min) for c in canon]),
            Stage("minhash", f"combine: MinHash.of_shingles (k={minhash.config.num_perm})",
                  lambda: [minhash.of_shingles(f) for f in min_feats])]


def reference_stages(texts: Sequence[str]) -> list[Stage]:
    """What the references spend outside and inside the library."""
    shingles = [canonical_shingles(text) for text in texts]
    template = datasketch.MinHash(num_perm=NUM_PERM, seed=SEED)

    def datasketch_only() -> object:
        for doc in shingles:
            sketch = datasketch.MinHash(num_perm=NUM_PERM, permutations=template.permutations,
                                        scheme=template.scheme)
            sketch.update_batch(doc)
        return None

    def rensa_only() -> object:
        for doc in shingles:
            sketch = rensa.RMinHash(num_perm=NUM_PERM, seed=SEED)
            sketch.update(doc)
            sketch.digest()
        return None

    return [
        Stage("references", "canonical tokens -> 5-shingle bytes (canonical_shingles)",
              lambda: [canonical_shingles(t) for t in texts]),
        Stage("references", "datasketch MinHash + update_batch only", datasketch_only),
        Stage("references", "rensa RMinHash update + digest only", rensa_only),
    ]


# ---------------------------------------------------------------- measuring and reporting


def summary(times: Sequence[Timing], docs: int) -> dict[str, Any]:
    """The fastest run (wall clock): seconds, docs/s, per-doc time, its CPU share; the spread."""
    best = min(times, key=lambda timing: timing.wall)
    return {"seconds": best.wall, "docs_per_s": docs / best.wall,
            "us_per_doc": 1e6 * best.wall / docs, "cpu_share": best.cpu_share,
            "spread": max(t.wall for t in times) / best.wall,
            "runs": [{"wall": t.wall, "cpu": t.cpu} for t in times]}


def stage_key(stage: Stage) -> str:
    return f"stage {stage.group}/{stage.name}"


def measure(
    methods: Sequence[Method], stages: Sequence[Stage], texts: Sequence[str], repeat: int
) -> dict[str, list[Timing]]:
    """Warm the methods up, then time methods and stages in one round-robin, ``repeat`` times.

    One round-robin makes the breakdown and the end-to-end times share the same conditions.
    """
    for method in methods:
        method.run(texts[:WARMUP_DOCS])
    runs: dict[str, Callable[[], object]] = {m.name: partial(m.run, texts) for m in methods}
    runs.update({stage_key(stage): stage.run for stage in stages})
    return interleaved_calls(runs, repeat)


def method_rows(
    methods: Sequence[Method], times: dict[str, list[Timing]], docs: int
) -> list[dict[str, Any]]:
    rows = []
    for method in methods:
        row = {"name": method.name, **summary(times[method.name], docs)}
        rate = row["docs_per_s"]
        rows.append({**row, "includes": method.includes, "target_docs_per_s": method.target,
                     "ratio_to_target": rate / method.target if method.target else None,
                     "family": method.family})
    for row in rows:
        peers = [r for r in rows if r["family"] == row["family"]
                 and not r["name"].startswith("neardup")]
        fastest = max(peers, key=lambda r: r["docs_per_s"], default=None)
        is_ours = row["name"].startswith("neardup")
        row["reference"] = fastest["name"] if fastest is not None and is_ours else None
        row["ratio_to_reference"] = (row["docs_per_s"] / fastest["docs_per_s"]
                                     if fastest is not None and is_ours else None)
    return rows


def stage_rows(
    stages: Sequence[Stage], times: dict[str, list[Timing]], docs: int
) -> list[dict[str, Any]]:
    return [{"group": s.group, "stage": s.name, **summary(times[stage_key(s)], docs)}
            for s in stages]


def corpus_stats(texts: Sequence[str], pages: int, source: Path) -> dict[str, Any]:
    tokens = [len(canonical_text(t).split()) for t in texts]
    where = f"../shared/data/{source.relative_to(DATA_DIR).as_posix()}"
    return {"source": where, "pages_used": pages, "docs": len(texts),
            "chars_per_doc": DOC_CHARS, "extractor": "resiliparse extract_plain_text",
            "mean_utf8_bytes": float(np.mean([len(t.encode("utf-8")) for t in texts])),
            "mean_canonical_tokens": float(np.mean(tokens))}


def methods_table(rows: Sequence[dict[str, Any]]) -> str:
    def ratio(value: float | None) -> str:
        return f"{value:.2f}x" if value is not None else ""

    return markdown_table(
        ["method", "docs/s", "µs/doc", "worst/best", "CPU share", "target", "vs target",
         "vs fastest peer", "timed region (from text)"],
        [[r["name"], f"{r['docs_per_s']:,.0f}", f"{r['us_per_doc']:,.0f}", f"{r['spread']:.2f}",
          f"{r['cpu_share']:.2f}",
          f"{r['target_docs_per_s']:,.0f}" if r["target_docs_per_s"] else "",
          ratio(r["ratio_to_target"]),
          f"{ratio(r['ratio_to_reference'])} ({r['reference']})" if r["reference"] else "",
          r["includes"]]
         for r in rows])


def stages_table(rows: Sequence[dict[str, Any]], methods: Sequence[dict[str, Any]]) -> str:
    """The breakdown, with each neardup stage's share of its pipeline's end-to-end time."""
    whole = {group: next(m["us_per_doc"] for m in methods if m["name"].startswith(prefix))
             for group, prefix in (("simhash", "neardup SimHash"), ("minhash", "neardup MinHash"))}

    def share(row: dict[str, Any]) -> str:
        groups = list(whole) if row["group"] == "both" else [row["group"]]
        parts = [f"{100 * row['us_per_doc'] / whole[g]:.0f}% of {g}" for g in groups if g in whole]
        return ", ".join(parts)

    return markdown_table(
        ["pipeline", "stage", "µs/doc", "share of end-to-end", "worst/best", "CPU share"],
        [[r["group"], r["stage"], f"{r['us_per_doc']:,.1f}", share(r), f"{r['spread']:.2f}",
          f"{r['cpu_share']:.2f}"] for r in rows])


def simhash_note() -> str:
    """Whether the installed datasketch offers a simhash (2.0.0 does not)."""
    version = metadata.version("datasketch")
    modules = [m.name for m in pkgutil.walk_packages(datasketch.__path__, "datasketch.")]
    found = [n for n in [*dir(datasketch), *modules] if "simhash" in n.lower()]
    if found:
        return f"datasketch {version} has simhash-like names {found}, not benchmarked here."
    return (f"datasketch {version} has no simhash (no class or module of that name); the simhash "
            "peers are python-simhash (when installed) and a naive pure-Python one.")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "fingerprints.json")
    parser.add_argument("--docs", type=int, default=2000, help="number of 5,000-char texts")
    parser.add_argument("--repeat", type=int, default=REPEAT, help="runs per method; best counts")
    parser.add_argument("--cpu", type=int, default=0, help="the CPU to pin the process to")
    args = parser.parse_args(argv)
    if args.docs < 1 or args.repeat < 1:
        parser.error("--docs and --repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    pages = require_data("html", "trafilatura-eval", "pages")
    cpu = pin_single_core(args.cpu)
    env = environment(PACKAGES)
    texts, used = load_texts(pages, args.docs)
    if not texts:
        skip(f"no page under {pages} gives {MIN_PAGE_CHARS}+ characters of text")
    if len(texts) < args.docs:
        print(f"note: only {len(texts)} texts of {DOC_CHARS} chars available", file=sys.stderr)
    methods = (neardup_methods() + datasketch_methods() + rensa_methods() + naive_methods()
               + python_simhash_methods())
    stages = neardup_stages(texts) + reference_stages(texts)
    print(f"timing {len(methods)} methods and {len(stages)} stages on {len(texts)} texts, "
          f"best of {args.repeat} (round-robin), on CPU {cpu}...", file=sys.stderr)
    times = measure(methods, stages, texts, args.repeat)
    methods_out = method_rows(methods, times, len(texts))
    stages_out = stage_rows(stages, times, len(texts))
    notes = [simhash_note(),
             "Stages are timed alone on precomputed inputs, in the same round-robin as the "
             "methods; their sum can differ slightly from the end-to-end time.",
             f"Load average (1, 5, 15 min) at start {env['load_average']}, at end "
             f"{load_average()}; 'worst/best' is the spread of the {args.repeat} runs; "
             "'CPU share' is process CPU time / wall time of the best run (below ~0.95: the "
             "core was shared)."]
    payload = {"benchmark": "fingerprints", "environment": env,
               "timing": {"repeat": args.repeat, "statistic": "best", "pinned_cpu": cpu,
                          "warmup_docs": WARMUP_DOCS, "clock": "time.perf_counter"},
               "corpus": corpus_stats(texts, used, pages), "methods": methods_out,
               "breakdown": stages_out, "notes": notes}
    table = methods_table(methods_out) + "\n\n" + stages_table(stages_out, methods_out)
    write_results(args.out, payload, table + "\n\n" + "\n".join(f"- {n}" for n in notes))


if __name__ == "__main__":
    main()
