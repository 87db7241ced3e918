"""Site templates out of the near methods' evidence, for the documents of one run in memory.

:func:`content_prints` finds the template shingles of every host among the exact-level
survivors (:mod:`neardup.features.templates`) and gives each survivor its content set in place
of its shingle set; the min-hash signature follows the set when min-hash and verification use
the same shingles; for method ``chunks``, the chunks a host repeats leave its pages' chunk sets
by the same rule. Every near method then verifies its pairs on content.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from neardup._types import I64
from neardup.config import DedupConfig
from neardup.features.templates import (
    TemplateSet,
    content_set,
    find_templates,
    host_key,
    prune,
)
from neardup.fingerprints.minhash import MinHash
from neardup.methods.prints import DocumentPrints

__all__ = ["content_prints", "resigns"]



def resigns(config: DedupConfig) -> bool:
    """Whether min-hash signatures are recomputed from the content sets."""
    return config.method == "minhash" and config.minhash.shingles == config.verify_shingles


def content_prints(config: DedupConfig, prints: list[DocumentPrints],
                   survivors: I64) -> tuple[list[DocumentPrints], TemplateSet]:
    """The documents with each survivor's shingles (and signature) reduced to content, and the
    template set found."""
    chosen = survivors.tolist()
    found = find_templates([prints[i].host for i in chosen], [prints[i].shingles for i in chosen],
                           config.templates)
    if config.method == "chunks":
        prints = _without_template_chunks(config, prints, survivors, found)
    if not found.shingles:
        return prints, found
    minhash = MinHash(config.minhash) if resigns(config) else None
    out = list(prints)
    for i in chosen:
        p = prints[i]
        templates = found.of(host_key(p.host))
        if templates is None:
            continue
        kept = content_set(p.shingles, templates, p.shingle)
        if kept.size == p.shingles.size and np.array_equal(kept, p.shingles):
            continue
        signature = minhash.of_shingles(kept) if minhash is not None else p.signature
        out[i] = dataclasses.replace(p, shingles=kept, signature=signature)
    return out, found


def _without_template_chunks(config: DedupConfig, prints: list[DocumentPrints], survivors: I64,
                             found: TemplateSet) -> list[DocumentPrints]:
    """Method ``chunks``: each survivor's chunk fingerprints without the chunks its host repeats
    on more than the share of its pages (the same rule as for shingles)."""
    chosen = survivors.tolist()
    sets = [np.asarray(prints[i].features if prints[i].features is not None else
                       np.empty(0, dtype=np.uint32), dtype=np.uint64) for i in chosen]
    chunks = find_templates([prints[i].host for i in chosen], sets, config.templates)
    found.chunks = int(sum(values.size for values in chunks.shingles.values()))
    if not chunks.shingles:
        return prints
    out = list(prints)
    for i, values in zip(chosen, sets, strict=True):
        templates = chunks.of(host_key(prints[i].host))
        if templates is not None:
            kept = prune(values, templates).astype(np.uint32)
            out[i] = dataclasses.replace(prints[i], features=kept)
    return out
