"""Connected components of a pair list: union-find with path halving, smallest member labels."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

__all__ = ["components", "flatten", "union_into"]

I64 = npt.NDArray[np.int64]


@njit(cache=True)
def _find(parent: I64, node: int) -> int:  # pragma: no cover - compiled
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


def components(count: int, a: npt.ArrayLike, b: npt.ArrayLike) -> I64:
    """For each of ``count`` nodes, the smallest node of its component under the edges (a, b)."""
    parent = np.arange(count, dtype=np.int64)
    union_into(parent, a, b)
    flatten(parent)
    return parent


@njit(cache=True)
def _union_into(parent: I64, a: I64, b: I64) -> None:  # pragma: no cover - compiled
    for index in range(a.size):
        root_a = _find(parent, a[index])
        root_b = _find(parent, b[index])
        if root_a < root_b:
            parent[root_b] = root_a
        elif root_b < root_a:
            parent[root_a] = root_b


@njit(cache=True)
def _flatten(parent: I64) -> None:  # pragma: no cover - compiled
    for node in range(parent.size):
        parent[node] = _find(parent, node)


def union_into(parent: I64, a: npt.ArrayLike, b: npt.ArrayLike) -> None:
    """Merge the components of each edge (a, b) in ``parent`` (a union-find forest, possibly
    memory-mapped, that always points to smaller nodes); edges may arrive in any number of calls."""
    _union_into(parent, np.ascontiguousarray(np.asarray(a, dtype=np.int64)),
                np.ascontiguousarray(np.asarray(b, dtype=np.int64)))


def flatten(parent: I64) -> None:
    """Point every node of ``parent`` at its component's smallest node (as :func:`components`)."""
    _flatten(parent)
