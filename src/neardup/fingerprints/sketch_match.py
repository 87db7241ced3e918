"""Why a document matches a stored one: the estimates and the shared shingles, as text.

For on-the-fly queries (Broder et al., section 6.1): given a query document's canonical text and
sketch and a stored document's sketch, :func:`explain_match` returns the estimated resemblance,
both containments (MOD sketches only) and the shingles that explain the match: the query's
w-shingles whose permuted fingerprint is in both sketches (under the pair's common modulus; for
MIN_s, among the s smallest of the union, the ones the estimate counts), in the order they first
occur in the query.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup._types import U64
from neardup.config import SketchConfig
from neardup.fingerprints.sketch import (
    Sketcher,
    common_modulus,
    estimate_containment,
    estimate_resemblance,
    sample_under,
)

__all__ = ["SketchMatch", "explain_match", "shared_fingerprints", "shingle_texts"]



@dataclass(frozen=True, slots=True)
class SketchMatch:
    """Estimates for a (query, stored) pair and the shared shingles that explain them."""

    resemblance: float
    containment_query: float | None
    """c(query, stored): how much of the query lies in the stored document (None for MIN_s)."""
    containment_stored: float | None
    """c(stored, query): how much of the stored document lies in the query (None for MIN_s)."""
    shared: tuple[str, ...]


def shared_fingerprints(a: U64, b: U64, config: SketchConfig,
                        moduli: tuple[int, int] | None = None) -> U64:
    """The sketch values the resemblance estimate counts as shared."""
    first, second = np.asarray(a, np.uint64), np.asarray(b, np.uint64)
    if config.kind == "min":
        first, second = first[: config.size], second[: config.size]
        union = np.union1d(first, second)[: config.size]
        shared = np.intersect1d(first, second, assume_unique=True)
        return shared[shared <= union[-1]] if union.size else shared
    modulus = common_modulus(config, moduli)
    return np.intersect1d(sample_under(first, modulus), sample_under(second, modulus),
                          assume_unique=True)


def shingle_texts(canonical: bytes | str, fingerprints: U64, config: SketchConfig) -> list[str]:
    """The distinct w-shingles of ``canonical`` whose permuted fingerprint is in
    ``fingerprints``, as text, in order of first occurrence."""
    text = canonical.decode("utf-8", "surrogatepass") if isinstance(canonical, bytes) else canonical
    tokens = text.split(" ") if text else []
    sketcher = Sketcher(config)
    permuted = sketcher.permute(sketcher.shingles_of(text))
    width = config.shingles.width
    found: dict[str, None] = {}
    for start in np.flatnonzero(np.isin(permuted, fingerprints)).tolist():
        found.setdefault(" ".join(tokens[start : start + width]), None)
    return list(found)


def explain_match(canonical: bytes | str, query_sketch: U64, stored_sketch: U64,
                  config: SketchConfig, moduli: tuple[int, int] | None = None) -> SketchMatch:
    """Estimates of the query against a stored document, and the shared shingles as text.

    ``moduli`` = (query's, stored's) for sketches with per-document moduli."""
    resemblance = estimate_resemblance(query_sketch, stored_sketch, config, moduli)
    inside: float | None = None
    outside: float | None = None
    if config.kind == "mod":
        inside = estimate_containment(query_sketch, stored_sketch, config, moduli)
        reverse = None if moduli is None else (moduli[1], moduli[0])
        outside = estimate_containment(stored_sketch, query_sketch, config, reverse)
    shared = shared_fingerprints(query_sketch, stored_sketch, config, moduli)
    return SketchMatch(resemblance, inside, outside,
                       tuple(shingle_texts(canonical, shared, config)))
