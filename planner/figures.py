"""Plotly figures built by pure functions (no Streamlit): inputs in, ``go.Figure`` out.

Every byte axis is in GB (10**9 B) with GiB (2**30 B) in the hover, labelled.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from planner.models import NATIVE, ModelSpec
from planner.units import GB, GiB

MIN_CURVE_TOKENS = 1_000
"""Left end of the GB-vs-context curve (1k tokens)."""


def context_grid(max_tokens: int, num_points: int = 60) -> np.ndarray:
    """Log-spaced whole token counts from 1k to ``max_tokens`` (inclusive), unique, sorted."""
    hi = max(int(max_tokens), MIN_CURVE_TOKENS + 1)
    grid = np.unique(np.round(np.geomspace(MIN_CURVE_TOKENS, hi, num_points)).astype(np.int64))
    return grid


def kv_vs_context_figure(
    model: ModelSpec,
    *,
    kv_format: str = NATIVE,
    max_tokens: int | None = None,
    marker_tokens: int | None = None,
    hbm_line_bytes: int | None = None,
    hbm_label: str = "",
) -> go.Figure:
    """KV bytes of one sequence vs context length (log x), GB on y, GiB in hover.

    Args:
        model: the model.
        kv_format: "native" or a format id.
        max_tokens: right end (default: the model's maximum context, else 1M).
        marker_tokens: a context length to mark (the current plan).
        hbm_line_bytes: draw a horizontal line at this many bytes (e.g. usable KV).
        hbm_label: that line's label.

    Raises:
        PlanInputError: from the model's estimate (bad format).
    """
    right = max_tokens or model.max_context_tokens or 1_000_000
    grid = context_grid(right)
    kv = np.array([model.estimate(int(n), kv_format).kv_bytes for n in grid], dtype=np.float64)
    fig = go.Figure()
    fig.add_trace(go.Scatter(
        x=grid, y=kv / GB, mode="lines", name=model.name,
        customdata=np.stack([kv / GiB, kv], axis=-1),
        hovertemplate="%{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB<br>%{customdata[1]:,.0f} B<extra></extra>",
    ))
    if marker_tokens is not None:
        b = model.estimate(int(marker_tokens), kv_format).kv_bytes
        fig.add_trace(go.Scatter(
            x=[marker_tokens], y=[b / GB], mode="markers", name="current plan",
            marker=dict(size=12, symbol="diamond"),
            customdata=[[b / GiB, b]],
            hovertemplate="plan: %{x:,} tokens<br>%{y:.4g} GB<br>%{customdata[0]:.4g} GiB<extra></extra>",
        ))
    if hbm_line_bytes is not None and hbm_line_bytes > 0:
        fig.add_hline(y=hbm_line_bytes / GB, line_dash="dash",
                      annotation_text=f"{hbm_label} {hbm_line_bytes / GB:.4g} GB ({hbm_line_bytes / GiB:.4g} GiB)")
    fig.update_layout(
        xaxis=dict(type="log", title="context (tokens)"),
        yaxis=dict(title="KV cache of one sequence (GB = 10^9 B)", rangemode="tozero"),
        hovermode="closest", margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h"),
    )
    return fig
