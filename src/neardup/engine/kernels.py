"""Block kernels shared by the local engine and its Spark stages: what one bucket (locally) or
one shuffled group (on Spark) runs on its numpy rows, so that both engines compute alike.

- :func:`gather_sets`: the shingle sets (or content sets), simhashes and signatures of a block's
  documents, read from their partitions, for the scoring of candidate pairs (stage 5);
- :func:`band_rows`: the LSH band keys of a partition's survivors, on each view of the run
  (stage 4);
- :func:`equal_key_pairs`: the pairs of documents sharing a min-hash LSH band key (stage 4);
  :func:`sorted_equal_key_pairs` when the rows are already sorted;
- :func:`score_candidates`: candidate pairs scored on each view of their pages (stage 5), in
  blocks of pairs taken :func:`in_partition_order`.

A run comparing two views of a page (``DedupConfig.views``) keys each page's article view as
well: its bands are numbered after the full view's, so that keys of one view meet keys of the same
view only. A candidate pair, found on either view, is scored on both: it stands on the view where
its resemblance is higher (the article view only where both pages have one).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.config import DedupConfig
from neardup.engine.catalog import Catalog
from neardup.engine.partition import band_key_rows, shingle_slices, signature_rows
from neardup.engine.templates import ContentReader
from neardup.features.shingles import distinct
from neardup.index.lsh import LSHBands
from neardup.methods.joins import Signer
from neardup.methods.near import scored_pairs
from neardup.methods.pairs import VIEWS, Pairs
from neardup.methods.registry import signer_of

__all__ = ["BAND_ROW", "band_rows", "equal_key_pairs", "gather_sets", "has_article",
           "in_partition_order", "score_candidates", "sorted_equal_key_pairs", "verified_pairs",
           "z_order"]

BAND_ROW = np.dtype([("band", "<i8"), ("key", "<u8"), ("doc", "<i8")])
OTHER_ARTICLES = 0.5
"""Below this resemblance of their article views, two pages hold different articles: their
pair is not kept on the full view (a pair on the article view resembles at least the floor)."""


def gather_sets(catalog: Catalog, docs: I64, signer: Signer | None,
                content: ContentReader | None) -> tuple[U64, I64, U64, Any]:
    """Shingle sets (flat, offsets; content sets with ``content``), simhashes and, with the
    run's ``signer``, signatures (else None) of sorted ``docs``."""
    which, rows = catalog.locate(docs)
    flats, sizes, simhashes, rows_out = [], [], [], []
    for index in np.unique(which).tolist():
        part = catalog.parts[index]
        chosen = rows[which == index]
        raw = part.kept_rows()[chosen]
        flat, offsets = (shingle_slices(part.folder, raw) if content is None
                         else content.sets(part, chosen))
        flats.append(flat)
        sizes.append(np.diff(offsets))
        simhashes.append(catalog.column_rows(part, chosen)["simhash"])
        if signer is not None:
            stored = signature_rows(part.folder, raw, signer)
            rows_out.append(stored if content is None
                            else content.signatures(part, chosen, stored))
    offsets = np.zeros(docs.size + 1, dtype=np.int64)
    np.cumsum(np.concatenate(sizes), out=offsets[1:])
    return (np.concatenate(flats), offsets, np.concatenate(simhashes),
            np.concatenate(rows_out) if signer is not None else None)


def in_partition_order(catalog: Catalog, pairs: npt.NDArray[Any]) -> npt.NDArray[Any]:
    """Candidate ``pairs`` (fields ``a``, ``b``) ordered along a Z-order curve over the
    partitions of their two documents (pairs of the same two partitions keep their order), so
    that a block of consecutive pairs reads from a few partitions on each side: in the order
    they are found (by first document), a block's second documents lie in most partitions."""
    starts = catalog.starts()
    keys = z_order(np.searchsorted(starts, pairs["a"], side="right") - 1,
                   np.searchsorted(starts, pairs["b"], side="right") - 1)
    return pairs[np.argsort(keys, kind="stable")]


def z_order(x: I64, y: I64) -> U64:
    """The position of each point (x, y) (each below 2**32) on the Z-order curve: the bits
    of x and y interleaved, so that points close on the curve are close in both coordinates."""
    return _spread_bits(x) | (_spread_bits(y) << np.uint64(1))


def _spread_bits(values: I64) -> U64:
    """The low 32 bits of ``values``, each moved to twice its position."""
    spread = values.astype(np.uint64) & np.uint64(0xFFFFFFFF)
    for shift, mask in ((16, 0x0000FFFF0000FFFF), (8, 0x00FF00FF00FF00FF),
                        (4, 0x0F0F0F0F0F0F0F0F), (2, 0x3333333333333333),
                        (1, 0x5555555555555555)):
        spread = (spread | (spread << np.uint64(shift))) & np.uint64(mask)
    return spread


def equal_key_pairs(rows: npt.NDArray[Any]) -> tuple[I64, I64]:
    """Every pair (a < b) of docs with equal (band, key) among ``rows`` (fields ``band``,
    ``key``, ``doc``; each doc at most once per band)."""
    return sorted_equal_key_pairs(rows[np.lexsort((rows["doc"], rows["key"], rows["band"]))])


def sorted_equal_key_pairs(rows: npt.NDArray[Any]) -> tuple[I64, I64]:
    """:func:`equal_key_pairs` of ``rows`` already sorted by (band, key, doc)."""
    same = (rows["band"][1:] == rows["band"][:-1]) & (rows["key"][1:] == rows["key"][:-1])
    firsts, seconds = [], []
    distance = 1
    candidates = np.flatnonzero(same)
    while candidates.size:
        firsts.append(rows["doc"][candidates])
        seconds.append(rows["doc"][candidates + distance])
        distance += 1
        candidates = candidates[candidates + distance < rows.size]
        candidates = candidates[(rows["band"][candidates + distance] == rows["band"][candidates])
                                & (rows["key"][candidates + distance] == rows["key"][candidates])]
    if not firsts:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    return np.concatenate(firsts), np.concatenate(seconds)


def has_article(article: Catalog, index: int, local: I64) -> npt.NDArray[np.bool_]:
    """Which of ``local`` (rows among partition ``index``'s kept rows) have an article view;
    ``article`` is the run's catalog seen through its article views
    (:meth:`Catalog.article`), made once by the caller: it is as long as the run's partitions,
    and made per partition it cost each block of pairs the square of their number."""
    return article.column_rows(article.parts[index], local)["tokens"] > 0


def _rows_of(keys: U64, docs: I64, first_band: int) -> npt.NDArray[Any]:
    rows = np.empty(keys.size, dtype=BAND_ROW)
    bands = keys.shape[1] if keys.ndim == 2 else 0
    rows["band"] = np.tile(np.arange(first_band, first_band + bands, dtype=np.int64), docs.size)
    rows["doc"] = np.repeat(docs, bands)
    rows["key"] = keys.reshape(-1)
    return rows


def band_rows(catalog: Catalog, index: int, docs: I64, local: I64, bands: LSHBands,
              signer: Signer, content: ContentReader | None) -> npt.NDArray[Any]:
    """The (band, key, doc) rows of ``docs`` (rows ``local`` among partition ``index``'s kept
    rows): the keys of their full view (of their content, with ``content``) in bands
    0..b-1 and, where the partitions hold article views, those of the docs that have one in
    bands b..2b-1."""
    part = catalog.parts[index]
    keys = band_key_rows(part.folder, part.kept_rows()[local], bands, signer,
                         content.adjuster(part, local) if content is not None else None)
    rows = _rows_of(keys, docs, 0)
    if not catalog.has_article:
        return rows
    articles = catalog.article()
    chosen = has_article(articles, index, local)
    article = articles.parts[index]
    keys = band_key_rows(article.folder, article.kept_rows()[local[chosen]], bands, signer)
    return np.concatenate([rows, _rows_of(keys, docs[chosen], bands.bands)])


def _articles_of(catalog: Catalog, docs: I64) -> npt.NDArray[np.bool_]:
    which, rows = catalog.locate(docs)
    found = np.zeros(docs.size, dtype=bool)
    article = catalog.article()
    for index in np.unique(which).tolist():
        found[which == index] = has_article(article, index, rows[which == index])
    return found


def _on_view(config: DedupConfig, catalog: Catalog, a: I64, b: I64, docs: I64,
             content: ContentReader | None) -> Pairs:
    flat, offsets, simhashes, signatures = gather_sets(catalog, docs, signer_of(config), content)
    i, j = np.searchsorted(docs, a), np.searchsorted(docs, b)
    return scored_pairs(config, a, b, i, j, flat, offsets, simhashes, signatures)


def _full_only(full: Pairs) -> Pairs:
    """The pairs scored on their full view, where no pair has two article views: what
    :func:`score_candidates` picks when none is chosen on articles."""
    picked = {name: getattr(full, name) for name in Pairs.__slots__}
    picked["view"] = np.full(len(full), VIEWS.index("full"), dtype=np.int8)
    picked["other_resemblance"] = np.full(len(full), np.nan, dtype=full.resemblance.dtype)
    return Pairs(**picked)


def score_candidates(config: DedupConfig, catalog: Catalog, a: I64, b: I64,
                     content: ContentReader | None) -> Pairs:
    """The candidate pairs (a, b) scored on their pages' full views (their content, with
    ``content``) and, where the run has article views, on those too: each pair keeps the
    scores of the view where its resemblance is higher (article only where both pages have an
    article), and the other view's resemblance."""
    docs = distinct(np.concatenate([a, b]))
    full = _on_view(config, catalog, a, b, docs, content)
    if not catalog.has_article:
        return full
    present = _articles_of(catalog, docs)
    both = present[np.searchsorted(docs, a)] & present[np.searchsorted(docs, b)]
    if not both.any():  # no pair to score on articles (plain texts): the article scores
        return _full_only(full)  # would all be discarded
    article = _on_view(config, catalog.article(), a, b, docs, None)
    chosen = both & (article.resemblance > full.resemblance)
    picked = {name: np.where(chosen, getattr(article, name), getattr(full, name))
              for name in Pairs.__slots__}
    picked["view"] = np.where(chosen, VIEWS.index("article"), VIEWS.index("full")).astype(np.int8)
    picked["other_resemblance"] = np.where(
        chosen, full.resemblance, np.where(both, article.resemblance, np.nan))
    return Pairs(**picked)


def verified_pairs(config: DedupConfig, catalog: Catalog, a: I64, b: I64,
                   content: ContentReader | None) -> Pairs:
    """The candidate pairs (a, b) scored (:func:`score_candidates`) that pass verification:
    resemblance at least the config's floor, and not two different articles (the full view's
    pairs whose pages' articles resemble less than :data:`OTHER_ARTICLES`)."""
    pairs = score_candidates(config, catalog, a, b, content)
    full = (pairs.view == VIEWS.index("full")) & (pairs.other_resemblance < OTHER_ARTICLES)
    return pairs.select((pairs.resemblance >= config.resemblance_floor) & ~full)
