"""Which planted copies text-dedup puts in one group with their original (quality, not timing).

    flock /work/notes/heavy.lock /work/textdedup-venv/bin/python \\
        benchmarks/realtext_textdedup_groups.py [--documents 100000]
        [--out benchmarks/results/realtext_textdedup_groups.json]

Run by text-dedup's own interpreter, on the corpus of :mod:`realtext` (written first by
``python benchmarks/realtext.py --documents N``). text-dedup keeps one document of each group
it finds, the root of its union-find, which is often a later copy rather than the first
document; so the ids it removed, all that ``realtext_compare.py`` reads of it, do not say which
copies it matched with their original. This runs its MinHash command once with the settings of
``realtext_compare.py`` (:func:`realtext_peers.textdedup_command`) plus ``--debug --idx_column
id``, with which it also saves its union-find over the corpus ids (``uf.pkl``), and reports per
edit level the share of the planted copies in the group of their original, beside the share of
them it removed (the same figure as ``realtext_compare.py``'s). The run's folder is deleted after.
"""

from __future__ import annotations

import argparse
import os
import pickle
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from common import RESULTS_DIR, environment, load_average, markdown_table, skip, write_results
from realtext import EDIT_LEVELS, corpus_folder, describe
from realtext_peers import TEXTDEDUP_ENVIRONMENT, textdedup_command, textdedup_kept

PACKAGES = ("text-dedup", "datasets", "xxhash", "numpy", "pyarrow")


def shares(labels: dict[str, np.ndarray], root: list[str], kept: set[str]) -> dict[str, Any]:
    """Per edit level: the share of the planted copies in their original's group, and removed."""
    level = labels["level"]
    original = labels["original_doc"][labels["origin"]]
    grouped = np.array([root[i] == root[original[i]] for i in range(level.size)])
    removed = np.array([f"d{i}" not in kept for i in range(level.size)])
    sizes = Counter(root)
    return {"removed": int(removed.sum()), "removed_originals": int(removed[level < 0].sum()),
            "groups_of_two_or_more": sum(1 for size in sizes.values() if size > 1),
            "largest_group": max(sizes.values()),
            "grouped_with_original_share_by_edit_level": {
                f"{v:.2f}": round(float(grouped[level == v].mean()), 4) for v in EDIT_LEVELS},
            "removed_share_by_edit_level": {
                f"{v:.2f}": round(float(removed[level == v].mean()), 4) for v in EDIT_LEVELS}}


def run_groups(folder: Path, work: Path) -> dict[str, Any]:
    """One text-dedup run with its union-find saved; the shares of :func:`shares`."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    try:
        subprocess.run(textdedup_command(sys.executable, folder / "corpus.jsonl", work,
                                         "--debug", "--idx_column", "id"),
                       check=True, env=os.environ | TEXTDEDUP_ENVIRONMENT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(work / "kept" / "uf.pkl", "rb") as dump:
            union_find = pickle.load(dump)  # text-dedup's own dump, written by this run
        labels = dict(np.load(folder / "labels.npz"))
        root = [union_find.find(f"d{i}") for i in range(labels["level"].size)]
        return shares(labels, root, textdedup_kept(work))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--out", type=Path,
                        default=RESULTS_DIR / "realtext_textdedup_groups.json")
    args = parser.parse_args(argv)
    folder = corpus_folder(args.documents)
    if not (folder / "labels.npz").exists():
        skip(f"no corpus at {folder}: python benchmarks/realtext.py --documents {args.documents}")
    found = run_groups(folder, folder.parent / "realtext-runs" / "textdedup-groups")
    payload = {"environment": environment(PACKAGES), "corpus": describe(folder),
               "command": " ".join(sys.argv), **found, "load_average_after": load_average()}
    rows = [[level, f"{share:.1%}", f"{found['removed_share_by_edit_level'][level]:.1%}"]
            for level, share in found["grouped_with_original_share_by_edit_level"].items()]
    write_results(args.out, payload, f"text-dedup, {args.documents:,} real-text documents\n\n"
                  + markdown_table(["edit level", "in its original's group", "removed"], rows))


if __name__ == "__main__":
    main()
