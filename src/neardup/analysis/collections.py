"""Collections replicated together across servers (S&GM98 Table 2, over collections).

S&GM98's Table 2 ranks *collections*, such as the Java manuals or a Linux FAQ, by the number of
servers that hold a copy: many pages that travel together. Here a collection is a group of at
least ``min_pages`` distinct contents (clusters) found on exactly the same set of at least two
servers (hosts): the pages one mirror copied from another. A content found on an extra server
(one page of the manual also copied alone) leaves that content out of the group, not the whole
group. Collections are ranked by distinct servers, then by pages, then by their first cluster.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from neardup._types import I64
from neardup.analysis.servers import Column, as_arrow, host_numbers, server_cluster_pairs

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


def _server_sets(labels: I64, hosts: Column) -> tuple[dict[int, frozenset[int]], list[str]]:
    """Per cluster on 2+ servers, its set of server numbers; and the server names."""
    cluster, server, names = server_cluster_pairs(labels, hosts)
    ids, starts, spans = np.unique(cluster, return_index=True, return_counts=True)
    wide = spans >= 2
    return {int(label): frozenset(server[start:start + span].tolist())
            for label, start, span in zip(ids[wide].tolist(), starts[wide].tolist(),
                                          spans[wide].tolist(), strict=True)}, names


def replicated_together(labels: I64, hosts: Column, urls: Column, top: int = 10,
                        min_pages: int = 2, examples: int = 3) -> list[ReplicatedGroup]:
    """The ``top`` collections of at least ``min_pages`` contents on the same 2+ servers."""
    groups: dict[frozenset[int], list[int]] = {}
    sets, names = _server_sets(labels, hosts)
    for label, servers in sorted(sets.items()):
        groups.setdefault(servers, []).append(label)
    sizes = np.bincount(labels) if labels.size else np.empty(0, dtype=np.int64)
    chosen = sorted(((len(servers), len(members), members[0], servers, members)
                     for servers, members in groups.items() if len(members) >= min_pages),
                    key=lambda item: (-item[0], -item[1], item[2]))[:top]
    server, _ = host_numbers(hosts)
    column = as_arrow(urls)
    out = []
    for count, pages, _, servers, members in chosen:
        first = min(servers, key=lambda number: names[number])
        wanted = np.array(members, dtype=np.int64)
        docs = np.flatnonzero(np.isin(labels, wanted) & (server == first))
        shown = [url for url in column.take(pa.array(docs)).to_pylist() if url][:examples]
        out.append(ReplicatedGroup(count, pages, int(sizes[wanted].sum()),
                                   tuple(sorted(names[n] for n in servers)), tuple(shown)))
    return out
