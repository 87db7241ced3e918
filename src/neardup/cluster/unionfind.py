"""Connected components of a pair list: union-find with path halving, smallest member labels."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
from numba import njit

__all__ = ["components"]

I64 = npt.NDArray[np.int64]


@njit(cache=True)
def _find(parent: I64, node: int) -> int:  # pragma: no cover - compiled
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


@njit(cache=True)
def _components(count: int, a: I64, b: I64) -> I64:  # pragma: no cover - compiled
    parent = np.arange(count)
    for index in range(a.size):
        root_a = _find(parent, a[index])
        root_b = _find(parent, b[index])
        if root_a < root_b:
            parent[root_b] = root_a
        elif root_b < root_a:
            parent[root_a] = root_b
    for node in range(count):
        parent[node] = _find(parent, node)
    return parent


def components(count: int, a: npt.ArrayLike, b: npt.ArrayLike) -> I64:
    """For each of ``count`` nodes, the smallest node of its component under the edges (a, b)."""
    first = np.ascontiguousarray(np.asarray(a, dtype=np.int64))
    second = np.ascontiguousarray(np.asarray(b, dtype=np.int64))
    return _components(count, first, second)
