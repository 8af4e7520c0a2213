"""The headline follows the named engine's admission: vLLM's maximum concurrency at the plan's length.

vLLM's arithmetic (vllm-project/vllm@001cabc, ``vllm/v1/core/kv_cache_utils.py``
``get_max_concurrency_for_kv_cache_config``: ``num_blocks / sum over KV-cache groups of
cdiv(max_memory_usage_bytes, page_size_bytes)``; ``vllm/v1/kv_cache_interface.py``
``SlidingWindowSpec.max_memory_usage_bytes``: ``(cdiv(min(W - 1 + max_num_batched_tokens, max_model_len),
block_size) + 1)`` pages; ``get_num_blocks``: ``budget // page_size // num_layers``). The defaults: block
size 16, ``max_num_batched_tokens`` 8192 (``EngineArgs.get_batch_defaults`` for ``vllm serve`` on GPUs with at
least 70 GiB other than A100).

The budget is given as a measurement (``measured_usable_kv_gib``), so these figures test the admission
arithmetic alone, whatever models the budget.
"""

import pytest

from planner.frontier import frontier_grid
from planner.plan import make_inputs, plan


def test_gpt_oss_20b_on_one_h100_admits_90_at_16000_tokens():
    # Setup: llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md (a public vLLM log summary):
    # openai/gpt-oss-20b, 1 x H100, TP 1, max-model-len 16000, "Available KV cache memory: 50.28 GiB".
    # gpt-oss-20b config.json: 24 layers alternating sliding (window 128) and full, 8 KV heads, head_dim 64, BF16:
    #   one layer, one token = 2 x 8 x 64 x 2 B = 2,048 B; page = 16 x 2,048 = 32,768 B.
    # 12 full + 12 sliding layers: group_size 12 (12 < 1.5 x 12), one KV-cache group each:
    #   bytes per block id = 32,768 x 12 = 393,216 B.
    # budget 50.28 GiB = round(50.28 x 2**30) = 53,987,738,911 B -> num_blocks = 53,987,738,911 // 393,216 = 137,297
    # one 16,000-token request: full cdiv(16,000, 16) = 1,000; sliding cdiv(min(127 + 8,192, 16,000), 16) + 1
    #   = cdiv(8,319, 16) + 1 = 520 + 1 = 521 -> 1,521 blocks; maximum concurrency 137,297 / 1,521 = 90.27x -> 90.
    # Steady state (windows only): 12 x 2,048 x 16,000 + 12 x 2,048 x 128 = 396,361,728 B per session;
    #   53,987,738,911 // 396,361,728 = 136.
    r = plan(make_inputs(model_id="gpt-oss-20b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=16_000,
                         output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=50.28, engine="vllm"))
    assert r.usable_kv_bytes == 53_987_738_911
    assert r.engine_num_blocks == 137_297 and r.engine_blocks_per_request == 1_521
    assert r.engine_max_concurrency == pytest.approx(90.2675, abs=1e-4)
    assert r.sessions_per_replica == 90 and r.sessions_basis == "engine admission"
    assert r.steady_state_sessions_per_replica == 136 and r.per_session_bytes == 396_361_728
    assert "90.27x" in r.sessions_note and "136" in r.sessions_note and "upper bound" in r.sessions_note
    # without an engine the headline is the steady state
    s = plan(r.inputs.model_copy(update={"engine": None}))
    assert s.sessions_per_replica == 136 and s.sessions_basis == "steady state" and s.engine_num_blocks is None


def test_gemma_3_27b_on_two_h100_floors_just_under_six():
    # Derived by hand from vLLM's code (not a log): Gemma 3 27B, TP 2, 32,000 tokens, a budget of 20 GiB per GPU.
    # config.json: 62 layers, 5 sliding (window 1,024) : 1 global -> 52 sliding + 10 full; 16 KV heads, head_dim
    # 128, BF16. TP 2: 8 heads per GPU -> one layer, one token = 2 x 8 x 128 x 2 B = 4,096 B; page = 65,536 B.
    # group_size = 10 (52 >= 1.5 x 10); sliding fills cdiv(52, 10) = 6 groups, full 1 group.
    # bytes per block id = 65,536 x 10 = 655,360; num_blocks = 20 x 2**30 // 655,360 = 32,768 exactly.
    # one request: full cdiv(32,000, 16) = 2,000; sliding 6 x (cdiv(min(1,023 + 8,192, 32,000), 16) + 1)
    #   = 6 x (576 + 1) = 3,462 -> 5,462 blocks; 32,768 / 5,462 = 5.999 -> 5 (one block short of 6).
    # Steady state: 10 x 4,096 x 32,000 + 52 x 4,096 x 1,024 = 1,310,720,000 + 218,103,808 = 1,528,823,808 B;
    #   21,474,836,480 // 1,528,823,808 = 14.
    r = plan(make_inputs(model_id="gemma-3-27b", gpu_id="h100-sxm", gpus_per_replica=2, context_tokens=32_000,
                         output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=20, engine="vllm"))
    assert r.engine_num_blocks == 32_768 and r.engine_blocks_per_request == 5_462
    assert r.sessions_per_replica == 5 and r.sessions_per_gpu == 2.5
    assert r.steady_state_sessions_per_replica == 14 and r.per_session_bytes == 1_528_823_808


def test_output_tokens_count_in_the_request_length():
    # gpt-oss-20b as above with 1,000 output tokens: requests of 17,000 tokens: full cdiv(17,000, 16) = 1,063,
    # sliding 521 -> 1,584; 137,297 // 1,584 = 86.
    r = plan(make_inputs(model_id="gpt-oss-20b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=16_000,
                         output_tokens=1_000, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=50.28, engine="vllm"))
    assert r.engine_blocks_per_request == 1_584 and r.sessions_per_replica == 86


def test_dp_attention_admits_per_gpu():
    # Llama 3.1 8B on 2 x H100 under DP attention: each GPU is its own vLLM engine at TP 1.
    # 32 layers x 8 heads x (128 + 128) x 2 B = 131,072 B/token; page 16 x 4,096 = 65,536 B per layer;
    # bytes per block id = 65,536 x 32 = 2,097,152 B; budget 40 GiB = 42,949,672,960 B -> 20,480 blocks;
    # 8,192-token requests: 512 blocks -> 40 per GPU, 80 per replica (equal to the steady state: full attention
    # at a whole number of blocks reserves nothing more).
    r = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=2, attention_parallelism="dp",
                         context_tokens=8_192, output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=40, engine="vllm"))
    assert r.engine_num_blocks == 20_480 and r.engine_blocks_per_request == 512
    assert r.sessions_per_gpu == 40 and r.sessions_per_replica == 80 and r.steady_state_sessions_per_replica == 80


def test_a_layout_vllm_does_not_page_keeps_the_steady_state_and_says_why():
    r = plan(make_inputs(engine="vllm"))  # DeepSeek V4.1-Flash: compressed entries
    assert r.sessions_basis == "steady state" and r.engine_max_concurrency is None
    # The usable KV is vLLM 0.19.0's budget (planner/data/engine_budget.toml), by hand, per GPU of 8 x H200 at TP 8:
    #   requested  floor(150,754,820,096 x 0.9)                                   = 135,679,338,086
    #   weights    552,000,000,000 parameters x 1 B (fp8) / 8 (its checkpoint's tensors are not priced:
    #              tie_word_embeddings not given, so the catalog's count x format) = 69,000,000,000
    #   activation sampler 14.8 x 1,024 x 129,280 + 1.12 x 8,192 x 5,120 x 2 = 2,053,216,665.6,
    #              + MoE workspaces 8,192 x 6 x (max(2 x 288, 5,120) + 288) x 2 = 531,628,032 -> 2,584,844,697
    #   non-torch  2.17 GiB (the TP 4 figure)                                      = 2,330,019,758
    #   usable     135,679,338,086 - 69,000,000,000 - 2,584,844,697 - 2,330,019,758 = 61,764,473,631
    # steady state (per session 445,890,000 B beside one 445,000,000 B prefix, as the generic plan's 143):
    #   (61,764,473,631 - 445,000,000) // 445,890,000 = 137
    assert r.usable_kv_bytes == 61_764_473_631
    assert r.sessions_per_replica == r.steady_state_sessions_per_replica == 137
    assert any("the checkpoint's tensors could not be priced" in a for a in r.engine_budget["assumptions"])
    assert "not modelled here: compressed" in r.sessions_note and "upper bound" in r.sessions_note


def test_sglang_admission_drives_the_headline_and_says_so():
    # measured budget 10 GiB = 10,737,418,240 B; Llama-3.1-8B 131,072 B/token -> 81,920 tokens (SGLang's
    # profile_max_num_token divisor); 8,192-token requests (output 0): 81,920 // 8,192 = 10 at once;
    # max_running_requests min(clamp(int(81,920 / 8,192 x 512) = 5,120 -> 4,096), 40,960) = 4,096 does not bind
    r = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=8_192,
                         output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=10, engine="sglang"))
    assert r.sessions_basis == "engine admission" and r.sessions_per_replica == 10
    assert r.engine_max_total_num_tokens == 81_920 and r.engine_max_running_requests == 4_096
    assert "SGLang's admission figure" in r.sessions_note


def test_vllm_refusing_one_request_is_said():
    # gpt-oss-20b, 1 GiB budget: 1,073,741,824 // 393,216 = 2,730 blocks; a 40,000-token request needs
    # cdiv(40,000, 16) + 521 = 2,500 + 521 = 3,021 blocks > 2,730: vLLM refuses to start.
    r = plan(make_inputs(model_id="gpt-oss-20b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=40_000,
                         output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=1, engine="vllm"))
    # steady state: 12 x 2,048 x (40,000 + 128) = 986,185,728 B <= 1,073,741,824 B -> 1 session
    assert r.steady_state_sessions_per_replica == 1 and r.engine_blocks_per_request == 3_021
    assert r.sessions_per_replica == 0 and "vLLM would not admit one request of 40,000 tokens" in r.message


def test_the_frontier_follows_the_admission_figure():
    base = make_inputs(model_id="gpt-oss-20b", gpu_id="h100-sxm", gpus_per_replica=1, output_tokens=0,
                       measured_usable_kv_gib=50.28, engine="vllm")
    grid = frontier_grid(base, ["h100-sxm"], [16_000], [0.0])
    assert grid.sessions_per_replica[0, 0, 0] == 90


@pytest.mark.parametrize("case", ["gemma-3-27b", "gpt-oss-20b"])
def test_vllm_v0_19_concurrency_figures_reconstructed(case):
    # vLLM v0.19.0 start-ups on H100 80 GB, as quoted: "Maximum concurrency" 4.46x for Gemma 3 27B and 316 for
    # gpt-oss-20b, where kvplan's steady state said 21 and 677. The setups are reconstructed, not read from a log:
    # among common settings kvplan's 21 and 677 arise at Gemma 3 27B on 1 x H100, utilization 0.95, 8,192 tokens,
    # and gpt-oss-20b on 2 x H100 (TP 2), utilization 0.9, 8,192 tokens. vLLM's budget is not known: it is inferred
    # from the printed figure, so what this checks is the blocks per request, the one figure that decides it.
    #
    # Gemma 3 27B, TP 1, M = 8,192: page 16 x 2 x 16 x 128 x 2 B = 131,072 B; group_size 10 -> 1,310,720 B per
    #   block id. Full: cdiv(8,192, 16) = 512; sliding: 6 groups x (cdiv(min(1,023 + 8,192, 8,192), 16) + 1)
    #   = 6 x 513 = 3,078 (the chunk makes every sliding layer hold the whole request) -> 3,590 blocks.
    #   "4.46x" (printed with 2 decimals) -> num_blocks in [4.455 x 3,590, 4.465 x 3,590) = 15,994..16,029
    #   -> budget in [20,963,655,680, 21,010,841,600) B = 19.52..19.57 GiB. At 19.55 GiB = 20,991,652,659 B:
    #   20,991,652,659 // 1,310,720 = 16,015 blocks; 16,015 / 3,590 = 4.461 -> "4.46x", 4 admitted.
    # gpt-oss-20b, TP 2 (4 KV heads per GPU), M = 8,192: page 16 x 2 x 4 x 64 x 2 B = 16,384 B; 12 layers per
    #   group -> 196,608 B per block id. Full 512 + sliding cdiv(min(127 + 8,192, 8,192), 16) + 1 = 513 -> 1,025.
    #   316.xx -> num_blocks in [323,900, 324,925) -> budget in [63,681,331,200, 63,882,854,400) B = 59.31..59.50
    #   GiB. At 59.4 GiB = 63,780,264,346 B: // 196,608 = 324,403 blocks; / 1,025 = 316.49 -> 316 admitted.
    setups = {"gemma-3-27b": dict(gpus_per_replica=1, gpu_memory_utilization=0.95, measured_usable_kv_gib=19.55),
              "gpt-oss-20b": dict(gpus_per_replica=2, gpu_memory_utilization=0.9, measured_usable_kv_gib=59.4)}
    want = {"gemma-3-27b": (3_590, 16_015, 4, "4.46"), "gpt-oss-20b": (1_025, 324_403, 316, "316.49")}[case]
    r = plan(make_inputs(model_id=case, gpu_id="h100-sxm", context_tokens=8_192, output_tokens=0, hit_rate=0, shared_prefix=0,
                         engine="vllm", **setups[case]))
    assert (r.engine_blocks_per_request, r.engine_num_blocks, r.sessions_per_replica) == want[:3]
    assert f"{r.engine_max_concurrency:.2f}" == want[3]
    # the steady state (windows only) on the same budget, the upper bound:
    # Gemma: 10 x 8,192 x 8,192 + 52 x 8,192 x 1,024 = 1,107,296,256 B -> 20,991,652,659 // that = 18;
    # gpt-oss: 12 x 1,024 x 8,192 + 12 x 1,024 x 128 = 102,236,160 B -> 63,780,264,346 // that = 623
    assert r.steady_state_sessions_per_replica == {"gemma-3-27b": 18, "gpt-oss-20b": 623}[case]


def test_under_pp_the_binding_stage_is_chosen_at_the_plans_request_length():
    # Gemma 3 27B (62 layers, every 6th full, the others sliding with window 1,024; 16 KV heads x 128, BF16) on
    # 3 x H100 as PP 3 (TP 1), 100,000-token requests, 60 GiB = 64,424,509,440 B of KV per GPU.
    # vLLM's get_pp_indices(62, r, 3): layers [0, 21), [21, 42), [42, 62). Full layers 5, 11, ..., 59:
    # stage 0 holds 3 full + 18 sliding, stage 1 4 full + 17 sliding, stage 2 3 full + 17 sliding.
    # One layer's block: 16 tokens x 2 x 16 x 128 x 2 B = 131,072 B; hybrid groups of the full-layer count:
    #   stage 0: groups of 3 -> 393,216 B per block, 1 full group + 6 sliding groups;
    #   stage 1: groups of 4 -> 524,288 B per block, 1 full group + 5 sliding groups.
    # Blocks per request: full cdiv(100,000, 16) = 6,250; sliding cdiv(1,023 + 8,192, 16) + 1 = 577
    # (SlidingWindowSpec.max_memory_usage_bytes): stage 0 6,250 + 6 x 577 = 9,712; stage 1 6,250 + 5 x 577 = 9,135.
    # Sessions: stage 0 (64,424,509,440 // 393,216 = 163,840 blocks) // 9,712 = 16;
    #           stage 1 (64,424,509,440 // 524,288 = 122,880 blocks) // 9,135 = 13: stage 1 binds at this length
    # (at 1 token, as the admission was chosen before, stage 0 was paged and 16 shown).
    inputs = make_inputs(model_id="gemma-3-27b", gpu_id="h100-sxm", gpus_per_replica=3, pipeline_parallel_size=3,
                         context_tokens=100_000, output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=60,
                         engine="vllm")
    r = plan(inputs)
    assert r.engine_blocks_per_request == 9_135 and r.sessions_per_replica == 13
    # the frontier grid chooses the stage per context length: the same 13 at 100,000 tokens
    grid = frontier_grid(inputs, ["h100-sxm"], [100_000], [0.0])
    assert grid.sessions_per_replica[0, 0, 0] == 13


def test_dp_attention_prices_the_budget_of_one_tp1_rank():
    # a dense model under DP attention runs as W replicas at TP 1 (vLLM --data-parallel-size W
    # --tensor-parallel-size 1): each GPU's budget is the one-GPU budget, weights whole on every GPU
    one = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=8_192,
                           hit_rate=0, shared_prefix=0, output_tokens=0, gpu_memory_utilization=0.95, engine="vllm"))
    dp = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=2, context_tokens=8_192,
                          hit_rate=0, shared_prefix=0, output_tokens=0, gpu_memory_utilization=0.95, engine="vllm",
                          attention_parallelism="dp"))
    assert one.usable_kv_bytes == 62_396_714_648  # tests/test_engine_budget.py: vLLM logged 58.11 GiB
    assert dp.usable_kv_bytes == one.usable_kv_bytes and dp.sessions_per_gpu == one.sessions_per_gpu == 58
    assert any("DP attention: the budget is one TP 1 rank's" in a for a in dp.engine_budget["assumptions"])
