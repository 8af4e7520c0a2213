"""The session model: shared prefixes, weights and reserve, misses, replay, TTFT, tiers in the plan.

Every expected number is worked by hand in the comment next to it; sources:
docs/sources.md (890 B/token, 2,703,360 B of window state, the 128-token window replayed on a miss,
minute-level TTL), public nvidia-smi output (H200 143,771 MiB).
"""

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.plan import (
    MAX_SESSIONS_PER_GPU,
    make_inputs,
    miss_probability,
    plan,
    plan_frame,
    sessions_that_fit,
    state_alive_fraction,
)
from planner.errors import PlanInputError

GOLDEN = dict(model_id="deepseek-v4.1-flash", gpu_id="custom", hbm_gib=100, gpu_memory_utilization=1, weights_gib=0,
              reserve_gib=0, context_tokens=1_000_000, hit_rate=0.5, shared_prefix=0.5, output_tokens=0, gpus_per_replica=1)


def test_a_hit_rate_without_a_shared_prefix_saves_prefill_not_memory():
    # The golden case with no shared prefix: each session holds all 1,000,000 x 890 B = 890,000,000 B itself;
    # sessions = floor(107,374,182,400 / 890,000,000) = floor(120.64) = 120 at any hit rate.
    # Prompt prefill at 20,000 tokens/s: hit 0 -> 1,000,000 tokens, 50 s; hit 0.6 -> 1,000,000 - 600,000 =
    # 400,000 tokens, 20 s. TTFT = prefill + one decode step 1/50 s: 50.02 s and 20.02 s.
    zero = plan(make_inputs(**{**GOLDEN, "hit_rate": 0, "shared_prefix": 0}))
    hit = plan(make_inputs(**{**GOLDEN, "hit_rate": 0.6, "shared_prefix": 0}))
    assert zero.sessions_per_gpu == hit.sessions_per_gpu == 120
    assert zero.per_session_bytes == hit.per_session_bytes == 890_000_000
    assert (zero.prompt_prefill_tokens, hit.prompt_prefill_tokens) == (1_000_000, 400_000)
    assert zero.ttft_s == pytest.approx(50.02) and hit.ttft_s == pytest.approx(20.02)


def test_cli_hit_rate_and_shared_prefix_are_two_inputs(capsys):
    from planner.cli import main

    base = ["plan", "--model", "deepseek-v4.1-flash", "--gpu", "custom", "--hbm-gib", "100",
            "--gpu-memory-utilization", "1", "--weights-gib", "0", "--reserve-gib", "0", "--context", "1000000",
            "--output-tokens", "0", "--gpus-per-replica", "1", "--json"]
    figures = {}
    for extra in (["--hit-rate", "0", "--shared-prefix", "0"], ["--hit-rate", "0.6", "--shared-prefix", "0"],
                  ["--shared-prefix", "0.5"]):
        assert main(base + extra) == 0
        out = json.loads(capsys.readouterr().out)
        figures[" ".join(extra)] = (out["sessions_per_gpu"], out["ttft_s"])
    # the same 120 sessions (above), TTFT 50.02 s -> 20.02 s; the shared half of the context: 240 (below)
    assert figures["--hit-rate 0 --shared-prefix 0"] == (120, pytest.approx(50.02))
    assert figures["--hit-rate 0.6 --shared-prefix 0"] == (120, pytest.approx(20.02))
    assert figures["--shared-prefix 0.5"][0] == 240


def test_golden_v41_case_keeps_its_numbers():
    # docs/capacity.md golden case: 100 GiB = 107,374,182,400 B; utilization 1, no weights, no reserve -> all of it
    # usable. 1M tokens, shared prefix 0.5: prefix 500,000 x 890 = 445,000,000 B stored once; per session: tail 500,000 x 890 =
    # 445,000,000 B (window state stays in host RAM; 0 output tokens);
    # sessions = floor((107,374,182,400 - 445,000,000) / 445,000,000) = floor(240.29) = 240
    r = plan(make_inputs(**GOLDEN))
    assert r.usable_kv_bytes == 107_374_182_400
    assert r.shared_prefix_bytes == 445_000_000
    assert r.per_session_bytes == 445_000_000
    assert r.sessions_per_gpu == 240
    assert r.request_rate_per_s is None  # no output tokens: no decode, rate undefined (said in message)
    assert "undefined" in r.message
    assert r.prefix_copies == 1 and r.shared_prefixes_bytes == 445_000_000
    # the new inputs default to "no pauses": nothing expires, nothing is replayed, nothing is parked
    assert r.miss_probability == 0 and r.replay_tokens_per_turn == 0 and r.restore_s == 0
    assert r.overflow_action == "none"


def test_two_shared_prefixes_are_stored_twice():
    # K = 2: 2 x (445,000,000 + 445,000,000) = 1.78e9 <= usable, so both prefixes are stored:
    # floor((107,374,182,400 - 2 x 445,000,000) / 445,000,000) = floor(106,484,182,400 / 445,000,000) = floor(239.29) = 239
    r = plan(make_inputs(**GOLDEN, shared_prefixes=2))
    assert r.sessions_per_gpu == 239
    assert r.prefix_copies == 2 and r.shared_prefixes_bytes == 890_000_000


def test_more_prefixes_than_sessions_each_session_brings_its_own():
    # K = 300: 300 x 890,000,000 = 267e9 > 107,374,182,400, so fewer sessions than prefixes fit and each
    # carries its prefix: floor(107,374,182,400 / 890,000,000) = floor(120.65) = 120
    r = plan(make_inputs(**GOLDEN, shared_prefixes=300))
    assert r.sessions_per_gpu == 120
    assert r.prefix_copies == 120


def test_v41_on_h200_with_weights_and_reserve():
    # H200 reports 143,771 MiB = 143,771 x 1,048,576 = 150,754,820,096 B (public nvidia-smi output).
    # x 0.9 = 135,679,338,086.4 -> 135,679,338,086 B
    # weights: 552e9 total parameters (never the 8B/16B active) x 0.5625 B (NVFP4: 4.5 bit) = 310,500,000,000 B,
    #          over 8 GPUs = 38,812,500,000 B per GPU; reserve 2 GiB = 2,147,483,648 B
    # usable = 135,679,338,086 - 38,812,500,000 - 2,147,483,648 = 94,719,354,438 B
    # hit 0.8 of 1,000,000: prefix 800,000 x 890 = 712,000,000 B
    # per session: (1,000,000 + 2,000 output - 800,000) x 890 = 202,000 x 890 = 179,780,000 B
    # sessions = floor((94,719,354,438 - 712,000,000) / 179,780,000) = floor(522.90) = 522
    # rate: min(5,000 / 2,000 = 2.5, 522 / (2,000 / 50 = 40 s) = 13.05) = 2.5 /s (decode throughput)
    # data-parallel attention: each GPU holds whole sessions (with tp, the same 522 sessions per replica)
    r = plan(make_inputs(gpu_id="h200", weight_format="nvfp4", context_tokens=1_000_000, hit_rate=1, shared_prefix=0.8,
                         output_tokens=2_000, attention_parallelism="dp"))
    assert r.hbm_bytes == 150_754_820_096
    assert r.weights_bytes_per_gpu == 38_812_500_000
    assert r.reserve_bytes == 2_147_483_648
    assert r.usable_kv_bytes == 94_719_354_438
    assert r.shared_prefix_bytes == 712_000_000
    assert r.per_session_bytes == 179_780_000
    assert r.sessions_per_gpu == 522
    assert r.request_rate_per_s == pytest.approx(2.5)
    assert r.request_rate_limit == "decode throughput"


def test_exponential_pause_miss_probability_and_replay():
    # exponential pauses, mean 30 s, TTL 60 s: P(pause > 60) = exp(-60/30) = exp(-2) = 0.1353352832
    # miss replays the 128-token window (V4.1 ring) at 20,000 tokens/s: 128 / 20,000 = 0.0064 s
    # per turn: 0.1353352832 x 128 = 17.3229 tokens, 0.1353352832 x 0.0064 = 0.000866146 s
    # a hit reloads 2,703,360 B of state over PCIe 5.0 x16 (64 GB/s): 2,703,360 / 64e9 = 0.00004224 s
    # restore = (1 - 0.1353352832) x 0.00004224 + 0.000866146 = 0.000902669 s; TTFT = + 1/50 s = 0.020902669 s
    # GPU time per request = 1,000 / 5,000 + 17.3229 / 20,000 = 0.200866146 s -> 4.97844 requests/s
    # (hit rate 1: every prompt token read from cache, so no prompt prefill adds to TTFT or GPU time)
    r = plan(make_inputs(pause_mean_s=30, ttl_s=60, attention_parallelism="dp", hit_rate=1))  # whole sessions per GPU
    assert r.miss_probability == pytest.approx(0.1353352832)
    assert r.replay_window_tokens == 128
    assert r.replay_seconds_per_miss == pytest.approx(0.0064)
    assert r.replay_tokens_per_turn == pytest.approx(17.3229, rel=1e-5)
    assert r.replay_seconds_per_turn == pytest.approx(0.000866146, rel=1e-6)
    assert r.state_reload_s == pytest.approx(0.00004224)
    assert r.ttft_s == pytest.approx(0.020902669, rel=1e-7)
    assert r.request_rate_per_s == pytest.approx(4.97844, rel=1e-5)
    assert r.sessions_per_gpu == 143  # sessions first: the replay penalty does not change the byte count


@pytest.mark.parametrize("mean,ttl,dist,expected", [
    (30, 60, "exponential", math.exp(-2)),   # exp(-60/30)
    (60, 60, "exponential", math.exp(-1)),   # exp(-1) = 0.3679
    (10, 0, "exponential", 1.0),             # TTL 0: never persisted (vLLM): every resume replays
    (0, 60, "exponential", 0.0),             # no pause: the state never expires
    (30, 60, "fixed", 0.0),                  # 30 s < 60 s
    (60, 60, "fixed", 0.0),                  # at exactly the TTL the state is still there
    (61, 60, "fixed", 1.0),                  # 61 s > 60 s
])
def test_miss_probability(mean, ttl, dist, expected):
    assert miss_probability(mean, ttl, dist) == pytest.approx(expected)


def test_state_alive_fraction():
    # exponential: E[min(X, TTL)] / E[X] = 1 - exp(-TTL/m): m = 60, TTL = 60 -> 1 - exp(-1) = 0.6321
    assert state_alive_fraction(60, 60) == pytest.approx(0.6321205588)
    # fixed pause 120 s, TTL 60 s: kept for 60 of 120 s -> 0.5
    assert state_alive_fraction(120, 60, "fixed") == pytest.approx(0.5)


def test_state_in_hbm_never_misses():
    r = plan(make_inputs(pause_mean_s=600, ttl_s=0, state_in_hbm=True))
    assert r.miss_probability == 0 and r.replay_tokens_per_turn == 0 and not r.state_parked


def test_model_without_out_of_pool_state_never_replays():
    r = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=8_000,
                         pause_mean_s=600, ttl_s=0))
    assert r.replay_window_tokens == 0 and r.miss_probability == 0 and r.restore_s == 0


def test_reload_vs_recompute_of_a_parked_one_million_token_session():
    # hit 0, 0 output: the parked session is 1,000,000 x 890 = 890,000,000 B
    # host RAM over PCIe 5.0 x16 (64 GB/s per direction): 890,000,000 / 64e9 = 0.01390625 s
    # SSD (NVMe Gen4, 7 GB/s, slower than the host link): 890,000,000 / 7e9 = 0.127142857 s
    # recompute: 1,000,000 tokens / 20,000 tokens/s = 50 s
    r = plan(make_inputs(hit_rate=0, shared_prefix=0, output_tokens=0))
    assert r.parked_session_bytes == 890_000_000
    assert r.host_link_id == "pcie5-x16" and r.ssd_link_id == "nvme-gen4"
    assert r.reload_from_host_s == pytest.approx(0.01390625)
    assert r.reload_from_ssd_s == pytest.approx(0.127142857)
    assert r.recompute_s == pytest.approx(50.0)
    assert r.fastest_recovery == "host RAM reload"
    # GB200: NVLink-C2C 450 GB/s per direction -> 890,000,000 / 450e9 = 0.001977778 s; Gen5 SSD 14 GB/s -> 0.063571 s
    g = plan(make_inputs(gpu_id="gb200", hit_rate=0, shared_prefix=0, output_tokens=0))
    assert g.reload_from_host_s == pytest.approx(0.001977778)
    assert g.reload_from_ssd_s == pytest.approx(0.063571429)


def test_tiers_in_the_plan_add_up_and_offload():
    # 143 sessions fit in HBM; ask for 300 with 60 s pauses: paused ones are parked in host RAM
    r = plan(make_inputs(pause_mean_s=60, target_sessions_per_gpu=300, attention_parallelism="dp"))
    t = r.tiers
    assert t.hbm_bytes + t.host_ram_bytes + t.ssd_bytes + t.evicted_bytes == t.total_bytes
    assert t.sessions_in_hbm == 143 and t.sessions_in_host_ram == 300 - 143
    assert r.overflow_action == "offload" and "Offload" in r.overflow_message
    assert r.ttft_s > plan(make_inputs(pause_mean_s=60, attention_parallelism="dp")).ttft_s  # parked tails must come back


def test_tiers_reject_when_not_one_session_fits():
    # Llama 3.1 405B BF16 on one H100: weights alone exceed HBM
    r = plan(make_inputs(model_id="llama-3.1-405b", gpu_id="h100-sxm", gpus_per_replica=1))
    assert r.sessions_per_gpu == 0 and r.overflow_action == "reject"
    assert "running session" in r.overflow_message


def test_tiers_evict_when_host_and_ssd_are_full():
    r = plan(make_inputs(pause_mean_s=600, target_sessions_per_gpu=1_000, host_ram_gib=0, ssd_gib=10,
                         attention_parallelism="dp"))
    assert r.overflow_action == "evict" and r.tiers.sessions_evicted > 0
    assert r.tiers.evicted_bytes > 0


def test_plan_frame_has_the_new_columns():
    frame = plan_frame(plan(make_inputs(pause_mean_s=30)))
    for col in ("miss_probability", "replay_seconds_per_turn", "ttft_s", "tier_hbm_bytes_per_gpu",
                "tier_host_ram_bytes_per_gpu", "tier_ssd_bytes_per_gpu", "tier_total_bytes_per_gpu", "overflow_action"):
        assert col in frame.columns
    assert frame.loc[0, "miss_probability"] == 0.1353  # exp(-2) = 0.135335..., 4 significant digits


def test_every_token_shared_is_not_zero_sessions():
    # hit 1, no output: a session owns nothing, memory does not bound sessions (reported as the cap)
    r = plan(make_inputs(**{**GOLDEN, "hit_rate": 1.0, "shared_prefix": 1.0}))
    assert r.sessions_per_gpu == MAX_SESSIONS_PER_GPU
    assert "does not bound" in r.message


@pytest.mark.parametrize("field,value", [
    ("shared_prefixes", 0), ("shared_prefixes", -1), ("pause_mean_s", -1), ("pause_mean_s", float("nan")),
    ("pause_mean_s", 1e12), ("ttl_s", -5), ("ttl_s", float("inf")), ("prefill_tokens_per_s", 0),
    ("prefill_tokens_per_s", float("nan")), ("host_ram_gib", -1), ("ssd_gib", 1e30), ("host_link", "pcie9"),
    ("ssd_link", "floppy"), ("pause_distribution", "gamma"), ("target_sessions_per_gpu", -1),
])
def test_bad_new_inputs_name_field_and_range(field, value):
    with pytest.raises(PlanInputError) as info:
        make_inputs(**{field: value})
    assert info.value.field == field and "expected" in str(info.value)


# -- properties --------------------------------------------------------------

MODELS = st.sampled_from(["deepseek-v4.1-flash", "llama-3.1-8b", "qwen3-8b", "mistral-7b-v0.1", "deepseek-v3",
                          "gemma-2-9b"])
HBM = st.floats(min_value=8, max_value=2_000, allow_nan=False)
HIT = st.floats(min_value=0, max_value=1, allow_nan=False)
CTX = st.integers(min_value=1, max_value=4_000_000)
OUT = st.integers(min_value=0, max_value=10_000)
K = st.integers(min_value=1, max_value=64)


def _sessions(model_id, hbm, hit, ctx, out, k, state_in_hbm=False):
    return plan(make_inputs(model_id=model_id, gpu_id="custom", hbm_gib=hbm, weights_gib=0, reserve_gib=0,
                            gpus_per_replica=1, hit_rate=hit, shared_prefix=hit, context_tokens=ctx, output_tokens=out,
                            shared_prefixes=k, state_in_hbm=state_in_hbm)).sessions_per_gpu


@settings(max_examples=150, deadline=None)
@given(MODELS, HBM, HBM, HIT, CTX, OUT, K)
def test_more_hbm_never_fewer_sessions(model_id, a, b, hit, ctx, out, k):
    lo, hi = sorted((a, b))
    assert _sessions(model_id, hi, hit, ctx, out, k) >= _sessions(model_id, lo, hit, ctx, out, k)


@settings(max_examples=150, deadline=None)
@given(MODELS, HBM, HIT, HIT, CTX, OUT, K, st.booleans())
def test_higher_hit_rate_never_fewer_sessions(model_id, hbm, a, b, ctx, out, k, state_in_hbm):
    lo, hi = sorted((a, b))
    assert _sessions(model_id, hbm, hi, ctx, out, k, state_in_hbm) >= _sessions(model_id, hbm, lo, ctx, out, k, state_in_hbm)


@settings(max_examples=150, deadline=None)
@given(MODELS, HBM, HIT, CTX, CTX, OUT, K)
def test_longer_context_never_more_sessions(model_id, hbm, hit, a, b, out, k):
    short, long_ = sorted((a, b))
    assert _sessions(model_id, hbm, hit, long_, out, k) <= _sessions(model_id, hbm, hit, short, out, k)


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10**7), st.integers(0, 10**9), st.integers(0, 10**9), st.integers(1, 1000))
def test_sessions_that_fit_fits(usable, prefix, per, k):
    s = sessions_that_fit(usable, prefix, per, k)
    if 0 < s < MAX_SESSIONS_PER_GPU:
        # the bytes of s sessions and their min(s, K) prefixes fit; one more session does not
        assert min(s, k) * prefix + s * per <= usable
        assert min(s + 1, k) * prefix + (s + 1) * per > usable
