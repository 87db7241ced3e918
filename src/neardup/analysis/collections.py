"""Collections replicated together across servers (S&GM98 Table 2, over collections).

S&GM98's Table 2 ranks *collections*, such as the Java manuals or a Linux FAQ, by the number of
servers that hold a copy: many pages that travel together. Here a collection is a group of at
least ``min_pages`` distinct contents (clusters) found on exactly the same set of at least two
servers (hosts): the pages one mirror copied from another. A content found on an extra server
(one page of the manual also copied alone) leaves that content out of the group, not the whole
group. Collections are ranked by distinct servers, then by pages, then by their first cluster.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from neardup._types import I64

__all__ = ["ReplicatedGroup", "replicated_together"]



@dataclass(frozen=True, slots=True)
class ReplicatedGroup:
    """Contents (clusters) held by the same servers: how many servers, pages and documents, the
    servers, and a few example URLs (from the first server)."""

    servers: int
    pages: int
    documents: int
    hosts: tuple[str, ...]
    examples: tuple[str, ...]


def _server_sets(labels: I64, hosts: Sequence[str | None]) -> dict[int, frozenset[str]]:
    found: dict[int, set[str]] = {}
    for label, host in zip(labels.tolist(), hosts, strict=True):
        if host:
            found.setdefault(label, set()).add(host)
    return {label: frozenset(servers) for label, servers in found.items() if len(servers) >= 2}


def replicated_together(labels: I64, hosts: Sequence[str | None], urls: Sequence[str | None],
                        top: int = 10, min_pages: int = 2,
                        examples: int = 3) -> list[ReplicatedGroup]:
    """The ``top`` collections of at least ``min_pages`` contents on the same 2+ servers."""
    groups: dict[frozenset[str], list[int]] = {}
    for label, servers in sorted(_server_sets(labels, hosts).items()):
        groups.setdefault(servers, []).append(label)
    sizes = np.bincount(labels) if labels.size else np.empty(0, dtype=np.int64)
    chosen = sorted(((len(servers), len(members), members[0], servers, members)
                     for servers, members in groups.items() if len(members) >= min_pages),
                    key=lambda item: (-item[0], -item[1], item[2]))
    out = []
    for count, pages, _, servers, members in chosen[:top]:
        first = min(servers)
        wanted = set(members)
        shown = [url for label, host, url in zip(labels.tolist(), hosts, urls, strict=True)
                 if label in wanted and host == first and url][:examples]
        out.append(ReplicatedGroup(count, pages, int(sum(int(sizes[m]) for m in members)),
                                   tuple(sorted(servers)), tuple(shown)))
    return out
