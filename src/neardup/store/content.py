"""Two pages compared on content: each page's evidence without its host's template values.

When a store compares two pages (a query against a stored page, or a new page against a stored
one or one of its batch), each side's sketch, and its shingle set when the store keeps them,
loses the values its host holds on more than the template share of its pages
(:class:`neardup.store.hosts.HostCounts`), as batch ``dedup`` prunes each document's set by its
own host's templates: two articles inside one site's frame no longer look alike (a query
without a host, a text or a file, is read on the stored page's host's terms). The estimates
and exact scores a query reports are those of the content, and a simhash match whose pages lost
template values is kept only when its content still resembles: resemblance (exact on the kept
shingles, else Broder's estimate) at least :data:`neardup.config.DEFAULT_MIN_RESEMBLANCE`, the
batch rule for simhash pairs. Pairs of identical or lexically equal pages always stand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from neardup.config import DEFAULT_MIN_RESEMBLANCE, SketchConfig
from neardup.fingerprints.sketch import estimate_resemblance
from neardup.store.hosts import SHINGLE, SKETCH, HostCounts
from neardup.store.printer import StoreFeatures

__all__ = ["Content", "Side", "compare", "content_features", "resembles"]


@dataclass(frozen=True, slots=True)
class Side:
    """One page of a pair: its host, its features, and a value of its own (its identical-bytes
    hash) that stands for its content when every shingle it has is template."""

    host: str | None
    features: StoreFeatures
    sentinel: int


@dataclass(frozen=True, slots=True)
class Content:
    """A pair's content features and how many template values (sketch values, shingles) the
    two sides lost."""

    query: StoreFeatures
    stored: StoreFeatures
    template_values: int
    template_shingles: int

    @property
    def pruned(self) -> bool:
        return bool(self.template_values or self.template_shingles)


def content_features(view: HostCounts, side: Side) -> tuple[StoreFeatures, int, int]:
    """A page's features without its host's template values, and how many sketch values and
    shingles were left out."""
    features = side.features
    sketch, values = view.content(side.host, SKETCH, features.sketch)
    shingles, dropped = view.content(side.host, SHINGLE, features.shingles)
    assert sketch is not None
    if shingles is not None and shingles.size == 0 and dropped:
        shingles = np.array([side.sentinel], dtype=np.uint64)  # all template: like nothing
    if not values and not dropped:
        return features, 0, 0
    return StoreFeatures(sketch, features.modulus, shingles), values, dropped


def compare(view: HostCounts, query: Side, stored: Side) -> Content:
    """The content of a pair (each side pruned by its own host's templates)."""
    first, values_a, shingles_a = content_features(view, query)
    second, values_b, shingles_b = content_features(view, stored)
    return Content(first, second, values_a + values_b, shingles_a + shingles_b)


def resembles(content: Content, config: SketchConfig) -> bool:
    """Whether a pair that lost template values still resembles on content: exact resemblance
    of the kept shingle sets when both are kept, else the sketches' estimate, at least
    DEFAULT_MIN_RESEMBLANCE (a pair that lost nothing is not judged here)."""
    if not content.pruned:
        return True
    a, b = content.query, content.stored
    if a.shingles is not None and b.shingles is not None:
        shared = np.intersect1d(a.shingles, b.shingles, assume_unique=True).size
        union = a.shingles.size + b.shingles.size - shared
        return union > 0 and shared / union >= DEFAULT_MIN_RESEMBLANCE
    moduli = (a.modulus, b.modulus) if config.adaptive else None
    return estimate_resemblance(a.sketch, b.sketch, config, moduli) >= DEFAULT_MIN_RESEMBLANCE
