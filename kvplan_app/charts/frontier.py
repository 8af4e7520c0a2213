"""The Frontier page's figures: each takes the DataFrame it plots (a slice of
:meth:`planner.frontier.FrontierGrid.frame`), so the page can offer exactly that grid as CSV.

Pure functions (no Streamlit): inputs in, ``go.Figure`` out.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from kvplan_app.charts.style import (LEGEND_ABOVE, LOG_COUNT_TICKS, LOG_TICKS, PLAN_MARKER, english, label_plan,
                                    legend_label, mark_plan, mark_x, mark_y)
from planner.plan.result import format_sessions
from kvplan_app.markdown import plotly_text
from planner.units import GB, GiB, format_figure

SESSIONS_HOVER = ("%{x:,} tokens<br>%{y:,.2~f} sessions per GPU<br>per session %{customdata[0]:.4g} GB "
                  "(%{customdata[1]:.4g} GiB)")
"""Hover of a sessions-per-GPU curve over context (customdata: GB and GiB per session)."""


def _beyond(fig: go.Figure, context_tokens: int, tr=english) -> None:
    """Say on the chart that the plan's context lies right of its longest context (no point drawn, none joined)."""
    legend_label(fig, tr("this plan: {tokens} tokens (beyond this chart)").format(tokens=f"{context_tokens:,}"))


def _positive(values) -> np.ndarray:
    """Values for a log axis: zero and negative become gaps (NaN)."""
    v = np.asarray(values, dtype=np.float64)
    return np.where(v > 0, v, np.nan)


def _up_to(part, max_context_tokens: int | None):
    """Rows of ``part`` within the model's maximum context (all rows when unknown)."""
    return part if not max_context_tokens else part[part["context_tokens"] <= max_context_tokens]


def _max_context_line(fig: go.Figure, frame, max_context_tokens: int | None, tr=english) -> None:
    if max_context_tokens and len(frame) and frame["context_tokens"].max() > max_context_tokens:
        mark_x(fig, max_context_tokens, log_x=True, line_dash="dot", line_color="#888",
               text=tr("model maximum {tokens}").format(tokens=f"{max_context_tokens:,}"), position="bottom left")


def _log_count_ticks(fig: go.Figure) -> dict:
    """Log y ticks: one per decade, or 1-2-5 digits when the lines span under two decades (else no tick shows)."""
    ys = np.concatenate([np.asarray(tr.y, dtype=np.float64) for tr in fig.data if tr.y is not None] or [np.array([])])
    ys = ys[np.isfinite(ys) & (ys > 0)]
    if ys.size and np.log10(ys.max() / ys.min()) < 2:
        return dict(LOG_COUNT_TICKS, dtick="D2")
    return LOG_COUNT_TICKS


def _line_layout(*, x_title: str, y_title: str, log_x: bool, log_y: bool = True, x_range: list | None = None,
                 y_ticks: dict | None = None) -> dict:
    return dict(
        xaxis=dict(type="log" if log_x else "linear", title=x_title, **({"range": x_range} if x_range else {}),
                   **(LOG_TICKS if log_x else {})),
        yaxis=dict(title=y_title, **(dict(type="log", **(y_ticks or LOG_COUNT_TICKS)) if log_y
                                     else dict(rangemode="tozero"))),
        hovermode="closest", margin=dict(l=10, r=10, t=40, b=10), legend=LEGEND_ABOVE,
    )


def _plan_label(text: str, plan_hit_rate: float | None, tr=english) -> str:
    """``this plan: X``, or ``this plan (hit rate 0.50): X`` when the plan's hit rate is not the chart's."""
    if plan_hit_rate is None:
        return text
    return text.replace(tr("this plan:"), tr("this plan (hit rate {hit_rate}):").format(hit_rate=f"{plan_hit_rate:.2f}"), 1)


def sessions_vs_context_figure(frame, *, plan_point: tuple[int, int] | None = None, hit_rate: float | None = None,
                               max_context_tokens: int | None = None,
                               plan_hit_rate: float | None = None, tr=english) -> go.Figure:
    """Sessions per GPU vs context length (log x, log y), one line per accelerator, the plan labelled.

    Args:
        frame: rows with ``accelerator, context_tokens, sessions_per_gpu,
            per_session_bytes`` (one hit rate).
        plan_point: (context tokens, sessions per GPU) of the current plan.
        hit_rate: the hit rate of the slice, for the title.
        max_context_tokens: the model's maximum context: lines stop there.
        plan_hit_rate: the plan's own hit rate when it is not ``hit_rate`` (the diamond is then off the
            lines, at the plan's point, and its label says so).
    """
    fig = go.Figure()
    for name, part in frame.groupby("accelerator", sort=False, observed=True):
        part = _up_to(part, max_context_tokens)
        per = part["per_session_bytes"].to_numpy(dtype=np.float64)
        fig.add_trace(go.Scatter(
            x=part["context_tokens"], y=_positive(part["sessions_per_gpu"]), mode="lines", name=plotly_text(name),
            customdata=np.stack([per / GB, per / GiB], axis=-1),
            hovertemplate=f"{plotly_text(name)}<br>" + tr(SESSIONS_HOVER) + "<extra></extra>",
        ))
    _max_context_line(fig, frame, max_context_tokens, tr)
    x_range = (float(frame["context_tokens"].min()), float(frame["context_tokens"].max()))
    if plan_point is not None and plan_point[0] > x_range[1]:
        _beyond(fig, plan_point[0], tr)
    elif plan_point is not None:
        sessions = format_sessions(plan_point[1])
        mark_plan(fig, plan_point[0], plan_point[1],
                   tr("plan: {tokens} tokens, {sessions} sessions").format(tokens=f"{plan_point[0]:,}", sessions=sessions),
                   _plan_label(tr("this plan: {sessions}").format(sessions=sessions), plan_hit_rate, tr),
                   log_x=True, log_y=True, x_range=x_range, below=True, tr=tr)
    title = (tr("Sessions per GPU") if hit_rate is None
             else tr("Sessions per GPU at hit rate {hit_rate}").format(hit_rate=f"{hit_rate:.2f}"))
    fig.update_layout(**_line_layout(x_title=tr("Context (tokens)"), y_title=title, log_x=True,
                                     y_ticks=_log_count_ticks(fig)))
    return fig


def sessions_vs_hit_rate_figure(frame, *, plan_point: tuple[float, int] | None = None, context_tokens: int | None = None,
                                tr=english) -> go.Figure:
    """Sessions per GPU vs prefix hit rate (log y: near hit rate 1 sessions grow by decades), one line per
    accelerator, the plan labelled.

    Args:
        frame: rows with ``accelerator, hit_rate, sessions_per_gpu`` (one context).
        plan_point: (hit rate, sessions per GPU) of the current plan.
        context_tokens: the context of the slice, for the title.
    """
    fig = go.Figure(data=[go.Scatter(
        x=part["hit_rate"], y=_positive(part["sessions_per_gpu"]), mode="lines", name=plotly_text(name),
        hovertemplate=f"{plotly_text(name)}<br>" + tr("hit rate %{x:.2f}<br>%{y:,.2~f} sessions per GPU") + "<extra></extra>")
        for name, part in frame.groupby("accelerator", sort=False, observed=True)])
    if plan_point is not None:
        sessions = format_sessions(plan_point[1])
        mark_plan(fig, plan_point[0], plan_point[1],
                   tr("plan: hit rate {hit_rate}, {sessions} sessions").format(hit_rate=f"{plan_point[0]:.2f}",
                                                                                sessions=sessions),
                   tr("this plan: {sessions}").format(sessions=sessions), log_x=False, log_y=True, x_range=(0.0, 1.0),
                   tr=tr)
    title = (tr("Sessions per GPU") if context_tokens is None
             else tr("Sessions per GPU at {tokens} tokens").format(tokens=f"{context_tokens:,}"))
    fig.update_layout(**_line_layout(x_title=tr("Prefix hit rate"), y_title=title, log_x=False, x_range=[0, 1]))
    return fig


def request_rate_figure(frame, *, plan_point: tuple[int, float | None] | None = None, hit_rate: float | None = None,
                        max_context_tokens: int | None = None, plan_hit_rate: float | None = None,
                        tr=english) -> go.Figure:
    """Request-rate frontier: requests/s per GPU vs context length (log x, log y), one line per accelerator.

    Each point is ``min(decode-throughput limit, sessions / time per request)``;
    the hover says which limit binds. Empty when there are no output tokens.

    Args:
        frame: rows with ``accelerator, context_tokens, request_rate_per_s, rate_limit, ttft_s``.
        plan_point: (context tokens, requests/s) of the current plan.
        hit_rate: the hit rate of the slice, for the title.
        max_context_tokens: the model's maximum context: lines stop there.
        plan_hit_rate: the plan's own hit rate when it is not ``hit_rate`` (said in the plan's label).
    """
    fig = go.Figure()
    for name, part in frame.groupby("accelerator", sort=False, observed=True):
        part = _up_to(part, max_context_tokens)
        fig.add_trace(go.Scatter(
            x=part["context_tokens"], y=_positive(part["request_rate_per_s"]), mode="lines", name=plotly_text(name),
            customdata=np.stack([part["rate_limit"].astype(str), part["ttft_s"] * 1e3], axis=-1),
            hovertemplate=f"{plotly_text(name)}<br>" + tr("%{x:,} tokens<br>%{y:,.4g} requests/s per GPU<br>limited by "
                                             "%{customdata[0]}<br>TTFT %{customdata[1]:,.3g} ms") + "<extra></extra>",
        ))
    _max_context_line(fig, frame, max_context_tokens, tr)
    x_range = (float(frame["context_tokens"].min()), float(frame["context_tokens"].max()))
    if plan_point is not None and plan_point[0] > x_range[1]:
        _beyond(fig, plan_point[0])
    elif plan_point is not None:
        rate = plan_point[1]
        mark_plan(fig, plan_point[0], rate,
                   tr("plan: {tokens} tokens, {rate} requests/s").format(tokens=f"{plan_point[0]:,}", rate=f"{rate or 0:,.4g}"),
                   _plan_label(tr("this plan: rate undefined") if rate is None
                               else tr("this plan: {rate} /s").format(rate=format_figure(rate, 3)), plan_hit_rate, tr),
                   log_x=True, log_y=True, x_range=x_range, below=True, tr=tr)
    title = (tr("Requests/s per GPU") if hit_rate is None
             else tr("Requests/s per GPU at hit rate {hit_rate}").format(hit_rate=f"{hit_rate:.2f}"))
    fig.update_layout(**_line_layout(x_title=tr("Context (tokens)"), y_title=title, log_x=True,
                                     y_ticks=_log_count_ticks(fig)))
    return fig


def _si(n: float) -> str:
    """0.01, 0.1, 1, 10, 100, 1k, 10k, 100k, 1M, ... (tick labels)."""
    for scale, suffix in ((10**9, "G"), (10**6, "M"), (10**3, "k")):
        if n >= scale:
            return f"{n / scale:g}{suffix}"
    return f"{n:g}"


def sessions_heatmap_figure(frame, *, plan_point: tuple[float, int] | None = None, accelerator: str = "",
                            plan_sessions: float | None = None, tr=english) -> go.Figure:
    """Sessions per GPU over (prefix hit rate, context length) for one accelerator, on a log colour scale.

    The colour is log10(sessions) with the colour bar labelled in sessions (1, 10, 100, 1k, ...); cells where
    no session fits are left blank. The hover shows the exact count.

    Args:
        frame: rows with ``context_tokens, hit_rate, sessions_per_gpu`` (one accelerator).
        plan_point: (hit rate, context tokens) of the current plan.
        accelerator: its name, for the title.
        plan_sessions: the plan's sessions per GPU, for its label.
    """
    table = frame.pivot(index="context_tokens", columns="hit_rate", values="sessions_per_gpu")
    z = table.to_numpy(dtype=np.float64)
    z_log = np.log10(_positive(z))
    finite = np.isfinite(z_log).any()
    top = max(int(np.ceil(np.nanmax(z_log))), 1) if finite else 1
    bottom = min(int(np.floor(np.nanmin(z_log))), 0) if finite else 0  # under TP a GPU may hold a share of one
    ticks = list(range(bottom, top + 1))
    traces = [go.Heatmap(
        x=table.columns.to_numpy(), y=table.index.to_numpy(), z=z_log, customdata=z, colorscale="Viridis",
        zmin=bottom, zmax=top,
        colorbar=dict(title=tr("Sessions<br>per GPU"), tickvals=ticks, ticktext=[_si(10**t) for t in ticks]),
        hovertemplate=tr("hit rate %{x:.2f}<br>%{y:,} tokens<br>%{customdata:,.2~f} sessions per GPU") + "<extra></extra>",
    )]
    fig = go.Figure(data=traces, layout=dict(
        # the title at the figure's top, the legend (the plan's label) between it and the plot: neither covers the other
        title=dict(text=tr("Sessions per GPU") + (f": {accelerator}" if accelerator else ""), font=dict(size=14),
                   yref="container", y=0.98, yanchor="top"),
        xaxis=dict(title=tr("Prefix hit rate")), yaxis=dict(title=tr("Context (tokens)"), type="log", **LOG_TICKS),
        margin=dict(l=10, r=10, t=75, b=10), legend=LEGEND_ABOVE,
    ))
    if plan_point is not None and len(table.index) and plan_point[1] > table.index.max():
        _beyond(fig, plan_point[1], tr)
    elif plan_point is not None:
        fig.add_trace(go.Scatter(x=[plan_point[0]], y=[plan_point[1]], mode="markers", name=tr("current plan"),
                                 marker=PLAN_MARKER, showlegend=False, cliponaxis=False,
                                 hovertemplate=tr("plan: hit rate {hit_rate}, {tokens} tokens").format(
                                     hit_rate=f"{plan_point[0]:.2f}", tokens=f"{plan_point[1]:,}") + "<extra></extra>"))
        label_plan(fig, plan_point[0], plan_point[1],
                   tr("this plan") if plan_sessions is None
                   else tr("this plan: {sessions}").format(sessions=format_sessions(plan_sessions)),
                   x_log=False, y_log=True, x_range=(0.0, 1.0))
    return fig
