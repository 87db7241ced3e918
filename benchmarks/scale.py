"""Scale: ``neardup dedup`` as whole processes over generated JSONL.gz corpora.

For each size (``--documents``), a corpus of 2 to 5 KB documents with planted exact and near
copies (scale_corpus.py) is generated once under benchmarks/work/. Then, per method (simhash,
minhash), one ``neardup dedup`` process runs over it; recorded: wall and CPU seconds (the
process and its workers, from wait4), peak RSS (the largest single process, and the largest sum
over the process tree sampled every 50 ms), work-directory bytes per document, and the recall
(per edit level) and precision of the planted pairs. ``--speedup N`` also times ``--workers 1``
against ``--workers 2`` on the first N documents, as one file and as 8 files, interleaved,
``--repeat`` times each (medians). ``--datatrove N`` runs datatrove's minhash deduplication
(scale_datatrove.py) on the first N documents beside ``neardup --method minhash --workers 1``.
Results are merged into benchmarks/results/scale.json (one entry per size).

    python benchmarks/scale.py --documents 100000 --speedup 100000 --datatrove 30000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow.compute as pc
import pyarrow.parquet as pq

from common import BENCHMARKS_DIR, RESULTS_DIR, environment, load_average, markdown_table
from neardup.engine.sizing import COSTS, estimate_run, load_costs
from neardup.errors import ConfigError
from scale_corpus import make_corpus

WORK = BENCHMARKS_DIR / "work"
RESULTS = RESULTS_DIR / "scale.json"
NEARDUP = str(Path(sys.executable).with_name("neardup"))


def _tree(pid: int) -> list[int]:
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    queue.extend(int(child) for child in children.read().split())
        except OSError:
            continue
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        return 0


def measure(command: Sequence[str]) -> dict[str, Any]:
    """Run ``command`` as a whole process: wall, CPU (with its children), peak RSS."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL)
    tree_peak = 0
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        tree_peak = max(tree_peak, sum(_rss(child) for child in _tree(process.pid)))
        time.sleep(0.05)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"{' '.join(command)}: exit status {process.returncode}")
    return {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "peak_tree_rss_mb": round(tree_peak / 2**20, 1)}


def dedup(inputs: Sequence[Path], out: Path, method: str, workers: int,
          memory: str = "2G") -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    return measure([NEARDUP, "dedup", *map(str, inputs), "--out", str(out), "--method", method,
                    "--workers", str(workers), "--memory-limit", memory, "--quiet",
                    "--work", str(out / "work")])


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _families(labels: Path) -> tuple[dict[str, str], list[tuple[str, str, float]]]:
    family, planted, original_doc = {}, [], {}
    with open(labels) as rows:
        for line in rows:
            row = json.loads(line)
            if "original_id" in row:
                family[row["doc"]] = row["original_id"]
                original_doc[row["original_id"]] = row["doc"]
            else:
                family[row["copy"]] = row["original"]
                planted.append((row["copy"], original_doc[row["original"]], row["level"]))
    return family, planted


def quality(out: Path, labels: Path) -> dict[str, Any]:
    """Recall of the planted pairs (same output cluster), per edit level, and the precision of
    the reported pairs (both documents planted from one original)."""
    family, planted = _families(labels)
    ids = pq.read_table(out / "documents.parquet", columns=["doc", "id"]).to_pydict()
    name = dict(zip(ids["doc"], ids["id"], strict=True))
    clusters = pq.read_table(out / "clusters.parquet", columns=["doc", "cluster"]).to_pydict()
    cluster_of = {name[d]: c for d, c in zip(clusters["doc"], clusters["cluster"], strict=True)}
    levels: dict[str, list[int]] = {}
    for copy, original, level in planted:
        same = cluster_of.get(copy, -1) == cluster_of.get(original, -2)
        levels.setdefault(f"{level:.2f}", []).append(int(same))
    pairs = pq.read_table(out / "pairs.parquet", columns=["a", "b"]).to_pydict()
    right = sum(family[name[a]] == family[name[b]] for a, b in zip(pairs["a"], pairs["b"],
                                                                    strict=True))
    found = sum(sum(hits) for hits in levels.values())
    return {"planted_pairs": len(planted),
            "recall": round(found / max(1, len(planted)), 4),
            "recall_by_edit_level": {level: round(sum(hits) / len(hits), 4)
                                     for level, hits in sorted(levels.items())},
            "reported_pairs": len(pairs["a"]),
            "precision": round(right / max(1, len(pairs["a"])), 4)}


def _split_files(corpus: Path, documents: int, files: int) -> list[Path]:
    """The first ``documents`` lines of the corpus, as one file and as ``files`` files."""
    folder = WORK / f"split-{documents}-{files}"
    paths = [folder / f"part-{index:02d}.jsonl.gz" for index in range(files)]
    if all(path.exists() for path in paths):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    with gzip.open(corpus, "rt") as lines:
        for index, path in enumerate(paths):
            with gzip.open(path, "wt", compresslevel=1) as out:
                for _ in range((index + 1) * documents // files - index * documents // files):
                    out.write(next(lines))
    return paths


def speedup(corpus: Path, documents: int, repeat: int) -> dict[str, Any]:
    """Median wall and CPU of ``--workers 1`` and ``--workers 2`` (minhash), interleaved."""
    layouts = {"one file": _split_files(corpus, documents, 1),
               "8 files": _split_files(corpus, documents, 8)}
    found: dict[str, Any] = {}
    for layout, paths in layouts.items():
        runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        for _ in range(repeat):
            for workers in (1, 2):
                runs[workers].append(dedup(paths, WORK / "speedup-out", "minhash", workers))
        medians = {w: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s")}
                   for w, rs in runs.items()}
        found[layout] = {"documents": documents, "runs": runs, "median": medians,
                         "wall_speedup": round(medians[1]["wall_s"] / medians[2]["wall_s"], 3),
                         "load_average_after": load_average()}
    return found


def neardup_runs(corpus: Path, labels: Path, documents: int, workers: int) -> dict[str, Any]:
    found = {}
    for method in ("simhash", "minhash"):
        out = WORK / f"out-{documents}-{method}"
        timing = dedup([corpus], out, method, workers)
        work_bytes = _folder_bytes(out / "work")
        summary = json.loads((out / "summary.json").read_text())
        lengths = pq.read_table(out / "documents.parquet", columns=["length"])["length"]
        found[method] = {**timing, "workers": workers, "documents": summary["documents"],
                         "mean_bytes": round(pc.mean(lengths).as_py(), 1),
                         "cpu_ms_per_doc": round(1000 * timing["cpu_s"] / documents, 3),
                         "work_bytes_per_doc": round(work_bytes / documents, 1),
                         "output_bytes_per_doc": round(
                             (_folder_bytes(out) - work_bytes) / documents, 1),
                         "stage_seconds": summary["seconds"], "load_average": load_average(),
                         **quality(out, labels)}
        shutil.rmtree(out / "work", ignore_errors=True)
    return found


def datatrove(corpus: Path, labels: Path, documents: int) -> dict[str, Any]:
    """datatrove's minhash and ``neardup --method minhash --workers 1`` on the first
    ``documents`` documents of the corpus."""
    [corpus] = _split_files(corpus, documents, 1)
    work = WORK / f"datatrove-{documents}"
    shutil.rmtree(work, ignore_errors=True)
    theirs = measure([sys.executable, str(BENCHMARKS_DIR / "scale_datatrove.py"), str(corpus),
                      str(work)])
    removed = set((work / "removed.txt").read_text().split())
    _, planted = _families(labels)
    copies = {copy for copy, _, _ in planted if int(copy[1:]) < documents}
    out = WORK / f"out-{documents}-dt-minhash"
    ours = dedup([corpus], out, "minhash", 1)
    ids = pq.read_table(out / "documents.parquet", columns=["doc", "id"]).to_pydict()
    name = dict(zip(ids["doc"], ids["id"], strict=True))
    clusters = pq.read_table(out / "clusters.parquet", columns=["doc", "kept"]).to_pydict()
    dropped = {name[d] for d, kept in zip(clusters["doc"], clusters["kept"], strict=True)
               if not kept}
    ours |= {"removed": len(dropped), "removed_planted_copies": len(dropped & copies)}
    return {"datatrove": {**theirs, "removed": len(removed),
                          "removed_planted_copies": len(removed & copies),
                          "planted_copies": len(copies)},
            "neardup_minhash_workers_1": ours,
            "ratios_neardup_over_datatrove": {
                key: round(ours[key] / theirs[key], 3)
                for key in ("wall_s", "cpu_s", "peak_rss_mb", "peak_tree_rss_mb")}}


def unit_costs(run: dict[str, Any], memory: list[list[float]]) -> dict[str, Any]:
    """The per-document costs of one measured run, as neardup.engine.sizing reads them."""
    stages = run["stage_seconds"]
    fingerprint = stages["read_extract_fingerprint"]
    serial = sum(stages[name] for name in ("exact", "near_candidates_and_verification",
                                           "cluster", "outputs"))
    documents = run["documents"]
    startup = max(0.0, run["wall_s"] - fingerprint - serial)
    # CPU, not wall, for the parallel part: other work on the machine stretches the wall
    # clock; the serial stages and start-up are counted at their wall time.
    parallel = max(0.0, run["cpu_s"] - serial - startup)
    return {"documents": documents, "mean_bytes": run["mean_bytes"], "workers": run["workers"],
            "fingerprint_core_s": parallel / documents,
            "serial_s": serial / documents,
            "startup_s": startup,
            "work_bytes": run["work_bytes_per_doc"],
            "output_bytes": run["output_bytes_per_doc"], "peak_tree_rss_mb": memory}


def write_costs(results: dict[str, Any], documents: int) -> dict[str, Any]:
    """Costs from the run of ``documents`` (memory points from every size measured)."""
    entry = results[str(documents)]
    methods = {}
    for method, run in entry["neardup"].items():
        memory = sorted([int(size), other["neardup"][method]["peak_tree_rss_mb"]]
                        for size, other in results.items() if method in other.get("neardup", {}))
        methods[method] = unit_costs(run, memory)
    costs = {"machine": f"{entry['environment']['cpu_count']} x "
                        f"{entry['environment']['cpu_model']}",
             "measured_by": f"benchmarks/scale.py --documents {documents} "
                            f"({entry['environment']['date'][:10]})",
             "methods": methods}
    COSTS.write_text(json.dumps(costs, indent=1) + "\n")
    return costs


def check_plan(entry: dict[str, Any]) -> dict[str, Any]:
    """The ``plan`` estimate (from the costs stored before this run) against each run."""
    try:
        costs = load_costs()
    except ConfigError as err:
        return {"skipped": str(err)}
    checked = {}
    for method, run in entry["neardup"].items():
        if method not in costs["methods"]:
            continue
        guess = estimate_run(run["documents"], method, mean_bytes=int(run["mean_bytes"]),
                             workers=run["workers"], costs=costs)
        measured = {"wall_seconds": run["wall_s"], "cpu_seconds": run["cpu_s"],
                    "work_bytes": run["work_bytes_per_doc"] * run["documents"],
                    "peak_memory_bytes": run["peak_tree_rss_mb"] * 2**20}
        checked[method] = {"basis": guess.basis, **{
            name: {"predicted": round(getattr(guess, name), 1), "measured": round(value, 1),
                   "error": round(getattr(guess, name) / value - 1, 3)}
            for name, value in measured.items()}}
    return checked


def _table(entry: dict[str, Any]) -> str:
    rows = [(entry["documents"], method, run["workers"], run["wall_s"], run["cpu_s"],
             run["cpu_ms_per_doc"], run["peak_rss_mb"], run["peak_tree_rss_mb"],
             run["work_bytes_per_doc"], run["recall"], run["precision"])
            for method, run in entry["neardup"].items()]
    return markdown_table(["documents", "method", "workers", "wall s", "CPU s", "CPU ms/doc",
                           "peak RSS MB", "tree RSS MB", "work B/doc", "recall", "precision"],
                          rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, required=True)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--speedup", type=int, default=0, help="documents of the speed-up runs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--datatrove", type=int, default=0,
                        help="documents of the datatrove side-by-side run")
    parser.add_argument("--skip-runs", action="store_true",
                        help="only the speed-up and datatrove parts (kept beside earlier runs)")
    parser.add_argument("--write-costs", action="store_true",
                        help="store this size's per-document costs for neardup plan")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    corpus = WORK / f"scale-{args.documents}.jsonl.gz"
    started = time.perf_counter()
    labels = make_corpus(corpus, args.documents)
    entry: dict[str, Any] = {"documents": args.documents, "environment": environment(
        ["neardup", "numpy", "pyarrow", "datatrove"]),
        "corpus": {"bytes_gz": corpus.stat().st_size,
                   "generate_s": round(time.perf_counter() - started, 1)}}
    if not args.skip_runs:
        entry["neardup"] = neardup_runs(corpus, labels, args.documents, args.workers)
        entry["plan_check"] = check_plan(entry)
    if args.speedup:
        entry["speedup_workers_2_over_1"] = speedup(corpus, args.speedup, args.repeat)
    if args.datatrove:
        entry["datatrove_side_by_side"] = datatrove(corpus, labels, args.datatrove)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    entry = {**results.get(str(args.documents), {}), **entry}
    entry["markdown"] = _table(entry)
    results[str(args.documents)] = entry
    temporary = RESULTS.with_suffix(".tmp")
    temporary.write_text(json.dumps(results, indent=2) + "\n")
    temporary.replace(RESULTS)
    if args.write_costs:
        write_costs(results, args.documents)
    print(entry["markdown"])
    print(json.dumps({k: v for k, v in entry.items() if k not in ("environment", "markdown")},
                     indent=1))


if __name__ == "__main__":
    main()
