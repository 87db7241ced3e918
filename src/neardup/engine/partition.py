"""One fingerprint partition on disk: a run of consecutive documents of one input split.

A partition directory holds, for its documents in input order:

- ``meta.parquet`` (zstd): id, url, host, source, offset, fetched, revisit_of, links (strings)
  and the numeric columns of :data:`NUMERIC` (lengths, token counts, the exact-level hashes,
  simhash);
- ``shingles.npy`` + ``shingle_offsets.npy``: the distinct sorted verification shingle sets of
  the partition, concatenated (CSR offsets, one more than the sets), and ``shingle_index.npy``:
  the set of each document (documents with equal sets, exact copies, share one);
- method ``minhash``: ``signatures.npy``, the signatures (what verification reads for the
  estimate column: recomputing them from the sets cost about a fifth of the near stage on real
  text, for about 1 KB more per document), and ``bands.npy``, the LSH band keys of each
  document's signature (what the candidates stage reads), when the signature is a function of
  the verification set (the default: same shingles). Partitions written before hold the band
  keys alone there: their signatures are recomputed from the sets;
- ``features.pkl``: the per-document features of the other near methods, pickled;
- ``article/``: for a run comparing two views of a page (``DedupConfig.views``), the article
  view of every document as a partition of its own (same rows; a document without an article
  has no tokens and an empty set there);
- ``layout.json``: what the partition stores (:class:`Layout`).

Partitions are written to a temporary directory and renamed into place
(:func:`neardup.engine.workdir.publish_dir`), so a partition that exists is complete. The readers
also read the partitions of the earlier format (one set per document, stored signatures).
"""

from __future__ import annotations

import dataclasses
import json
import pickle
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from neardup._types import I64, U64
from neardup.config import DedupConfig, MinHashConfig
from neardup.engine.workdir import read_array, write_array, write_concatenated
from neardup.errors import CorruptDataError
from neardup.index.lsh import LSHBands, band_keys
from neardup.methods.joins import SignatureBands, Signer
from neardup.methods.prints import DocumentPrints
from neardup.methods.registry import join_of
from neardup.sources.columns import numeric_array, string_array, string_lists
from neardup.store.durable import sync, sync_dir

__all__ = ["ARTICLE", "NUMERIC", "Layout", "band_key_rows", "layout_for", "read_features",
           "read_layout", "read_meta", "read_prints", "shingle_slices", "signature_rows",
           "stored_shingles", "write_partition"]

NUMERIC = ("offset", "length", "text_chars", "tokens", "identical", "lexical", "shingle", "simhash")
_UNSIGNED = ("identical", "lexical", "shingle", "simhash")
_STRINGS = ("id", "url", "host", "source", "fetched", "revisit_of")
LAYOUT = "layout.json"
_GATHER_ROWS = 2048
"""Rows whose sets :func:`shingle_slices` gathers with one index array (about 10 MB of it)."""
ARTICLE = "article"
"""The sub-folder of a partition holding its documents' article views."""


@dataclass(frozen=True, slots=True)
class Layout:
    """What a partition stores besides its metadata and shingle sets.

    ``signatures``: the min-hash width (0: no min-hash); ``derived``: the signatures are a
    function of the verification sets with ``seed`` (recomputed where a partition does not
    store them); ``bands`` x ``rows``: the LSH banding whose keys are stored (``derived``
    only); ``article``: the article views are
    stored in ``article/``."""

    links: bool = False
    features: bool = False
    signatures: int = 0
    derived: bool = False
    seed: int = 0
    bands: int = 0
    rows: int = 0
    article: bool = False

    def __post_init__(self) -> None:
        if self.signatures < 0 or self.bands < 0 or self.rows < 0:
            raise ValueError(f"negative sizes in {self}")
        if self.derived and not (self.signatures and self.bands and self.rows):
            raise ValueError(f"derived signatures need a width and a banding: {self}")
        if self.bands * self.rows > self.signatures:
            raise ValueError(f"{self.bands} bands of {self.rows} rows exceed {self.signatures}")

    @property
    def banding(self) -> LSHBands:
        return LSHBands(self.bands, self.rows)


def layout_for(config: DedupConfig, *, features: bool) -> Layout:
    """The layout of the partitions of a run of ``config``."""
    join = join_of(config)
    if not isinstance(join, SignatureBands):
        return Layout(links=config.links, features=features)
    minhash = config.of(MinHashConfig)
    article = len(config.views) > 1
    if minhash.shingles != config.verify_shingles:  # not a function of the stored sets
        return Layout(links=config.links, features=features, signatures=minhash.num_perm,
                      article=article)
    bands = join.banding(config)
    return Layout(links=config.links, features=features, signatures=minhash.num_perm,
                  derived=True, seed=minhash.seed, bands=bands.bands, rows=bands.rows,
                  article=article)


def read_layout(folder: Path) -> Layout:
    """The partition's layout (the earlier format, without ``layout.json``: from its files)."""
    path = folder / LAYOUT
    if path.exists():
        return Layout(**json.loads(path.read_text()))
    width = 0
    if (folder / "signatures.npy").exists():
        width = int(read_array(folder / "signatures.npy", mmap=True).shape[1])
    return Layout(features=(folder / "features.pkl").exists(), signatures=width)


def _meta_table(prints: list[DocumentPrints], links: bool, strings: bool = True) -> pa.Table:
    columns: dict[str, Any] = {name: string_array([getattr(p, name) for p in prints])
                               for name in (_STRINGS if strings else ())}
    for name in NUMERIC:
        kind = np.uint64 if name in _UNSIGNED else np.int64
        columns[name] = numeric_array(np.array([getattr(p, name) for p in prints], dtype=kind))
    if links:
        columns["links"] = string_lists([p.links for p in prints])
    return pa.table(columns)


def _distinct_sets(prints: list[DocumentPrints]) -> tuple[list[U64], I64, I64]:
    """The distinct shingle sets, their CSR offsets and the set of each document; equal sets
    are found by the exact-level set hash and compared in full before they are shared."""
    found: dict[int, list[int]] = {}
    kept: list[U64] = []
    index = np.empty(len(prints), dtype=np.int64)
    for row, p in enumerate(prints):
        candidates = found.get(p.shingle, [])
        if candidates and p.shingles.size == 0 == kept[candidates[0]].size:
            index[row] = candidates[0]  # empty sets (article views of pages without one)
            continue
        same = [k for k in candidates if np.array_equal(kept[k], p.shingles)]
        if same:
            index[row] = same[0]
            continue
        found.setdefault(p.shingle, []).append(len(kept))
        index[row] = len(kept)
        kept.append(p.shingles)
    offsets = np.zeros(len(kept) + 1, dtype=np.int64)
    np.cumsum([s.size for s in kept], out=offsets[1:])
    return kept, offsets, index


def _write_minhash(folder: Path, prints: list[DocumentPrints], layout: Layout) -> None:
    empty = np.zeros(layout.signatures, dtype=np.uint64)  # a revisit: never a candidate
    rows = [p.signature if p.signature is not None else empty for p in prints]
    signatures = np.stack(rows) if rows else np.empty((0, layout.signatures), dtype=np.uint64)
    if not layout.derived or any(p.signature is not None for p in prints):
        write_array(folder / "signatures.npy", signatures)  # (not the article views of a
    if not layout.derived:                                  # partition of pages without one)
        return
    keys = np.empty((len(prints), layout.bands), dtype=np.uint64)
    for band in range(layout.bands):
        keys[:, band] = band_keys(signatures, band, layout.rows)
    write_array(folder / "bands.npy", keys)


def _no_article(prints: DocumentPrints, empty: U64) -> DocumentPrints:
    """The article view of a document that has none: no tokens, the ``empty`` set (never a
    candidate: the near stage joins the article views of documents with tokens only). Built
    field by field: ``dataclasses.replace`` costs about four times more per document."""
    return DocumentPrints(
        id=prints.id, url=prints.url, host=prints.host, source=prints.source,
        offset=prints.offset, fetched=prints.fetched, length=prints.length, text_chars=0,
        tokens=0, identical=0, lexical=0, shingle=0, simhash=0, signature=None, shingles=empty,
        revisit_of=prints.revisit_of, extract_seconds=prints.extract_seconds,
        fingerprint_seconds=prints.fingerprint_seconds)


def write_partition(folder: Path, prints: list[DocumentPrints], layout: Layout, *,
                    strings: bool = True) -> None:
    """Write the documents of one partition into ``folder`` (an empty temporary directory);
    without ``strings``, its metadata holds the numeric columns only (an article view's)."""
    pq.write_table(_meta_table(prints, layout.links, strings), folder / "meta.parquet",
                   compression="zstd")
    sets, offsets, index = _distinct_sets(prints)
    write_concatenated(folder / "shingles.npy", sets, np.dtype(np.uint64))
    write_array(folder / "shingle_offsets.npy", offsets)
    write_array(folder / "shingle_index.npy", index.astype(np.int32))
    if layout.signatures:
        _write_minhash(folder, prints, layout)
    if layout.features:
        with open(folder / "features.pkl", "wb") as out:
            pickle.dump([p.features for p in prints], out, protocol=pickle.HIGHEST_PROTOCOL)
    if layout.article:
        (folder / ARTICLE).mkdir()
        empty = np.empty(0, np.uint64)
        write_partition(folder / ARTICLE, [p.article or _no_article(p, empty) for p in prints],
                        dataclasses.replace(layout, links=False, features=False, article=False),
                        strings=False)
        sync_dir(folder / ARTICLE)
    with open(folder / LAYOUT, "w") as out:  # synced; published with its directory
        out.write(json.dumps(dataclasses.asdict(layout), sort_keys=True))
        sync(out)


def read_meta(folder: Path, columns: list[str] | None = None) -> pa.Table:
    """The partition's metadata (``columns`` of it); a file that is not whole Parquet raises
    :class:`CorruptDataError` naming it. (``ParquetFile``, not ``pq.read_table``, which imports
    pyarrow.dataset and pyarrow.compute to read one file.)"""
    path = folder / "meta.parquet"
    try:
        with pq.ParquetFile(path) as meta:
            return meta.read(columns=columns)
    except (pa.ArrowInvalid, pa.ArrowIOError, OSError) as err:
        raise CorruptDataError(f"{path}: not a whole Parquet file ({err})") from err


def read_features(folder: Path) -> list[object]:
    """The partition's pickled features; a damaged file raises :class:`CorruptDataError`."""
    path = folder / "features.pkl"
    try:
        with open(path, "rb") as source:
            features: list[object] = pickle.load(source)
    except (pickle.UnpicklingError, EOFError, ValueError, AttributeError, ImportError) as err:
        raise CorruptDataError(f"{path}: not a whole pickle ({err})") from err
    return features


def _set_bounds(folder: Path, rows: I64) -> tuple[I64, I64]:
    """(start, end) in ``shingles.npy`` of the sets of ``rows``."""
    offsets = read_array(folder / "shingle_offsets.npy")
    index_path = folder / "shingle_index.npy"
    sets = read_array(index_path)[rows] if index_path.exists() else rows
    return offsets[sets], offsets[sets + 1]


def stored_shingles(folder: Path) -> int:
    """The shingles stored in the partition (each shared set once)."""
    return int(read_array(folder / "shingle_offsets.npy")[-1])


def shingle_slices(folder: Path, rows: I64) -> tuple[U64, I64]:
    """The shingle sets of ``rows`` (local indices) as (flat, CSR offsets), read through a
    memory map that is dropped before returning (so resident pages do not accumulate)."""
    starts, ends = _set_bounds(folder, rows)
    out_offsets = np.zeros(rows.size + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=out_offsets[1:])
    mapped = read_array(folder / "shingles.npy", mmap=True)
    flat = np.empty(int(out_offsets[-1]), dtype=np.uint64)
    source = np.asarray(mapped)  # a plain view: slicing a memmap costs microseconds a slice
    for first in range(0, rows.size, _GATHER_ROWS):
        last = min(first + _GATHER_ROWS, rows.size)
        low, high = int(out_offsets[first]), int(out_offsets[last])
        shift = np.repeat(starts[first:last] - out_offsets[first:last], ends[first:last]
                          - starts[first:last])
        np.take(source, np.arange(low, high, dtype=np.int64) + shift, out=flat[low:high])
    del mapped, source
    return flat, out_offsets


def signature_rows(folder: Path, rows: I64, signer: Signer) -> U64:
    """The signatures of ``rows`` (local indices), one row each: read where stored, else
    recomputed by ``signer`` (the run's) from their verification sets (the values the
    fingerprint stage had)."""
    stored = folder / "signatures.npy"
    if stored.exists():
        mapped = read_array(stored, mmap=True)
        signatures: U64 = np.array(mapped[rows])
        del mapped
        return signatures
    layout = read_layout(folder)
    flat, offsets = shingle_slices(folder, rows)
    signatures = np.empty((rows.size, layout.signatures), dtype=np.uint64)
    for row in range(rows.size):
        signatures[row] = signer.of_shingles(flat[offsets[row]:offsets[row + 1]])
    return signatures


def band_key_rows(folder: Path, rows: I64, bands: LSHBands, signer: Signer,
                  adjust: Callable[[U64], U64] | None = None) -> U64:
    """The LSH band keys of ``rows`` (one column per band): read where stored for this banding,
    else from their signatures, first passed through ``adjust`` when given (the signatures of
    documents pruned of templates: :class:`neardup.engine.templates.ContentReader`)."""
    layout = read_layout(folder)
    if adjust is None and layout.derived and layout.banding == bands:
        mapped = read_array(folder / "bands.npy", mmap=True)
        keys: U64 = np.array(mapped[rows])
        del mapped
        return keys
    signatures = signature_rows(folder, rows, signer)
    if adjust is not None:
        signatures = adjust(signatures)
    keys = np.empty((rows.size, bands.bands), dtype=np.uint64)
    for band in range(bands.bands):
        keys[:, band] = band_keys(signatures, band, bands.rows)
    return keys


def read_prints(folder: Path, features: bool) -> list[DocumentPrints]:
    """The partition's documents as :class:`DocumentPrints` (for the in-memory near methods,
    whose partitions store no signatures)."""
    meta = read_meta(folder).to_pydict()
    rows = np.arange(len(meta["id"]), dtype=np.int64)
    flat, offsets = shingle_slices(folder, rows)
    extra = read_features(folder) if features else None
    prints = []
    for row in rows.tolist():
        fields = {name: meta[name][row] for name in (*_STRINGS, *NUMERIC)}
        prints.append(DocumentPrints(
            **fields, signature=None,
            shingles=flat[offsets[row]:offsets[row + 1]],
            features=None if extra is None else extra[row],
            links=tuple(meta["links"][row]) if "links" in meta else ()))
    return prints
