"""The simhash matches of an add, judged on content before they merge clusters.

An add finds each new page's stored near-copies and the near pairs within its batch by simhash
(Manku's tables); inside the add's transaction, after the host counts include the batch
(:func:`neardup.store.hosts.count_pages`), each match whose pages lose template values is kept
only when its content still resembles (:func:`neardup.store.content.resembles`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from neardup._types import BOOL, I64, U64
from neardup.config import SketchConfig
from neardup.index.tables import Matches
from neardup.store.content import Side, compare, resembles
from neardup.store.formats import ROW_FIELDS
from neardup.store.hosts import (
    SHINGLE,
    SKETCH,
    HostCounts,
    NewPage,
    count_pages,
    new_features,
    page_values,
)
from neardup.store.lookup import stored_sketches
from neardup.store.records import documents_in, signed
from neardup.store.tallies import Asked, Counts, Tally

if TYPE_CHECKING:
    from neardup.store.collection import Store

__all__ = ["content_matches", "counted_and_judged"]

Facts = tuple[Side | None, tuple[int, int, int]]
"""A page of a match: its content side (None without a sketch) and (identical, lexical, tokens)."""
FIELDS = {name: ROW_FIELDS.index(name) for name in ("host", "identical", "lexical", "tokens")}


def _batch_side(prints: NewPage) -> Facts:
    features = new_features(prints)
    side = None if features is None else Side(prints.host, features, prints.identical)
    return side, (signed(prints.identical), signed(prints.lexical), prints.tokens)


def counted_and_judged(store: Store, batch: Sequence[NewPage], docs: I64, positions: I64,
                       found: Matches, a: I64, b: I64) -> tuple[Matches, I64, I64, Tally]:
    """Count the batch's pages (numbered ``docs``; before their rows are written), then keep
    the matches that stand: ``found`` (stored matches of the indexed batch documents) and the
    batch pairs (``a``, ``b``), positions among the indexed documents (``positions``: their
    batch positions). Also returns the batch's tally, for the store to add once committed."""
    tally = count_pages(store.db, store.meta_path, [page_values(p) for p in batch],
                        docs.tolist(), lambda values: store.documents_with("shingle", values))
    stands, pairs = content_matches(store, batch, positions[found.query], found.id,
                                    positions[a], positions[b], tally)
    return (Matches(found.query[stands], found.id[stands], found.distance[stands]),
            a[pairs], b[pairs], tally)


def content_matches(store: Store, batch: Sequence[NewPage], query: I64, stored: I64,
                    a: I64, b: I64, pending: Tally) -> tuple[BOOL, BOOL]:
    """Which matches stand: (batch position ``query[i]``, stored doc ``stored[i]``) and
    (batch positions ``a[j]``, ``b[j]``), the batch's own tally (``pending``, not yet the
    store's) counted; call inside the add's transaction."""
    keep_stored = np.ones(query.size, dtype=np.bool_)
    keep_batch = np.ones(a.size, dtype=np.bool_)
    config = store.config
    if config.sketch is None or not config.templates.enabled or not (query.size or a.size):
        return keep_stored, keep_batch
    def counts(asked: Asked) -> list[I64]:
        together = Counts(asked)
        together.add(pending)
        return [stored + own for stored, own in zip(store.value_pages_many(asked),
                                                    together.groups(), strict=True)]

    view = HostCounts(store.db, store.meta_path, config.templates, counts)
    involved = set(query.tolist()) | set(a.tolist()) | set(b.tolist())
    sides = {p: _batch_side(batch[p]) for p in involved}
    others = _stored_sides(store, sorted(set(stored.tolist())))
    view.prefetch(_wanted([sides[p] for p in query.tolist()] + list(others.values())
                          + [sides[p] for p in np.concatenate([a, b]).tolist()]))
    for i, (position, doc) in enumerate(zip(query.tolist(), stored.tolist(), strict=True)):
        keep_stored[i] = _stands(view, sides[position], others.get(doc), config.sketch)
    for j, (first, second) in enumerate(zip(a.tolist(), b.tolist(), strict=True)):
        keep_batch[j] = _stands(view, sides[first], sides[second], config.sketch)
    return keep_stored, keep_batch


def _wanted(pages: list[Facts]) -> list[tuple[str | None, int, U64]]:
    """The (host, kind, values) whose counts judging these pages reads."""
    wanted = []
    for side, _ in pages:
        if side is not None:
            wanted.append((side.host, SKETCH, side.features.sketch))
            if side.features.shingles is not None:
                wanted.append((side.host, SHINGLE, side.features.shingles))
    return wanted


def _stored_sides(store: Store, docs: list[int]) -> dict[int, Facts]:
    rows = {row[0]: row for row in documents_in(store.db, store.meta_path, "doc", docs)}
    sketches = stored_sketches(store, docs)
    out = {}
    for doc in docs:
        row = rows[doc]
        host, identical, lexical, tokens = (row[FIELDS[n]] for n in FIELDS)
        features = sketches.get(doc)
        side = None if features is None else Side(host, features, identical & (2**64 - 1))
        out[doc] = (side, (identical, lexical, tokens))
    return out


def _stands(view: HostCounts, first: Facts, second: Facts | None,
            config: SketchConfig) -> bool:
    if second is None:
        return True
    (side_a, (identical_a, lexical_a, tokens_a)), (side_b, (identical_b, lexical_b, _)) = \
        first, second
    if identical_a == identical_b or (tokens_a and lexical_a == lexical_b):
        return True
    if side_a is None or side_b is None:
        return True
    return resembles(compare(view, side_a, side_b), config)
