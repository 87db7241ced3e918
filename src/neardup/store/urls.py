"""Broder's queries by URL over a store, and clusters of sketches for lost and found.

- :func:`url_cluster`: URL -> document -> cluster -> every URL of the cluster, per sweep
  (``neardup query --url U --cluster``);
- :func:`similar_to_url`: resemblance or containment search (the stored sketches) for the
  document stored under a URL (``query --url U --resemblance X``);
- **sketch clusters** (``StoreConfig.sketch_clusters = r``, chosen when the store is created):
  each added document joins the cluster of every stored document (or document of its batch)
  whose estimated resemblance to it reaches r (Broder clustered at 0.5). They live in their own
  table, ``sketch_clusters`` (doc, cluster = the smallest doc of the cluster), updated in the
  add's transaction; :func:`sightings` gives lost-and-found these clusters instead of the
  simhash ones, so a lightly edited page that moved is found, not reported lost. Each page's
  sketch is compared without its host's template values (:mod:`neardup.store.content`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from neardup._types import I64
from neardup.cluster.sweeps import Sighting
from neardup.cluster.unionfind import label_roots
from neardup.fingerprints.sketch import estimate_resemblance
from neardup.methods.prints import DocumentPrints
from neardup.store.content import Side, compare
from neardup.store.formats import ROW_FIELDS
from neardup.store.hosts import HostCounts
from neardup.store.lookup import (
    StoreMatch,
    check_sketch_search,
    sharing,
    similar_to_probe,
    stored_probe,
    stored_sketches,
)
from neardup.store.printer import features_of
from neardup.store.records import IDENTICAL, documents_in, select_in, unsigned

if TYPE_CHECKING:
    from neardup.store.collection import Store

__all__ = ["ClusterMember", "UrlCluster", "merge_sketch_clusters", "sightings",
           "similar_to_url", "url_cluster"]

HOST = ROW_FIELDS.index("host")
_TABLE = ("CREATE TABLE IF NOT EXISTS sketch_clusters (doc INTEGER PRIMARY KEY, "
          "cluster INTEGER NOT NULL)")
_INDEX = "CREATE INDEX IF NOT EXISTS sketch_clusters_cluster ON sketch_clusters(cluster)"


@dataclass(frozen=True, slots=True)
class ClusterMember:
    doc: int
    url: str | None
    sweep: str | None
    fetched: str | None


@dataclass(frozen=True, slots=True)
class UrlCluster:
    """The cluster of the most recent document stored under ``url``, and its members."""

    url: str
    doc: int
    cluster: int
    clustered_by: str
    members: tuple[ClusterMember, ...]

    def by_sweep(self) -> dict[str, list[str]]:
        """The distinct URLs of the cluster per sweep (sweeps in order of first document)."""
        out: dict[str, list[str]] = {}
        for m in self.members:
            urls = out.setdefault(m.sweep or "", [])
            if m.url is not None and m.url not in urls:
                urls.append(m.url)
        return out

    def as_dict(self) -> dict[str, object]:
        return {"url": self.url, "doc": self.doc, "cluster": self.cluster,
                "clustered_by": self.clustered_by, "by_sweep": self.by_sweep(),
                "members": [dataclasses.asdict(m) for m in self.members]}


def _by_sketch(store: Store) -> bool:
    return store.config.sketch_clusters is not None


def url_cluster(store: Store, url: str) -> UrlCluster:
    """Every document of the cluster of ``url``'s most recent document (KeyError: no such URL)."""
    rows = store.documents_with("url", [url])
    if not rows:
        raise KeyError(url)
    doc, cluster = rows[-1][0], rows[-1][ROW_FIELDS.index("cluster")]
    if _by_sketch(store):
        cluster = store.db.execute("SELECT cluster FROM sketch_clusters WHERE doc=?",
                                   (doc,)).fetchone()[0]
        rows = store.db.execute(
            "SELECT d.doc, d.url, d.sweep, d.fetched FROM sketch_clusters s JOIN documents d "
            "ON d.doc = s.doc WHERE s.cluster=? ORDER BY d.doc", (cluster,)).fetchall()
    else:
        rows = store.db.execute("SELECT doc, url, sweep, fetched FROM documents WHERE cluster=? "
                                "ORDER BY doc", (cluster,)).fetchall()
    members = tuple(ClusterMember(*r) for r in rows)
    return UrlCluster(url, doc, cluster, "sketch" if _by_sketch(store) else "simhash", members)


def similar_to_url(store: Store, url: str, resemblance: float, containment: float,
                   explain: bool = False, templates: bool = True) -> tuple[int, list[StoreMatch]]:
    """The sketch search for the document stored under ``url``, itself left out."""
    check_sketch_search(store, containment)
    doc, probe = stored_probe(store, url)
    return doc, similar_to_probe(store, probe, resemblance, containment, explain, leave_out=doc,
                                 templates=templates)


def sightings(store: Store) -> tuple[list[Sighting], list[str]]:
    """The store's sightings, with sketch clusters when the store was created with them."""
    found, order = store.sightings()
    if not _by_sketch(store):
        return found, order
    rows = store.db.execute(
        "SELECT d.url, d.sweep, d.fetched, s.cluster FROM documents d JOIN sketch_clusters s "
        "ON d.doc = s.doc WHERE d.url IS NOT NULL AND d.sweep IS NOT NULL").fetchall()
    return [Sighting(url, sweep or "", fetched, cluster)
            for url, sweep, fetched, cluster in rows], order


def _resembling(store: Store, doc: int, page: Side, view: HostCounts) -> list[int]:
    """Stored documents (batch included) whose estimated resemblance to ``doc`` reaches the
    store's floor, each side without its host's template values."""
    config, floor = store.config.sketch, store.config.sketch_clusters
    assert config is not None and floor is not None
    features = page.features
    others = [d for d in sharing(store, features.sketch.astype(np.int64).tolist()) if d != doc]
    rows = {r[0]: r for r in documents_in(store.db, store.meta_path, "doc", others)}
    found = []
    for other, stored in stored_sketches(store, others).items():
        row = rows[other]
        content = compare(view, page, Side(row[HOST], stored, unsigned(row[IDENTICAL])))
        first, second = content.query, content.stored
        moduli = (first.modulus, second.modulus) if config.adaptive else None
        if estimate_resemblance(first.sketch, second.sketch, config, moduli) >= floor:
            found.append(other)
    return found


def merge_sketch_clusters(store: Store, docs: I64, batch: list[DocumentPrints]) -> None:
    """Give the batch's documents their sketch clusters, merging stored clusters they join
    (inside the caller's transaction, after the batch's postings are written)."""
    db = store.db
    db.execute(_TABLE)
    db.execute(_INDEX)
    links: list[tuple[int, int]] = []
    view = HostCounts(db, store.meta_path, store.config.templates, store.value_pages_many)
    for doc, prints in zip(docs.tolist(), batch, strict=True):
        features = features_of(prints)
        if features is not None and features.sketch.size:
            page = Side(prints.host, features, prints.identical)
            links += [(doc, other) for other in _resembling(store, doc, page, view)]
    others = sorted({other for _, other in links})
    existing = dict(select_in(db, "SELECT doc, cluster FROM sketch_clusters WHERE doc IN "
                                  "({marks})", others))
    clusters = sorted(set(existing.values()))
    roots = label_roots([doc for doc, _ in links],
                        [existing.get(other, other) for _, other in links],
                        clusters + docs.tolist()).tolist()
    for cluster, root in zip(clusters, roots[:len(clusters)], strict=True):
        if root != cluster:
            db.execute("UPDATE sketch_clusters SET cluster=? WHERE cluster=?", (root, cluster))
    db.executemany("INSERT INTO sketch_clusters VALUES (?, ?)",
                   list(zip(docs.tolist(), roots[len(clusters):], strict=True)))
