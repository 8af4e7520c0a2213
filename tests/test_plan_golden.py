"""Hand-worked capacity plans, arithmetic next to each number."""

import pytest

from planner.plan import make_inputs, plan, plan_frame, PLAN_CSV_COLUMNS
from planner.errors import PlanInputError


def test_v41_flash_on_h200_default_plan():
    # H200 reports 143,771 MiB = 150,754,820,096 B (public nvidia-smi output).
    # x 0.9 = 135,679,338,086.4 -> floor 135,679,338,086 B
    # weights: 552e9 params x 1 B (FP8) / 8 GPUs = 69,000,000,000 B; reserve 2 GiB = 2,147,483,648 B
    # usable = 135,679,338,086 - 69,000,000,000 - 2,147,483,648 = 64,531,854,438 B
    # shared = 500,000 x 890 = 445,000,000; per session = (1,001,000 - 500,000) x 890 = 445,890,000
    # sessions = floor((64,531,854,438 - 445,000,000) / 445,890,000) = floor(143.73) = 143
    # rate = min(5,000 tok/s / 1,000 tok, 143 / (1,000 / 50 s)) = min(5, 7.15) = 5 /s
    # data-parallel attention: every GPU holds 143 whole sessions, 143 x 8 = 1,144 per replica
    # (hit rate 1: every prompt token read from cache, no prompt prefill in the GPU time)
    r = plan(make_inputs(attention_parallelism="dp", hit_rate=1))
    assert r.hbm_bytes == 150_754_820_096
    assert r.weights_bytes_per_gpu == 69_000_000_000
    assert r.usable_kv_bytes == 64_531_854_438
    assert r.per_session_bytes == 445_890_000
    assert r.sessions_per_gpu == 143
    assert r.sessions_per_replica == 143 * 8
    assert r.request_rate_per_s == pytest.approx(5.0)
    assert r.request_rate_limit == "decode throughput"
    # tensor-parallel attention (the default): V4.1's 890 B/token are one-head compressed entries, replicated on
    # every TP rank (vLLM replicates a single KV head; DeepSeek-V2 paper: one latent per token), so each of the
    # 8 GPUs holds all 445,890,000 B of each session: the replica holds 143 sessions, 143 / 8 = 17.875 per GPU;
    # rate = min(5, 17.875 / 20 s = 0.89375) = 0.89375 /s per GPU, limited by sessions
    t = plan(make_inputs(hit_rate=1))
    assert t.attention_parallelism == "tp" and t.per_session_bytes == 445_890_000
    assert t.sessions_per_replica == 143 and t.sessions_per_gpu == 17.875
    assert t.request_rate_per_s == pytest.approx(0.89375) and t.request_rate_limit == "sessions"


def test_rate_limited_by_sessions():
    # 3 sessions fit; each request takes 1,000 / 50 = 20 s -> 3 / 20 = 0.15 /s < 5,000 / 1,000 = 5 /s
    # Llama-3.1-8B: 131,072 B/token; 10 GiB usable = 10,737,418,240 B; context 20,000, 0 hit, 1,000 output:
    # per session 21,000 x 131,072 = 2,752,512,000 -> floor(10,737,418,240 / 2,752,512,000) = 3
    r = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="custom", hbm_gib=10, gpu_memory_utilization=1,
                         weights_gib=0, reserve_gib=0, context_tokens=20_000, hit_rate=1, shared_prefix=0, output_tokens=1_000,
                         gpus_per_replica=1))
    assert r.sessions_per_gpu == 3
    assert r.request_rate_per_s == pytest.approx(0.15)
    assert r.request_rate_limit == "sessions"


def test_nothing_fits_says_why():
    # Llama-3.1-405B in BF16 on one H100: 405e9 x 2 B = 810 GB of weights >> 85.5 GB of HBM
    r = plan(make_inputs(model_id="llama-3.1-405b", gpu_id="h100-sxm", gpus_per_replica=1))
    assert r.sessions_per_gpu == 0
    assert "Nothing fits" in r.message


def test_higher_hit_rate_more_sessions():
    low = plan(make_inputs(hit_rate=0.2, shared_prefix=0.2)).sessions_per_gpu
    high = plan(make_inputs(hit_rate=0.9, shared_prefix=0.9)).sessions_per_gpu
    assert high > low


def test_state_in_hbm_costs_sessions():
    # 2,703,360 B of window state per session moves into HBM: fewer sessions fit
    host = plan(make_inputs()).sessions_per_gpu
    hbm = plan(make_inputs(state_in_hbm=True)).sessions_per_gpu
    assert hbm < host


@pytest.mark.parametrize("field,value", [
    ("hit_rate", 2), ("hit_rate", -0.1), ("hit_rate", float("nan")), ("hbm_gib", -1), ("hbm_gib", 0),
    ("hbm_gib", float("inf")), ("context_tokens", 0), ("context_tokens", 10**99), ("gpus_per_replica", 0),
    ("gpu_memory_utilization", 1.5), ("output_tokens", -5), ("kv_format", "fp7"), ("model_id", 3),
])
def test_bad_inputs_name_field_value_and_range(field, value):
    with pytest.raises(PlanInputError) as info:
        make_inputs(**{field: value})
    assert info.value.field == field
    assert field in str(info.value) and "expected" in str(info.value)


def test_unknown_model_and_gpu():
    with pytest.raises(PlanInputError, match="model"):
        plan(make_inputs(model_id="gpt-9"))
    with pytest.raises(PlanInputError, match="gpu"):
        plan(make_inputs(gpu_id="h900"))


def test_plan_frame_columns():
    frame = plan_frame(plan(make_inputs(attention_parallelism="dp")))
    assert tuple(frame.columns) == PLAN_CSV_COLUMNS
    assert len(frame) == 1
    assert frame.loc[0, "sessions_per_gpu"] == 143
    assert frame.loc[0, "attention_parallelism"] == "dp"


GOLDEN = dict(model_id="deepseek-v4.1-flash", gpu_id="custom", hbm_gib=100, gpu_memory_utilization=1, weights_gib=0,
              reserve_gib=0, context_tokens=1_000_000, hit_rate=0.5, shared_prefix=0.5, output_tokens=0, gpus_per_replica=1)


def test_measured_bytes_per_token_replace_the_coefficient():
    # a probe measured 900 B/token: prefix 500,000 x 900 = 450,000,000 B; tail the same;
    # floor((107,374,182,400 - 450,000,000) / 450,000,000) = floor(237.6) = 237
    r = plan(make_inputs(**GOLDEN, measured_kv_bytes_per_token=900))
    assert (r.kv_source, r.kv_bytes_per_token) == ("measured", 900.0)
    assert r.shared_prefix_bytes == 450_000_000 and r.per_session_bytes == 450_000_000
    assert r.sessions_per_gpu == 237


def test_measured_usable_memory_replaces_the_computed_one():
    # 50 GiB measured = 53,687,091,200 B; floor((53,687,091,200 - 445,000,000) / 445,000,000) = floor(119.6) = 119
    r = plan(make_inputs(**GOLDEN, measured_usable_kv_gib=50))
    assert (r.usable_kv_source, r.usable_kv_bytes) == ("measured", 53_687_091_200)
    assert r.sessions_per_gpu == 119
    assert plan(make_inputs(**GOLDEN)).kv_source == "reported"  # 890 B/token, the publisher's figure


def test_links_may_write_token_counts_with_suffixes():
    assert make_inputs(context_tokens="128k").context_tokens == 128_000
    assert make_inputs(context_tokens="1m").context_tokens == 1_000_000
    assert make_inputs(context_tokens="1M").context_tokens == 1_048_576  # vLLM's human_readable_int: M = 2**20
    with pytest.raises(PlanInputError, match="context_tokens"):
        make_inputs(context_tokens="1e99M")


def test_measured_usable_above_hbm_is_refused():
    # H200: 143,771 MiB = 140.4 GiB; 5,000 GiB of "measured" usable KV cannot be
    with pytest.raises(PlanInputError, match="measured_usable_kv_gib"):
        plan(make_inputs(measured_usable_kv_gib=5000))


def test_context_past_the_models_maximum_is_said():
    # Llama 3.1 8B: max_position_embeddings 131,072 < 1,000,000 + 1,000
    r = plan(make_inputs(model_id="llama-3.1-8b"))
    assert "maximum context" in r.message and "131,072" in r.message
