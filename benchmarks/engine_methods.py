"""Engine methods: ``neardup dedup --method sketch``, ``--method chunks``, ``--method
shingle-paragraphs`` and ``--method chunks --write-relations`` as whole processes, before (the
near stage loads every survivor's prints) and after (bucketed key joins).

The corpus is scale_corpus.py's (2 to 5 KB documents with planted exact and near copies),
generated once under benchmarks/work/ at the largest size; smaller sizes take its first
documents. "Before" runs the source of ``--before``, "after" that of ``--after`` (commits,
exported with ``git archive`` under benchmarks/work/; default: the working tree), through the
same ``neardup`` entry point and venv, one after the other per size and case (``--workers
1``); each case records its own commits (``commits``). Recorded per run: wall and CPU seconds,
peak RSS (the largest process) and the peak RSS of the process tree; pairs and clusters (and
the relation tables when written) must be equal before and after. Results go to
benchmarks/results/engine_methods.json.

    python benchmarks/engine_methods.py --documents 100000 300000 --before 6a0f30a --after HEAD
    python benchmarks/engine_methods.py --documents 100000 --before 360ad5a \
        --methods shingle-paragraphs chunks-relations
"""

from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import shutil
import subprocess
import tarfile
import time
from concurrent.futures import ProcessPoolExecutor
from io import BytesIO
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from common import REPO_DIR, RESULTS_DIR, environment, load_average, markdown_table
from scale import NEARDUP, WORK, _split_files, measure
from scale_corpus import corpus_parts, make_corpus

RESULTS = RESULTS_DIR / "engine_methods.json"
METHODS = ("sketch", "chunks")
CASES = {"sketch": ("sketch", []), "chunks": ("chunks", ["--chunk", "words:8"]),
         "shingle-paragraphs": ("shingle-paragraphs", ["--level", "70", "--iterations", "5"]),
         "chunks-relations": ("chunks", ["--chunk", "words:8", "--write-relations"])}
"""Case: (method, its arguments). The corpus's texts are one line each, so chunks are cut by
words (T stays the default); its sentences have no period, so shingle paragraphs are made of
150-character cuts."""
TABLES = ("pairs", "clusters", "fprint_docid", "url_map", "server_map")


def _source(commit: str) -> Path:
    """The ``src`` folder of ``commit``, exported once under benchmarks/work/."""
    commit = subprocess.run(["git", "-C", str(REPO_DIR), "rev-parse", "--short", commit],
                            check=True, capture_output=True, text=True).stdout.strip()
    folder = WORK / f"source-{commit}"
    if not (folder / "src" / "neardup").is_dir():
        archive = subprocess.run(["git", "-C", str(REPO_DIR), "archive", commit, "src"],
                                 check=True, capture_output=True).stdout
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
    return folder / "src"


def _run(source: Path, inputs: list[Path], out: Path, case: str, limit: str) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    os.environ["PYTHONPATH"] = str(source)
    method, arguments = CASES[case]
    timing = measure([NEARDUP, "dedup", *map(str, inputs), "--out", str(out), "--method",
                      method, *arguments, "--workers", "1",
                      "--memory-limit", limit, "--quiet", "--work", str(out / "work")])
    summary = json.loads((out / "summary.json").read_text())
    near = summary.get("near", {})
    return {**timing, "memory_limit": limit, "near_pairs": near.get("verified"),
            "candidates": near.get("candidates"), "load_average": load_average()}


def _digest(out: Path) -> str:
    """:func:`_rows_digest` in a fresh process: the tables' rows as Python objects (gigabytes
    for the relation tables) must not raise the peak RSS this process hands to the next run it
    forks (``ru_maxrss`` survives fork and exec)."""
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return pool.submit(_rows_digest, out).result()


def _rows_digest(out: Path) -> str:
    """SHA-256 of the rows of the pairs and clusters tables (and of the relation tables when
    written)."""
    rows = {name: pq.read_table(out / f"{name}.parquet").to_pylist()
            for name in TABLES if (out / f"{name}.parquet").exists()}
    return hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()


def _compare(documents: int, inputs: list[Path], method: str, before: Path | None, after: Path,
             limits: list[str], kept: dict[str, Any], label: str = "after") -> dict[str, Any]:
    """Before (unless ``before`` is None: the runs in ``kept`` stay) and after, per limit."""
    base = WORK / f"methods-out-{documents}-{method}"
    runs = dict(kept)
    if before is not None:
        runs = {"before": _run(before, inputs, base / "before", method, limits[0])}
        runs["before"]["outputs_sha256"] = _digest(base / "before")
        shutil.rmtree(base / "before")
    for limit in limits:
        name = f"{label}_{limit}"
        runs[name] = _run(after, inputs, base / name, method, limit)
        runs[name]["outputs_sha256"] = _digest(base / name)
        runs[name]["same_pairs_and_clusters_as_before"] = (
            runs[name]["outputs_sha256"] == runs["before"]["outputs_sha256"])
        shutil.rmtree(base / name)
    return runs


def _table(results: dict[str, Any]) -> str:
    rows = [(size, method, name, run["memory_limit"], run["wall_s"], run["cpu_s"],
             run["peak_rss_mb"], run.get("same_pairs_and_clusters_as_before", ""))
            for size, entry in results["sizes"].items()
            for method, runs in entry.items() for name, run in runs.items()]
    return markdown_table(["documents", "method", "code", "--memory-limit", "wall s", "CPU s",
                           "peak RSS MB", "same output"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--documents", type=int, nargs="+", required=True)
    parser.add_argument("--before", required=True, help="commit of the in-memory near stage")
    parser.add_argument("--after", help="commit of the out-of-core near stage (default: the "
                        "working tree)")
    parser.add_argument("--limits", nargs="+", default=["2G", "512M"],
                        help="--memory-limit of the after runs (the first one also before)")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=sorted(CASES))
    parser.add_argument("--after-source", help="a src folder to run as the after code instead "
                        "of --after (e.g. a commit exported and patched by hand)")
    parser.add_argument("--label", default="after", help="name of the after runs")
    parser.add_argument("--keep-before", action="store_true",
                        help="re-measure the after runs only, beside the stored before runs")
    args = parser.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    largest = max(args.documents)
    corpus = WORK / f"methods-{largest}"
    make_corpus(corpus, largest)
    parts = corpus_parts(corpus)
    before = None if args.keep_before else _source(args.before)
    after = (Path(args.after_source).resolve() if args.after_source
             else _source(args.after) if args.after else REPO_DIR / "src")
    results = json.loads(RESULTS.read_text()) if RESULTS.exists() else {"sizes": {}}
    started = time.perf_counter()
    for documents in sorted(args.documents):
        inputs = parts if documents == largest else _split_files(parts, documents, 1)
        entry = results["sizes"].setdefault(str(documents), {})
        for method in args.methods:
            entry[method] = _compare(documents, inputs, method, before, after, args.limits,
                                     entry.get(method, {}), args.label)
            print(documents, method, json.dumps(entry[method]), flush=True)
    commits = results.setdefault("commits", {method: {"before": results.get("before_commit"),
                                                      "after": results.get("after_commit")}
                                             for method in METHODS if "before_commit" in results})
    for method in args.methods:
        code = args.after_source or args.after or "working tree"
        commits.setdefault(method, {})
        commits[method].update({"before": args.before} if before is not None else {})
        commits[method][args.label] = code
    results.pop("before_commit", None)
    results.pop("after_commit", None)
    results.update(workers=1, cases={name: [method, *arguments]
                                     for name, (method, arguments) in CASES.items()},
                   seconds=round(time.perf_counter() - started, 1),
                   environment=environment(["neardup", "numpy"]))
    results.pop("method_args", None)
    results["markdown"] = _table(results)
    temporary = RESULTS.with_suffix(".tmp")
    with open(temporary, "w") as out:
        out.write(json.dumps(results, indent=2) + "\n")
        out.flush()
        os.fsync(out.fileno())
    temporary.replace(RESULTS)
    print(results["markdown"])


if __name__ == "__main__":
    main()
