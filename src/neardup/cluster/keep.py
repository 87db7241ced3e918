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

from neardup._types import I64
from neardup.config import KeepPolicy

__all__ = ["rank_keys", "survivors"]



def rank_keys(
    policy: KeepPolicy, lengths: npt.ArrayLike, fetched: Sequence[str | None],
    urls: Sequence[str | None], docs: npt.ArrayLike,
) -> list[tuple[object, ...]]:
    """Per document, the key the policy ranks it by (smallest survives); its last element is
    the document's number ``docs[i]``, the final tie-break."""
    numbers = np.asarray(docs).tolist()
    sizes = np.asarray(lengths).tolist()
    if policy == "longest":
        return [(-sizes[i], doc) for i, doc in enumerate(numbers)]
    if policy == "earliest":
        return [(fetched[i] is None, fetched[i] or "", doc) for i, doc in enumerate(numbers)]
    if policy == "shortest-url":
        return [(urls[i] is None, len(urls[i] or ""), urls[i] or "", doc)
                for i, doc in enumerate(numbers)]
    return [(doc,) for doc in numbers]


def survivors(
    labels: I64,
    policy: KeepPolicy,
    lengths: I64,
    fetched: Sequence[str | None],
    urls: Sequence[str | None],
) -> I64:
    """For each document, the index of the survivor of its cluster (``labels`` from components)."""
    keys = rank_keys(policy, lengths, fetched, urls, np.arange(len(lengths)))
    best: dict[int, int] = {}
    for index, label in enumerate(labels.tolist()):
        current = best.get(label)
        if current is None or keys[index] < keys[current]:
            best[label] = index
    return np.array([best[label] for label in labels.tolist()], dtype=np.int64)
