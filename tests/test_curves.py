"""One plan along context (planner.plan.curves) and the charts that read at the plan (kvplan_app.charts.figures,
kvplan_app.charts.frontier).

Golden values: DeepSeek V4.1-Flash stores 890 B per token (its model card). 100 GiB all for KV
(107,374,182,400 B), hit rate 0.5, no output tokens, one GPU:

* 1,000,000 tokens: prefix 500,000 x 890 = 445,000,000 B stored once, tail 445,000,000 B per session:
  (107,374,182,400 - 445,000,000) // 445,000,000 = 240 sessions;
* 500,000 tokens: prefix and tail 250,000 x 890 = 222,500,000 B: (107,374,182,400 - 222,500,000) // 222,500,000
  = 481 sessions.
"""

from __future__ import annotations

import numpy as np
import pytest

from planner.plan.curves import MAX_CURVE_POINTS, curve_contexts, memory_inputs, sessions_by_context
from planner.errors import PlanInputError
from kvplan_app.charts.figures import kv_vs_context_models_figure, plan_sessions_figure
from kvplan_app.charts.frontier import sessions_heatmap_figure, sessions_vs_context_figure
from planner.catalog.entries import get_model
from planner.frontier import context_axis, frontier_grid, hit_rate_axis, kv_context_frame
from planner.plan import make_inputs

LINK = dict(model_id="deepseek-v4.1-flash", gpu_id="h200", gpus_per_replica=1, hbm_gib=100.0,
            gpu_memory_utilization=1.0, reserve_gib=0.0, weights_gib=0.0, output_tokens=0, hit_rate=0.5, shared_prefix=0.5)


def test_the_curve_passes_through_hand_derived_plans():
    frame = sessions_by_context(make_inputs(**LINK, context_tokens=1_000_000), [500_000, 1_000_000])
    assert frame["sessions_per_gpu"].tolist() == [481, 240]
    assert frame["per_session_bytes"].tolist() == [222_500_000, 445_000_000]
    assert np.isnan(frame["request_rate_per_s"]).all()  # no output tokens: undefined, never 0


@pytest.mark.parametrize("hit_rate", [0.0, 0.37, 0.9, 1.0])
def test_the_hit_rate_never_moves_the_memory_curve(hit_rate):
    # The sessions above (481, 240) are priced from the shared prefix and the tail alone: the hit rate is no term of
    # them, so every hit rate gives the same memory columns, and memory_inputs (the Plan page's cache key) too.
    inputs = make_inputs(**{**LINK, "hit_rate": hit_rate}, context_tokens=1_000_000,
                         figures_measured_at_tokens=800_000)
    frame = sessions_by_context(inputs, [500_000, 1_000_000])
    assert frame["sessions_per_gpu"].tolist() == [481, 240]
    key = memory_inputs(inputs)
    assert (key.hit_rate, key.figures_measured_at_tokens) == (0.0, None)
    assert key.model_copy(update={"hit_rate": hit_rate, "figures_measured_at_tokens": 800_000}) == inputs


@pytest.mark.parametrize("engine", [None, "vllm", "sglang"])
@pytest.mark.parametrize("attention", ["tp", "dp"])
def test_memory_inputs_keep_every_memory_column(engine, attention):
    # Under an engine's admission, on 8 GPUs, with output tokens: the curve's memory columns at hit rate 0.8 are
    # those of memory_inputs (hit rate 0), which is what the page's cached chart draws.
    inputs = make_inputs(model_id="deepseek-v4.1-flash", gpu_id="h200", gpus_per_replica=8, engine=engine,
                         attention_parallelism=attention, output_tokens=2_000, hit_rate=0.8, shared_prefix=0.3,
                         context_tokens=400_000)
    contexts = curve_contexts(1_000_000, include=[400_000])
    given, keyed = sessions_by_context(inputs, contexts), sessions_by_context(memory_inputs(inputs), contexts)
    for column in ("sessions_per_gpu", "sessions_per_replica", "per_session_bytes"):
        assert given[column].tolist() == keyed[column].tolist(), column
    assert given["sessions_per_gpu"].max() > 0


def test_curve_inputs_are_bounded():
    inputs = make_inputs(**LINK, context_tokens=1_000_000)
    with pytest.raises(PlanInputError, match="contexts"):
        sessions_by_context(inputs, np.arange(1, MAX_CURVE_POINTS + 2))
    with pytest.raises(PlanInputError, match="contexts"):
        sessions_by_context(inputs, [0])
    assert curve_contexts(100_000, num_points=3, include=[4_096]).tolist() == [1_000, 4_096, 10_000, 100_000]


def _legend(fig) -> list[str]:
    """What the legend says: named traces and named shapes shown in it."""
    return ([t.name for t in fig.data if t.name and t.showlegend is not False]
            + [s.name for s in fig.layout.shapes if s.name and s.showlegend])


def test_plan_chart_is_log_log_and_labels_the_plan():
    frame = sessions_by_context(make_inputs(**LINK, context_tokens=1_000_000), [1_000, 500_000, 1_000_000])
    fig = plan_sessions_figure(frame, plan_context_tokens=1_000_000, plan_sessions=240,
                               per_session_bytes=445_000_000, max_context_tokens=1_048_576)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    # the label is in the legend (above the plot), never an annotation on the curve or the axis
    assert not fig.layout.annotations
    assert "this plan: 240 at 1,000,000 tokens" in _legend(fig)
    assert fig.layout.legend.y > 1  # above the plot: never over an axis
    diamond = [t for t in fig.data if t.mode == "markers" and t.x[0] is not None and t.marker.symbol == "diamond"]
    assert len(diamond) == 1 and diamond[0].cliponaxis is False  # the diamond is never half clipped


def test_plan_chart_dashes_past_the_models_maximum():
    frame = sessions_by_context(make_inputs(**LINK, context_tokens=8_000), [1_000, 4_096, 8_000])
    fig = plan_sessions_figure(frame, plan_context_tokens=8_000, plan_sessions=1, per_session_bytes=1,
                               max_context_tokens=4_096)
    dashes = [t.line.dash for t in fig.data if t.mode == "lines"]
    assert dashes == ["solid", "dash"]
    assert any("model maximum 4,096 tokens" in name for name in _legend(fig))


def test_frontier_lines_stop_at_the_models_maximum_and_heatmap_is_log_coloured():
    base = make_inputs(**LINK, context_tokens=4_000)
    grid = frontier_grid(base, ["h200"], context_axis(1_000_000, 8, include=[4_000]), hit_rate_axis(5))
    fig = sessions_vs_context_figure(grid.frame(hit=[grid.nearest_hit_rate(0.5)]), plan_point=(4_000, 10),
                                     max_context_tokens=4_096)
    assert max(fig.data[0].x) <= 4_096
    heat = sessions_heatmap_figure(grid.frame(gpu=[0]), plan_point=(0.5, 4_000), plan_sessions=10)
    z = heat.data[0].z
    sessions = heat.data[0].customdata
    assert np.allclose(np.power(10.0, z[np.isfinite(z)]), sessions[np.isfinite(z)])
    assert heat.data[0].colorbar.ticktext[:3] == ("1", "10", "100")
    assert "this plan: 10" in _legend(heat) and not heat.layout.annotations


def test_gb_vs_context_curves_stop_at_each_models_maximum():
    # DeepSeek LLM 67B: max context 4,096 tokens (its config.json); the frame runs to 1M
    frame = kv_context_frame([get_model("deepseek-llm-67b")], [1_000, 4_096, 1_000_000])
    fig = kv_vs_context_models_figure(frame, max_context_tokens={"DeepSeek LLM 67B (\"DeepSeek-V1\")": 4_096})
    assert max(fig.data[0].x) == 4_096
    past = kv_vs_context_models_figure(frame, max_context_tokens={"DeepSeek LLM 67B (\"DeepSeek-V1\")": 4_096},
                                       past_max=True)
    assert [t.line.dash for t in past.data if t.name] == ["solid", "dash"]


CURVE_VARIANTS = [
    dict(model_id="deepseek-v4.1-flash", gpu_id="h200"),
    dict(model_id="gemma-3-27b", gpu_id="h100-sxm", engine="vllm", output_tokens=1_000),  # sliding windows, admission
    dict(model_id="gpt-oss-120b", gpu_id="h200", gpus_per_replica=2, engine="sglang"),
    dict(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=8, attention_parallelism="dp", output_tokens=500),
    dict(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, pipeline_parallel_size=2, engine="vllm"),
    dict(model_id="jamba-1.5-mini", gpu_id="h100-sxm", engine="vllm", pause_mean_s=60.0, ttl_s=30.0),  # state per session
    dict(model_id="qwen3-8b", gpu_id="h100-sxm", gpus_per_replica=1, measured_kv_bytes_per_token=150_000, measured_kv_model_id="qwen3-8b",
         measured_kv_format="native", figures_measured_at_tokens=None),
    dict(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, target_sessions_per_gpu=500, output_tokens=200),
]


@pytest.mark.parametrize("variant", CURVE_VARIANTS, ids=lambda v: "-".join(str(x) for x in v.values())[:60])
def test_every_point_of_the_curve_is_the_plan_at_that_length(variant):
    # The curve is one array evaluation; each of its points must be what plan() answers at that length, on every
    # path (engine admission, pipeline stages, DP attention, measured figures, windows, tiers).
    contexts = [1_000, 3_000, 8_192, 32_768, 100_000, 131_072]
    inputs = make_inputs(context_tokens=8_192, hit_rate=0.3, shared_prefix=0.2, **variant)
    frame = sessions_by_context(inputs, contexts)
    from planner.plan import plan

    for row, n in zip(frame.itertuples(), contexts):
        r = plan(inputs.model_copy(update={"context_tokens": n}), compare=False)
        assert (row.sessions_per_gpu, row.sessions_per_replica, row.per_session_bytes) == (
            r.sessions_per_gpu, r.sessions_per_replica, r.per_session_bytes), n
        if r.request_rate_per_s is None:
            assert np.isnan(row.request_rate_per_s)
        else:
            assert row.request_rate_per_s == r.request_rate_per_s, n
