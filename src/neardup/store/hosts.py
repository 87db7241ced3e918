"""Per-host counts in a store: how many pages each host has, and how many hold each value.

Site templates (Bar-Yossef and Rajagopalan 2002) are found by frequency: on a host with at least
``min_pages`` pages, a value held by more than ``share`` of them is template, not content
(:class:`neardup.config.TemplateConfig`, the batch rule of :mod:`neardup.features.templates`).
A store keeps the counts that rule needs, up to date as documents arrive:

- ``host_pages`` (host key, name, pages, crc), a table of ``meta.sqlite`` written in the add's
  transaction: the pages of each host that count (one row per host: few rows, so an update
  dirties few pages);
- per host and value, the pages holding it (kind 0 a sketch value, kind 1 a kept shingle, in
  stores created with ``keep_shingles``): sorted runs summed when read, in the segments and in
  memory for the insert log (:mod:`neardup.store.tallies`); the ``counted`` table lists the
  log's documents whose values count, so that its tally is rebuilt on open.

A page counts as batch counts it: it has tokens, a host, and is the first stored page of its
shingle-equivalence class (the exact-level survivor); a re-added document is not stored again,
so it is not counted twice. Every row carries a checksum (``crc``) checked whenever it is read,
and the segments' files their checksums: a damaged count is refused with an error naming the
file (and the table), never used.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from neardup._types import I64, U64
from neardup.config import TemplateConfig
from neardup.errors import CorruptDataError
from neardup.features.templates import NO_HOST, REPORTED_HOSTS, host_key
from neardup.store.formats import ROW_FIELDS, row_checksum
from neardup.store.printer import StoreFeatures
from neardup.store.records import select_in, signed, unsigned
from neardup.store.tallies import Tally, empty_tally, tally_of

__all__ = ["COUNTED", "SHINGLE", "SKETCH", "HostCounts", "NewPage", "PageValues", "PagesOf",
           "count_pages", "log_tally", "new_features", "page_values", "recount",
           "stored_counts", "template_summary"]

SKETCH = 0
SHINGLE = 1
KINDS = {SKETCH: "sketch_values", SHINGLE: "shingles"}
SHINGLE_FIELD = ROW_FIELDS.index("shingle")
HOST_FIELD = ROW_FIELDS.index("host")

StoredWith = Callable[[list[int]], list[tuple[Any, ...]]]
"""(shingle hashes, signed) -> the checked rows of the stored documents holding them."""
PagesOf = Callable[[list[tuple[int, int, I64]]], list[I64]]
"""[(host key, kind, values), ...] -> for each, the stored pages of that host holding each
value (asked together)."""


@dataclass(frozen=True, slots=True)
class PageValues:
    """What one new page brings to the counts: its host, its exact-level shingle hash, whether
    it has tokens, and its values by kind (sorted distinct)."""

    host: str | None
    shingle: int
    tokens: int
    values: dict[int, U64]


class NewPage(Protocol):
    """What the store needs of a page being added (a ``DocumentPrints`` is one)."""

    @property
    def host(self) -> str | None: ...
    @property
    def shingle(self) -> int: ...
    @property
    def tokens(self) -> int: ...
    @property
    def identical(self) -> int: ...
    @property
    def lexical(self) -> int: ...
    @property
    def features(self) -> object: ...


def new_features(page: NewPage) -> StoreFeatures | None:
    """The store features of a page being added (None without a sketch)."""
    return page.features if isinstance(page.features, StoreFeatures) else None


def page_values(prints: NewPage) -> PageValues:
    """The values a page brings to the counts: its sketch, and its shingles when kept."""
    features = new_features(prints)
    values = {}
    if features is not None:
        values[SKETCH] = features.sketch
        if features.shingles is not None:
            values[SHINGLE] = features.shingles
    return PageValues(prints.host, prints.shingle, prints.tokens, values)


def _damaged(path: Path, table: str, key: object) -> CorruptDataError:
    return CorruptDataError(f"{path}: table {table}, row {key!r} fails its checksum (damaged)")


def _checked(rows: Iterable[tuple[int, ...]], path: Path, table: str) -> list[tuple[int, ...]]:
    out = []
    for row in rows:
        if row_checksum(table, *row[:-1]) != row[-1]:
            raise _damaged(path, table, row[:-1])
        out.append(tuple(row[:-1]))
    return out


def _host_rows(db: sqlite3.Connection, path: Path, keys: list[int]) -> dict[int, tuple[str, int]]:
    rows = select_in(db, "SELECT host, name, pages, crc FROM host_pages WHERE host IN ({marks})",
                     keys)
    return {int(k): (str(name), int(pages)) for k, name, pages in
            _checked(rows, path, "host_pages")}


COUNTED = "counted"
"""The table listing the documents whose values are counted, and its rows' checksum tag."""


def count_pages(db: sqlite3.Connection, path: Path, pages: Sequence[PageValues],
                docs: Sequence[int], stored: StoredWith) -> Tally:
    """Add the pages that count to ``host_pages`` and list those holding values in
    ``counted`` (inside the caller's transaction): each page with tokens and a host that is
    the first of its shingle class, stored (``stored``: the rows holding shingle hashes) or
    in this batch. Returns the tally of their values
    (the caller adds it to the store's once the transaction commits)."""
    shingles = sorted({signed(p.shingle) for p in pages if p.tokens})
    known = {int(row[SHINGLE_FIELD]) for row in stored(shingles)}
    hosts: Counter[int] = Counter()
    names: dict[int, str] = {}
    columns: list[tuple[int, int, U64]] = []
    counted = []
    keys: dict[str | None, int] = {}  # a batch has few hosts, each hashed once
    for page, doc in zip(pages, docs, strict=True):
        key = keys.get(page.host)
        if key is None:
            key = keys[page.host] = signed(host_key(page.host))
        shingle = signed(page.shingle)
        if not page.tokens or key == NO_HOST or shingle in known:
            continue
        known.add(shingle)
        hosts[key] += 1
        names.setdefault(key, (page.host or "").lower())
        columns += [(key, kind, held) for kind, held in page.values.items()]
        if page.values:
            counted.append((doc, row_checksum(COUNTED, doc)))
    _write_hosts(db, path, hosts, names)
    db.executemany("INSERT INTO counted VALUES (?, ?)", counted)
    return _tally(columns)


def _tally(columns: list[tuple[int, int, U64]]) -> Tally:
    """The tally of pages' values, given as (host key, kind, values) per page and kind."""
    if not columns:
        return empty_tally()
    sizes = [held.size for _, _, held in columns]
    return tally_of(np.repeat(np.array([c[0] for c in columns], dtype=np.int64), sizes),
                    np.repeat(np.array([c[1] for c in columns], dtype=np.int64), sizes),
                    np.concatenate([held.view(np.int64) for _, _, held in columns]))


def log_tally(db: sqlite3.Connection, path: Path, first: int, rows: Sequence[Sequence[Any]],
              sketches: Sequence[Sequence[Any]]) -> Tally:
    """The tally of the counted pages numbered ``first`` and later (the insert log), given
    the checked document ``rows`` and sketch rows (doc, modulus, data, shingles) of the
    documents ``first`` and later, read in the same transaction."""
    try:
        listed = db.execute("SELECT doc, crc FROM counted WHERE doc >= ? ORDER BY doc",
                            (first,)).fetchall()
    except sqlite3.OperationalError as error:
        if "no such table" in str(error):   # an upgraded store no writer has opened since
            return empty_tally()
        raise
    for doc, crc in listed:
        if row_checksum(COUNTED, doc) != crc:
            raise _damaged(path, COUNTED, doc)
    if not listed:
        return empty_tally()
    counted = {int(doc) for doc, _ in listed}
    hosts = {int(row[0]): signed(host_key(row[HOST_FIELD])) for row in rows
             if int(row[0]) in counted}
    held = [row for row in sketches if int(row[0]) in counted]
    if len(hosts) != len(counted) or len(held) != len(counted):
        raise CorruptDataError(f"{path}: table {COUNTED} lists documents without their "
                               "document or sketch rows (damaged)")
    columns: list[tuple[int, int, U64]] = []
    for doc, _, data, shingles in held:
        columns.append((hosts[doc], SKETCH, np.frombuffer(data, dtype="<u8")))
        if shingles is not None:
            columns.append((hosts[doc], SHINGLE, np.frombuffer(shingles, dtype="<u8")))
    return _tally(columns)


def _write_hosts(db: sqlite3.Connection, path: Path, hosts: Counter[int],
                 names: dict[int, str]) -> None:
    stored = _host_rows(db, path, sorted(hosts))
    rows = []
    for key, added in hosts.items():
        name, pages = stored.get(key, (names[key], 0))
        row = (key, name, pages + added)
        rows.append((*row, row_checksum("host_pages", *row)))
    db.executemany("INSERT OR REPLACE INTO host_pages VALUES (?,?,?,?)", rows)


class HostCounts:
    """The counts as one operation reads them (a query, or an add's verification): the
    template values of a host among given values; page counts and value counts cached, and
    fetched a host at a time with :meth:`prefetch`. The counts do not change while a view
    lives, so the content of values already pruned is remembered (an add judges one page
    against each of its near-copies: it is pruned once)."""

    def __init__(self, db: sqlite3.Connection, path: Path, config: TemplateConfig,
                 pages_of: PagesOf, known: dict[int, int] | None = None) -> None:
        """``known``: pages per host key already read, valid for the store as it stands (the
        caller drops it when the store changes); hosts read here are added to it."""
        self.db, self.path, self.config, self.pages_of = db, path, config, pages_of
        self._pages: dict[int, int] = {} if known is None else known
        self._counts: dict[tuple[int, int], dict[int, int]] = {}
        self._keys: dict[str | None, int] = {}
        self._pruned: dict[tuple[int, int, bytes], U64 | None] = {}

    def _key(self, host: str | None) -> int:
        if host not in self._keys:
            self._keys[host] = signed(host_key(host))
        return self._keys[host]

    def pages(self, host: str | None) -> int:
        """The pages of ``host`` that count (0 for none, or without a host)."""
        key = self._key(host)
        if key == NO_HOST:
            return 0
        if key not in self._pages:
            found = _host_rows(self.db, self.path, [key])
            self._pages[key] = found[key][1] if key in found else 0
        return self._pages[key]

    def _read_pages(self, hosts: Iterable[str | None]) -> None:
        """Read the pages of every host of ``hosts`` not read yet: one query for all."""
        keys = {self._key(host) for host in hosts}.difference(self._pages)
        keys.discard(NO_HOST)
        if keys:
            found = _host_rows(self.db, self.path, sorted(keys))
            self._pages.update((key, found[key][1] if key in found else 0) for key in keys)

    def _applies(self, host: str | None) -> bool:
        return self.config.enabled and self.pages(host) >= self.config.min_pages

    def prefetch(self, wanted: Iterable[tuple[str | None, int, U64]]) -> None:
        """Read the counts of many (host, kind, values) at once, one query per host and kind
        (hosts too small for templates are skipped)."""
        wanted = list(wanted)
        self._read_pages({host for host, _, _ in wanted})
        grouped: dict[tuple[int, int], set[int]] = {}
        seen: set[tuple[str | None, int, int]] = set()  # a page judged many times: once
        for host, kind, values in wanted:
            if (host, kind, id(values)) in seen:
                continue
            seen.add((host, kind, id(values)))
            if values.size and self._applies(host):
                grouped.setdefault((self._key(host), kind), set()).update(
                    values.view(np.int64).tolist())
        missing = []
        for key, asked in grouped.items():
            left = sorted(asked.difference(self._counts.setdefault(key, {})))
            if left:
                missing.append((key, left))
        if not missing:
            return
        found = self.pages_of([(host_id, kind_id, np.array(left, dtype=np.int64))
                               for (host_id, kind_id), left in missing])
        for (key, left), pages in zip(missing, found, strict=True):
            self._counts[key].update(zip(left, pages.tolist(), strict=True))

    def templates(self, host: str | None, kind: int, values: U64) -> U64:
        """The values among ``values`` (sorted distinct) that are template on ``host``."""
        if values.size == 0 or not self._applies(host):
            return np.empty(0, dtype=np.uint64)
        wanted = values.view(np.int64).tolist()
        cache = self._counts.get((self._key(host), kind), {})
        if not cache.keys() >= set(wanted):
            self.prefetch([(host, kind, values)])
            cache = self._counts[(self._key(host), kind)]
        floor = self.config.share * self.pages(host)
        frequent = [v for v in wanted if cache[v] > floor]
        if not frequent:  # most pages: nothing is template
            return np.empty(0, dtype=np.uint64)
        return np.sort(np.array(frequent, dtype=np.int64).view(np.uint64))

    def content(self, host: str | None, kind: int, values: U64 | None) -> tuple[U64 | None, int]:
        """``values`` without the host's template values, and how many were left out."""
        if values is None:
            return None, 0
        if values.size == 0 or not self._applies(host):
            return values, 0
        key = (self._key(host), kind, values.tobytes())
        if key not in self._pruned:
            template = self.templates(host, kind, values)
            self._pruned[key] = values[~np.isin(values, template, assume_unique=True)] \
                if template.size else None
        kept = self._pruned[key]
        return (values, 0) if kept is None else (kept, int(values.size - kept.size))


def _all_hosts(db: sqlite3.Connection, path: Path) -> dict[int, tuple[str, int]]:
    """Every host row, checked: (name, pages) by unsigned host key."""
    return {unsigned(k): (str(name), int(pages)) for k, name, pages in _checked(
        db.execute("SELECT host, name, pages, crc FROM host_pages"), path, "host_pages")}


def stored_counts(db: sqlite3.Connection, path: Path, tally: Tally
                  ) -> tuple[dict[int, int], dict[tuple[int, int, int], int]]:
    """Every stored count: pages per host key (each row checked), pages per (host, kind,
    value) from the store's whole ``tally`` (keys and values as unsigned 64-bit integers)."""
    hosts = {key: pages for key, (_, pages) in _all_hosts(db, path).items()}
    keys, kinds, values, pages = (np.asarray(column).tolist() for column in tally)
    return hosts, {(unsigned(k), kind, unsigned(v)): p
                   for k, kind, v, p in zip(keys, kinds, values, pages, strict=True)}


def recount(pages: Iterable[PageValues]) -> tuple[dict[int, int],
                                                   dict[tuple[int, int, int], int]]:
    """The counts from scratch, for ``pages`` in the order they were stored (the same rule as
    :func:`count_pages`, keyed like :func:`stored_counts`)."""
    seen: set[int] = set()
    hosts: Counter[int] = Counter()
    values: Counter[tuple[int, int, int]] = Counter()
    for page in pages:
        key = host_key(page.host)
        if not page.tokens or key == NO_HOST or page.shingle in seen:
            continue
        seen.add(page.shingle)
        hosts[key] += 1
        for kind, held in page.values.items():
            values.update((key, kind, v) for v in held.tolist())
    return dict(hosts), dict(values)


def template_summary(db: sqlite3.Connection, path: Path, config: TemplateConfig,
                     tally: Tally) -> dict[str, object]:
    """Per host: its pages and its template values by kind (the hosts with the most template
    values first, at most 50 listed), as batch's ``summary.json`` reports them. Reads (and
    checks) every count."""
    hosts, values = stored_counts(db, path, tally)
    names = {key: name for key, (name, _) in _all_hosts(db, path).items()}
    found: dict[int, Counter[str]] = {}
    for (key, kind, _), pages in values.items():
        total = hosts.get(key, 0)
        if total >= config.min_pages and pages > config.share * total:
            found.setdefault(key, Counter())[KINDS[kind]] += 1
    ranked = sorted(found, key=lambda k: (-sum(found[k].values()), names.get(k, "")))
    return {"enabled": config.enabled, "share": config.share, "min_pages": config.min_pages,
            "hosts": len(hosts),
            "hosts_with_enough_pages": sum(p >= config.min_pages for p in hosts.values()),
            "hosts_with_templates": len(found),
            "template_sketch_values": sum(c["sketch_values"] for c in found.values()),
            "template_shingles": sum(c["shingles"] for c in found.values()),
            "per_host": {names.get(k, str(k)): {"pages": hosts[k], **found[k]}
                         for k in ranked[:REPORTED_HOSTS]}}
