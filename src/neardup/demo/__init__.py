"""The ``neardup demo`` crawl: a synthetic WARC with planted duplicates and its ground truth.

- :mod:`neardup.demo.synthetic`: :func:`~neardup.demo.synthetic.generate_crawl` writes the crawl
  and returns a :class:`PlantedTruth`;
- :mod:`neardup.demo.warcwriter`: the small WARC/1.1 writer it uses;
- this module: the ground truth, what was planted and where (:class:`PlantedTruth`).

Kinds of planted group: ``mirror`` (a host copied under another host name), ``exact``
(byte-identical payloads under different URLs), ``near`` (small edits: ad block, date, counter,
words), ``lexical`` (same words, other markup, case, punctuation, whitespace), ``contained`` (a page
quoted whole inside a longer one) and ``revisit`` (a URL captured twice, the second time as a WARC
revisit record).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any, Literal, get_args

__all__ = ["KINDS", "Kind", "PlantedGroup", "PlantedTruth"]

Kind = Literal["mirror", "exact", "near", "lexical", "revisit", "contained"]
KINDS: tuple[Kind, ...] = get_args(Kind)


@dataclass(frozen=True, slots=True)
class PlantedGroup:
    """One planted set of duplicates. ``urls[0]`` is the original; ``record_ids`` parallels
    ``urls`` (WARC-Record-IDs); ``detail`` says how the copies were made."""

    kind: Kind
    detail: str
    urls: tuple[str, ...]
    record_ids: tuple[str, ...]

    @property
    def original(self) -> str:
        return self.urls[0]

    def pairs(self) -> set[frozenset[str]]:
        """URL pairs of the group (none for a revisit, whose captures share one URL)."""
        return {frozenset(p) for p in itertools.combinations(self.urls, 2) if p[0] != p[1]}

    def record_pairs(self) -> set[frozenset[str]]:
        return {frozenset(p) for p in itertools.combinations(self.record_ids, 2)}


@dataclass(frozen=True, slots=True)
class PlantedTruth:
    """What :func:`~neardup.demo.synthetic.generate_crawl` planted.

    ``groups`` are the planted duplicates; ``unrelated`` the response URLs in no group;
    ``mirrors`` the (original host, mirror host) pairs; ``responses`` and ``revisits`` count
    WARC records; ``links`` counts the ``<a href>`` elements in all responses.
    """

    seed: int
    warc: str
    hosts: tuple[str, ...]
    mirrors: tuple[tuple[str, str], ...]
    groups: tuple[PlantedGroup, ...]
    unrelated: tuple[str, ...]
    responses: int
    revisits: int
    links: int

    def expected_pairs(self, kinds: Iterable[Kind] | None = None) -> set[frozenset[str]]:
        """Duplicate URL pairs of the groups of ``kinds`` (default: every kind)."""
        wanted = set(KINDS if kinds is None else kinds)
        return {p for g in self.groups if g.kind in wanted for p in g.pairs()}

    def expected_record_pairs(self, kinds: Iterable[Kind] | None = None) -> set[frozenset[str]]:
        """Duplicate pairs of WARC-Record-IDs; unlike URL pairs these include revisits."""
        wanted = set(KINDS if kinds is None else kinds)
        return {p for g in self.groups if g.kind in wanted for p in g.record_pairs()}

    def pairs_by_kind(self) -> dict[Kind, set[frozenset[str]]]:
        return {kind: self.expected_pairs([kind]) for kind in KINDS}

    def counts(self) -> dict[str, int]:
        """Groups per kind, unrelated pages, records, hosts and links."""
        out: dict[str, int] = {k: sum(g.kind == k for g in self.groups) for k in KINDS}
        out |= {"unrelated": len(self.unrelated), "responses": self.responses}
        return out | {"revisits": self.revisits, "hosts": len(self.hosts), "links": self.links}

    def to_json(self) -> str:
        data = asdict(self)
        for group, entry in zip(self.groups, data["groups"], strict=True):
            entry["original"] = group.original
        return json.dumps({"counts": self.counts(), **data}, indent=2)

    @classmethod
    def from_json(cls, text: str) -> PlantedTruth:
        data: dict[str, Any] = {k: _tuples(v) for k, v in json.loads(text).items()}
        fields = PlantedGroup.__dataclass_fields__
        data["groups"] = tuple(
            PlantedGroup(**{k: v for k, v in g.items() if k in fields}) for g in data["groups"]
        )
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def _tuples(value: Any) -> Any:
    """JSON lists back to tuples, at any depth."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, dict):
        return {k: _tuples(v) for k, v in value.items()}
    return value
