"""Queries against a store: the stored near-copies of a document, a text or a stored URL.

Each match carries its Hamming distance, its relation (identical bytes, lexically equal text, or
near), and, when the store keeps sketches, Broder's estimates of resemblance and of containment
both ways, with the shared shingles that explain them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from neardup._types import U64
from neardup.config import SketchConfig, StoreConfig
from neardup.document import Document
from neardup.errors import ConfigError
from neardup.fingerprints.sketch import Sketcher, estimate_resemblance, mod_estimates
from neardup.fingerprints.sketch_match import SketchMatch, explain_match
from neardup.methods.fingerprinter import Fingerprinter
from neardup.store.content import Side, compare, resembles
from neardup.store.formats import ROW_FIELDS, checked_rows
from neardup.store.hosts import SHINGLE, SKETCH, HostCounts
from neardup.store.printer import SketchOf, StoreFeatures, store_fingerprinter
from neardup.store.records import (
    IDENTICAL,
    documents_where,
    select_in,
    signed,
    unsigned,
)

if TYPE_CHECKING:
    from neardup.store.collection import Store

__all__ = ["StoreMatch", "check_sketch_search", "probe_printer", "query_document",
           "query_documents", "query_url", "sharing", "similar_documents", "similar_to_probe",
           "stored_probe", "stored_sketches"]

COLUMNS = "doc, id, url, host, sweep, fetched, cluster, identical, lexical, simhash"


@dataclass(frozen=True, slots=True)
class StoreMatch:
    """A stored document that matches a query."""

    doc: int
    id: str
    url: str | None
    host: str | None
    sweep: str | None
    fetched: str | None
    cluster: int
    distance: int
    relation: str
    resemblance: float | None = None
    containment: float | None = None
    """How much of the query lies in the stored document (estimated)."""
    containment_reverse: float | None = None
    """How much of the stored document lies in the query (estimated)."""
    shared_shingles: tuple[str, ...] = ()
    exact_resemblance: float | None = None
    """Exact resemblance of the shingle sets (stores created with ``keep_shingles``)."""
    exact_containment: float | None = None
    exact_containment_reverse: float | None = None
    template_values: int = 0
    """Sketch values of the two pages left out as their hosts' templates."""
    template_shingles: int = 0
    """Kept shingles of the two pages left out as their hosts' templates."""

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in self.__slots__}


PROJECT = [ROW_FIELDS.index(name.strip()) for name in COLUMNS.split(",")]
ROW_IDENTICAL = [name.strip() for name in COLUMNS.split(",")].index("identical")
"""Where a projected row holds the identical-bytes hash."""


JOINED = (f"SELECT {', '.join(f'd.{name}' for name in ROW_FIELDS)}, d.crc, "
          "s.doc, s.modulus, s.data, s.shingles, s.crc FROM documents d "
          "LEFT JOIN sketches s ON s.doc = d.doc WHERE d.doc IN ({marks})")
"""A document's row and its sketch row (NULLs without one), by number: one statement."""


def _candidates(store: Store, docs: set[int], identical: set[int]
                ) -> tuple[dict[int, tuple[object, ...]], dict[int, StoreFeatures]]:
    """Checked rows (the columns of ``COLUMNS``) and sketches of ``docs`` and of the
    documents whose identical-bytes hash (signed) is one of ``identical``, by number: one
    statement for all."""
    numbers = sorted(docs.union(store.keyed("identical", sorted(identical))))
    joined = select_in(store.db, JOINED, numbers)
    width = len(ROW_FIELDS) + 1
    rows = checked_rows([row[:width] for row in joined], store.meta_path)
    sketches = checked_rows([row[width:] for row in joined if row[width] is not None],
                            store.meta_path)
    found = {row[0]: tuple(row[i] for i in PROJECT) for row in rows
             if row[0] in docs or row[IDENTICAL] in identical}
    return found, {doc: _features(modulus, data, shingles)
                   for doc, modulus, data, shingles in sketches if doc in found}


def _features(modulus: int, data: bytes, shingles: bytes | None) -> StoreFeatures:
    sketch = _array(data)
    assert sketch is not None
    return StoreFeatures(sketch, modulus, _array(shingles))


def _array(data: bytes | None) -> U64 | None:
    return None if data is None else np.frombuffer(data, dtype="<u8").astype(np.uint64)


def _sketches(store: Store, docs: list[int]) -> dict[int, StoreFeatures]:
    found: dict[int, StoreFeatures] = {}
    rows = select_in(store.db, "SELECT doc, modulus, data, shingles, crc FROM sketches "
                               "WHERE doc IN ({marks})", docs)
    for doc, modulus, data, shingles in checked_rows(rows, store.meta_path):
        found[doc] = _features(modulus, data, shingles)
    return found


def _exact(query: U64 | None, stored: U64 | None) -> tuple[float | None, ...]:
    """Exact resemblance and containments of two sorted shingle sets (None if either is
    missing)."""
    if query is None or stored is None:
        return None, None, None
    shared = float(np.intersect1d(query, stored, assume_unique=True).size)
    union = query.size + stored.size - shared
    return (shared / union if union else 1.0, shared / query.size if query.size else 1.0,
            shared / stored.size if stored.size else 1.0)


@dataclass(frozen=True, slots=True)
class _Probe:
    """What a query brings: its fingerprints, and its sketch and canonical text if any."""

    simhash: int
    identical: int
    lexical: int
    tokens: int
    features: StoreFeatures | None = None
    canonical: bytes = b""
    host: str | None = None


def _match(row: tuple[object, ...], probe: _Probe, sketches: dict[int, StoreFeatures],
           store: Store, explain: bool, view: HostCounts) -> tuple[StoreMatch, bool]:
    """The match of a stored row, and whether it stands (its content still resembles)."""
    doc, id_, url, host, sweep, fetched, cluster, identical, lexical, simhash = row
    assert isinstance(doc, int) and isinstance(simhash, int) and isinstance(cluster, int)
    relation = ("identical" if identical == signed(probe.identical) else
                "lexical" if lexical == signed(probe.lexical) and probe.tokens else "near")
    distance = int(unsigned(simhash) ^ probe.simhash).bit_count()
    fields = (doc, str(id_), _text(url), _text(host), _text(sweep), _text(fetched), cluster,
              distance, relation)
    config = store.config.sketch
    query = probe.features
    if config is None or query is None or doc not in sketches:
        return StoreMatch(*fields), True
    # a query without a host (a text, a file) is read on the terms of the stored page's host
    content = compare(view, Side(probe.host or _text(host), query, probe.identical),
                      Side(_text(host), sketches[doc], unsigned(int(str(identical)))))
    query, stored = content.query, content.stored
    moduli = (query.modulus, stored.modulus) if config.adaptive else None
    scores = _scores(probe.canonical, query.sketch, stored.sketch, config, moduli, explain)
    exact = _exact(query.shingles, stored.shingles)
    match = StoreMatch(*fields, resemblance=scores.resemblance,
                       containment=scores.containment_query,
                       containment_reverse=scores.containment_stored,
                       shared_shingles=scores.shared if explain else (),
                       exact_resemblance=exact[0], exact_containment=exact[1],
                       exact_containment_reverse=exact[2],
                       template_values=content.template_values,
                       template_shingles=content.template_shingles)
    return match, relation != "near" or resembles(content, config)


def _scores(canonical: bytes, query: U64, stored: U64, config: SketchConfig,
            moduli: tuple[int, int] | None, explain: bool) -> SketchMatch:
    """The sketch estimates of a pair; with ``explain``, the shared shingles as text too
    (finding them re-shingles the query: only when asked)."""
    if explain:
        return explain_match(canonical, query, stored, config, moduli)
    if config.kind == "mod":
        return SketchMatch(*mod_estimates(query, stored, config, moduli), ())
    return SketchMatch(estimate_resemblance(query, stored, config, moduli), None, None, ())


def _text(value: object) -> str | None:
    return None if value is None else str(value)


@dataclass(frozen=True, slots=True)
class _Captured:
    """What the probe's features extractor keeps of a document: its canonical text and its
    store features (None without a sketch)."""

    canonical: bytes
    features: StoreFeatures | None


class _Capture:
    """A features extractor that keeps the canonical text beside the sketch (stateless, so that
    one serves every query of a store config, from any thread)."""

    def __init__(self, config: StoreConfig) -> None:
        sketch = config.sketch
        self.sketch = (SketchOf(Sketcher(sketch), config.keep_shingles)
                       if sketch is not None else None)

    def __call__(self, doc: Document, text: str, canonical: bytes) -> _Captured:
        features = self.sketch(doc, text, canonical) if self.sketch is not None else None
        return _Captured(canonical, features)

    def of_tokens(self, doc: Document, text: str, canonical: bytes, tokens: U64) -> _Captured:
        """The same from the canonical text's token hashes (not scanned again)."""
        features = (self.sketch.of_tokens(doc, text, canonical, tokens)
                    if self.sketch is not None else None)
        return _Captured(canonical, features)


@functools.lru_cache(maxsize=8)
def probe_printer(config: StoreConfig) -> Fingerprinter[_Captured]:
    """The fingerprinter of a store's queries, built once per config (its simhash and sketch
    permutations are set up once, not per query; a store keeps it as ``Store.probe_printer``,
    so that its config is not hashed at every query)."""
    return store_fingerprinter(config, features=_Capture(config), queries=True)


def _matches(store: Store, probes: Sequence[_Probe], found: Sequence[list[int]],
             explain: bool, leave_out: int | None = None, templates: bool = True,
             judged: bool = False) -> list[list[StoreMatch]]:
    """For each probe, the matches of its stored ``found`` documents (and of the documents
    identical to it), scored on content; ``judged``: simhash matches that lost template values
    and no longer resemble are left out. The probes share one read of the rows, sketches and
    host counts they need."""
    rows, sketches = _candidates(store, set().union(*found),
                                 {signed(probe.identical) for probe in probes})
    rows.pop(leave_out, None)  # type: ignore[arg-type]
    sketches.pop(leave_out, None)  # type: ignore[arg-type]
    chosen = store.config.templates
    view = HostCounts(store.db, store.meta_path,
                      chosen if templates else dataclasses.replace(chosen, enabled=False),
                      store.value_pages_many, store.known_hosts())
    holding: dict[object, list[int]] = {}
    for doc, row in rows.items():
        holding.setdefault(row[ROW_IDENTICAL], []).append(doc)
    asked = [_asked(probe, docs, rows, sketches, holding.get(signed(probe.identical), []))
             for probe, docs in zip(probes, found, strict=True)]
    view.prefetch(wanted for probe, (own, held) in zip(probes, asked, strict=True)
                  for wanted in _wanted(probe, own, held))
    return [_scored(store, probe, own, held, explain, view, judged)
            for probe, (own, held) in zip(probes, asked, strict=True)]


def _asked(probe: _Probe, docs: list[int], rows: dict[int, tuple[object, ...]],
           sketches: dict[int, StoreFeatures], identical: list[int]
           ) -> tuple[dict[int, tuple[object, ...]], dict[int, StoreFeatures]]:
    """The rows and sketches one probe is scored against: its found documents and the
    ``identical`` ones (holding its identical-bytes hash); sketches only when the probe has
    one."""
    own = {doc: rows[doc] for doc in (*docs, *identical) if doc in rows}
    held = {doc: sketches[doc] for doc in own if doc in sketches} \
        if probe.features is not None else {}
    return own, held


def _scored(store: Store, probe: _Probe, rows: dict[int, tuple[object, ...]],
            sketches: dict[int, StoreFeatures], explain: bool, view: HostCounts,
            judged: bool) -> list[StoreMatch]:
    scored = [_match(row, probe, sketches, store, explain, view) for row in rows.values()]
    matches = [match for match, stands in scored if stands or not judged]
    return sorted(matches, key=lambda m: (m.distance, m.relation != "identical", m.doc))


def _wanted(probe: _Probe, rows: dict[int, tuple[object, ...]],
            sketches: dict[int, StoreFeatures]) -> list[tuple[str | None, int, U64]]:
    """The (host, kind, values) whose counts scoring these rows reads (one query per host)."""
    wanted = []
    for doc, features in sketches.items():
        host = _text(rows[doc][3])
        for kind, values in ((SKETCH, features.sketch), (SHINGLE, features.shingles)):
            if values is not None:
                wanted.append((host, kind, values))
        if probe.features is not None and probe.host is None:
            wanted.append((host, SKETCH, probe.features.sketch))
    if probe.features is not None and probe.host is not None:
        wanted.append((probe.host, SKETCH, probe.features.sketch))
    return wanted


def _probe_of(store: Store, doc: Document) -> _Probe:
    prints = store.probe_printer(doc)
    captured = prints.features
    assert isinstance(captured, _Captured)
    return _Probe(prints.simhash, prints.identical, prints.lexical, prints.tokens,
                  captured.features, captured.canonical, prints.host)


def query_document(store: Store, doc: Document, k: int | None = None,
                   explain: bool = False, templates: bool = True) -> list[StoreMatch]:
    """Stored documents within ``k`` bits of ``doc``'s simhash, or byte-identical to it,
    nearest first (with ``templates``, judged on content as an add judges its matches)."""
    return query_documents(store, [doc], k, explain, templates)[0]


def query_documents(store: Store, docs: Sequence[Document], k: int | None = None,
                    explain: bool = False, templates: bool = True) -> list[list[StoreMatch]]:
    """:func:`query_document` of each of ``docs``, answered together: each document is
    fingerprinted and looked up in the Hamming index alone, then one read of the store serves
    every candidate's row, sketch and host counts. Each answer equals its query's alone."""
    probes = [_probe_of(store, doc) for doc in docs]
    asked = [position for position, probe in enumerate(probes) if probe.tokens]
    found: list[list[int]] = [[] for _ in probes]
    near = store.index.query_each([probes[p].simhash for p in asked], k)
    for position, doc in zip(near.query.tolist(), near.id.tolist(), strict=True):
        found[asked[position]].append(doc)
    return _matches(store, probes, found, explain, templates=templates, judged=True)


def stored_probe(store: Store, url: str) -> tuple[int, _Probe]:
    """The most recent document stored under ``url`` and its probe (KeyError when none)."""
    found = [row for row in store.documents_with("url", [url])[-1:] if row[2] == url]
    if not found:
        raise KeyError(url)
    return _row_probe(store, found[0])


def _row_probe(store: Store, row: tuple[object, ...]) -> tuple[int, _Probe]:
    doc, simhash, identical, lexical, tokens, host = (
        row[ROW_FIELDS.index(name)] for name in (
            "doc", "simhash", "identical", "lexical", "tokens", "host"))
    assert isinstance(doc, int) and isinstance(tokens, int)
    sketch = _sketches(store, [doc]).get(doc) if store.config.sketch is not None else None
    return doc, _Probe(unsigned(int(str(simhash))), unsigned(int(str(identical))),
                       unsigned(int(str(lexical))), tokens, sketch,
                       host=None if host is None else str(host))


def compare_stored(store: Store, a: int, b: int) -> StoreMatch | None:
    """Stored document ``b`` as a match of stored document ``a`` (distance, relation, the
    sketch estimates and, with kept shingles, the exact scores, on content); None when either
    is not stored."""
    rows = [row for row in documents_where(store.db, store.meta_path, "doc=?", (a,))
            if row[0] == a]
    if not rows or not [r for r in documents_where(store.db, store.meta_path, "doc=?", (b,))
                        if r[0] == b]:
        return None
    _, probe = _row_probe(store, rows[0])
    found = [m for m in _matches(store, [probe], [[b]], explain=False, judged=False)[0]
             if m.doc == b]
    return found[0] if found else None


def query_url(store: Store, url: str, k: int | None = None,
              templates: bool = True) -> tuple[int, list[StoreMatch]]:
    """The stored near-copies of the most recent document stored under ``url``, itself left out.
    Returns its number and its matches; KeyError when no document has that URL."""
    doc, probe = stored_probe(store, url)
    docs = store.index.query(probe.simhash, k).id.tolist() if probe.tokens else []
    return doc, _matches(store, [probe], [docs], explain=False, leave_out=doc,
                         templates=templates, judged=True)[0]


def stored_sketches(store: Store, docs: list[int]) -> dict[int, StoreFeatures]:
    """The stored sketches of ``docs`` (those that have one), their checksums checked."""
    return _sketches(store, docs)


def sharing(store: Store, values: list[int]) -> list[int]:
    """The stored documents whose sketch holds any of ``values``, sorted."""
    return store.sharing(values)


def check_sketch_search(store: Store, containment: float) -> None:
    """Refuse a sketch search the store cannot answer, naming why."""
    if store.config.sketch is None:
        raise ConfigError(f"{store.root}: the store keeps no sketches (created with "
                          "--no-sketch)")
    if containment and store.config.sketch.kind != "mod":
        raise ConfigError("containment needs MOD sketches")


def similar_documents(store: Store, doc: Document, resemblance: float, containment: float,
                      explain: bool, templates: bool = True) -> list[StoreMatch]:
    """Broder's on-the-fly query: every stored document sharing a sketch value with ``doc``,
    scored by the sketches (on content), kept when its estimates reach both floors, best
    first."""
    check_sketch_search(store, containment)
    return similar_to_probe(store, _probe_of(store, doc), resemblance, containment, explain,
                            templates=templates)


def similar_to_probe(store: Store, probe: _Probe, resemblance: float, containment: float,
                     explain: bool, leave_out: int | None = None,
                     templates: bool = True) -> list[StoreMatch]:
    """The sketch search of :func:`similar_documents` for a probe (``leave_out``: a stored
    document that is the query itself)."""
    if probe.features is None:
        return []
    values = probe.features.sketch.astype(np.int64).tolist()
    matches = _matches(store, [probe], [sharing(store, values)], explain, leave_out,
                       templates)[0]
    kept = [m for m in matches if (m.resemblance or 0.0) >= resemblance
            and (m.containment or 0.0) >= containment]
    return sorted(kept, key=lambda m: (-(m.containment or 0.0) if containment else
                                       -(m.resemblance or 0.0), m.doc))
