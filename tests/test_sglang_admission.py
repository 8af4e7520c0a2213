"""SGLang's budget and admission, against public SGLang start-up logs and SGLang's own rules.

Rules (sgl-project/sglang): the pool is ``rest_memory = free after loading - F x (1 - mem_fraction_static)``, ``F``
the free memory after NCCL init (``model_runner.py``, ``init_torch_distributed`` / ``profile_max_num_token``), in
GiB (``get_available_gpu_memory`` divides by ``1 << 30``: SGLang prints "GB" for GiB); ``max_total_num_tokens =
rest_memory x 2**30 // cell_size``; default ``max_running_requests = min(clamp(int(tokens / context_len x 512), 2048,
4096), tokens // 2)`` (sgl-project/sglang@001ccef ``model_runner_kv_cache_mixin.py`` ``init_memory``, then
``model_runner.py``); a sliding-window model's pools: ``full = capacity x (F + S) / (F + r S)``, ``swa = full x r``,
page-aligned (``set_num_tokens_hybrid_swa``, same file).

Each log: its URL, the quoted lines, the settings, the hand derivation, the prediction and the printed figure.
"""

import json
import subprocess
import sys

import pytest

from planner.engines.budget import predict_sglang_budget
from planner.engines.sglang_admission import SGLangAdmission, sglang_admission
from planner.catalog.entries import catalog_config, get_model
from planner.errors import PlanInputError
from planner.plan import make_inputs, plan

GIB = 2**30
H100_CUDA_TOTAL = 85_029_615_043  # 79.19 GiB as CUDA reports it (catalog, vLLM 0.19.0 logs)


# -- golden log 1 --------------------------------------------------------------------------------------------------
# https://docs.sglang.ai/start/send_request.html (notebook output of 2025-01-23), one H100 80 GB:
#   server_args=ServerArgs(model_path='meta-llama/Meta-Llama-3.1-8B-Instruct', ..., context_length=None, ...,
#                          mem_fraction_static=0.88, max_running_requests=None, ..., chunked_prefill_size=8192, ...,
#                          tp_size=1, ...)
#   [2025-01-23 19:35:15 TP0] Load weight begin. avail mem=78.81 GB
#   [2025-01-23 19:35:20 TP0] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.72 GB
#   [2025-01-23 19:35:20 TP0] KV Cache is allocated. K size: 27.13 GB, V size: 27.13 GB.
#   [2025-01-23 19:35:27 TP0] max_total_num_tokens=444500, max_prefill_tokens=16384, max_running_requests=2049,
#                             context_len=131072
# By hand, from the log alone: rest = 63.72 - 78.81 x (1 - 0.88) = 54.2628 GiB; each printed figure is rounded to
# 0.005 GiB, so rest lies in [63.715 - 78.815 x 0.12, 63.725 - 78.805 x 0.12] = [54.2572, 54.2684] GiB.
# Llama-3.1-8B cell: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B/token, so max_total_num_tokens lies
# in [54.2572 x 2**30 // 131,072, 54.2684 x 2**30 // 131,072] = [444,475, 444,567]; printed 444,500. K size
# 444,500 x 65,536 B = 27.13 GiB (printed 27.13 "GB").
# kvplan's prediction (version 0.4.1 constants, fitted on this log: before loading 0.38 GiB = 79.19 - 78.81, loader
# extra 0.10 GiB = 15.09 GiB loaded - 14.99 GiB checkpoint):
#   in use before loading int(0.38 x 2**30) = 408,021,893 B; free 85,029,615,043 - 408,021,893 = 84,621,593,150 B
#   static floor(84,621,593,150 x 0.88) = 74,467,001,972 B
#   weights: checkpoint 8,030,261,248 parameters x 2 B = 16,060,522,496 B + rotary cache 131,072 x 128 x 2 B =
#   33,554,432 B -> 16,094,076,928 B; + int(0.10 x 2**30) = 107,374,182 B -> 16,201,451,110 B
#   pool 74,467,001,972 - 16,201,451,110 = 58,265,550,862 B -> 58,265,550,862 // 131,072 = 444,530 tokens
#   (in [444,475, 444,567]: within the printed rounding; +30 tokens, +0.007 %).
# max_running_requests: int(444,530 / 131,072 x 512) = 1,736 -> clamp to 2,048; min(2,048, 444,530 // 2) = 2,048.
# The log prints 2,049: releases of that time sized the request pool max_num_reqs + 1 and ran
# min(tokens // 2, req_to_token_pool.size) (tp_worker.py then), one more than init_memory's pool today.
LLAMA_DOCS_TOKENS_PRINTED = 444_500


def test_llama_8b_docs_log_budget_and_tokens():
    b = predict_sglang_budget(catalog_config("llama-3.1-8b"), total_memory_bytes=H100_CUDA_TOTAL,
                              total_source="H100", mem_fraction_static=0.88, version="0.4.1")
    assert b.available_kv_bytes == 58_265_550_862
    a = sglang_admission(get_model("llama-3.1-8b"))
    assert a.cell_bytes == 131_072
    full, _ = a.pool_tokens(b.available_kv_bytes)
    assert int(full) == 444_530
    assert 444_475 <= int(full) <= 444_567 and 444_475 <= LLAMA_DOCS_TOKENS_PRINTED <= 444_567


def test_llama_8b_docs_log_max_running_requests():
    a = sglang_admission(get_model("llama-3.1-8b"))
    # from the printed pool: int(444,500 / 131,072 x 512) = 1,736 -> 2,048; min(2,048, 222,250) = 2,048
    # (the 2025-01 release printed 2,049: request pool one larger, see the derivation above)
    assert int(a.max_running_requests(444_500, 131_072)) == 2_048
    # full-length requests of 131,072 tokens at once: 444,500 // 131,072 = 3
    assert int(a.admitted(444_500 * 131_072, 131_072)) == 3


def test_max_running_requests_rule_edges():
    a = SGLangAdmission(full_bytes_per_token=1)
    # int(2,086,558 / 256,000 x 512) = 4,173 -> clamped to 4,096; 2,086,558 // 2 = 1,043,279 -> 4,096
    assert int(a.max_running_requests(2_086_558, 256_000)) == 4_096
    # a small pool: 3,000 tokens at context 8,192: int(187.5) = 187 -> 2,048; 3,000 // 2 = 1,500 -> 1,500
    assert int(a.max_running_requests(3_000, 8_192)) == 1_500
    # short requests: 1,000,000 tokens of 1,000-token requests -> 1,000 by the pool, 4,096 by the bound -> 1,000
    assert int(a.admitted(1_000_000, 1_000)) == 1_000
    # 10,000,000 tokens of 1,000-token requests: 10,000 by the pool, bounded by max_running_requests 4,096
    assert int(a.admitted(10_000_000, 1_000)) == 4_096


# -- golden log 2: the sliding-window split ------------------------------------------------------------------------
# https://github.com/sgl-project/sglang/pull/18039 (tests/data/logs/sglang-18039-mimo-v2-flash-swa-page64.txt):
#   python3 -m sglang.launch_server --model-path XiaomiMiMo/MiMo-V2-Flash --tp-size 4 ... --page-size 64
#   [TP0] Use sliding window memory pool. full_layer_tokens=375360, swa_layer_tokens=300288
# swa = int(full x 0.8) aligned to the page: int(375,360 x 0.8) = 300,288 = 4,692 x 64 -> 300,288 (printed).
def test_swa_pool_split_ratio_and_page_alignment():
    f, s = 1_000, 3_000  # any widths: the ratio and the alignment are what the log shows
    a = SGLangAdmission(full_bytes_per_token=f, swa_bytes_per_token=s, window_tokens=128, page_size=64)
    # a budget that gives full = 375,360: budget = 375,360 x (f + 0.8 s) = 375,360 x 3,400 = 1,276,224,000 B;
    # capacity = 1,276,224,000 // (f + s) = 319,056; full = 319,056 x 4,000 / 3,400 = 375,360 (5,865 x 64);
    # swa = int(375,360 x 0.8) = 300,288 (4,692 x 64), as printed
    full, swa = a.pool_tokens(1_276_224_000)
    assert (int(full), int(swa)) == (375_360, 300_288)


def test_swa_admission_holds_window_plus_chunk():
    # gemma-3-27b at TP 1, BF16: 62 layers, 16 heads x 128; 10 full-attention layers (every sixth: 5, 11, ..., 59
    # -> 10 of 62) and 52 sliding (window 1,024): F = 10 x 16 x 128 x 2 x 2 = 81,920 B, S = 52 x 8,192 =
    # 425,984 B per token. Budget 30 GiB = 32,212,254,720 B: capacity 32,212,254,720 // 507,904 = 63,421;
    # full = int(63,421 x 507,904 / (81,920 + 0.8 x 425,984)) = int(32,211,579,904 / 422,707.2) = 76,203;
    # swa = int(76,203 x 0.8) = 60,962. 32,768-token requests: full pool 76,203 // 32,768 = 2; sliding pool
    # holds min(32,768, 1,024 + 8,192) = 9,216 each: 60,962 // 9,216 = 6; max_running_requests
    # min(clamp(int(76,203 / 32,768 x 512) = 1,190 -> 2,048), 38,101) = 2,048 -> 2 at once.
    a = sglang_admission(get_model("gemma-3-27b"))
    assert (a.full_bytes_per_token, a.swa_bytes_per_token, a.window_tokens) == (81_920, 425_984, 1_024)
    full, swa = a.pool_tokens(30 * GIB)
    assert (int(full), int(swa)) == (76_203, 60_962)
    assert int(a.admitted(30 * GIB, 32_768)) == 2
    # short requests are bound by the sliding pool: 2,000 tokens -> full 38, sliding 60,962 // 2,000 = 30
    assert int(a.admitted(30 * GIB, 2_000)) == 30


def test_a_state_model_keeps_the_steady_state_and_says_why():
    with pytest.raises(PlanInputError, match="max_mamba_cache_size"):
        sglang_admission(get_model("nemotron-h-8b"))
    r = plan(make_inputs(model_id="nemotron-h-8b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=8_192,
                         engine="sglang"))
    assert r.sessions_basis == "steady state" and "SGLang's admission is modelled for" in r.sessions_note


def test_an_uncalibrated_version_is_refused_by_name():
    with pytest.raises(PlanInputError) as e:
        plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, engine="sglang",
                         engine_version="0.3.0"))
    assert e.value.field == "engine_version" and "0.4.1, 0.5" in str(e.value)


def test_plan_headline_is_sglangs_admission_and_the_flag_carries_it():
    # Llama-3.1-8B, one H100, mem_fraction_static 0.88, 131,072 tokens, version 0.4.1: pool 444,530 tokens (above);
    # 444,530 // 131,072 = 3 at once (max_running_requests 2,048 does not bind) -> --max-running-requests 3
    r = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, gpu_memory_utilization=0.88,
                         context_tokens=131_072, output_tokens=0, hit_rate=0, shared_prefix=0, engine="sglang",
                         engine_version="0.4.1"))
    assert r.usable_kv_bytes == 58_265_550_862
    assert r.sessions_basis == "engine admission" and r.sessions_per_replica == 3
    assert r.engine_max_total_num_tokens == 444_530 and r.engine_max_running_requests == 2_048
    assert r.engine_max_concurrency == pytest.approx(444_530 / 131_072)
    assert r.steady_state_sessions_per_replica >= r.sessions_per_replica
    assert "SGLang's admission figure: 3 full-length requests" in r.sessions_note
    flags = r.launch_flags.flags
    assert flags[flags.index("--max-running-requests") + 1] == "3"


def test_cli_json_shows_the_sglang_figures():
    out = subprocess.run([sys.executable, "-m", "planner.cli", "plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                          "--gpus-per-replica", "1", "--gpu-memory-utilization", "0.88", "--context", "131072",
                          "--hit-rate", "0", "--output-tokens", "0", "--shared-prefix", "0", "--engine", "sglang",
                          "--engine-version", "0.4.1", "--json"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert (d["sessions_per_replica"], d["engine_max_total_num_tokens"], d["sessions_basis"]) == (
        3, 444_530, "engine admission")


# -- log 3: the rule's F is the free memory before loading ---------------------------------------------------------
# https://github.com/sgl-project/sglang/pull/18263 (description; a ROCm build with the PR's debug prints, one AMD GPU;
# tests/data/logs/sglang-18263-qwen3-30b-a3b.txt):
#   Load weight end. elapsed=19.09 s, type=Qwen3MoeForCausalLM, avail mem=230.20 GB, mem usage=56.98 GB.
#   self.server_args.mem_fraction_static 0.911
#   initial available_bytes 219721119039 / 204.63 GB
# F = free before loading = 230.20 + 56.98 = 287.18 GiB; rest = 230.20 - 287.18 x (1 - 0.911) = 204.641 GiB, which
# is F x 0.911 - 56.98 (kvplan's form); printed 219,721,119,039 B = 204.6297 GiB. Three printed figures of 0.005 GiB
# rounding each: within 0.015 GiB. (The PR's "Case 2: candidate_kv_budget 152.88 GB" is its own change to the pool,
# not released SGLang: 1,669,816 tokens x 98,304 B = 152.88 GiB.)
def test_pool_rule_multiplies_the_free_memory_before_loading():
    b = predict_sglang_budget({}, total_memory_bytes=round(287.18 * GIB), total_source="F", mem_fraction_static=0.911,
                              weights_bytes_per_gpu=round(56.98 * GIB), before_load_bytes=0, version="0.5")
    assert abs(b.available_kv_bytes - 219_721_119_039) <= 0.015 * GIB


# -- log 4 (held out): TP 4 ----------------------------------------------------------------------------------------
# https://github.com/vllm-project/vllm/issues/21348 (description, 2025-07-22; tests/data/logs/sglang-21348-...):
#   python3 -m sglang.launch_server --model /path/to/Qwen3-235B-A22B-FP8 --tp 4 ... --mem-fraction-static 0.93
#   KV Cache is allocated. #tokens: 367404, K size: 8.23 GB, V size: 8.23 GB
# 4 x H100. Qwen3-235B-A22B: 94 layers, 4 KV heads of 128: one per GPU at TP 4 -> 94 x 128 x 2 x 2 B = 48,128 B per
# token; the log's pool 367,404 x 48,128 B = 17,682,419,712 B = 16.47 GiB (K + V printed 16.46).
# kvplan (SGLang 0.5 constants; the thread's release, mid-2025, is not one kvplan calibrates): (79.19 - 0.76) x 0.93 =
# 72.94 GiB; weights at TP 4 from the FP8 checkpoint (config.json quantization_config: fp8, e4m3, 128 x 128 blocks):
# experts 94 x 128 x 3 x 4,096 x 384 (intermediate 1,536 / 4) x 1 B = 52.86 GiB plus FP32 block scales: 52.89 GiB as
# planner.hf.weights prices it; attention 1.56, embeddings and head 0.58, router 0.09,
# norms and rotary 0.01 -> 55.13 + 0.03 loader extra = 55.16 GiB; pool 72.94 - 55.16 = 17.78 GiB, +1.31 GiB (+8.0 %)
# over the log. Explained: the memory in use before loading is measured at TP 1 only (0.76 GiB); at TP 4 NCCL and
# the custom all-reduce buffers take more. The log implies (16.47 + 55.16) / 0.93 = 77.02 GiB free before loading,
# 79.19 - 77.02 = 2.17 GiB in use: vLLM's measured non-torch memory at TP 4 (2.13-2.21 GiB, engine_budget.toml).
# The plan says so in its assumptions ("not measured ... the pool may be high").
def test_qwen3_235b_tp4_held_out_difference_is_the_unmeasured_tp4_memory():
    import copy

    config = copy.deepcopy(catalog_config("qwen3-235b-a22b"))
    config["quantization_config"] = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
                                     "weight_block_size": [128, 128]}
    b = predict_sglang_budget(config, total_memory_bytes=H100_CUDA_TOTAL, total_source="H100",
                              mem_fraction_static=0.93, tp=4, version="0.5")
    logged = 367_404 * 48_128
    assert 0.07 < (b.available_kv_bytes - logged) / logged < 0.09
    assert any("TP 4 not measured" in a for a in b.assumptions)
    # with 2.17 GiB in use before loading (what the log implies) the pool is the log's within 0.01 GiB
    closed = predict_sglang_budget(config, total_memory_bytes=H100_CUDA_TOTAL, total_source="H100",
                                   mem_fraction_static=0.93, tp=4, version="0.5", before_load_bytes=round(2.17 * GIB))
    assert abs(closed.available_kv_bytes - logged) < 0.01 * GIB


# -- reconcile: each SGLang log's max_running_requests and pool get a prediction --------------------------------------
def _rows(name):
    from pathlib import Path

    from planner.engines.logs import parse_engine_log
    from planner.engines.reconcile import reconcile

    text = (Path(__file__).parent / "data" / "logs" / name).read_text(encoding="utf-8")
    return {r.quantity: r for r in reconcile(parse_engine_log(text)).rows}


def test_reconcile_docs_log_pool_and_running_requests():
    # tests/data/logs/sglang-docs-2025-01-llama-3.1-8b-h100.txt (golden log 1 above): the pool from the log's own
    # lines, (63.72 - 78.81 x 0.12) GiB // 131,072 B, lies in about [444,475, 444,567] (derived above): 444,500 printed
    rows = _rows("sglang-docs-2025-01-llama-3.1-8b-h100.txt")
    pool = rows["max_total_num_tokens from the log's memory lines"]
    assert pool.status == "match" and "444,4" in pool.kvplan and "to 444,56" in pool.kvplan
    # max_running_requests: 2,048 by today's rule, 2,049 printed: the early-2025 request pool one larger
    running = rows["max_running_requests"]
    assert running.engine == "2,049" and running.kvplan.endswith("= 2,048") and running.status == "differs"
    assert "one larger" in running.cause


def test_reconcile_running_requests_with_the_flag():
    # https://github.com/kvcache-ai/ktransformers/issues/1870 (tests/data/logs/sglang-ktransformers-1870-...):
    # --max-running-requests 1, --tp-size 2, no DP attention; max_total_num_tokens=580364 ->
    # min(1 // 1, 580,364 // 2) = 1; printed "max_running_requests=1"
    running = _rows("sglang-ktransformers-1870-qwen3.5-397b-mamba.txt")["max_running_requests"]
    assert (running.engine, running.status) == ("1", "match")


def test_reconcile_running_requests_unexplained_is_said():
    # https://github.com/sgl-project/sglang/issues/29575: max_total_num_tokens=2086558, context_len=256000,
    # max_running_requests=33 and nothing else: the default rule gives min(clamp(int(4,173.1), 2,048, 4,096) = 4,096,
    # 1,043,279) = 4,096; 33 is not SGLang's default (a flag, or a state-pool cap the line does not show)
    running = _rows("sglang-29575-max-total-num-tokens.txt")["max_running_requests"]
    assert running.kvplan.endswith("= 4,096") and running.status == "differs"
    assert "not explained" in running.cause


def test_no_full_length_request_fits_is_said_in_sglangs_terms():
    # gpt-oss-20b on one H100 with a measured 1 GiB budget: 24 layers x 8 KV heads x 64 x 2 x 2 B = 49,152 B per
    # token over both pools (12 full + 12 sliding, 24,576 B each); capacity 1,073,741,824 // 49,152 = 21,845;
    # full = int(21,845 x 49,152 / (24,576 + 0.8 x 24,576)) = int(24,272.2) = 24,272 tokens: a 40,000-token request
    # does not fit (0 at once), while the steady state (windows only: 12 x 2,048 x 40,000 + 12 x 2,048 x 128 =
    # 986,185,728 B <= 1 GiB) holds 1
    r = plan(make_inputs(model_id="gpt-oss-20b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=40_000,
                         output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=1, engine="sglang"))
    assert r.engine_max_total_num_tokens == 24_272
    assert r.sessions_per_replica == 0 and r.steady_state_sessions_per_replica == 1
    assert "SGLang would not run one request of 40,000 tokens on one GPU" in r.message
