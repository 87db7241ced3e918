"""Synthetic corpora for the scale benchmark: JSONL.gz of 2 to 5 KB documents with planted copies.

Each document is a run of words drawn from a Zipf-like vocabulary of 60,000 made-up words, so two
independent documents share almost no 5-word shingle. After the originals, a share of the
documents are planted copies of an earlier original: exact copies, and near copies with a known
share of their words replaced (the edit level). The planted pairs (copy id, original id, level)
go to a labels file beside the corpus. Generation is deterministic in (documents, seed).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import numpy as np

__all__ = ["EDIT_LEVELS", "EXACT_SHARE", "NEAR_SHARE", "make_corpus"]

VOCABULARY = 60_000
EXACT_SHARE = 0.05
NEAR_SHARE = 0.10
EDIT_LEVELS = (0.01, 0.03, 0.05, 0.10, 0.20)
_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)


def _vocabulary(rng: np.random.Generator) -> np.ndarray:
    lengths = rng.integers(2, 10, VOCABULARY)
    return np.array([_LETTERS[rng.integers(0, 26, n)].tobytes().decode() for n in lengths])


def _words(rng: np.random.Generator, count: int) -> np.ndarray:
    ranks = rng.zipf(1.2, count)
    return (ranks - 1) % VOCABULARY


def _edited(rng: np.random.Generator, words: np.ndarray, level: float) -> np.ndarray:
    copy = words.copy()
    changed = rng.choice(words.size, max(1, round(level * words.size)), replace=False)
    copy[changed] = _words(rng, changed.size)
    return copy


def make_corpus(path: Path, documents: int, seed: int = 1) -> Path:
    """Write the corpus (once) and its labels (``<path>.labels.jsonl``); returns the labels."""
    labels = path.with_name(path.name + ".labels.jsonl")
    if path.exists() and labels.exists():
        return labels
    rng = np.random.default_rng(seed)
    vocabulary = _vocabulary(rng)
    kept: list[np.ndarray] = []
    temporary = path.with_name(path.name + ".tmp")
    with gzip.open(temporary, "wt", compresslevel=1) as out, open(labels, "w") as planted:
        for number in range(documents):
            kind = rng.random()
            if kept and kind < EXACT_SHARE + NEAR_SHARE:
                source = int(rng.integers(0, len(kept)))
                level = 0.0 if kind < EXACT_SHARE else float(rng.choice(EDIT_LEVELS))
                words = kept[source] if level == 0.0 else _edited(rng, kept[source], level)
                planted.write(json.dumps({"copy": f"d{number}", "original": f"o{source}",
                                          "level": level}) + "\n")
            else:
                words = _words(rng, int(rng.integers(330, 820)))
                kept.append(words)
                planted.write(json.dumps({"original_id": f"o{len(kept) - 1}",
                                          "doc": f"d{number}"}) + "\n")
            out.write(json.dumps({"id": f"d{number}", "text": " ".join(vocabulary[words])}))
            out.write("\n")
    temporary.replace(path)
    return labels
