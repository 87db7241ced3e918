"""Site templates: the shingles a host repeats on most of its pages are frame, not content.

Bar-Yossef and Rajagopalan (2002) detect templates by frequency: a part of a page that recurs on
many pages of one site is template. Here the parts are the verification shingles: on a host with
at least ``min_pages`` pages, a shingle found on more than ``share`` of them is template
(:class:`neardup.config.TemplateConfig`). The near methods then judge pairs on what is left (the
content): two articles inside one site's frame no longer look alike, and one article inside two
sites' frames does.

Counting is split so that the batch engine can run it bucket by bucket: :func:`host_rows` turns
per-document shingle sets into (host key, shingle) rows, :func:`templates_of_rows` finds the
templates among the rows of any subset of hosts (all rows of a host together), and
:func:`prune` removes a host's templates from a document's set. The in-memory path and the engine
call the same functions on the same documents (the exact-level survivors), so they agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import xxhash

from neardup._types import I64, U64
from neardup.config import TemplateConfig

__all__ = ["TemplateSet", "content_block", "content_set", "find_templates", "host_key",
           "host_rows", "page_counts", "prune", "templates_of_rows"]

NO_HOST = 0
"""The key of documents without a host: they are never pruned."""
REPORTED_HOSTS = 50


def host_key(host: str | None) -> int:
    """A 64-bit key of a host name (case-insensitive); 0 for no host."""
    if not host:
        return NO_HOST
    return xxhash.xxh3_64_intdigest(host.lower().encode("utf-8")) or 1


@dataclass(slots=True)
class TemplateSet:
    """The template shingles of each host (by host key), and the names for the summary."""

    shingles: dict[int, U64] = field(default_factory=dict)
    pages: dict[int, int] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    chunks: int | None = None
    """Template chunks removed (method ``chunks``), None for the other methods."""

    def of(self, key: int) -> U64 | None:
        return self.shingles.get(key)

    def summary(self, config: TemplateConfig) -> dict[str, object]:
        """What ``summary.json`` reports under ``templates``."""
        counts = {key: int(values.size) for key, values in self.shingles.items()}
        eligible = sum(1 for key, pages in self.pages.items()
                       if key != NO_HOST and pages >= config.min_pages)
        ranked = sorted(counts, key=lambda key: (-counts[key], self.names.get(key, "")))
        extra = {} if self.chunks is None else {"template_chunks": self.chunks}
        return {"enabled": config.enabled, "share": config.share, "min_pages": config.min_pages,
                **extra,
                "hosts": sum(1 for key in self.pages if key != NO_HOST),
                "hosts_with_enough_pages": eligible,
                "hosts_with_templates": len(counts),
                "template_shingles": int(sum(counts.values())),
                "per_host": {self.names.get(key, str(key)): {
                    "pages": self.pages.get(key, 0), "template_shingles": counts[key]}
                    for key in ranked[:REPORTED_HOSTS]}}


def host_rows(keys: U64, flat: U64, offsets: I64) -> tuple[U64, U64]:
    """(host key, shingle) of every shingle of every document, documents without a host left
    out; ``keys`` per document, sets as (flat, CSR offsets)."""
    sizes = np.diff(offsets)
    per_row = np.repeat(keys, sizes)
    hosted = per_row != NO_HOST
    return per_row[hosted], flat[hosted]


def templates_of_rows(row_hosts: U64, row_shingles: U64, pages: dict[int, int],
                      config: TemplateConfig) -> dict[int, U64]:
    """The template shingles of the hosts in these rows (every row of a host must be here; a
    document's set is distinct, so a row count is a page count)."""
    order = np.lexsort((row_shingles, row_hosts))
    hosts, shingles = row_hosts[order], row_shingles[order]
    if hosts.size == 0:
        return {}
    starts = np.flatnonzero(np.concatenate(
        [[True], (hosts[1:] != hosts[:-1]) | (shingles[1:] != shingles[:-1])]))
    counts = np.diff(np.append(starts, hosts.size))
    run_hosts, run_shingles = hosts[starts], shingles[starts]
    bounds = np.flatnonzero(np.concatenate([[True], run_hosts[1:] != run_hosts[:-1], [True]]))
    out: dict[int, U64] = {}
    for first, end in zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True):
        key = int(run_hosts[first])
        total = pages.get(key, 0)
        if total < config.min_pages:
            continue
        frequent = run_shingles[first:end][counts[first:end] > config.share * total]
        if frequent.size:
            out[key] = frequent  # sorted: the rows were sorted by (host, shingle)
    return out


def page_counts(keys: U64) -> dict[int, int]:
    hosts, counts = np.unique(keys, return_counts=True)
    return {int(h): int(c) for h, c in zip(hosts.tolist(), counts.tolist(), strict=True)}


def find_templates(hosts: Sequence[str | None], sets: Sequence[U64],
                   config: TemplateConfig) -> TemplateSet:
    """The template shingles of every host, from the documents' hosts and shingle sets (in
    memory; the engine runs the same counting bucket by bucket)."""
    keys = np.array([host_key(h) for h in hosts], dtype=np.uint64)
    result = TemplateSet(pages=page_counts(keys),
                         names={host_key(h): h.lower() for h in hosts if h})
    if not config.enabled or not sets:
        return result
    offsets = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([s.size for s in sets], out=offsets[1:])
    rows = host_rows(keys, np.concatenate(sets).astype(np.uint64, copy=False), offsets)
    result.shingles = templates_of_rows(*rows, result.pages, config)
    return result


def prune(shingles: U64, templates: U64 | None) -> U64:
    """A sorted shingle set without the host's template shingles (sorted too)."""
    if templates is None or templates.size == 0 or shingles.size == 0:
        return shingles
    return shingles[~np.isin(shingles, templates, assume_unique=True)]


def content_set(shingles: U64, templates: U64 | None, sentinel: int) -> U64:
    """The document's content shingles: its set without its host's templates. A document that
    is all template keeps one shingle of its own (``sentinel``, its exact-level shingle hash),
    so that it resembles nothing: two empty sets would otherwise count as equal."""
    kept = prune(shingles, templates)
    if kept.size == 0 and shingles.size:
        return np.array([sentinel], dtype=np.uint64)
    return kept


def content_block(flat: U64, offsets: I64, keys: U64, sentinels: U64,
                  templates: TemplateSet) -> tuple[U64, I64]:
    """:func:`content_set` of each document of a CSR block (host keys and sentinels per
    document); returns the pruned block."""
    if not templates.shingles:
        return flat, offsets
    sets = [content_set(flat[offsets[i]:offsets[i + 1]], templates.of(int(keys[i])),
                        int(sentinels[i])) for i in range(keys.size)]
    out = np.zeros(len(sets) + 1, dtype=np.int64)
    np.cumsum([s.size for s in sets], out=out[1:])
    return (np.concatenate(sets) if sets else np.empty(0, dtype=np.uint64)), out
