"""The exact-level survivors of each partition with their method features, one partition at a
time (the near methods' input, never the whole run's in one list)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.engine.catalog import Catalog, Part
from neardup.engine.partition import read_features

__all__ = ["PartSurvivors", "survivor_features"]



@dataclass(frozen=True, slots=True)
class PartSurvivors:
    """One partition's survivors: doc numbers, rows among its kept rows, features (same order),
    and the features of every kept row."""

    part: Part
    docs: I64
    local: I64
    features: list[object]
    kept: list[object]


def survivor_features(catalog: Catalog,
                      survivors: npt.NDArray[np.bool_]) -> Iterator[PartSurvivors]:
    for part in catalog.parts:
        local = np.flatnonzero(survivors[part.start:part.start + part.count]).astype(np.int64)
        stored = read_features(part.folder)
        kept = [stored[row] for row in part.kept_rows().tolist()]
        yield PartSurvivors(part, local + part.start, local, [kept[i] for i in local.tolist()],
                            kept)
