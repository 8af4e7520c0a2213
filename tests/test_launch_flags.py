"""Launch flags that realise a plan (vLLM, SGLang), and the other attention parallelism where it differs.

Spellings and accepted values, from the engines' sources:

* vLLM ``vllm/engine/arg_utils.py`` ``EngineArgs.add_cli_args``: ``--tensor-parallel-size``,
  ``--pipeline-parallel-size``, ``--data-parallel-size``, ``--enable-expert-parallel`` (ParallelConfig group),
  ``--block-size``, ``--gpu-memory-utilization``, ``--kv-cache-memory-bytes``, ``--kv-cache-dtype``,
  ``--enable-prefix-caching`` (CacheConfig group), ``--max-model-len``, ``--max-num-seqs``,
  ``--max-num-batched-tokens``; ``--kv-cache-dtype`` values: ``vllm/config/cache.py`` ``CacheDType`` at
  vllm-project/vllm@002f10e.
* SGLang ``python/sglang/srt/server_args.py`` ``ServerArgs`` at sgl-project/sglang@001067f: ``tp_size``,
  ``pp_size``, ``dp_size``, ``enable_dp_attention``, ``context_length``, ``mem_fraction_static``,
  ``max_running_requests``, ``chunked_prefill_size`` (printed in every ``server_args=ServerArgs(...)`` log line;
  passed as ``--chunked-prefill-size 2048`` in the public log of kvcache-ai/ktransformers#1870), ``kv_cache_dtype``
  (choices listed there).
"""

import pytest

from planner.engines.launch import SGLANG_KV_CACHE_DTYPES, VLLM_KV_CACHE_DTYPES
from planner.kv.formats import FORMATS
from planner.kv.models import NATIVE
from planner.plan import make_inputs, plan

VLLM_FLAGS = {"--tensor-parallel-size", "--pipeline-parallel-size", "--data-parallel-size", "--enable-expert-parallel",
              "--max-model-len", "--gpu-memory-utilization", "--kv-cache-memory-bytes", "--max-num-seqs",
              "--max-num-batched-tokens", "--block-size", "--kv-cache-dtype", "--enable-prefix-caching"}
VLLM_CACHE_DTYPES = {"auto", "float16", "bfloat16", "fp8", "fp8_e4m3", "fp8_e5m2", "fp8_inc", "fp8_ds_mla",
                     "nvfp4_ds_mla", "turboquant_k8v4", "turboquant_4bit_nc", "turboquant_k3v4_nc",
                     "turboquant_3bit_nc", "int4_per_token_head", "int8_per_token_head", "fp8_per_token_head",
                     "nvfp4", "nvfp4_4over6"}
SGLANG_FLAGS = {"--tp-size", "--pp-size", "--dp-size", "--enable-dp-attention", "--context-length",
                "--mem-fraction-static", "--max-running-requests", "--chunked-prefill-size", "--kv-cache-dtype"}
SGLANG_CACHE_DTYPES = {"auto", "fp8_e5m2", "fp8_e4m3", "mxfp8", "bf16", "bfloat16", "nvfp4", "fp4_mx_block16",
                       "fp4_e2m1"}


def _pairs(flags):
    out, key = {}, None
    for token in flags:
        if token.startswith("--"):
            key = token
            out[key] = None
        else:
            out[key] = token
    return out


def test_kv_format_maps_only_to_values_the_engines_accept():
    assert set(VLLM_KV_CACHE_DTYPES.values()) <= VLLM_CACHE_DTYPES
    assert set(SGLANG_KV_CACHE_DTYPES.values()) <= SGLANG_CACHE_DTYPES
    assert set(VLLM_KV_CACHE_DTYPES) <= {NATIVE, *FORMATS} and set(SGLANG_KV_CACHE_DTYPES) <= {NATIVE, *FORMATS}


def test_vllm_flags_for_gpt_oss_20b_with_a_measured_budget():
    # the admission case of test_engine_admission.py: 90 sessions; the measured budget goes in as bytes
    r = plan(make_inputs(model_id="gpt-oss-20b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=16_000,
                         output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=50.28, engine="vllm"))
    f = r.launch_flags
    assert f.command == "vllm serve MODEL"
    assert f.flags == ["--tensor-parallel-size", "1", "--max-model-len", "16000",
                       "--kv-cache-memory-bytes", "53987738911", "--max-num-seqs", "90",
                       "--max-num-batched-tokens", "8192", "--block-size", "16", "--kv-cache-dtype", "auto"]
    assert any("admission figure assumes" in n for n in f.notes)
    assert "--kv-cache-memory-bytes 53987738911" in f.text() and "\\\n  --max-num-seqs 90" in f.text(multiline=True)


def test_vllm_flags_with_a_computed_budget_prefix_caching_and_pipeline():
    # Llama 3.1 70B on 4 x H100 as TP 2 x PP 2, FP8 KV, hit rate 0.3: prefix caching on
    r = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, pipeline_parallel_size=2,
                         context_tokens=32_000, hit_rate=0.3, shared_prefix=0.3, kv_format="fp8", engine="vllm"))
    p = _pairs(r.launch_flags.flags)
    assert set(p) <= VLLM_FLAGS
    assert p["--tensor-parallel-size"] == "2" and p["--pipeline-parallel-size"] == "2"
    assert p["--max-model-len"] == "33000" and p["--gpu-memory-utilization"] == "0.9"
    assert p["--kv-cache-dtype"] == "fp8" and "--enable-prefix-caching" in p
    assert p["--max-num-seqs"] == str(r.sessions_per_replica)


def test_vllm_dp_attention_with_expert_parallel_and_seqs_per_rank():
    # Under DP attention each vLLM DP rank is its own engine: --max-num-seqs is per rank (sessions per GPU)
    r = plan(make_inputs(model_id="deepseek-v3", gpu_id="h200", gpus_per_replica=8, attention_parallelism="dp",
                         context_tokens=128_000, hit_rate=0, shared_prefix=0, engine="vllm"))
    p = _pairs(r.launch_flags.flags)
    assert p["--data-parallel-size"] == "8" and p["--tensor-parallel-size"] == "1" and "--enable-expert-parallel" in p
    assert p["--max-num-seqs"] == str(r.sessions_per_domain) and r.sessions_per_replica == 8 * r.sessions_per_domain


def test_vllm_dp_attention_of_a_dense_model_has_no_expert_parallel():
    # Llama 3.1 70B's config.json (planner/data/models, meta-llama/Llama-3.1-70B) has no num_local_experts /
    # num_experts / n_routed_experts: a dense model, whose vLLM DP ranks are replicas; --enable-expert-parallel
    # applies to MoE layers only, so it is not printed, neither in the DP plan's flags nor in the TP plan's
    # pointer to DP. DeepSeek V3 (n_routed_experts 256) keeps it (the test above).
    r = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, attention_parallelism="dp",
                         context_tokens=32_000, hit_rate=0, shared_prefix=0, engine="vllm"))
    p = _pairs(r.launch_flags.flags)
    assert p["--data-parallel-size"] == "4" and p["--tensor-parallel-size"] == "1"
    assert "--enable-expert-parallel" not in p
    assert any("dense model" in n for n in r.launch_flags.notes)
    t = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, context_tokens=32_000,
                         hit_rate=0, shared_prefix=0, engine="vllm"))
    assert t.other_parallelism.how == "vLLM --data-parallel-size 4 --tensor-parallel-size 1"


def test_sglang_flags_for_llama_70b_on_four_h100():
    # Llama 3.1 70B, 4 x H100, FP8 KV, 128,000 + 1,000 tokens, hit rate 0, --engine sglang (version 0.5): the pool
    # is SGLang's (model_runner.py, profile_max_num_token): (total - in use before loading) x mem_fraction_static -
    # weights loaded, the total as CUDA reports it on H100 (85,029,615,043 B), in use before loading 0.76 GiB =
    # 816,043,786 B (planner/data/engine_budget.toml): floor(84,213,571,257 x 0.9) = 75,792,214,131 B; weights per
    # GPU at TP 4 from the checkpoint (config.json): embeddings and output head 128,256 x 8,192 / 4 x 2 B =
    # 525,336,576 B each; attention 80 x (2 x 8,192 x 8,192 + 2 x 8,192 x 1,024) / 4 x 2 B = 6,039,797,760 B; MLP
    # 80 x 3 x 8,192 x 28,672 / 4 x 2 B = 28,185,722,880 B; norms (80 x 2 + 1) x 8,192 x 2 B = 2,637,824 B; rotary
    # cache 131,072 x 128 x 2 B = 33,554,432 B; total 35,312,386,048 B + loader extra 0.03 GiB = 32,212,254 B ->
    # usable 75,792,214,131 - 35,344,598,302 = 40,447,615,829 B per GPU.
    # The engine is given the fraction its pool was predicted at: --mem-fraction-static 0.9.
    # FP8 KV, TP 4: 80 x 2 heads x (128 + 128) x 1 B = 40,960 B/token; SGLang's pool 40,447,615,829 // 40,960 =
    # 987,490 tokens; 987,490 // 129,000 = 7 full-length requests (max_running_requests min(clamp(int(987,490 /
    # 129,000 x 512) = 3,919), 493,745) = 3,919 does not bind) -> --max-running-requests 7
    r = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, context_tokens=128_000,
                         hit_rate=0, shared_prefix=0, kv_format="fp8", engine="sglang"))
    f = r.launch_flags
    assert f.command == "python -m sglang.launch_server --model-path MODEL"
    assert r.usable_kv_bytes == 40_447_615_829
    assert r.engine_max_total_num_tokens == 987_490 and r.sessions_basis == "engine admission"
    assert f.flags == ["--tp-size", "4", "--context-length", "129000", "--mem-fraction-static", "0.9",
                       "--max-running-requests", "7", "--chunked-prefill-size", "8192", "--kv-cache-dtype", "fp8_e4m3"]
    assert set(_pairs(f.flags)) <= SGLANG_FLAGS


def test_sglang_dp_attention_flags():
    r = plan(make_inputs(model_id="deepseek-v3", gpu_id="h200", gpus_per_replica=8, attention_parallelism="dp",
                         context_tokens=128_000, hit_rate=0, shared_prefix=0, engine="sglang"))
    p = _pairs(r.launch_flags.flags)
    assert p["--tp-size"] == "8" and p["--dp-size"] == "8" and "--enable-dp-attention" in p
    assert p["--max-running-requests"] == str(r.sessions_per_replica)  # for the server, divided among DP ranks


@pytest.mark.parametrize("engine, kv_format", [("vllm", "int8"), ("vllm", "mxfp4"), ("vllm", "q8_0"),
                                               ("sglang", "fp16"), ("sglang", "mxfp4"), ("sglang", "int4")])
def test_a_format_the_engine_does_not_accept_gets_no_flag_and_a_note(engine, kv_format):
    r = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=8_000,
                         kv_format=kv_format, engine=engine))
    assert "--kv-cache-dtype" not in r.launch_flags.flags
    assert any(f"no --kv-cache-dtype for KV format {kv_format}" in n and "do not realise" in n
               for n in r.launch_flags.notes)


def test_no_engine_no_flags():
    assert plan(make_inputs()).launch_flags is None


def test_v41_flash_on_8_h200_shows_dp_attention_holds_8x():
    # DeepSeek V4.1-Flash on 8 x H200, defaults (1,000,000 tokens, 1,000 output, hit rate 0.5), --engine vllm:
    # usable = vLLM 0.19.0's budget per GPU (derived in test_engine_admission.py,
    # test_a_layout_vllm_does_not_page_keeps_the_steady_state_and_says_why) = 61,764,473,631 B.
    # 890 B/token per GPU under both (its one-head entries are replicated on every TP rank):
    # prefix 500,000 x 890 = 445,000,000 B; per session (1,001,000 - 500,000) x 890 = 445,890,000 B;
    # (61,764,473,631 - 445,000,000) // 445,890,000 = 137 per KV domain.
    # TP attention: the domain is the replica: 137 / 8 = 17.125 per GPU.
    # DP attention: vLLM runs 8 ranks at TP 1 (--enable-expert-parallel), so its budget is a TP 1 rank's: the same
    # requested memory and weights (the catalog's 552e9 x 1 B / 8: its tensors are not priced), activation at TP 1:
    # sampler 2,053,216,665.6 + MoE workspaces 8,192 x 6 x (max(2 x 2,304, 5,120) + 2,304) x 2 = 729,808,896
    # -> 2,783,025,561; non-torch 0.25 GiB = 268,435,456 (TP 1):
    # 135,679,338,086 - 69,000,000,000 - 2,783,025,561 - 268,435,456 = 63,627,877,069 B per GPU;
    # (63,627,877,069 - 445,000,000) // 445,890,000 = 141 per GPU, 1,128 per replica.
    r = plan(make_inputs(engine="vllm"))
    assert r.sessions_per_gpu == 17.125 and r.sessions_per_replica == 137
    o = r.other_parallelism
    assert o.attention_parallelism == "dp" and o.sessions_per_gpu == 141 and o.sessions_per_replica == 1_128
    assert o.how == "vLLM --data-parallel-size 8 --tensor-parallel-size 1 --enable-expert-parallel"
    assert _pairs(o.launch_flags.flags)["--data-parallel-size"] == "8"
    # without an engine: usable = floor(150,754,820,096 x 0.9) - 552e9 x 1 B (FP8) / 8 - 2 GiB = 64,531,854,438 B,
    # (64,531,854,438 - 445,000,000) // 445,890,000 = 143 per domain, 143 / 8 = 17.875 per GPU under TP
    back = plan(make_inputs(attention_parallelism="dp"))  # and from DP the plan points back to TP
    assert back.other_parallelism.attention_parallelism == "tp" and back.other_parallelism.sessions_per_gpu == 17.875
    assert "SGLang --tp-size 8 without --enable-dp-attention" in back.other_parallelism.how


def test_the_other_parallelism_is_left_out_where_it_does_not_differ():
    # one GPU per replica: TP and DP attention are the same layout
    assert plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1)).other_parallelism is None


def test_the_readme_shows_the_flags_the_cli_prints():
    from pathlib import Path

    readme = " ".join(Path(__file__).resolve().parents[1].joinpath("README.md").read_text().replace("\\\n", " ").split())
    r = plan(make_inputs(model_id="gpt-oss-20b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=16_000,
                         output_tokens=0, hit_rate=0, shared_prefix=0, measured_usable_kv_gib=50.28, engine="vllm"))
    s = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, context_tokens=128_000,
                         hit_rate=0, shared_prefix=0, kv_format="fp8", engine="sglang"))
    assert r.launch_flags.text() in readme and s.launch_flags.text() in readme


def test_the_prefill_chunk_note_only_for_models_with_windowed_layers():
    # vLLM's sliding-window rule (vllm/v1/kv_cache_interface.py SlidingWindowSpec.max_memory_usage_bytes) adds
    # max_num_batched_tokens to the window; full attention (FullAttentionSpec) reserves cdiv(max_model_len,
    # block_size) blocks whatever the chunk. Gemma 3 27B has sliding-window layers (sliding_window 1024 in its
    # config.json); Llama 3.1 8B has none.
    def notes(model_id):
        r = plan(make_inputs(model_id=model_id, gpu_id="h200", gpus_per_replica=1, engine="vllm",
                             context_tokens=32_000))
        return " ".join(str(n) for n in r.launch_flags.notes)

    assert "sliding-window layer reserves its window" in notes("gemma-3-27b")
    llama = notes("llama-3.1-8b")
    assert "window" not in llama and "--block-size 16 is what the admission figure assumes" in llama


@pytest.mark.parametrize("engine, words", [("vllm", "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"),
                                           ("sglang", "SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN=1")])
def test_a_length_past_the_models_maximum_says_the_engine_will_not_start(engine, words):
    # Llama 3.1 8B: max_position_embeddings 131,072 (its config.json; rope_type llama3 does not scale it in vLLM's
    # _get_and_verify_max_len). 200,000 + 0 output tokens > 131,072: vLLM raises at start-up without the override,
    # SGLang likewise without its own; 100,000 tokens start as printed.
    def notes(context_tokens):
        r = plan(make_inputs(model_id="llama-3.1-8b", gpu_id="h200", gpus_per_replica=1, engine=engine,
                             context_tokens=context_tokens, output_tokens=0))
        return " ".join(str(n) for n in r.launch_flags.notes)

    assert words in notes(200_000) and "131,072 tokens" in notes(200_000)
    assert words not in notes(100_000)
