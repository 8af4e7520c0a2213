"""Recommend: fewest GPUs meeting a target, each row confirmed by `kvplan plan`, one GPU fewer fails."""

from __future__ import annotations

import json

import numpy as np
import pytest

from planner.catalog.accelerators import accelerator_from_dict
from planner.plan import make_inputs, plan
from planner.cli import main
from planner.errors import PlanInputError
from planner.frontier import Accelerator, parse_accelerators
from planner.recommend import pareto_mask, recommend


def _base(**kw):
    return make_inputs(model_id="llama-3.1-70b", context_tokens=32_000, **kw)


def test_acceptance_cli_rows_confirmed_by_kvplan_plan(capsys):
    assert main(["recommend", "--model", "llama-3.1-70b", "--context", "32k", "--sessions", "1000",
                 "--gpus", "h100-sxm,h200,b200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    rows = out["rows"]
    assert rows and all(r["verified"] for r in rows)
    # B200 reports 183,359 MiB = 192,265,846,784 B; x 0.9 = 173,039,262,105; - 141.2e9 / 8 weights - 2 GiB
    # = 153,241,778,457 B usable. FP8 KV: 2 x 80 x 8 x 128 x 1 = 163,840 B/token; shared prefix
    # 16,000 x 163,840 = 2,621,440,000; per session (33,000 - 16,000) x 163,840 = 2,785,280,000;
    # sessions = floor((153,241,778,457 - 2,621,440,000) / 2,785,280,000) = 54 per GPU;
    # the default headroom 20 % asks for 1,000 x 1.2 = 1,200 sessions:
    # ceil(1,200 / (54 x 8)) = 3 replicas = 24 GPUs, the fewest of the search.
    # Under TP 8 each GPU holds one of the 8 KV heads: 2 x 80 x 1 x 128 x 1 = 20,480 B/token per GPU;
    # shared 16,000 x 20,480 = 327,680,000; per session 17,000 x 20,480 = 348,160,000;
    # floor((153,241,778,457 - 327,680,000) / 348,160,000) = 439 sessions per replica; 3 replicas = 24 GPUs,
    # 1,317 sessions: headroom 31.7 % >= 20 %.
    # With no shared prefix each session holds 33,000 x 20,480 = 675,840,000 B per GPU:
    # floor(153,241,778,457 / 675,840,000) = 226 per replica, ceil(1,200 / 226) = 6 replicas = 48 GPUs.
    assert (out["headroom"], out["required"], out["shared_prefix"]) == (0.2, 1200.0, 0.5)
    first = rows[0]
    assert (first["gpu_id"], first["gpus_per_replica"], first["kv_format"], first["attention"]) == \
        ("b200", 8, "fp8", "tp")
    assert first["sessions_per_replica"] == 439 and first["total_gpus"] == 24
    assert first["headroom"] >= 0.2 and first["headroom"] == pytest.approx(1317 / 1000 - 1)
    assert (first["replicas_no_sharing"], first["total_gpus_no_sharing"]) == (6, 48)
    assert "shared prefix 0.5" in first["assumptions"] and "hit rate 0.5" in first["assumptions"]
    assert "tensor-parallel attention" in first["assumptions"] and "KV format fp8" in first["assumptions"]
    dp = next(r for r in rows if (r["gpu_id"], r["gpus_per_replica"], r["kv_format"], r["attention"]) ==
              ("b200", 8, "fp8", "dp"))
    assert dp["sessions_per_gpu"] == 54 and dp["sessions_per_replica"] == 432 and dp["total_gpus"] == 24
    assert min(r["total_gpus"] for r in rows) == 24
    for row in rows[:6]:
        assert main(["plan", *row["plan_args"], "--json"]) == 0
        confirmed = json.loads(capsys.readouterr().out)
        assert confirmed["sessions_per_replica"] == row["sessions_per_replica"]
        assert confirmed["attention_parallelism"] == row["attention"]
        assert confirmed["sessions_per_replica"] * row["replicas"] >= 1200
        # one GPU fewer: replicas - 1 whole replicas fall short of the target with its headroom
        assert confirmed["sessions_per_replica"] * (row["replicas"] - 1) < 1200
        assert "fails" in row["one_fewer"]


def test_requests_per_second_target():
    rec = recommend(_base(), parse_accelerators("h200"), target_kind="requests_per_s", target=10.0,
                    gpus_per_replica=[8], kv_formats=["fp8"])
    row = rec.frame.iloc[0]
    r = plan(rec.inputs[0])
    # capacity = replicas x 8 x the plan's rate per GPU, and one replica fewer falls short
    assert row.replicas * 8 * r.request_rate_per_s >= 10.0 > (row.replicas - 1) * 8 * r.request_rate_per_s


def test_prices_rank_equal_gpu_counts_by_cost():
    cheap = accelerator_from_dict({"id": "b200-cheap", "name": "B200 (cheap)", "memory_mib": 183_359,
                                   "hbm_bandwidth_gb_s": 8000, "bf16_dense_tflops": 2250, "price_per_gpu_hour": 2.0})
    accs = [Accelerator("b200"), Accelerator.of_user(cheap)]
    rec = recommend(_base(), accs, target=1000, gpus_per_replica=[8], kv_formats=["fp8"], attention=["dp"],
                    prices={"b200": 5.0})
    top = rec.frame.head(2)
    # same memory -> same 24 GPUs; 24 x 2.0 = 48 per hour beats 24 x 5.0 = 120
    assert top.total_gpus.tolist() == [24, 24] and top.gpu_id.tolist() == ["b200-cheap", "b200"]
    assert top.cost_per_hour.tolist() == [48.0, 120.0]
    assert rec.inputs[0].accelerator is not None and rec.inputs[0].gpu_id == "custom"


def test_nothing_fits_and_bad_attention_refused():
    rec = recommend(_base(), parse_accelerators("l4"), target=10, gpus_per_replica=[1])
    assert rec.frame.empty and rec.infeasible >= 1  # 70B in BF16 does not fit one 24 GB L4
    with pytest.raises(PlanInputError, match="attention"):
        recommend(_base(), parse_accelerators("h200"), target=10, attention=["xp"])


@pytest.mark.parametrize("kw", [
    {"target": 0}, {"target": float("nan")}, {"target": -5}, {"target": 1e13},
    {"target": 10, "target_kind": "users"}, {"target": 10, "gpus_per_replica": [0]},
    {"target": 10, "gpus_per_replica": [2048]}, {"target": 10, "kv_formats": []},
    {"target": 10, "prices": {"h200": -1.0}},
])
def test_bad_inputs_one_error(kw):
    with pytest.raises(PlanInputError):
        recommend(_base(), parse_accelerators("h200"), **kw)


def test_pareto_mask_golden():
    # cost 2 with headroom 0.3 beats cost 2 with 0.1 and cost 3 with 0.2; cost 4 with 0.5 has the most headroom
    assert pareto_mask(np.array([2.0, 2.0, 3.0, 4.0]), np.array([0.1, 0.3, 0.2, 0.5])).tolist() == \
        [False, True, False, True]


def test_cli_target_required_and_exclusive(capsys):
    assert main(["recommend", "--model", "llama-3.1-70b"]) == 2
    assert main(["recommend", "--sessions", "10", "--requests-per-s", "1"]) == 2
    assert main(["recommend", "--sessions", "10", "--prices", "h200=cheap"]) == 2
    assert main(["recommend", "--sessions", "10", "--gpus-per-replica", "4"]) == 2  # swept: use --replica-gpus
    err = capsys.readouterr().err
    assert err.count("kvplan: error:") == 4 and "--replica-gpus" in err


def test_recommend_figure_pareto_and_axes():
    from kvplan_app.charts.figures import recommend_figure

    rec = recommend(_base(), parse_accelerators("h200,b200"), target=1000, kv_formats=["fp8"])
    fig = recommend_figure(rec.frame)
    front = next(t for t in fig.data if t.name == "Pareto front")
    assert list(front.x) == sorted(rec.frame[rec.frame.pareto].total_gpus.tolist())
    assert fig.layout.xaxis.title.text == "Total GPUs" and "%" in fig.layout.yaxis.title.text


def test_trace_curve_hit_rate_per_configuration_matches_a_replay():
    from planner.recommend import trace_hit_rate_curve
    from planner.traces import load_sample, replay

    trace = load_sample("conversation")
    rec = recommend(_base(), parse_accelerators("b200"), target=1000, gpus_per_replica=[8], kv_formats=["fp8"],
                    hit_rate_curve=trace_hit_rate_curve(trace))
    by_mode = {r.attention: r for r in rec.frame.itertuples()}
    # the pool of one KV domain in tokens: usable 153,241,778,457 B per GPU (B200, 8 GPUs per replica, see above)
    # at 20,480 B/token per GPU under TP 8 (one KV head each) and 163,840 B/token under DP (all 8 heads)
    for mode, per_token in (("tp", 20_480), ("dp", 163_840)):
        blocks = 153_241_778_457 // per_token // trace.block_tokens
        # the same hit rate from the reference LRU replay (a different code path from the curve)
        assert by_mode[mode].hit_rate == pytest.approx(replay(trace, capacity_blocks=blocks).token_hit_rate,
                                                       abs=1e-12)
    assert by_mode["tp"].hit_rate > by_mode["dp"].hit_rate  # TP's pool holds 8x the tokens
    assert all(rec.inputs[i].hit_rate == rec.frame.hit_rate[i] for i in range(len(rec.inputs)))
    assert all(rec.frame.verified)


def test_cli_trace_flag(capsys):
    assert main(["recommend", "--model", "llama-3.1-70b", "--context", "32k", "--sessions", "1000",
                 "--gpus", "b200", "--trace", "sample:conversation", "--json", "--top", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["trace"] == "sample:conversation" and all(r["verified"] for r in out["rows"])
    assert main(["recommend", "--sessions", "10", "--trace", "sample:azure-conv"]) == 2  # no prefix hashes
    assert main(["recommend", "--sessions", "10", "--trace", "sample:conversation", "--hit-rate", "0.5"]) == 2
    assert capsys.readouterr().err.count("kvplan: error:") == 2


def test_scaled_throughput_travels_in_the_rows_inputs():
    base = _base(gpu_id="h200", decode_tokens_per_s=5_000.0)
    rec = recommend(base, parse_accelerators("h100-sxm,b200"), target_kind="requests_per_s", target=50.0,
                    gpus_per_replica=[8], kv_formats=["fp8"], attention=["tp"], scale_throughput=True)
    rows = {r.gpu_id: (i, r) for i, r in enumerate(rec.frame.itertuples())}
    # decode scales with HBM bandwidth: H100 SXM 5,000 x 3,350 / 4,800 GB/s; B200 5,000 x 8,000 / 4,800
    assert rows["h100-sxm"][1].decode_tokens_per_s == pytest.approx(5_000 * 3_350 / 4_800)
    i, b200 = rows["b200"]
    assert b200.decode_tokens_per_s == pytest.approx(5_000 * 8_000 / 4_800)
    assert rec.inputs[i].decode_tokens_per_s == b200.decode_tokens_per_s and b200.verified


def test_cli_scale_throughput_and_base_gpu(capsys):
    assert main(["recommend", "--model", "llama-3.1-70b", "--context", "32k", "--requests-per-s", "50",
                 "--gpus", "b200", "--replica-gpus", "8", "--scale-throughput", "--base-gpu", "h100-sxm",
                 "--json", "--top", "1"]) == 0
    row = json.loads(capsys.readouterr().out)["rows"][0]
    # 5,000 tokens/s described on an H100 SXM (3,350 GB/s), scaled to a B200 (8,000 GB/s)
    assert row["decode_tokens_per_s"] == pytest.approx(5_000 * 8_000 / 3_350)
    assert main(["plan", *row["plan_args"], "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["request_rate_per_s"] == pytest.approx(row["request_rate_per_gpu"])


def test_a_one_configuration_pareto_front_is_drawn():
    # a plotly "lines" trace of one point draws nothing: the legend named a front the chart did not show
    from kvplan_app.charts.figures import recommend_figure

    rec = recommend(_base(), parse_accelerators("h200,b200"), target=1000, kv_formats=["fp8"])
    frame = rec.frame.assign(pareto=[i == 0 for i in range(len(rec.frame))])
    front = next(t for t in recommend_figure(frame).data if t.name == "Pareto front")
    assert len(front.x) == 1 and "markers" in front.mode


def test_every_row_has_the_headroom_asked_and_zero_headroom_is_the_bare_target():
    for headroom in (0.0, 0.2, 0.5):
        rec = recommend(_base(), parse_accelerators("h100-sxm,h200,b200"), target=1000, headroom=headroom)
        assert (rec.frame["headroom"] >= headroom - 1e-12).all()
        assert (rec.frame["required"] == 1000 * (1 + headroom)).all()
    with pytest.raises(PlanInputError, match="headroom"):
        recommend(_base(), parse_accelerators("h200"), target=10, headroom=-0.1)


def test_cli_headroom_flag(capsys):
    assert main(["recommend", "--model", "llama-3.1-70b", "--context", "32k", "--sessions", "1000",
                 "--gpus", "b200", "--replica-gpus", "8", "--kv-formats", "fp8", "--attention", "tp",
                 "--headroom", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    # 1,500 sessions at 439 per replica (above): ceil(1,500 / 439) = 4 replicas = 32 GPUs, 1,756 sessions
    first = out["rows"][0]
    assert (out["required"], first["replicas"], first["total_gpus"]) == (1500.0, 4, 32)
