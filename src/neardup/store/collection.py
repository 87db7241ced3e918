"""A persistent, crash-safe store of documents: add them, query near-copies, flush, compact.

Documents are numbered in the order they are added. Adding a batch fingerprints it, finds each
new document's matches (simhash within ``max_k``, against the store and within the batch), merges
their clusters, and commits the rows in one SQLite transaction: once :meth:`Store.add` returns,
the batch survives a killed process. Committed rows not yet in a segment are the insert log; on
open they are read back into the in-memory delta of the :class:`HammingIndex`. :meth:`flush`
writes the delta as an immutable segment; small segments are merged as they accumulate (each
merge at least quadruples a segment, so a store of N documents keeps O(log N) segments);
:meth:`compact` merges them all. A segment carries its documents' sketch postings; those of
the log are held in memory (:mod:`neardup.store.postings`). Layout and file formats:
:mod:`neardup.store.formats`.
"""

from __future__ import annotations

import fcntl
import functools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa

from neardup._types import I64, U64
from neardup.cluster.sweeps import Sighting
from neardup.config import StoreConfig
from neardup.document import Document
from neardup.errors import (
    ConfigError,
    CorruptDataError,
    NeardupError,
    OutputError,
    StoreError,
)
from neardup.features.shingles import distinct
from neardup.index.compressed import ARRAY_NAMES, CompressedTable
from neardup.index.hamming import hamming_pairs
from neardup.index.segmented import HammingIndex
from neardup.index.tables import Matches, PermutedTables
from neardup.methods.fingerprinter import Fingerprinter
from neardup.methods.prints import DocumentPrints
from neardup.methods.workers import ordered_map
from neardup.store import formats
from neardup.store.clusters import merge_clusters
from neardup.store.export import arrow_tables
from neardup.store.hosts import log_tally, template_summary
from neardup.store.integrity import (
    checked_commits,
    checked_next_doc,
    read_record,
    stored_counter,
)
from neardup.store.keys import KEYS, key_arrays, key_values, new_deltas, row_keys
from neardup.store.lookup import (
    StoreMatch,
    compare_stored,
    probe_printer,
    query_documents,
    query_url,
    similar_documents,
)
from neardup.store.postings import (
    POSTING_ARRAYS,
    PostingDelta,
    Run,
    docs_holding,
    merged_runs,
    sketch_postings,
)
from neardup.store.printer import shared_fingerprinter
from neardup.store.records import (
    IDENTICAL,
    INSERT_DOCUMENT,
    SIMHASH,
    AddReport,
    document_dict,
    document_row,
    documents_in,
    documents_where,
    signed,
    sketch_rows,
)
from neardup.store.settings import config_to_dict, plans
from neardup.store.tallies import TALLY_ARRAYS, Asked, Counts, Tally, TallyDelta, summed
from neardup.store.verify import counted_and_judged
from neardup.text.compiled import kernel_mode

__all__ = ["Store", "next_segment_name", "segment_arrays", "writer_lock"]

BATCH = 20_000
"""Documents fingerprinted, judged and committed together by :meth:`Store.add`: each commit
reads the counts of every host it touches and probes the whole index once, so that larger
batches pay those once for more documents (index of 100k documents: 5,000 -> 20,000 saved
about 12% of the CPU; the batch's prints hold about 1 KB per document)."""
TOKENS = formats.ROW_FIELDS.index("tokens")
MERGE_FACTOR = 4
SMALL_BATCH = 32
HOSTS_KEPT = 1 << 16
"""Host page counts a store keeps between queries (then forgets and reads again)."""


class Store:
    """A store directory opened for reading and (unless ``read_only``) appending.

    Thread-safe: one lock serialises the store's SQLite connection and in-memory index (the
    service calls it from a writer thread and several reader threads)."""

    def __init__(self, root: Path, config: StoreConfig, read_only: bool, flush_every: int,
                 verify: bool) -> None:
        self.root = root
        self.config = config
        self.read_only = read_only
        self.flush_every = flush_every
        self.verify = verify
        self.meta_path = root / formats.META
        self._mutex = threading.RLock()
        self._loaded: dict[str, PermutedTables] = {}
        self._runs: dict[str, Run] = {}
        self._tallies: dict[str, Tally] = {}
        self._keys: dict[str, dict[str, Run]] = {}
        self.postings = PostingDelta()
        self.tallies = TallyDelta()
        self.keys = new_deltas()
        self._record: int | None = None
        self._watch: int | None = None
        self._current: bytes | None = None
        self._hosts: dict[int, int] = {}
        self._hosts_state: tuple[int, int, int] = (-1, -1, -1)
        """A read-only store: the commit record, kept open for :meth:`stale`."""
        self._lock = None if read_only else writer_lock(root)
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    # -- opening -----------------------------------------------------------------------------

    def _open(self) -> None:
        with formats.readers_sharing(self.root):
            self._stamp = formats.manifest_stamp(self.root)
            _, self.segments, manifest_next = formats.read_manifest(self.root)
            self.db = formats.connect_meta(self.root, self.read_only)
            if not self.read_only:
                formats.drop_previous_tables(self.db, self.meta_path)
            self.index = self._index_of(self.segments)
        record = read_record(self.root)         # before the database: never ahead of it
        with self._sqlite(), formats.snapshot(self.db):
            self.commits = checked_commits(self.db, self.root, record)
            self.next_doc = checked_next_doc(self.db, self.root, self.segments,
                                             manifest_next)
            self._load_log()
        if self.read_only:
            self._watch = formats.watch_record(self.root)
        else:
            self._record = formats.open_record(self.root)
            if record != formats.CommitRecord(self.commits, self.next_doc):
                self._write_record()
        self.removed_debris = ([] if self.read_only else
                               formats.remove_debris(self.root, self.segments))

    def _write_record(self) -> None:
        assert self._record is not None
        formats.write_record(self._record, self.root,
                             formats.CommitRecord(self.commits, self.next_doc))

    @contextmanager
    def _sqlite(self) -> Iterator[None]:
        """Hold the store's lock; an SQLite failure becomes a NeardupError naming the file."""
        with self._mutex:
            try:
                yield
            except sqlite3.Error as error:
                raise formats.sqlite_error(self.meta_path, error) from error

    def _index_of(self, segments: list[formats.SegmentEntry]) -> HammingIndex:
        """A fresh index over ``segments`` (each checked against its checksums the first time
        this store maps it)."""
        loaded = {}
        for entry in segments:
            loaded[entry.name] = self._loaded.get(entry.name) or \
                self._load_segment(entry, self.verify)
        self._loaded = loaded
        self._runs = {name: self._runs[name] for name in loaded}
        self._tallies = {name: self._tallies[name] for name in loaded}
        self._keys = {name: self._keys[name] for name in loaded}
        return HammingIndex(plans(self.config), self.config.max_k,
                            [loaded[entry.name] for entry in segments])

    def _load_segment(self, entry: formats.SegmentEntry, verify: bool) -> PermutedTables:
        arrays = formats.read_segment(self.root, entry, verify)
        try:
            tables: U64 | list[CompressedTable] = (
                [CompressedTable.from_arrays({n: arrays[f"table{t}.{n}"] for n in ARRAY_NAMES},
                                             verify=verify)
                 for t in range(len(plans(self.config)))]
                if self.config.compress else arrays["tables"])
            segment = PermutedTables(plans(self.config), arrays["fingerprints"], arrays["ids"],
                                     tables)
            run = (arrays[POSTING_ARRAYS[0]], arrays[POSTING_ARRAYS[1]])
            tally: Tally = tuple(arrays[name] for name in TALLY_ARRAYS)  # type: ignore[assignment]
            keys = {name: (arrays[key_arrays(name)[0]], arrays[key_arrays(name)[1]])
                    for name in KEYS}
        except (KeyError, ConfigError, CorruptDataError) as error:
            raise CorruptDataError(f"{formats.segment_dir(self.root, entry.name)}: "
                                   f"inconsistent arrays ({error})") from error
        if len(segment) != entry.count:
            raise CorruptDataError(f"{formats.segment_dir(self.root, entry.name)}: "
                                   f"{len(segment)} fingerprints, the manifest says {entry.count}")
        self._runs[entry.name] = run
        self._tallies[entry.name] = tally
        self._keys[entry.name] = keys
        return segment

    def _load_log(self) -> None:
        """Load the insert log (the rows after the last segment's span) into the delta and
        its postings and tally."""
        last = self.segments[-1].last if self.segments else -1
        self.postings = PostingDelta()
        self.tallies = TallyDelta()
        self.keys = new_deltas()
        self._take_in(last + 1)

    def _take_in(self, first: int) -> None:
        """Add documents ``first`` and later to the delta: their fingerprints, keys, sketch
        postings and counted values, from one read of their checked document and sketch
        rows (and of the ``counted`` list)."""
        rows = documents_where(self.db, self.meta_path, "doc >= ? ORDER BY doc", (first,))
        sketches = formats.checked_rows(self.db.execute(
            "SELECT doc, modulus, data, shingles, crc FROM sketches WHERE doc >= ? ORDER BY doc",
            (first,)).fetchall(), self.meta_path)
        for name, run in row_keys(rows).items():
            self.keys[name].add(*run)
        self.postings.add(*sketch_postings(sketches))
        self.tallies.add(log_tally(self.db, self.meta_path, first, rows, sketches))
        indexed = [row for row in rows if row[TOKENS]]
        if indexed:
            self.index.add(np.array([r[SIMHASH] for r in indexed], dtype=np.int64
                                    ).view(np.uint64),
                           np.array([r[0] for r in indexed], dtype=np.int64))

    def _reload(self) -> None:
        """Rebuild the in-memory state from the files (after a failed flush or merge)."""
        _, self.segments, _ = formats.read_manifest(self.root)
        self.index = self._index_of(self.segments)
        with self._sqlite():
            self._load_log()

    def stale(self) -> bool:
        """Whether the store's writer (another process) has committed since this store was
        opened or last refreshed (one read of the commit record; its slots are checked only
        when its bytes differ from the last ones found not stale)."""
        data = formats.record_bytes(self.root, self._watch)
        if data is None or data == self._current:
            return False
        if formats.record_in(self.root, data).commits > self.commits:
            return True
        self._current = data        # commits only grow: these bytes stay "not stale"
        return False

    def refresh(self) -> bool:
        """Take in what another process, the store's writer, has committed since this
        (read-only) store was opened or last refreshed: its documents and its segments. When
        nothing was committed it costs one read of the commit record. Returns whether the
        store changed. A query after a refresh sees every add acknowledged before it."""
        if not self.stale():
            return False
        with self._mutex:
            start = self.next_doc
            stamp = formats.manifest_stamp(self.root)
            if stamp != self._stamp:
                with formats.readers_sharing(self.root):
                    _, self.segments, _ = formats.read_manifest(self.root)
                    self.index = self._index_of(self.segments)
                self._stamp = stamp
                start = self.segments[-1].last + 1 if self.segments else 0
                self.postings = PostingDelta()
                self.tallies = TallyDelta()
                self.keys = new_deltas()
            with self._sqlite(), formats.snapshot(self.db):
                self._take_in(start)
                self.commits = stored_counter(self.db, "commits") or 0
                self.next_doc = stored_counter(self.db) or 0
        return True

    # -- writing -----------------------------------------------------------------------------

    def _writable(self) -> None:
        if self.read_only:
            raise StoreError(f"{self.root}: opened read-only")

    def add(self, docs: Iterable[Document], *, sweep: str | None = None, workers: int = 1,
            progress: Callable[[int], None] | None = None,
            record: bool = False) -> AddReport:
        """Add documents, committed batch by batch, each batch in one SQLite transaction (its
        rows, sketches, postings, cluster merges and the document counter) or not at all. A
        document already stored (same id, byte-identical) is counted ``already_stored`` and
        not stored again. ``record`` lists each document's number in the report.

        The report says exactly what was committed: a failure after a commit (the automatic
        flush on a full disk, the commit record) is listed in its ``warnings``, the documents
        staying committed in the log; a batch that fails to commit raises, its message naming
        the documents of this add committed before it."""
        self._writable()
        report = AddReport(outcomes=[] if record else None)
        try:
            self._add_all(docs, sweep, workers, progress, report)
        except NeardupError as error:
            if report.first_doc is None and not report.already_stored:
                raise
            raise report.after(error) from error
        return report

    def _add_all(self, docs: Iterable[Document], sweep: str | None, workers: int,
                 progress: Callable[[int], None] | None, report: AddReport) -> None:
        factory = functools.partial(shared_fingerprinter, self.config)
        batch: list[DocumentPrints] = []
        for prints in ordered_map(factory, _payloads(docs), workers):
            batch.append(prints)
            if len(batch) >= BATCH:
                self._add_batch(batch, sweep, report)
                batch = []
                if progress is not None:
                    progress(report.added + report.already_stored)
        if batch:
            self._add_batch(batch, sweep, report)
        if progress is not None:
            progress(report.added + report.already_stored)

    def _new_only(self, batch: list[DocumentPrints]
                  ) -> tuple[list[DocumentPrints], list[tuple[str, int, bool]]]:
        """The documents of ``batch`` not stored yet (nor earlier in the batch), and each
        document's (id, number, already stored) in batch order."""
        ids = sorted({p.id for p in batch})
        known = {(row[1], row[IDENTICAL]): row[0]
                 for row in self.documents_with("id", ids)} if ids else {}
        fresh: list[DocumentPrints] = []
        outcomes = []
        for prints in batch:
            key = (prints.id, signed(prints.identical))
            if key not in known:
                known[key] = self.next_doc + len(fresh)
                fresh.append(prints)
                outcomes.append((prints.id, known[key], False))
            else:
                outcomes.append((prints.id, known[key], True))
        return fresh, outcomes

    def _add_batch(self, batch: list[DocumentPrints], sweep: str | None,
                   report: AddReport) -> None:
        with self._sqlite():
            fresh, outcomes = self._new_only(batch)
            if fresh:
                self._commit(fresh, sweep, report)
            report.already(outcomes)
        if self.index.delta_size >= self.flush_every and not report.warnings:
            try:
                self.flush()
            except NeardupError as error:     # the batch is committed: said, not raised
                report.warnings.append(f"the flush after the add failed ({error}); the "
                                       "documents are committed and stay in the insert log")

    def _commit(self, batch: list[DocumentPrints], sweep: str | None,
                report: AddReport) -> None:
        first = self.next_doc
        docs = np.arange(first, first + len(batch), dtype=np.int64)
        fps = np.array([p.simhash for p in batch], dtype=np.uint64)
        indexed = np.array([p.tokens > 0 for p in batch], dtype=np.bool_)
        found = self._stored_matches(fps[indexed])
        positions = np.flatnonzero(indexed)
        a, b = (hamming_pairs(fps[indexed], self.config.max_k) if int(indexed.sum()) > 1
                else (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)))
        with formats.transaction(self.db, self.meta_path) as db:
            found, a, b, tally = counted_and_judged(self, batch, docs, positions, found, a, b)
            clusters = merge_clusters(db, self.meta_path, docs, positions[found.query],
                                      found.id, positions[a], positions[b])
            rows = [document_row(int(d), p, sweep, int(c))
                    for d, p, c in zip(docs.tolist(), batch, clusters.tolist(), strict=True)]
            db.executemany(INSERT_DOCUMENT, rows)
            sketches = sketch_rows(docs, batch)
            db.executemany("INSERT INTO sketches VALUES (?,?,?,?,?)", sketches)
            db.executemany("INSERT OR REPLACE INTO counters VALUES (?, ?)",
                           [("next_doc", first + len(batch)), ("commits", self.commits + 1)])
            if self.config.sketch_clusters is not None:
                from neardup.store.urls import merge_sketch_clusters

                merge_sketch_clusters(self, docs, batch)
        self.next_doc += len(batch)
        self.commits += 1
        self.index.add(fps[indexed], docs[indexed])
        self.postings.add(*sketch_postings(sketches))
        self.tallies.add(tally)
        for name, run in row_keys(rows).items():
            self.keys[name].add(*run)
        report.count(batch, found.query, a, b, docs)
        try:
            self._write_record()
        except OutputError as error:          # the batch is committed: said, not raised
            report.warnings.append(f"{error}; documents {first}..{first + len(batch) - 1} are "
                                   "committed, their commit record not written")

    def _stored_matches(self, fps: U64) -> Matches:
        """The stored fingerprints within max_k of each of ``fps``: probed one by one for a
        few (a crawler's add), in Manku's batch mode for many."""
        if fps.size > SMALL_BATCH:
            return self.index.query_batch(fps, self.config.max_k)
        parts = []
        for position, value in enumerate(fps.tolist()):
            found = self.index.query(value, self.config.max_k)
            parts.append(Matches(np.full(len(found), position, dtype=np.int64), found.id,
                                 found.distance))
        return Matches.concat(parts)

    def flush(self) -> formats.SegmentEntry | None:
        """Write the delta as a new segment; merge segments that have become small. On a
        failure (a full disk) the store stays as it was: the log keeps the documents."""
        self._writable()
        with self._mutex:
            try:
                return self._flush()
            except BaseException:
                self._reload()
                raise

    def _flush(self) -> formats.SegmentEntry | None:
        segment = self.index.freeze()
        if segment is None:
            return None
        if self._record is not None:
            formats.sync_record(self._record, self.root)
        first = self.segments[-1].last + 1 if self.segments else 0
        keys = {name: delta.freeze() for name, delta in self.keys.items()}
        entry = self._write(segment, self.postings.freeze(), self.tallies.freeze(), keys,
                            (first, self.next_doc - 1))
        self._replace_segments([], entry)
        while len(self.segments) > 1 and \
                self.segments[-1].count * MERGE_FACTOR >= self.segments[-2].count:
            self._merge(self.segments[-2:])
        return entry

    def _write(self, segment: PermutedTables, run: Run, tally: Tally, keys: dict[str, Run],
               span: tuple[int, int]) -> formats.SegmentEntry:
        name = next_segment_name(self.root, self.segments)
        arrays = segment_arrays(segment, run, tally, keys, self.config.compress)
        size, checksum = formats.write_segment(self.root, name, arrays)
        return formats.SegmentEntry(name, span[0], span[1], len(segment), size, checksum)

    def _replace_segments(self, old: list[formats.SegmentEntry],
                          new: formats.SegmentEntry) -> None:
        """Swap ``old`` segments for ``new`` in the manifest, then in the index; the old files
        go once no reader can be opening them."""
        kept = [s for s in self.segments if s not in old]
        segments = sorted([*kept, new], key=lambda s: s.first)
        self._loaded[new.name] = self._load_segment(new, verify=False)  # just written, checked
        formats.write_manifest(self.root, config_to_dict(self.config), segments, self.next_doc)
        self.segments = segments
        self.index.segments = [self._loaded[s.name] for s in segments]
        for entry in old:
            self._loaded.pop(entry.name, None)
            self._runs.pop(entry.name, None)
            self._tallies.pop(entry.name, None)
            self._keys.pop(entry.name, None)
        formats.remove_debris(self.root, self.segments)

    def _merge(self, entries: list[formats.SegmentEntry]) -> None:
        """Merge segments, re-reading each from disk and checking its checksums first (bad
        data is refused, never rewritten under a fresh checksum)."""
        parts = [self._load_segment(e, verify=True) for e in entries]
        merged = self.index.merged(parts)
        run = merged_runs([self._runs[e.name] for e in entries])
        tally = summed([self._tallies[e.name] for e in entries])
        keys = {name: merged_runs([self._keys[e.name][name] for e in entries]) for name in KEYS}
        new = self._write(merged, run, tally, keys, (entries[0].first, entries[-1].last))
        self._replace_segments(entries, new)

    def compact(self) -> int:
        """Flush, then merge every segment into one; returns the number of segments merged."""
        self._writable()
        with self._mutex:
            self.flush()
            count = len(self.segments)
            if count > 1:
                try:
                    self._merge(list(self.segments))
                except BaseException:
                    self._reload()
                    raise
            return count

    # -- reading -----------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.next_doc

    def query(self, doc: Document | str, k: int | None = None, explain: bool = False,
              templates: bool = True) -> list[StoreMatch]:
        """Stored near-copies of a document (or of a plain text), nearest first; ``templates``
        (the store's rule): compared on content (:mod:`neardup.store.content`)."""
        return self.query_many([doc], k, explain, templates)[0]

    def query_many(self, docs: Sequence[Document | str], k: int | None = None,
                   explain: bool = False, templates: bool = True) -> list[list[StoreMatch]]:
        """:meth:`query` of each of ``docs``, answered together: one read of the store serves
        every query's candidates (a service's queries that arrive at once). Each answer
        equals the one its query gets alone."""
        asked = [Document(id="query", raw=doc.encode("utf-8"), kind="text")
                 if isinstance(doc, str) else doc for doc in docs]
        with self._sqlite():
            return query_documents(self, asked, k, explain, templates)

    def similar(self, doc: Document | str, *, resemblance: float = 0.0,
                containment: float = 0.0, explain: bool = False,
                templates: bool = True) -> list[StoreMatch]:
        """Stored documents sharing sketch shingles with ``doc`` whose estimated resemblance
        (or containment of ``doc`` in them) reaches the given floor, best first."""
        if isinstance(doc, str):
            doc = Document(id="query", raw=doc.encode("utf-8"), kind="text")
        with self._sqlite():
            return similar_documents(self, doc, resemblance, containment, explain, templates)

    def documents_with(self, name: str, values: Sequence[object]) -> list[tuple[Any, ...]]:
        """The checked rows of the documents whose column ``name`` (one of ``KEYS``) holds
        one of ``values``, by number: the key runs of every segment and of the log give the
        candidates, their rows are compared with ``values``."""
        with self._mutex:
            docs = self.keyed(name, values)
            rows = documents_in(self.db, self.meta_path, "doc", docs) if docs else []
        field, asked = formats.ROW_FIELDS.index(name), set(values)
        return sorted((row for row in rows if row[field] in asked), key=lambda row: row[0])

    def keyed(self, name: str, values: Sequence[object]) -> list[int]:
        """The documents that may hold one of ``values`` in column ``name`` (one of ``KEYS``),
        sorted: candidates from the key runs, whose rows the caller compares with ``values``
        (a URL or id key is a hash)."""
        wanted = key_values(name, values)
        with self._mutex:
            found = [docs_holding(self._keys[s.name][name], wanted) for s in self.segments]
            found.append(self.keys[name].docs_holding(wanted))
        return _sorted_distinct(found)

    def sharing(self, values: list[int]) -> list[int]:
        """The stored documents whose sketch holds any of ``values`` (signed), sorted: the
        postings of every segment and of the insert log."""
        wanted = distinct(np.array(values, dtype=np.int64))
        with self._mutex:
            found = [docs_holding(self._runs[s.name], wanted) for s in self.segments]
            found.append(self.postings.docs_holding(wanted))
        return _sorted_distinct(found)

    def value_pages(self, host: int, kind: int, wanted: I64) -> I64:
        """The stored pages of ``host`` (signed key) holding each of ``wanted`` (values of
        ``kind``, signed): the tallies of every segment and of the insert log, summed."""
        return self.value_pages_many([(host, kind, wanted)])[0]

    def value_pages_many(self, asked: Asked) -> list[I64]:
        """:meth:`value_pages` of each (host, kind, values) group, read together (one pass
        over each tally for all of them)."""
        counts = Counts(asked)
        with self._mutex:
            self.tallies.add_to(counts)
            for entry in self.segments:
                counts.add(self._tallies[entry.name])
        return counts.groups()

    @functools.cached_property
    def probe_printer(self) -> Fingerprinter[Any]:
        """The fingerprinter of this store's queries (:func:`lookup.probe_printer`)."""
        return probe_printer(self.config)

    def known_hosts(self) -> dict[int, int]:
        """Pages per host key read by the queries since the store last changed (a commit, or
        a refresh that took one in), at most :data:`HOSTS_KEPT`: a query reads its hosts'
        rows once per state of the store, not once per query."""
        state = (self.commits, self.next_doc, len(self.segments))
        if state != self._hosts_state or len(self._hosts) >= HOSTS_KEPT:
            self._hosts, self._hosts_state = {}, state
        return self._hosts

    def warm_up(self) -> None:
        """Compile (or load from numba's cache) every kernel a read of this store runs, on its
        own arrays (a kernel specialises on their types: read-only mappings, memory): a
        service's readers, forked after this, answer their first queries without compiling."""
        with kernel_mode("compile"):
            self.query("neardup warm up: every kernel of a query compiled before it serves")
            self.value_pages(0, 0, np.zeros(1, dtype=np.int64))
            self.sharing([0])

    def tally(self) -> Tally:
        """Every per-host value count of the store, as one tally."""
        with self._mutex:
            return summed([*(self._tallies[s.name] for s in self.segments),
                           *self.tallies.runs])

    def host_templates(self) -> dict[str, object]:
        """Per host: its pages and template values (every count read and checked)."""
        with self._sqlite(), formats.snapshot(self.db):
            return template_summary(self.db, self.meta_path, self.config.templates,
                                    self.tally())

    def document(self, key: int | str) -> dict[str, object] | None:
        """The stored row of a document, by number or by id (the latest with that id)."""
        with self._sqlite():
            rows = (documents_where(self.db, self.meta_path, "doc=?", (key,))
                    if isinstance(key, int) else self.documents_with("id", [key])[-1:])
        rows = [r for r in rows if r[0 if isinstance(key, int) else 1] == key]
        return document_dict(rows[0]) if rows else None

    def cluster(self, doc: int) -> list[dict[str, object]]:
        """Every stored document of ``doc``'s cluster (empty if ``doc`` is not stored)."""
        own = self.document(doc)
        if own is None:
            return []
        with self._sqlite():
            rows = documents_where(self.db, self.meta_path, "cluster=? ORDER BY doc",
                                   (own["cluster"],))
        return [document_dict(row) for row in rows if row[-1] == own["cluster"]]

    def tables(self) -> tuple[pa.Table, pa.Table]:
        """The stored documents and their clusters, in the schema of ``dedup``'s ``documents``
        and ``clusters`` outputs (a cluster keeps its first document)."""
        with self._sqlite():
            return arrow_tables(documents_where(self.db, self.meta_path, "1 ORDER BY doc"))

    def sightings(self) -> tuple[list[Sighting], list[str]]:
        """Every stored URL with its sweep, fetch time and cluster; and the sweeps in the order
        they were added."""
        with self._sqlite():
            rows = [(r[2], r[4], r[5], r[14]) for r in documents_where(
                self.db, self.meta_path, "url IS NOT NULL AND sweep IS NOT NULL")]
            order = [s for (s,) in self.db.execute(
                "SELECT sweep FROM documents WHERE sweep IS NOT NULL GROUP BY sweep "
                "ORDER BY min(doc)")]
        return [Sighting(url, sweep or "", fetched, cluster)
                for url, sweep, fetched, cluster in rows], order

    def query_url(self, url: str, k: int | None = None,
                  templates: bool = True) -> tuple[int, list[StoreMatch]]:
        """The stored near-copies of the document stored under ``url`` (KeyError if none)."""
        with self._sqlite():
            return query_url(self, url, k, templates)

    def compare(self, a: int, b: int) -> StoreMatch | None:
        """Stored document ``b`` scored against stored document ``a`` (numbers), as a query
        of ``a`` would score it; None when either is not stored."""
        with self._sqlite():
            return compare_stored(self, a, b)

    def close(self) -> None:
        """Close the store; a writer first folds the WAL into the database (best effort)."""
        with self._mutex:
            db = getattr(self, "db", None)
            if db is not None:
                if not self.read_only:
                    with suppress(sqlite3.Error):     # an optimisation; the WAL stays valid
                        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                db.close()
                del self.db
            if self._record is not None:
                with suppress(OSError):               # best effort, as the checkpoint
                    os.fsync(self._record)
                os.close(self._record)
                self._record = None
            if self._lock is not None:
                os.close(self._lock)
                self._lock = None
            if self._watch is not None:
                os.close(self._watch)
                self._watch = None

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def segment_arrays(segment: PermutedTables, run: Run, tally: Tally, keys: dict[str, Run],
                   compress: bool) -> dict[str, npt.NDArray[Any]]:
    """The arrays of a segment file set: fingerprints, their tables, postings, tally and
    key runs."""
    arrays = {"fingerprints": segment.fingerprints, "ids": segment.ids,
              POSTING_ARRAYS[0]: run[0], POSTING_ARRAYS[1]: run[1],
              **dict(zip(TALLY_ARRAYS, tally, strict=True))}
    for name in KEYS:
        arrays.update(zip(key_arrays(name), keys[name], strict=True))
    if compress:
        compressed = segment.compress().tables
        assert isinstance(compressed, list)
        for t, table in enumerate(compressed):
            arrays.update({f"table{t}.{n}": a for n, a in table.to_arrays().items()})
    else:
        arrays["tables"] = np.asarray(segment.tables)
    return arrays


def next_segment_name(root: Path, segments: list[formats.SegmentEntry]) -> str:
    """A segment name above every listed segment and every segment folder on disk."""
    base = root / formats.SEGMENTS
    on_disk = [int(p.name) for p in base.glob("[0-9]*") if p.name.isdigit()] \
        if base.exists() else []
    return f"{max([*(int(s.name) for s in segments), *on_disk], default=0) + 1:08d}"


def _payloads(docs: Iterable[Document]) -> Iterator[Document]:
    """Revisit records carry no payload to index: they are left out of a store."""
    for doc in docs:
        if doc.revisit_of is None:
            yield doc


def writer_lock(root: Path) -> int:
    """The store's writer lock, taken (StoreError if another process holds it)."""
    try:
        descriptor = os.open(root / formats.WRITER_LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        raise StoreError(f"{root / formats.WRITER_LOCK}: {error.strerror or error}") from error
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError as error:
        os.close(descriptor)
        raise StoreError(f"{root}: another process is writing to this store") from error
    return descriptor


def _sorted_distinct(parts: list[I64]) -> list[int]:
    """The documents of ``parts`` sorted, each once (a query's few: a set, whose cost is a
    tenth of a sort's fixed cost for them)."""
    docs = np.concatenate(parts)
    if docs.size > 4_096:
        return list(distinct(docs).tolist())
    return sorted(set(docs.tolist()))
