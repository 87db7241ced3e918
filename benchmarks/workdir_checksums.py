"""What the work directory's checksums cost (issue 29): sealing at write time, verifying on re-run.

A ``neardup dedup`` of the scale corpus (``scale_corpus.py``, 2 to 5 KB documents, first
``--documents`` of them, minhash, 2 workers) runs once with this tree; with ``--baseline-src`` (a
``src`` folder of the commit before the checksums) the same run with that tree too, interleaved,
so that the cost of sealing shows in the wall times. Then, on the finished work directory:

- ``verify_warm``: reading every marker and checking the size and xxh3_64 of every file it seals
  (what a re-run does before it skips a stage), the files in the page cache (right after a run);
- ``verify_cold``: the same after each sealed file's pages were dropped from the cache
  (``posix_fadvise(DONTNEED)``, only those files), so the bytes come from the disk;
- ``read_warm``: reading the same bytes without hashing (what the I/O alone costs);
- ``rerun``: the same command again (every stage verified and skipped, the outputs written).

Writes ``results/workdir_checksums.json``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from common import RESULTS_DIR, environment, load_average, markdown_table, write_results
from neardup.engine.markers import BLOCK, checked_marker, marked
from scale_corpus import corpus_parts, make_corpus

RESULTS = RESULTS_DIR / "workdir_checksums.json"
NEARDUP = [sys.executable, "-c", "from neardup.cli.main import cli; cli()"]


def _split(parts: list[Path], documents: int, folder: Path) -> list[Path]:
    """The first ``documents`` lines of the corpus as two JSONL files (one per worker)."""
    import gzip

    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"part-{index}.jsonl" for index in range(2)]
    if all(path.exists() for path in paths):
        return paths
    with ExitStack() as stack:
        outs = [stack.enter_context(open(path, "w")) for path in paths]
        written = 0
        for part in parts:
            with gzip.open(part, "rt") as source:
                for line in source:
                    if written == documents:
                        break
                    outs[written % 2].write(line)
                    written += 1
    return paths


def _dedup(src: Path, inputs: list[Path], out: Path, work: Path) -> float:
    started = time.perf_counter()
    subprocess.run([*NEARDUP, "dedup", *map(str, inputs), "--out", str(out), "--work",
                    str(work), "--workers", "2", "--quiet", "--force"],
                   env={**os.environ, "PYTHONPATH": str(src)}, check=True)
    return time.perf_counter() - started


def _markers(work: Path) -> list[str]:
    done = work / "done"
    return sorted(str(path.relative_to(done))[:-len(".json")] for path in done.rglob("*.json"))


def _sealed(work: Path) -> list[Path]:
    files: list[Path] = []
    for name in _markers(work):
        found = marked(work, name)
        assert found is not None, name
        files.extend(work / file for file in found[1])
    return files


def _verify(work: Path) -> float:
    started = time.perf_counter()
    for name in _markers(work):
        assert checked_marker(work, name) is not None, name
    return time.perf_counter() - started


def _read(files: list[Path]) -> float:
    started = time.perf_counter()
    buffer = bytearray(BLOCK)
    for path in files:
        with open(path, "rb", buffering=0) as source:
            while source.readinto(buffer):
                pass
    return time.perf_counter() - started


def _drop_cache(files: list[Path]) -> None:
    for path in files:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(descriptor)


def _cold(work: Path, files: list[Path]) -> float:
    _drop_cache(files)
    return _verify(work)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--corpus-dir", type=Path,
                        default=Path(tempfile.gettempdir()) / "neardup-checksums")
    parser.add_argument("--baseline-src", type=Path, default=None,
                        help="src folder of the commit before the checksums")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root = args.corpus_dir
    make_corpus(root / "corpus", max(args.documents, 100_000))
    inputs = _split(corpus_parts(root / "corpus"), args.documents, root / f"split-{args.documents}")
    src = Path(__file__).resolve().parents[1] / "src"
    runs: dict[str, list[float]] = {"checksums": []}
    if args.baseline_src:
        runs["baseline"] = []
    for _ in range(1 if args.baseline_src is None else 2):  # interleaved
        for name in runs:
            tree = src if name == "checksums" else args.baseline_src
            shutil.rmtree(root / f"work-{name}", ignore_errors=True)  # a first run each time
            runs[name].append(_dedup(tree, inputs, root / f"out-{name}", root / f"work-{name}"))
    work = root / "work-checksums"
    files = _sealed(work)
    sealed_bytes = sum(path.stat().st_size for path in files)
    timing = {"verify_warm": min(_verify(work) for _ in range(args.repeat)),
              "read_warm": min(_read(files) for _ in range(args.repeat)),
              "verify_cold": min(_cold(work, files) for _ in range(args.repeat)),
              "rerun": _dedup(src, inputs, root / "out-checksums", work)}
    gigabytes = sealed_bytes / 1e9
    per_100k = 100_000 / args.documents
    payload: dict[str, Any] = {
        "benchmark": "workdir_checksums", "documents": args.documents,
        "sealed_files": len(files), "sealed_bytes": sealed_bytes,
        "markers": len(_markers(work)),
        "first_run_seconds": {name: [round(t, 2) for t in times] for name, times in runs.items()},
        "seconds": {name: round(value, 3) for name, value in timing.items()},
        "seconds_per_gb": {name: round(timing[name] / gigabytes, 3)
                           for name in ("verify_warm", "read_warm", "verify_cold")},
        "seconds_per_100k_documents": {name: round(timing[name] * per_100k, 3)
                                       for name in ("verify_warm", "verify_cold", "rerun")},
        "load_average": load_average(), "environment": environment(["numpy", "xxhash"])}
    rows = [[name, f"{timing[name]:.3f}", f"{timing[name] / gigabytes:.3f}"]
            for name in ("verify_warm", "read_warm", "verify_cold", "rerun")]
    rows += [[f"first run ({name})", " / ".join(f"{t:.1f}" for t in times), ""]
             for name, times in runs.items()]
    table = markdown_table(["step", "seconds", "seconds per GB sealed"], rows)
    table += (f"\n\n{args.documents:,} documents, {len(files):,} sealed files, "
              f"{sealed_bytes / 1e6:,.0f} MB; load average {load_average()}")
    write_results(RESULTS, payload, table)


if __name__ == "__main__":
    main()
