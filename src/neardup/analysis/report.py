"""Building the report model from ``dedup`` runs: one section per measurement of the papers.

Sections 1-3 (largest clusters, duplicate rates, non-content pages, see :mod:`.copysections`)
read the first run. Sections 4 (replicas per document), 5 (cluster sizes) and 7 (crawl savings)
compare every run given (one bar group, series or row per method); the others use the first run
that has what they need: hosts (6, servers), a ``links`` table (8, link graph, see
:mod:`.sections`), a ``growth`` table (9, growth), a ``simhash`` column (10, fingerprint
distribution). A log-log figure of fewer than :data:`MIN_LOGLOG_POINTS` points becomes a table.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from neardup.analysis.collections import replicated_together
from neardup.analysis.copies import Copies, gather_copies
from neardup.analysis.copysections import largest_section, noncontent_section, rates_section
from neardup.analysis.dedupdir import (
    DedupRun,
    column_array,
    column_labels,
    run_labels,
)
from neardup.analysis.model import (
    SECTION_TITLES,
    Figure,
    Report,
    Section,
    Series,
    Stat,
    Table,
    Unit,
    Value,
    repeat_unit,
)
from neardup.analysis.replication import (
    REPLICA_BINS,
    cluster_stats,
    replica_bin_counts,
    size_distribution,
)
from neardup.analysis.savings import CrawlSavings, crawl_savings, first_of_groups
from neardup.analysis.sections import distribution_section, growth_section, links_section
from neardup.analysis.servers import (
    ReplicatedCollection,
    ServerPair,
    collections_by_servers,
    host_numbers,
    mirrored_servers,
)
from neardup.analysis.sgm_table import chunks_section
from neardup.features.shingles import distinct

__all__ = ["MIN_LOGLOG_POINTS", "build_report", "small_plots_as_tables"]

#: Two servers sharing one page (a robots.txt, an error page) are no mirrors: a pair is listed
#: from this many shared contents.
MIRROR_MIN_SHARED = 2

def _exact_groups(runs: Sequence[DedupRun]) -> list[tuple[str, DedupRun]]:
    """One identical-bytes grouping per distinct input (runs over the same input share it)."""
    distinct: list[tuple[str, DedupRun]] = []
    seen: list[tuple[object, int]] = []
    for run in runs:
        key = (run.summary.get("inputs"), run.count)
        if key not in seen:
            seen.append(key)
            distinct.append(("identical bytes", run))
    if len(distinct) > 1:
        distinct = [(f"{name} ({run.path.name})", run) for name, run in distinct]
    return distinct


def replicas_section(runs: Sequence[DedupRun], labels: Sequence[str]) -> Section:
    groups = [(name, run.identical) for name, run in _exact_groups(runs)]
    groups += [(label, run.cluster) for label, run in zip(labels, runs, strict=True)]
    bins = tuple(name for name, _ in REPLICA_BINS)
    shares = [replica_bin_counts(g) / max(g.size, 1) for _, g in groups]
    series = tuple(Series(name, bins, tuple(float(v) for v in share))
                   for (name, _), share in zip(groups, shares, strict=True))
    rows: tuple[tuple[Value, ...], ...] = tuple(
        (name, *(float(v) for v in share)) for (name, _), share in zip(groups, shares, strict=True))
    stats = tuple(Stat(f"with_copies:{name}", f"{name}: documents with at least one copy",
                       float(1 - share[0]), "share")
                  for (name, _), share in zip(groups, shares, strict=True))
    return Section(
        "replicas", SECTION_TITLES["replicas"],
        source="; ".join(run.describe(label, "documents (identical), clusters")
                         for label, run in zip(labels, runs, strict=True)),
        caption="Look at the first group of bars: the documents with no copy at all, one bar "
                "per method. The groups to its right are replication; a method that finds more "
                "near-copies lowers the first group and raises the others. A document's "
                "replicas count itself. S&GM98 (24M pages, 1998): 64% without an exact copy, "
                "52% without a 2-line-chunk copy.",
        stats=stats,
        tables=(Table("Share of documents by number of replicas", ("grouping", *bins),
                      ("text", *repeat_unit("share", len(bins))), rows),),
        figures=(Figure("bars", "Replicas per document", "replicas (the document included)",
                        "share of documents", series, percent=True),))


_CLUSTER_COLUMNS: tuple[tuple[str, str, Unit], ...] = (
    ("clusters", "clusters", "count"),
    ("clustered_documents", "documents in clusters", "count"),
    ("duplicates", "duplicates", "count"),
    ("largest", "largest cluster", "count"),
    ("identical_only_clusters", "clusters of identical documents only", "count"),
    ("identical_only_documents", "documents in them", "count"),
    ("mixed_clusters", "mixed clusters", "count"),
    ("mixed_documents", "documents in them", "count"),
    ("pair_share_of_clusters", "clusters of two, share of clusters", "share"),
    ("pair_share_of_duplicates", "clusters of two, share of duplicates", "share"),
    ("small_share_of_duplicates", "clusters of <= 10, share of duplicates", "share"),
)


def clusters_section(runs: Sequence[DedupRun], labels: Sequence[str]) -> Section:
    series, rows, stats = [], [], []
    for index, (label, run) in enumerate(zip(labels, runs, strict=True)):
        numbers = cluster_stats(run.cluster, run.identical)
        values = [getattr(numbers, key) for key, _, _ in _CLUSTER_COLUMNS]
        rows.append((label, *values))
        if index == 0:
            stats = [Stat(key, name, value, unit)
                     for (key, name, unit), value in zip(_CLUSTER_COLUMNS, values, strict=True)]
        sizes, counts = size_distribution(run.cluster)
        series.append(Series(label, tuple(float(s) for s in sizes),
                             tuple(float(c) for c in counts)))
    return Section(
        "clusters", SECTION_TITLES["clusters"],
        source="; ".join(run.describe(label, "clusters, documents (identical)")
                         for label, run in zip(labels, runs, strict=True)),
        caption="Many clusters of two and a few very large ones, a straight falling line on "
                "log-log axes (a table instead when there are few sizes), is the Zipf-like "
                "shape Pereira et al. found. The numbers are "
                f"those of {labels[0]}. Pereira: clusters of two are 63% of the clusters but "
                "hold 19% of the duplicates; Broder: 2.1M of 3.6M clusters hold only identical "
                "documents.",
        stats=tuple(stats),
        tables=(Table("Clusters per run", ("run", *(name for _, name, _ in _CLUSTER_COLUMNS)),
                      ("text", *(unit for _, _, unit in _CLUSTER_COLUMNS)), tuple(rows)),),
        figures=(Figure("loglog", "Documents per cluster", "documents in the cluster",
                        "number of clusters", tuple(series)),))


def _short(url: str, width: int = 48) -> str:
    url = url.split("://", 1)[-1]
    return url if len(url) <= width else url[: width - 3] + "..."


def servers_section(run: DedupRun, label: str, top: int) -> Section:
    hosts = run.documents.column("host")
    if not pc.any(pc.not_equal(pc.fill_null(pc.cast(hosts, pa.string()), ""), "")).as_py():
        return Section("servers", SECTION_TITLES["servers"],
                       omitted=f"{run.path}: no document has a host (URLs are needed)")
    urls = run.documents.column("url")
    collections = collections_by_servers(run.cluster, hosts, urls, top=top)
    together = replicated_together(run.cluster, hosts, urls, top=run.cluster.size)
    mirrors = mirrored_servers(run.cluster, hosts, top=top, min_shared=MIRROR_MIN_SHARED)
    if not collections:
        return Section("servers", SECTION_TITLES["servers"],
                       omitted=f"{run.path}: no cluster spans two servers")
    return Section(
        "servers", SECTION_TITLES["servers"],
        run.describe(label, "documents (host, url), clusters"),
        caption="First figure: the clusters found on the most distinct servers. The table of "
                "collections is S&GM98's Table 2 (manuals and FAQs on 50 to 180 servers): "
                "groups of 2+ contents held by exactly the same 2+ servers. Second, when any: "
                f"server pairs sharing at least {MIRROR_MIN_SHARED} contents, most first; an "
                "overlap near 100% means one server mirrors the other (a server's contents are its "
                "distinct clusters).",
        stats=(Stat("servers", "servers (hosts)", _distinct_servers(hosts)),
               Stat("top_servers", "most servers spanned by one cluster", collections[0].servers),
               Stat("collections", "collections: 2+ pages on the same 2+ servers",
                    len(together)),
               Stat("server_pairs", f"server pairs sharing {MIRROR_MIN_SHARED}+ contents "
                    f"(top {top} shown)", len(mirrors))),
        tables=(Table("Collections replicated together", ("servers", "pages", "documents",
                                                          "hosts", "example URLs"),
                      ("count", "count", "count", "text", "text"),
                      tuple((g.servers, g.pages, g.documents, ", ".join(g.hosts[:5]),
                             "\n".join(g.examples)) for g in together[:top])),
                Table("Most replicated contents", ("servers", "documents", "example URLs"),
                      ("count", "count", "text"),
                      tuple((c.servers, c.documents, "\n".join(c.examples)) for c in collections)),
                Table("Mirrored servers", ("server a", "server b", "shared contents",
                                           "contents of a", "contents of b", "overlap"),
                      ("text", "text", "count", "count", "count", "share"),
                      tuple((p.a, p.b, p.shared, p.contents_a, p.contents_b, p.overlap)
                            for p in mirrors))),
        figures=_server_figures(collections, mirrors))


def _distinct_servers(hosts: pa.ChunkedArray) -> int:
    codes = host_numbers(hosts)[0]
    return int(distinct(codes[codes >= 0]).size)


def _server_figures(collections: Sequence[ReplicatedCollection],
                    mirrors: Sequence[ServerPair]) -> tuple[Figure, ...]:
    names = tuple(_short(c.examples[0]) if c.examples else f"cluster {c.cluster}"
                  for c in collections)
    figures = [Figure("hbars", "Clusters by distinct servers", "servers", "", (
        Series("servers", names, tuple(float(c.servers) for c in collections)),))]
    if mirrors:
        pairs = tuple(f"{p.a} | {p.b}" for p in mirrors)
        figures.append(Figure("hbars", "Server pairs by shared contents", "shared contents", "",
                              (Series("shared", pairs, tuple(float(p.shared) for p in mirrors)),)))
    return tuple(figures)


def _savings_rows(runs: Sequence[DedupRun],
                  labels: Sequence[str]) -> list[tuple[str, CrawlSavings]]:
    rows = []
    for name, run in _exact_groups(runs):
        lengths = column_array(run.documents, "length").astype(np.int64)
        rows.append((f"exact copies ({name})",
                     crawl_savings(first_of_groups(run.identical), lengths)))
        if "lexical" in run.documents.column_names:
            lexical = column_labels(run.documents, "lexical")
            rows.append((f"same text ({name.replace('identical bytes', 'lexical')})",
                         crawl_savings(first_of_groups(lexical), lengths)))
    for label, run in zip(labels, runs, strict=True):
        kept = column_array(run.clusters, "kept").astype(bool)
        lengths = column_array(run.documents, "length").astype(np.int64)
        rows.append((label, crawl_savings(kept, lengths)))
    return rows


def savings_section(runs: Sequence[DedupRun], labels: Sequence[str]) -> Section:
    rows = _savings_rows(runs, labels)
    names = tuple(name for name, _ in rows)
    return Section(
        "savings", SECTION_TITLES["savings"],
        source="; ".join(run.describe(label, "documents (length, identical, lexical), "
                                             "clusters (kept)")
                         for label, run in zip(labels, runs, strict=True)),
        caption="How much of the next crawl a crawler could skip by visiting one document per "
                "group of copies. Compare the bars: what near-duplicate detection adds over "
                "exact copies. S&GM98: 22% of the pages given exact copies, 29% and 33% given "
                "shared 4-line and 2-line chunks.",
        stats=tuple(stat for name, s in rows for stat in (
            Stat(f"pages:{name}", f"{name}: pages skipped", s.page_share, "share"),
            Stat(f"bytes:{name}", f"{name}: bytes skipped", s.byte_share, "share"))),
        tables=(Table("Pages and bytes a crawler need not visit",
                      ("given", "pages", "pages skipped", "share", "bytes skipped", "share"),
                      ("text", "count", "count", "share", "bytes", "share"),
                      tuple((name, s.pages, s.pages_skipped, s.page_share, s.bytes_skipped,
                             s.byte_share) for name, s in rows)),),
        figures=(Figure("bars", "Share of the crawl that could be skipped", "", "share skipped", (
            Series("pages", names, tuple(s.page_share for _, s in rows)),
            Series("bytes", names, tuple(s.byte_share for _, s in rows))), percent=True),))


def _first(runs: Sequence[DedupRun], labels: Sequence[str], key: str, reason: str,
           build: Callable[[DedupRun, str], Section], has: Callable[[DedupRun], bool]) -> Section:
    for run, label in zip(runs, labels, strict=True):
        if has(run):
            return build(run, label)
    return Section(key, SECTION_TITLES[key], omitted=reason)


#: A log-log figure with fewer points than this in every series is shown as a table.
MIN_LOGLOG_POINTS = 8


def _as_table(figure: Figure) -> Table:
    xs = sorted({x for s in figure.series for x in s.x}, key=float)
    values = [dict(zip(s.x, s.y, strict=True)) for s in figure.series]
    return Table(figure.title, (figure.xlabel, *(f"{figure.ylabel}: {s.name}"
                                                 for s in figure.series)),
                 ("count", *repeat_unit("count", len(figure.series))),
                 tuple((x, *(v.get(x, 0.0) for v in values)) for x in xs))


def small_plots_as_tables(section: Section) -> Section:
    """``section`` with each log-log figure of few points replaced by a table of them (a
    straight line through 2-6 points says less than the numbers)."""
    small = [f for f in section.figures if f.kind == "loglog"
             and all(len(s.x) < MIN_LOGLOG_POINTS for s in f.series)]
    if not small:
        return section
    return replace(section, figures=tuple(f for f in section.figures if f not in small),
                   tables=(*section.tables, *(_as_table(f) for f in small)))


def build_report(runs: Sequence[DedupRun], seeds: Sequence[str] = (), top: int = 10,
                 copies: Copies | None = None, browser: str | None = None) -> Report:
    """The report over ``runs`` (one or more dedup output directories, first one first).

    ``copies`` (gathered from the first run when not given) feeds the first three sections;
    ``browser`` is the relative path of the cluster browser folder the cluster rows link to."""
    labels = run_labels(runs)
    if copies is None:
        copies = gather_copies(runs[0], labels[0], 20 * top, 1, text_clusters=0, snippets=top)
    sections = [
        largest_section(copies, top, browser),
        rates_section(copies, top),
        noncontent_section(copies, top, browser),
        replicas_section(runs, labels),
        clusters_section(runs, labels),
        servers_section(runs[0], labels[0], top),
        savings_section(runs, labels),
        _first(runs, labels, "links", "no links table: run dedup with --links",
               lambda run, label: links_section(run, label, seeds, top),
               lambda run: run.links is not None),
        _first(runs, labels, "growth", "no growth table: run dedup --method shingle-paragraphs "
                                      "--iterations m", growth_section,
               lambda run: run.growth is not None),
        _first(runs, labels, "distribution", "no simhash column: run dedup --method simhash",
               lambda run, label: distribution_section(run, label, top),
               lambda run: "simhash" in run.documents.column_names),
        chunks_section(runs, labels),
    ]
    return Report("neardup replication report", tuple(str(run.path) for run in runs),
                  tuple(small_plots_as_tables(section) for section in sections))
