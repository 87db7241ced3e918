"""``HammingIndex``: a growing Hamming index made of immutable segments and an in-memory delta.

New fingerprints go to the delta (checked by brute force, compiled, while small); ``freeze``
turns the delta into a :class:`PermutedTables` segment, and ``merge`` combines segments (the store
persists and memory-maps them). Queries read every segment and the delta; their results equal a
brute-force scan of everything added.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from neardup._types import I64, U64
from neardup.errors import ConfigError
from neardup.index.hamming import HammingDesign, TablePlan
from neardup.index.tables import Matches, PermutedTables, scan_each

__all__ = ["HammingIndex"]



class HammingIndex:
    """Find stored 64-bit fingerprints within Hamming distance k of a query.

    ``plans`` must find every pair within ``max_k`` (a :class:`HammingDesign` with
    ``max_k >= k``, or a planner's tables).
    """

    def __init__(self, design: HammingDesign | list[TablePlan], max_k: int,
                 segments: list[PermutedTables] | None = None) -> None:
        if isinstance(design, HammingDesign):
            if max_k > design.max_k:
                raise ConfigError(f"k={max_k}: design {design} finds pairs only up to "
                                  f"{design.max_k}")
            design = design.plans()
        self.plans = design
        self.max_k = max_k
        self.segments: list[PermutedTables] = list(segments or [])
        self._delta_values: list[U64] = []
        self._delta_ids: list[I64] = []

    def __len__(self) -> int:
        return sum(len(s) for s in self.segments) + sum(v.size for v in self._delta_values)

    @property
    def delta_size(self) -> int:
        return sum(v.size for v in self._delta_values)

    def add(self, fingerprints: npt.ArrayLike, ids: npt.ArrayLike) -> None:
        """Add fingerprints with their ids (any int64 labels; a label may repeat)."""
        values = np.atleast_1d(np.asarray(fingerprints, dtype=np.uint64))
        labels = np.atleast_1d(np.asarray(ids, dtype=np.int64))
        if values.shape != labels.shape:
            raise ConfigError(f"{values.size} fingerprints but {labels.size} ids")
        self._delta_values.append(values.copy())
        self._delta_ids.append(labels.copy())

    def _delta(self) -> tuple[U64, I64]:
        if len(self._delta_values) > 1:
            self._delta_values = [np.concatenate(self._delta_values)]
            self._delta_ids = [np.concatenate(self._delta_ids)]
        if not self._delta_values:
            return np.empty(0, dtype=np.uint64), np.empty(0, dtype=np.int64)
        return self._delta_values[0], self._delta_ids[0]

    def _check_k(self, k: int | None) -> int:
        k = self.max_k if k is None else k
        if not 0 <= k <= self.max_k:
            raise ConfigError(f"k={k}: this index finds distances 0..{self.max_k}")
        return k

    def query(self, fingerprint: int, k: int | None = None) -> Matches:
        """Every stored (id, distance) within ``k`` bits of one fingerprint, nearest first."""
        return self.query_each([fingerprint], k)

    def query_each(self, fingerprints: npt.ArrayLike, k: int | None = None) -> Matches:
        """:meth:`query` of each fingerprint, answered together (one compiled call per segment
        and one scan of the delta for all): (query position, id, distance), sorted by query,
        then nearest first."""
        k = self._check_k(k)
        queries = np.atleast_1d(np.asarray(fingerprints, dtype=np.uint64))
        if not queries.size:
            return Matches.empty()
        parts = [segment.query_each(queries, k) for segment in self.segments]
        values, ids = self._delta()
        if values.size:
            parts.append(scan_each(values, ids, queries, k))
        found = [part for part in parts if len(part)]
        if len(found) <= 1:
            return found[0] if found else Matches.empty()   # each part is sorted
        return Matches.concat(found).sorted()

    def query_batch(self, fingerprints: npt.ArrayLike, k: int | None = None) -> Matches:
        """Every (query position, stored id, distance) within ``k`` bits (Manku's batch mode)."""
        k = self._check_k(k)
        queries = np.atleast_1d(np.asarray(fingerprints, dtype=np.uint64))
        parts = [segment.query_batch(queries, k) for segment in self.segments]
        values, ids = self._delta()
        if values.size and queries.size:
            delta = PermutedTables.build(self.plans, values, ids)
            parts.append(delta.query_batch(queries, k))
        return Matches.concat(parts).sorted()

    def freeze(self) -> PermutedTables | None:
        """Turn the delta into a new segment (returned, and added to the index); None if empty."""
        values, ids = self._delta()
        if not values.size:
            return None
        segment = PermutedTables.build(self.plans, values, ids)
        self.segments.append(segment)
        self._delta_values, self._delta_ids = [], []
        return segment

    def compress(self) -> None:
        """Compress the tables of every segment (queries then decode blocks as they probe)."""
        self.segments = [segment.compress() for segment in self.segments]

    def merged(self, segments: list[PermutedTables]) -> PermutedTables:
        """One segment holding the fingerprints of ``segments`` (for compaction)."""
        values = np.concatenate([s.fingerprints for s in segments])
        ids = np.concatenate([s.ids for s in segments])
        return PermutedTables.build(self.plans, values, ids)
