"""Batch deduplication: documents -> fingerprints -> exact levels -> near pairs -> clusters.

``find_duplicates`` runs the stages in order and returns a :class:`DedupResult`: per document its
metadata and cluster, every pair with its method, relation and scores, and statistics per stage.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from neardup._types import I64
from neardup.cluster.keep import survivors as choose_survivors
from neardup.cluster.relations import RELATIONS
from neardup.cluster.unionfind import components
from neardup.config import DedupConfig
from neardup.document import Document
from neardup.methods.exact import collapse_exact
from neardup.methods.fingerprinter import DocumentPrints, Fingerprinter
from neardup.methods.pairs import Pairs
from neardup.methods.registry import near_method
from neardup.methods.workers import ordered_map
from neardup.overlap.phases import PhaseMeter
from neardup.pipeline.inputs import documents_from
from neardup.pipeline.templates import content_prints

__all__ = ["DedupResult", "find_duplicates"]



@dataclass(slots=True)
class DedupResult:
    """Documents (in input order), verified pairs, and per document its cluster and survivor."""

    documents: list[DocumentPrints]
    pairs: Pairs
    cluster: I64
    kept_doc: I64
    reasons: list[str]
    stats: dict[str, object] = field(default_factory=dict)
    tables: dict[str, list[dict[str, object]]] = field(default_factory=dict)
    """Extra output tables of the near method, by name (see :class:`NearStage`)."""

    @property
    def duplicates(self) -> int:
        return int(np.count_nonzero(self.kept_doc != np.arange(self.kept_doc.size)))

    @property
    def kept(self) -> npt.NDArray[np.bool_]:
        """Per document: is it the survivor of its cluster (a unique document is)?"""
        return np.asarray(self.kept_doc == np.arange(self.kept_doc.size))

    def table(self) -> Any:
        """One row per document (a pyarrow Table): doc, id, cluster (its smallest doc), kept,
        kept_doc, reason (``unique``, ``kept:<policy>``, ``duplicate:<relation>``)."""
        import pyarrow as pa

        return pa.table({
            "doc": pa.array(np.arange(self.kept_doc.size), pa.int64()),
            "id": pa.array([p.id for p in self.documents], pa.string()),
            "cluster": pa.array(self.cluster, pa.int64()),
            "kept": pa.array(self.kept, pa.bool_()),
            "kept_doc": pa.array(self.kept_doc, pa.int64()),
            "reason": pa.array(self.reasons, pa.string())})

    def pairs_table(self) -> Any:
        """Every verified pair (a pyarrow Table), method and relation by name."""
        import pyarrow as pa

        return pa.table(self.pairs.columns())


def _link_revisits(prints: list[DocumentPrints]) -> tuple[list[DocumentPrints], I64, int]:
    """Fill each revisit from the document it repeats; drop revisits whose original is absent.

    Returns the documents kept, for each the index of the document it revisits (or -1), and the
    number of revisits dropped.
    """
    index: dict[str, int] = {}
    for i, p in enumerate(prints):
        if p.revisit_of is None:
            index.setdefault(p.id, i)
    original = [-1 if p.revisit_of is None else index.get(p.revisit_of, -2) for p in prints]
    position = np.cumsum([o != -2 for o in original]) - 1
    kept: list[DocumentPrints] = []
    revisit_of: list[int] = []
    for p, o in zip(prints, original, strict=True):
        if o == -2:
            continue
        if o >= 0:
            source = prints[o]
            p = dataclasses.replace(p, identical=source.identical, lexical=source.lexical,
                                    shingle=source.shingle, simhash=source.simhash,
                                    length=source.length, text_chars=source.text_chars,
                                    tokens=source.tokens)
        kept.append(p)
        revisit_of.append(int(position[o]) if o >= 0 else -1)
    return kept, np.array(revisit_of, dtype=np.int64), original.count(-2)


def _revisit_pairs(revisit_of: I64) -> Pairs:
    revisits = np.flatnonzero(revisit_of >= 0).astype(np.int64)
    return Pairs.exact(revisit_of[revisits], revisits, "revisit", "identical")


def _reasons(count: int, pairs: Pairs, cluster: I64, kept_doc: I64, policy: str) -> list[str]:
    strongest = np.full(count, len(RELATIONS), dtype=np.int64)
    np.minimum.at(strongest, pairs.a, pairs.relation.astype(np.int64))
    np.minimum.at(strongest, pairs.b, pairs.relation.astype(np.int64))
    sizes = np.bincount(cluster, minlength=count)
    reasons = []
    for doc in range(count):
        if sizes[cluster[doc]] == 1:
            reasons.append("unique")
        elif kept_doc[doc] == doc:
            reasons.append(f"kept:{policy}")
        else:
            reasons.append(f"duplicate:{RELATIONS[strongest[doc]]}")
    return reasons


def _collect(docs: Iterable[Document], config: DedupConfig, workers: int,
             progress: Callable[[int], None] | None) -> list[DocumentPrints]:
    prints: list[DocumentPrints] = []
    factory = functools.partial(Fingerprinter, config)
    for item in ordered_map(factory, docs, workers):
        prints.append(item)
        if progress is not None:
            progress(len(prints))
    return prints


def find_duplicates(
    docs: Iterable[Document | str | Mapping[str, Any]],
    config: DedupConfig = DedupConfig(),
    *,
    workers: int = 1,
    progress: Callable[[int], None] | None = None,
) -> DedupResult:
    """Find exact and near-duplicate documents and cluster them (see the module docstring).

    ``docs`` are Documents, or plain strings and dicts with a ``text`` field (see
    :func:`neardup.pipeline.inputs.documents_from`; :func:`neardup.dedup` takes tables too)."""
    timer = PhaseMeter()
    documents = documents_from(docs)
    prints, revisit_of, missing = _link_revisits(_collect(documents, config, workers, progress))
    timer.lap("read_extract_fingerprint")
    count = len(prints)
    levels = {name: np.array([getattr(p, name) for p in prints], dtype=np.uint64)
              for name in ("identical", "lexical", "shingle")}
    tokens = np.array([p.tokens for p in prints], dtype=np.int64)
    exact = collapse_exact(levels, tokens, np.flatnonzero(revisit_of < 0).astype(np.int64))
    timer.lap("exact")
    parts = [_revisit_pairs(revisit_of), exact.pairs]
    stats: dict[str, object] = {"documents": count, "revisits_linked": int(np.sum(revisit_of >= 0)),
                                "revisits_without_original": missing,
                                "empty_text": int(np.count_nonzero(tokens == 0)),
                                "exact_groups": exact.groups, "exact_collapsed": exact.collapsed}
    tables = _near_stage(config, prints, exact.survivors, parts, stats, timer)
    pairs = Pairs.concat(parts)
    cluster = components(count, pairs.a, pairs.b)
    kept_doc = choose_survivors(cluster, config.keep, np.array([p.text_chars for p in prints]),
                                [p.fetched for p in prints], [p.url for p in prints])
    reasons = _reasons(count, pairs, cluster, kept_doc, config.keep)
    timer.lap("cluster")
    stats.update(_cluster_stats(cluster, kept_doc))
    stats["seconds"] = timer.seconds | _worker_seconds(prints)
    stats["config"] = config.tags
    return DedupResult(prints, pairs, cluster, kept_doc, reasons, stats, tables)


def _near_stage(config: DedupConfig, prints: list[DocumentPrints], survivors: I64,
                parts: list[Pairs], stats: dict[str, object],
                timer: PhaseMeter) -> dict[str, list[dict[str, object]]]:
    """Run the near method, if any: its pairs join ``parts``, its counts ``stats["near"]``;
    returns its extra output tables."""
    method = near_method(config.method)
    if method is None:
        return {}
    content, templates = content_prints(config, prints, survivors)
    stats["templates"] = templates.summary(config.templates)
    near = method.find(config, content, survivors)
    parts.append(near.pairs)
    stats["near"] = {"candidates": near.candidates, "verified": len(near.pairs),
                     "rejected": near.rejected, "verification": config.verification,
                     **near.parameters}
    timer.lap("near_candidates_and_verification")
    return near.tables


def _cluster_stats(cluster: I64, kept_doc: I64) -> dict[str, object]:
    sizes = np.bincount(cluster, minlength=cluster.size)
    sizes = sizes[sizes > 0]
    duplicates = int(np.count_nonzero(kept_doc != np.arange(kept_doc.size)))
    return {"clusters": int(np.count_nonzero(sizes > 1)),
            "documents_in_clusters": int(sizes[sizes > 1].sum()),
            "largest_cluster": int(sizes.max()) if sizes.size else 0,
            "duplicates": duplicates, "kept": int(cluster.size - duplicates)}


def _worker_seconds(prints: list[DocumentPrints]) -> dict[str, float]:
    return {"extract_cpu": round(sum(p.extract_seconds for p in prints), 4),
            "fingerprint_cpu": round(sum(p.fingerprint_seconds for p in prints), 4)}

