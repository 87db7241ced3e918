"""Chunk-overlap methods: S&GM98's sort-based join vs coarse counting, and SMFA vs chunks vs
simhash time per document (SMFA's Table 2).

Part A, a generated FPrint-DocID relation of ``--documents`` (200,000) documents with the chunk
sharing of a web crawl (:func:`generate`): the in-memory sort, the external sort
(``--memory-limit``) and coarse counting, each in a fresh process, on the same relation. Per run:
wall time, peak memory the algorithm allocated (tracemalloc, above its input) and the process's
peak RSS above its RSS once the relation is loaded (``ru_maxrss``). The Overlap tables must be
identical (their digests are compared). Target: coarse peak <= 25% of the in-memory sort's.

Part B, the engine: ``neardup dedup --method chunks --algorithm sort|coarse`` as whole processes
(``--workers 1``, interleaved, ``--repeat`` times) over the trafilatura pages and near-copies of
them (``--copies`` documents per page), lines:4 T=15 and lines:2 T=25. Per run: wall, CPU and
peak RSS over the process tree, the pairs the sort-based join expanded and spilled to sorted
runs on disk (16 bytes each) against the counters and bitmaps coarse counting held; the pairs
tables must be identical.

Part C, SMFA's Table 2 in kind: ``find_duplicates`` for simhash, chunks (lines:4, coarse) and
smfa on N pages (the trafilatura pages and near-copies of them made by inserting a paragraph and
dropping another), one worker, one core: seconds per document for the whole run and for the
method's own work (its per-document features and its pairing stage).

    python benchmarks/chunk_overlap.py [--documents 200000] [--pages 1000 10000] [--parts ABC]
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import xxhash

from common import (
    BENCHMARKS_DIR,
    RESULTS_DIR,
    TreeSampler,
    environment,
    markdown_table,
    pin_single_core,
    require_data,
    write_results,
)
from neardup.config import ChunkMethod, DedupConfig, OverlapConfig
from neardup.document import Document
from neardup.overlap.coarse import coarse_overlap
from neardup.overlap.relation import ChunkRelation
from neardup.overlap.sortbased import Overlap, sort_overlap
from neardup.pipeline import find_duplicates

WORK = BENCHMARKS_DIR / "work"
TARGET = 0.25
U32 = np.uint32


def generate(documents: int, seed: int) -> list[np.ndarray]:
    """Chunk sets with a crawl's sharing: sites (Zipf sizes up to 1,500 pages) whose pages share
    2 to 8 template chunks (header, navigation, footer); 300 common chunks ("Home", "Copyright")
    in up to 2% of all pages; content of a lognormal number of chunks (median 25); 20% of the
    pages copy a page of the previous 2,000 (a quarter exactly, the rest with up to 30% of their
    chunks changed), so near-duplicate families form."""
    rng = np.random.default_rng(seed)
    sizes: list[int] = []
    while sum(sizes) < documents:
        sizes.append(int(min(rng.zipf(2.0), 1500)))
    sizes[-1] -= sum(sizes) - documents
    site = np.repeat(np.arange(len(sizes)), sizes)
    templates = [rng.integers(0, 2**32, size=int(rng.integers(2, 9)), dtype=np.uint64)
                 for _ in sizes]
    commons = rng.integers(0, 2**32, size=300, dtype=np.uint64)
    popularity = 0.02 / np.arange(1, 301) ** 0.9
    lengths = np.clip(rng.lognormal(np.log(25), 0.6, size=documents), 3, 300).astype(int)
    contents: list[np.ndarray] = []
    sets = []
    for doc in range(documents):
        contents.append(_content(rng, contents, doc, lengths[doc]))
        common = commons[rng.random(300) < popularity]
        chunks = np.concatenate([contents[-1], templates[site[doc]], common])
        sets.append(np.unique(chunks.astype(U32)))
    return sets


def _content(rng: np.random.Generator, contents: list[np.ndarray], doc: int,
             length: int) -> np.ndarray:
    if doc == 0 or rng.random() >= 0.2:
        return rng.integers(0, 2**32, size=length, dtype=np.uint64)
    content = contents[int(rng.integers(max(0, doc - 2000), doc))].copy()
    edit = 0.0 if rng.random() < 0.25 else rng.uniform(0, 0.3)
    changed = rng.random(content.size) < edit
    content[changed] = rng.integers(0, 2**32, size=int(changed.sum()), dtype=np.uint64)
    return content


def _digest(overlap: Overlap) -> str:
    hasher = xxhash.xxh3_128()
    for column in (overlap.a, overlap.b, overlap.shared):
        hasher.update(np.ascontiguousarray(column, dtype="<i8").tobytes())
    return hasher.hexdigest()


def _rss_now() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def child(algorithm: str, path: Path, threshold: int, options: dict[str, Any]) -> None:
    """Run one algorithm on the saved relation; print its measurements as JSON."""
    data = np.load(path)
    relation = ChunkRelation(data["fprints"], data["docs"], int(data["documents"]))
    coarse_overlap(ChunkRelation.from_sets([np.arange(20, dtype=U32)] * 3), 1)  # JIT warm-up
    sort_overlap(ChunkRelation.from_sets([np.arange(20, dtype=U32)] * 3), 1, 2**16)
    before = _rss_now()
    started = time.perf_counter()
    if algorithm == "coarse":
        found = coarse_overlap(relation, threshold, options["buckets"], options["hashes"],
                               options["pilot"])
    else:
        limit = None if algorithm == "sort-memory" else options["memory_limit"]
        found = sort_overlap(relation, threshold, limit, spill_dir=WORK)
    seconds = time.perf_counter() - started
    peak_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    peak = max(int(p["peak_bytes"]) for p in found.phases.values())  # type: ignore[call-overload]
    print(json.dumps({"algorithm": algorithm, "seconds": seconds, "peak_traced_bytes": peak,
                      "rss_increase_bytes": peak_rss - before, "pairs": len(found),
                      "digest": _digest(found), "phases": found.phases}))


def part_a(args: argparse.Namespace) -> dict[str, Any]:
    path = WORK / f"relation-{args.documents}-{args.seed}.npz"
    if not path.exists():
        relation = ChunkRelation.from_sets(generate(args.documents, args.seed))
        WORK.mkdir(parents=True, exist_ok=True)
        np.savez(path, fprints=relation.fprints, docs=relation.docs,
                 documents=relation.documents)
    data = np.load(path)
    relation = ChunkRelation(data["fprints"], data["docs"], int(data["documents"]))
    options = {"buckets": args.buckets, "hashes": args.hashes, "pilot": args.pilot,
               "memory_limit": args.memory_limit}
    runs = {}
    for algorithm in ("sort-memory", "sort-external", "coarse"):
        command = [sys.executable, __file__, "--child", algorithm, str(path), "--threshold",
                   str(args.threshold), "--options", json.dumps(options)]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        runs[algorithm] = json.loads(output.strip().splitlines()[-1])
    sizes = relation.group_sizes()
    return {"documents": args.documents, "rows": len(relation), "pairs": relation.pair_total(),
            "largest_chunk_group": int(sizes.max()), "threshold": args.threshold,
            "options": options, "runs": runs}


def _pages(pages_dir: Path) -> list[bytes]:
    out = []
    for page in sorted(pages_dir.iterdir()):
        raw = page.read_bytes()
        out.append(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    return out


def _variant(html: bytes, rng: np.random.Generator, words: list[str]) -> bytes:
    """A near-copy: a paragraph of 12 random words after <body>, and one paragraph dropped."""
    inserted = "<p>" + " ".join(rng.choice(words, size=12).tolist()) + "</p>"
    text = html.decode("utf-8", "replace")
    paragraphs = [m.span() for m in re.finditer(r"<p[ >].*?</p>", text, re.S)]
    if paragraphs:
        start, end = paragraphs[int(rng.integers(len(paragraphs)))]
        text = text[:start] + text[end:]
    body = re.search(r"<body[^>]*>", text)
    at = body.end() if body else 0
    return (text[:at] + inserted + text[at:]).encode("utf-8")


def corpus(pages: list[bytes], count: int, seed: int) -> list[Document]:
    rng = np.random.default_rng(seed)
    words = [f"word{i}" for i in range(5000)]
    docs = []
    for index in range(count):
        base = pages[index % len(pages)]
        raw = base if index < len(pages) else _variant(base, rng, words)
        docs.append(Document(id=str(index), raw=raw, kind="html", source="bench"))
    return docs


def _engine_run(corpus: Path, out: Path, spec: str, algorithm: str) -> dict[str, Any]:
    """One ``neardup dedup`` process: its tree's wall, CPU and peak RSS, and its summary."""
    command = [str(Path(sys.executable).with_name("neardup")), "dedup", str(corpus), "--out",
               str(out), "--method", "chunks", "--chunk", spec, "--algorithm", algorithm,
               "--workers", "1", "--quiet", "--force"]
    sampler, started = TreeSampler(), time.perf_counter()
    process = subprocess.Popen(command)
    while process.poll() is None:
        sampler.poll(process.pid)
        time.sleep(0.05)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode})")
    near = json.loads((out / "summary.json").read_text())["near"]
    phases = near["phases"]
    held = sum(int(phase.get("counter_bytes", 0)) for phase in phases.values())
    expanded = int(phases.get("expand_sort_runs", {}).get("pairs_expanded", 0))
    return {"wall_s": round(time.perf_counter() - started, 2),
            "cpu_s": round(sampler.cpu_seconds, 2),
            "peak_rss_mb": round(sampler.peak_bytes / 2**20),
            "overlap_pairs": near["overlap_pairs"], "rows": near["fprint_docid_rows"],
            "spilled_pair_bytes": 16 * expanded, "counter_bytes": held,
            "pairs_digest": _table_digest(out / "pairs.parquet")}


def _table_digest(path: Path) -> str:
    import pyarrow.parquet as pq

    table = pq.read_table(path, columns=["a", "b", "shared"])
    return xxhash.xxh3_64_hexdigest(json.dumps(table.to_pydict(), sort_keys=True).encode())


def part_b(pages: list[bytes], copies: int, repeat: int) -> dict[str, Any]:
    corpus_path = WORK / f"chunks-engine-{copies}.jsonl"
    WORK.mkdir(parents=True, exist_ok=True)
    docs = corpus(pages, copies * len(pages), 0)
    corpus_path.write_text("".join(
        json.dumps({"id": d.id, "html": d.raw.decode("utf-8", "replace")}) + "\n" for d in docs))
    runs: dict[str, list[dict[str, Any]]] = {}
    for _ in range(repeat):
        for spec in ("lines:4", "lines:2"):
            for algorithm in ("sort", "coarse"):
                out = WORK / f"chunks-engine-{spec.replace(':', '')}-{algorithm}"
                runs.setdefault(f"{spec} {algorithm}", []).append(
                    _engine_run(corpus_path, out, spec, algorithm))
    return {"documents": len(docs), "repeat": repeat, "runs": runs}


def _method_seconds(result_stats: dict[str, Any]) -> dict[str, float]:
    seconds = result_stats["seconds"]
    return {"total": seconds["read_extract_fingerprint"] + seconds["exact"]
            + seconds.get("near_candidates_and_verification", 0.0) + seconds["cluster"],
            "extract_seconds": seconds["extract_summed"],
            "fingerprint_seconds": seconds["fingerprint_summed"],
            "near": seconds.get("near_candidates_and_verification", 0.0)}


def part_c(pages: list[bytes], counts: list[int]) -> dict[str, Any]:
    methods = {"simhash": DedupConfig(method="simhash"),
               "chunks": DedupConfig(method="chunks", params=ChunkMethod(
                   overlap=OverlapConfig(algorithm="coarse"))),
               "smfa": DedupConfig(method="smfa")}
    find_duplicates(corpus(pages, 50, 1), methods["chunks"])  # JIT warm-up
    out: dict[str, Any] = {}
    for count in counts:
        docs = corpus(pages, count, 1)
        for name, config in methods.items():
            result = find_duplicates(docs, config)
            out[f"{name} {count}"] = {"documents": count, **_method_seconds(result.stats),
                                      "clusters": result.stats["clusters"],
                                      "duplicates": result.stats["duplicates"]}
    return out


def _mb(value: float) -> str:
    return f"{value / 2**20:,.1f}"


def table_a(result: dict[str, Any]) -> str:
    runs = result["runs"]
    reference = runs["sort-memory"]
    rows = [(name, f"{run['seconds']:.1f}", _mb(run["peak_traced_bytes"]),
             _mb(run["rss_increase_bytes"]),
             f"{run['peak_traced_bytes'] / reference['peak_traced_bytes']:.1%}",
             f"{run['pairs']:,}", run["digest"] == reference["digest"])
            for name, run in runs.items()]
    head = (f"{result['documents']:,} generated documents, {result['rows']:,} FPrint-DocID rows, "
            f"{result['pairs']:,} pairs expanded (largest chunk group "
            f"{result['largest_chunk_group']:,}), T = {result['threshold']}\n\n")
    return head + markdown_table(("algorithm", "seconds", "peak MB (tracemalloc)",
                                  "peak RSS increase MB", "peak vs in-memory sort",
                                  "overlap pairs", "same output"), rows)


def table_b(result: dict[str, Any]) -> str:
    rows = []
    for name, runs in result["runs"].items():
        spec = name.split()[0]
        same = {r["pairs_digest"] for r in runs} == {r["pairs_digest"]
                                                     for r in result["runs"][f"{spec} sort"]}
        middle = {key: statistics.median(r[key] for r in runs)
                  for key in ("wall_s", "cpu_s", "peak_rss_mb")}
        rows.append((name, f"{result['documents']:,}", f"{runs[0]['rows']:,}",
                     f"{runs[0]['overlap_pairs']:,}", f"{middle['wall_s']:.1f}",
                     f"{middle['cpu_s']:.1f}", f"{middle['peak_rss_mb']:.0f}",
                     _mb(runs[0]["spilled_pair_bytes"]), _mb(runs[0]["counter_bytes"]), same))
    return markdown_table(("chunking, algorithm", "documents", "rows", "pairs", "wall s (median)",
                           "CPU s", "peak RSS MB", "pairs spilled MB", "counters MB",
                           "same pairs"), rows)


def table_c(result: dict[str, Any]) -> str:
    rows = []
    for name, run in result.items():
        count = run["documents"]
        own = run["near"] + run["fingerprint_seconds"]
        rows.append((name.split()[0], f"{count:,}", f"{run['total']:.1f}",
                     f"{1000 * run['total'] / count:.2f}", f"{1000 * own / count:.3f}",
                     f"{1000 * run['near'] / count:.3f}", run["clusters"]))
    return markdown_table(("method", "pages", "total s", "ms/page, whole run",
                           "ms/page, fingerprint stage + pairing", "ms/page, pairing",
                           "clusters"), rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threshold", type=int, default=15)
    parser.add_argument("--buckets", type=int, default=None, help="default: auto")
    parser.add_argument("--hashes", type=int, default=2)
    parser.add_argument("--pilot", type=float, default=0.01)
    parser.add_argument("--memory-limit", type=int, default=256 * 2**20)
    parser.add_argument("--pages", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--parts", default="ABC")
    parser.add_argument("--copies", type=int, default=4, help="Part B: documents per page")
    parser.add_argument("--repeat", type=int, default=3, help="Part B: runs of each")
    parser.add_argument("--child", nargs=2, metavar=("ALGORITHM", "RELATION"))
    parser.add_argument("--options", default="{}")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "chunk_overlap.json")
    args = parser.parse_args()
    cpu = pin_single_core()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.threshold, json.loads(args.options))
        return
    pages = _pages(require_data("html", "trafilatura-eval", "pages"))
    payload: dict[str, Any] = {"benchmark": "chunk_overlap", "pinned_cpu": cpu}
    if args.out.exists():  # parts not run this time keep their last results
        payload = {**json.loads(args.out.read_text()), **payload}
    tables = []
    for part, run, render in (("A", lambda: part_a(args), table_a),
                              ("B", lambda: part_b(pages, args.copies, args.repeat), table_b),
                              ("C", lambda: part_c(pages, args.pages), table_c)):
        if part in args.parts:
            payload[part] = run()
            payload[f"environment_{part}"] = environment(["neardup", "numpy", "numba"])
        if part in payload:
            tables.append(f"### Part {part}\n\n" + render(payload[part]))
    payload["load_average_end"] = environment([])["load_average"]
    write_results(args.out, payload, "\n\n".join(tables))


if __name__ == "__main__":
    main()
