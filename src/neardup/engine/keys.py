"""The candidate keys of the counting and equal-key near methods, one partition at a time.

Pure functions from the features of a partition's exact-level survivors (their doc numbers
given) to ``(key, low, doc, weight)`` rows (:data:`KEYED`): the engine routes the rows to bucket
files by ``key`` and joins each bucket alone (:mod:`neardup.engine.counting`,
:mod:`neardup.engine.methods`). ``low`` completes keys wider than 64 bits (SMFA's MD5) and is 0
otherwise; ``weight`` carries a per-document number the join needs (SMFA: the segments behind the
fingerprint; sketch equivalence: the sketch's size).

- ``chunks``: one row per distinct chunk fingerprint of a document (S&GM's FPrint-DocID);
- ``sketch``: one row per sketch value (Broder's phase 2 entries); ``supershingle``: one per
  super-shingle;
- sketch equivalence: one row per document with a non-empty sketch, keyed by the digest of the
  sketch and its modulus (as :mod:`neardup.methods.sketch` keys it);
- ``smfa``: one row per fingerprinted document, keyed by its MD5.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.fingerprints.exact import digest64
from neardup.methods.sketch import SketchFeatures

if TYPE_CHECKING:
    from neardup.fingerprints.smfa import SmfaPrint

__all__ = ["KEYED", "chunk_rows", "equivalence_rows", "keyed", "smfa_rows", "supershingle_rows",
           "value_rows"]

KEYED = np.dtype([("key", "<u8"), ("low", "<u8"), ("doc", "<i8"), ("weight", "<i8")])


def keyed(keys: U64, docs: I64, low: U64 | None = None, weight: I64 | None = None
          ) -> npt.NDArray[np.void]:
    """Rows of :data:`KEYED` from columns (``low`` and ``weight`` 0 when not given)."""
    rows = np.zeros(keys.size, dtype=KEYED)
    rows["key"], rows["doc"] = keys, docs
    if low is not None:
        rows["low"] = low
    if weight is not None:
        rows["weight"] = weight
    return rows


def _sets_rows(sets: Sequence[npt.NDArray[np.integer]], docs: I64) -> npt.NDArray[np.void]:
    sizes = np.array([s.size for s in sets], dtype=np.int64)
    flat = (np.concatenate(sets).astype(np.uint64) if sets else np.empty(0, dtype=np.uint64))
    return keyed(flat, np.repeat(docs, sizes))


def chunk_rows(chunks: Sequence[npt.NDArray[np.integer]], docs: I64) -> npt.NDArray[np.void]:
    """(fprint, doc) rows of documents given by their distinct chunk fingerprints."""
    return _sets_rows(chunks, docs)


def value_rows(features: Sequence[SketchFeatures], docs: I64) -> npt.NDArray[np.void]:
    """(sketch value, doc) rows."""
    return _sets_rows([f.sketch for f in features], docs)


def supershingle_rows(features: Sequence[SketchFeatures], docs: I64) -> npt.NDArray[np.void]:
    """(super-shingle, doc) rows (documents without super-shingles give none)."""
    empty = np.empty(0, dtype=np.uint64)
    return _sets_rows([f.supershingles if f.supershingles is not None else empty
                       for f in features], docs)


def equivalence_rows(features: Sequence[SketchFeatures], docs: I64) -> npt.NDArray[np.void]:
    """(digest of the sketch and modulus, doc, sketch size) of documents with a sketch."""
    chosen = [k for k, f in enumerate(features) if f.sketch.size > 0]
    keys = np.array([digest64(features[k].sketch.astype("<u8").tobytes()
                              + features[k].modulus.to_bytes(8, "little")) for k in chosen],
                    dtype=np.uint64)
    sizes = np.array([features[k].sketch.size for k in chosen], dtype=np.int64)
    return keyed(keys, docs[np.array(chosen, dtype=np.int64)], weight=sizes)


def smfa_rows(prints: Sequence[SmfaPrint], docs: I64) -> npt.NDArray[np.void]:
    """(MD5 high, MD5 low, doc, segments) of fingerprinted documents."""
    digests = np.frombuffer(b"".join(p.digest for p in prints), dtype=">u8").reshape(-1, 2) \
        if prints else np.empty((0, 2), dtype=">u8")
    return keyed(digests[:, 0].astype(np.uint64), docs, digests[:, 1].astype(np.uint64),
                 np.array([p.segments for p in prints], dtype=np.int64))
