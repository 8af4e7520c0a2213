"""Plotly figures for trace replays: pure functions from results to ``go.Figure``.

No series holds more than ``planner.traces.binning.MAX_CHART_POINTS`` points, whatever the trace's size
(per-request data is binned or enveloped here, before it is sent to a browser).
Capacities are shown in GB (10**9 B) with the GiB (2**30 B) figure under each
tick and in every hover; no binary figure is ever labelled GB.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from planner.traces.arrivals import Concurrency
from kvplan_app.charts.style import LEGEND_ABOVE, english, legend_label, mark_x, mark_y
from planner.traces.binning import coarser_minutes, envelope, log_histogram
from planner.plan.result import format_sessions
from planner.units import GB, GiB, format_bytes, format_number

_TOP_MARGIN = {"t": 100}


def _top_title(text: str) -> dict:
    """A title at the figure's top edge: the legend (above the plot) then fits between it and the plot, even on
    two rows in a half-width column, instead of covering the title."""
    return dict(text=text, yref="container", y=0.985, yanchor="top")
"""Room for a title and a legend row above the plot."""
_BLOCK_COLOR = "#636EFA"
_TOKEN_COLOR = "#EF553B"


def _nice_ticks(lo: float, hi: float) -> list[float]:
    """1-2-5 ticks covering [lo, hi] (lo > 0); powers of 10 only over more than 3 decades."""
    ticks = []
    mantissas = (1,) if hi / lo > 1e3 else (1, 2, 5)
    for k in range(math.floor(math.log10(lo)) - 1, math.ceil(math.log10(hi)) + 2):
        for m in mantissas:
            v = m * 10.0**k
            if lo <= v <= hi:
                ticks.append(v)
    return ticks


def _gb_gib_ticktext(gb: float) -> str:
    return f"{format_number(gb)} GB<br>{format_number(gb * GB / GiB)} GiB"


def capacity_curve_figure(curve: pd.DataFrame, *, usable_kv_bytes: float | None = None,
                          usable_label: str = "this plan's usable KV", title: str = "Prefix-cache hit rate vs cache capacity",
                          tr=english) -> go.Figure:
    """Hit rate (block- and token-weighted) against capacity, log scale.

    Args:
        curve: DataFrame with ``planner.traces.stack.CURVE_COLUMNS``. When its
            ``capacity_bytes`` are known, the x axis is capacity in GB with
            GiB under each tick; otherwise capacity in blocks.
        usable_kv_bytes: marks this capacity (e.g. the plan's usable KV per
            GPU) with a vertical line, when bytes are known.
        usable_label: the line's label ("usable KV on H200").
        title: figure title (English; shown through ``tr``).
        tr: English text -> the page's language (see :func:`kvplan_app.charts.style.english`).

    Returns:
        A figure with two line traces ("token-weighted", "block-weighted").
    """
    fig = go.Figure()
    has_bytes = bool(curve["capacity_bytes"].notna().all()) and len(curve) > 0
    data = curve[curve["capacity_blocks"] > 0]
    x = data["capacity_gb"] if has_bytes else data["capacity_blocks"]
    custom = np.column_stack([data["capacity_blocks"], data["capacity_gb"], data["capacity_gib"],
                              data["capacity_tokens"]])
    hover = (tr("%{customdata[0]:,} blocks · %{customdata[3]:,} tokens") + "<br>"
             + ("%{customdata[1]:.4g} GB (%{customdata[2]:.4g} GiB)<br>" if has_bytes else "")
             + tr("hit rate %{y:.1%}") + "<extra>%{fullData.name}</extra>")
    for col, name, color in (("token_hit_rate", "token-weighted", _TOKEN_COLOR),
                             ("block_hit_rate", "block-weighted", _BLOCK_COLOR)):
        fig.add_trace(go.Scatter(x=x, y=data[col], mode="lines", name=tr(name), line={"color": color, "shape": "hv"},
                                 customdata=custom, hovertemplate=hover))
    xaxis: dict = {"type": "log", "title": tr("cache capacity (GB = 10^9 B; GiB = 2^30 B below)") if has_bytes
                   else tr("cache capacity (blocks)")}
    if has_bytes and len(data):
        lo, hi = float(data["capacity_gb"].min()), float(data["capacity_gb"].max())
        if usable_kv_bytes is not None and usable_kv_bytes > 0:
            lo, hi = min(lo, usable_kv_bytes / GB), max(hi, usable_kv_bytes / GB)
        ticks = _nice_ticks(lo, hi)
        xaxis.update(tickvals=ticks, ticktext=[_gb_gib_ticktext(t) for t in ticks])
    fig.update_layout(title=_top_title(tr(title)), xaxis=xaxis, yaxis={"title": tr("Hit rate"), "tickformat": ".0%", "range": [0, 1]},
                      legend=LEGEND_ABOVE, margin=_TOP_MARGIN)
    if has_bytes and usable_kv_bytes is not None and usable_kv_bytes > 0:
        # The label sits high on the line's left: the curves rise with capacity, so above them left of the line
        # (less capacity, a lower hit rate) is empty.
        mark_x(fig, usable_kv_bytes / GB, log_x=True, line_dash="dash", line_color="#444",
               text=f"{tr(usable_label)}: {format_bytes(usable_kv_bytes)}", position="top left")
    return fig


def _ttl_label(ttl_s: float, tr=english) -> str:
    if math.isinf(ttl_s):
        return tr("no TTL")
    if ttl_s >= 60 and ttl_s % 60 == 0:
        return f"{ttl_s / 60:g} min"
    return f"{ttl_s:g} s"


def ttl_curve_figure(ttl_df: pd.DataFrame, *, title: str = "Prefix-cache hit rate vs TTL",
                     plan_ttl_s: float | None = None, tr=english) -> go.Figure:
    """Hit rate against TTL (one category per TTL, "no TTL" last), the plan's TTL marked.

    Args:
        ttl_df: DataFrame with ``planner.traces.stack.TTL_CURVE_COLUMNS``.
        plan_ttl_s: the TTL in use (``inf``: no TTL), marked and labelled when it is one of the rows.
    """
    labels = [_ttl_label(float(t), tr) for t in ttl_df["ttl_s"]]
    fig = go.Figure()
    for col, name, color in (("token_hit_rate", "token-weighted", _TOKEN_COLOR),
                             ("block_hit_rate", "block-weighted", _BLOCK_COLOR)):
        fig.add_trace(go.Scatter(x=labels, y=ttl_df[col], mode="lines+markers", name=tr(name), line={"color": color},
                                 hovertemplate="TTL %{x}: %{y:.1%}<extra>%{fullData.name}</extra>"))
    plan_label = None if plan_ttl_s is None else _ttl_label(float(plan_ttl_s), tr)
    if plan_label in labels:
        mark_x(fig, labels.index(plan_label), log_x=False, text=tr("this plan: {ttl}").format(ttl=plan_label),
               line_dash="dash", line_color="#444")
    fig.update_layout(title=_top_title(tr(title)), xaxis={"title": tr("TTL (entries unused this long expire)"), "type": "category"},
                      yaxis={"title": tr("Hit rate"), "tickformat": ".0%", "range": [0, 1]},
                      legend=LEGEND_ABOVE, margin=_TOP_MARGIN)
    return fig


def concurrency_figure(conc: Concurrency, *, title: str = "Concurrent requests, whole trace (estimated)",
                       plan_sessions: int | None = None, plan_gpus_per_replica: int = 1, tr=english) -> go.Figure:
    """Requests in flight over time, a step line (x in minutes since the first arrival; enveloped to at most
    ``MAX_CHART_POINTS`` points, every peak kept).

    Args:
        plan_sessions: the plan's sessions per replica, drawn as a labelled line (what one replica of
            ``plan_gpus_per_replica`` GPUs holds): the trace's requests are all its traffic, so the line is a
            replica's share, never one GPU's fraction of it.
    """
    f = conc.frame.iloc[envelope(conc.frame["concurrent_requests"].to_numpy())]
    fig = go.Figure(go.Scatter(x=f["time_s"] / 60, y=f["concurrent_requests"], mode="lines", line={"shape": "hv"},
                               name=tr("requests in flight"),
                               hovertemplate=tr("%{x:.2f} min: %{y} requests") + "<extra></extra>"))
    mark_y(fig, conc.mean_concurrent_requests, tr("mean {value}").format(value=f"{conc.mean_concurrent_requests:.1f}"),
           line_dash="dot")
    if plan_sessions is not None:
        mark_y(fig, plan_sessions, tr("one replica of this plan ({gpus} GPUs): {sessions} sessions").format(
            gpus=f"{plan_gpus_per_replica:,}", sessions=format_sessions(plan_sessions)), line_dash="dash",
            line_color="#444")
    fig.update_layout(title=_top_title(tr(title)), xaxis={"title": tr("Time since first arrival (min)")},
                      yaxis={"title": tr("requests in flight")}, legend=LEGEND_ABOVE, margin=_TOP_MARGIN)
    return fig


def cache_bytes_figure(timeline: pd.DataFrame, *, capacity_bytes: float | None = None,
                       title: str = "Prefix-cache contents over time", tr=english) -> go.Figure:
    """Cache occupancy just after each arrival, in GB (GiB in the hover), with the capacity line.

    Args:
        timeline: ``ReplayResult.timeline`` (``planner.traces.replay.TIMELINE_COLUMNS``);
            in blocks when its ``cache_bytes`` are NaN.
        capacity_bytes: the cache size to mark, bytes (or None).

    Enveloped to at most ``MAX_CHART_POINTS`` points (every peak kept).
    """
    has_bytes = bool(timeline["cache_bytes"].notna().all()) and len(timeline) > 0
    timeline = timeline.iloc[envelope(timeline["cache_blocks"].to_numpy())]
    x = timeline["arrival_s"] / 60
    if has_bytes:
        y = timeline["cache_bytes"] / GB
        custom = np.column_stack([timeline["cache_bytes"] / GiB, timeline["cache_blocks"]])
        hover = tr("%{x:.2f} min: %{y:.4g} GB (%{customdata[0]:.4g} GiB), %{customdata[1]:,} blocks") + "<extra></extra>"
        ytitle = tr("cache contents (GB = 10^9 B)")
    else:
        y = timeline["cache_blocks"]
        custom = None
        hover = tr("%{x:.2f} min: %{y:,} blocks") + "<extra></extra>"
        ytitle = tr("cache contents (blocks)")
    fig = go.Figure(go.Scatter(x=x, y=y, mode="lines", line={"shape": "hv"}, customdata=custom,
                               hovertemplate=hover, name=tr("cache")))
    if has_bytes and capacity_bytes is not None and math.isfinite(capacity_bytes):
        mark_y(fig, capacity_bytes / GB, tr("this plan's usable KV") + f": {format_bytes(capacity_bytes)}",
               line_dash="dash")
    fig.update_layout(title=_top_title(tr(title)), xaxis={"title": tr("time since first arrival (min)")}, yaxis={"title": ytitle},
                      legend=LEGEND_ABOVE, margin=_TOP_MARGIN)
    return fig


def arrivals_figure(per_minute: pd.DataFrame, *, title: str = "Arrivals per minute",
                    plan_requests_per_min: float | None = None, tr=english) -> go.Figure:
    """Requests per minute (bars), the plan's request rate per GPU as a labelled line; past ``MAX_CHART_POINTS``
    minutes, requests per run of ``k`` whole minutes (the axis and title say how many).

    Args:
        per_minute: DataFrame with ``planner.traces.arrivals.ARRIVAL_COLUMNS``.
        plan_requests_per_min: the plan's request rate per GPU, per minute (None: undefined).
    """
    per_minute, k = coarser_minutes(per_minute)
    if k == 1:
        hover, y_title = tr("minute %{x}: %{y:,} requests"), tr("requests")
        plan_text = tr("this plan: {rate} requests/min per GPU")
        title = tr(title)
    else:
        hover = tr("from minute %{x}: %{y:,} requests in {k} minutes").replace("{k}", str(k))
        y_title = tr("requests per {k} minutes").replace("{k}", str(k))
        plan_text = tr("this plan: {rate} requests per {k} minutes per GPU").replace("{k}", str(k))
        title = tr(title) + " (" + tr("per {k} minutes").replace("{k}", str(k)) + ")"
    fig = go.Figure(go.Bar(x=per_minute["minute"], y=per_minute["requests"], name=tr("requests"),
                           hovertemplate=hover + "<extra></extra>"))
    if plan_requests_per_min is not None and math.isfinite(plan_requests_per_min):
        mark_y(fig, plan_requests_per_min * k, plan_text.format(rate=f"{plan_requests_per_min * k:,.4g}"),
               line_dash="dash", line_color="#444")
    fig.update_layout(title=_top_title(title), xaxis={"title": tr("minute since first arrival")}, yaxis={"title": y_title},
                      legend=LEGEND_ABOVE, margin=_TOP_MARGIN)
    return fig


def lengths_figure(input_tokens: np.ndarray, output_tokens: np.ndarray, *,
                   title: str = "Prompt and output lengths", plan_context_tokens: int | None = None,
                   tr=english) -> go.Figure:
    """Histograms of prompt and output tokens per request (50 log-spaced bins each, counted on the server), the
    plan's context marked.

    Args:
        plan_context_tokens: the plan's context per session, drawn as a labelled vertical line.
    """
    fig = go.Figure()
    for values, name in ((np.asarray(input_tokens), "prompt tokens"), (np.asarray(output_tokens), "output tokens")):
        bins = log_histogram(values)
        if bins.empty:
            continue
        lo, hi = bins["log10_lo"].to_numpy(), bins["log10_hi"].to_numpy()
        fig.add_trace(go.Bar(x=(lo + hi) / 2, y=bins["count"], width=hi - lo, name=tr(name), opacity=0.6,
                             customdata=np.column_stack([10**lo, 10**hi]),
                             hovertemplate=tr("%{customdata[0]:,.0f} to %{customdata[1]:,.0f} tokens: %{y:,} requests")
                                           + "<extra>%{fullData.name}</extra>"))
    ticks = [1, 10, 100, 1_000, 10_000, 100_000, 1_000_000]
    fig.update_layout(title=_top_title(tr(title)), barmode="overlay",
                      xaxis={"title": tr("Tokens per request (log scale)"), "tickvals": np.log10(ticks).tolist(),
                             "ticktext": [f"{t:,}" for t in ticks]},
                      yaxis={"title": tr("Requests")}, legend=LEGEND_ABOVE, margin=_TOP_MARGIN)
    if plan_context_tokens:
        mark_x(fig, math.log10(plan_context_tokens), log_x=False,
               text=tr("this plan: {tokens} tokens").format(tokens=f"{plan_context_tokens:,}"), line_dash="dash",
               line_color="#444")
    return fig


_ROUTING_COLORS = {"random": "#636EFA", "round-robin": "#AB63FA", "session": "#00CC96", "prefix": "#EF553B"}


def fleet_figure(table: pd.DataFrame, *, title: str = "Token hit rate vs replicas, by routing",
                 plan_hit_rate: float | None = None, tr=english) -> go.Figure:
    """Aggregate token hit rate against the number of replicas, one line per routing policy.

    Args:
        table: DataFrame with ``planner.traces.fleet.FLEET_COLUMNS``.
        title: figure title.
        plan_hit_rate: the plan's prefix hit rate (0-1), drawn as a labelled line.

    Returns:
        One line trace per routing policy; x is replicas on a log2 axis, y the
        token-weighted hit rate in percent; the hover adds the block hit rate
        and the load imbalance (max / mean requests per replica).
    """
    fig = go.Figure()
    for routing, rows in table.groupby("routing", sort=False):
        rows = rows.sort_values("replicas")
        fig.add_trace(go.Scatter(
            x=rows["replicas"], y=rows["token_hit_rate"] * 100, mode="lines+markers", name=str(routing),
            line={"color": _ROUTING_COLORS.get(str(routing))},
            customdata=np.column_stack([rows["block_hit_rate"] * 100, rows["load_imbalance"], rows["method"]]),
            hovertemplate=(tr("%{x} replicas: token hit rate %{y:.1f}%, block %{customdata[0]:.1f}%<br>"
                              "load imbalance %{customdata[1]:.3f} (max / mean requests), %{customdata[2]}")
                           + f"<extra>{routing}</extra>")))
    if plan_hit_rate is not None:
        mark_y(fig, plan_hit_rate * 100, tr("this plan's hit rate: {hit_rate}").format(hit_rate=f"{plan_hit_rate:.2f}"),
               line_dash="dash", line_color="#444")
    fig.update_layout(title=_top_title(tr(title)), xaxis_title=tr("Replicas (each with the cache size)"),
                      yaxis_title=tr("Token hit rate (%)"), legend_title=tr("routing"), hovermode="closest",
                      legend=LEGEND_ABOVE, margin=_TOP_MARGIN)
    fig.update_xaxes(type="log", dtick=math.log10(2), tickformat="d")
    fig.update_yaxes(rangemode="tozero")
    return fig
