"""KV accounting per layer group, per GPU (docs/accounting.md, docs/sources.md).

Every expected value is worked by hand next to it from the bundled configs
(planner/data/models, see SOURCES.md) or a cited public figure; none is
computed with the code under test.
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.entries import get_model, models
from planner.errors import PlanInputError
from planner.kv.formats import get_format
from planner.kv.kinds import (
    ChunkedLocalGroup,
    FullAttentionGroup,
    MLAGroup,
    SlidingWindowGroup,
    StateGroup,
    check_tokens,
)
from planner.kv.models import ModelSpec, breakdown_frame, coefficient_check, coefficient_model, how_computed
from planner.units import MiB, format_bytes

BF16 = get_format("bf16")


def per_token(model_id, kv_format=None, tp=1, pp=1, n=1):
    return get_model(model_id).estimate(n, kv_format, tp, pp).kv_bytes_per_token


# ---------------------------------------------------------------------------
# Full attention / GQA
# ---------------------------------------------------------------------------

def test_llama_3_1_8b():
    # config: 32 layers, 8 KV heads, head_dim 4096 / 32 = 128, BF16: 2 x 32 x 8 x 128 x 2 = 131,072 B/token
    assert per_token("llama-3.1-8b") == 131_072


def test_llama_3_1_70b_640_mib_at_2048():
    # 2 x 80 x 8 x 128 x 2 = 327,680 B/token; x 2,048 = 671,088,640 B = 640 MiB (llama.cpp)
    est = get_model("llama-3.1-70b").estimate(2048)
    assert est.kv_bytes_per_token == 327_680
    assert est.kv_bytes == 640 * MiB


@pytest.mark.parametrize("model_id, expected", [
    ("deepseek-v3", 70_272),      # ISCA'25 Table 1: 70.272 KB = 61 x (512 + 64) x 2 B
    ("qwen2.5-72b", 327_680),     # 327.680 KB = 2 x 80 x 8 x 128 x 2
    ("llama-3.1-405b", 516_096),  # 516.096 KB = 2 x 126 x 8 x 128 x 2
])
def test_isca25_table1(model_id, expected):
    assert per_token(model_id) == expected


def test_deepseek_v1_437x():
    # DeepSeek LLM 67B: 2 x 95 x 8 x 128 x 2 = 389,120 B/token; / 890 = 437.2 (arXiv:2401.02954; docs/sources.md)
    assert per_token("deepseek-llm-67b") == 389_120
    assert round(389_120 / per_token("deepseek-v4.1-flash"), 1) == 437.2


def test_kv_width_is_kv_heads_not_hidden_size():
    # §8 fault: K/V width from hidden_size (4,096) instead of 8 KV heads x 128 = 1,024.
    # Wrong: 2 x 32 x 4,096 x 2 = 524,288; right: 131,072.
    assert per_token("llama-3.1-8b") != 524_288


def test_k_and_v_widths_may_differ():
    # 8 heads x (K 192 + V 128) x 2 B = 8 x 640 = 5,120 B per layer; 4 layers = 20,480 B/token
    g = FullAttentionGroup(name="full", num_layers=4, kv_format=BF16, num_kv_heads=8, k_head_dim=192, v_head_dim=128)
    assert g.entry_bytes() == 5_120
    assert g.bytes_for(10) == 204_800  # 20,480 x 10


def test_llama_3_8b_q8_0():
    # 32 x 8 x 2 x (128 + ceil(128/32) x 2) = 32 x 8 x 2 x 136 = 69,632 B/token (llama.cpp q8_0)
    assert per_token("llama-3.1-8b", "q8_0") == 69_632


@pytest.mark.parametrize("fmt, expected", [
    ("fp8", 65_536),   # 2 x 32 x 8 x 128 x 1
    ("nvfp4", 36_864), # 2 x 32 x 8 x (64 + 8 scales) = 2 x 32 x 8 x 72
    ("int4", 33_792),  # 2 x 32 x 8 x (64 + 2) = 2 x 32 x 8 x 66
])
def test_llama_formats(fmt, expected):
    assert per_token("llama-3.1-8b", fmt) == expected


# ---------------------------------------------------------------------------
# Tensor and pipeline parallelism
# ---------------------------------------------------------------------------

def test_llama_3_70b_on_32_tp_ranks():
    # 8 KV heads on 32 ranks: 1 head each (replicated, never 1/4): 80 x 1 x 2 x 128 x 2 = 40,960 B/token per GPU
    est = get_model("llama-3.1-70b").estimate(1, tp=32)
    assert est.kv_bytes_per_token == 40_960
    assert est.groups[0].kv_heads_per_gpu == 1
    # per replica: 32 ranks x 40,960 = 1,310,720 B/token (replication costs 4x the model's 327,680)
    assert est.kv_bytes_per_replica == 1_310_720
    assert "GPU" in est.per


@pytest.mark.parametrize("tp, expected", [
    (1, 327_680),   # 8 heads x 512 B x 80
    (2, 163_840),   # 4 heads
    (8, 40_960),    # 1 head
    (16, 40_960),   # TP 16 > 8 heads: still 1 head, not 0.5 (§8: TP dividing heads below one)
])
def test_tp_heads_per_gpu(tp, expected):
    assert per_token("llama-3.1-70b", tp=tp) == expected


def test_tp_vllm_refuses_is_refused_for_catalog_models():
    # Llama-3.1-70B has 64 attention heads: vLLM's ModelConfig.verify_with_parallel_config refuses TP 3
    # ("Total number of attention heads (64) must be divisible by tensor parallel size (3)"); Qwen2.5-7B's 28
    # heads refuse TP 8. The catalog now carries the head counts of its config.json, so kvplan refuses them too.
    for model_id, tp in (("llama-3.1-70b", 3), ("qwen2.5-7b", 8)):
        with pytest.raises(PlanInputError) as exc:
            get_model(model_id).estimate(1, tp=tp)
        assert exc.value.field == "tp"


def test_mla_replicated_not_divided_by_tp():
    # DeepSeek-V3 at TP 8 keeps 61 x 576 x 2 = 70,272 B/token per GPU (§8: MLA divided by TP -> 8,784)
    est = get_model("deepseek-v3").estimate(1, tp=8)
    assert est.kv_bytes_per_token == 70_272
    assert est.kv_bytes_per_replica == 8 * 70_272  # every rank holds the latent


@pytest.mark.parametrize("pp, expected", [
    (1, 131_072),
    (2, 65_536),   # 16 layers per stage x 4,096
    (3, 45_056),   # ceil(32/3) = 11 layers x 4,096 (largest stage)
    (32, 4_096),   # one layer per stage
])
def test_pp_divides_layers(pp, expected):
    est = get_model("llama-3.1-8b").estimate(1, pp=pp)
    assert est.kv_bytes_per_token == expected
    assert est.kv_bytes_per_replica == 131_072  # all stages together hold every layer once


def test_pp_per_group_on_gemma_3():
    # Gemma 3 27B at PP 4: ceil(10/4) = 3 global layers x 8,192 B = 24,576 B/token past the window;
    # sliding ceil(52/4) = 13 layers x 8,192 x 1,024 = 109,051,904 B per sequence
    est = get_model("gemma-3-27b").estimate(100_000, pp=4)
    assert est.kv_bytes_per_token == 24_576
    rows = {g.name: g for g in est.groups}
    assert rows["sliding window 1,024"].num_layers_per_gpu == 13
    assert rows["sliding window 1,024"].bytes == 109_051_904


def test_pp_on_reported_coefficient_uses_the_largest_stage_share():
    # V4.1 (40 layers) at PP 2: vLLM get_pp_indices gives layers 0-19 and 20-39. The growing layers are the
    # ratio-2 compressed layers 2, 8, 14 (178 B/token each: 144 main + 34 indexer keys) and the ratio-1 layer 20
    # (356 B/token). Stage 0: 3 x 178 = 534 B/token; stage 1: 356. The binding stage holds 534 of the
    # architecture's 890, so the reported 890 B/token scales to 890 x 534/890 = 534 B/token per GPU.
    # (Per-group ceilings, ceil(1/2) + ceil(3/2) layers = 712, overstated it by a third.)
    assert per_token("deepseek-v4.1-flash", pp=2) == 534


def test_tp_pp_together():
    # Llama-3.1-70B TP 2, PP 4: 4 heads x 512 B x ceil(80/4) = 20 layers = 40,960 B/token per GPU;
    # per replica: 2 ranks x 4 heads x 512 x 80 layers = 327,680
    est = get_model("llama-3.1-70b").estimate(1, tp=2, pp=4)
    assert est.kv_bytes_per_token == 40_960
    assert est.kv_bytes_per_replica == 327_680


# ---------------------------------------------------------------------------
# MLA
# ---------------------------------------------------------------------------

def test_deepseek_v2_mla_elements():
    # DeepSeek-V2 paper Table 1: (d_c + d_h^R) x l = (512 + 64) x 60 = 34,560 elements per token
    g = get_model("deepseek-v2").groups[0]
    assert isinstance(g, MLAGroup)
    assert g.num_layers * (g.kv_lora_rank + g.qk_rope_head_dim) == 34_560
    # BF16: 34,560 x 2 = 69,120 B/token; not doubled (138,240), rope kept (not 61,440), x layers (not 1,152)
    assert per_token("deepseek-v2") == 69_120


# ---------------------------------------------------------------------------
# Sliding windows, chunks
# ---------------------------------------------------------------------------

def test_mistral_all_layers_slide():
    # per layer 8 heads x 2 x 128 x 2 B = 4,096 B per token; all 32 layers slide with W = 4,096:
    # cap 32 x 4,096 x 4,096 = 536,870,912 B
    m = get_model("mistral-7b-v0.1")
    assert m.estimate(1_000).kv_bytes == 131_072_000   # 32 x 4,096 x 1,000: not dropped (§8)
    assert m.estimate(32_768).kv_bytes == 536_870_912  # not charged full (§8: 4,294,967,296)
    assert m.estimate(32_768).kv_bytes_per_token == 0


def test_gemma_2_alternating():
    # 42 layers: 21 sliding (W 4,096) + 21 global; per layer 2 x 8 x 256 x 2 = 8,192 B.
    # At 8,192 tokens: 21 x 8,192 x 8,192 + 21 x 8,192 x 4,096 = 1,409,286,144 + 704,643,072 = 2,113,929,216
    est = get_model("gemma-2-9b").estimate(8_192)
    assert est.kv_bytes == 2_113_929_216
    assert est.kv_bytes_per_token == 172_032  # 21 x 8,192 (global layers only)


def test_gemma_3_27b():
    # 62 layers, every 6th global: 10 global + 52 sliding (W 1,024); per layer 2 x 16 x 128 x 2 = 8,192 B.
    # At 131,072: 10 x 8,192 x 131,072 + 52 x 8,192 x 1,024 = 10,737,418,240 + 436,207,616 = 11,173,625,856
    est = get_model("gemma-3-27b").estimate(131_072)
    assert est.kv_bytes == 11_173_625_856
    assert est.kv_bytes_per_token == 81_920


@pytest.mark.parametrize("model_id, n, expected_bytes, slope", [
    # gpt-oss-120b: 36 layers alternate, 8 KV heads x 64: 2 x 8 x 64 x 2 = 2,048 B per layer.
    # 18 x 2,048 x 131,072 + 18 x 2,048 x 128 = 4,831,838,208 + 4,718,592 = 4,836,556,800
    ("gpt-oss-120b", 131_072, 4_836_556_800, 36_864),
    # gpt-oss-20b: 24 layers: 12 x 2,048 x 131,072 + 12 x 2,048 x 128 = 3,221,225,472 + 3,145,728
    ("gpt-oss-20b", 131_072, 3_224_371_200, 24_576),
])
def test_gpt_oss(model_id, n, expected_bytes, slope):
    est = get_model(model_id).estimate(n)
    assert est.kv_bytes == expected_bytes
    assert est.kv_bytes_per_token == slope


def test_chunked_local_holds_one_chunk():
    # Llama 4 Scout-shaped: 36 chunked layers (C = 8,192) + 12 global, 8 KV heads x 128 -> 4,096 B per layer.
    # At 1,000,000: 12 x 4,096 x 1,000,000 + 36 x 4,096 x 8,192 = 49,152,000,000 + 1,207,959,552
    full = FullAttentionGroup(name="full", num_layers=12, kv_format=BF16, num_kv_heads=8, k_head_dim=128,
                              v_head_dim=128)
    chunked = ChunkedLocalGroup(name="chunked", num_layers=36, kv_format=BF16, num_kv_heads=8, k_head_dim=128,
                                v_head_dim=128, chunk_tokens=8_192)
    m = ModelSpec(id="scout-shaped", name="scout", groups=(full, chunked))
    assert m.estimate(1_000_000).kv_bytes == 50_359_959_552
    assert m.estimate(1_000_000).kv_bytes_per_token == 49_152


# ---------------------------------------------------------------------------
# DeepSeek V4.1-Flash from its parts
# ---------------------------------------------------------------------------

def test_v41_flash_890_from_its_parts():
    # entry = 288 B main (nvfp4, 512 ch) + 68 B indexer (mxfp4, 128 ch) = 356 B;
    # KV sources 2, 8, 14 compress 2:1, layer 20 keeps every token: 3 x 1/2 + 1 = 2.5 entries; 2.5 x 356 = 890
    m = get_model("deepseek-v4.1-flash")
    chk = coefficient_check(m)
    assert chk.reported == 890 and chk.architecture == 890 and chk.matches
    rows = {g.name: g for g in m.estimate(1_000_000).groups}
    assert rows["compressed 1/2 main"].entry_bytes == 288
    assert rows["compressed 1/2 indexer keys"].entry_bytes == 68
    assert rows["compressed 1/2 main"].num_layers == 3 and rows["compressed 1/1 main"].num_layers == 1


def test_v41_flash_one_million_tokens_and_window_state():
    # 890 x 1,000,000 = 890,000,000 B = 0.89 GB (0.829 GiB); the ring is 40 layers x 128 x 528 = 2,703,360 B
    # per session, outside the pool (host RAM, docs/sources.md)
    est = get_model("deepseek-v4.1-flash").estimate(1_000_000)
    assert est.kv_bytes == 890_000_000
    assert format_bytes(est.kv_bytes) == "0.89 GB (0.829 GiB)"
    assert est.state_bytes_outside_pool == 2_703_360
    assert est.basis == "reported coefficient"


def test_v41_flash_tp_keeps_890_per_gpu():
    # one KV head, replicated on every TP rank
    assert per_token("deepseek-v4.1-flash", tp=8) == 890


def test_v41_flash_main_kv_in_bf16():
    # main entries 512 x 2 = 1,024 B; indexer keys keep mxfp4 68 B:
    # 1 x (1,024 + 68) + 3 x (1,024 + 68) / 2 = 1,092 + 1,638 = 2,730 B/token
    assert per_token("deepseek-v4.1-flash", "bf16") == 2_730


def test_v4_flash_reported_vs_bf16_architecture():
    # V4-Flash keeps its shipped 3,514 B/token; its BF16 architecture: 21 C4 layers x (1,024 + 256) / 4
    # + 20 C128 layers x 1,024 / 128 = 6,720 + 160 = 6,880 B/token: the breakdown says they differ
    chk = coefficient_check(get_model("deepseek-v4-flash"))
    assert chk.reported == 3_514 and chk.architecture == 6_880 and not chk.matches


# ---------------------------------------------------------------------------
# Fixed state
# ---------------------------------------------------------------------------

def test_state_group_tp_split():
    # Gated DeltaNet recurrent state, 32 value heads x 128 x 128 BF16: 32 x 16,384 x 2 = 1,048,576 B per layer;
    # TP 4: 8 heads x 16,384 x 2 = 262,144 B; TP 64 > 32 heads: 1 head = 32,768 B (never below one)
    g = StateGroup(name="rec", num_layers=36, kv_format=BF16, role="state", num_units=32, elements_per_unit=16_384)
    assert g.entry_bytes(1) == 1_048_576
    assert g.entry_bytes(4) == 262_144
    assert g.entry_bytes(64) == 32_768
    assert g.bytes_for(1) == g.bytes_for(10**6) == 36 * 1_048_576  # fixed per sequence
    assert g.bytes_for(0) == 0


def test_coefficient_model_state_outside_pool():
    # 890 B/token x 1,000 = 890,000 B in the pool; 2,703,360 B of state outside
    m = coefficient_model(890, state_bytes=2_703_360)
    est = m.estimate(1_000)
    assert est.kv_bytes == 890_000 and est.state_bytes_outside_pool == 2_703_360


# ---------------------------------------------------------------------------
# Breakdown and explanation
# ---------------------------------------------------------------------------

def test_breakdown_frame_columns_and_values():
    df = breakdown_frame(get_model("gemma-2-9b"), 8_192)
    assert list(df.columns)[:4] == ["group", "kind", "role", "layers"]
    sliding = df[df.group == "sliding window 4,096"].iloc[0]
    assert sliding.layers == 21 and sliding.kv_heads_per_gpu == 8 and sliding.entry_bytes == 8_192
    assert sliding.growth == "capped" and sliding.bytes == 704_643_072 and bool(sliding.in_pool)
    assert sliding.bytes_per_token == 172_032  # 21 x 8,192 while it grows
    assert df.bytes.sum() == 2_113_929_216


def test_how_computed_mentions_the_numbers():
    # Llama-3.1-70B at TP 32, 2,048 tokens: entry 1 head x (256 + 256) = 512 B per layer;
    # 80 layers x 2,048 x 512 = 83,886,080 B per GPU (not the TP-1 figure 671,088,640)
    text = "\n".join(how_computed(get_model("llama-3.1-70b"), 2_048, tp=32))
    assert "replicated" in text
    assert "80 layer(s) x 2,048 entries x 512 B = 83,886,080 B" in text
    assert "671,088,640" not in text


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n", [-1, float("nan"), float("inf"), 1.5, "1000", True, 10**13, None])
def test_bad_context(n):
    with pytest.raises(PlanInputError) as exc:
        get_model("llama-3.1-8b").estimate(n)
    assert exc.value.field == "context_tokens"


@pytest.mark.parametrize("field, kwargs", [
    ("tp", {"tp": 0}), ("tp", {"tp": -8}), ("tp", {"tp": 1.5}), ("tp", {"tp": True}), ("tp", {"tp": 10**6}),
    ("pp", {"pp": 0}), ("pp", {"pp": 2.0}), ("pp", {"pp": 33}),  # 32 layers: at most 32 stages
])
def test_bad_parallelism(field, kwargs):
    with pytest.raises(PlanInputError) as exc:
        get_model("llama-3.1-8b").estimate(1, **kwargs)
    assert exc.value.field == field


def test_coefficient_only_model_refuses_pp_and_formats():
    m = coefficient_model(890)
    with pytest.raises(PlanInputError):
        m.estimate(1, pp=2)
    with pytest.raises(PlanInputError):
        m.estimate(1, "fp8")


@pytest.mark.parametrize("coef", [0, -1, float("nan"), float("inf"), 1e12, True])
def test_bad_coefficient(coef):
    with pytest.raises(PlanInputError):
        coefficient_model(coef)


def test_zero_tokens_hold_nothing():
    for m in models().values():
        est = m.estimate(0)
        assert est.kv_bytes == 0 and est.state_bytes_outside_pool == 0


def test_check_tokens_accepts_whole_floats():
    assert check_tokens("n", 2048.0) == 2048


# ---------------------------------------------------------------------------
# Properties over the catalog
# ---------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(model_id=st.sampled_from(sorted(models())), n=st.integers(0, 2_000_000), extra=st.integers(0, 100_000),
       tp=st.sampled_from([1, 2, 4, 8, 16, 64]), pp=st.sampled_from([1, 2, 4]))
def test_properties(model_id, n, extra, tp, pp):
    m = get_model(model_id)
    if m.num_attention_heads % tp:
        return  # a TP size vLLM refuses for this model (test_tp_vllm_refuses_is_refused_for_catalog_models)
    a = m.estimate(n, None, tp, pp)
    b = m.estimate(n + extra, None, tp, pp)
    assert b.kv_bytes >= a.kv_bytes                  # more tokens never cost less
    assert a.kv_bytes_per_replica >= a.kv_bytes      # a replica holds at least one GPU's share
    assert m.estimate(n, None, 1, 1).kv_bytes >= a.kv_bytes  # splitting never adds bytes per GPU
    assert isinstance(a.kv_bytes, int) and a.kv_bytes >= 0
    assert math.isfinite(a.kv_bytes_per_token)


def test_sliding_window_group_is_capped():
    g = SlidingWindowGroup(name="s", num_layers=1, kv_format=BF16, num_kv_heads=1, k_head_dim=1, v_head_dim=1,
                           window_tokens=4)
    # 1 head x (2 + 2) B = 4 B per token, at most 4 tokens: 16 B
    assert [g.bytes_for(n) for n in (0, 3, 4, 5, 100)] == [0, 12, 16, 16, 16]


def test_pp_limit_is_the_model_layers_not_a_group():
    # V4.1 has 40 layers (4 KV sources): PP 4 is valid. vLLM get_pp_indices: layers 0-9, 10-19, 20-29, 30-39;
    # stage 0 holds ratio-2 layers 2 and 8 (2 x 178 = 356 B/token), stage 1 layer 14 (178), stage 2 the ratio-1
    # layer 20 (356), stage 3 none: the binding stage holds 356 of 890, so 890 x 356/890 = 356 B/token
    assert per_token("deepseek-v4.1-flash", pp=4) == 356
    with pytest.raises(PlanInputError):
        get_model("deepseek-v4.1-flash").estimate(1, pp=41)
