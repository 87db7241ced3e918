"""The registry of pair scorers: one per near-duplicate method, plus exact shingle Jaccard.

A :class:`Scorer` turns the two documents of every labeled pair into the method's *natural value*
(a Hamming distance, an estimated or exact resemblance, a number of shared chunks, an equality
level) and states its decision rule on that value (:class:`Rule`: ``distance <= k``,
``resemblance >= t``...). The evaluation turns natural values into scores where larger means more
similar (``Rule.scores``), measures them, and reports thresholds back in the natural unit.

**Adding a scorer** (for a new ``dedup`` method):

1. write ``def my_values(documents: PairDocuments, config: DedupConfig) -> F64`` returning one
   value per pair, in pair order. Use the library's own fingerprint code, computed once per
   *distinct* document: ``documents.text`` (or ``documents.html``) is a :class:`View` with the
   distinct documents and, per pair, the index of its ``first`` and ``second`` document;
   ``documents.canonical`` holds the token bytes of each text document and
   ``documents.shingle_sets(width, seed)`` their shingle sets (CSR). Compute the fingerprints of
   the documents into an array, then compare ``prints[view.first]`` with ``prints[view.second]``.
   Read the method's parameters from ``config`` (the :class:`~neardup.config.DedupConfig`);
2. add ``Scorer("my-method", my_values, Rule(...), needs="text")`` to ``BUILTIN_SCORERS`` at the
   bottom of this module (or call :func:`register_scorer` from your own code). A method that needs
   the raw HTML (SMFA's block segments) says ``needs="html"`` and reads ``documents.html``; the
   evaluation then refuses, with a one-line error, a labeled file whose pairs lack
   ``html_a``/``html_b``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from neardup.cluster.relations import overlap_scores
from neardup.config import DedupConfig, method_spec
from neardup.errors import ConfigError
from neardup.evaluation.chunk_scorers import (
    keyword_cosines,
    paragraph_percentages,
    shared_chunks,
    smfa_equal,
)
from neardup.evaluation.documents import PairDocuments
from neardup.evaluation.metrics import ThresholdGrid
from neardup.fingerprints.exact import exact_prints
from neardup.fingerprints.minhash import MinHash
from neardup.fingerprints.simhash import SimHash
from neardup.fingerprints.sketch import Sketcher, estimate_resemblance
from neardup.fingerprints.supershingle import supershingles

__all__ = [
    "BUILTIN_SCORERS",
    "Rule",
    "Scorer",
    "baseline_scorer",
    "register_scorer",
    "scorer",
    "scorer_names",
]

F64 = npt.NDArray[np.float64]
U64 = npt.NDArray[np.uint64]
Values = Callable[[PairDocuments, DedupConfig], F64]
UNIT_CURVE = tuple(round(i / 100, 2) for i in range(101))
SIMHASH_K = tuple(float(k) for k in range(65))


@dataclass(frozen=True, slots=True)
class Rule:
    """A decision rule on a natural value: ``value >= parameter`` (or ``<=`` when ``at_most``).

    ``grid``: the parameter values calibration chooses among (None: any cut between the observed
    values, or any observed value when ``integral``). ``curve``: the parameter values of the
    precision/recall curve (None: the grid, else every observed value). ``default``: the value
    ``dedup`` uses by default, reported for comparison (None when ``dedup`` has no such rule).
    """

    value: str
    parameter: str
    at_most: bool = False
    grid: tuple[float, ...] | None = None
    curve: tuple[float, ...] | None = None
    integral: bool = False
    default: float | None = None

    @property
    def text(self) -> str:
        return f"{self.value} {'<=' if self.at_most else '>='} {self.parameter}"

    def scores(self, values: F64) -> F64:
        """Natural values to scores where larger means more similar."""
        return -values if self.at_most else values.astype(np.float64, copy=True)

    def threshold(self, parameter: float) -> float:
        """The score threshold equivalent to the rule at ``parameter``."""
        return -parameter if self.at_most else parameter

    def parameter_of(self, threshold: float) -> float:
        """The rule's parameter for a score threshold (the inverse of :meth:`threshold`)."""
        value = -threshold if self.at_most else threshold
        return value + 0.0  # no negative zero

    def threshold_grid(self) -> ThresholdGrid:
        fixed = None if self.grid is None else tuple(self.threshold(p) for p in self.grid)
        return ThresholdGrid(fixed=fixed, integral=self.integral)

    def curve_parameters(self, values: F64) -> F64:
        chosen = self.curve if self.curve is not None else self.grid
        return np.unique(values) if chosen is None else np.asarray(chosen, dtype=np.float64)


@dataclass(frozen=True, slots=True)
class Scorer:
    """A method's pair scorer: natural values per pair and the rule that decides on them."""

    name: str
    values: Values
    rule: Rule
    needs: Literal["text", "html"] = "text"
    summary: str = ""


def _exact_levels(documents: PairDocuments, config: DedupConfig) -> F64:
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


def _simhash_distance(documents: PairDocuments, config: DedupConfig) -> F64:
    simhash = SimHash(config.simhash)
    view = documents.text
    prints = np.array([simhash.of_canonical(tokens) for tokens in documents.canonical],
                      dtype=np.uint64)
    distances = np.bitwise_count(prints[view.first] ^ prints[view.second])
    return np.asarray(distances, dtype=np.float64)


def _minhash_estimate(documents: PairDocuments, config: DedupConfig) -> F64:
    minhash = MinHash(config.minhash)
    view = documents.text
    width = config.minhash.num_perm
    signatures = np.stack([minhash.of_canonical(tokens) for tokens in documents.canonical]) \
        if documents.canonical else np.empty((0, width), dtype=np.uint64)
    equal = signatures[view.first] == signatures[view.second]
    return np.asarray(equal.mean(axis=1), dtype=np.float64)


def _overlaps(documents: PairDocuments, config: DedupConfig) -> tuple[F64, F64, F64]:
    shingles = config.verify_shingles
    flat, offsets = documents.shingle_sets(shingles.width, shingles.seed)
    view = documents.text
    return overlap_scores(flat, offsets, view.first, view.second)


def _jaccard(documents: PairDocuments, config: DedupConfig) -> F64:
    return np.asarray(_overlaps(documents, config)[0], dtype=np.float64)


def _containment(documents: PairDocuments, config: DedupConfig) -> F64:
    return np.asarray(_overlaps(documents, config)[1], dtype=np.float64)


def _sketches(documents: PairDocuments, config: DedupConfig) -> list[tuple[U64, int]]:
    sketcher = Sketcher(config.sketch)
    return [sketcher.with_modulus(sketcher.shingles_of(tokens)) for tokens in documents.canonical]


def _sketch_estimate(documents: PairDocuments, config: DedupConfig) -> F64:
    """Broder's resemblance estimate from the two sketches (MOD pairs under the larger modulus)."""
    sketches, view = _sketches(documents, config), documents.text
    adaptive = config.sketch.adaptive > 0
    return np.array([
        estimate_resemblance(sketches[i][0], sketches[j][0], config.sketch,
                             (sketches[i][1], sketches[j][1]) if adaptive else None)
        for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
        dtype=np.float64)


def _shared_supershingles(documents: PairDocuments, config: DedupConfig) -> F64:
    size, seed = config.supershingle_size, config.sketch.seed
    supers = [supershingles(sketch, size, seed) for sketch, _ in _sketches(documents, config)]
    view = documents.text
    return np.array([
        np.intersect1d(supers[i], supers[j], assume_unique=True).size
        for i, j in zip(view.first.tolist(), view.second.tolist(), strict=True)],
        dtype=np.float64)


_DEFAULTS = DedupConfig()
BUILTIN_SCORERS: tuple[Scorer, ...] = (
    Scorer("exact", _exact_levels,
           Rule("equality level", "level", grid=(1.0, 2.0, 3.0), integral=True, default=1.0),
           summary="Broder's levels: 3 identical, 2 lexically equivalent, 1 shingle-equivalent"),
    Scorer("simhash", _simhash_distance,
           Rule("hamming distance", "k", at_most=True, grid=SIMHASH_K,
                curve=SIMHASH_K[:11], integral=True, default=float(_DEFAULTS.max_hamming)),
           summary="Hamming distance of the 64-bit simhashes (Manku et al.)"),
    Scorer("minhash", _minhash_estimate,
           Rule("estimated resemblance", "t", curve=UNIT_CURVE, default=_DEFAULTS.threshold),
           summary="share of equal min-hash slots"),
    Scorer("jaccard", _jaccard,
           Rule("resemblance", "t", curve=UNIT_CURVE, default=_DEFAULTS.threshold),
           summary="exact Jaccard resemblance of the w-shingle sets (the reference)"),
    Scorer("containment", _containment, Rule("containment", "t", curve=UNIT_CURVE),
           summary="share of the first document's w-shingles found in the second"),
    Scorer("sketch", _sketch_estimate,
           Rule("estimated resemblance", "t", curve=UNIT_CURVE,
                default=method_spec("sketch").default_threshold),
           summary="Broder's sketch estimate (DedupConfig.sketch: MOD_25 of 10-word shingles)"),
    Scorer("supershingle", _shared_supershingles,
           Rule("shared super-shingles", "n", integral=True, default=1.0),
           summary="super-shingles (DedupConfig.supershingle_size sketch values) in common"),
    Scorer("chunks", shared_chunks,
           Rule("shared chunks", "T", integral=True,
                default=float(_DEFAULTS.overlap.threshold(_DEFAULTS.chunks))),
           summary="distinct 4-line chunk fingerprints in common (S&GM98; DedupConfig.chunks)"),
    Scorer("smfa", smfa_equal,
           Rule("equal SMFA fingerprints", "equal", grid=(1.0,), integral=True, default=1.0),
           needs="html", summary="1 when the MD5 of the 3 longest HTML segments are equal"),
    Scorer("shingle-paragraphs", paragraph_percentages,
           Rule("identical shingle paragraphs (%)", "level", grid=(50.0, 70.0, 90.0, 100.0),
                curve=tuple(float(p) for p in range(0, 101, 5)),
                default=float(_DEFAULTS.paragraphs.level)),
           summary="percentage of identical shingle paragraphs of both documents (Pereira)"),
    Scorer("keyword", keyword_cosines,
           Rule("keyword-vector cosine", "t", curve=UNIT_CURVE,
                default=method_spec("keyword").default_threshold),
           summary="cosine of the 20 most frequent non-stop-word terms (SMFA's TW baseline)"),
)
_REGISTRY: dict[str, Scorer] = {s.name: s for s in BUILTIN_SCORERS}


def register_scorer(new: Scorer, *, replace: bool = False) -> None:
    """Make ``new`` available by its name (``replace=True`` to override one)."""
    if new.name in _REGISTRY and not replace:
        raise ConfigError(f"scorer {new.name!r} is already registered")
    _REGISTRY[new.name] = new


def scorer_names() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def baseline_scorer(field: str) -> Scorer:
    """A numeric field of the labeled file (another system's score) as a scorer: ``>= t``."""

    def values(documents: PairDocuments, config: DedupConfig) -> F64:
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
    if name not in _REGISTRY:
        raise ConfigError(f"method={name!r}: no scorer; known: {', '.join(_REGISTRY)}")
    return _REGISTRY[name]
