"""What a persistent store fingerprints and indexes: fixed when the store is created."""

from __future__ import annotations

from dataclasses import dataclass, field

from neardup.config.checks import require as _require
from neardup.config.prints import ExactConfig, SimHashConfig, SketchConfig
from neardup.config.text import TemplateConfig, TextConfig

__all__ = ["StoreConfig", "TableSpec"]

TableSpec = tuple[tuple[tuple[int, int], ...], int]
"""One permuted table: its bit segments (start, width) in placement order, and its prefix bits."""


@dataclass(frozen=True, slots=True)
class StoreConfig:
    """What a persistent store fingerprints and indexes; fixed when the store is created.

    ``tables`` are the permuted Hamming tables (see :class:`neardup.index.hamming.TablePlan`);
    empty means the smallest design for ``max_k``: k + 1 equal blocks, each leading one table.
    ``sketch`` keeps Broder's sketch of every document, for resemblance and containment scores;
    None keeps none. ``keep_shingles`` also keeps every document's full shingle set (the
    sketch's shingles), so that queries report exact resemblance and containment beside the
    estimates (about 8 bytes per distinct shingle). ``compress`` stores the tables compressed
    (Manku, section 3.2).
    """

    text: TextConfig = field(default_factory=TextConfig)
    exact: ExactConfig = field(default_factory=ExactConfig)
    simhash: SimHashConfig = field(default_factory=SimHashConfig)
    max_k: int = 3
    tables: tuple[TableSpec, ...] = ()
    compress: bool = False
    sketch: SketchConfig | None = field(default_factory=SketchConfig)
    keep_shingles: bool = False
    sketch_clusters: float | None = None
    """Cluster by Broder's sketches instead of simhash: documents whose estimated resemblance
    reaches this value join one cluster (Broder: 0.5), which lost-and-found follows; None:
    clusters of simhashes within ``max_k``."""
    templates: TemplateConfig = field(default_factory=TemplateConfig)
    """Per-host template values (sketch values, kept shingles) left out when two pages are
    compared: the batch rule, on counts the store keeps up to date (:mod:`neardup.store.hosts`)."""

    def __post_init__(self) -> None:
        _require(0 <= self.max_k <= 16, "max_k", self.max_k, "must be in 0..16")
        if self.sketch_clusters is not None:
            _require(self.sketch is not None and 0.0 < self.sketch_clusters <= 1.0,
                     "sketch_clusters", self.sketch_clusters,
                     "a resemblance in (0, 1], with a sketch config")
        _require(self.sketch is not None or not self.keep_shingles, "keep_shingles",
                 self.keep_shingles, "needs a sketch config (its shingles are the ones kept)")
        for segments, prefix_bits in self.tables:
            covered = sorted(b for start, width in segments for b in range(start, start + width))
            _require(covered == list(range(64)), "tables", segments,
                     "each table's segments must cover bits 0..63 once")
            _require(1 <= prefix_bits <= 64, "prefix_bits", prefix_bits, "must be in 1..64")

    @property
    def tags(self) -> dict[str, str]:
        tags = {"text": self.text.tag, "exact": self.exact.tag, "simhash": self.simhash.tag,
                "index": f"k{self.max_k}:t{len(self.tables) or self.max_k + 1}"
                         f"{':compressed' if self.compress else ''}"}
        if self.sketch is not None:
            tags["sketch"] = self.sketch.tag + (":shingles" if self.keep_shingles else "")
        if self.sketch_clusters is not None:
            tags["clusters"] = f"sketch:r{self.sketch_clusters}"
        if self.sketch is not None:
            tags["templates"] = self.templates.tag
        return tags

