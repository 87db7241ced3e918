"""Synthetic corpora for the scale benchmark: JSONL.gz of 2 to 5 KB documents with planted copies.

Each document is a run of words drawn from a Zipf-like vocabulary of 60,000 made-up words (ranks
from Zipf(1.2), folded onto the vocabulary), so two independent documents share almost no 5-word
shingle. A share of the documents are planted copies of an earlier original: exact copies, and
near copies with a known share of their words replaced (the edit level).

Generation is deterministic in (documents, seed) and random-access: every draw is a hash of
(seed, stream, index), so the words of original ``k`` can be rebuilt wherever a copy needs them
without keeping earlier originals in memory, and the corpus is written as ``PARTS`` files of
consecutive documents by parallel processes. The words of an original come from the folded
Zipf law by the alias method; a near copy's edits use a generator seeded by (seed, document).
The planted labels (per document: its original's number, its edit level, -1 for an original)
go to ``labels.npz`` beside the parts, written last: its presence marks a finished corpus.
"""

from __future__ import annotations

import gzip
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

__all__ = ["EDIT_LEVELS", "EXACT_SHARE", "NEAR_SHARE", "PARTS", "corpus_parts", "make_corpus",
           "planted"]

VOCABULARY = 60_000
ZIPF = 1.2
EXACT_SHARE = 0.05
NEAR_SHARE = 0.10
EDIT_LEVELS = (0.01, 0.03, 0.05, 0.10, 0.20)
WORDS = (330, 820)
PARTS = 8
BATCH = 2_000
_LETTERS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz", dtype=np.uint8)
_KIND, _SOURCE, _LEVEL, _LENGTH, _WORD = (np.uint64(n << 56) for n in range(1, 6))
_MASK32 = np.uint64(0xFFFFFFFF)


def _vocabulary(rng: np.random.Generator) -> np.ndarray:
    lengths = rng.integers(2, 10, VOCABULARY)
    return np.array([_LETTERS[rng.integers(0, 26, n)].tobytes().decode() for n in lengths])


def _zipf_words(rng: np.random.Generator, count: int) -> np.ndarray:
    return (rng.zipf(ZIPF, count) - 1) % VOCABULARY


def _folded_zipf() -> np.ndarray:
    """P(word j) = P(Zipf rank = j + 1 mod VOCABULARY): the sum over 2,000 periods, then the
    rest by the Euler-Maclaurin tail of the Hurwitz zeta function."""
    q = np.arange(1, VOCABULARY + 1, dtype=np.float64)
    total = np.zeros(VOCABULARY)
    periods = 2_000
    for start in range(0, periods, 100):
        block = q[None, :] + VOCABULARY * np.arange(start, start + 100)[:, None]
        total += (block ** -ZIPF).sum(axis=0)
    # the rest, sum over t >= periods of f(t) = (q + tP)^-s: the integral, f/2 and -f'/12
    rest = q + VOCABULARY * periods
    total += (rest ** (1 - ZIPF) / ((ZIPF - 1) * VOCABULARY) + rest ** -ZIPF / 2
              + ZIPF * VOCABULARY * rest ** (-ZIPF - 1) / 12)
    pmf: np.ndarray = total / total.sum()
    return pmf


def _alias(pmf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Walker's alias table: draw a column uniformly, keep it with ``keep[col]`` else alias."""
    size = pmf.size
    scaled = pmf * size
    keep, alias = np.ones(size), np.arange(size)
    small = [i for i in range(size) if scaled[i] < 1.0]
    large = [i for i in range(size) if scaled[i] >= 1.0]
    while small and large:
        low, high = small.pop(), large.pop()
        keep[low], alias[low] = scaled[low], high
        scaled[high] -= 1.0 - scaled[low]
        (small if scaled[high] < 1.0 else large).append(high)
    return keep, alias


def _mix(keys: np.ndarray, seed: int) -> np.ndarray:
    """splitmix64 of (key + seed): 64 well-mixed bits per key."""
    with np.errstate(over="ignore"):
        z = keys.astype(np.uint64) + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        mixed: np.ndarray = z ^ (z >> np.uint64(31))
    return mixed


def _uniform(stream: np.uint64, index: np.ndarray, seed: int) -> np.ndarray:
    bits = _mix(stream | index.astype(np.uint64), seed) >> np.uint64(11)
    uniform: np.ndarray = bits.astype(np.float64) * 2.0 ** -53
    return uniform


def planted(documents: int, seed: int = 1) -> dict[str, np.ndarray]:
    """Per document: ``origin`` (the number of its original), ``level`` (-1 for an original,
    0 for an exact copy, else the edit level) and ``original_doc`` (document of each original)."""
    numbers = np.arange(documents, dtype=np.int64)
    kind = _uniform(_KIND, numbers, seed)
    original = kind >= EXACT_SHARE + NEAR_SHARE
    original[0] = True
    before: np.ndarray = np.cumsum(original) - original  # originals before each document
    origin: np.ndarray = before.copy()
    copies = ~original
    origin[copies] = (_uniform(_SOURCE, numbers[copies], seed) * before[copies]).astype(np.int64)
    level = np.full(documents, -1.0)
    pick = (_uniform(_LEVEL, numbers, seed) * len(EDIT_LEVELS)).astype(np.int64)
    level[copies] = np.where(kind[copies] < EXACT_SHARE, 0.0, np.take(EDIT_LEVELS, pick[copies]))
    return {"origin": origin, "level": level, "original_doc": numbers[original]}


class _Writer:
    """Builds the text of a batch of documents with vectorised gathers."""

    def __init__(self, seed: int) -> None:
        self.seed = seed
        words = _vocabulary(np.random.default_rng(seed))
        spaced = [word.encode() + b" " for word in words]
        self.lengths = np.array([len(word) for word in spaced], dtype=np.int64)
        self.offsets = np.cumsum(self.lengths) - self.lengths
        self.bytes = np.frombuffer(b"".join(spaced), dtype=np.uint8)
        self.keep, self.alias = _alias(_folded_zipf())

    def original_words(self, originals: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The concatenated words of ``originals`` and the number of words of each."""
        low, high = WORDS
        counts = low + (_uniform(_LENGTH, originals, self.seed) * (high - low)).astype(np.int64)
        starts = np.cumsum(counts) - counts
        position = np.arange(counts.sum()) - np.repeat(starts, counts)
        keys = (np.repeat(originals, counts) << 10) | position
        bits = _mix(_WORD | keys.astype(np.uint64), self.seed)
        column = (((bits >> np.uint64(32)) * np.uint64(VOCABULARY)) >> np.uint64(32)).astype(
            np.int64)
        coin = (bits & _MASK32).astype(np.float64) * 2.0 ** -32
        return np.where(coin < self.keep[column], column, self.alias[column]), counts

    def edit(self, words: np.ndarray, document: int, level: float) -> None:
        rng = np.random.default_rng([self.seed, document])
        changed = rng.choice(words.size, max(1, round(level * words.size)), replace=False)
        words[changed] = _zipf_words(rng, changed.size)

    def lines(self, first: int, origin: np.ndarray, level: np.ndarray) -> bytes:
        words, counts = self.original_words(origin)
        ends = np.cumsum(counts)
        for index in np.flatnonzero(level > 0):
            self.edit(words[ends[index] - counts[index]:ends[index]], first + int(index),
                      float(level[index]))
        sizes = self.lengths[words]
        text_ends = np.cumsum(sizes)
        gather = np.arange(text_ends[-1]) + np.repeat(self.offsets[words] - text_ends + sizes,
                                                      sizes)
        text = self.bytes[gather].tobytes()
        bounds = np.concatenate([[0], text_ends[ends - 1]]).tolist()
        return b"".join(b'{"id": "d%d", "text": "%s"}\n' % (first + i, text[bounds[i]:
                                                                            bounds[i + 1] - 1])
                        for i in range(len(counts)))


def corpus_parts(folder: Path) -> list[Path]:
    return [folder / f"part-{index:02d}.jsonl.gz" for index in range(PARTS)]


def _write_part(folder: Path, documents: int, seed: int, part: int) -> None:
    path = corpus_parts(folder)[part]
    if path.exists():
        return
    labels = planted(documents, seed)
    writer = _Writer(seed)
    first, last = part * documents // PARTS, (part + 1) * documents // PARTS
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=3, mtime=0) as out:
            for start in range(first, last, BATCH):
                stop = min(last, start + BATCH)
                out.write(writer.lines(start, labels["origin"][start:stop],
                                       labels["level"][start:stop]))
        raw.flush()
        os.fsync(raw.fileno())
    temporary.replace(path)


def make_corpus(folder: Path, documents: int, seed: int = 1, processes: int = 2) -> Path:
    """Write the corpus (once) as ``PARTS`` files in ``folder``; returns its labels file."""
    labels = folder / "labels.npz"
    if labels.exists():
        return labels
    folder.mkdir(parents=True, exist_ok=True)
    with ProcessPoolExecutor(processes) as pool:
        for done in [pool.submit(_write_part, folder, documents, seed, part)
                     for part in range(PARTS)]:
            done.result()
    temporary = folder / "labels.tmp.npz"
    arrays = planted(documents, seed)
    np.savez(temporary, origin=arrays["origin"], level=arrays["level"],
             original_doc=arrays["original_doc"])
    temporary.replace(labels)
    return labels
