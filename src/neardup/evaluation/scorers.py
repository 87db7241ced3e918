"""The pair scorers ``evaluate`` measures: each method's own (declared in its unit, read from
:mod:`neardup.methods.registry`), the exact shingle Jaccard and containment as references, and
any registered here.

A :class:`Scorer` turns the two documents of every labeled pair into the method's *natural value*
(a Hamming distance, an estimated or exact resemblance, a number of shared chunks, an equality
level) and states its decision rule on that value (:class:`Rule`: ``distance <= k``,
``resemblance >= t``...). The evaluation turns natural values into scores where larger means more
similar (``Rule.scores``), measures them, and reports thresholds back in the natural unit.

**Adding a scorer**: a new ``dedup`` method declares its scorer in its unit (see
:mod:`neardup.methods.scoring` for how a values function reads the pairs' documents), and
``evaluate`` offers it from the registry. A scorer that is no method's (another view of the
pairs) is added with :func:`register_scorer`. A scorer with ``needs="html"`` reads
``documents.html``; the evaluation then refuses, with a one-line error, a labeled file whose
pairs lack ``html_a``/``html_b``.
"""

from __future__ import annotations

import numpy as np

from neardup._types import F64
from neardup.cluster.relations import overlap_scores
from neardup.config import DedupConfig
from neardup.errors import ConfigError
from neardup.evaluation.documents import PairDocuments
from neardup.methods.registry import scorers as method_scorers
from neardup.methods.scoring import UNIT_CURVE, Rule, ScoredPairs, Scorer

__all__ = [
    "REFERENCE_SCORERS",
    "Rule",
    "Scorer",
    "baseline_scorer",
    "register_scorer",
    "scorer",
    "scorer_names",
]


def _overlaps(documents: ScoredPairs, config: DedupConfig) -> tuple[F64, F64, F64]:
    shingles = config.verify_shingles
    flat, offsets = documents.shingle_sets(shingles.width, shingles.seed)
    view = documents.text
    return overlap_scores(flat, offsets, view.first, view.second)


def _jaccard(documents: ScoredPairs, config: DedupConfig) -> F64:
    return np.asarray(_overlaps(documents, config)[0], dtype=np.float64)


def _containment(documents: ScoredPairs, config: DedupConfig) -> F64:
    return np.asarray(_overlaps(documents, config)[1], dtype=np.float64)


_DEFAULTS = DedupConfig()
REFERENCE_SCORERS: tuple[Scorer, ...] = (
    Scorer("jaccard", _jaccard,
           Rule("resemblance", "t", curve=UNIT_CURVE, default=_DEFAULTS.threshold),
           summary="exact Jaccard resemblance of the w-shingle sets (the reference)"),
    Scorer("containment", _containment, Rule("containment", "t", curve=UNIT_CURVE),
           summary="share of the first document's w-shingles found in the second"),
)
"""The scorers that are no method's: exact resemblance and containment of the shingle sets."""
_EXTRA: dict[str, Scorer] = {}


def _registry() -> dict[str, Scorer]:
    """Every scorer by name: the methods' (in the registry's order), the references, then those
    registered here."""
    return {s.name: s for s in (*method_scorers(), *REFERENCE_SCORERS, *_EXTRA.values())}


def register_scorer(new: Scorer, *, replace: bool = False) -> None:
    """Make ``new`` available by its name (``replace=True`` to override one)."""
    if new.name in _registry() and not replace:
        raise ConfigError(f"scorer {new.name!r} is already registered")
    _EXTRA[new.name] = new


def scorer_names() -> tuple[str, ...]:
    return tuple(_registry())


def baseline_scorer(field: str) -> Scorer:
    """A numeric field of the labeled file (another system's score) as a scorer: ``>= t``."""

    def values(documents: ScoredPairs, config: DedupConfig) -> F64:
        if not isinstance(documents, PairDocuments):
            raise ConfigError(f"baseline field {field!r}: only labeled pairs have fields")
        missing = [p.pair_id for p in documents.pairs if field not in p.extra]
        if missing:
            raise ConfigError(f"baseline field {field!r} absent or not a number in pair "
                              f"{missing[0]} ({len(missing)} pairs)")
        return np.array([p.extra[field] for p in documents.pairs], dtype=np.float64)

    return Scorer(f"field:{field}", values, Rule(field, "t"), summary="score in the labeled file")


def scorer(name: str) -> Scorer:
    """The scorer called ``name``; ``field:NAME`` is the labeled file's numeric field NAME."""
    if name.startswith("field:") and len(name) > len("field:"):
        return baseline_scorer(name.removeprefix("field:"))
    known = _registry()
    if name not in known:
        raise ConfigError(f"method={name!r}: no scorer; known: {', '.join(known)}")
    return known[name]
