"""The vectorized frontier equals the scalar plan() point by point, and its slices and parsers behave."""

import random

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from planner.plan import PlanInputs, make_inputs, plan, rebase
from planner.catalog.accelerators import accelerator_from_link
from planner.catalog.entries import GPUS, get_model, models
from planner.errors import PlanInputError
from planner.frontier import (
    FRAME_COLUMNS,
    Accelerator,
    accelerators_for,
    context_axis,
    frontier_grid,
    growing_bytes_array,
    hit_rate_axis,
    kv_context_frame,
    longest_context_that_fits,
    parse_accelerators,
    parse_contexts,
    parse_hit_rates,
    with_points,
)


_SAME = ("usable_kv_bytes", "shared_prefix_bytes", "per_session_bytes", "sessions_per_gpu", "sessions_per_replica",
         "miss_probability", "state_alive_fraction", "replay_tokens_per_miss", "replay_tokens_per_turn",
         "replay_seconds_per_miss", "replay_seconds_per_turn", "state_reload_s", "active_fraction",
         "reload_from_host_s", "reload_from_ssd_s", "recompute_s", "restore_s", "ttft_s", "time_per_request_s",
         "gpu_seconds_per_request", "replay_share_of_gpu_time", "new_session_prefill_s", "request_rate_per_s")
"""PlanResult fields that the grid holds too (same names in planner.plan.core.PlanArrays)."""


def point_inputs(base, acc, context_tokens, hit_rate, scale):
    """The scalar plan inputs of one grid point, built from the point itself, never from the grid: the base plan
    moved onto ``acc`` with this context and hit rate (planner.plan.rebase, as the Plan page does), and with
    ``scale`` its decode and prefill throughputs scaled by HBM bandwidth and dense BF16 FLOP/s relative to the
    base plan's accelerator (the rule of planner/frontier.py's docstring; a bare custom size is unscaled)."""
    decode, prefill = base.decode_tokens_per_s, base.prefill_tokens_per_s
    ref = accelerator_from_link(base.accelerator).to_gpu_spec() if base.accelerator else GPUS.get(base.gpu_id)
    spec = acc.user.to_gpu_spec() if acc.user is not None else GPUS.get(acc.gpu_id)
    if scale and ref is not None and spec is not None:
        decode = base.decode_tokens_per_s * (spec.hbm_bandwidth_bytes_per_s / ref.hbm_bandwidth_bytes_per_s)
        prefill = base.prefill_tokens_per_s * (spec.bf16_dense_flops / ref.bf16_dense_flops)
    return rebase(base, gpu_id=acc.gpu_id, hbm_gib=acc.hbm_gib,
                  accelerator=acc.user.to_link() if acc.user is not None else None,
                  context_tokens=int(context_tokens), hit_rate=float(hit_rate), decode_tokens_per_s=decode,
                  prefill_tokens_per_s=prefill)[0]


def check_point(grid, inputs, gi, ci, hi):
    """Every figure of the grid at one point equals the scalar plan of ``inputs`` (:func:`point_inputs`), to the
    bit; the grid's own ``inputs_at`` gives the same inputs."""
    assert grid.inputs_at(gi, ci, hi) == inputs, (gi, ci, hi)
    r = plan(inputs)
    a = grid.arrays
    shape = grid.shape
    for name in _SAME:
        value = np.broadcast_to(getattr(a, name), shape)[gi, ci, hi]
        want = getattr(r, name)
        if want is None:
            assert np.isnan(value), name
        else:
            assert value == want, (name, (gi, ci, hi), value, want)
    assert grid.sessions_per_gpu[gi, ci, hi] == r.sessions_per_gpu
    assert grid.sessions_per_replica[gi, ci, hi] == r.sessions_per_replica
    assert grid.per_session_bytes[ci, hi] == r.per_session_bytes
    assert grid.shared_prefix_bytes[ci, hi] == r.shared_prefix_bytes
    assert grid.usable_kv_bytes[gi] == r.usable_kv_bytes
    assert grid.ttft_s[gi, ci, hi] == r.ttft_s
    if r.request_rate_per_s is not None:
        assert bool(grid.limited_by_sessions[gi, ci, hi]) == (r.request_rate_limit == "sessions")
    assert bool(np.broadcast_to(a.usable_measured, shape)[gi, ci, hi]) == (r.usable_kv_source != "computed")  # measured, or the engine's budget


def _check_points(grid, points, base, accs, contexts, hits, scale=False):
    """:func:`check_point` at ``points`` of ``frontier_grid(base, accs, contexts, hits, scale_throughput=scale)``,
    each point's inputs built from these arguments."""
    for gi, ci, hi in points:
        check_point(grid, point_inputs(base, accs[gi], contexts[ci], hits[hi], scale), gi, ci, hi)


def test_golden_point_on_the_grid():
    # the docs/capacity.md golden case: custom 100 GiB, hit 0.5, 1M tokens -> 240 sessions (see test_capacity.py)
    base = make_inputs(model_id="deepseek-v4.1-flash", gpu_id="custom", hbm_gib=100, gpu_memory_utilization=1,
                       weights_gib=0, reserve_gib=0, output_tokens=0, gpus_per_replica=1)
    grid = frontier_grid(base, [Accelerator("custom", 100.0)], [1_000_000], [0.5])
    assert grid.sessions_per_gpu[0, 0, 0] == 240
    assert grid.shared_prefix_bytes[0, 0] == 445_000_000 and grid.per_session_bytes[0, 0] == 445_000_000
    assert np.isnan(grid.request_rate_per_s[0, 0, 0])  # no output tokens


@pytest.mark.parametrize("model_id", sorted(models()))
def test_grid_equals_scalar_plan_on_samples(model_id):
    rng = random.Random(model_id)
    # 16 GPUs, or 4 where vLLM refuses TP 16 (Qwen2.5-7B: 28 attention heads, ModelConfig.verify_with_parallel_config)
    gpus = 16 if get_model(model_id).num_attention_heads % 16 == 0 else 4
    base = make_inputs(model_id=model_id, gpus_per_replica=gpus, output_tokens=rng.choice([0, 300, 2_000]),
                       pause_mean_s=rng.choice([0.0, 20.0, 90.0]), ttl_s=rng.choice([0.0, 60.0]),
                       shared_prefixes=rng.choice([1, 3, 50]), state_in_hbm=rng.random() < 0.3,
                       pause_distribution=rng.choice(["exponential", "fixed"]), engine=rng.choice([None, "vllm"]))
    accs = [Accelerator(g) for g in rng.sample(sorted(GPUS), 5)] + [Accelerator("custom", 96.0)]
    contexts, hits = context_axis(4_000_000, 25), hit_rate_axis(21)
    grid = frontier_grid(base, accs, contexts, hits, scale_throughput=True)
    points = [(rng.randrange(grid.shape[0]), rng.randrange(grid.shape[1]), rng.randrange(grid.shape[2]))
              for _ in range(40)]
    _check_points(grid, points, base, accs, contexts, hits, scale=True)


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["deepseek-v4.1-flash", "deepseek-v4-pro", "llama-3.1-70b", "gemma-3-27b", "gpt-oss-20b"]),
       st.lists(st.integers(1, 100_000_000), min_size=1, max_size=6),
       st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=6),
       st.integers(0, 50_000), st.integers(1, 20), st.floats(0, 3_600), st.booleans(),
       st.sampled_from([None, "vllm", "sglang"]))
def test_grid_equals_scalar_plan_property(model_id, ctx, hits, out, k, pause, scale, engine):
    base = make_inputs(model_id=model_id, output_tokens=out, shared_prefixes=k, pause_mean_s=pause, gpus_per_replica=8,
                       engine=engine)
    accs = [Accelerator("h100-sxm"), Accelerator("b200"), Accelerator("l4")]
    grid = frontier_grid(base, ["h100-sxm", "b200", "l4"], ctx, hits, scale_throughput=scale)
    _check_points(grid, [(g, c, h) for g in range(grid.shape[0]) for c in range(grid.shape[1])
                         for h in range(grid.shape[2])][:60], base, accs, ctx, hits, scale)


def _every_field():
    """A strategy for every PlanInputs field, measured ones and their bindings included (valid values)."""
    ids = sorted(models())
    fmts = ["native", "fp8", "nvfp4", "bf16"]
    return st.fixed_dictionaries({
        "model_id": st.sampled_from(ids),
        "gpu_id": st.sampled_from(["h200", "h100-sxm", "b200", "l4", "mi300x", "custom"]),
        "gpus_per_replica": st.sampled_from([1, 2, 4, 8, 16]),
        "attention_parallelism": st.sampled_from(["tp", "dp"]),
        "engine": st.sampled_from([None, "vllm", "sglang"]),
        "pipeline_parallel_size": st.sampled_from([1, 1, 2]),
        "hbm_gib": st.one_of(st.none(), st.floats(1, 2_000)),
        "gpu_memory_utilization": st.floats(0.05, 1),
        "weights_gib": st.one_of(st.none(), st.floats(0, 2_000)),
        "weight_format": st.sampled_from([None, "bf16", "fp8", "nvfp4"]),
        "reserve_gib": st.floats(0, 20),
        "context_tokens": st.integers(1, 20_000_000),
        "output_tokens": st.integers(0, 50_000),
        "hit_rate": st.floats(0, 1),
        "shared_prefix": st.floats(0, 1),
        "figures_measured_at_tokens": st.none() | st.integers(1, 10**6),
        "kv_format": st.sampled_from(fmts),
        "state_in_hbm": st.booleans(),
        "decode_tokens_per_s": st.floats(1, 1e6),
        "session_decode_tokens_per_s": st.floats(0.5, 1e4),
        "shared_prefixes": st.integers(1, 100),
        "pause_mean_s": st.sampled_from([0.0, 0.5, 30.0, 600.0]) | st.floats(0, 10_000),
        "pause_distribution": st.sampled_from(["exponential", "fixed"]),
        "ttl_s": st.floats(0, 3_600),
        "prefill_tokens_per_s": st.floats(1, 1e6),
        "host_ram_gib": st.one_of(st.none(), st.floats(0, 4_096)),
        "ssd_gib": st.one_of(st.none(), st.floats(0, 100_000)),
        "host_link": st.sampled_from(["auto", "pcie4-x16", "pcie5-x16", "nvlink-c2c"]),
        "ssd_link": st.sampled_from(["auto", "nvme-gen4", "nvme-gen5"]),
        "target_sessions_per_gpu": st.one_of(st.none(), st.integers(0, 5_000)),
        "measured_kv_bytes_per_token": st.one_of(st.none(), st.floats(1, 500_000)),
        "measured_kv_model_id": st.none(),
        "measured_kv_format": st.none(),
        "measured_usable_kv_gib": st.one_of(st.none(), st.floats(0, 80)),
        "measured_usable_kv_gpu_id": st.none(),
        "measured_usable_kv_hbm_gib": st.none(),
        "measured_usable_kv_utilization": st.none(),
        "measured_usable_kv_weights": st.none(),
        # a user-defined accelerator (a device reporting 97,871 MiB), which makes the GPU 'custom'
        "accelerator": st.sampled_from([None, None, "id:h20~name:NVIDIA H20~mem:102625181696~bw:4000~tf:148~hl:64"]),
        "state_bytes_per_sequence": st.one_of(st.none(), st.integers(0, 10**9)),
        "engine": st.sampled_from([None, None, "vllm", "sglang"]),
        "engine_version": st.none(),
    })


def test_the_property_test_draws_every_field():
    assert set(_every_field().wrapped_strategy.mapping) == set(PlanInputs.model_fields)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(_every_field(), st.lists(st.integers(1, 20_000_000), min_size=1, max_size=3),
       st.lists(st.floats(0, 1), min_size=1, max_size=3), st.booleans())
def test_grid_equals_scalar_plan_for_every_field(fields, ctx, hits, scale):
    """Every PlanInputs field drawn (measured ones too): the grid equals plan() at every point, to the bit, each
    point's inputs built from the test's own axes (:func:`point_inputs`), not read back from the grid."""
    if fields["accelerator"] is not None:
        fields["gpu_id"] = "custom"
    elif fields["gpu_id"] == "custom" and fields["hbm_gib"] is None:
        fields["hbm_gib"] = 96.0
    if fields["gpus_per_replica"] % fields["pipeline_parallel_size"]:
        fields["pipeline_parallel_size"] = 1
    if fields["measured_usable_kv_gib"] is not None:
        fields["engine"] = None  # else the other accelerators' engine budget may refuse what this GPU's measurement allows
    try:
        base = make_inputs(**fields)
        plan(base)
    except PlanInputError:
        assume(False)  # a combination plan() refuses (format the model cannot take, PP on a coefficient, ...)
    own = accelerators_for([], base)[0] if base.gpu_id == "custom" else Accelerator(base.gpu_id, base.hbm_gib)
    accs = [own, Accelerator("b200"), Accelerator("custom", 64.0)]
    contexts = with_points(np.array(ctx), base.context_tokens)
    hit_rates = with_points(np.array(hits), base.hit_rate)
    grid = frontier_grid(base, accs, contexts, hit_rates, scale_throughput=scale)
    _check_points(grid, [(gi, ci, hi) for gi in range(len(accs)) for ci in range(len(contexts))
                         for hi in range(len(hit_rates))], base, accs, contexts, hit_rates, scale)


def test_growing_bytes_array_matches_the_model():
    # V4.1 coefficient: ceil(890 x n); V4-Pro layout: compressed groups (n // ratio entries)
    for mid in ("deepseek-v4.1-flash", "deepseek-v4-pro", "llama-3.1-8b", "gemma-2-9b"):
        m = get_model(mid)
        n = np.array([0, 1, 3, 4, 127, 128, 129, 1_000_000, 99_999_999])
        assert growing_bytes_array(m, n, "native").tolist() == [m.growing_bytes(int(x), "native") for x in n]
    # 890 B/token x 1,000,000 = 890,000,000 B
    assert growing_bytes_array(get_model("deepseek-v4.1-flash"), np.array([1_000_000]), "native")[0] == 890_000_000


def test_frame_columns_and_slices():
    base = make_inputs(attention_parallelism="dp")
    grid = frontier_grid(base, ["h100-sxm", "h200"], [128_000, 1_000_000], [0.0, 0.5, 0.9])
    frame = grid.frame()
    assert tuple(frame.columns) == FRAME_COLUMNS and len(frame) == 2 * 2 * 3
    one_hit = grid.frame(hit=[grid.nearest_hit_rate(0.5)])
    assert len(one_hit) == 4 and set(one_hit["hit_rate"]) == {0.5}
    # default plan with DP attention on the H200 at 1M tokens, hit 0.5: 143 sessions per GPU (test_plan_golden.py)
    row = one_hit[(one_hit["gpu_id"] == "h200") & (one_hit["context_tokens"] == 1_000_000)]
    assert int(row["sessions_per_gpu"].iloc[0]) == 143
    assert row["rate_limit"].iloc[0] == "decode throughput"


def test_accelerators_for_keeps_the_plans_hbm():
    base = make_inputs(gpu_id="h200", hbm_gib=120.0)
    accs = accelerators_for(["h100-sxm", "h200"], base)
    assert accs[1].hbm_gib == 120.0 and accs[0].hbm_gib is None
    custom = accelerators_for(["h100-sxm"], make_inputs(gpu_id="custom", hbm_gib=64.0))
    assert custom[-1] == Accelerator("custom", 64.0)


def test_parsers():
    assert [a.gpu_id for a in parse_accelerators("h200, b200,custom:96")] == ["h200", "b200", "custom"]
    assert parse_contexts("1m,128k,1e6").tolist() == [128_000, 1_000_000]
    assert parse_hit_rates("0.9,0,0.5").tolist() == [0.0, 0.5, 0.9]
    for bad in ("h900", "custom:0", "custom:nan", "custom:x", ","):
        with pytest.raises(PlanInputError):
            parse_accelerators(bad)
    for bad in ("0", "-5", "1e99", "abc", ""):
        with pytest.raises(PlanInputError):
            parse_contexts(bad)
    for bad in ("nan", "1.5", "-0.1", "x", ""):
        with pytest.raises(PlanInputError):
            parse_hit_rates(bad)


def test_grid_rejects_bad_axes():
    base = make_inputs()
    with pytest.raises(PlanInputError):
        frontier_grid(base, [], [1_000], [0.5])
    with pytest.raises(PlanInputError):
        frontier_grid(base, ["h200"], [0], [0.5])
    with pytest.raises(PlanInputError):
        frontier_grid(base, ["h200"], [1_000], [float("nan")])
    with pytest.raises(PlanInputError):
        frontier_grid(base, ["custom"], [1_000], [0.5])  # custom without an HBM size


def test_axes_include_the_plan():
    ctx = context_axis(1_000_000, 10, include=[777_777])
    assert 777_777 in ctx and ctx[0] == 1_000 and ctx[-1] == 1_000_000 and np.all(np.diff(ctx) > 0)
    hits = hit_rate_axis(101, include=[0.333])
    assert 0.333 in hits and len(hits) == 102 and hits[0] == 0 and hits[-1] == 1


def test_seed_table_from_kv_context_frame():
    # docs/sources.md (published table): 890 B/token x (100k, 250k, 500k, 1M) = 0.089, 0.2225, 0.445, 0.89 GB
    frame = kv_context_frame([get_model("deepseek-v4.1-flash")], [100_000, 250_000, 500_000, 1_000_000])
    assert frame["kv_bytes"].tolist() == [89_000_000, 222_500_000, 445_000_000, 890_000_000]
    assert frame["kv_gb"].tolist() == pytest.approx([0.089, 0.2225, 0.445, 0.89])
    assert frame["kv_gib"].iloc[-1] == pytest.approx(0.828877, rel=1e-6)  # 890,000,000 / 2**30


def test_longest_context_that_fits():
    m = get_model("deepseek-v4.1-flash")
    # 890 B/token: 890,000,000 B hold exactly 1,000,000 tokens; one byte less holds 999,999
    assert longest_context_that_fits(m, 890_000_000) == 1_000_000
    assert longest_context_that_fits(m, 889_999_999) == 999_999
    assert longest_context_that_fits(m, 0) == 0
    # H200 reported 150,754,820,096 B / 890 = 169,387,438.3 tokens > 1e8 cap
    assert longest_context_that_fits(m, 150_754_820_096) == 100_000_000


def test_frontier_figures_are_pure_and_mark_the_plan():
    import plotly.graph_objects as go

    from kvplan_app.charts.figures import kv_vs_context_models_figure
    from kvplan_app.charts.frontier import (
        request_rate_figure,
        sessions_heatmap_figure,
        sessions_vs_context_figure,
        sessions_vs_hit_rate_figure,
    )

    base = make_inputs()
    grid = frontier_grid(base, ["h100-sxm", "h200", "b200"], context_axis(1_000_000, 12), hit_rate_axis(11))
    hi, ci = grid.nearest_hit_rate(0.5), grid.nearest_context(1_000_000)
    fig = sessions_vs_context_figure(grid.frame(hit=[hi]), plan_point=(1_000_000, 143), hit_rate=0.5)
    # one line per accelerator + the plan's marker + its legend entry (the label never sits on the plot)
    assert isinstance(fig, go.Figure) and len(fig.data) == 3 + 2
    assert [d.name for d in fig.data[3:]] == ["current plan", "this plan: 143"] and fig.layout.xaxis.type == "log"
    assert len(sessions_vs_hit_rate_figure(grid.frame(context=[ci]), plan_point=(0.5, 143)).data) == 5
    assert len(request_rate_figure(grid.frame(hit=[hi]), plan_point=(1_000_000, 5.0)).data) == 5
    assert len(request_rate_figure(grid.frame(hit=[hi]), plan_point=(1_000_000, None)).data) == 4  # undefined rate: legend only
    heat = sessions_heatmap_figure(grid.frame(gpu=[1]), plan_point=(0.5, 1_000_000), accelerator="H200")
    assert heat.data[0].z.shape == (grid.shape[1], grid.shape[2])
    # GB on the left, GiB on the right over the same range: right = left x 10**9 / 2**30
    frame = kv_context_frame([get_model("deepseek-v4.1-flash"), get_model("llama-3.1-8b")], [1_000, 1_000_000])
    models_fig = kv_vs_context_models_figure(frame, hbm_lines=[("H200", 150_754_820_096)])
    left, right = models_fig.layout.yaxis.range, models_fig.layout.yaxis2.range
    assert right[1] == pytest.approx(left[1] * 10**9 / 2**30)
    assert {t.name for t in models_fig.data if t.name} == {"DeepSeek V4.1-Flash", "Llama 3.1 8B"}


WORKED = dict(model_id="deepseek-v4.1-flash", gpu_id="custom", hbm_gib=100, gpu_memory_utilization=1, weights_gib=0,
              reserve_gib=0, context_tokens=1_000_000, hit_rate=0.5, shared_prefix=0.0, output_tokens=0,
              gpus_per_replica=1)
"""The worked example of docs/capacity.md with no shared prefix in the base plan: the grid is given its own."""


@pytest.mark.parametrize("shared, sessions", [
    # docs/capacity.md: 100 GiB = 107,374,182,400 B all usable (utilization 1, no weights, no reserve); DeepSeek
    # V4.1-Flash keeps 890 B per token (docs/sources.md). Shared prefix 0.5: 500,000 x 890 = 445,000,000 B stored
    # once, 445,000,000 B per session -> floor((107,374,182,400 - 445,000,000) / 445,000,000) = floor(240.29) = 240
    (0.5, 240),
    # no sharing: each session holds 1,000,000 x 890 = 890,000,000 B -> floor(107,374,182,400 / 890,000,000) = 120
    (0.0, 120),
])
def test_the_grid_takes_its_own_shared_prefix(shared, sessions):
    base = make_inputs(**WORKED)
    grid = frontier_grid(base, [Accelerator("custom", 100)], [1_000_000], [0.0, 0.5, 0.9], shared_prefix=shared)
    assert grid.shared_prefix == shared
    assert grid.sessions_per_gpu[0, 0].tolist() == [sessions] * 3  # the hit rate holds no memory
    frame = grid.frame()
    assert frame["shared_prefix"].tolist() == [shared] * 3 and frame["sessions_per_gpu"].tolist() == [sessions] * 3
    # the Plan page's figure for the same inputs
    assert plan(make_inputs(**{**WORKED, "shared_prefix": shared})).sessions_per_gpu == sessions
    assert plan(grid.inputs_at(0, 0, 1)).sessions_per_gpu == sessions


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "half"])
def test_a_bad_shared_prefix_is_refused(bad):
    with pytest.raises(PlanInputError, match="shared_prefix"):
        frontier_grid(make_inputs(**WORKED), ["h200"], [1_000_000], [0.5], shared_prefix=bad)
