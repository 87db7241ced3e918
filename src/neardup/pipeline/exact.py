"""The exact stage: collapse identical, then lexically equivalent, then shingle-equivalent docs.

At each level the first document of a group (in input order) is its representative and goes on to
the next level; every other member is paired with it. Documents with no tokens take part only at the
identical level: all empty pages are lexically equal, which says nothing about their content.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup.pipeline.pairs import Pairs

__all__ = ["ExactStage", "collapse_exact"]

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
LEVELS = (("identical", "identical"), ("lexical", "lexical"), ("shingle", "shingle-equivalent"))


@dataclass(frozen=True, slots=True)
class ExactStage:
    pairs: Pairs
    survivors: I64
    groups: dict[str, int]
    collapsed: dict[str, int]


def _group(hashes: U64, members: I64) -> tuple[I64, I64, I64, int]:
    """(representatives, a, b, groups with more than one member) of ``members`` by hash."""
    _, first, inverse, counts = np.unique(
        hashes[members], return_index=True, return_inverse=True, return_counts=True
    )
    representative = members[first[inverse]]
    duplicate = representative != members
    return members[~duplicate], representative[duplicate], members[duplicate], int(
        np.count_nonzero(counts > 1)
    )


def collapse_exact(levels: dict[str, U64], tokens: I64, candidates: I64) -> ExactStage:
    """Run the three levels over ``candidates`` (indices of non-revisit documents, in order)."""
    parts: list[Pairs] = []
    groups: dict[str, int] = {}
    collapsed: dict[str, int] = {}
    members = candidates
    for key, relation in LEVELS:
        if key != "identical":
            members = members[tokens[members] > 0]
        members, a, b, groups[relation] = _group(levels[key], members)
        collapsed[relation] = int(a.size)
        parts.append(Pairs.exact(a, b, "exact", relation))
    return ExactStage(Pairs.concat(parts), members, groups, collapsed)
