"""Block kernels shared by the local engine and its Spark stages: what one bucket (locally) or
one shuffled group (on Spark) runs on its numpy rows, so that both engines compute alike.

- :func:`gather_sets`: the shingle sets (or content sets), simhashes and signatures of a block's
  documents, read from their partitions, for the scoring of candidate pairs (stage 5);
- :func:`equal_key_pairs`: the pairs of documents sharing a min-hash LSH band key (stage 4);
  :func:`sorted_equal_key_pairs` when the rows are already sorted.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.engine.catalog import Catalog
from neardup.engine.partition import shingle_slices, signature_rows
from neardup.engine.templates import ContentReader
from neardup.methods.joins import Signer

__all__ = ["equal_key_pairs", "gather_sets", "sorted_equal_key_pairs"]


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
        simhashes.append(catalog.columns(part)["simhash"][chosen])
        if signer is not None:
            stored = signature_rows(part.folder, raw, signer)
            rows_out.append(stored if content is None
                            else content.signatures(part, chosen, stored))
    offsets = np.zeros(docs.size + 1, dtype=np.int64)
    np.cumsum(np.concatenate(sizes), out=offsets[1:])
    return (np.concatenate(flats), offsets, np.concatenate(simhashes),
            np.concatenate(rows_out) if signer is not None else None)


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
