"""Per-host counts in a store: how many pages each host has, and how many hold each value.

Site templates (Bar-Yossef and Rajagopalan 2002) are found by frequency: on a host with at least
``min_pages`` pages, a value held by more than ``share`` of them is template, not content
(:class:`neardup.config.TemplateConfig`, the batch rule of :mod:`neardup.features.templates`).
A store keeps the counts that rule needs, up to date as documents arrive, in two tables of
``meta.sqlite`` written in the add's transaction:

- ``host_pages`` (host key, name, pages, crc): the pages of each host that count;
- ``host_values`` (host key, kind, value, pages, crc): per host and value, the pages holding it;
  kind 0 is a sketch value, kind 1 a kept shingle (stores created with ``keep_shingles``).

A page counts as batch counts it: it has tokens, a host, and is the first stored page of its
shingle-equivalence class (the exact-level survivor); a re-added document is not stored again,
so it is not counted twice. Compaction rewrites segments only, never these rows. Every row
carries a checksum (``crc``) checked whenever it is read: a damaged count is refused with an
error naming the file and the table, never used.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.config import TemplateConfig
from neardup.errors import CorruptDataError
from neardup.features.templates import NO_HOST, REPORTED_HOSTS, host_key
from neardup.store.formats import ROW_FIELDS, row_checksum
from neardup.store.printer import StoreFeatures
from neardup.store.records import documents_in, select_in, signed, unsigned

__all__ = ["SHINGLE", "SKETCH", "HostCounts", "NewPage", "PageValues", "count_pages",
           "new_features", "page_values", "recount", "stored_counts", "template_summary",
           "value_checksum", "value_checksums"]

SKETCH = 0
SHINGLE = 1
KINDS = {SKETCH: "sketch_values", SHINGLE: "shingles"}
SHINGLE_FIELD = ROW_FIELDS.index("shingle")


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


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(x: U64) -> U64:
    """SplitMix64's finalizer, elementwise (wrapping arithmetic)."""
    x = x + _GOLDEN
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    mixed: U64 = x ^ (x >> np.uint64(31))
    return mixed


def value_checksums(host: npt.ArrayLike, kind: npt.ArrayLike, value: npt.ArrayLike,
                    pages: npt.ArrayLike) -> I64:
    """The checksums of ``host_values`` rows, vectorized (SplitMix64 rounds over the row's four
    integers; arguments broadcast)."""
    columns = np.broadcast_arrays(*(np.asarray(c, dtype=np.int64) for c in
                                    (host, kind, value, pages)))
    digest = np.full(columns[0].shape, 0x686F7374, dtype=np.uint64)  # "host"
    for column in columns:
        digest = _mix(digest ^ column.view(np.uint64))
    return digest.view(np.int64)


MASK = (1 << 64) - 1


def value_checksum(host: int, kind: int, value: int, pages: int) -> int:
    """:func:`value_checksums` of one row (registered in SQLite as ``neardup_value_crc``)."""
    digest = 0x686F7374
    for column in (host, kind, value, pages):
        x = ((digest ^ (column & MASK)) + 0x9E3779B97F4A7C15) & MASK
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK
        digest = x ^ (x >> 31)
    return digest - (1 << 64) if digest >= 1 << 63 else digest


def _checked_values(rows: list[tuple[int, ...]], path: Path) -> I64:
    """``host_values`` rows (host, kind, value, pages, crc) as an (n, 4) array, every checksum
    checked."""
    table = np.array(rows, dtype=np.int64).reshape(-1, 5)
    bad = np.flatnonzero(value_checksums(*table[:, :4].T) != table[:, 4])
    if bad.size:
        raise _damaged(path, "host_values", tuple(table[bad[0], :4].tolist()))
    return table[:, :4]


FEW_ROWS = 64
"""Up to this many rows, checksums are checked one by one (numpy's per-call cost dominates)."""


def _value_rows(db: sqlite3.Connection, path: Path, key: int, kind: int,
                values: list[int]) -> dict[int, int]:
    """The stored page counts of ``values`` (signed) of one host and kind."""
    rows = select_in(db, "SELECT host, kind, value, pages, crc FROM host_values WHERE "
                         "host = ? AND kind = ? AND value IN ({marks})", values,
                     (int(key), int(kind)))
    if len(rows) > FEW_ROWS:
        table = _checked_values(rows, path)
        mine = table[(table[:, 0] == key) & (table[:, 1] == kind)]
        return dict(zip(mine[:, 2].tolist(), mine[:, 3].tolist(), strict=True))
    counts = {}
    for row in rows:                # a query's few values: checked without numpy's overhead
        if value_checksum(*row[:4]) != row[4]:
            raise _damaged(path, "host_values", tuple(row[:4]))
        if row[0] == key and row[1] == kind:
            counts[int(row[2])] = int(row[3])
    return counts


def count_pages(db: sqlite3.Connection, path: Path, pages: Sequence[PageValues]) -> int:
    """Add the pages that count to the host tables (inside the caller's transaction): each
    page with tokens and a host that is the first of its shingle class, stored or in this
    batch. Returns how many pages counted."""
    shingles = sorted({signed(p.shingle) for p in pages if p.tokens})
    known = {int(row[SHINGLE_FIELD]) for row in documents_in(db, path, "shingle", shingles)}
    hosts: Counter[int] = Counter()
    names: dict[int, str] = {}
    values: dict[tuple[int, int], Counter[int]] = {}
    for page in pages:
        key, shingle = signed(host_key(page.host)), signed(page.shingle)
        if not page.tokens or key == NO_HOST or shingle in known:
            continue
        known.add(shingle)
        hosts[key] += 1
        names.setdefault(key, (page.host or "").lower())
        for kind, held in page.values.items():
            values.setdefault((key, kind), Counter()).update(held.view(np.int64).tolist())
    _write_hosts(db, path, hosts, names)
    db.create_function("neardup_value_crc", 4, value_checksum, deterministic=True)
    for (key, kind), counts in values.items():
        _write_values(db, path, key, kind, counts)
    return sum(hosts.values())


def _write_hosts(db: sqlite3.Connection, path: Path, hosts: Counter[int],
                 names: dict[int, str]) -> None:
    stored = _host_rows(db, path, sorted(hosts))
    rows = []
    for key, added in hosts.items():
        name, pages = stored.get(key, (names[key], 0))
        row = (key, name, pages + added)
        rows.append((*row, row_checksum("host_pages", *row)))
    db.executemany("INSERT OR REPLACE INTO host_pages VALUES (?,?,?,?)", rows)


UPSERT = ("INSERT INTO host_values VALUES ({key}, {kind}, ?, ?, ?) "
          "ON CONFLICT (host, kind, value) DO UPDATE SET pages = pages + excluded.pages, "
          "crc = neardup_value_crc(host, kind, value, pages + excluded.pages) "
          "WHERE crc = neardup_value_crc(host, kind, value, pages)")
"""Add to a count, or start one; a stored row whose checksum fails is not updated (the
statement then changes fewer rows than it was given, and the add is refused)."""


def _write_values(db: sqlite3.Connection, path: Path, key: int, kind: int,
                  counts: Counter[int]) -> None:
    values = np.fromiter(counts.keys(), dtype=np.int64, count=len(counts))
    added = np.fromiter(counts.values(), dtype=np.int64, count=len(counts))
    checksums = value_checksums(np.int64(key), np.int64(kind), values, added)
    cursor = db.executemany(UPSERT.format(key=int(key), kind=int(kind)),
                            zip(values.tolist(), added.tolist(), checksums.tolist(),
                                strict=True))
    if cursor.rowcount != values.size:
        raise CorruptDataError(f"{path}: table host_values, a row of host {key} fails its "
                               "checksum (damaged)")


class HostCounts:
    """The counts as one operation reads them (a query, or an add's verification): the
    template values of a host among given values; page counts and value counts cached, and
    fetched a host at a time with :meth:`prefetch`."""

    def __init__(self, db: sqlite3.Connection, path: Path, config: TemplateConfig) -> None:
        self.db, self.path, self.config = db, path, config
        self._pages: dict[int, int] = {}
        self._counts: dict[tuple[int, int], dict[int, int]] = {}
        self._keys: dict[str | None, int] = {}

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

    def _applies(self, host: str | None) -> bool:
        return self.config.enabled and self.pages(host) >= self.config.min_pages

    def prefetch(self, wanted: Iterable[tuple[str | None, int, U64]]) -> None:
        """Read the counts of many (host, kind, values) at once, one query per host and kind
        (hosts too small for templates are skipped)."""
        grouped: dict[tuple[int, int], set[int]] = {}
        for host, kind, values in wanted:
            if values.size and self._applies(host):
                grouped.setdefault((self._key(host), kind), set()).update(
                    values.view(np.int64).tolist())
        for (host_id, kind_id), asked in grouped.items():
            cache = self._counts.setdefault((host_id, kind_id), {})
            missing = sorted(asked.difference(cache))
            found = (_value_rows(self.db, self.path, host_id, kind_id, missing) if missing
                     else {})
            cache.update({value: found.get(value, 0) for value in missing})

    def templates(self, host: str | None, kind: int, values: U64) -> U64:
        """The values among ``values`` (sorted distinct) that are template on ``host``."""
        if values.size == 0 or not self._applies(host):
            return np.empty(0, dtype=np.uint64)
        wanted = values.view(np.int64).tolist()
        cache = self._counts.get((self._key(host), kind), {})
        if any(v not in cache for v in wanted):
            self.prefetch([(host, kind, values)])
            cache = self._counts[(self._key(host), kind)]
        floor = self.config.share * self.pages(host)
        frequent = [v for v in wanted if cache[v] > floor]
        return np.sort(np.array(frequent, dtype=np.int64).view(np.uint64))

    def content(self, host: str | None, kind: int, values: U64 | None) -> tuple[U64 | None, int]:
        """``values`` without the host's template values, and how many were left out."""
        if values is None:
            return None, 0
        template = self.templates(host, kind, values)
        if template.size == 0:
            return values, 0
        kept = values[~np.isin(values, template, assume_unique=True)]
        return kept, int(values.size - kept.size)


def _all_hosts(db: sqlite3.Connection, path: Path) -> dict[int, tuple[str, int]]:
    """Every host row, checked: (name, pages) by unsigned host key."""
    return {unsigned(k): (str(name), int(pages)) for k, name, pages in _checked(
        db.execute("SELECT host, name, pages, crc FROM host_pages"), path, "host_pages")}


def stored_counts(db: sqlite3.Connection, path: Path
                  ) -> tuple[dict[int, int], dict[tuple[int, int, int], int]]:
    """Every stored count, each row checked: pages per host key, pages per (host, kind,
    value) (keys and values as unsigned 64-bit integers)."""
    hosts = {key: pages for key, (_, pages) in _all_hosts(db, path).items()}
    table = _checked_values(
        db.execute("SELECT host, kind, value, pages, crc FROM host_values").fetchall(), path)
    values = {(unsigned(k), kind, unsigned(v)): pages for k, kind, v, pages in table.tolist()}
    return hosts, values


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


def template_summary(db: sqlite3.Connection, path: Path,
                     config: TemplateConfig) -> dict[str, object]:
    """Per host: its pages and its template values by kind (the hosts with the most template
    values first, at most 50 listed), as batch's ``summary.json`` reports them. Reads (and
    checks) every count."""
    hosts, values = stored_counts(db, path)
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
