"""A column-oriented list of document pairs with how they were found and how much they overlap."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import F64, I8, I64
from neardup.cluster.relations import RELATIONS
from neardup.config import method_names

__all__ = ["VIEWS", "Pairs", "method_code", "pair_methods"]

VIEWS = ("full", "article")
"""The views of a web page a pair may be found on (``DedupConfig.views``)."""


def pair_methods() -> tuple[str, ...]:
    """The method of a pair by its code: ``exact``, ``revisit``, then every near method in the
    registry's order (:func:`neardup.config.method_names`)."""
    return ("exact", "revisit", *(name for name in method_names() if name != "exact"))


def method_code(name: str) -> int:
    """The code of method ``name`` in :attr:`Pairs.method`."""
    return pair_methods().index(name)




@dataclass(frozen=True, slots=True)
class Pairs:
    """Pairs (a, b) of document indices, a < b unless b is a revisit of a; scores per pair.

    ``hamming`` is the simhash distance (-1 when not computed), ``estimate`` a sketch's estimate
    of resemblance (of the containment of the contained document, for ``contained`` pairs; NaN
    when not computed), ``shared`` the number of chunks the two documents share (for the sketch
    methods: sketch values, or super-shingles; -1 when not computed); ``method`` and ``relation``
    index :func:`pair_methods` and RELATIONS.
    """

    a: I64
    b: I64
    method: I8
    relation: I8
    hamming: I64
    estimate: F64
    resemblance: F64
    containment_ab: F64
    containment_ba: F64
    shared: I64
    view: I8
    other_resemblance: F64

    def __len__(self) -> int:
        return int(self.a.size)

    @staticmethod
    def exact(a: I64, b: I64, method: str, relation: str) -> Pairs:
        """Pairs of equal documents: resemblance and both containments are 1 by definition."""
        count = a.size
        ones = np.ones(count)
        return Pairs(
            a=a.astype(np.int64), b=b.astype(np.int64),
            method=np.full(count, method_code(method), dtype=np.int8),
            relation=np.full(count, RELATIONS.index(relation), dtype=np.int8),
            hamming=np.full(count, -1, dtype=np.int64), estimate=np.full(count, np.nan),
            resemblance=ones, containment_ab=ones.copy(), containment_ba=ones.copy(),
            shared=np.full(count, -1, dtype=np.int64), **Pairs.one_view(count),
        )

    @staticmethod
    def one_view(count: int) -> dict[str, Any]:
        """The ``view`` and ``other_resemblance`` of pairs found on a run's one view."""
        return {"view": np.full(count, -1, dtype=np.int8),
                "other_resemblance": np.full(count, np.nan)}

    @staticmethod
    def concat(parts: list[Pairs]) -> Pairs:
        fields = Pairs.__slots__
        if not parts:
            return Pairs.exact(np.empty(0, np.int64), np.empty(0, np.int64), "exact", "identical")
        return Pairs(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in fields})

    def select(self, mask: npt.NDArray[np.bool_]) -> Pairs:
        return Pairs(**{name: getattr(self, name)[mask] for name in Pairs.__slots__})

    def method_names(self) -> list[str]:
        names = pair_methods()
        return [names[code] for code in self.method.tolist()]

    def relation_names(self) -> list[str]:
        return [RELATIONS[code] for code in self.relation.tolist()]

    def columns(self) -> dict[str, Any]:
        """The pairs as pyarrow columns, ``method`` and ``relation`` by name (the ``pairs``
        table's schema); a score not computed is null."""
        import pyarrow as pa

        from neardup.sources.columns import numeric_array as column
        from neardup.sources.columns import string_array

        return {
            "a": column(self.a, pa.int64()), "b": column(self.b, pa.int64()),
            "method": string_array(self.method_names()),
            "relation": string_array(self.relation_names()),
            "hamming": column(self.hamming, pa.int64(), mask=self.hamming < 0),
            "estimate": column(self.estimate, pa.float64(), mask=np.isnan(self.estimate)),
            "resemblance": column(self.resemblance, pa.float64()),
            "containment_ab": column(self.containment_ab, pa.float64()),
            "containment_ba": column(self.containment_ba, pa.float64()),
            "shared": column(self.shared, pa.int64(), mask=self.shared < 0),
            **self._view_columns(),
        }

    def _view_columns(self) -> dict[str, Any]:
        """``view`` by name and the resemblance on each view (null where not computed)."""
        import pyarrow as pa

        from neardup.sources.columns import numeric_array as column
        from neardup.sources.columns import string_array

        article = self.view == VIEWS.index("article")
        full = np.where(article, self.other_resemblance, self.resemblance)
        other = np.where(article, self.resemblance, self.other_resemblance)
        one = self.view < 0
        return {
            "view": string_array([VIEWS[v] if v >= 0 else None for v in self.view.tolist()]),
            "full_resemblance": column(full, pa.float64(), mask=one | np.isnan(full)),
            "article_resemblance": column(other, pa.float64(), mask=one | np.isnan(other)),
        }
