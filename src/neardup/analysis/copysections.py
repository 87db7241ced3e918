"""The report's first three sections: the largest clusters with their kept copy, duplicate
rates per input file, host and crawl date, and the non-content pages counted apart."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from neardup.analysis.copies import Copies, kind_counts, snippet
from neardup.analysis.dedupdir import column_array, column_or_nulls
from neardup.analysis.largest import ClusterEntry, keep_reason
from neardup.analysis.model import SECTION_TITLES, Section, Stat, Table, Value
from neardup.analysis.pages import EMPTY_TOKENS
from neardup.analysis.rates import GroupRate, date_keys, group_rates

__all__ = ["browser_page", "largest_section", "noncontent_section", "rates_section"]

_CLUSTER_COLUMNS = ("cluster", "documents", "hosts", "kept URL", "fetched", "bytes",
                    "kept because", "text")


def browser_page(cluster: int) -> str:
    """The file name of a cluster's page in the browser folder."""
    return f"c{cluster}.html"


def _cell(values: pa.ChunkedArray, doc: int) -> str | None:
    value = values[doc].as_py()
    return None if value is None else str(value)


def _cluster_rows(copies: Copies, entries: Sequence[ClusterEntry],
                  browser: str | None) -> Table:
    docs = copies.run.documents
    urls = docs.column("url")
    fetched, length = column_or_nulls(docs, "fetched"), column_array(docs, "length")
    reasons = column_or_nulls(copies.run.clusters, "reason")
    rows: list[tuple[Value, ...]] = []
    for e in entries:
        text = copies.texts.get(e.kept)
        day = fetched[e.kept].as_py()
        rows.append((e.cluster, e.size, e.hosts, _cell(urls, e.kept) or f"doc {e.kept}",
                     day[:10] if day else None, int(length[e.kept]),
                     keep_reason(reasons[e.kept].as_py()),
                     snippet(text.text) if text is not None else "(text not available)"))
    links = tuple(f"{browser}/{browser_page(e.cluster)}" for e in entries) if browser else ()
    return Table("", _CLUSTER_COLUMNS,
                 ("count", "count", "count", "url", "text", "bytes", "text", "text"),
                 tuple(rows), links)


def largest_section(copies: Copies, top: int, browser: str | None) -> Section:
    content = [e for e in copies.clusters if e.kind == "content"][:top]
    if not content:
        return Section("largest", SECTION_TITLES["largest"],
                       omitted=f"{copies.run.path}: no cluster of content pages")
    table = _cluster_rows(copies, content, browser)
    how = (f" Open a cluster (first column) in the cluster browser ({browser}/index.html) to "
           "see its members and any pair side by side." if browser else "")
    return Section(
        "largest", SECTION_TITLES["largest"],
        copies.run.describe(copies.label, "documents, clusters (kept, reason); texts read "
                                          "again from the inputs"),
        caption="The clusters with the most documents, non-content pages left out (section "
                "3). Each row shows the copy the run kept, why it kept it, and the start of its "
                "text; the other members were dropped as its duplicates." + how,
        stats=(Stat("largest_content", "documents in the largest content cluster",
                    content[0].size),
               Stat("texts_missing", "kept copies shown without text (input gone)",
                    sum(e.kept not in copies.texts for e in content))),
        tables=(Table("Largest clusters of content pages", table.columns, table.units,
                      table.rows, table.links, "largest first"),))


def _rate_table(title: str, key: str, rows: Sequence[GroupRate], top: int, note: str) -> Table:
    shown = rows[:top]
    return Table(title, (key, "documents", "duplicates", "share", "non-content pages",
                         "content duplicates", "share of content"),
                 ("url" if key in ("file", "host") else "text", "count", "count", "share",
                  "count", "count", "share"),
                 tuple((r.key, r.documents, r.duplicates, r.rate, r.non_content,
                        r.content_duplicates, r.content_rate) for r in shown),
                 note=f"{len(shown)} of {len(rows)} {note}")


def rates_section(copies: Copies, top: int) -> Section:
    docs = copies.run.documents
    duplicate = ~column_array(copies.run.clusters, "kept").astype(bool)
    content = copies.content_mask()
    tables = []
    if "source" in docs.column_names:
        tables.append(_rate_table("Per input file", "file", group_rates(
            docs.column("source"), duplicate, content), top, "files, most duplicates first"))
    hosts = group_rates(docs.column("host"), duplicate, content)
    tables.append(_rate_table("Per host", "host", hosts, top, "hosts, most duplicates first"))
    dates, unit = date_keys(column_or_nulls(docs, "fetched"))
    by_date = group_rates(dates, duplicate, content, by_key=True)
    tables.append(_rate_table(f"Per crawl date (by {unit})", unit, by_date, max(top, 40),
                              f"{unit}s, in order"))
    total = int(duplicate.sum())
    return Section(
        "rates", SECTION_TITLES["rates"],
        copies.run.describe(copies.label, "documents (source, host, fetched), clusters (kept)"),
        caption="A duplicate is a document whose cluster kept another copy. The last two "
                "columns leave the non-content pages of section 3 out: compare them to see "
                "how much of a file's or host's duplication is robots.txt, error or empty pages.",
        stats=(Stat("duplicates", "duplicates", total),
               Stat("duplicate_share", "share of documents", total / max(1, duplicate.size),
                    "share"),
               Stat("content_duplicate_share", "share of content pages",
                    float((duplicate & content).sum()) / max(1, int(content.sum())), "share"),
               Stat("hosts", "hosts", len(hosts))),
        tables=tuple(tables))


def noncontent_section(copies: Copies, top: int, browser: str | None) -> Section:
    counts = kind_counts(copies)
    others = [e for e in copies.clusters if e.kind != "content"][:top]
    listed = _cluster_rows(copies, others, browser)
    return Section(
        "noncontent", SECTION_TITLES["noncontent"],
        copies.run.describe(copies.label, "documents (url, tokens), clusters (kept)"),
        caption="Pages that are copies of each other without being content: robots.txt files "
                "(by URL), error pages (by URL, and where the report reads the text, by a "
                "short text opening with an HTTP error phrase or saying that what was asked "
                "for cannot be found), empty pages (fewer than "
                f"{EMPTY_TOKENS} words). They are counted here and left out of section 1 and "
                "of the content rates of section 2.",
        stats=tuple(Stat(f"{kind}_documents", f"{kind} pages", number)
                    for kind, (number, _) in counts.items()) + tuple(
            Stat(f"{kind}_duplicates", f"{kind} pages that are duplicates", dups)
            for kind, (_, dups) in counts.items() if kind != "content"),
        tables=(Table("Documents per kind of page", ("kind", "documents", "duplicates"),
                      ("text", "count", "count"),
                      tuple((kind, docs, dups) for kind, (docs, dups) in counts.items())),
                Table("Largest clusters of non-content pages",
                      (listed.columns[0], "kind", *listed.columns[1:]),
                      (listed.units[0], "text", *listed.units[1:]),
                      tuple((row[0], e.kind, *row[1:])
                            for e, row in zip(others, listed.rows, strict=True)),
                      listed.links, "largest first")))
