"""A partition's verification sets stored as token sequences, rebuilt when read.

A document's verification set (its distinct sorted w-shingle hashes, 8 bytes each: about 4.6 KB
a document) is a function of its canonical token hashes and the shingle config
(:func:`neardup.features.shingles.shingle_set_of_tokens`). A partition in this form stores
instead, for each distinct token sequence of its documents:

- ``tokens.npy``: the partition's vocabulary, its distinct token hashes (uint64), the most
  frequent first;
- ``sequences.npy``: each sequence as the ranks of its tokens in that vocabulary, LEB128
  coded (uint8: a rank below 128 takes one byte, below 16,384 two), concatenated;
- ``sequence_offsets.npy``: where each sequence starts and ends (int64, bytes; one more than
  the sequences) and ``sequence_index.npy``: the sequence of each document (int32; documents
  with equal token sequences, exact copies, share one);
- ``sequences.json``: the shingles of the sets of the stored sequences, in all (what the
  stages size their blocks by, as the stored sets' length was).

Measured at 10,000 documents a partition: generated text 0.85 KB a document (4.57 KB as
sets), real web text 1.28 KB (4.85 KB); a fixed-width id (uint16 when the vocabulary fits, else
uint32) would take 1.19 and 2.61 KB (real text's partitions hold about 145,000 distinct tokens).

Reading (:func:`sequence_sets`) decodes the chosen documents' sequences and rebuilds their sets
with the shingle kernel the fingerprint stage ran (in one compiled pass), then sorts each and
drops repeats: the sets are bit-identical to those the stage computed (tests check it). While a
partition is written, each document's token ids go to a scratch file in the partition's folder
(the ranks are known only at the end), removed when the partition closes.
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import xxhash

from neardup._types import I64, U8, U32, U64
from neardup.engine.arrayrows import read_ranges, read_rows
from neardup.engine.workdir import read_array, write_array
from neardup.errors import CorruptDataError
from neardup.features.shingles import _shingles
from neardup.store.durable import sync
from neardup.text.compiled import njit

__all__ = ["SEQUENCE_FILES", "SequenceFile", "sequence_sets", "sequence_shingles"]

SEQUENCE_FILES = ("tokens.npy", "sequences.npy", "sequence_offsets.npy", "sequence_index.npy",
                  "sequences.json")
_IDS = "token-ids.scratch"
"""The scratch file of the token ids (first-seen order) while the partition is written."""
_BUFFER = 1 << 20
"""Bytes of ids gathered before a write to the scratch file."""
_CHUNK = 1 << 20
"""Token ids coded at once when the partition closes."""


@njit(cache=True, interpretable=(0,))
def _assign(tokens: U64, table: U64, vocabulary: U64,
            size: int) -> tuple[U32, int]:  # pragma: no cover - compiled
    """The id of each token (its place in ``vocabulary``, new tokens appended), by open
    addressing in ``table`` (a power of two of (token, id + 1) rows, 0: free: a probe reads
    one cache line); the vocabulary's new size. The caller leaves room for every token to be
    new."""
    mask = table.shape[0] - 1
    ids = np.empty(tokens.size, dtype=np.uint32)
    for i in range(tokens.size):
        token = tokens[i]
        slot = np.int64(token & np.uint64(mask))
        while True:
            held = np.int64(table[slot, 1])
            if held == 0:
                table[slot, 0] = token
                table[slot, 1] = size + 1
                vocabulary[size] = token
                held = np.int64(size + 1)
                size += 1
                break
            if table[slot, 0] == token:
                break
            slot = (slot + 1) & mask
        ids[i] = held - 1
    return ids, size


@njit(cache=True, interpretable=(0,))
def _encode(ranks: U32, cuts: I64) -> tuple[U8, I64]:  # pragma: no cover - compiled
    """The LEB128 codes of ``ranks`` and where the codes of the ranks at ``cuts`` (sorted
    positions, at most ``ranks.size``) start."""
    out = np.empty(5 * ranks.size, dtype=np.uint8)
    at = np.empty(cuts.size, dtype=np.int64)
    n, k = 0, 0
    for i in range(ranks.size + 1):
        while k < cuts.size and cuts[k] == i:
            at[k] = n
            k += 1
        if i == ranks.size:
            break
        value = int(ranks[i])
        while value >= 128:
            out[n] = (value & 127) | 128
            value >>= 7
            n += 1
        out[n] = value
        n += 1
    return out[:n], at


@njit(cache=True, interpretable=(0,))
def _shingled(codes: U8, bounds: I64, vocabulary: U64, width: int,
              seed: np.uint64) -> tuple[U64, I64, bool]:  # pragma: no cover - compiled
    """The shingles, in order, repeats included, of the sequences
    ``codes[bounds[i]:bounds[i + 1]]`` as (flat, CSR offsets), and whether the codes were
    whole (every rank in the vocabulary, no code cut short)."""
    rows = bounds.size - 1
    offsets = np.zeros(rows + 1, dtype=np.int64)
    longest = 0
    for row in range(rows):
        longest = max(longest, bounds[row + 1] - bounds[row])
    tokens = np.empty(longest, dtype=np.uint64)
    flat = np.empty(codes.size, dtype=np.uint64)  # a shingle a token at most, a token a byte
    n = 0
    for row in range(rows):
        i, end, count = bounds[row], bounds[row + 1], 0
        while i < end:
            value, shift, byte = 0, 0, 128
            while byte >= 128:
                if i >= end:
                    return flat[:0], offsets, False
                byte = int(codes[i])
                value |= (byte & 127) << shift
                shift += 7
                i += 1
            if value >= vocabulary.size:
                return flat[:0], offsets, False
            tokens[count] = vocabulary[value]
            count += 1
        shingles = _shingles(tokens[:count], width, seed)
        flat[n:n + shingles.size] = shingles
        n += shingles.size
        offsets[row + 1] = n
    return flat[:n], offsets, True


def _distinct_rows(flat: U64, offsets: I64) -> tuple[U64, I64]:
    """Each row of (flat, offsets) sorted, without its repeats (numpy's sort, in place: about
    3 times the speed of numba's on these sizes)."""
    for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True):
        flat[start:end].sort()
    keep = np.ones(flat.size, dtype=np.bool_)
    np.not_equal(flat[1:], flat[:-1], out=keep[1:])
    keep[offsets[:-1][offsets[:-1] < flat.size]] = True  # a row's first shingle stays
    kept = np.zeros(flat.size + 1, dtype=np.int64)
    np.cumsum(keep, out=kept[1:])
    return flat[keep], kept[offsets]


class _Vocabulary:
    """The distinct token hashes met so far, each with its id (first seen, first numbered)."""

    def __init__(self, capacity: int = 1 << 16) -> None:
        self.size = 0
        self._tables(capacity)

    def _tables(self, capacity: int) -> None:
        self.tokens = np.empty(capacity, dtype=np.uint64)
        self.table = np.zeros((2 * capacity, 2), dtype=np.uint64)  # half full at most

    def ids(self, tokens: U64) -> U32:
        """The ids of ``tokens`` (new ones numbered as they come)."""
        if self.size + tokens.size > self.tokens.size:
            self._grow(self.size + tokens.size)
        ids, self.size = _assign(tokens, self.table, self.tokens, self.size)
        return ids

    def _grow(self, needed: int) -> None:
        capacity = self.tokens.size
        while capacity < needed:
            capacity *= 2
        known = self.tokens[:self.size]
        self._tables(capacity)
        self.size = 0
        self.ids(known)  # distinct: numbered 0..size-1 again, in order


def _npy_header(dtype: type[np.generic], length: int) -> bytes:
    buffer = io.BytesIO()
    np.lib.format.write_array_header_1_0(buffer, {
        "descr": np.lib.format.dtype_to_descr(np.dtype(dtype)),
        "fortran_order": False, "shape": (length,)})
    return buffer.getvalue()


class SequenceFile:
    """The token sequences of a partition's documents, written a document at a time into
    ``folder`` (see the module's notes); each distinct sequence once (found by a hash of its
    ids, then compared)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.scratch = open(folder / _IDS, "w+b", buffering=0)  # noqa: SIM115 - finish()
        self.pending = bytearray()  # the ids not yet in the scratch file, from ``flushed``
        self.flushed = 0
        self.vocabulary = _Vocabulary()
        self.found: dict[int, list[int]] = {}
        self.empty: int | None = None  # the empty sequence, once stored
        self.starts: list[int] = [0]
        self.index: list[int] = []
        self.shingles = 0

    def _stored(self, k: int) -> bytes:
        start, end = self.starts[k], self.starts[k + 1]
        if start >= self.flushed:
            return bytes(self.pending[4 * (start - self.flushed):4 * (end - self.flushed)])
        return os.pread(self.scratch.fileno(), 4 * (end - start), 4 * start)

    def add(self, tokens: U64, shingles: int) -> None:
        """One document: its token hashes and the size of its verification set."""
        if not tokens.size and self.empty is not None:  # pages without an article view
            self.index.append(self.empty)
            return
        ids = self.vocabulary.ids(tokens)
        data = ids.astype("<u4", copy=False).tobytes()
        candidates = self.found.setdefault(xxhash.xxh3_64_intdigest(data), [])
        for k in candidates:
            if self.starts[k + 1] - self.starts[k] == ids.size and (
                    ids.size == 0 or self._stored(k) == data):
                self.index.append(k)
                return
        candidates.append(len(self.starts) - 1)
        self.index.append(len(self.starts) - 1)
        if not ids.size:
            self.empty = len(self.starts) - 1
        self.starts.append(self.starts[-1] + ids.size)
        self.shingles += shingles
        self.pending += data
        if len(self.pending) >= _BUFFER:
            self._flush()

    def _flush(self) -> None:
        self.scratch.write(self.pending)
        self.flushed = self.starts[-1]
        self.pending = bytearray()

    def abort(self) -> None:
        """Close the scratch file, whole or not (nothing else is written)."""
        self.scratch.close()

    def finish(self) -> None:
        """Write the partition's sequence files (the ranks are now known: the most frequent
        token first); remove the scratch file."""
        self._flush()
        size = self.vocabulary.size
        counts = np.zeros(size, dtype=np.int64)
        for ids in self._chunks():
            counts += np.bincount(ids, minlength=size)
        order = np.argsort(-counts, kind="stable")
        rank = np.empty(size, dtype=np.uint32)
        rank[order] = np.arange(size, dtype=np.uint32)
        write_array(self.folder / "tokens.npy", self.vocabulary.tokens[order])
        offsets = self._write_codes(rank)
        self.scratch.close()
        (self.folder / _IDS).unlink()
        write_array(self.folder / "sequence_offsets.npy", offsets)
        write_array(self.folder / "sequence_index.npy", np.array(self.index, dtype=np.int32))
        with open(self.folder / "sequences.json", "w") as out:
            out.write(json.dumps({"shingles": self.shingles, "tokens": self.starts[-1],
                                  "vocabulary": size}, sort_keys=True))
            sync(out)

    def _chunks(self) -> Iterator[U32]:
        """The scratch ids, a chunk at a time."""
        total = self.starts[-1]
        for low in range(0, total, _CHUNK):
            count = min(_CHUNK, total - low)
            data = os.pread(self.scratch.fileno(), 4 * count, 4 * low)
            if len(data) != 4 * count:
                raise CorruptDataError(f"{self.folder / _IDS}: cut short")
            yield np.frombuffer(data, dtype="<u4")

    def _write_codes(self, rank: U32) -> I64:
        """``sequences.npy`` coded from the scratch ids a chunk at a time; the sequences' byte
        offsets."""
        starts = np.array(self.starts, dtype=np.int64)
        offsets = np.empty_like(starts)
        written = 0
        with open(self.folder / "sequences.npy", "wb") as out:
            header = _npy_header(np.uint8, 0)
            out.write(header)
            low = 0
            for ids in self._chunks():
                first, last = np.searchsorted(starts, [low, low + ids.size], side="left")
                codes, at = _encode(rank[ids], starts[first:last] - low)
                offsets[first:last] = written + at
                out.write(codes.data)
                written += codes.size
                low += ids.size
            offsets[starts >= low] = written
            final = _npy_header(np.uint8, written)
            if len(final) != len(header):
                raise OverflowError(f"{out.name}: {written} bytes outgrow the header")
            out.seek(0)
            out.write(final)
            sync(out)
        return offsets


def sequence_shingles(folder: Path) -> int:
    """The shingles of the sets of the partition's stored sequences."""
    path = folder / "sequences.json"
    try:
        return int(json.loads(path.read_text())["shingles"])
    except (ValueError, KeyError, TypeError) as err:
        raise CorruptDataError(f"{path}: not a whole sequence record ({err})") from err


def sequence_sets(folder: Path, rows: I64, width: int, seed: int) -> tuple[U64, I64]:
    """The verification sets of ``rows`` (local indices) as (flat, CSR offsets), rebuilt from
    their token sequences with the shingle config (``width``, ``seed``) that made them."""
    chosen = read_rows(folder / "sequence_index.npy", rows).astype(np.int64)
    bounds = read_rows(folder / "sequence_offsets.npy", np.concatenate([chosen, chosen + 1]))
    codes, code_bounds = read_ranges(folder / "sequences.npy", bounds[:chosen.size],
                                     bounds[chosen.size:])
    flat, offsets, whole = _shingled(codes, code_bounds, read_array(folder / "tokens.npy"),
                                     width, np.uint64(seed))
    if not whole:
        raise CorruptDataError(f"{folder / 'sequences.npy'}: a code beyond the vocabulary of "
                               f"{folder / 'tokens.npy'}, or cut short")
    return _distinct_rows(flat, offsets)
