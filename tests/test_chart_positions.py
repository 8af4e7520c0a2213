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
    """(shape x0 values, annotation x values converted to data units) on a log x axis with xref 'x'."""
    assert fig.layout.xaxis.type == "log"
    shapes = [s.x0 for s in fig.layout.shapes if s.xref == "x"]
    labels = [10 ** a.x for a in fig.layout.annotations if a.xref == "x" and not a.showarrow]
    return shapes, labels


def test_usable_kv_line_and_label_at_64_gb():
    curve = pd.DataFrame({"capacity_blocks": [1, 10], "capacity_tokens": [512, 5120],
                          "capacity_bytes": [1e9, 1e10], "capacity_gb": [1.0, 10.0],
                          "capacity_gib": [1e9 / 2**30, 1e10 / 2**30],
                          "block_hit_rate": [0.1, 0.3], "token_hit_rate": [0.1, 0.3]})
    fig = capacity_curve_figure(curve, usable_kv_bytes=64e9)
    shapes, labels = _log_axis_positions(fig)
    assert shapes == [64.0]  # 64e9 B / 1e9 B per GB, in data units
    assert labels == [pytest.approx(64.0)]
    assert "64" in fig.layout.annotations[0].text


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
    assert len(labels) == 1 and math.isclose(labels[0], 4_096)
