"""The report as one self-contained HTML page (figures embedded as base64 PNG) and as JSON.

Every present section of the page is a ``<section data-key=...>`` holding its input, a caption
saying what to look at, its figures (``<img>``), its numbers (``<dd data-key=...>``) and small
tables; an omitted section holds only its one-line reason.
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Callable
from pathlib import Path

from neardup.analysis.figures import figure_png
from neardup.analysis.model import Figure, Report, Section, Table, format_value
from neardup.errors import OutputError
from neardup.store.durable import write_atomic

__all__ = ["render_html", "write_report", "write_text_atomic"]

_STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; color: #222; max-width: 1200px; margin: 2em auto;
       padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.25em; margin: 0 0 0.3em; }
section { border-top: 1px solid #ddd; padding: 1.2em 0; }
.input { color: #666; font-size: 0.85em; margin: 0; }
.caption { margin: 0.5em 0 0.8em; }
.omitted .reason { color: #8a5a00; }
figure { margin: 0.5em 0; } figure img { max-width: 100%; }
dl.numbers { display: grid; grid-template-columns: repeat(auto-fill, minmax(220px, 1fr));
             gap: 0.4em 1.2em; margin: 0.8em 0; }
dl.numbers div { background: #f5f7fa; padding: 0.35em 0.6em; border-radius: 4px; }
dt { font-size: 0.8em; color: #555; } dd { margin: 0; font-size: 1.15em; font-weight: 600; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.8em 0; }
caption { text-align: left; font-weight: 600; padding-bottom: 0.3em; }
th, td { border-bottom: 1px solid #e5e5e5; padding: 0.25em 0.6em; text-align: left;
         vertical-align: top; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
td.text { min-width: 6.5em; max-width: 420px; overflow-wrap: break-word; white-space: pre-line; }
td.url { min-width: 12em; max-width: 24em; overflow-wrap: anywhere; white-space: pre-line; }
div.table { overflow-x: auto; max-width: 100%; }
p.note { color: #666; font-size: 0.8em; margin: 0; }
nav a { margin-right: 0.8em; font-size: 0.9em; }
"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _figure(fig: Figure, draw: Callable[[Figure], bytes]) -> str:
    data = base64.b64encode(draw(fig)).decode("ascii")
    return (f'<figure><img alt="{_e(fig.title)}" src="data:image/png;base64,{data}">'
            f"</figure>")


def _numbers(section: Section) -> str:
    items = "".join(f'<div><dt>{_e(s.label)}</dt><dd data-key="{_e(s.key)}">{_e(s.text)}</dd>'
                    f"</div>" for s in section.stats)
    return f'<dl class="numbers">{items}</dl>' if items else ""


def _cells(table: Table, index: int) -> str:
    row, cells = table.rows[index], []
    for column, (value, unit) in enumerate(zip(row, table.units, strict=True)):
        shown = _e(format_value(value, unit))
        link = table.links[index] if table.links and column == 0 else None
        if link is not None:
            shown = f'<a href="{_e(link)}">{shown}</a>'
        cells.append(f'<td class="{unit if unit in ("text", "url") else "n"}">{shown}</td>')
    return "".join(cells)


def _table(table: Table) -> str:
    head = "".join(f"<th>{_e(c)}</th>" for c in table.columns)
    body = [f"<tr>{_cells(table, index)}</tr>" for index in range(len(table.rows))]
    if not body:
        body.append(f'<tr><td colspan="{len(table.columns)}">none</td></tr>')
    note = f'<p class="note">{_e(table.note)}</p>' if table.note else ""
    return (f'<div class="table"><table><caption>{_e(table.title)}{note}</caption>'
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _section(section: Section, draw: Callable[[Figure], bytes]) -> str:
    title = f"<h2>{_e(section.title)}</h2>"
    if section.omitted is not None:
        return (f'<section id="{_e(section.key)}" class="omitted" data-key="{_e(section.key)}">'
                f'{title}<p class="reason">Omitted: {_e(section.omitted)}</p></section>')
    parts = [title, f'<p class="input">Input: {_e(section.source)}</p>',
             f'<p class="caption">{_e(section.caption)}</p>',
             *(_figure(fig, draw) for fig in section.figures), _numbers(section),
             *(_table(table) for table in section.tables)]
    return (f'<section id="{_e(section.key)}" data-key="{_e(section.key)}">'
            f"{''.join(parts)}</section>")


def render_html(report: Report, draw: Callable[[Figure], bytes] = figure_png) -> str:
    """The whole page; ``draw`` turns a figure into PNG bytes."""
    nav = "".join(f'<a href="#{_e(s.key)}">{_e(s.title)}</a>' for s in report.sections)
    inputs = ", ".join(_e(path) for path in report.inputs)
    body = "".join(_section(section, draw) for section in report.sections)
    return (f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            f"<title>{_e(report.title)}</title><style>{_STYLE}</style></head><body>"
            f"<header><h1>{_e(report.title)}</h1><p class=\"input\">Inputs: {inputs}</p>"
            f"<nav>{nav}</nav></header>{body}</body></html>\n")


def _finite(value: object) -> object:
    """``value`` with every NaN or infinity replaced by None (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``path`` under a temporary name, sync it, then rename it into place."""
    write_atomic(path, text.encode("utf-8"), path.with_name(f".{path.name}.partial"))


def write_report(report: Report, html_path: Path, json_path: Path | None = None) -> list[Path]:
    """Write the HTML page (and the JSON, when ``json_path`` is given); returns the paths."""
    written = []
    try:
        html_path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(html_path, render_html(report))
        written.append(html_path)
        if json_path is not None:
            text = json.dumps(_finite(report.to_json()), indent=1, allow_nan=False)
            write_text_atomic(json_path, text + "\n")
            written.append(json_path)
    except OSError as error:
        raise OutputError(f"{error.filename or html_path}: {error.strerror or error}") from error
    return written
