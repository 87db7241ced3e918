"""Broder's ``contained`` relation out of core: each document's one best container.

For every counted pair, each direction whose containment estimate reaches the threshold becomes
an (inner, outer, score, shared) row routed by the inner document; a bucket then holds every
candidate container of its documents and picks, per document, the highest containment, then the
longest container (token count), then the first read. The links (low, high) are routed by the
low document so that a mutual link, found from both ends, is written once (its best row): the
rule of :func:`neardup.methods.sketch._best_containers`, bucket by bucket.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from neardup._types import F64, I64
from neardup.engine.buckets import BucketWriter, bucket_count, read_bucket, spread
from neardup.engine.catalog import Catalog
from neardup.engine.scoring import found_rows
from neardup.features.shingles import distinct

__all__ = ["Containers"]

LINK = np.dtype([("inner", "<i8"), ("outer", "<i8"), ("score", "<f8"), ("shared", "<i8")])


def _first_of_runs(*keys: I64) -> npt.NDArray[np.bool_]:
    change = np.zeros(keys[0].size, dtype=np.bool_)
    change[:1] = True
    for key in keys:
        change[1:] |= key[1:] != key[:-1]
    return change


class Containers:
    """Collects containment rows, then writes each document's best link."""

    def __init__(self, catalog: Catalog, folder: Path, pairs: int, budget: int) -> None:
        self.catalog = catalog
        self.folder = folder
        self.writer = BucketWriter(folder / "inner", bucket_count(2 * pairs * LINK.itemsize,
                                                                  budget), LINK)

    def add(self, a: I64, b: I64, c_ab: F64, c_ba: F64, shared: I64, threshold: float) -> None:
        rows = np.empty(2 * a.size, dtype=LINK)
        rows["inner"], rows["outer"] = np.concatenate([a, b]), np.concatenate([b, a])
        rows["score"], rows["shared"] = np.concatenate([c_ab, c_ba]), np.concatenate([shared,
                                                                                      shared])
        rows = rows[rows["score"] >= threshold]
        self.writer.add(rows, spread(rows["inner"]))

    def _tokens(self, docs: I64) -> I64:
        """Token counts of sorted ``docs``."""
        which, rows = self.catalog.locate(docs)
        out = np.empty(docs.size, dtype=np.int64)
        for index in np.unique(which).tolist():
            mine = which == index
            out[mine] = self.catalog.columns(self.catalog.parts[index])["tokens"][rows[mine]]
        return out

    def _best(self, rows: npt.NDArray[np.void]) -> npt.NDArray[np.void]:
        """Per inner document, its best row, as a (low, high) link."""
        outers = distinct(rows["outer"])
        lengths = self._tokens(outers)[np.searchsorted(outers, rows["outer"])]
        rows = rows[np.lexsort((rows["outer"], -lengths, -rows["score"], rows["inner"]))]
        rows = rows[_first_of_runs(rows["inner"])]
        links = rows.copy()
        links["inner"] = np.minimum(rows["inner"], rows["outer"])
        links["outer"] = np.maximum(rows["inner"], rows["outer"])
        return links

    def write_best(self, out: BinaryIO) -> None:
        """Each document's best link, once per (low, high), to ``out`` as found rows."""
        self.writer.close()
        links = BucketWriter(self.folder / "low", self.writer.count, LINK)
        for bucket in range(self.writer.count):
            rows = read_bucket(self.writer.folder, bucket, LINK)
            if rows.size:
                best = self._best(rows)
                links.add(best, spread(best["inner"]))
        links.close()
        for bucket in range(links.count):
            rows = read_bucket(links.folder, bucket, LINK)
            rows = rows[np.lexsort((-rows["score"], rows["outer"], rows["inner"]))]
            rows = rows[_first_of_runs(rows["inner"], rows["outer"])]
            out.write(found_rows(rows["inner"], rows["outer"], rows["shared"], rows["score"],
                                 "contained").tobytes())
