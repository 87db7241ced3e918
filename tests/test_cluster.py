"""Union-find, keep policies and set overlap scores against hand-computed values."""

from __future__ import annotations

import numpy as np

from neardup.cluster.keep import survivors
from neardup.cluster.relations import overlap_scores
from neardup.cluster.unionfind import components


def test_components_label_by_smallest_member() -> None:
    labels = components(7, [5, 1, 3, 6], [4, 2, 1, 5])
    assert labels.tolist() == [0, 1, 1, 1, 4, 4, 4]


def test_components_of_no_edges_are_singletons() -> None:
    assert components(3, [], []).tolist() == [0, 1, 2]


def test_keep_policies() -> None:
    labels = np.array([0, 0, 0, 3])
    lengths = np.array([10, 30, 30, 5])
    fetched = ["2020-01-02", None, "2019-05-01", None]
    urls = ["http://a/long/path", "http://a/x", None, None]
    assert survivors(labels, "first", lengths, fetched, urls).tolist() == [0, 0, 0, 3]
    assert survivors(labels, "longest", lengths, fetched, urls).tolist() == [1, 1, 1, 3]
    assert survivors(labels, "earliest", lengths, fetched, urls).tolist() == [2, 2, 2, 3]
    assert survivors(labels, "shortest-url", lengths, fetched, urls).tolist() == [1, 1, 1, 3]


def test_overlap_scores_by_hand() -> None:
    sets = [np.array([1, 2, 3, 4], dtype=np.uint64), np.array([3, 4, 5], dtype=np.uint64),
            np.array([], dtype=np.uint64)]
    flat = np.concatenate(sets)
    offsets = np.array([0, 4, 7, 7])
    r, c_ab, c_ba = overlap_scores(flat, offsets, np.array([0, 2]), np.array([1, 2]))
    assert r.tolist() == [2 / 5, 1.0]
    assert c_ab.tolist() == [2 / 4, 1.0]
    assert c_ba.tolist() == [2 / 3, 1.0]
