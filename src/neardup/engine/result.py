"""The result of a run, read back from its output folder: what the library returns.

A :class:`DedupResult` holds the run's tables (``documents``, ``clusters``, the ``pairs`` as
:class:`~neardup.methods.pairs.Pairs`, and a method's extra tables) and its summary, read from
the folder :func:`~neardup.engine.run.run_engine` wrote; only the columns asked for are read,
so a result of many documents costs its columns, not the run's intermediate data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.parquet as pq

from neardup._types import I64
from neardup.cluster.relations import RELATIONS
from neardup.methods.pairs import VIEWS, Pairs, pair_methods

__all__ = ["RESULT_TABLES", "DedupResult", "pairs_from_table"]

RESULT_TABLES = ("documents", "clusters", "pairs")
"""The tables every run's output folder holds (``<name>.parquet``, beside ``summary.json``)."""


def _codes(column: pa.ChunkedArray, names: tuple[str, ...]) -> npt.NDArray[np.int8]:
    index = {name: code for code, name in enumerate(names)}
    return np.array([index[value] for value in column.to_pylist()], dtype=np.int8)


def _filled(column: pa.ChunkedArray, missing: float) -> npt.NDArray[Any]:
    return np.asarray(column.fill_null(missing).to_numpy())


def pairs_from_table(table: pa.Table) -> Pairs:
    """The :class:`Pairs` of a ``pairs`` table (its inverse is :meth:`Pairs.columns`)."""
    return Pairs(
        a=table.column("a").to_numpy().astype(np.int64),
        b=table.column("b").to_numpy().astype(np.int64),
        method=_codes(table.column("method"), pair_methods()),
        relation=_codes(table.column("relation"), RELATIONS),
        hamming=_filled(table.column("hamming"), -1).astype(np.int64),
        estimate=_filled(table.column("estimate"), np.nan).astype(np.float64),
        resemblance=table.column("resemblance").to_numpy().astype(np.float64),
        containment_ab=table.column("containment_ab").to_numpy().astype(np.float64),
        containment_ba=table.column("containment_ba").to_numpy().astype(np.float64),
        shared=_filled(table.column("shared"), -1).astype(np.int64),
        view=_view_codes(table),
        other_resemblance=_other_resemblance(table))


def _view_codes(table: pa.Table) -> npt.NDArray[np.int8]:
    """The ``view`` codes (-1 where null; every pair -1 in a table written before views)."""
    if "view" not in table.column_names:
        return np.full(table.num_rows, -1, dtype=np.int8)
    return np.array([-1 if v is None else VIEWS.index(v) for v in table.column("view").to_pylist()],
                    dtype=np.int8)


def _other_resemblance(table: pa.Table) -> npt.NDArray[np.float64]:
    """Each pair's resemblance on the view other than its own (NaN where not computed)."""
    if "view" not in table.column_names:
        return np.full(table.num_rows, np.nan)
    article = _view_codes(table) == VIEWS.index("article")
    full = _filled(table.column("full_resemblance"), np.nan).astype(np.float64)
    other = _filled(table.column("article_resemblance"), np.nan).astype(np.float64)
    return np.where(article, full, other)


@dataclass(frozen=True, slots=True)
class DedupResult:
    """One row per document in ``documents`` and ``clusters`` (in input order), every verified
    pair in ``pairs``, the run's summary in ``stats``; see the output schema in the docs."""

    documents: pa.Table
    clusters: pa.Table
    pairs: Pairs
    stats: dict[str, Any]
    tables: dict[str, pa.Table] = field(default_factory=dict)
    """A method's extra tables (``growth`` for shingle-paragraphs), by name."""

    @staticmethod
    def read(folder: Path, columns: list[str] | None = None) -> DedupResult:
        """The result written in ``folder`` (Parquet tables); ``columns``: those of the
        documents table to read (all by default)."""
        stats: dict[str, Any] = json.loads((folder / "summary.json").read_text())
        tables = {path.name.removesuffix(".parquet"): pq.read_table(path)
                  for path in sorted(folder.glob("*.parquet"))
                  if path.name.removesuffix(".parquet") not in RESULT_TABLES}
        return DedupResult(pq.read_table(folder / "documents.parquet", columns=columns),
                           pq.read_table(folder / "clusters.parquet"),
                           pairs_from_table(pq.read_table(folder / "pairs.parquet")),
                           stats, tables)

    @property
    def ids(self) -> list[str]:
        """Each document's id, by document number."""
        ids: list[str] = self.documents.column("id").to_pylist()
        return ids

    @property
    def cluster(self) -> I64:
        """Each document's cluster: the smallest document number in it."""
        return np.asarray(self.clusters.column("cluster").to_numpy(), dtype=np.int64)

    @property
    def kept_doc(self) -> I64:
        """For each document, the document kept in its place (itself when it is kept)."""
        return np.asarray(self.clusters.column("kept_doc").to_numpy(), dtype=np.int64)

    @property
    def kept(self) -> npt.NDArray[np.bool_]:
        """Per document: is it the survivor of its cluster (a unique document is)?"""
        return np.asarray(self.clusters.column("kept").to_numpy(zero_copy_only=False))

    @property
    def reasons(self) -> list[str]:
        """``unique``, ``kept:<policy>`` or ``duplicate:<relation>``, per document."""
        reasons: list[str] = self.clusters.column("reason").to_pylist()
        return reasons

    @property
    def duplicates(self) -> int:
        return int(np.count_nonzero(~self.kept))

    def table(self) -> pa.Table:
        """One row per document: doc, id, cluster, kept, kept_doc, reason."""
        return pa.table({"doc": self.clusters.column("doc"), "id": self.documents.column("id"),
                         "cluster": self.clusters.column("cluster"),
                         "kept": self.clusters.column("kept"),
                         "kept_doc": self.clusters.column("kept_doc"),
                         "reason": self.clusters.column("reason")})

    def pairs_table(self) -> pa.Table:
        """Every verified pair, method and relation by name, sorted by (a, b, method)."""
        return pa.table(self.pairs.columns())
