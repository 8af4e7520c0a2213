"""Lines and labels on log axes land at their values.

plotly.js places a shape on a log axis in data units (``src/components/shapes/helpers.js``:
``shapePositionToRange`` returns the axis' ``d2r``, which takes log10) but an annotation in log10 units
(plotly's layout reference, ``annotations.x``: "If the axis `type` is 'log', then you must take the log of
your desired range"). So, on a log axis, a line at 64 GB has ``x0 = 64`` and its label ``x = log10(64)``.
Before, the Traces page drew the plan's usable-KV line at ``x0 = log10(64.5) = 1.81`` (shown at 1.8 GB) and
every model-maximum label at ``x = 4096`` (10^4096, off the chart).
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from kvplan_app.charts.figures import plan_sessions_figure
from kvplan_app.charts.frontier import request_rate_figure, sessions_vs_context_figure
from kvplan_app.charts.traces import capacity_curve_figure


def _log_axis_positions(fig):
    """(shape x0 values, legend names of those shapes) on a log x axis with xref 'x'."""
    assert fig.layout.xaxis.type == "log"
    shapes = [s.x0 for s in fig.layout.shapes if s.xref == "x"]
    labels = [s.name for s in fig.layout.shapes if s.xref == "x" and s.name and s.showlegend]
    return shapes, labels


def test_usable_kv_line_and_label_at_64_gb():
    curve = pd.DataFrame({"capacity_blocks": [1, 10], "capacity_tokens": [512, 5120],
                          "capacity_bytes": [1e9, 1e10], "capacity_gb": [1.0, 10.0],
                          "capacity_gib": [1e9 / 2**30, 1e10 / 2**30],
                          "block_hit_rate": [0.1, 0.3], "token_hit_rate": [0.1, 0.3]})
    fig = capacity_curve_figure(curve, usable_kv_bytes=64e9)
    shapes, labels = _log_axis_positions(fig)
    assert shapes == [64.0]  # 64e9 B / 1e9 B per GB, in data units
    assert len(labels) == 1 and "64" in labels[0]  # named in the legend, not written on the plot


_FRAME = pd.DataFrame({"accelerator": ["H200"] * 3, "context_tokens": [1_024, 4_096, 1_000_000],
                       "sessions_per_gpu": [100.0, 25.0, 0.1], "per_session_bytes": [1e8, 4e8, 1e11],
                       "request_rate_per_s": [10.0, 2.5, 0.01], "rate_limit": ["kv"] * 3, "ttft_s": [0.1] * 3})


@pytest.mark.parametrize("build", [
    lambda: sessions_vs_context_figure(_FRAME, max_context_tokens=4_096),
    lambda: request_rate_figure(_FRAME, max_context_tokens=4_096),
    lambda: plan_sessions_figure(_FRAME, plan_context_tokens=1_024, plan_sessions=100.0, per_session_bytes=10**8,
                                 max_context_tokens=4_096),
], ids=["sessions_vs_context", "request_rate", "plan_sessions"])
def test_model_maximum_line_and_label_at_4096_tokens(build):
    # DeepSeek LLM 67B's max_position_embeddings is 4,096 (its config.json); the curves run to 1M dashed.
    shapes, labels = _log_axis_positions(build())
    assert shapes == [4_096]
    assert len(labels) == 1 and "4,096" in labels[0]


# ---------------------------------------------------------------------------
# No label on the plot: every label is in the legend, above the plot area
# ---------------------------------------------------------------------------
# A label drawn on the plot (an annotation beside a line or a point) sits on an axis or a curve at some width: at
# 1,280 px the Plan chart's "this plan: ..." box covered its own curve, the Traces lines' labels crossed the step
# line, Recommend's label hid its only tick. Each figure below must draw no annotation inside its plot area, and
# put every label in a legend that sits outside it (above: y > 1, or right: x > 1).


def _small_trace():
    from planner.traces.readers import Trace
    import numpy as np

    arrival = np.arange(200, dtype=np.float64) * 3.0
    return Trace(name="t", format="azure", block_tokens=None, arrival_s=arrival,
                 input_tokens=np.full(200, 4_000), output_tokens=np.full(200, 200))


def _figures():
    from kvplan_app.charts.figures import kv_vs_context_models_figure, recommend_figure
    from kvplan_app.charts.frontier import sessions_heatmap_figure, sessions_vs_hit_rate_figure
    from kvplan_app.charts.traces import (arrivals_figure, concurrency_figure, lengths_figure,
                                          ttl_curve_figure)
    from planner.catalog.entries import get_model
    from planner.frontier import kv_context_frame
    from planner.traces import arrivals_per_minute, concurrency

    trace = _small_trace()
    hit = pd.DataFrame({"accelerator": ["H200"] * 3, "context_tokens": [4_096] * 3, "hit_rate": [0.0, 0.5, 1.0],
                        "sessions_per_gpu": [10.0, 20.0, 40.0], "per_session_bytes": [1e8, 5e7, 2.5e7],
                        "request_rate_per_s": [1.0, 2.0, 4.0], "rate_limit": ["kv"] * 3, "ttft_s": [0.1] * 3})
    heat = pd.DataFrame({"accelerator": ["H200"] * 4, "context_tokens": [1_024, 1_024, 4_096, 4_096],
                         "hit_rate": [0.0, 1.0, 0.0, 1.0], "sessions_per_gpu": [100.0, 200.0, 25.0, 50.0]})
    rec = pd.DataFrame({"accelerator": ["H200", "H200"], "total_gpus": [8, 8], "replicas": [1, 1],
                        "gpus_per_replica": [8, 8], "kv_format": ["native", "fp8"], "attention": ["tp", "dp"],
                        "headroom": [0.0, 0.4], "pareto": [True, True], "cost_per_hour": [None, None]})
    return {
        "plan": plan_sessions_figure(_FRAME, plan_context_tokens=1_024, plan_sessions=100.0, per_session_bytes=10**8,
                                     max_context_tokens=4_096),
        "frontier_context": sessions_vs_context_figure(_FRAME, plan_point=(1_024, 100), max_context_tokens=4_096),
        "frontier_rate": request_rate_figure(_FRAME, plan_point=(1_024, 10.0), max_context_tokens=4_096),
        "frontier_hit": sessions_vs_hit_rate_figure(hit, plan_point=(0.5, 20), context_tokens=4_096),
        "frontier_heat": sessions_heatmap_figure(heat, plan_point=(0.5, 1_024), plan_sessions=150.0),
        "frontier_beyond": sessions_vs_context_figure(_FRAME, plan_point=(10_000_000, 1), max_context_tokens=4_096),
        "traces_concurrency": concurrency_figure(concurrency(trace, session_decode_tokens_per_s=50),
                                                 plan_sessions=143, plan_gpus_per_replica=8),
        "traces_arrivals": arrivals_figure(arrivals_per_minute(trace), plan_requests_per_min=30.0),
        "traces_lengths": lengths_figure(trace.input_tokens, trace.output_tokens, plan_context_tokens=8_000),
        "traces_capacity": capacity_curve_figure(pd.DataFrame({
            "capacity_blocks": [1, 10], "capacity_tokens": [512, 5120], "capacity_bytes": [1e9, 1e10],
            "capacity_gb": [1.0, 10.0], "capacity_gib": [1e9 / 2**30, 1e10 / 2**30], "block_hit_rate": [0.1, 0.3],
            "token_hit_rate": [0.1, 0.3]}), usable_kv_bytes=5e9),
        "recommend_one_tick": recommend_figure(rec),
        "gb_vs_context": kv_vs_context_models_figure(
            kv_context_frame([get_model("llama-3.1-8b"), get_model("llama-3.1-405b")], [1_000, 100_000]),
            hbm_lines=[("H200", 150e9)], log_y=True),
    }


FIGURES = ["plan", "frontier_context", "frontier_rate", "frontier_hit", "frontier_heat", "frontier_beyond",
           "traces_concurrency", "traces_arrivals", "traces_lengths", "traces_capacity", "recommend_one_tick",
           "gb_vs_context"]


@pytest.mark.parametrize("name", FIGURES)
def test_no_label_is_drawn_on_the_plot(name):
    fig = _figures()[name]
    inside = [a.text for a in fig.layout.annotations
              if not (a.xref == "paper" and a.yref == "paper" and (a.y > 1 or a.x > 1))]
    assert not inside, inside
    legend = fig.layout.legend
    named = [t.name for t in fig.data if t.name and t.showlegend] + [s.name for s in fig.layout.shapes if s.showlegend]
    if named:
        assert fig.layout.showlegend is not False
        assert (legend.y is not None and legend.y > 1 and legend.yanchor == "bottom") or \
            (legend.x is None or legend.x > 1), (legend.x, legend.y)


def test_recommend_markers_sit_inside_the_axes():
    # every row needs 8 GPUs (one tick) and the first has 0 % headroom: before, its marker sat on the x axis line
    # and the lone tick at the corner; now the ranges leave room on every side and the tick is at 8
    fig = _figures()["recommend_one_tick"]
    x0, x1 = fig.layout.xaxis.range
    y0, y1 = fig.layout.yaxis.range
    assert x0 < 8 < x1 and y0 < 0 < 40 < y1
    assert list(fig.layout.xaxis.tickvals) == [8.0]


def test_gb_vs_context_log_axis_shows_the_smallest_model():
    # Llama 3.1 8B: 131,072 B/token (32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B, its config.json) = 0.131 GB
    # at 1,000 tokens; 405B: 516,096 B/token (126 x 8 x 128 x 2 x 2 B) = 0.516 GB there, 51.6 GB at 100,000
    # tokens. On a linear axis up to ~150 GB the 8B's 0.131 GB is 0.09 % of the height: flat along zero.
    fig = _figures()["gb_vs_context"]
    assert fig.layout.yaxis.type == "log" and fig.layout.yaxis2.type == "log"
    lo, hi = fig.layout.yaxis.range
    assert 10 ** lo < 0.131 < 150 < 10 ** hi
    lo2, hi2 = fig.layout.yaxis2.range  # the GiB axis spans the same bytes
    assert math.isclose(10 ** lo2 * 2**30, 10 ** lo * 1e9, rel_tol=1e-9)


def test_recommend_log_axis_under_two_decades_has_more_than_one_tick():
    # rows from 200 to 2,000 GPUs: a decade-only log axis labels 1,000 alone; 1-2-5 ticks label 200, 500, 1,000, 2,000
    from kvplan_app.charts.figures import recommend_figure

    rec = pd.DataFrame({"accelerator": ["B200", "B200"], "total_gpus": [200, 2_000], "replicas": [25, 250],
                        "gpus_per_replica": [8, 8], "kv_format": ["fp8", "fp8"], "attention": ["tp", "tp"],
                        "headroom": [0.0, 0.02], "pareto": [True, False], "cost_per_hour": [None, None]})
    fig = recommend_figure(rec)
    assert fig.layout.xaxis.type == "log" and fig.layout.xaxis.dtick == "D2"
    lo, hi = fig.layout.xaxis.range
    assert 10 ** lo < 200 and 2_000 < 10 ** hi
