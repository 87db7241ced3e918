"""Connected components of a pair list: union-find with path halving, smallest member labels.

The one union-find of the package: over node numbers 0..n-1 (:func:`components`, or
:func:`union_into` and :func:`flatten` on a forest kept by the caller, possibly memory-mapped),
or over arbitrary integer labels (:func:`label_roots`, numbered densely first).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.features.shingles import distinct
from neardup.text.compiled import njit

__all__ = ["components", "flatten", "label_roots", "union_into"]


@njit(cache=True, interpretable=True)
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


@njit(cache=True, interpretable=True)
def _union_into(parent: I64, a: I64, b: I64) -> None:  # pragma: no cover - compiled
    for index in range(a.size):
        root_a = _find(parent, a[index])
        root_b = _find(parent, b[index])
        if root_a < root_b:
            parent[root_b] = root_a
        elif root_b < root_a:
            parent[root_a] = root_b


@njit(cache=True, interpretable=True)
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


def label_roots(a: npt.ArrayLike, b: npt.ArrayLike, labels: npt.ArrayLike) -> I64:
    """For each of ``labels``, the smallest label of its component under the edges (a, b)
    between integer labels (a label on no edge is its own root)."""
    a64, b64 = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    wanted = np.asarray(labels, dtype=np.int64)
    nodes = distinct(np.concatenate([a64, b64, wanted]))
    roots = components(nodes.size, np.searchsorted(nodes, a64), np.searchsorted(nodes, b64))
    return nodes[roots[np.searchsorted(nodes, wanted)]]
