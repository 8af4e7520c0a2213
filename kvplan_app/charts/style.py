"""How every chart reads at the plan: the plan's marker and label, log ticks, the legend's place.

Shared by :mod:`kvplan_app.charts.figures`, :mod:`kvplan_app.charts.frontier` and :mod:`kvplan_app.charts.traces`;
plotly only, no Streamlit.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

LEGEND_ABOVE = dict(orientation="h", yanchor="bottom", y=1.02, xanchor="left", x=0.0)
"""Legend placement on every multi-line chart: above the plot area, clear of both axes' titles and ticks."""


PLAN_MARKER = dict(size=14, symbol="diamond", color="black", line=dict(width=1, color="white"))
"""How the current plan is marked on every figure (drawn over the axes' edge, never half clipped)."""

LOG_TICKS = dict(dtick=1, tickformat=",d")
"""Log token axes: one labelled tick per decade written in full (1,000, 10,000, 1,000,000), no "2" and "5" minor
labels. Never SI suffixes: Plotly's "1M" is 10^6, while kvplan's token inputs read "1M" as 2^20 (as vLLM's
human_readable_int) and "1m" as 10^6."""
LOG_COUNT_TICKS = dict(dtick=1, tickformat=",~r")
"""Log axes of counts and rates: one tick per decade written in full (0.1, 1, 10, 1,000), never "100m"."""


LEGEND_LABEL = "kvplan-legend-label"
"""``meta`` of a legend-only trace that carries a label (its numbers are localized with the page's language)."""


def legend_label(fig: go.Figure, text: str, *, marker: dict | None = None, line: dict | None = None) -> go.Figure:
    """Write ``text`` in the legend (above the plot area), never on the plot: a label drawn on the plot sits on an
    axis or a curve at some size. ``marker`` / ``line``: the symbol the legend shows beside it. Returns ``fig``."""
    mode = "markers" if marker else "lines" if line else "markers"
    fig.add_trace(go.Scatter(x=[None], y=[None], mode=mode, name=text, showlegend=True, hoverinfo="skip", hovertemplate="",
                             meta=LEGEND_LABEL,
                             marker=marker or dict(size=1, color="rgba(0,0,0,0)"), line=line or {}))
    fig.update_layout(showlegend=True)
    return fig


def label_plan(fig: go.Figure, x: float, y: float, text: str, *, x_log: bool = True, y_log: bool = False,
               x_range: tuple[float, float] | None = None, below: bool = False) -> go.Figure:
    """Name the plan's point: ``text`` in the legend beside the plan's diamond (the diamond itself is drawn by the
    caller). Returns ``fig``.

    The label used to be an annotation with an arrow next to the point; at 1,280 px it sat on the curve or the
    axis. The other arguments are kept for the callers (where the point is; no longer used to place text).
    """
    return legend_label(fig, text, marker=PLAN_MARKER)


def mark_x(fig: go.Figure, x: float, *, log_x: bool, text: str | None = None, position: str = "top left",
           **line) -> go.Figure:
    """A vertical line at ``x`` (data units) across the plot, named ``text`` in the legend. Returns ``fig``.

    The line is a shape in data units (plotly.js converts a shape's position on a log axis with the axis' ``d2r``),
    so a line at 4,096 tokens sits at 4,096 on a log axis. Its label goes in the legend (a shape's ``name``), never
    on the plot, where it would cross a curve or an axis.

    Args:
        x: the line's position, in data units (> 0 when ``log_x``).
        log_x: whether the x axis is logarithmic (kept for the callers; the shape needs no conversion).
        text: the label, or None for none.
        position: kept for the callers (the label is in the legend).
        line: ``add_vline`` line keywords (``line_dash``, ``line_color``).
    """
    if text:
        fig.add_vline(x=x, name=text, showlegend=True, **line)
        fig.update_layout(showlegend=True)
    else:
        fig.add_vline(x=x, **line)
    return fig


def mark_y(fig: go.Figure, y: float, text: str, **line) -> go.Figure:
    """A horizontal line at ``y`` (data units), named ``text`` in the legend (never a label on the plot)."""
    fig.add_hline(y=y, name=text, showlegend=True, **line)
    fig.update_layout(showlegend=True)
    return fig


def english(text: str) -> str:
    """The default ``tr`` of every figure builder: its English words, unchanged.

    A page passes its own ``tr`` (English text -> that language's text, ``{name}`` placeholders kept, filled
    by the builder); plotly's ``%{...}`` hover fields are kept as they are.
    """
    return text


def _plan_trace(x: float, y: float | None, text: str, name: str) -> list[go.Scatter]:
    """The current plan as a one-point trace (none when ``y`` is undefined or not positive on a log axis)."""
    if y is None or not np.isfinite(y) or y <= 0:
        return []
    return [go.Scatter(x=[x], y=[y], mode="markers", name=name, marker=PLAN_MARKER, cliponaxis=False,
                       hovertemplate=text + "<extra></extra>")]


def mark_plan(fig: go.Figure, x: float, y: float | None, hover: str, label: str, *, log_x: bool,
              log_y: bool, x_range: tuple[float, float], below: bool = False, tr=english) -> go.Figure:
    """Add the plan's diamond and its label (below it on falling curves; or, with no point on the chart, say so)."""
    traces = _plan_trace(x, y, hover, tr("current plan"))
    for trace in traces:
        trace.showlegend = False  # the legend names it once, with its label (label_plan)
        fig.add_trace(trace)
    if traces:
        label_plan(fig, x, y, label, x_log=log_x, y_log=log_y, x_range=x_range, below=below)
    else:
        legend_label(fig, tr("{label} (not on this chart)").format(label=label))
    return fig
