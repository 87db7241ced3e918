"""Drawing the report's figures as PNG with matplotlib.

Uses matplotlib's object API with the Agg canvas directly: no pyplot, no global backend switch,
no window, so it runs headless and leaves the caller's matplotlib state alone.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure as PlotFigure
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter, PercentFormatter

from neardup.analysis.model import Figure

__all__ = ["figure_png"]

_COLORS = ("#1f5f8b", "#e07b39", "#3a9a5b", "#b5403a", "#7d5ba6", "#8c6d31", "#4c9fb8")
_SIZE = (7.0, 3.6)
_MARKERS = ("o", "s", "^", "D", "v")


def _bars(ax: Axes, fig: Figure) -> None:
    labels = [str(x) for x in fig.series[0].x]
    positions = np.arange(len(labels))
    width = 0.8 / len(fig.series)
    for index, series in enumerate(fig.series):
        offset = (index - (len(fig.series) - 1) / 2) * width
        ax.bar(positions + offset, series.y, width, label=series.name,
               color=_COLORS[index % len(_COLORS)])
    ax.set_xticks(positions, labels, fontsize=8, rotation=20 if len(labels) > 5 else 0,
                  ha="right" if len(labels) > 5 else "center")
    if len(fig.series) > 1:
        ax.legend(fontsize=8, frameon=False)


def _hbars(ax: Axes, fig: Figure) -> None:
    series = fig.series[0]
    positions = np.arange(len(series.x))
    ax.barh(positions, series.y, color=_COLORS[0])
    ax.set_yticks(positions, [str(x) for x in series.x], fontsize=7)
    ax.invert_yaxis()


def _loglog(ax: Axes, fig: Figure) -> None:
    drawn = False
    for index, series in enumerate(fig.series):
        if series.x:
            ax.loglog(series.x, series.y, _MARKERS[index % len(_MARKERS)], markersize=6,
                      fillstyle="full" if index == 0 else "none", label=series.name,
                      color=_COLORS[index % len(_COLORS)])
            drawn = True
    if not drawn:
        ax.text(0.5, 0.5, "no cluster of two documents or more", ha="center",
                transform=ax.transAxes)
    else:
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
            axis.set_minor_formatter(NullFormatter())
        ax.margins(0.1)
        if len(fig.series) > 1:
            ax.legend(fontsize=8, frameon=False)


def _lines(ax: Axes, fig: Figure) -> None:
    for index, series in enumerate(fig.series):
        ax.plot(series.x, series.y, "o-", markersize=3, label=series.name,
                color=_COLORS[index % len(_COLORS)])
    for x, text in fig.marks:
        ax.axvline(x, color="grey", linestyle="--", linewidth=0.8)
        ax.annotate(text, (x, 1.0), xycoords=("data", "axes fraction"), fontsize=8,
                    ha="left", va="top", xytext=(3, -3), textcoords="offset points")
    ax.legend(fontsize=8, frameon=False)


def _histogram(ax: Axes, fig: Figure) -> None:
    series = fig.series[0]
    ax.bar(series.x, series.y, width=0.9, color=_COLORS[0])
    heights = dict(zip(series.x, series.y, strict=True))
    for x, text in fig.marks:
        ax.annotate(text, (x, heights.get(x, 0.0)), fontsize=8, color=_COLORS[3],
                    ha="center", va="bottom", xytext=(0, 2), textcoords="offset points")
    if fig.marks:
        ax.set_ylim(top=max(series.y) * (3 if fig.log_y else 1.15))


_DRAW: dict[str, Callable[[Axes, Figure], None]] = {
    "bars": _bars, "hbars": _hbars, "loglog": _loglog, "lines": _lines, "histogram": _histogram}


def figure_png(fig: Figure, dpi: int = 96) -> bytes:
    """The figure drawn as PNG bytes."""
    height = _SIZE[1]
    if fig.kind == "hbars":
        height = max(2.0, 0.9 + 0.28 * len(fig.series[0].x))
    plot = PlotFigure(figsize=(_SIZE[0], height), dpi=dpi)
    FigureCanvasAgg(plot)
    ax = plot.add_subplot()
    _DRAW[fig.kind](ax, fig)
    if fig.log_y and any(v > 0 for s in fig.series for v in s.y):
        ax.set_yscale("log")
    if fig.percent:
        ax.yaxis.set_major_formatter(PercentFormatter(1.0))
    ax.set_title(fig.title, fontsize=10)
    ax.set_xlabel(fig.xlabel, fontsize=9)
    ax.set_ylabel(fig.ylabel, fontsize=9)
    ax.tick_params(labelsize=8)
    ax.spines[["top", "right"]].set_visible(False)
    plot.tight_layout()
    buffer = io.BytesIO()
    plot.savefig(buffer, format="png")
    return buffer.getvalue()
