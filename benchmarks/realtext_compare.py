"""neardup against rensa, datasketch and text-dedup on the real-text corpus, whole processes,
interleaved.

    python benchmarks/realtext_compare.py [--documents 100000] [--repeat 3]
        [--peers rensa,datasketch,textdedup] [--peers-python /work/bench-venv/bin/python]
        [--textdedup-python /work/textdedup-venv/bin/python]
        [--neardup base=/path/to/old/src --neardup new=src] [--lock /work/notes/heavy.lock]

The corpus is :mod:`realtext`'s (written once to the scratch folder). One whole process per side
per round, round-robin for ``--repeat`` rounds, each under ``nice -n 5`` in its own session,
``PYTHONDONTWRITEBYTECODE`` unset (:func:`scale.measure`): CPU over the process tree (every
process sampled from /proc every 50 ms), wall, peak RSS (the tree's largest sum). The sides:

- ``neardup dedup CORPUS --workers 1 --out OUT --quiet`` (the default method, min-hash 128 at
  0.8, 5-word shingles, exact Jaccard verification), from this checkout's ``src`` or, with
  ``--neardup NAME=SRC`` (repeatable), from each source tree named (before/after in one run;
  ratios are quoted for the last one);
- the rensa and datasketch pipelines of :mod:`realtext_peers` (RMinHash / MinHash 128 + LSH at
  0.8, Python shingling into the same 5-word shingles), run by ``--peers-python`` (a virtualenv
  holding the peers: ``python3.11 -m venv /work/bench-venv && /work/bench-venv/bin/pip install
  rensa datasketch``);
- text-dedup's own MinHash command, ``python -m text_dedup.minhash --path json --data_files
  CORPUS --split train --column text --num_perm 128 --threshold 0.8 --ngram 5 --num_proc 1
  --hash_func xxh3`` (its cache folder and its output inside the run's folder), run by
  ``--textdedup-python`` (a virtualenv of its own: ``python3.11 -m venv /work/textdedup-venv &&
  /work/textdedup-venv/bin/pip install text-dedup==0.4.0``). It saves the documents it keeps;
  the ids it removed are the corpus's ids less those, written to ``removed.txt`` like the other
  peers'. ``HF_HUB_OFFLINE`` and ``HF_DATASETS_OFFLINE`` are set: nothing is fetched.

A peer whose interpreter is missing is skipped, with the reason printed and kept in the results
(``skipped``).
With ``--lock``, each measured run holds an exclusive ``flock`` on that file (other heavy
benchmarks of the machine wait for it, and it for them: one run at a time, the lock released
between runs). Each side first runs once untimed on a 2,000-document corpus (numba's cache,
the page cache).
Reported: the medians of each side, the ratios of the last neardup side to every other side, the
load average beside every run, the largest resident size of one process of the tree beside the
tree's (``peak_process_rss_mb``), what each removed (documents, originals among them, the share
of the planted copies of each edit level and the share of those of which the copy or its
original was removed: text-dedup does not keep the first document of a group) and, for a
neardup side, its own split by stage (CPU and wall seconds of each stage from its
``summary.json``). Results go to
``benchmarks/results/realtext.json`` (``--out``).
"""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import statistics
import subprocess
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow.parquet as pq

from common import (
    BENCHMARKS_DIR,
    REPO_DIR,
    RESULTS_DIR,
    environment,
    load_average,
    markdown_table,
    write_results,
)
from realtext import EDIT_LEVELS, corpus_folder, describe, make_corpus
from realtext_peers import TEXTDEDUP_ENVIRONMENT, textdedup_command, textdedup_kept
from scale import NEARDUP, SETTINGS, _number_of, measure

PEERS = ("rensa", "datasketch")
TEXTDEDUP = "textdedup"
PEERS_PYTHON = Path("/work/bench-venv/bin/python")
TEXTDEDUP_PYTHON = Path("/work/textdedup-venv/bin/python")
# The packages whose versions each peer's results record.
PACKAGES = {"rensa": ("rensa",), "datasketch": ("datasketch",),
            TEXTDEDUP: ("text-dedup", "datasets", "xxhash", "numpy", "pyarrow")}
WARM_UP_DOCUMENTS = 2_000


def command(side: str, corpus: Path, out: Path, interpreters: dict[str, Path]) -> list[str]:
    """The command of one side (``interpreters``: the Python of each peer; neardup has none)."""
    if side == TEXTDEDUP:
        return textdedup_command(interpreters[side], corpus, out)
    if side in interpreters:
        return [str(interpreters[side]), str(BENCHMARKS_DIR / "realtext_peers.py"), side,
                str(corpus), str(out / "removed.txt")]
    return [NEARDUP, "dedup", str(corpus), "--workers", "1", "--out", str(out), "--quiet"]


def write_textdedup_removed(out: Path, documents: int) -> None:
    """The corpus's ids (``d0`` to ``d<documents - 1>``) less those text-dedup kept go to
    ``removed.txt``."""
    kept = textdedup_kept(out)
    removed = [f"d{number}" for number in range(documents) if f"d{number}" not in kept]
    if len(kept) + len(removed) != documents:
        raise SystemExit(f"{out / 'kept'}: ids that are not the corpus's")
    (out / "removed.txt").write_text("".join(f"{i}\n" for i in removed), encoding="utf-8")


def removed_ids(side: str, out: Path) -> set[str]:
    """The ids of the documents a side removed (neardup: the members of a cluster not kept)."""
    if (out / "removed.txt").exists():
        return set((out / "removed.txt").read_text(encoding="utf-8").split())
    number_of = _number_of(out)
    clusters = pq.read_table(out / "clusters.parquet", columns=["doc", "kept"])
    dropped = number_of[clusters["doc"].to_numpy()[~clusters["kept"].to_numpy()]]
    return {f"d{number}" for number in dropped}


def removed_report(removed: set[str], labels: dict[str, np.ndarray]) -> dict[str, Any]:
    """How many it removed, the share of the planted copies of each edit level among them and,
    whatever member of a group a side keeps, the share of the planted copies of each edit level
    of which the copy or its original was removed (``pair_removed_share_by_edit_level``)."""
    level = labels["level"]
    numbers = np.array(sorted(int(i[1:]) for i in removed), dtype=np.int64)
    hit = np.zeros(level.size, dtype=bool)
    hit[numbers] = True
    pair_hit = hit | hit[labels["original_doc"][labels["origin"]]]
    return {"removed": int(numbers.size),
            "removed_originals": int((level[numbers] < 0).sum()),
            "removed_share_by_edit_level": {
                f"{v:.2f}": round(float(hit[level == v].mean()), 4) for v in EDIT_LEVELS},
            "pair_removed_share_by_edit_level": {
                f"{v:.2f}": round(float(pair_hit[level == v].mean()), 4) for v in EDIT_LEVELS}}


def stage_split(out: Path) -> dict[str, Any]:
    """A neardup side's own split of the run by stage (its ``summary.json``): CPU and wall
    seconds per stage, the near stage's phases and its pair counts."""
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    near = summary.get("near", {})
    return {"cpu_seconds": summary["cpu_seconds"], "seconds": summary["seconds"],
            "near_phases": near.get("phases", {}),
            "near_pairs": {key: near.get(key) for key in ("candidates", "verified", "rejected")}}


def _python_path(side: str, sources: dict[str, Path]) -> None:
    """The ``PYTHONPATH`` :func:`scale.measure` hands the next process: a neardup side's
    ``src``, nothing for a peer."""
    os.environ.pop("PYTHONPATH", None)
    if side in sources:
        os.environ["PYTHONPATH"] = str(sources[side])


@contextmanager
def _held(lock: Path | None) -> Iterator[None]:
    """An exclusive ``flock`` on ``lock`` for the block (None: no lock), so that the measured
    runs of several benchmarks sharing the machine take turns, one run at a time."""
    if lock is None:
        yield
        return
    with open(lock, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def one_run(side: str, corpus: Path, scratch: Path, interpreters: dict[str, Path],
            labels: dict[str, np.ndarray] | None, sources: dict[str, Path],
            lock: Path | None = None) -> dict[str, Any]:
    out = scratch / f"out-{side}"
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    _python_path(side, sources)
    with _held(lock):
        load = load_average()
        found = measure(command(side, corpus, out, interpreters))
    found["load_average_before"] = load
    if labels is not None:
        if side == TEXTDEDUP:
            write_textdedup_removed(out, labels["level"].size)
        found |= removed_report(removed_ids(side, out), labels)
        if side not in interpreters:
            found["stages"] = stage_split(out)
    shutil.rmtree(out, ignore_errors=True)
    return found


def _side(spec: str) -> tuple[str, Path]:
    name, _, src = spec.partition("=")
    if not src or not Path(src, "neardup").is_dir():
        sys.exit(f"--neardup {spec}: expected NAME=SRC with SRC/neardup a folder")
    return name, Path(src).resolve()


def interpreters_of(peers: list[str], peers_python: Path,
                    textdedup_python: Path) -> tuple[dict[str, Path], dict[str, str]]:
    """The Python of each peer to run, and why each peer left out was left out (its
    interpreter missing)."""
    found: dict[str, Path] = {}
    skipped: dict[str, str] = {}
    for peer in peers:
        if peer not in PACKAGES:
            sys.exit(f"--peers: {peer!r} is none of {', '.join(PACKAGES)}")
        python = textdedup_python if peer == TEXTDEDUP else peers_python
        if python.exists():
            found[peer] = python
        else:
            skipped[peer] = f"{python}: no such interpreter (see --help for the venv)"
            print(f"{peer} skipped: {skipped[peer]}", file=sys.stderr, flush=True)
    return found, skipped


def peer_versions(interpreters: dict[str, Path]) -> dict[str, str]:
    """The Python and the packages of each peer's interpreter."""
    found: dict[str, str] = {}
    for side, python in interpreters.items():
        script = ("import importlib.metadata as m, platform; "
                  f"print(platform.python_version(), *(m.version(p) for p in {PACKAGES[side]!r}))")
        versions = subprocess.run([str(python), "-c", script], capture_output=True, text=True,
                                  check=True).stdout.split()
        found[f"{side} python"] = versions[0]
        found |= dict(zip(PACKAGES[side], versions[1:], strict=True))
    return found


def medians(runs: list[dict[str, Any]]) -> dict[str, float]:
    keys = ("cpu_tree_s", "wall_s", "peak_tree_rss_mb")
    return {key: round(statistics.median(run[key] for run in runs), 2) for key in keys}


def table(summary: dict[str, dict[str, float]], documents: int, ours_name: str,
          peers: dict[str, Path]) -> str:
    ours = summary[ours_name]
    rows = []
    for side, found in summary.items():
        versus = ("" if side not in peers else
                  f"{ours_name} {ours['cpu_tree_s'] / found['cpu_tree_s']:.2f}x CPU, "
                  f"{ours['peak_tree_rss_mb'] / found['peak_tree_rss_mb']:.2f}x memory")
        rows.append([side, f"{found['cpu_tree_s']:.1f}", f"{found['wall_s']:.1f}",
                     f"{found['peak_tree_rss_mb']:.0f} MB", versus])
    return (f"{documents:,} real-text documents, medians\n\n"
            + markdown_table(["run", "CPU s (tree)", "wall s", "peak RSS (tree)", "vs peer"],
                             rows))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--peers-python", type=Path, default=PEERS_PYTHON,
                        help="the Python of a venv holding rensa and datasketch")
    parser.add_argument("--textdedup-python", type=Path, default=TEXTDEDUP_PYTHON,
                        help="the Python of a venv holding text-dedup")
    parser.add_argument("--neardup", action="append", default=[], metavar="NAME=SRC",
                        help="a neardup side run from the source tree SRC (repeatable; default "
                             "neardup=this checkout's src); ratios are quoted for the last one")
    parser.add_argument("--peers", default=",".join(PEERS),
                        help=f"peers to run, comma-separated, of {','.join(PACKAGES)}")
    parser.add_argument("--out", type=Path, default=RESULTS_DIR / "realtext.json")
    parser.add_argument("--lock", type=Path, default=None,
                        help="a file each measured run holds an exclusive flock on (a machine "
                             "shared with other benchmarks: they take turns, run by run)")
    args = parser.parse_args(argv)
    sources = dict(_side(spec) for spec in args.neardup) or {"neardup": REPO_DIR / "src"}
    interpreters, skipped = interpreters_of([peer for peer in args.peers.split(",") if peer],
                                            args.peers_python, args.textdedup_python)
    sides = [*sources, *interpreters]
    os.environ |= TEXTDEDUP_ENVIRONMENT
    folder = make_corpus(args.documents)
    warm = make_corpus(WARM_UP_DOCUMENTS)
    scratch = corpus_folder(args.documents).parent / "realtext-runs"
    scratch.mkdir(parents=True, exist_ok=True)
    SETTINGS.work = scratch  # where scale.measure watches the free disk
    for side in sides:
        one_run(side, warm / "corpus.jsonl", scratch, interpreters, None, sources)
    labels = dict(np.load(folder / "labels.npz"))
    runs: dict[str, list[dict[str, Any]]] = {side: [] for side in sides}
    for _ in range(args.repeat):
        for side in sides:
            runs[side].append(one_run(side, folder / "corpus.jsonl", scratch,
                                      interpreters, labels, sources, args.lock))
            print(side, runs[side][-1], flush=True)
    summary = {side: medians(found) for side, found in runs.items()}
    ours_name = list(sources)[-1]
    ours = summary[ours_name]
    ratios = {side: {"cpu": round(ours["cpu_tree_s"] / summary[side]["cpu_tree_s"], 3),
                     "peak_rss": round(ours["peak_tree_rss_mb"]
                                       / summary[side]["peak_tree_rss_mb"], 3)}
              for side in sides if side != ours_name}
    payload = {"environment": environment(["numpy", "numba"]),
               "peer_versions": peer_versions(interpreters), "skipped": skipped,
               "corpus": describe(folder),
               "command": " ".join(sys.argv), "repeat": args.repeat, "medians": summary,
               "sources": {name: str(path) for name, path in sources.items()},
               f"{ours_name}_over": ratios, "runs": runs, "load_average_after": load_average()}
    write_results(args.out, payload, table(summary, args.documents, ours_name, interpreters))


if __name__ == "__main__":
    main()
