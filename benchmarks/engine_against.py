"""``dedup --against``: 10k new documents against 100k and 300k old ones, this tree vs a base.

The corpus is ``scale_corpus.py``'s (2 to 5 KB documents with planted exact and near copies),
310,000 documents cut into three JSONL files: A (docs 0-100k), B (100k-300k) and C (the last
10k, the new shard). For each method, the old runs (A; A + B) are made once by this tree with
two workers. Then each ``--against`` run of C is one whole process per tree (the ``src`` of
commits ``--this`` and ``--base``, exported by ``git archive``), one worker, after one warm-up
run each, interleaved, ``--repeat`` times: wall and CPU (with children) and peak RSS of the
process, its stage laps from ``summary.json``, and the candidate stage alone (wall and CPU of
the method's candidates function, timed the same way in both trees by wrapping it). Both
trees' outputs are compared (documents, pairs, clusters, against): they must be equal. Medians
go to ``benchmarks/results/engine_against.json``.

Usage: python benchmarks/engine_against.py [--old 100000,300000] [--new 10000] [--repeat 3]
       [--methods simhash,minhash] [--this REV] [--base REV]
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from common import BENCHMARKS_DIR, REPO_DIR, RESULTS_DIR, environment, load_average, markdown_table
from scale import measure
from scale_corpus import corpus_parts, make_corpus

WORK = BENCHMARKS_DIR / "work" / "against"
TABLES = ("documents", "pairs", "clusters", "against")


def _lines(parts: list[Path]) -> Iterator[str]:
    for part in parts:
        with gzip.open(part, "rt") as lines:
            yield from lines


def slices(old: list[int], new: int) -> dict[str, Path]:
    """The corpus cut at the old sizes: ``old-<n>`` lists the files of the first n documents
    (each slice its own file), ``new`` the file of the ``new`` documents after the largest."""
    total = max(old) + new
    corpus = WORK / f"corpus-{total}"
    make_corpus(corpus, total)
    bounds = [0, *sorted(old), total]
    files = [corpus / f"slice-{start}-{end}.jsonl" for start, end in itertools.pairwise(bounds)]
    if not all(path.exists() for path in files):
        lines = _lines(corpus_parts(corpus))
        for path, (start, end) in zip(files, itertools.pairwise(bounds), strict=True):
            temporary = path.with_name(path.name + ".tmp")
            with open(temporary, "w") as out:
                for _ in range(end - start):
                    out.write(next(lines))
            temporary.replace(path)
    return {"new": files[-1], **{f"old-{size}": files[index]
                                 for index, size in enumerate(sorted(old))}}


def _commit(revision: str) -> str:
    return subprocess.run(["git", "-C", str(REPO_DIR), "rev-parse", revision], check=True,
                          capture_output=True, text=True).stdout.strip()


def tree_of(revision: str) -> Path:
    """A commit's ``src``, exported once (so that edits to the work tree do not reach a run)."""
    commit = _commit(revision)
    folder = WORK / f"base-{commit[:12]}"
    if not (folder / "src").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(REPO_DIR), "archive", commit, "src"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder / "src"


def _timed(function: Callable[..., Any], spent: dict[str, float]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            spent["candidates_wall_s"] += time.perf_counter() - wall
            spent["candidates_cpu_s"] += time.process_time() - cpu
    return wrapper


def child(arguments: list[str]) -> None:
    """One run in this process (the tree on PYTHONPATH): inputs, out, work, method, workers,
    against (or '-')."""
    from neardup.config import DedupConfig
    from neardup.engine import EngineOptions, near, run_engine

    *inputs, out, work, method, workers, against = arguments
    spent = {"candidates_wall_s": 0.0, "candidates_cpu_s": 0.0}
    for name in ("simhash_candidates", "minhash_candidates"):
        setattr(near, name, _timed(getattr(near, name), spent))
    run_engine(inputs, Path(out), DedupConfig(method=method),  # type: ignore[arg-type]
               EngineOptions(work=Path(work), workers=int(workers)),
               against=None if against == "-" else Path(against))
    (Path(out) / "candidate_timing.json").write_text(json.dumps(spent))


def _run(tree: Path, inputs: list[Path], out: Path, method: str, workers: int,
         against: Path | None) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    command = ["env", f"PYTHONPATH={tree}:{BENCHMARKS_DIR}", sys.executable, __file__, "child",
               *map(str, inputs), str(out), str(out / "work"), method, str(workers),
               str(against) if against else "-"]
    found = measure(command)
    summary = json.loads((out / "summary.json").read_text())
    return {**found, **json.loads((out / "candidate_timing.json").read_text()),
            "stage_seconds": summary["seconds"], "near": summary.get("near"),
            "against": summary.get("against")}


def _tables(out: Path) -> dict[str, Any]:
    import pyarrow.parquet as pq

    return {name: pq.read_table(out / f"{name}.parquet").to_pylist() for name in TABLES}


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("wall_s", "cpu_s", "peak_rss_mb", "candidates_wall_s", "candidates_cpu_s")
    found: dict[str, Any] = {key: round(statistics.median(r[key] for r in runs), 3)
                             for key in keys}
    stages = runs[0]["stage_seconds"].keys()
    found["stage_seconds"] = {name: round(statistics.median(r["stage_seconds"][name]
                                                            for r in runs), 3)
                              for name in stages}
    found["runs"] = [{key: r[key] for key in keys} for r in runs]
    found["near"], found["against"] = runs[0]["near"], runs[0]["against"]
    return found


def _case(trees: dict[str, Path], files: dict[str, Path], old_out: Path, method: str,
          size: int, repeat: int) -> dict[str, Any]:
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for name in trees:  # a warm-up run each (compiled kernels cached, files in the page cache)
        _run(trees[name], [files["new"]], WORK / f"new-{name}", method, 1, old_out / "work")
    for trial in range(repeat):
        order = list(trees) if trial % 2 == 0 else list(reversed(trees))
        for name in order:
            runs[name].append(_run(trees[name], [files["new"]], WORK / f"new-{name}", method, 1,
                                   old_out / "work"))
        if trial == 0:
            same = _tables(WORK / "new-this") == _tables(WORK / "new-base")
    return {"old_documents": size, "same_outputs": same,
            **{name: _median(found) for name, found in runs.items()}}


def _write(results: dict[str, Any]) -> None:
    RESULTS_DIR.mkdir(exist_ok=True)
    path = RESULTS_DIR / "engine_against.json"
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(results, indent=1) + "\n")
    temporary.replace(path)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default="100000,300000")
    parser.add_argument("--new", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--methods", default="simhash,minhash")
    parser.add_argument("--this", default="HEAD", help="the commit measured")
    parser.add_argument("--base", default="360ad5a", help="the commit to compare with")
    args = parser.parse_args()
    sizes = sorted(int(size) for size in args.old.split(","))
    files = slices(sizes, args.new)
    trees = {"this": tree_of(args.this), "base": tree_of(args.base)}
    results: dict[str, Any] = {"environment": environment(["numpy", "pyarrow", "numba"]),
                               "this": _commit(args.this), "base": _commit(args.base),
                               "new_documents": args.new,
                               "load_average_before": load_average(), "methods": {}}
    for method in args.methods.split(","):
        cases = {}
        for size in sizes:
            old_out = WORK / f"old-{method}-{size}"
            inputs = [files[f"old-{s}"] for s in sizes if s <= size]
            if not (old_out / "summary.json").exists():
                cases[f"old_run_{size}"] = _run(trees["this"], inputs, old_out, method, 2, None)
            cases[str(size)] = _case(trees, files, old_out, method, size, args.repeat)
            print(method, size, json.dumps({k: cases[str(size)][k]["wall_s"]
                                            for k in trees}), flush=True)
            results["methods"][method] = cases
            _write(results)  # each case as it ends
    results["load_average_after"] = load_average()
    _write(results)
    rows = [[method, size, name, case[name]["wall_s"], case[name]["cpu_s"],
             case[name]["candidates_wall_s"], case[name]["peak_rss_mb"], case["same_outputs"]]
            for method, cases in results["methods"].items()
            for size, case in cases.items() if size.isdigit() for name in trees]
    table = markdown_table(["method", "old docs", "tree", "wall s", "CPU s", "candidates s",
                            "peak RSS MB", "same outputs"], rows)
    print(table)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "child":
        child(sys.argv[2:])
    else:
        main()
