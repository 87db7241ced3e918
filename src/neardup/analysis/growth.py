"""Growth of clusters and duplicates per iteration (Pereira section 4.2, Figure 5), and the
estimate of the final number of duplicates from the first iterations.

**Reading.** The ``growth`` table written by the shingle-paragraph method with ``--iterations m``
is read tolerantly: an iteration column (``iteration``, ``iter`` or ``step``; row order when
absent; 0-based numbering is shifted to 1-based), ``clusters`` and ``duplicates`` (at least one),
``documents`` (the documents loaded so far: Pereira's linear curve) when present, and every
numeric column whose name contains ``estimate``, carried along as it is. Counts are expected to be
cumulative; a series that decreases somewhere is taken as per-iteration counts and summed.

**Estimating.** Pereira et al. estimate the final count from another collection's growth curve.
Here the estimate needs no reference: in their algorithm a cluster is found, whole, in the
iteration whose sub-collection holds its first member. The documents are dealt at random into
``m`` sub-collections (a seeded permutation cut as ``numpy.array_split`` cuts it, as the
shingle-paragraph method assigns them at random), so after the first sub-collections, holding
``k`` of the ``n`` documents, a cluster of ``s`` documents has been found with probability
``1 - C(n - s, k) / C(n, k)``. Weighting each cluster found so far by the inverse of that
probability (Horvitz-Thompson) estimates the final clusters and duplicates without bias. The
estimate is computed on this simulated assignment, from the run's clusters, not from the growth
table's own run; the table's own estimate columns are shown beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from neardup._types import F64, I64
from neardup.errors import SourceError
from neardup.overlap.iterative import found_probability

__all__ = [
    "Growth",
    "GrowthEstimate",
    "cumulative",
    "cut_iteration",
    "estimate_from_prefix",
    "found_probability",
    "processed_documents",
    "read_growth",
]


_ALIASES: dict[str, tuple[str, ...]] = {
    "iteration": ("iteration", "iterations", "iter", "step"),
    "clusters": ("clusters", "clusters_found", "num_clusters"),
    "duplicates": ("duplicates", "duplicates_found", "num_duplicates", "dups"),
    "documents": ("documents", "documents_loaded", "documents_seen", "docs"),
}


@dataclass(frozen=True, slots=True)
class Growth:
    """Cumulative counts after iterations 1..m; ``estimates`` holds the table's own estimate
    columns unchanged."""

    iterations: I64
    series: dict[str, F64]
    estimates: dict[str, F64]

    @property
    def m(self) -> int:
        return int(self.iterations.size)


def cumulative(values: F64) -> F64:
    """``values`` if they never decrease (already cumulative), else their running sum."""
    values = np.asarray(values, dtype=np.float64)
    return values if np.all(np.diff(values) >= 0) else np.cumsum(values)


def _is_number(kind: pa.DataType) -> bool:
    return bool(pa.types.is_integer(kind) or pa.types.is_floating(kind))


def _numeric(table: pa.Table, name: str) -> F64:
    column = table.column(name)
    if not (_is_number(column.type) or pa.types.is_null(column.type)):
        raise SourceError("growth table", f"column {name} is not numeric ({column.type})")
    return np.asarray(column.to_numpy(zero_copy_only=False), dtype=np.float64)


def read_growth(table: pa.Table) -> Growth:
    """The :class:`Growth` of a ``growth`` table (see the module docstring for the columns)."""
    lower = {name.lower(): name for name in table.column_names}
    found = {key: next((lower[a] for a in names if a in lower), None)
             for key, names in _ALIASES.items()}
    if found["clusters"] is None and found["duplicates"] is None:
        raise SourceError("growth table", "no clusters or duplicates column "
                                          f"(columns: {', '.join(table.column_names) or 'none'})")
    if table.num_rows == 0:
        raise SourceError("growth table", "no rows")
    steps = (_numeric(table, found["iteration"]) if found["iteration"]
             else np.arange(1, table.num_rows + 1, dtype=np.float64))
    order = np.argsort(steps, kind="stable")
    series = {key: cumulative(np.nan_to_num(_numeric(table, name)[order]))
              for key, name in found.items() if key != "iteration" and name is not None}
    estimates = {name: _numeric(table, name)[order] for name in table.column_names
                 if "estimate" in name.lower() and _is_number(table.column(name).type)}
    return Growth(np.arange(1, table.num_rows + 1, dtype=np.int64), series, estimates)


def cut_iteration(m: int, fraction: float) -> int:
    """The iteration ending the first ``fraction`` of ``m`` iterations (at least the first)."""
    return max(1, min(m, math.ceil(fraction * m - 1e-9)))


def processed_documents(count: int, m: int, iteration: int) -> int:
    """Documents in the first ``iteration`` of ``m`` contiguous sub-collections of ``count``
    documents, cut as ``numpy.array_split`` cuts them."""
    base, extra = divmod(count, m)
    return iteration * base + min(iteration, extra)


@dataclass(frozen=True, slots=True)
class GrowthEstimate:
    """What the first ``iteration`` iterations found, and the final counts estimated from it."""

    fraction: float
    iteration: int
    processed: float
    clusters_found: int
    duplicates_found: int
    clusters_estimate: float
    duplicates_estimate: float


def estimate_from_prefix(labels: I64, m: int, fraction: float, seed: int = 0,
                         order: I64 | None = None) -> GrowthEstimate:
    """The estimate after the first ``fraction`` of ``m`` iterations, from the clusters
    ``labels``; ``order`` is the order the sub-collections are cut from (default: a random
    permutation drawn with ``seed``; see the module docstring)."""
    count = labels.size
    if order is None:
        order = np.random.default_rng(seed).permutation(count).astype(np.int64)
    iteration = cut_iteration(m, fraction)
    bound = processed_documents(count, m, iteration)
    rank = np.empty(count, dtype=np.int64)
    rank[order] = np.arange(count, dtype=np.int64)
    sizes = np.bincount(labels) if count else np.empty(0, dtype=np.int64)
    first = np.full(sizes.size, count, dtype=np.int64)
    np.minimum.at(first, labels, rank)
    found = sizes[(sizes >= 2) & (first < bound)].astype(np.int64)
    weight = 1.0 / found_probability(count, bound, found)
    return GrowthEstimate(
        fraction=fraction, iteration=iteration, processed=bound / count if count else 0.0,
        clusters_found=int(found.size), duplicates_found=int((found - 1).sum()),
        clusters_estimate=float(np.sum(weight)),
        duplicates_estimate=float(np.sum((found - 1) * weight)))
