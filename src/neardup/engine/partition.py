"""One fingerprint partition on disk: a run of consecutive documents of one input split.

A partition directory holds, for its documents in input order:

- ``meta.parquet``: id, url, host, source, offset, fetched, revisit_of, links (strings) and the
  numeric columns of :data:`NUMERIC` (lengths, token counts, the exact-level hashes, simhash);
- ``shingles.npy`` + ``shingle_offsets.npy``: the sorted verification shingle sets, concatenated
  (CSR offsets, ``n + 1`` of them);
- ``signatures.npy``: the min-hash signatures (method ``minhash``), one row per document;
- ``features.pkl``: the per-document features of the other near methods, pickled.

Partitions are written to a temporary directory and renamed into place
(:func:`neardup.engine.workdir.publish_dir`), so a partition that exists is complete.
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from neardup._types import I64, U64
from neardup.engine.workdir import read_array, write_array
from neardup.methods.prints import DocumentPrints

__all__ = ["NUMERIC", "read_features", "read_meta", "read_prints", "shingle_slices",
           "write_partition"]

NUMERIC = ("offset", "length", "text_chars", "tokens", "identical", "lexical", "shingle", "simhash")
_UNSIGNED = ("identical", "lexical", "shingle", "simhash")
_STRINGS = ("id", "url", "host", "source", "fetched", "revisit_of")


def _meta_table(prints: list[DocumentPrints], links: bool) -> pa.Table:
    columns: dict[str, Any] = {name: pa.array([getattr(p, name) for p in prints], pa.string())
                               for name in _STRINGS}
    for name in NUMERIC:
        kind = pa.uint64() if name in _UNSIGNED else pa.int64()
        columns[name] = pa.array([getattr(p, name) for p in prints], kind)
    if links:
        columns["links"] = pa.array([list(p.links) for p in prints], pa.list_(pa.string()))
    return pa.table(columns)


def write_partition(folder: Path, prints: list[DocumentPrints], *, links: bool,
                    signatures: int, features: bool) -> None:
    """Write the documents of one partition into ``folder`` (an empty temporary directory)."""
    pq.write_table(_meta_table(prints, links), folder / "meta.parquet")
    sizes = np.array([p.shingles.size for p in prints], dtype=np.int64)
    offsets = np.zeros(len(prints) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    flat = (np.concatenate([p.shingles for p in prints]) if prints
            else np.empty(0, dtype=np.uint64))
    write_array(folder / "shingles.npy", flat.astype(np.uint64, copy=False))
    write_array(folder / "shingle_offsets.npy", offsets)
    if signatures:
        empty = np.zeros(signatures, dtype=np.uint64)
        rows = [p.signature if p.signature is not None else empty for p in prints]
        write_array(folder / "signatures.npy",
                    np.stack(rows) if rows else np.empty((0, signatures), dtype=np.uint64))
    if features:
        with open(folder / "features.pkl", "wb") as out:
            pickle.dump([p.features for p in prints], out, protocol=pickle.HIGHEST_PROTOCOL)


def read_meta(folder: Path, columns: list[str] | None = None) -> pa.Table:
    return pq.read_table(folder / "meta.parquet", columns=columns)


def read_features(folder: Path) -> list[object]:
    with open(folder / "features.pkl", "rb") as source:
        features: list[object] = pickle.load(source)
    return features


def shingle_slices(folder: Path, rows: I64) -> tuple[U64, I64]:
    """The shingle sets of ``rows`` (local indices) as (flat, CSR offsets), read through a
    memory map that is dropped before returning (so resident pages do not accumulate)."""
    offsets = read_array(folder / "shingle_offsets.npy")
    starts, ends = offsets[rows], offsets[rows + 1]
    out_offsets = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=out_offsets[1:])
    mapped = np.load(folder / "shingles.npy", mmap_mode="r")
    flat = np.empty(int(out_offsets[-1]), dtype=np.uint64)
    for index, (start, end) in enumerate(zip(starts.tolist(), ends.tolist(), strict=True)):
        flat[out_offsets[index]:out_offsets[index + 1]] = mapped[start:end]
    del mapped
    return flat, out_offsets


def read_prints(folder: Path, features: bool) -> list[DocumentPrints]:
    """The partition's documents as :class:`DocumentPrints` (for the in-memory near methods)."""
    meta = read_meta(folder).to_pydict()
    offsets = read_array(folder / "shingle_offsets.npy")
    flat = read_array(folder / "shingles.npy")
    signature_path = folder / "signatures.npy"
    signatures = read_array(signature_path) if signature_path.exists() else None
    extra = read_features(folder) if features else None
    prints = []
    for row in range(len(meta["id"])):
        fields = {name: meta[name][row] for name in (*_STRINGS, *NUMERIC)}
        prints.append(DocumentPrints(
            **fields, signature=None if signatures is None else signatures[row],
            shingles=flat[offsets[row]:offsets[row + 1]],
            features=None if extra is None else extra[row],
            links=tuple(meta["links"][row]) if "links" in meta else ()))
    return prints
