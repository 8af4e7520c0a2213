"""Plotly figures built by pure functions (no Streamlit): inputs in, ``go.Figure`` out: the Plan page's KV and
sessions curves, the Context page's models, the Recommend page's ranking. The Frontier page's figures are in
:mod:`kvplan_app.charts.frontier`.

Every byte axis is in GB (10**9 B) with GiB (2**30 B) in the hover, labelled.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from planner.kv.models import NATIVE, ModelSpec
from planner.plan.lengths import log_token_grid
from planner.plan.result import format_sessions
from kvplan_app.charts.frontier import SESSIONS_HOVER
from kvplan_app.charts.style import (LEGEND_ABOVE, LOG_COUNT_TICKS, LOG_TICKS, PLAN_MARKER, english, label_plan,
                                    legend_label, mark_plan, mark_x, mark_y)
from kvplan_app.markdown import plotly_text
from planner.units import GB, GiB, format_figure

MIN_CURVE_TOKENS = 1_000
"""Left end of the GB-vs-context curve (1k tokens)."""


def context_grid(max_tokens: int, num_points: int = 60) -> np.ndarray:
    """Log-spaced whole token counts from 1k to ``max_tokens`` (inclusive), unique, sorted."""
    return log_token_grid(max_tokens, num_points, min_tokens=MIN_CURVE_TOKENS)


def kv_vs_context_figure(
    model: ModelSpec,
    *,
    kv_format: str = NATIVE,
    max_tokens: int | None = None,
    marker_tokens: int | None = None,
    hbm_line_bytes: int | None = None,
    hbm_label: str = "",
    tr=english,
) -> go.Figure:
    """KV bytes of one sequence vs context length (log x), GB on y, GiB in hover.

    Args:
        model: the model.
        kv_format: "native" or a format id.
        max_tokens: right end (default: the model's maximum context, else 1M).
        marker_tokens: a context length to mark (the current plan).
        hbm_line_bytes: draw a horizontal line at this many bytes (e.g. usable KV).
        hbm_label: that line's label.
        tr: English text -> the page's language (see :func:`kvplan_app.charts.style.english`).

    Raises:
        PlanInputError: from the model's estimate (bad format).
    """
    right = max_tokens or model.max_context_tokens or 1_000_000
    grid = context_grid(right)
    kv = np.array([model.estimate(int(n), kv_format).kv_bytes for n in grid], dtype=np.float64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=grid, y=kv / GB, mode="lines", name=plotly_text(model.name),
        customdata=np.stack([kv / GiB, kv], axis=-1),
        hovertemplate=tr("%{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB<br>%{customdata[1]:,.0f} B") + "<extra></extra>",
    ))
    if marker_tokens is not None:
        b = model.estimate(int(marker_tokens), kv_format).kv_bytes
        fig.add_trace(go.Scatter(
            x=[marker_tokens], y=[b / GB], mode="markers", name=tr("this plan"), marker=PLAN_MARKER, cliponaxis=False,
            customdata=[[b / GiB, b]], showlegend=False,
            hovertemplate=tr("this plan: %{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB") + "<extra></extra>",
        ))
        label_plan(fig, marker_tokens, b / GB, tr("this plan: {gb} GB ({gib} GiB) at {tokens} tokens").format(gb=format_figure(b / GB, 3), gib=format_figure(b / GiB, 3), tokens=f"{marker_tokens:,}"),
                   x_range=(float(grid.min()), float(grid.max())))
    if hbm_line_bytes is not None and hbm_line_bytes > 0:
        mark_y(fig, hbm_line_bytes / GB, f"{hbm_label} {hbm_line_bytes / GB:.4g} GB ({hbm_line_bytes / GiB:.4g} GiB)",
               line_dash="dash")
    fig.update_layout(
        xaxis=dict(type="log", title=tr("Context (tokens)"), **LOG_TICKS),
        yaxis=dict(title=tr("KV cache of one sequence (GB = 10^9 B)"), rangemode="tozero"),
        hovermode="closest", margin=dict(l=10, r=10, t=40, b=10), legend=LEGEND_ABOVE,
    )
    return fig


def kv_vs_context_models_figure(
    frame,
    *,
    hbm_lines: list[tuple[str, int]] = (),
    marker: tuple[int, int] | None = None,
    max_context_tokens: dict[str, int | None] | None = None,
    past_max: bool = False,
    log_y: bool = False,
    tr=english,
) -> go.Figure:
    """KV bytes of one sequence vs context (log x) for several models, each stopped at its maximum context.

    ``log_y``: a logarithmic y axis (GB and GiB). On a linear axis a small model's curve, a thousand times below a
    large one's, lies flat along zero; on a log axis every curve shows its shape.

    GB (10**9 B) on the left axis, GiB (2**30 B) on the right axis over the same
    range, both in the hover. Horizontal lines mark memory sizes (an
    accelerator's HBM, the usable KV after weights): where a curve crosses one,
    a single sequence stops fitting.

    Args:
        frame: rows with ``model, context_tokens, kv_bytes`` (see
            :func:`planner.frontier.kv_context_frame`).
        hbm_lines: (label, bytes) of each horizontal line.
        marker: (context tokens, kv bytes) of the current plan.
        max_context_tokens: model name -> its maximum context (None: unknown); the curve stops there.
        past_max: draw the rest of each curve, dashed, past the model's maximum.
        tr: English text -> the page's language (see :func:`kvplan_app.charts.style.english`).
    """
    fig = go.Figure()
    limits = max_context_tokens or {}
    shown = []
    for name, part in frame.groupby("model", sort=False, observed=True):
        limit = limits.get(str(name))
        pieces = [(part if not limit else part[part["context_tokens"] <= limit], "solid", plotly_text(name))]
        if limit and past_max:
            beyond = part[part["context_tokens"] >= part[part["context_tokens"] <= limit]["context_tokens"].max()]
            pieces.append((beyond, "dash", tr("{model} past its maximum ({tokens})").format(model=plotly_text(name), tokens=f"{limit:,}")))
        for piece, dash, label in pieces:
            if not len(piece):
                continue
            shown.append(piece)
            kv = piece["kv_bytes"].to_numpy(dtype=np.float64)
            fig.add_trace(go.Scatter(
                x=piece["context_tokens"], y=kv / GB, mode="lines", name=label, line=dict(dash=dash),
                legendgroup=str(name), showlegend=dash == "solid" or len(pieces) > 1,
                customdata=np.stack([kv / GiB, kv], axis=-1),
                hovertemplate=f"{label}<br>" + tr("%{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB<br>"
                                                  "%{customdata[1]:,.0f} B") + "<extra></extra>",
            ))
    top = max((float(p["kv_bytes"].max()) for p in shown), default=1.0)
    for label, num_bytes in hbm_lines:
        if num_bytes and num_bytes > 0:
            top = max(top, float(num_bytes))
            mark_y(fig, num_bytes / GB, f"{label}: {num_bytes / GB:.4g} GB ({num_bytes / GiB:.4g} GiB)", line_dash="dash")
    x_range = (float(frame["context_tokens"].min()), float(frame["context_tokens"].max())) if len(frame) else (1, 10)
    if marker is not None:
        gb, gib = marker[1] / GB, marker[1] / GiB
        mark_plan(fig, marker[0], gb,
                   tr("plan: {tokens} tokens, {gb} GB ({gib} GiB)").format(tokens=f"{marker[0]:,}", gb=f"{gb:.4g}",
                                                                         gib=f"{gib:.4g}"),
                   tr("this plan: {gb} GB ({gib} GiB)").format(gb=format_figure(gb, 3), gib=format_figure(gib, 3)),
                   log_x=True, log_y=False, x_range=x_range, tr=tr)
    y_max_gb = top * 1.08 / GB
    fig.add_trace(go.Scatter(x=[None], y=[None], yaxis="y2", showlegend=False, hoverinfo="skip"))
    if log_y:  # a log axis takes its range in log10 units; the GiB axis spans the same bytes
        positive = [float(v) for p in shown for v in p["kv_bytes"] if v > 0]
        lo_gb = (min(positive) if positive else top / 1e3) / 1.5 / GB
        y_range = [float(np.log10(lo_gb)), float(np.log10(y_max_gb * 1.2))]
        y2_range = [v + float(np.log10(GB / GiB)) for v in y_range]
        y_scale = dict(type="log", **LOG_COUNT_TICKS)
    else:
        y_range, y2_range, y_scale = [0, y_max_gb], [0, y_max_gb * GB / GiB], {}
    fig.update_layout(
        xaxis=dict(type="log", title=tr("Context (tokens)"), **LOG_TICKS),
        yaxis=dict(title=tr("KV cache of one sequence (GB = 10^9 B)"), range=y_range, **y_scale),
        yaxis2=dict(title="GiB = 2^30 B", overlaying="y", side="right", range=y2_range, showgrid=False, **y_scale),
        hovermode="closest", margin=dict(l=10, r=10, t=40, b=10), legend=LEGEND_ABOVE,
    )
    return fig


PLAN_FIGURE_TEXTS: dict[str, str] = {
    "x_title": "Context (tokens)",
    "y_title": "Sessions per GPU",
    "curve": "sessions per GPU",
    "past_max": "past the model's maximum",
    "model_max": "model maximum {tokens} tokens",
    "plan": "this plan: {sessions} at {tokens} tokens",
    "no_fit": "this plan: no session fits at {tokens} tokens",
    "hover": SESSIONS_HOVER,
    "plan_hover": "this plan: {tokens} tokens<br>{sessions} sessions per GPU<br>per session {gb} GB ({gib} GiB)",
    "plan_hover_one": "this plan: {tokens} tokens<br>{sessions} session per GPU<br>per session {gb} GB ({gib} GiB)",
}
"""Words of :func:`plan_sessions_figure` (English); a page passes its own language's."""


def plan_sessions_figure(frame, *, plan_context_tokens: int, plan_sessions: float, per_session_bytes: int,
                         max_context_tokens: int | None = None, title: str = "",
                         texts: dict[str, str] | None = None, separators: str = ".,",
                         localize=None) -> go.Figure:
    """Sessions per GPU vs context length for one plan (log x, log y), the plan marked and labelled.

    Solid up to the model's maximum context; where the frame goes past it (the
    plan's own context is longer), the rest is dashed and a vertical line marks
    the maximum. Lengths where no session fits (0) are left off the log axis.

    Args:
        frame: rows with ``context_tokens, sessions_per_gpu, per_session_bytes``
            (:func:`planner.plan.curves.sessions_by_context`).
        plan_context_tokens, plan_sessions, per_session_bytes: the plan's point.
        max_context_tokens: the model's maximum context (None: unknown).
        title: the y axis title (default ``texts["y_title"]``).
        texts: words by key of :data:`PLAN_FIGURE_TEXTS` (placeholders ``{tokens}``, ``{sessions}``).
        separators: plotly's decimal and thousands separators for ticks and hover (``",."`` in Spanish).
        localize: applied to labels with numbers (e.g. swapping separators); default: unchanged.
    """
    words = {**PLAN_FIGURE_TEXTS, **(texts or {})}
    loc = localize or (lambda text: text)
    ctx = frame["context_tokens"].to_numpy(dtype=np.int64)
    sessions = frame["sessions_per_gpu"].to_numpy(dtype=np.float64)
    per = frame["per_session_bytes"].to_numpy(dtype=np.float64)
    sessions = np.where(sessions > 0, sessions, np.nan)
    inside = ctx <= (max_context_tokens or ctx.max())
    hover = words["hover"] + "<extra></extra>"
    # the layout given whole to the constructor: update_layout walks every key path (about 4 ms a call)
    fig = go.Figure(layout=dict(
        xaxis=dict(type="log", title=words["x_title"], **LOG_TICKS),
        yaxis=dict(type="log", title=title or words["y_title"], **LOG_COUNT_TICKS),
        hovermode="closest", margin=dict(l=10, r=10, t=30, b=10), legend=LEGEND_ABOVE, height=280,
        separators=separators,
    ))
    for part, dash, name in ((inside, "solid", words["curve"]), (~inside, "dash", words["past_max"])):
        if not part.any():
            continue
        keep = part.copy()
        if dash == "dash":  # start the dashed part at the last solid point
            first = int(np.argmax(part))
            keep[max(first - 1, 0)] = True
        fig.add_trace(go.Scatter(x=ctx[keep], y=sessions[keep], mode="lines", name=name, line=dict(dash=dash),
                                 customdata=np.stack([per[keep] / GB, per[keep] / GiB], axis=-1),
                                 hovertemplate=hover, showlegend=dash == "dash"))
    if max_context_tokens and ctx.max() > max_context_tokens:
        mark_x(fig, max_context_tokens, log_x=True, line_dash="dot", line_color="#888",
               text=loc(words["model_max"].format(tokens=f"{max_context_tokens:,}")), position="top left")
    x_range = (float(ctx.min()), float(ctx.max()))
    if plan_sessions > 0:
        fig.add_trace(go.Scatter(
            x=[plan_context_tokens], y=[plan_sessions], mode="markers", name="this plan", marker=PLAN_MARKER,
            cliponaxis=False, showlegend=False,
            hovertemplate=loc(words["plan_hover_one" if plan_sessions == 1 else "plan_hover"].format(
                tokens=f"{plan_context_tokens:,}", sessions=format_sessions(plan_sessions),
                gb=f"{per_session_bytes / GB:.4g}", gib=f"{per_session_bytes / GiB:.4g}")) + "<extra></extra>"))
        label_plan(fig, plan_context_tokens, plan_sessions,
                   loc(words["plan"].format(sessions=format_sessions(plan_sessions), tokens=f"{plan_context_tokens:,}")),
                   y_log=True, x_range=x_range, below=True)
    else:
        legend_label(fig, loc(words["no_fit"].format(tokens=f"{plan_context_tokens:,}")))
    return fig


def recommend_figure(frame, *, by_cost: bool = False, tr=english) -> go.Figure:
    """Recommendations: total GPUs (or cost per hour) vs headroom, one marker per configuration, Pareto front joined,
    the recommended (first) row marked and labelled; the x axis is logarithmic when it spans a decade or more.

    Args:
        frame: :attr:`planner.recommend.Recommendation.frame` (its column contract).
        by_cost: x = cost per hour (rows without a price left out) instead of total GPUs.
        tr: English text -> the page's language (see :func:`kvplan_app.charts.style.english`).
    """
    x_col = "cost_per_hour" if by_cost else "total_gpus"
    data = frame[frame[x_col].notna()] if by_cost else frame
    positive = data[x_col][data[x_col] > 0]
    log_x = bool(len(positive)) and bool((positive > 0).all()) and float(positive.max()) >= 10 * float(positive.min())
    fig = go.Figure()
    for name, part in data.groupby("accelerator", sort=False, observed=True):
        text = [tr("{gpus} GPUs ({replicas} x {per_replica}), KV {kv_format}, attention {attention}").format(
                    gpus=f"{r.total_gpus:,}", replicas=f"{r.replicas:,}", per_replica=r.gpus_per_replica,
                    kv_format=tr(r.kv_format) if r.kv_format == "native" else r.kv_format,
                    attention=r.attention)
                for r in part.itertuples()]
        fig.add_trace(go.Scatter(x=part[x_col], y=part["headroom"] * 100, mode="markers", name=plotly_text(name), text=text,
                                 hovertemplate=tr("%{text}<br>headroom %{y:.1f}%") + "<extra>%{fullData.name}</extra>"))
    front = data[data["pareto"]].sort_values(x_col)
    if len(front):
        # a front of one configuration is a point: drawn as a ring, since a one-point line draws nothing
        fig.add_trace(go.Scatter(x=front[x_col], y=front["headroom"] * 100, mode="lines+markers",
                                 name=tr("Pareto front"), line={"dash": "dot", "color": "black"},
                                 marker={"symbol": "circle-open", "size": 12, "color": "black"}, hoverinfo="skip"))
    if len(data):  # the first row is the recommendation: marked and labelled like a plan on every chart
        best = data.iloc[0]
        fig.add_trace(go.Scatter(x=[best[x_col]], y=[best["headroom"] * 100], mode="markers", name=tr("recommended plan"),
                                 marker=PLAN_MARKER, cliponaxis=False, showlegend=False, hoverinfo="skip"))
        label_plan(fig, float(best[x_col]), float(best["headroom"] * 100),
                   tr("recommended plan: {gpus} GPUs").format(gpus=f"{int(best['total_gpus']):,}"), x_log=log_x,
                   x_range=(float(data[x_col].min()), float(data[x_col].max())))
    xs = sorted({float(v) for v in data[x_col] if v == v})
    ys = [float(v) * 100 for v in data["headroom"] if v == v]
    xaxis = dict(title=tr("Cost per hour") if by_cost else tr("Total GPUs"))
    if log_x:
        # under two decades a decade-only axis shows one tick (1,000 for rows from 200 to 2,000 GPUs): 1-2-5 then;
        # a little room each side keeps the end markers off the plot's edge (a log range is in log10 units)
        lo, hi = float(np.log10(xs[0])), float(np.log10(xs[-1]))
        xaxis.update(type="log", range=[lo - 0.05 * max(hi - lo, 1), hi + 0.05 * max(hi - lo, 1)],
                     **(dict(LOG_COUNT_TICKS, dtick="D2") if hi - lo < 2 else LOG_COUNT_TICKS))
    elif xs:
        # a few distinct values (often one: every row needs 8 GPUs): a tick at each, and room on both sides so that
        # no marker sits on the axis' edge and the one tick is not alone at the corner
        pad = max((xs[-1] - xs[0]) * 0.08, 0.5 if not by_cost else max(xs[-1] * 0.05, 0.01))
        xaxis.update(range=[xs[0] - pad, xs[-1] + pad], **(dict(tickvals=xs) if len(xs) <= 8 else {}))
    yaxis = dict(title=tr("Headroom over the target (%)"))
    if ys:  # a row at 0 % headroom sits above the x axis, not on it
        span = max(max(ys) - min(ys), 1.0)
        yaxis.update(range=[min(ys) - 0.08 * span, max(ys) + 0.08 * span])
    fig.update_layout(xaxis=xaxis, yaxis=yaxis, legend=dict(LEGEND_ABOVE, title=dict(text=tr("accelerator"))),
                      margin={"l": 60, "r": 20, "t": 30, "b": 50})
    return fig
