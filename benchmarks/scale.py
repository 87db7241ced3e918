"""Scale: ``neardup dedup`` as whole processes over generated JSONL.gz corpora.

For each size (``--documents``), a corpus of 2 to 5 KB documents with planted exact and near
copies (scale_corpus.py, 8 files) is generated once under benchmarks/work/ (``--corpus-dir``
elsewhere; the runs' outputs go there too). Then, per method (``--methods``, default simhash
then minhash), one ``neardup dedup`` process runs over it under ``nice -n 5``; recorded: wall
and CPU seconds (the process and its workers, from wait4), peak RSS (the largest single
process, and the largest sum over the process tree sampled every 50 ms), work-directory bytes
per document (in all and per file kind), the free disk it took at its peak, the load average,
and the recall (per edit level) and precision of the planted pairs. A run's outputs and work
directory are deleted once measured. A run is refused when the free disk is less than the
planner's work estimate plus 6 GB (``--disk-margin GB``), and killed when the free disk falls
below 3 GB (both said in the results). ``--parts K`` runs on the first K files only.
``--speedup N`` also times ``--workers 1`` against ``--workers 2`` on the first N documents,
as one file and as 8 files, interleaved, ``--repeat`` times each (medians). ``--datatrove N``
runs datatrove's minhash deduplication (scale_datatrove.py) on the first N documents beside
``neardup --method minhash``, both with ``--datatrove-workers`` processes (default 1) over as many
files. Results are merged into
benchmarks/results/scale.json (one entry per size).

    python benchmarks/scale.py --documents 100000 --speedup 100000 --datatrove 30000
    python benchmarks/scale.py --documents 10000000 --methods simhash
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from common import (
    BENCHMARKS_DIR,
    REPO_DIR,
    RESULTS_DIR,
    TreeSampler,
    environment,
    load_average,
    markdown_table,
)
from neardup.engine.sizing import COSTS, estimate_run, load_costs
from neardup.errors import ConfigError
from scale_corpus import PARTS, corpus_parts, make_corpus

WORK = BENCHMARKS_DIR / "work"
"""The default folder of the corpora (``scale-N/``), split copies and run outputs."""
RESULTS = RESULTS_DIR / "scale.json"
NEARDUP = str(Path(sys.executable).with_name("neardup"))
NICE = ["nice", "-n", "5"]
DISK_MARGIN = 6 * 10**9  # refuse to start a run unless its predicted work fits with this to spare
DISK_FLOOR = 3 * 10**9  # kill a run when the free space falls below this


@dataclass(slots=True)
class Settings:
    """Set once from the command line (``--corpus-dir``, ``--disk-margin``)."""

    work: Path = WORK
    disk_margin: int = DISK_MARGIN


SETTINGS = Settings()


def free_bytes() -> int:
    return shutil.disk_usage(SETTINGS.work).free


def _live_bytes(folder: Path) -> int:
    """The bytes of the files under ``folder`` now (files a running stage removes meanwhile are
    skipped)."""
    total = 0
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


class _Watch:
    """What the poll loop of :func:`measure` sees: tree RSS, free disk, work-directory size,
    load."""

    def __init__(self, disk_floor: int, work: Path | None) -> None:
        self.disk_floor, self.polls = disk_floor, 0
        self.work, self.work_peak = work, 0
        self.free_start = self.free_min = free_bytes()
        self.loads: list[float] = []
        self.killed = ""
        self.tree = TreeSampler()

    def poll(self, process: subprocess.Popen[bytes]) -> None:
        self.tree.poll(process.pid)
        self.polls += 1
        if self.work is not None and self.polls % 20 == 0:  # every second: the work dir
            self.work_peak = max(self.work_peak, _live_bytes(self.work))
        if self.polls % 40:  # every 2 s: disk and load
            return
        self.free_min = min(self.free_min, free := free_bytes())
        self.loads.append(os.getloadavg()[0])
        if free < self.disk_floor and not self.killed:
            self.killed = f"free disk {free / 1e9:.1f} GB < {self.disk_floor / 1e9:.0f} GB"
            os.killpg(process.pid, signal.SIGKILL)

    def report(self) -> dict[str, Any]:
        return {"peak_tree_rss_mb": round(self.tree.peak_bytes / 2**20, 1),
                "peak_process_rss_mb": round(self.tree.peak_process_bytes / 2**20, 1),
                "cpu_tree_s": round(self.tree.cpu_seconds, 2),
                "disk_used_peak_gb": round((self.free_start - self.free_min) / 1e9, 2),
                **({"work_peak_bytes": self.work_peak} if self.work is not None else {}),
                "load_1min_during": {"mean": round(statistics.fmean(self.loads), 2),
                                     "max": round(max(self.loads), 2)} if self.loads else None}


def measure(command: Sequence[str], disk_floor: int = 0,
            work: Path | None = None) -> dict[str, Any]:
    """Run ``command`` as a whole process (its own process group, under ``nice``): wall, CPU
    (with its reaped children, from wait4, and ``cpu_tree_s``: every process of the tree
    sampled from /proc every 50 ms), peak RSS, the largest size of the folder ``work`` (polled
    every second); killed if the free disk falls below ``disk_floor``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    started = time.perf_counter()
    process = subprocess.Popen([*NICE, *command], env=env, stdout=subprocess.DEVNULL,
                               start_new_session=True)
    watch = _Watch(disk_floor, work)
    while True:
        pid, status, usage = os.wait4(process.pid, os.WNOHANG)
        if pid:
            break
        watch.poll(process)
        time.sleep(0.05)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    found = {"wall_s": round(wall, 2), "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
             "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), **watch.report()}
    if watch.killed:
        return {**found, "killed": watch.killed}
    if process.returncode:
        raise SystemExit(f"{' '.join(command)}: exit status {process.returncode}")
    return found


def dedup(inputs: Sequence[Path], out: Path, method: str, workers: int,
          memory: str | None = None, disk_floor: int = 0) -> dict[str, Any]:
    """One ``neardup dedup`` (the default --memory-limit unless ``memory``)."""
    shutil.rmtree(out, ignore_errors=True)
    limit = ["--memory-limit", memory] if memory else []
    return measure([NEARDUP, "dedup", *map(str, inputs), "--out", str(out), "--method", method,
                    "--workers", str(workers), *limit, "--quiet", "--work", str(out / "work")],
                   disk_floor, out / "work")


def _folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def _partition_bytes(work: Path) -> dict[str, float]:
    """Bytes per document of each kind of file of the fingerprint partitions (meta.parquet,
    sequences.npy, tokens.npy, bands.npy...)."""
    found: dict[str, int] = {}
    for path in (work / "fingerprint").glob("*/*"):
        found[path.name] = found.get(path.name, 0) + path.stat().st_size
    return dict(sorted(found.items()))


def _numbers(ids: pa.ChunkedArray) -> np.ndarray:
    """``d123`` -> 123."""
    numbers: np.ndarray = pc.cast(pc.utf8_slice_codeunits(ids, 1), pa.int64()).to_numpy()
    return numbers


def _number_of(out: Path) -> np.ndarray:
    """The corpus number of each internal doc (-1 where none)."""
    table = pq.read_table(out / "documents.parquet", columns=["doc", "id"])
    docs = table["doc"].to_numpy()
    number_of = np.full(int(docs.max()) + 1, -1, dtype=np.int64)
    number_of[docs] = _numbers(table["id"])
    return number_of


def quality(out: Path, labels: dict[str, np.ndarray], documents: int) -> dict[str, Any]:
    """Recall of the planted pairs (same output cluster), per edit level, and the precision of
    the reported pairs (both documents planted from one original)."""
    origin, level = labels["origin"][:documents], labels["level"][:documents]
    number_of = _number_of(out)
    table = pq.read_table(out / "clusters.parquet", columns=["doc", "cluster"])
    cluster = np.full(documents, -1, dtype=np.int64)
    cluster[number_of[table["doc"].to_numpy()]] = table["cluster"].to_numpy()
    copies = np.flatnonzero(level >= 0)
    originals = labels["original_doc"][origin[copies]]
    same = (cluster[copies] == cluster[originals]) & (cluster[copies] >= 0)
    by_level = {f"{value:.2f}": round(float(same[level[copies] == value].mean()), 4)
                for value in np.unique(level[copies])}
    pairs = pq.read_table(out / "pairs.parquet", columns=["a", "b"])
    first, second = (number_of[pairs[side].to_numpy()] for side in ("a", "b"))
    right = int((origin[first] == origin[second]).sum())
    return {"planted_pairs": int(copies.size),
            "recall": round(float(same.mean()), 4) if copies.size else 0.0,
            "recall_by_edit_level": by_level,
            "reported_pairs": int(first.size),
            "precision": round(right / max(1, first.size), 4)}


def _lines(parts: Sequence[Path]) -> Iterator[str]:
    for part in parts:
        with gzip.open(part, "rt") as lines:
            yield from lines


def _split_files(parts: Sequence[Path], documents: int, files: int) -> list[Path]:
    """The first ``documents`` lines of the corpus, as ``files`` files."""
    folder = SETTINGS.work / f"split-{documents}-{files}"
    paths = [folder / f"part-{index:02d}.jsonl.gz" for index in range(files)]
    if all(path.exists() for path in paths):
        return paths
    folder.mkdir(parents=True, exist_ok=True)
    lines = _lines(parts)
    for index, path in enumerate(paths):
        with gzip.open(path, "wt", compresslevel=3) as out:
            for _ in range((index + 1) * documents // files - index * documents // files):
                out.write(next(lines))
    return paths


def speedup(parts: Sequence[Path], documents: int, repeat: int) -> dict[str, Any]:
    """Median wall and CPU of ``--workers 1`` and ``--workers 2`` (minhash), interleaved."""
    layouts = {"one file": _split_files(parts, documents, 1),
               "8 files": _split_files(parts, documents, 8)}
    found: dict[str, Any] = {}
    for layout, paths in layouts.items():
        runs: dict[int, list[dict[str, float]]] = {1: [], 2: []}
        for _ in range(repeat):
            for workers in (1, 2):
                runs[workers].append(dedup(paths, SETTINGS.work / "speedup-out", "minhash",
                                           workers))
        medians = {w: {k: statistics.median(r[k] for r in rs) for k in ("wall_s", "cpu_s")}
                   for w, rs in runs.items()}
        found[layout] = {"documents": documents, "runs": runs, "median": medians,
                         "wall_speedup": round(medians[1]["wall_s"] / medians[2]["wall_s"], 3),
                         "load_average_after": load_average()}
    return found


def engine_commit() -> str:
    """The commit of the tree that runs, with ``+changes`` when src/ differs from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(REPO_DIR), *args], capture_output=True,
                              text=True, check=False).stdout.strip()
    return git("rev-parse", "HEAD") + ("+changes" if git("status", "--porcelain", "src") else "")


def _refusal(documents: int, method: str) -> str:
    """Why a run must not start for lack of disk ('' when it may)."""
    try:
        guess = estimate_run(documents, method)
    except ConfigError as err:
        return f"no estimate ({err})"
    free, need = free_bytes(), guess.work_bytes + guess.output_bytes
    if free < need + SETTINGS.disk_margin:
        return (f"refused: predicted work and outputs {need / 1e9:.1f} GB + "
                f"{SETTINGS.disk_margin / 1e9:.0f} GB margin > {free / 1e9:.1f} GB free")
    return ""


def one_run(inputs: Sequence[Path], labels: dict[str, np.ndarray], documents: int,
            method: str, workers: int) -> dict[str, Any]:
    """One ``dedup`` and what it produced; its outputs are deleted afterwards."""
    if refused := _refusal(documents, method):
        return {"refused": refused, "free_gb": round(free_bytes() / 1e9, 1)}
    out = SETTINGS.work / f"out-{documents}-{method}"
    found = {"engine_commit": engine_commit(), "load_average_before": load_average(),
             **dedup(inputs, out, method, workers, disk_floor=DISK_FLOOR)}
    if "killed" not in found:
        work_bytes = _folder_bytes(out / "work")
        summary = json.loads((out / "summary.json").read_text())
        lengths = pq.read_table(out / "documents.parquet", columns=["length"])["length"]
        found |= {"workers": workers, "documents": summary["documents"],
                  "mean_bytes": round(pc.mean(lengths).as_py(), 1),
                  "cpu_ms_per_doc": round(1000 * found["cpu_s"] / documents, 3),
                  "work_bytes_per_doc": round(work_bytes / documents, 1),
                  "work_peak_bytes_per_doc": round(found["work_peak_bytes"] / documents, 1),
                  "work_bytes_by_folder": {path.name: _folder_bytes(path) if path.is_dir()
                                           else path.stat().st_size
                                           for path in sorted((out / "work").iterdir())},
                  "partition_bytes_per_doc": {
                      name: round(size / documents, 1)
                      for name, size in _partition_bytes(out / "work").items()},
                  "output_bytes_per_doc": round((_folder_bytes(out) - work_bytes) / documents, 1),
                  "stage_seconds": summary["seconds"],
                  "stage_cpu_seconds": summary.get("cpu_seconds"),
                  "near_phases": (summary.get("near") or {}).get("phases"),
                  "load_average": load_average(),
                  **quality(out, labels, documents)}
    shutil.rmtree(out, ignore_errors=True)
    return found


def datatrove(parts: Sequence[Path], labels: dict[str, np.ndarray],
              documents: int, workers: int) -> dict[str, Any]:
    """datatrove's minhash and ``neardup --method minhash``, each with ``workers`` processes,
    on the first ``documents`` documents of the corpus (as ``workers`` files)."""
    corpus = _split_files(parts, documents, workers)
    work = SETTINGS.work / f"datatrove-{documents}"
    shutil.rmtree(work, ignore_errors=True)
    theirs = measure([sys.executable, str(BENCHMARKS_DIR / "scale_datatrove.py"), str(work),
                      *map(str, corpus), "--workers", str(workers)], DISK_FLOOR)
    removed = set((work / "removed.txt").read_text().split())
    copies = {f"d{number}" for number in np.flatnonzero(labels["level"][:documents] >= 0)}
    out = SETTINGS.work / f"out-{documents}-dt-minhash"
    ours = dedup(corpus, out, "minhash", workers, disk_floor=DISK_FLOOR)
    number_of = _number_of(out)
    clusters = pq.read_table(out / "clusters.parquet", columns=["doc", "kept"])
    dropped = number_of[clusters["doc"].to_numpy()[~clusters["kept"].to_numpy()]]
    dropped_ids = {f"d{number}" for number in dropped}
    ours |= {"removed": len(dropped_ids), "removed_planted_copies": len(dropped_ids & copies)}
    shutil.rmtree(out, ignore_errors=True)
    shutil.rmtree(work, ignore_errors=True)
    return {"documents": documents, "workers": workers,
            "datatrove": {**theirs, "removed": len(removed),
                          "removed_planted_copies": len(removed & copies),
                          "planted_copies": len(copies)},
            f"neardup_minhash_workers_{workers}": ours,
            "ratios_neardup_over_datatrove": ratios(ours, theirs)}


def ratios(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, float]:
    """neardup over datatrove. CPU is the tree's (``cpu_tree_s``): datatrove's pool workers
    are not reaped by the process measured, so its wait4 CPU (``cpu_s``) misses them."""
    return {key: round(ours[key] / theirs[key], 3)
            for key in ("wall_s", "cpu_tree_s", "peak_rss_mb", "peak_tree_rss_mb")}


def _finished(entry: dict[str, Any]) -> dict[str, Any]:
    """The runs of an entry that completed (not refused, not killed)."""
    return {method: run for method, run in entry.get("neardup", {}).items()
            if "wall_s" in run and "killed" not in run}


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
            "work_peak_bytes": max(run["work_peak_bytes_per_doc"], run["work_bytes_per_doc"]),
            "output_bytes": run["output_bytes_per_doc"], "peak_tree_rss_mb": memory}


def _compact_costs(before: dict[str, Any], method: str) -> dict[str, Any]:
    """The compact work directory's figures of ``method`` in the costs stored ``before``
    (measured by workdir_sets.py, not by this script: kept as they are)."""
    unit = before.get("methods", {}).get(method, {})
    return {name: value for name, value in unit.items() if name.startswith("compact_")}


def write_costs(results: dict[str, Any], documents: int) -> dict[str, Any]:
    """Costs from the run of ``documents`` (memory points from every size measured; the
    compact work directory's figures kept from before)."""
    before = load_costs() if COSTS.exists() else {}
    entry = results[str(documents)]
    methods = {}
    for method, run in _finished(entry).items():
        memory = sorted([int(size), _finished(other)[method]["peak_tree_rss_mb"]]
                        for size, other in results.items() if method in _finished(other))
        methods[method] = unit_costs(run, memory) | _compact_costs(before, method)
    costs = {"machine": f"{entry['environment']['cpu_count']} x "
                        f"{entry['environment']['cpu_model']}",
             "measured_by": f"benchmarks/scale.py --documents {documents} "
                            f"({entry['environment']['date'][:10]})",
             "methods": methods}
    if "compact_measured_by" in before:
        costs["compact_measured_by"] = before["compact_measured_by"]
    COSTS.write_text(json.dumps(costs, indent=1) + "\n")
    return costs


def check_plan(entry: dict[str, Any]) -> dict[str, Any]:
    """The ``plan`` estimate (from the costs stored before this run) against each run."""
    try:
        costs = load_costs()
    except ConfigError as err:
        return {"skipped": str(err)}
    checked = {}
    for method, run in _finished(entry).items():
        if method not in costs["methods"]:
            continue
        guess = estimate_run(run["documents"], method, mean_bytes=int(run["mean_bytes"]),
                             workers=run["workers"], costs=costs)
        measured = {"wall_seconds": run["wall_s"], "cpu_seconds": run["cpu_s"],
                    "work_bytes": run.get("work_peak_bytes_per_doc",
                                          run["work_bytes_per_doc"]) * run["documents"],
                    "kept_work_bytes": run["work_bytes_per_doc"] * run["documents"],
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
            for method, run in _finished(entry).items()]
    return markdown_table(["documents", "method", "workers", "wall s", "CPU s", "CPU ms/doc",
                           "peak RSS MB", "tree RSS MB", "work B/doc", "recall", "precision"],
                          rows)


def _merged(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """``new`` over ``old``, the runs and plan checks merged per method."""
    merged = {**old, **new}
    for key in ("neardup", "plan_check"):
        if key in new:
            merged[key] = {**old.get(key, {}), **new[key]}
    return merged


def _arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, required=True, help="documents of the corpus")
    parser.add_argument("--parts", type=int, default=PARTS,
                        help=f"run on the first PARTS of its {PARTS} files only")
    parser.add_argument("--methods", default="simhash,minhash")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--speedup", type=int, default=0, help="documents of the speed-up runs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--datatrove", type=int, default=0,
                        help="documents of the datatrove side-by-side run")
    parser.add_argument("--datatrove-workers", type=int, default=1,
                        help="processes of each side of the datatrove run")
    parser.add_argument("--skip-runs", action="store_true",
                        help="only the speed-up and datatrove parts (kept beside earlier runs)")
    parser.add_argument("--corpus-dir", type=Path, default=WORK,
                        help="folder of the corpora (scale-N/), split copies and run outputs "
                             "(default: %(default)s)")
    parser.add_argument("--disk-margin", type=float, default=DISK_MARGIN / 1e9, metavar="GB",
                        help="refuse a run unless its predicted work and outputs fit in the "
                             "free disk with this many GB to spare (default: %(default)g)")
    parser.add_argument("--write-costs", action="store_true",
                        help="store this size's per-document costs for neardup plan")
    return parser.parse_args()


def main() -> None:
    args = _arguments()
    SETTINGS.work, SETTINGS.disk_margin = args.corpus_dir, int(args.disk_margin * 1e9)
    SETTINGS.work.mkdir(parents=True, exist_ok=True)
    folder = SETTINGS.work / f"scale-{args.documents}"
    started, existed = time.perf_counter(), (folder / "labels.npz").exists()
    labels = dict(np.load(make_corpus(folder, args.documents)))
    generated = None if existed else round(time.perf_counter() - started, 1)
    parts = corpus_parts(folder)[:args.parts]
    documents = args.parts * args.documents // PARTS
    entry: dict[str, Any] = {"documents": documents, "environment": environment(
        ["neardup", "numpy", "pyarrow", "datatrove"]),
        "corpus": {"documents": args.documents, "files": PARTS, "files_used": args.parts,
                   "bytes_gz": sum(part.stat().st_size for part in parts),
                   "generator": "scale_corpus.py (hashed draws, parallel parts)",
                   "generate_s": generated}}
    if not args.skip_runs:
        entry["neardup"] = {method: one_run(parts, labels, documents, method, args.workers)
                            for method in args.methods.split(",")}
        entry["plan_check"] = check_plan(entry)
    if args.speedup:
        entry["speedup_workers_2_over_1"] = speedup(parts, args.speedup, args.repeat)
    if args.datatrove:
        entry["datatrove_side_by_side"] = datatrove(parts, labels, args.datatrove,
                                                    args.datatrove_workers)
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    entry = _merged(results.get(str(documents), {}), entry)
    entry["markdown"] = _table(entry)
    results[str(documents)] = entry
    temporary = RESULTS.with_suffix(".tmp")
    temporary.write_text(json.dumps(results, indent=2) + "\n")
    temporary.replace(RESULTS)
    if args.write_costs:
        write_costs(results, documents)
    print(entry["markdown"])
    print(json.dumps({k: v for k, v in entry.items() if k not in ("environment", "markdown")},
                     indent=1))


if __name__ == "__main__":
    main()
