"""The report as data: sections holding numbers, small tables and figure data.

The same model renders to HTML (figures drawn with matplotlib) and to JSON, so both carry the
same numbers. A section whose input lacks what it needs is kept with ``omitted`` set to a
one-line reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "SECTION_TITLES",
    "Figure", "Report", "Section", "Series", "Stat", "Table", "Unit",
    "format_value",
]

Unit = Literal["count", "share", "bytes", "number", "text", "url"]
FigureKind = Literal["bars", "hbars", "loglog", "lines", "histogram"]
Value = int | float | str | None

#: The sections of the report, in order: key -> title.
SECTION_TITLES = {
    "largest": "1. Largest clusters: which pages are copies of which",
    "rates": "2. Duplicates per input file, host and crawl date",
    "noncontent": "3. Non-content pages: robots.txt, error pages, empty pages",
    "replicas": "4. Replicas per document",
    "clusters": "5. Cluster sizes",
    "servers": "6. Most replicated collections and mirrored servers",
    "savings": "7. Crawl savings",
    "links": "8. Link graph: connected and disconnected parts",
    "growth": "9. Growth of clusters and duplicates per iteration",
    "distribution": "10. Simhash fingerprint distribution",
    "chunks": "11. Space and time per chunking (S&GM98 Table 1)",
}


def _bytes(value: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if abs(value) < 1000 or unit == "TB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def repeat_unit(unit: Unit, count: int) -> tuple[Unit, ...]:
    """``count`` columns of one unit."""
    return (unit,) * count


def format_value(value: Value, unit: Unit) -> str:
    """How the HTML page shows a value: counts with separators, shares as percentages, bytes in
    decimal units, other numbers with two decimals."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if unit in ("text", "url") or isinstance(value, str):
        return str(value)
    if unit == "share":
        return f"{100 * value:.1f}%"
    if unit == "bytes":
        return _bytes(float(value))
    if unit == "count" and float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}"


@dataclass(frozen=True, slots=True)
class Stat:
    """One headline number: a stable key (JSON), a label (HTML) and its unit."""

    key: str
    label: str
    value: Value
    unit: Unit = "count"

    @property
    def text(self) -> str:
        return format_value(self.value, self.unit)


@dataclass(frozen=True, slots=True)
class Table:
    """A small table; ``units`` says how to show each column."""

    title: str
    columns: tuple[str, ...]
    units: tuple[Unit, ...]
    rows: tuple[tuple[Value, ...], ...]
    #: Per row, a link (relative URL) for its first cell, or None; empty: no links.
    links: tuple[str | None, ...] = ()
    #: A sentence under the title (what the table leaves out, how it is ordered).
    note: str = ""

    def __post_init__(self) -> None:
        if len(self.units) != len(self.columns):
            raise ValueError(f"table {self.title!r}: {len(self.units)} units for "
                             f"{len(self.columns)} columns")
        if self.links and len(self.links) != len(self.rows):
            raise ValueError(f"table {self.title!r}: {len(self.links)} links for "
                             f"{len(self.rows)} rows")

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"title": self.title, "columns": list(self.columns),
                                "rows": [list(row) for row in self.rows]}
        if self.note:
            data["note"] = self.note
        if self.links:
            data["links"] = list(self.links)
        return data


@dataclass(frozen=True, slots=True)
class Series:
    """One named line or bar group: ``y[i]`` at ``x[i]`` (x labels for bar charts)."""

    name: str
    x: tuple[float | str, ...]
    y: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class Figure:
    """What to draw: the kind of chart, its axes, its series, and marks (x position, text)."""

    kind: FigureKind
    title: str
    xlabel: str
    ylabel: str
    series: tuple[Series, ...]
    marks: tuple[tuple[float, str], ...] = ()
    log_y: bool = False
    percent: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "title": self.title, "xlabel": self.xlabel,
                "ylabel": self.ylabel, "marks": [list(m) for m in self.marks],
                "series": [{"name": s.name, "x": list(s.x), "y": list(s.y)}
                           for s in self.series]}


@dataclass(frozen=True, slots=True)
class Section:
    """One section of the report; ``source`` says which input it used."""

    key: str
    title: str
    source: str = ""
    caption: str = ""
    stats: tuple[Stat, ...] = ()
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()
    omitted: str | None = None

    def to_json(self) -> dict[str, Any]:
        if self.omitted is not None:
            return {"key": self.key, "title": self.title, "omitted": self.omitted}
        return {"key": self.key, "title": self.title, "input": self.source,
                "caption": self.caption,
                "numbers": {s.key: s.value for s in self.stats},
                "labels": {s.key: s.label for s in self.stats},
                "tables": [t.to_json() for t in self.tables],
                "figures": [f.to_json() for f in self.figures]}


@dataclass(frozen=True, slots=True)
class Report:
    """The whole report: its inputs and its sections in order."""

    title: str
    inputs: tuple[str, ...]
    sections: tuple[Section, ...]

    def to_json(self) -> dict[str, Any]:
        return {"title": self.title, "inputs": list(self.inputs),
                "sections": [s.to_json() for s in self.sections]}
