"""Which member of a cluster survives: a deterministic keep policy.

- ``first``: the first document read;
- ``longest``: the longest text (ties: the first read);
- ``earliest``: the earliest fetch date (documents without a date come last; ties: the first read);
- ``shortest-url``: the shortest URL (documents without a URL come last; ties: the first read).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from neardup.config import KeepPolicy

__all__ = ["survivors"]

I64 = npt.NDArray[np.int64]


def _rank_keys(
    policy: KeepPolicy, lengths: I64, fetched: Sequence[str | None], urls: Sequence[str | None]
) -> list[tuple[object, ...]]:
    count = len(lengths)
    if policy == "longest":
        return [(-int(lengths[i]), i) for i in range(count)]
    if policy == "earliest":
        return [(fetched[i] is None, fetched[i] or "", i) for i in range(count)]
    if policy == "shortest-url":
        return [(urls[i] is None, len(urls[i] or ""), urls[i] or "", i) for i in range(count)]
    return [(i,) for i in range(count)]


def survivors(
    labels: I64,
    policy: KeepPolicy,
    lengths: I64,
    fetched: Sequence[str | None],
    urls: Sequence[str | None],
) -> I64:
    """For each document, the index of the survivor of its cluster (``labels`` from components)."""
    keys = _rank_keys(policy, lengths, fetched, urls)
    best: dict[int, int] = {}
    for index, label in enumerate(labels.tolist()):
        current = best.get(label)
        if current is None or keys[index] < keys[current]:
            best[label] = index
    return np.array([best[label] for label in labels.tolist()], dtype=np.int64)
