"""Theory vs vLLM, and a KV budget in vLLM's own terms (docs/accounting.md; vLLM source).

vLLM's arithmetic (V1, vllm-project/vllm@001cabc):
* ``get_num_blocks``: ``num_blocks = int(available_memory // page_size // num_layers)``;
* ``FullAttentionSpec.page_size_bytes = block_size x num_kv_heads x (head_size + head_size_v) x dtype_size``
  (per layer); ``max_memory_usage_bytes = cdiv(max_model_len, block_size) x page``;
* ``SlidingWindowSpec.max_memory_usage_bytes = (cdiv(min(W - 1 + max_num_batched_tokens, max_model_len),
  block_size) + 1) x page``;
* ``_report_kv_cache_config``: "GPU KV cache size: num_blocks // num_groups x block_size tokens",
  "Maximum concurrency for M tokens per request: num_blocks / blocks_per_request" ("%.2fx").

Logged GiB are rounded to two decimals, so a log line "3.81 GiB -> 1,952 blocks" means a budget in
[1,952, 1,953) blocks x 2 MiB = [3.8125, 3.8145) GiB; each test says which budget it uses.
"""

import pytest

from planner.catalog.entries import get_model
from planner.engines.capacity import (
    NOT_A_HARD_CAP,
    VLLMSettings,
    engine_frame,
    theory_vs_engine,
    vllm_capacity,
    vllm_max_model_len,
)
from planner.errors import PlanInputError
from planner.kv.formats import get_format
from planner.kv.kinds import FullAttentionGroup, SlidingWindowGroup
from planner.kv.models import ModelSpec
from planner.units import GiB, MiB

# Llama-3(.1)-8B on one GPU: page = 16 tokens x 8 heads x (128 + 128) x 2 B = 65,536 B per layer;
# a block id covers 32 layers: 2,097,152 B = 2 MiB.
LLAMA_BLOCK_BYTES = 2 * MiB
BF16 = get_format("bf16")


# ---------------------------------------------------------------------------
# Capacity: vLLM's logs
# ---------------------------------------------------------------------------

def test_llama_31_8b_issue_10517_log_at_20k():
    # "kv_cache_size=3.81GiB ... GPU blocks: 1952 ... Maximum concurrency for 20000 tokens per request: 1.56x"
    budget = 1_952 * LLAMA_BLOCK_BYTES  # 4,093,640,704 B = 3.8125 GiB, printed 3.81
    assert f"{budget / GiB:.2f}" == "3.81"
    cap = vllm_capacity(get_model("llama-3.1-8b"), budget, 20_000)
    assert cap.page_size_bytes == 65_536
    assert cap.num_blocks == 1_952
    assert cap.max_tokens == 31_232                      # 1,952 x 16
    assert cap.blocks_per_request == 1_250               # ceil(20,000 / 16)
    assert f"{cap.max_concurrency:.2f}x" == "1.56x"       # 1,952 / 1,250 = 1.5616
    assert cap.fits_one_request and cap.per == "GPU"


def test_llama_31_8b_budget_just_below_the_next_block():
    # any budget in [1,952, 1,953) x 2 MiB gives 1,952 blocks; exactly 3.81 GiB gives floor(3.81 x 512) = 1,950
    m = get_model("llama-3.1-8b")
    assert vllm_capacity(m, 1_953 * LLAMA_BLOCK_BYTES - 1, 20_000).num_blocks == 1_952
    assert vllm_capacity(m, int(3.81 * GiB), 20_000).num_blocks == 1_950


def test_llama_31_8b_issue_10517_log_at_29k():
    # same GPU, max_model_len 29,000: the re-profiled budget fell to 2.89 GiB -> "# GPU blocks: 1478";
    # "max seq len (29000) is larger than the maximum number of tokens ... (23648)"; "0.82x"
    budget = 1_478 * LLAMA_BLOCK_BYTES  # 3,099,590,656 B = 2.8867 GiB, printed 2.89
    assert f"{budget / GiB:.2f}" == "2.89"
    cap = vllm_capacity(get_model("llama-3.1-8b"), budget, 29_000)
    assert cap.num_blocks == 1_478
    assert cap.max_tokens == 23_648                      # 1,478 x 16
    assert f"{cap.max_concurrency:.2f}x" == "0.82x"       # 1,478 / ceil(29,000 / 16) = 1,478 / 1,813 = 0.815
    assert cap.needed_bytes == 1_813 * LLAMA_BLOCK_BYTES  # 3,802,136,576 B > budget
    assert not cap.fits_one_request


def test_llama_3_8b_a100_issue_12330():
    # A100-40GB: "11.12 GiB ... 5,691 blocks ... Maximum concurrency for 8192 tokens per request: 11.12x"
    budget = 5_691 * LLAMA_BLOCK_BYTES  # 11,934,892,032 B = 11.1152 GiB, printed 11.12
    assert f"{budget / GiB:.2f}" == "11.12"
    cap = vllm_capacity(get_model("llama-3.1-8b"), budget, 8_192)  # same KV geometry as Llama-3-8B
    assert cap.num_blocks == 5_691
    assert cap.max_tokens == 91_056                      # 5,691 x 16
    assert cap.blocks_per_request == 512                 # 8,192 / 16
    assert cap.max_concurrency == 5_691 / 512            # 11.115234375
    assert f"{cap.max_concurrency:.2f}x" == "11.12x"


def test_maximum_concurrency_is_not_a_hard_cap():
    # §8: it is pool tokens / max_model_len. The same 1,952 blocks hold 1,952 / ceil(1,000/16) = 1,952 / 63
    # = 30.98 requests of 1,000 tokens, not 1.56.
    m = get_model("llama-3.1-8b")
    budget = 1_952 * LLAMA_BLOCK_BYTES
    assert vllm_capacity(m, budget, 1_000).max_concurrency == 1_952 / 63
    assert "not a cap" in NOT_A_HARD_CAP and vllm_capacity(m, budget, 20_000).note == NOT_A_HARD_CAP


def test_largest_max_model_len_for_a_budget():
    # 1,952 blocks x 16 = 31,232 tokens fit one request; one byte less leaves 1,951 blocks: 31,216
    m = get_model("llama-3.1-8b")
    assert vllm_max_model_len(m, 1_952 * LLAMA_BLOCK_BYTES).max_model_len == 31_232
    assert vllm_max_model_len(m, 1_952 * LLAMA_BLOCK_BYTES - 1).max_model_len == 31_216
    assert vllm_max_model_len(m, LLAMA_BLOCK_BYTES - 1).max_model_len == 0  # not one block
    assert vllm_max_model_len(m, 0).max_model_len == 0
    # capped by the model's maximum context (131,072) however large the budget
    assert vllm_max_model_len(m, 10**15).max_model_len == 131_072
    assert "max_model_len" in vllm_max_model_len(m, GiB).note  # the budget itself moves (§8)


def test_largest_max_model_len_with_a_sliding_reservation():
    # Mistral 7B: 32 sliding layers (W 4,096), page 65,536 B, 2 MiB per block id. Budget 1.5 GiB = 768 blocks.
    # Needed blocks = cdiv(min(4,095 + 8,192, M), 16) + 1 <= 768 -> cdiv(M, 16) <= 767 -> M <= 12,272.
    fit = vllm_max_model_len(get_model("mistral-7b-v0.1"), 768 * LLAMA_BLOCK_BYTES)
    assert fit.max_model_len == 12_272
    # with a bigger budget the reservation stops growing at M = 12,287: cdiv(12,287, 16) + 1 = 769 blocks
    assert vllm_max_model_len(get_model("mistral-7b-v0.1"), 769 * LLAMA_BLOCK_BYTES).max_model_len == 32_768


def test_mla_capacity():
    # DeepSeek-V3: page = 16 x 576 x 2 = 18,432 B, 61 layers. 40 GiB = 42,949,672,960 B:
    # // 18,432 = 2,330,168 (18,432 x 2,330,168 = 42,949,656,576); // 61 = 38,199 (61 x 38,199 = 2,330,139)
    cap = vllm_capacity(get_model("deepseek-v3"), 40 * GiB, 163_840)
    assert cap.page_size_bytes == 18_432
    assert cap.num_blocks == 38_199
    assert cap.max_tokens == 611_184  # 38,199 x 16
    # TP 8 does not divide the latent: the same blocks per GPU
    assert vllm_capacity(get_model("deepseek-v3"), 40 * GiB, 163_840, tp=8).num_blocks == 38_199


def test_tp_and_pp_capacity():
    # Llama-3.1-70B TP 8: 1 head x 512 B x 16 = 8,192 B page, 80 layers: 10 GiB // 8,192 // 80 = 16,384 blocks
    cap = vllm_capacity(get_model("llama-3.1-70b"), 10 * GiB, 131_072, tp=8)
    assert cap.page_size_bytes == 8_192 and cap.num_blocks == 16_384 and cap.max_tokens == 262_144
    # Llama-3.1-8B PP 2: 16 layers per GPU: 4,093,640,704 // 65,536 // 16 = 3,904 blocks
    assert vllm_capacity(get_model("llama-3.1-8b"), 1_952 * LLAMA_BLOCK_BYTES, 20_000, pp=2).num_blocks == 3_904


def test_block_size_32():
    # page = 32 x 4,096 = 131,072 B; x 32 layers = 4 MiB per block: 4,093,640,704 // 4 MiB = 976 blocks = 31,232 tokens
    cap = vllm_capacity(get_model("llama-3.1-8b"), 1_952 * LLAMA_BLOCK_BYTES, 20_000,
                        settings=VLLMSettings(block_size=32))
    assert cap.num_blocks == 976 and cap.max_tokens == 31_232


def test_hybrid_capacity_gpt_oss_120b():
    # 18 full + 18 sliding (W 128), page = 16 x 8 x (64 + 64) x 2 = 32,768 B; group_size 18, 2 KV-cache groups.
    # 40 GiB // 32,768 = 1,310,720; // 18 = 72,817 blocks; tokens = 72,817 // 2 x 16 = 582,528.
    # Per 131,072-token request: 8,192 (full) + cdiv(min(127 + 8,192, 131,072), 16) + 1 = 520 + 1 = 521 -> 8,713.
    cap = vllm_capacity(get_model("gpt-oss-120b"), 40 * GiB)
    assert (cap.num_blocks, cap.num_kv_groups, cap.num_layers_per_block) == (72_817, 2, 18)
    assert cap.max_tokens == 582_528
    assert cap.blocks_per_request == 8_713
    assert cap.max_concurrency == 72_817 / 8_713


def test_uniform_type_with_several_page_sizes():
    # 16 layers x 8 heads + 16 layers x 4 heads (head 128, BF16): pages 65,536 and 32,768 B;
    # one block id = 16 x 65,536 + 16 x 32,768 = 1,572,864 B; 1 GiB // 1,572,864 = 682 blocks = 10,912 tokens
    g8 = FullAttentionGroup(name="8 heads", num_layers=16, kv_format=BF16, num_kv_heads=8, k_head_dim=128, v_head_dim=128)
    g4 = FullAttentionGroup(name="4 heads", num_layers=16, kv_format=BF16, num_kv_heads=4, k_head_dim=128, v_head_dim=128)
    cap = vllm_capacity(ModelSpec(id="mixed", name="mixed", groups=(g8, g4)), GiB, 4_096)
    assert cap.bytes_per_block == 1_572_864 and cap.num_blocks == 682 and cap.max_tokens == 10_912


def test_hybrid_page_sizes_are_unified_by_block_size():
    # full: 8 heads -> page 65,536; sliding: 4 heads -> 32,768, grown to 65,536 with 32-token blocks.
    # group_size 4; 1 GiB // 65,536 // 4 = 4,096 blocks; tokens 4,096 // 2 x 16 = 32,768
    full = FullAttentionGroup(name="full", num_layers=4, kv_format=BF16, num_kv_heads=8, k_head_dim=128, v_head_dim=128)
    swa = SlidingWindowGroup(name="swa", num_layers=4, kv_format=BF16, num_kv_heads=4, k_head_dim=128,
                             v_head_dim=128, window_tokens=1_000)
    m = ModelSpec(id="h", name="h", groups=(full, swa))
    cap = vllm_capacity(m, GiB, 4_096)
    assert cap.num_blocks == 4_096 and cap.max_tokens == 32_768
    # 3 heads (page 24,576) does not divide 65,536: vLLM raises NotImplementedError; kvplan names it
    odd = SlidingWindowGroup(name="swa", num_layers=4, kv_format=BF16, num_kv_heads=3, k_head_dim=128,
                             v_head_dim=128, window_tokens=1_000)
    with pytest.raises(PlanInputError):
        vllm_capacity(ModelSpec(id="h", name="h", groups=(full, odd)), GiB, 4_096)


# ---------------------------------------------------------------------------
# Theory vs engine, one sequence
# ---------------------------------------------------------------------------

def test_block_rounding():
    # 100 tokens: theory 100 x 131,072 = 13,107,200 B; vLLM ceil(100/16) = 7 blocks = 112 slots
    # -> 112 x 131,072 = 14,680,064 B
    r = theory_vs_engine(get_model("llama-3.1-8b"), 100)
    assert (r.theory_bytes, r.engine_bytes, r.differs) == (13_107_200, 14_680_064, True)
    assert any("block rounding" in x for x in r.reasons)
    # 4,096 tokens = 256 whole blocks: equal
    r = theory_vs_engine(get_model("llama-3.1-8b"), 4_096)
    assert r.theory_bytes == r.engine_bytes == 536_870_912 and not r.differs and r.reasons == ()


def test_sliding_window_reservation_gpt_oss_120b():
    # 100,000 tokens, max_model_len 100,000: full 18 x 6,250 x 32,768 = 3,686,400,000 (= theory);
    # sliding: theory 18 x 2,048 x 128 = 4,718,592; vLLM cdiv(min(127 + 8,192, 100,000), 16) + 1 = 521 blocks:
    # 18 x 521 x 32,768 = 307,298,304. Engine total 3,993,698,304.
    r = theory_vs_engine(get_model("gpt-oss-120b"), 100_000)
    assert r.theory_bytes == 3_686_400_000 + 4_718_592
    assert r.engine_bytes == 3_993_698_304
    rows = {t.kind: t for t in r.types}
    assert rows["sliding"].blocks_per_layer == 521 and rows["sliding"].engine_bytes == 307_298_304
    assert any("+1 for a window not aligned to a block" in x for x in r.reasons)
    df = engine_frame(r)
    assert list(df.columns)[:3] == ["name", "kind", "cap_tokens"] and int(df.engine_bytes.sum()) == 3_993_698_304


def test_short_sequence_holds_its_blocks_only():
    # gpt-oss-20b at 5,000 tokens (max_model_len 5,000): full 12 x 313 x 32,768 = 123,076,608 (313 = ceil(5,000/16));
    # sliding min(313, cdiv(min(8,319, 5,000), 16) + 1 = 314) = 313 blocks: 123,076,608. Total 246,153,216.
    # Theory: 12 x 2,048 x 5,000 + 12 x 2,048 x 128 = 122,880,000 + 3,145,728 = 126,025,728.
    r = theory_vs_engine(get_model("gpt-oss-20b"), 5_000)
    assert (r.theory_bytes, r.engine_bytes) == (126_025_728, 246_153_216)


def test_hybrid_manager_off_stores_full_kv_on_sliding_layers():
    # gpt-oss-120b with --disable-hybrid-kv-cache-manager: 36 layers x 6,250 blocks x 32,768 = 7,372,800,000
    r = theory_vs_engine(get_model("gpt-oss-120b"), 100_000, settings=VLLMSettings(hybrid_kv_cache_manager=False))
    assert r.engine_bytes == 7_372_800_000
    assert any("hybrid KV cache manager off" in x for x in r.reasons)


def test_all_sliding_model_keeps_its_window_with_hybrid_manager_off():
    # Mistral has no full layers, so vLLM does not convert: 32 x 769 x 65,536 = 1,612,709,888 either way
    # (769 = cdiv(min(4,095 + 8,192, 100,000), 16) + 1 = 768 + 1); theory 32 x 4,096 x 4,096 = 536,870,912
    for hybrid in (True, False):
        r = theory_vs_engine(get_model("mistral-7b-v0.1"), 100_000, settings=VLLMSettings(hybrid_kv_cache_manager=hybrid))
        assert (r.theory_bytes, r.engine_bytes) == (536_870_912, 1_612_709_888)


def test_gemma_3_padding_layers():
    # 52 sliding + 10 full: group_size 10 (52 >= 1.5 x 10); sliding fills ceil(52/10) = 6 groups = 60 layers (8 padding).
    # Page 16 x 8,192 = 131,072 B. Full: 10 x 6,250 x 131,072 = 8,192,000,000; sliding: 60 x 577 x 131,072
    # = 4,537,712,640 (577 = cdiv(min(1,023 + 8,192, 100,000), 16) + 1 = 576 + 1). Total 12,729,712,640.
    r = theory_vs_engine(get_model("gemma-3-27b"), 100_000)
    assert r.engine_bytes == 12_729_712_640
    sliding = [t for t in r.types if t.kind == "sliding"][0]
    assert (sliding.layers, sliding.padding_layers, sliding.blocks_per_layer) == (52, 8, 577)


def test_v41_flash_engine_not_modelled_shows_theory():
    r = theory_vs_engine(get_model("deepseek-v4.1-flash"), 1_000_000)
    assert r.engine_bytes == r.theory_bytes == 890_000_000 and not r.differs
    assert any("not modelled" in x for x in r.reasons)
    with pytest.raises(PlanInputError) as exc:
        vllm_capacity(get_model("deepseek-v4.1-flash"), 40 * GiB, 1_000_000)
    assert exc.value.field == "engine"


def test_tp_engine_view():
    # Llama-3.1-70B TP 32, 100 tokens: 80 layers x 7 blocks x 16 x 512 B = 4,587,520 (theory 80 x 100 x 512 = 4,096,000)
    r = theory_vs_engine(get_model("llama-3.1-70b"), 100, tp=32)
    assert (r.theory_bytes, r.engine_bytes) == (4_096_000, 4_587_520)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, field", [
    ({"block_size": 0}, "block_size"),
    ({"block_size": 16.0}, "block_size"),
    ({"block_size": 10**6}, "block_size"),
    ({"max_num_batched_tokens": -1}, "max_num_batched_tokens"),
    ({"max_model_len": 0}, "max_model_len"),
    ({"max_model_len": float("nan")}, "max_model_len"),
    ({"hybrid_kv_cache_manager": "no"}, "hybrid_kv_cache_manager"),
])
def test_bad_settings(kwargs, field):
    with pytest.raises(PlanInputError) as exc:
        VLLMSettings(**kwargs)
    assert exc.value.field == field


@pytest.mark.parametrize("budget", [-1, float("nan"), float("inf"), 1.5, 10**20, True, None])
def test_bad_budget(budget):
    with pytest.raises(PlanInputError) as exc:
        vllm_capacity(get_model("llama-3.1-8b"), budget, 4_096)
    assert exc.value.field == "kv_budget_bytes"


def test_zero_budget_holds_nothing():
    cap = vllm_capacity(get_model("llama-3.1-8b"), 0, 4_096)
    assert cap.num_blocks == 0 and cap.max_tokens == 0 and cap.max_concurrency == 0 and not cap.fits_one_request


def test_context_above_max_model_len():
    with pytest.raises(PlanInputError) as exc:
        theory_vs_engine(get_model("llama-3.1-8b"), 5_000, settings=VLLMSettings(max_model_len=4_096))
    assert exc.value.field == "context_tokens"


def test_bad_max_model_len_for_capacity():
    with pytest.raises(PlanInputError):
        vllm_capacity(get_model("llama-3.1-8b"), GiB, 0)
