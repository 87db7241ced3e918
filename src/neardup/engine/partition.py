"""One fingerprint partition on disk: a run of consecutive documents of one input split.

A partition directory holds, for its documents in input order:

- ``meta.parquet`` (zstd): id, url, host, source, offset, fetched, revisit_of, links (strings)
  and the numeric columns of :data:`NUMERIC` (lengths, token counts, the exact-level hashes,
  simhash);
- the verification sets, in one of two forms (``Layout.sequences``): by default
  ``shingles.npy`` + ``shingle_offsets.npy``: the distinct sorted verification shingle sets of
  the partition, concatenated (CSR offsets, one more than the sets), and
  ``shingle_index.npy``: the set of each document (documents with equal sets, exact copies,
  share one); or, with the engine's ``compact_sets`` option, since the sets are a function of
  the documents' token hashes, the token sequences they were made from, rebuilt when read
  (:mod:`neardup.engine.sequences`: about a quarter of the bytes, for more CPU where sets are
  read);
- method ``minhash``: ``signatures.npy``, the signatures (what verification reads for the
  estimate column: recomputing them from the sets cost about a fifth of the near stage on real
  text, for about 1 KB more per document; kept beside the token sequences, where they are the
  largest file: signing a rebuilt set costs about 35 us a candidate document, and the work
  directory of a 10M run fits without dropping them), and ``bands.npy``, the LSH band keys of each
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
also read the partitions of the earlier format (one set per document, stored signatures), and
each partition is read in its own form, so that a work directory resumes whichever form its
partitions were written in.
"""

from __future__ import annotations

import dataclasses
import io
import json
import operator
import os
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
from neardup.engine.arrayrows import array_header, read_ranges, read_rows
from neardup.engine.sequences import SequenceFile, sequence_sets, sequence_shingles
from neardup.engine.workdir import read_array, write_array
from neardup.errors import CorruptDataError
from neardup.index.lsh import LSHBands, band_keys
from neardup.methods.joins import SignatureBands, Signer
from neardup.methods.prints import DocumentPrints
from neardup.methods.registry import join_of
from neardup.sources.columns import numeric_array, string_array, string_lists
from neardup.store.durable import sync, sync_dir

__all__ = ["ARTICLE", "NUMERIC", "Layout", "PartitionWriter", "band_key_rows", "layout_for",
           "read_features", "read_layout", "read_meta", "read_prints", "shingle_slices",
           "signature_rows", "stored_shingles", "write_partition"]

NUMERIC = ("offset", "length", "text_chars", "tokens", "identical", "lexical", "shingle", "simhash")
_UNSIGNED = ("identical", "lexical", "shingle", "simhash")
_STRINGS = ("id", "url", "host", "source", "fetched", "revisit_of")
LAYOUT = "layout.json"
_SEQUENCE_FIELDS = ("sequences", "shingle_width", "shingle_seed")
"""The fields of :class:`Layout` that a partition of stored sets leaves out of its record."""
_SET_BUFFER = 1 << 20
"""Bytes of shingle sets gathered before a write (a write a set cost as much as the hashing)."""
_NO_SET = np.empty(0, np.uint64)
ARTICLE = "article"
"""The sub-folder of a partition holding its documents' article views."""


@dataclass(frozen=True, slots=True)
class Layout:
    """What a partition stores besides its metadata and shingle sets.

    ``signatures``: the min-hash width (0: no min-hash); ``derived``: the signatures are a
    function of the verification sets with ``seed`` (recomputed where a partition does not
    store them); ``bands`` x ``rows``: the LSH banding whose keys are stored (``derived``
    only); ``article``: the article views are
    stored in ``article/``; ``sequences``: the verification sets are stored as the token
    sequences they are made of, with ``shingle_width`` and ``shingle_seed`` (the run's
    ``verify_shingles``), else as sets (:mod:`neardup.engine.sequences`)."""

    links: bool = False
    features: bool = False
    signatures: int = 0
    derived: bool = False
    seed: int = 0
    bands: int = 0
    rows: int = 0
    article: bool = False
    sequences: bool = False
    shingle_width: int = 0
    shingle_seed: int = 0

    def __post_init__(self) -> None:
        if self.signatures < 0 or self.bands < 0 or self.rows < 0:
            raise ValueError(f"negative sizes in {self}")
        if self.derived and not (self.signatures and self.bands and self.rows):
            raise ValueError(f"derived signatures need a width and a banding: {self}")
        if self.bands * self.rows > self.signatures:
            raise ValueError(f"{self.bands} bands of {self.rows} rows exceed {self.signatures}")
        if self.sequences and self.shingle_width < 1:
            raise ValueError(f"token sequences need a shingle width: {self}")

    @property
    def banding(self) -> LSHBands:
        return LSHBands(self.bands, self.rows)


def layout_for(config: DedupConfig, *, features: bool, sequences: bool = False) -> Layout:
    """The layout of the partitions of a run of ``config``; ``sequences``: the verification
    sets stored as token sequences (the engine's ``compact_sets``), else as sets."""
    join = join_of(config)
    verify = config.verify_shingles
    sets = Layout(links=config.links, features=features, sequences=True,
                  shingle_width=verify.width, shingle_seed=verify.seed) if sequences \
        else Layout(links=config.links, features=features)
    if not isinstance(join, SignatureBands):
        return sets
    minhash = config.of(MinHashConfig)
    article = len(config.views) > 1
    if minhash.shingles != verify:  # not a function of the stored sets
        return dataclasses.replace(sets, signatures=minhash.num_perm, article=article)
    bands = join.banding(config)
    return dataclasses.replace(sets, signatures=minhash.num_perm, derived=True,
                               seed=minhash.seed, bands=bands.bands, rows=bands.rows,
                               article=article)


def read_layout(folder: Path) -> Layout:
    """The partition's layout (the earlier format, without ``layout.json``: from its files)."""
    path = folder / LAYOUT
    if path.exists():
        return Layout(**json.loads(path.read_text()))
    width = 0
    if (folder / "signatures.npy").exists():
        width = int(array_header(folder / "signatures.npy").shape[1])
    return Layout(features=(folder / "features.pkl").exists(), signatures=width)


class _Meta:
    """The metadata columns of a partition, a row at a time: each row's values are kept as one
    tuple (one append a document, not one a column) and turned into columns at the end."""

    def __init__(self, links: bool, strings: bool) -> None:
        self.strings = _STRINGS if strings else ()
        self.names = (*self.strings, *NUMERIC)
        self.rows: list[tuple[Any, ...]] = []
        self.fields = operator.attrgetter(*self.names)
        self.links: list[tuple[str, ...]] | None = [] if links else None

    def add(self, p: DocumentPrints) -> None:
        self.rows.append(self.fields(p))
        if self.links is not None:
            self.links.append(p.links)

    def add_row(self, row: tuple[Any, ...]) -> None:
        """One row's values, in the order of :attr:`names` (no links)."""
        if len(row) != len(self.names):
            raise ValueError(f"a row of {len(row)} values for {len(self.names)} columns")
        self.rows.append(row)

    def table(self) -> pa.Table:
        values = list(zip(*self.rows, strict=True)) if self.rows else [()] * len(self.names)
        found = dict(zip(self.names, values, strict=True))
        columns: dict[str, Any] = {name: string_array(found[name]) for name in self.strings}
        for name in NUMERIC:
            kind = np.uint64 if name in _UNSIGNED else np.int64
            columns[name] = numeric_array(np.array(found[name], dtype=kind))
        if self.links is not None:
            columns["links"] = string_lists(self.links)
        return pa.table(columns)


class _SetFile:
    """``shingles.npy`` written a set at a time, each distinct set once: a set whose exact-level
    hash was met before is compared with the sets of that hash, read back (from the sets not
    yet written, or the file), and shares the equal one. The sets are not held in memory
    (about 5 KB a document on real text: 50 MB for a partition of 10,000): they are gathered
    in a buffer of :data:`_SET_BUFFER` bytes, written when full (a set read back from the
    buffer costs no write: flushing a file's buffer for each exact copy cost about as much
    as writing every set)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.out = open(path, "w+b", buffering=0)  # noqa: SIM115 - closed by finish()
        self.header = self._header(0)
        self.out.write(self.header)
        self.buffer = np.empty(_SET_BUFFER // 8, dtype="<u8")
        self.buffered = 0
        """Values in the buffer: the last ones, after the ``written`` already in the file."""
        self.written = 0
        self.found: dict[int, list[int]] = {}
        self.offsets: list[int] = [0]
        self.index: list[int] = []
        self.empty_set: int | None = None
        """The set :meth:`add_empty` gives (made by its first call)."""

    @staticmethod
    def _header(length: int) -> bytes:
        buffer = io.BytesIO()
        np.lib.format.write_array_header_1_0(buffer, {
            "descr": np.lib.format.dtype_to_descr(np.dtype(np.uint64)),
            "fortran_order": False, "shape": (length,)})
        return buffer.getvalue()

    def _write(self, values: U64) -> None:
        data = np.ascontiguousarray(values, dtype="<u8").data.cast("B")
        while data:
            data = data[self.out.write(data):]

    def _flush(self) -> None:
        self._write(self.buffer[:self.buffered])
        self.written += self.buffered
        self.buffered = 0

    def _stored(self, k: int) -> U64:
        start, end = self.offsets[k], self.offsets[k + 1]
        if start >= self.written:  # a set is in the buffer or in the file, never in both
            return self.buffer[start - self.written:end - self.written]
        data = os.pread(self.out.fileno(), 8 * (end - start), len(self.header) + 8 * start)
        return np.frombuffer(data, dtype="<u8")

    def _append(self, shingles: U64) -> None:
        size = shingles.size
        if self.buffered + size > self.buffer.size:
            self._flush()
            if size > self.buffer.size:
                self._write(shingles)
                self.written += size
                return
        self.buffer[self.buffered:self.buffered + size] = shingles
        self.buffered += size

    def add(self, shingle: int, shingles: U64) -> None:
        candidates = self.found.get(shingle, [])
        for k in candidates:
            if self.offsets[k + 1] - self.offsets[k] == shingles.size and (
                    shingles.size == 0 or np.array_equal(self._stored(k), shingles)):
                self.index.append(k)
                return
        candidates.append(len(self.offsets) - 1)
        self.found[shingle] = candidates
        self.index.append(len(self.offsets) - 1)
        self.offsets.append(self.offsets[-1] + shingles.size)
        self._append(shingles)

    def add_empty(self) -> None:
        """``add(0, an empty set)`` (the article view of a document without one), without
        looking it up again."""
        if self.empty_set is None:
            self.add(0, _NO_SET)
            self.empty_set = self.index[-1]
        else:
            self.index.append(self.empty_set)

    def abort(self) -> None:
        """Close the file, whole or not (nothing else is written)."""
        self.out.close()

    def finish(self) -> tuple[I64, I64]:
        """Close the file (its header now gives its length); the CSR offsets and the set of
        each document."""
        header = self._header(self.offsets[-1])
        if len(header) != len(self.header):
            raise OverflowError(f"{self.path}: {self.offsets[-1]} shingles outgrow the header")
        self._flush()
        self.out.seek(0)
        self.out.write(header)
        sync(self.out)
        self.out.close()
        return np.array(self.offsets, dtype=np.int64), np.array(self.index, dtype=np.int64)


class PartitionWriter:
    """Writes the documents of one partition into ``folder`` (an empty temporary directory) as
    they come, holding their metadata and signatures, not their shingle sets; without
    ``strings``, the metadata holds the numeric columns only (an article view's)."""

    def __init__(self, folder: Path, layout: Layout, *, strings: bool = True) -> None:
        self.folder, self.layout = folder, layout
        self.meta = _Meta(layout.links, strings)
        self.sets: _SetFile | SequenceFile = SequenceFile(folder) if layout.sequences \
            else _SetFile(folder / "shingles.npy")
        self.signatures: list[U64 | None] = []
        self.features: list[object] = []
        self.article: PartitionWriter | None = None
        self.empty = np.empty(0, np.uint64)
        if layout.article:
            (folder / ARTICLE).mkdir()
            self.article = PartitionWriter(folder / ARTICLE, dataclasses.replace(
                layout, links=False, features=False, article=False), strings=False)

    def _add_set(self, p: DocumentPrints) -> None:
        if isinstance(self.sets, _SetFile):
            self.sets.add(p.shingle, p.shingles)
            return
        if p.shingles.size and not p.token_hashes.size:
            raise ValueError(f"{self.folder}: prints of {p.id!r} carry a verification set but "
                             "not the token hashes it was made of")
        self.sets.add(p.token_hashes, p.shingles.size)

    def add(self, p: DocumentPrints) -> None:
        self.meta.add(p)
        self._add_set(p)
        if self.layout.signatures:
            self.signatures.append(p.signature)
        if self.layout.features:
            self.features.append(p.features)
        if self.article is None:
            return
        if p.article is not None:
            self.article.add(p.article)
        else:
            self.article.add_empty(p.offset, p.length)

    def add_empty(self, offset: int, length: int) -> None:
        """The article view of a document that has none (this writer's metadata holds numeric
        columns only): no tokens, an empty set, no signature (never a candidate: the near
        stage joins the article views of documents with tokens only)."""
        assert not self.meta.strings and not self.layout.features and self.article is None
        self.meta.add_row((offset, length, 0, 0, 0, 0, 0, 0))
        if isinstance(self.sets, _SetFile):
            self.sets.add_empty()
        else:
            self.sets.add(self.empty, 0)
        if self.layout.signatures:
            self.signatures.append(None)

    def abort(self) -> None:
        """Close the files left open (after a failure; after :meth:`close`, nothing to do)."""
        self.sets.abort()
        if self.article is not None:
            self.article.abort()

    def close(self) -> None:
        folder, layout = self.folder, self.layout
        if isinstance(self.sets, _SetFile):
            offsets, index = self.sets.finish()
            write_array(folder / "shingle_offsets.npy", offsets)
            write_array(folder / "shingle_index.npy", index.astype(np.int32))
        else:
            self.sets.finish()
        pq.write_table(self.meta.table(), folder / "meta.parquet", compression="zstd")
        if layout.signatures:
            _write_minhash(folder, self.signatures, layout)
        if layout.features:
            with open(folder / "features.pkl", "wb") as out:
                pickle.dump(self.features, out, protocol=pickle.HIGHEST_PROTOCOL)
        if self.article is not None:
            self.article.close()
            sync_dir(folder / ARTICLE)
        with open(folder / LAYOUT, "w") as out:  # synced; published with its directory
            out.write(json.dumps(_layout_record(layout), sort_keys=True))
            sync(out)


def _layout_record(layout: Layout) -> dict[str, Any]:
    """``layout.json``'s fields: a partition of stored sets without the token sequences'
    fields (byte for byte what the writers before them wrote)."""
    record = dataclasses.asdict(layout)
    if not layout.sequences:
        for name in _SEQUENCE_FIELDS:
            del record[name]
    return record


def _write_minhash(folder: Path, found: list[U64 | None], layout: Layout) -> None:
    if not any(signature is not None for signature in found):
        _write_empty_minhash(folder, len(found), layout)
        return
    empty = np.zeros(layout.signatures, dtype=np.uint64)  # a revisit: never a candidate
    signatures = np.stack([signature if signature is not None else empty
                           for signature in found])
    write_array(folder / "signatures.npy", signatures)
    if layout.derived:
        write_array(folder / "bands.npy", _band_keys(signatures, layout))


def _band_keys(signatures: U64, layout: Layout) -> U64:
    keys = np.empty((signatures.shape[0], layout.bands), dtype=np.uint64)
    for band in range(layout.bands):
        keys[:, band] = band_keys(signatures, band, layout.rows)
    return keys


def _write_empty_minhash(folder: Path, rows: int, layout: Layout) -> None:
    """The min-hash files of a partition none of whose ``rows`` has a signature (the article
    views of a partition of pages without one, of plain texts): the all-zero signatures (where
    they are not derived) and their band keys, the keys of one such row repeated (not of
    ``rows`` stacked copies: about 3 us a document)."""
    if not layout.derived:
        write_array(folder / "signatures.npy", np.zeros((rows, layout.signatures), np.uint64))
        return
    one = _band_keys(np.zeros((1, layout.signatures), dtype=np.uint64), layout)
    write_array(folder / "bands.npy", np.repeat(one, rows, axis=0))


def write_partition(folder: Path, prints: list[DocumentPrints], layout: Layout, *,
                    strings: bool = True) -> None:
    """Write the documents of one partition into ``folder`` (:class:`PartitionWriter`)."""
    writer = PartitionWriter(folder, layout, strings=strings)
    try:
        for p in prints:
            writer.add(p)
        writer.close()
    finally:
        writer.abort()


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
    index_path = folder / "shingle_index.npy"
    sets = read_rows(index_path, rows).astype(np.int64) if index_path.exists() else rows
    bounds = read_rows(folder / "shingle_offsets.npy", np.concatenate([sets, sets + 1]))
    return bounds[:sets.size], bounds[sets.size:]


def stored_shingles(folder: Path) -> int:
    """The shingles of the partition's sets (each shared set once)."""
    if (folder / "shingle_offsets.npy").exists():
        return int(read_array(folder / "shingle_offsets.npy")[-1])
    return sequence_shingles(folder)


def shingle_slices(folder: Path, rows: I64) -> tuple[U64, I64]:
    """The shingle sets of ``rows`` (local indices) as (flat, CSR offsets): rebuilt from their
    token sequences (:func:`neardup.engine.sequences.sequence_sets`), or, in a partition that
    stores sets, each read from the file straight into its place (a memory map would count
    every page it touches, about the whole file, in the process's resident memory while it is
    open)."""
    layout = read_layout(folder)
    if layout.sequences:
        return sequence_sets(folder, rows, layout.shingle_width, layout.shingle_seed)
    starts, ends = _set_bounds(folder, rows)
    flat, offsets = read_ranges(folder / "shingles.npy", starts, ends)
    return flat, offsets


def signature_rows(folder: Path, rows: I64, signer: Signer) -> U64:
    """The signatures of ``rows`` (local indices), one row each: read where stored, else
    recomputed by ``signer`` (the run's) from their verification sets (the values the
    fingerprint stage had)."""
    stored = folder / "signatures.npy"
    if stored.exists():
        signatures: U64 = read_rows(stored, rows)
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
        keys: U64 = read_rows(folder / "bands.npy", rows)
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
