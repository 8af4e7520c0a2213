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

LOG_TICKS = dict(dtick=1, tickformat="~s")
"""Log token axes: one labelled tick per decade (1k, 10k, 100k, 1M), no "2" and "5" minor labels."""
LOG_COUNT_TICKS = dict(dtick=1, tickformat=",~r")
"""Log axes of counts and rates: one tick per decade written in full (0.1, 1, 10, 1,000), never "100m"."""


def label_plan(fig: go.Figure, x: float, y: float, text: str, *, x_log: bool = True, y_log: bool = False,
               x_range: tuple[float, float] | None = None, below: bool = False) -> go.Figure:
    """Write ``text`` next to the plan's point (an arrow to it), on the side with room. Returns ``fig``.

    Args:
        x, y: the point, in data units.
        x_log, y_log: whether the axes are logarithmic (annotations on a log axis take log10 positions).
        x_range: the x axis' data range, to put the label on the inner side of the point.
        below: put the label below the point (a falling curve: the label then stays clear of it).
    """
    ax = -60
    if x_range is not None:
        lo, hi = (np.log10(v) if x_log else v for v in x_range)
        at = np.log10(x) if x_log else x
        ax = -60 if hi == lo or (at - lo) / (hi - lo) > 0.5 else 60
    fig.add_annotation(x=np.log10(x) if x_log else x, y=np.log10(y) if y_log else y, text=text, showarrow=True,
                       arrowhead=2, ax=ax, ay=30 if below else -36, bgcolor="rgba(255,255,255,0.85)", bordercolor="#444",
                       borderwidth=1, font=dict(size=12))
    return fig


def mark_x(fig: go.Figure, x: float, *, log_x: bool, text: str | None = None, position: str = "top left",
           **line) -> go.Figure:
    """A vertical line at ``x`` (data units) across the plot, with ``text`` beside it. Returns ``fig``.

    On a log axis plotly.js takes a shape's position in data units (``shapePositionToRange`` converts it with the
    axis' ``d2r``) but an annotation's in log10 units, and ``add_vline`` gives its annotation the shape's ``x``:
    the label of a line at 4,096 tokens would sit at 10^4096, or a line placed at log10 would sit at the wrong
    value. This draws the line in data units and writes the label at ``log10(x)`` when ``log_x``.

    Args:
        x: the line's position, in data units (> 0 when ``log_x``).
        log_x: whether the x axis is logarithmic.
        text: the label, or None for none.
        position: ``"top left"``, ``"top right"``, ``"bottom left"`` or ``"bottom right"`` of the line.
        line: ``add_vline`` line keywords (``line_dash``, ``line_color``).
    """
    fig.add_vline(x=x, **line)
    if text:
        top, left = position.startswith("top"), position.endswith("left")
        fig.add_annotation(x=float(np.log10(x)) if log_x else x, xref="x", y=1 if top else 0, yref="y domain",
                           xanchor="right" if left else "left", yanchor="top" if top else "bottom",
                           showarrow=False, text=text, bgcolor="rgba(255,255,255,0.9)")
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
        fig.add_trace(trace)
    if traces:
        label_plan(fig, x, y, label, x_log=log_x, y_log=log_y, x_range=x_range, below=below)
    else:
        fig.add_annotation(xref="paper", yref="paper", x=0.02, y=0.02, xanchor="left", showarrow=False,
                           text=tr("{label} (not on this chart)").format(label=label), font=dict(size=12))
    return fig
