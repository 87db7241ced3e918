"""The cluster browser: a folder of static HTML written with the report.

``index.html`` lists the largest clusters (at most ``index_limit``) with a search box over
their URLs and hosts; each of the ``pages`` largest has a page ``c<label>.html`` listing its
members (at most ``member_rows``) and showing any two of its first ``text_members`` members side
by side, the tokens covered by a shared shingle marked, with the pair's resemblance, both
containments and the rule that linked them. Texts are the canonical form the run compared, at
most ``max_tokens`` tokens shown per document (scores are those of the whole texts). The folder
needs no server and no network: a style sheet and a script sit next to the pages, and every
page carries its data as JSON. Its size is bounded by these limits, not by the run.
"""

from __future__ import annotations

import html
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from neardup.analysis.browserassets import SCRIPT, STYLE
from neardup.analysis.copies import Copies
from neardup.analysis.copysections import browser_page
from neardup.analysis.dedupdir import column_or_nulls, read_table
from neardup.analysis.largest import ClusterEntry, keep_reason
from neardup.analysis.pairview import relation_words, verification_rule
from neardup.analysis.render import write_text_atomic
from neardup.errors import OutputError
from neardup.features.shingles import distinct, shingle_hashes

__all__ = ["BrowserLimits", "check_browser_folder", "write_browser"]


@dataclass(frozen=True, slots=True)
class BrowserLimits:
    """How much the browser holds, whatever the size of the run."""

    pages: int = 200
    index_limit: int = 20_000
    member_rows: int = 500
    text_members: int = 12
    max_tokens: int = 3_000
    shown: int = 200


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _json(data: object) -> str:
    return json.dumps(data, separators=(",", ":")).replace("</", "<\\/")


def _page(title: str, body: str, data: dict[str, Any]) -> str:
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}'
            f'</title><link rel="icon" href="data:,"><link rel="stylesheet" href="style.css">'
            f'<script src="browser.js"></script></head><body>{body}'
            f'<script type="application/json" id="data">{_json(data)}</script></body></html>\n')


def _index(copies: Copies, limits: BrowserLimits) -> str:
    urls, hosts = copies.run.documents.column("url"), copies.run.documents.column("host")
    rows = []
    for rank, entry in enumerate(copies.clusters[: limits.index_limit]):
        url, host = urls[entry.kept].as_py() or "", hosts[entry.kept].as_py() or ""
        paged = rank < limits.pages
        member_urls = " ".join(str(urls[d].as_py() or "") for d in entry.members) if paged else ""
        rows.append({"cluster": entry.cluster, "size": entry.size, "hosts": entry.hosts,
                     "kind": entry.kind, "url": url,
                     "page": browser_page(entry.cluster) if paged else None,
                     "search": f"{url} {host} {entry.kind} {member_urls}".lower()})
    body = (f"<h1>Clusters of {_e(copies.run.path)}</h1>"
            f'<p class="note">The {len(rows):,} largest clusters of {copies.run.count:,} '
            f"documents, largest first; the first {min(limits.pages, len(rows)):,} have a page. "
            "Search by URL, host or kind (content, robots, error, empty).</p>"
            '<p><input type="search" id="search" placeholder="search URLs and hosts" '
            'aria-label="search"> <span id="count" class="note"></span></p>'
            '<div class="scroll"><table><thead><tr><th>cluster</th><th>documents</th>'
            "<th>hosts</th><th>kind</th><th>kept URL</th></tr></thead>"
            '<tbody id="rows"></tbody></table></div>')
    return _page("neardup clusters", body, {"page": "index", "clusters": rows,
                                            "shown": limits.shown})


def _pairs(copies: Copies, docs: Sequence[int]) -> pa.Table | None:
    """The verified pairs of the run between two of ``docs``."""
    path = copies.run.path / "pairs.parquet"
    wanted = pa.array(sorted(docs), pa.int64())
    if path.is_file():
        table = pq.read_table(path, columns=["a", "b", "method", "relation"],
                              filters=[("a", "in", wanted)])
    else:
        found = read_table(copies.run.path, "pairs")
        if found is None or found.num_rows == 0:
            return None
        table = found.filter(pc.is_in(found.column("a"), wanted))
    return table.filter(pc.is_in(table.column("b"), wanted))


def _edges(copies: Copies, docs: Sequence[int]) -> dict[str, str]:
    """Per verified pair of ``docs`` ("a-b", a < b), why it holds."""
    table = _pairs(copies, docs)
    if table is None:
        return {}
    rule = verification_rule(copies.run.summary)
    edges = {}
    for row in table.to_pylist():
        a, b = sorted((int(row["a"]), int(row["b"])))
        edges[f"{a}-{b}"] = "verified: " + relation_words(str(row["method"]),
                                                          str(row["relation"]), rule)
    return edges


def _texts(copies: Copies, docs: Sequence[int],
           limits: BrowserLimits) -> tuple[dict[str, Any], dict[str, list[float]]]:
    """Per document its shown tokens and shingle ids; per pair its scores on the whole texts."""
    width, seed = copies.settings.shingles.width, copies.settings.shingles.seed
    hashes = {d: shingle_hashes(copies.texts[d].canonical, width, seed) for d in docs}
    shown = {d: h[: limits.max_tokens] for d, h in hashes.items()}
    universe = distinct(np.concatenate([np.empty(0, np.uint64), *shown.values()]))
    sets = {d: distinct(h) for d, h in hashes.items()}
    out: dict[str, Any] = {}
    for d in docs:
        tokens = copies.texts[d].canonical.split(" ") if copies.texts[d].canonical else []
        also = np.intersect1d(universe, sets[d], assume_unique=True)
        out[str(d)] = {"tokens": tokens[: limits.max_tokens], "total": len(tokens),
                       "truncated": len(tokens) > limits.max_tokens,
                       "shingles": np.searchsorted(universe, shown[d]).tolist(),
                       "also": np.searchsorted(universe, also).tolist()}
    scores: dict[str, list[float]] = {}
    for a, b in combinations(sorted(docs), 2):
        shared = np.intersect1d(sets[a], sets[b], assume_unique=True).size
        union = sets[a].size + sets[b].size - shared
        scores[f"{a}-{b}"] = [shared / union if union else 1.0,
                              shared / sets[a].size if sets[a].size else 1.0,
                              shared / sets[b].size if sets[b].size else 1.0, shared]
    return out, scores


def _member_rows(copies: Copies, docs: Sequence[int]) -> dict[int, dict[str, Any]]:
    """The table row of each of ``docs`` (one take per column for all pages at once)."""
    table = copies.run.documents
    take = pa.array(docs, pa.int64())
    columns = {name: column_or_nulls(source, name).take(take).to_pylist() for source, name in (
        (table, "url"), (table, "host"), (table, "fetched"), (table, "length"),
        (copies.run.clusters, "reason"))}
    return {doc: {"doc": doc, "url": columns["url"][i], "host": columns["host"][i],
                  "fetched": columns["fetched"][i], "bytes": columns["length"][i],
                  "kind": copies.kind(doc), "reason": columns["reason"][i]}
            for i, doc in enumerate(docs)}


def _members(entry: ClusterEntry, rows: dict[int, dict[str, Any]],
             limits: BrowserLimits) -> list[dict[str, Any]]:
    out = []
    for doc in entry.members[: limits.member_rows]:
        row, kept = rows[doc], doc == entry.kept
        reason = f"kept: {keep_reason(row['reason'])}" if kept else str(row["reason"])
        out.append({**row, "kept": kept, "reason": reason})
    return out


def _member_table(members: Sequence[dict[str, Any]]) -> str:
    rows = "".join(
        f'<tr><td class="n">{m["doc"]}</td><td class="url">{_e(m["url"] or "")}</td>'
        f'<td>{_e(m["host"] or "")}</td><td>{_e(m["fetched"] or "")}</td>'
        f'<td class="n">{m["bytes"]:,}</td><td>{_e(m["kind"])}</td><td>{_e(m["reason"])}</td>'
        "</tr>" for m in members)
    return ('<div class="scroll members"><table><thead><tr><th>doc</th><th>URL</th><th>host</th>'
            "<th>fetched</th><th>bytes</th><th>kind</th><th>kept or why dropped</th></tr>"
            f"</thead><tbody>{rows}</tbody></table></div>")


_PAIR = ('<h2>A pair side by side</h2><p><label>left <select id="a"></select></label> '
         '<label>right <select id="b"></select></label></p>'
         '<dl class="scores"><div><dt>resemblance</dt><dd id="resemblance"></dd></div>'
         '<div><dt>left inside right</dt><dd id="contain-ab"></dd></div>'
         '<div><dt>right inside left</dt><dd id="contain-ba"></dd></div>'
         '<div><dt>shared shingles</dt><dd id="shared"></dd></div>'
         '<div><dt>link</dt><dd id="rule"></dd></div></dl>'
         '<div class="pair"><div class="side" id="side-a"><h3></h3><div class="text"></div></div>'
         '<div class="side" id="side-b"><h3></h3><div class="text"></div></div></div>')


def _cluster(copies: Copies, entry: ClusterEntry, limits: BrowserLimits,
             edges: dict[str, str], rows: dict[int, dict[str, Any]]) -> str:
    members = _members(entry, rows, limits)
    with_text = [d for d in entry.members[: limits.text_members] if d in copies.texts]
    texts, scores = _texts(copies, with_text, limits)
    width = copies.settings.shingles.width
    listed = "" if entry.size <= len(members) else f" (the first {len(members):,} listed)"
    body = (f'<p><a href="index.html">all clusters</a></p><h1>Cluster {entry.cluster}: '
            f"{entry.size:,} documents on {entry.hosts:,} host(s)</h1>"
            f'<p class="note">Kind of page: <span class="kind">{_e(entry.kind)}</span>. Texts '
            f"are shown in canonical form (the form the run compared); marked tokens lie inside "
            f"a {width}-token shingle both texts hold. Scores are over the whole texts' shingle "
            f"sets, site templates kept; the run verified near pairs by "
            f"{_e(verification_rule(copies.run.summary))}.</p>"
            + (_PAIR if with_text else '<p class="note">No member text could be read again '
               "from the inputs.</p>")
            + f"<h2>Members{listed}</h2>" + _member_table(members))
    data = {"page": "cluster", "cluster": entry.cluster, "members": members,
            "with_text": with_text, "texts": texts, "scores": scores, "width": width,
            "edges": {key: why for a, b in combinations(sorted(with_text), 2)
                      if (why := edges.get(key := f"{a}-{b}")) is not None}}
    return _page(f"cluster {entry.cluster}", body, data)


def _is_browser(folder: Path) -> bool:
    """Whether ``folder`` is empty or holds a browser written before (safe to replace)."""
    if not folder.is_dir():
        return False
    names = {path.name for path in folder.iterdir()}
    return not names or {"index.html", "browser.js", "style.css"} <= names


def check_browser_folder(folder: Path) -> None:
    """Raise :class:`OutputError` when ``folder`` exists and is not a browser to replace."""
    if folder.exists() and not _is_browser(folder):
        raise OutputError(f"{folder}: exists and is not a cluster browser; it is left alone "
                          "(move it, or write the report under another name)")


def write_browser(copies: Copies, folder: Path, limits: BrowserLimits | None = None) -> int:
    """Write the browser into ``folder`` (replaced when it holds an older one); returns the
    number of cluster pages."""
    limits = limits or BrowserLimits()
    check_browser_folder(folder)
    partial = folder.with_name(f".{folder.name}.partial")
    try:
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir(parents=True)
        write_text_atomic(partial / "style.css", STYLE)
        write_text_atomic(partial / "browser.js", SCRIPT)
        pages = copies.clusters[: limits.pages]
        edges = _edges(copies, sorted({d for entry in pages
                                       for d in entry.members[: limits.text_members]}))
        rows = _member_rows(copies, sorted({d for entry in pages
                                            for d in entry.members[: limits.member_rows]}))
        for entry in pages:
            write_text_atomic(partial / browser_page(entry.cluster),
                              _cluster(copies, entry, limits, edges, rows))
        write_text_atomic(partial / "index.html", _index(copies, limits))
        if folder.exists():
            shutil.rmtree(folder)
        partial.rename(folder)
    except OSError as error:
        raise OutputError(f"{error.filename or folder}: {error.strerror or error}") from error
    return len(pages)
