"""Found against planted: per kind of planted group, how many of its pairs a run clustered."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from neardup.demo import KINDS, Kind, PlantedTruth
from neardup.engine.result import DedupResult

__all__ = ["KindScore", "Scorecard", "score_against_truth"]


@dataclass(frozen=True, slots=True)
class KindScore:
    kind: str
    planted: int
    found: int

    @property
    def recall(self) -> float:
        return self.found / self.planted if self.planted else 1.0


@dataclass(frozen=True, slots=True)
class Scorecard:
    kinds: list[KindScore]
    found_pairs: int
    false_pairs: int

    @property
    def precision(self) -> float:
        return 1.0 - self.false_pairs / self.found_pairs if self.found_pairs else 1.0


def _clustered_pairs(result: DedupResult) -> set[frozenset[str]]:
    members: dict[int, list[str]] = {}
    for position, label in enumerate(result.cluster.tolist()):
        members.setdefault(label, []).append(result.ids[position])
    return {frozenset(pair) for ids in members.values() for pair in combinations(ids, 2)}


def _planted(truth: PlantedTruth, kinds: list[Kind] | None = None) -> set[frozenset[str]]:
    """Planted record pairs, with record ids as the sources give them (no angle brackets)."""
    return {frozenset(i.strip("<>") for i in pair) for pair in truth.expected_record_pairs(kinds)}


def score_against_truth(truth: PlantedTruth, result: DedupResult) -> Scorecard:
    """Record-id pairs in the same cluster, against the planted groups (by kind)."""
    found = _clustered_pairs(result)
    kinds = []
    for kind in KINDS:
        planted = _planted(truth, [kind])
        kinds.append(KindScore(kind, len(planted), len(planted & found)))
    false = found - _planted(truth)
    return Scorecard(kinds, len(found), len(false))
