"""How simhash fingerprints spread over their space (Manku et al. Figure 2).

(a) Sort the fingerprints and take ``h``, the position of the most significant 1-bit of the XOR
of each two successive ones (0 = the lowest bit, 63 = the highest; the quantity their
compression codes). Random fingerprints give a peak near ``63 - log2(n)`` that halves with every
step to either side; near-duplicates add weight to the low positions. Equal successive
fingerprints (XOR 0) have no 1-bit and are counted apart.

(b) Count the fingerprints in 128 equal buckets of the 64-bit space; a bucket far above the mean
is a *spike*, named by its most common fingerprint (for example the empty page, simhash 0).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import I64, U64
from neardup.errors import ConfigError

__all__ = [
    "Spike",
    "bucket_counts",
    "find_spikes",
    "leading_bit_histogram",
    "leading_bit_positions",
    "parse_hex64",
]



def parse_hex64(values: Sequence[str | None]) -> U64:
    """Hexadecimal strings (as the documents table stores fingerprints) to uint64; None -> 0."""
    return np.array([int(v, 16) if v else 0 for v in values], dtype=np.uint64)


def leading_bit_positions(values: U64) -> I64:
    """The position of the most significant 1-bit of each value (exact, no floating point);
    -1 for 0."""
    x = np.asarray(values, dtype=np.uint64).copy()
    position = np.zeros(x.size, dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        high = (x >> np.uint64(shift)) != 0
        position += shift * high
        x = np.where(high, x >> np.uint64(shift), x)
    position[np.asarray(values) == 0] = -1
    return position


def leading_bit_histogram(fingerprints: U64, bits: int = 64) -> tuple[I64, int]:
    """For the sorted ``fingerprints``: how many successive XORs have their leading 1-bit at
    each position 0..bits-1, and how many are 0 (equal successive fingerprints)."""
    ordered = np.sort(np.asarray(fingerprints, dtype=np.uint64))
    positions = leading_bit_positions(ordered[1:] ^ ordered[:-1])
    counts = np.bincount(positions[positions >= 0], minlength=bits).astype(np.int64)
    return counts, int(np.count_nonzero(positions < 0))


def bucket_counts(fingerprints: U64, buckets: int = 128) -> I64:
    """Fingerprints per bucket, the 64-bit space cut into ``buckets`` (a power of two) equal
    contiguous intervals."""
    index = _bucket_index(np.asarray(fingerprints, dtype=np.uint64), buckets)
    return np.bincount(index, minlength=buckets).astype(np.int64)


def _bucket_index(fingerprints: U64, buckets: int) -> I64:
    if buckets < 2 or buckets > 2**16 or buckets & (buckets - 1):
        raise ConfigError(f"buckets={buckets!r}: must be a power of two in 2..65536")
    shift = np.uint64(64 - buckets.bit_length() + 1)
    return (fingerprints >> shift).astype(np.int64)


@dataclass(frozen=True, slots=True)
class Spike:
    """A bucket well above the mean: its fingerprints, how many are distinct, and the most
    common one with the number of documents sharing it and how many of those are empty."""

    bucket: int
    documents: int
    distinct: int
    fingerprint: int
    sharing: int
    empty: int
    example: str | None

    @property
    def name(self) -> str:
        """What the spike is, in a few words."""
        common = f"{self.fingerprint:016x}"
        if self.sharing == self.documents:
            kind = "empty pages" if self.empty == self.sharing else "pages"
            return f"{self.documents} {kind}, one simhash ({common})"
        return (f"{self.documents} pages, {self.distinct} simhashes; {self.sharing} "
                f"{'empty pages ' if self.empty == self.sharing else ''}share {common}")


def find_spikes(fingerprints: U64, tokens: I64, urls: Sequence[str | None],
                buckets: int = 128, top: int = 5) -> list[Spike]:
    """The ``top`` buckets holding at least 3 fingerprints, twice the mean and 3 standard
    deviations (Poisson) above it, fullest first; ``tokens`` counts each document's words
    (0 = empty page)."""
    fingerprints = np.asarray(fingerprints, dtype=np.uint64)
    counts = bucket_counts(fingerprints, buckets)
    mean = fingerprints.size / buckets
    limit = max(3.0, 2 * mean, mean + 3 * np.sqrt(mean))
    chosen = [int(b) for b in np.argsort(-counts, kind="stable")[:top] if counts[b] >= limit]
    index = _bucket_index(fingerprints, buckets)
    spikes = []
    for bucket in chosen:
        members = np.flatnonzero(index == bucket)
        values, sharing = np.unique(fingerprints[members], return_counts=True)
        common = values[np.argmax(sharing)]
        docs = members[fingerprints[members] == common]
        example = next((urls[d] for d in docs.tolist() if urls[d]), None)
        spikes.append(Spike(bucket, int(members.size), int(values.size), int(common),
                            int(docs.size),
                            int(np.count_nonzero(tokens[docs] == 0)), example))
    return spikes
