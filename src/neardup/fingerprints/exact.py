"""Whole-document fingerprints at Broder's three levels of exact equivalence.

- identical: the hash of the raw payload bytes;
- lexically equivalent: the hash of the canonical text (tokens, case and punctuation ignored);
- shingle-equivalent: the hash of the sorted set of distinct shingle hashes.

xxh3 (64-bit) by default; MD5 (its first 64 bits, big-endian) where a paper says MD5.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
import xxhash

from neardup._types import U64
from neardup.config import ExactConfig, HashName

__all__ = ["ExactPrints", "digest64", "exact_prints"]


def digest64(data: bytes | memoryview, hash_name: HashName = "xxh3") -> int:
    """A 64-bit digest of ``data`` (bytes, or any contiguous buffer: its bytes): xxh3_64, or
    the first 8 bytes of MD5."""
    if hash_name == "md5":
        return int.from_bytes(hashlib.md5(data).digest()[:8], "big")
    return int(xxhash.xxh3_64_intdigest(data))


_LITTLE_U64 = np.dtype("<u8")


@dataclass(frozen=True, slots=True)
class ExactPrints:
    """The three exact-level fingerprints of one document."""

    identical: int
    lexical: int
    shingle: int


def exact_prints(
    raw: bytes,
    canonical: bytes,
    shingle_set: U64 | None,
    config: ExactConfig = ExactConfig(),
) -> ExactPrints:
    """Fingerprints of a document at the three exact levels (see the module docstring); the
    shingle level is 0 without a ``shingle_set`` (not asked for). The set is hashed in place
    (its little-endian bytes, not a copy of them)."""
    shingle = 0
    if shingle_set is not None:
        sorted_set = np.ascontiguousarray(shingle_set, dtype=_LITTLE_U64)
        shingle = digest64(sorted_set.data, config.hash)
    return ExactPrints(identical=digest64(raw, config.hash),
                       lexical=digest64(canonical, config.hash), shingle=shingle)
