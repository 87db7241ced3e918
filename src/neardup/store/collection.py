"""A persistent, crash-safe store of documents: add them, query near-copies, flush, compact.

Documents are numbered in the order they are added. Adding a batch fingerprints it, finds each
new document's matches (simhash within ``max_k``, against the store and within the batch), merges
their clusters, and commits the rows in one SQLite transaction: once :meth:`Store.add` returns,
the batch survives a killed process. Committed rows not yet in a segment are the insert log; on
open they are read back into the in-memory delta of the :class:`HammingIndex`. :meth:`flush`
writes the delta as an immutable segment; small segments are merged as they accumulate (each
merge at least quadruples a segment, so a store of N documents keeps O(log N) segments);
:meth:`compact` merges them all. Layout and file formats: :mod:`neardup.store.formats`.
"""

from __future__ import annotations

import dataclasses
import fcntl
import functools
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from neardup.analysis.sweeps import Sighting
from neardup.config import StoreConfig
from neardup.document import Document
from neardup.errors import ConfigError, CorruptDataError, OutputError
from neardup.index.compressed import ARRAY_NAMES, CompressedTable
from neardup.index.hamming import HammingDesign, TablePlan, hamming_pairs
from neardup.index.segmented import HammingIndex
from neardup.index.tables import PermutedTables
from neardup.pipeline.executor import ordered_map
from neardup.pipeline.fingerprint import DocumentPrints
from neardup.store import formats
from neardup.store.clusters import merge_clusters
from neardup.store.lookup import StoreMatch, query_document, query_url, similar_documents
from neardup.store.printer import features_of, store_fingerprinter
from neardup.store.records import AddReport, document_row, unsigned

__all__ = ["Store", "open_store"]

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
BATCH = 5_000
MERGE_FACTOR = 4


def config_from_dict(data: dict[str, Any]) -> StoreConfig:
    """The StoreConfig a manifest recorded."""
    from neardup.config import (
        ExactConfig,
        ShingleConfig,
        SimHashConfig,
        SketchConfig,
        TextConfig,
    )

    simhash = dict(data["simhash"])
    simhash["shingles"] = ShingleConfig(**simhash["shingles"])
    sketch = None
    if data.get("sketch") is not None:
        fields = dict(data["sketch"])
        fields["shingles"] = ShingleConfig(**fields["shingles"])
        sketch = SketchConfig(**fields)
    tables = tuple((tuple(tuple(seg) for seg in segments), int(bits))
                   for segments, bits in data["tables"])
    return StoreConfig(text=TextConfig(**data["text"]), exact=ExactConfig(**data["exact"]),
                       simhash=SimHashConfig(**simhash), max_k=int(data["max_k"]),
                       tables=tables, compress=bool(data["compress"]), sketch=sketch,
                       keep_shingles=bool(data.get("keep_shingles", False)),
                       sketch_clusters=data.get("sketch_clusters"))


def config_to_dict(config: StoreConfig) -> dict[str, Any]:
    data: dict[str, Any] = json_ready(dataclasses.asdict(config))
    return data


def json_ready(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    return value


def _plans(config: StoreConfig) -> list[TablePlan]:
    if config.tables:
        return [TablePlan(tuple(segments), bits) for segments, bits in config.tables]
    base, extra = divmod(64, config.max_k + 1)
    blocks = tuple(base + 1 if i < extra else base for i in range(config.max_k + 1))
    return HammingDesign(blocks, 1).plans()


def _differences(stored: dict[str, Any], wanted: dict[str, Any], prefix: str = "") -> list[str]:
    keys = sorted(set(stored) | set(wanted))
    out = []
    for key in keys:
        a, b = stored.get(key), wanted.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out += _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix}{key}: store has {a!r}, asked for {b!r}")
    return out


class Store:
    """A store directory opened for reading and (unless ``read_only``) appending."""

    def __init__(self, root: Path, config: StoreConfig, read_only: bool, flush_every: int,
                 verify: bool) -> None:
        self.root = root
        self.config = config
        self.read_only = read_only
        self.flush_every = flush_every
        self._lock = None if read_only else _lock(root)
        _, self.segments, self.next_doc = formats.read_manifest(root)
        self.removed_debris = [] if read_only else formats.remove_debris(root, self.segments)
        self.db = formats.connect_meta(root)
        self.index = HammingIndex(_plans(config), config.max_k)
        for entry in self.segments:
            self.index.segments.append(self._load_segment(entry, verify))
        self._recover_log()

    # -- opening -----------------------------------------------------------------------------

    def _load_segment(self, entry: formats.SegmentEntry, verify: bool) -> PermutedTables:
        arrays = formats.read_segment(self.root, entry, verify)
        try:
            tables: npt.NDArray[np.uint64] | list[CompressedTable] = (
                [CompressedTable.from_arrays({n: arrays[f"table{t}.{n}"] for n in ARRAY_NAMES},
                                             verify=verify)
                 for t in range(len(self.index.plans))]
                if self.config.compress else arrays["tables"])
            return PermutedTables(self.index.plans, arrays["fingerprints"], arrays["ids"],
                                  tables)
        except (KeyError, ConfigError, CorruptDataError) as error:
            raise CorruptDataError(f"{formats.segment_dir(self.root, entry.name)}: "
                                   f"inconsistent arrays ({error})") from error

    def _recover_log(self) -> None:
        """Mark rows the manifest's segments hold (a flush interrupted after the manifest was
        replaced), then load the remaining log into the delta."""
        if not self.read_only:
            with self.db:
                for entry in self.segments:
                    self.db.execute("UPDATE documents SET segment=? WHERE doc BETWEEN ? AND ? "
                                    "AND (segment IS NULL OR segment != ?)",
                                    (int(entry.name), entry.first, entry.last, int(entry.name)))
        rows = self.db.execute("SELECT doc, simhash, tokens FROM documents WHERE segment IS NULL "
                               "ORDER BY doc").fetchall()
        if rows:
            docs = np.array([r[0] for r in rows], dtype=np.int64)
            fps = np.array([r[1] for r in rows], dtype=np.int64).view(np.uint64)
            indexed = np.array([r[2] > 0 for r in rows], dtype=np.bool_)
            self.index.add(fps[indexed], docs[indexed])
            self.next_doc = max(self.next_doc, int(docs.max()) + 1)

    # -- writing -----------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise OutputError(f"{self.root}: opened read-only")

    def add(self, docs: Iterable[Document], *, sweep: str | None = None, workers: int = 1,
            progress: Callable[[int], None] | None = None) -> AddReport:
        """Add documents (committed batch by batch); returns what happened to them."""
        self._writable()
        report = AddReport()
        factory = functools.partial(store_fingerprinter, self.config)
        batch: list[DocumentPrints] = []
        for prints in ordered_map(factory, _payloads(docs), workers):
            batch.append(prints)
            if len(batch) >= BATCH:
                self._add_batch(batch, sweep, report)
                batch = []
                if progress is not None:
                    progress(report.added)
        if batch:
            self._add_batch(batch, sweep, report)
        if progress is not None:
            progress(report.added)
        return report

    def _add_batch(self, batch: list[DocumentPrints], sweep: str | None,
                   report: AddReport) -> None:
        first = self.next_doc
        docs = np.arange(first, first + len(batch), dtype=np.int64)
        fps = np.array([p.simhash for p in batch], dtype=np.uint64)
        indexed = np.array([p.tokens > 0 for p in batch], dtype=np.bool_)
        found = self.index.query_batch(fps[indexed], self.config.max_k)
        positions = np.flatnonzero(indexed)
        a, b = hamming_pairs(fps[indexed], self.config.max_k)
        with self.db:
            clusters = merge_clusters(self.db, docs, positions[found.query], found.id,
                                      positions[a], positions[b])
            self.db.executemany(
                "INSERT INTO documents VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,NULL)",
                [document_row(int(d), p, sweep, int(c))
                 for d, p, c in zip(docs.tolist(), batch, clusters.tolist(), strict=True)])
            sketches = _sketch_rows(docs, batch)
            self.db.executemany("INSERT INTO sketches VALUES (?,?,?,?)", sketches)
            self.db.executemany("INSERT INTO postings VALUES (?,?)", _postings(sketches))
            if self.config.sketch_clusters is not None:
                from neardup.store.urls import merge_sketch_clusters

                merge_sketch_clusters(self, docs, batch)
        self.next_doc += len(batch)
        self.index.add(fps[indexed], docs[indexed])
        report.count(batch, found.query, a, b, docs)
        if self.index.delta_size >= self.flush_every:
            self.flush()

    def flush(self) -> formats.SegmentEntry | None:
        """Write the delta as a new segment; merge segments that have become small."""
        self._writable()
        segment = self.index.freeze()
        if segment is None:
            return None
        first = self.segments[-1].last + 1 if self.segments else 0
        entry = self._write(segment, (first, self.next_doc - 1))
        self._replace_segments([], entry)
        while len(self.segments) > 1 and \
                self.segments[-1].count * MERGE_FACTOR >= self.segments[-2].count:
            self._merge(self.segments[-2:])
        return entry

    def _write(self, segment: PermutedTables, span: tuple[int, int]) -> formats.SegmentEntry:
        name = f"{self._next_segment_number():08d}"
        arrays = {"fingerprints": segment.fingerprints, "ids": segment.ids}
        if self.config.compress:
            compressed = segment.compress().tables
            assert isinstance(compressed, list)
            for t, table in enumerate(compressed):
                arrays.update({f"table{t}.{n}": a for n, a in table.to_arrays().items()})
        else:
            arrays["tables"] = np.asarray(segment.tables)
        size, checksum = formats.write_segment(self.root, name, arrays)
        return formats.SegmentEntry(name, span[0], span[1], len(segment), size, checksum)

    def _next_segment_number(self) -> int:
        return max((int(s.name) for s in self.segments), default=0) + 1

    def _replace_segments(self, old: list[formats.SegmentEntry],
                          new: formats.SegmentEntry) -> None:
        """Swap ``old`` segments for ``new`` in the manifest, then the rows and the index."""
        kept = [s for s in self.segments if s not in old]
        segments = sorted([*kept, new], key=lambda s: s.first)
        formats.write_manifest(self.root, config_to_dict(self.config), segments, self.next_doc)
        self.segments = segments
        with self.db:
            self.db.execute("UPDATE documents SET segment=? WHERE doc BETWEEN ? AND ?",
                            (int(new.name), new.first, new.last))
        self.index.segments = [self._load_segment(s, verify=False) for s in segments]
        formats.remove_debris(self.root, self.segments)

    def _merge(self, entries: list[formats.SegmentEntry]) -> None:
        parts = [self._load_segment(e, verify=False) for e in entries]
        merged = self.index.merged(parts)
        new = self._write(merged, (entries[0].first, entries[-1].last))
        self._replace_segments(entries, new)

    def compact(self) -> int:
        """Flush, then merge every segment into one; returns the number of segments merged."""
        self._writable()
        self.flush()
        count = len(self.segments)
        if count > 1:
            self._merge(list(self.segments))
        return count

    # -- reading -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.next_doc

    def query(self, doc: Document | str, k: int | None = None,
              explain: bool = False) -> list[StoreMatch]:
        """Stored near-copies of a document (or of a plain text), nearest first."""
        if isinstance(doc, str):
            doc = Document(id="query", raw=doc.encode("utf-8"), kind="text")
        return query_document(self, doc, k, explain)

    def similar(self, doc: Document | str, *, resemblance: float = 0.0,
                containment: float = 0.0, explain: bool = False) -> list[StoreMatch]:
        """Stored documents sharing sketch shingles with ``doc`` whose estimated resemblance
        (or containment of ``doc`` in them) reaches the given floor, best first."""
        if isinstance(doc, str):
            doc = Document(id="query", raw=doc.encode("utf-8"), kind="text")
        return similar_documents(self, doc, resemblance, containment, explain)

    def tables(self) -> tuple[pa.Table, pa.Table]:
        """The stored documents and their clusters, in the schema of ``dedup``'s ``documents``
        and ``clusters`` outputs (a cluster keeps its first document)."""
        rows = self.db.execute(
            "SELECT doc, id, url, host, source, length, fetched, text_chars, tokens, identical, "
            "lexical, shingle, simhash, cluster, sweep FROM documents ORDER BY doc").fetchall()
        columns = list(zip(*rows, strict=True)) if rows else [()] * 15
        hexed = [[f"{unsigned(v):016x}" for v in columns[i]] for i in range(9, 13)]
        documents = pa.table({
            "doc": pa.array(columns[0], pa.int64()), "id": list(columns[1]),
            "url": list(columns[2]), "host": list(columns[3]), "source": list(columns[4]),
            "length": pa.array(columns[5], pa.int64()), "fetched": list(columns[6]),
            "text_chars": pa.array(columns[7], pa.int64()),
            "tokens": pa.array(columns[8], pa.int64()), "identical": hexed[0],
            "lexical": hexed[1], "shingle": hexed[2], "simhash": hexed[3],
            "sweep": list(columns[14])})
        cluster = np.array(columns[13], dtype=np.int64)
        doc = np.array(columns[0], dtype=np.int64)
        clusters = pa.table({"doc": doc, "cluster": cluster, "kept": doc == cluster,
                             "kept_doc": cluster})
        return documents, clusters

    def sightings(self) -> tuple[list[Sighting], list[str]]:
        """Every stored URL with its sweep, fetch time and cluster; and the sweeps in the order
        they were added."""
        rows = self.db.execute("SELECT url, sweep, fetched, cluster FROM documents "
                               "WHERE url IS NOT NULL AND sweep IS NOT NULL").fetchall()
        order = [s for (s,) in self.db.execute(
            "SELECT sweep FROM documents WHERE sweep IS NOT NULL GROUP BY sweep "
            "ORDER BY min(doc)")]
        return [Sighting(url, sweep or "", fetched, cluster)
                for url, sweep, fetched, cluster in rows], order

    def query_url(self, url: str, k: int | None = None) -> tuple[int, list[StoreMatch]]:
        """The stored near-copies of the document stored under ``url`` (KeyError if none)."""
        return query_url(self, url, k)

    def close(self) -> None:
        self.db.close()
        if self._lock is not None:
            os.close(self._lock)
            self._lock = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _payloads(docs: Iterable[Document]) -> Iterator[Document]:
    """Revisit records carry no payload to index: they are left out of a store."""
    for doc in docs:
        if doc.revisit_of is None:
            yield doc


def _sketch_rows(docs: I64,
                 batch: list[DocumentPrints]) -> list[tuple[int, int, bytes, bytes | None]]:
    rows = []
    for doc, prints in zip(docs.tolist(), batch, strict=True):
        features = features_of(prints)
        if features is not None:
            shingles = (None if features.shingles is None
                        else features.shingles.astype("<u8").tobytes())
            rows.append((doc, features.modulus, features.sketch.astype("<u8").tobytes(),
                         shingles))
    return rows


def _postings(sketches: list[tuple[int, int, bytes, bytes | None]]) -> Iterator[tuple[int, int]]:
    for doc, _, data, _ in sketches:
        for value in np.frombuffer(data, dtype="<i8").tolist():
            yield value, doc


def _lock(root: Path) -> int:
    descriptor = os.open(root / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as error:
        os.close(descriptor)
        raise OutputError(f"{root}: another process is writing to this store") from error
    return descriptor


def open_store(path: str | os.PathLike[str], config: StoreConfig | None = None, *,
               read_only: bool = False, flush_every: int = 100_000,
               verify: bool = False) -> Store:
    """Open the store at ``path``, creating it (with ``config`` or the default) if absent.

    An existing store keeps its config: passing a different one raises ConfigError naming
    every difference. ``verify`` checks every segment file's checksum, not only its size.
    """
    root = Path(path)
    manifest = root / formats.MANIFEST
    if not manifest.exists():
        if read_only or (root.exists() and any(root.iterdir())):
            raise CorruptDataError(f"{manifest}: missing (not a neardup store)")
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise OutputError(f"{root}: {error.strerror or error}") from error
        formats.write_manifest(root, config_to_dict(config or StoreConfig()), [], 0)
    stored, _, _ = formats.read_manifest(root)
    if config is not None:
        differences = _differences(stored, config_to_dict(config))
        if differences:
            raise ConfigError(f"{root}: the store was created with another config: "
                              + "; ".join(differences))
    return Store(root, config_from_dict(stored), read_only, flush_every, verify)
