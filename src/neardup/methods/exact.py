"""The exact levels as a unit: collapse identical, then lexically equivalent, then
shingle-equivalent documents (Broder et al.).

At each level the first document of a group (in input order) is its representative and goes on to
the next level; every other member is paired with it. Documents with no tokens take part only at the
identical level: all empty pages are lexically equal, which says nothing about their content.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup._types import F64, I64, U64
from neardup.config import DedupConfig, MethodSpec
from neardup.fingerprints.exact import exact_prints
from neardup.methods.pairs import Pairs
from neardup.methods.scoring import Rule, ScoredPairs, Scorer
from neardup.methods.unit import ExactMethod

__all__ = ["LEVELS", "SPEC", "UNIT", "ExactStage", "collapse_exact", "exact_levels"]

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


def exact_levels(documents: ScoredPairs, config: DedupConfig) -> F64:
    """3 identical bytes, 2 lexically equivalent, 1 shingle-equivalent, 0 none (empty texts:
    identical level only, as in ``dedup``)."""
    view, shingles = documents.text, config.verify_shingles
    flat, offsets = documents.shingle_sets(shingles.width, shingles.seed)
    prints = [exact_prints(raw, tokens, flat[offsets[i]:offsets[i + 1]], config.exact)
              for i, (raw, tokens) in enumerate(zip(view.raw, documents.canonical, strict=True))]
    table = np.array([[p.identical, p.lexical, p.shingle] for p in prints],
                     dtype=np.uint64).reshape(-1, 3)
    empty = np.array([not tokens for tokens in documents.canonical], dtype=np.bool_)
    equal = table[view.first] == table[view.second]
    equal[:, 1:] &= ~(empty[view.first] | empty[view.second])[:, None]
    return np.where(equal[:, 0], 3.0, np.where(equal[:, 1], 2.0, np.where(equal[:, 2], 1.0, 0.0)))


SPEC = MethodSpec("exact")
"""The method as configs see it (declared to the config layer by the registry)."""

UNIT = ExactMethod(
    spec=SPEC,
    verification="equal hashes of the bytes, the tokens or the shingle set (no near stage)",
    scorer=Scorer("exact", exact_levels,
                  Rule("equality level", "level", grid=(1.0, 2.0, 3.0), integral=True,
                       default=1.0),
                  summary="Broder's levels: 3 identical, 2 lexically equivalent, "
                          "1 shingle-equivalent"))
