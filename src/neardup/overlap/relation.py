"""The FPrint-DocID relation of S&GM98 and the pairs it implies.

Rows ``(fprint, doc)``, one per distinct chunk fingerprint of a document, sorted by fingerprint and
then by document. Every two rows with the same fingerprint make a pair of documents ``(a, b)``,
``a < b``, encoded as one 64-bit key ``a << 32 | b`` (documents are numbered below 2**32), which
sorts by a, then b. :func:`fill_pairs` writes these keys into a caller's buffer and resumes where
it stopped, so no pass ever holds more pairs than its buffer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import BOOL, I64, U32, U64
from neardup.text.compiled import njit

__all__ = ["ChunkRelation", "PairCursor", "fill_pairs", "split_keys"]


@dataclass(frozen=True, slots=True)
class ChunkRelation:
    """FPrint-DocID rows sorted by (fprint, doc); documents are numbered 0..documents-1."""

    fprints: U32
    docs: U32
    documents: int

    @staticmethod
    def from_sets(sets: Sequence[U32]) -> ChunkRelation:
        """The relation of documents 0..len(sets)-1, each given by its distinct fingerprints."""
        sizes = np.array([s.size for s in sets], dtype=np.int64)
        rows = np.repeat(np.arange(len(sets), dtype=np.uint64), sizes)
        if sets:
            rows |= np.concatenate(sets).astype(np.uint64) << np.uint64(32)
        rows.sort()  # by fingerprint, then doc
        return ChunkRelation((rows >> np.uint64(32)).astype(np.uint32), rows.astype(np.uint32),
                             len(sets))

    def __len__(self) -> int:
        return int(self.fprints.size)

    def group_sizes(self) -> I64:
        """The number of documents holding each distinct fingerprint, in fingerprint order."""
        if not len(self):
            return np.empty(0, dtype=np.int64)
        starts = np.flatnonzero(np.diff(self.fprints, prepend=~self.fprints[:1]) != 0)
        return np.diff(np.append(starts, len(self))).astype(np.int64)

    def pair_total(self) -> int:
        """The number of (document pair, shared fingerprint) occurrences: sum of k(k-1)/2."""
        return int(_pair_total(self.fprints))

    def select(self, keep: BOOL) -> ChunkRelation:
        """The rows where ``keep`` is true (the order stays sorted); copied in one pass, without
        the index arrays that boolean indexing would build."""
        count = int(np.count_nonzero(keep))
        fprints, docs = np.empty(count, dtype=np.uint32), np.empty(count, dtype=np.uint32)
        _compact(self.fprints, self.docs, keep, fprints, docs)
        return ChunkRelation(fprints, docs, self.documents)

    def drop_common(self, limit: int) -> tuple[ChunkRelation, int, int]:
        """Without the fingerprints held by more than ``limit`` documents; also returns how many
        fingerprints and rows were dropped."""
        sizes = self.group_sizes()
        common = sizes > limit
        if not common.any():
            return self, 0, 0
        keep = np.repeat(~common, sizes)
        return self.select(keep), int(common.sum()), int(np.sum(sizes[common]))


@njit(cache=True)
def _pair_total(fprints: U32) -> int:  # pragma: no cover - compiled
    total, start = 0, 0
    while start < fprints.size:
        end = start + 1
        while end < fprints.size and fprints[end] == fprints[start]:
            end += 1
        total += (end - start) * (end - start - 1) // 2
        start = end
    return total


@njit(cache=True)
def _compact(fprints: U32, docs: U32, keep: BOOL, out_fprints: U32,
             out_docs: U32) -> None:  # pragma: no cover - compiled
    at = 0
    for i in range(keep.size):
        if keep[i]:
            out_fprints[at] = fprints[i]
            out_docs[at] = docs[i]
            at += 1


def split_keys(keys: U64) -> tuple[I64, I64]:
    """Pair keys back to (a, b)."""
    return (keys >> np.uint64(32)).astype(np.int64), (keys & np.uint64(0xFFFFFFFF)).astype(np.int64)


@njit(cache=True)
def _fill(fprints: U32, docs: U32, state: I64, out: U64) -> int:  # pragma: no cover - compiled
    size, capacity, n = docs.size, out.size, 0
    start, row, partner = state[0], state[1], state[2]
    while start < size:
        end = start + 1
        while end < size and fprints[end] == fprints[start]:
            end += 1
        while row < end:
            high = np.uint64(docs[row]) << np.uint64(32)
            while partner < end:
                if n == capacity:
                    state[0], state[1], state[2] = start, row, partner
                    return n
                out[n] = high | np.uint64(docs[partner])
                n += 1
                partner += 1
            row += 1
            partner = row + 1
        start = end
    state[0], state[1], state[2] = size, size, size + 1
    return n


class PairCursor:
    """Walks the pairs of a relation in fingerprint order, a buffer at a time."""

    def __init__(self, relation: ChunkRelation) -> None:
        self.relation = relation
        self.state = np.array([0, 0, 1], dtype=np.int64)

    @property
    def done(self) -> bool:
        return bool(self.state[0] >= len(self.relation))

    def fill(self, out: U64) -> int:
        """Write the next pairs into ``out``; the number written (0 when done)."""
        return fill_pairs(self.relation, self.state, out)


def fill_pairs(relation: ChunkRelation, state: I64, out: U64) -> int:
    """Write the next pair keys from ``state`` (group start, row, partner) into ``out``."""
    return int(_fill(relation.fprints, relation.docs, state, out))
