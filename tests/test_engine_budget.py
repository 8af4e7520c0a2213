"""The engine's own KV budget (planner.engines.budget, ``kvplan plan --engine``) against vLLM v0.19.0 logs.

Logs: llm-d-planner's accuracy campaign on H100 80 GB (https://github.com/llm-d-incubation/llm-d-planner/pull/205;
https://github.com/jgchn/llm-d-planner commit d3121e0, accuracy/results/v0.19.0/logs/<file named in each test>).
vLLM 0.19.0 (``vllm/v1/worker/gpu_worker.py``, ``determine_available_memory``) logs
"Available KV cache memory: K" with K = requested - (weights + torch peak increase + non-torch increase), requested
= total x gpu_memory_utilization; every campaign log has total_memory=79.19GiB, requested 75.23 GiB at 0.95.

Hand arithmetic shared by the tests (constants from planner/data/engine_budget.toml, whose sources it lists):
total = round(79.19 x 2^30) = 85,029,615,043 B; requested = floor(total x 0.95) = 80,778,134,290 B.
Llama-3.1-8B weights 16,094,076,928 B (tests/test_checkpoint_weights.py). Activation (sampler phase):
14.8 B x 1,024 sequences x 128,256 vocab + 1.12 x 8,192 tokens x 4,096 hidden x 2 B = 1,943,745,331.2 +
75,161,927.68 = 2,018,907,258 B.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from planner.catalog.entries import catalog_config, get_gpu
from planner.engines.budget import predict_vllm_budget
from planner.errors import PlanInputError
from planner.plan import make_inputs, plan
from planner.units import GiB

H100_CUDA = 85_029_615_043


def _vllm(model: str, **kw):
    return predict_vllm_budget(catalog_config(model), total_memory_bytes=get_gpu("h100-sxm").cuda_total_bytes,
                               total_source="test", gpu_memory_utilization=kw.pop("u", 0.95), **kw)


def test_h100_memory_as_cuda_reports_it():
    # "worker init memory snapshot: ... total_memory=79.19GiB" in every campaign log; nvidia-smi: 81,559 MiB
    gpu = get_gpu("h100-sxm")
    assert gpu.cuda_total_bytes == H100_CUDA
    assert gpu.hbm_bytes - gpu.cuda_total_bytes == 85_520_809_984 - 85_029_615_043  # 0.457 GiB


def test_llama_8b_tp1():
    # meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192.log: "Available KV cache memory: 58.11 GiB"
    # 80,778,134,290 - 16,094,076,928 - 2,018,907,258 - 0.25 x 2^30 (268,435,456) = 62,396,714,648 B = 58.111 GiB
    b = _vllm("llama-3.1-8b")
    assert b.requested_bytes == 80_778_134_290
    assert b.available_kv_bytes == 62_396_714_648
    assert abs(b.available_kv_bytes / GiB - 58.11) / 58.11 < 0.02
    assert [t.name for t in b.terms] == ["requested memory (total x utilization)", "weights",
                                         "peak activation (profiling run)", "non-torch memory", "CUDA graphs"]
    assert all(t.source for t in b.terms)


def test_llama_8b_tp2_all_reduce_buffers():
    # meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192.log: "non-torch forward increase memory: 2.07GiB",
    # "Available KV cache memory: 63.76 GiB". Weights per GPU 8,064,081,920 B (test_checkpoint_weights) + 2 MiB:
    # the embeddings and the output head are 64,128 x 4,096 x 2 B = 501 MiB each on a rank; PyTorch's CUDA caching
    # allocator gives each a 502 MiB segment (rounded to 2 MiB, get_allocation_size) and does not split off the
    # 1 MiB left (should_split: only more than 1 MiB), so memory_allocated counts 2 x 1 MiB more: 8,066,179,072 B.
    # 80,778,134,290 - 8,066,179,072 - 2,018,907,258 - 2.07 x 2^30 (2,222,645,575) = 68,470,402,385 B = 63.768 GiB
    b = _vllm("llama-3.1-8b", tp=2)
    assert b.available_kv_bytes == 68_470_402_385
    assert abs(b.available_kv_bytes / GiB - 63.76) / 63.76 < 0.02


def test_llama_8b_pp4_binding_rank_is_the_last_stage():
    # meta-llama-llama-3-1-8b---h100-80gb--tp1pp4dp1--8192.log: PP0 logs "Available KV cache memory: 69.8 GiB" but
    # PP3 (output head, sampler) has "Total non KV cache memory: 6.34GiB": 75.23 - 6.34 = 68.89 GiB, and the pool
    # "GPU KV cache size: 2,257,264 tokens" x 32,768 B per token per stage = 68.886 GiB binds every stage.
    # Last stage: 8 layers; weights 1,050,673,152 (head) + 8 x 41,943,040 x 2 (attention) + 8 x 3 x 4,096 x 14,336
    # x 2 (MLP) + 139,264 (norms) + 33,554,432 (rotary) = 4,574,027,776 B (log: 4.26 GiB);
    # activation 2,018,907,258.88 + 0.13 x 2^30 = 2,158,493,696; non-torch 0.07 x 2^30 = 75,161,927
    # 80,778,134,290 - 4,574,027,776 - 2,158,493,696 - 75,161,927 = 73,970,450,891 B = 68.890 GiB
    b = _vllm("llama-3.1-8b", pp=4)
    assert b.binding_rank == "last pipeline stage"
    assert b.available_kv_bytes == 73_970_450_891
    assert abs(b.available_kv_bytes / GiB - 68.89) / 68.89 < 0.02


@pytest.mark.parametrize("model, tp, u, logged_gib, log", [
    ("qwen2.5-7b", 1, 0.95, 58.53, "qwen-qwen2-5-7b-instruct--h100-80gb--tp1pp1dp1--8192.log"),
    ("qwen2.5-7b", 4, 0.95, 67.34, "qwen-qwen2-5-7b-instruct--h100-80gb--tp4pp1dp1--8192.log"),
    ("qwen3-8b", 1, 0.95, 57.50, "qwen-qwen3-8b--h100-80gb--tp1pp1dp1--8192.log"),
    ("gemma-2-9b", 1, 0.95, 54.12, "google-gemma-2-9b-it--h100-80gb--tp1pp1dp1--8192.log"),
    ("mixtral-8x7b-v0.1", 2, 0.95, 28.44, "mistralai-mixtral-8x7b-i--h100-80gb--tp2pp1dp1--8192.log"),
    ("gpt-oss-20b", 2, 0.90, 59.32, "openai-gpt-oss-20b--h100-80gb--tp2pp1dp1--8192.log"),
])
def test_catalog_models_within_two_percent(model, tp, u, logged_gib, log):
    # each log's "Available KV cache memory" line; weights from the shipped config.json
    b = _vllm(model, tp=tp, u=u)
    assert abs(b.available_kv_bytes / GiB - logged_gib) / logged_gib < 0.02, (log, b.available_kv_bytes / GiB)


def test_uncalibrated_version_is_refused():
    with pytest.raises(PlanInputError) as e:
        _vllm("llama-3.1-8b", version="0.11.0")
    assert e.value.field == "engine_version"


def test_plan_engine_vllm_sets_usable_kv():
    inputs = make_inputs(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, gpu_memory_utilization=0.95,
                         context_tokens=8192, hit_rate=0, output_tokens=0, engine="vllm")
    r = plan(inputs)
    assert r.usable_kv_source == "engine"
    assert r.usable_kv_bytes == 62_396_714_648
    assert r.engine_budget["engine_version"] == "0.19.0"
    assert r.engine_budget["available_kv_bytes"] == r.usable_kv_bytes
    # the log: "GPU KV cache size: 476,064 tokens", "Maximum concurrency for 8,192 tokens per request: 58.11x";
    # 62,396,714,648 B / (32 x 2 x 8 x 128 x 2 B = 131,072 B per token) = 476,049 tokens -> 58 whole sessions
    assert r.sessions_per_replica == 58


def test_measured_budget_and_weights_override_win():
    base = dict(model_id="llama-3.1-8b", gpu_id="h100-sxm", gpus_per_replica=1, gpu_memory_utilization=0.95,
                context_tokens=8192, hit_rate=0, output_tokens=0, engine="vllm")
    measured = plan(make_inputs(**base, measured_usable_kv_gib=50.0))
    assert measured.usable_kv_source == "measured" and measured.engine_budget is None
    assert measured.usable_kv_bytes == 50 * GiB
    # weights_gib 10 replaces the checkpoint's 16,094,076,928 B: 80,778,134,290 - 10 x 2^30 - 2,018,907,258
    # - 268,435,456 = 67,753,373,336 B
    r = plan(make_inputs(**base, weights_gib=10.0))
    assert r.usable_kv_bytes == 67_753_373_336
    # weight_format fp8 prices the catalog's 8,030,000,000 parameters (8.03B, model card) at 1 B (the generic plan's weights):
    # 80,778,134,290 - 8,030,000,000 - 2,018,907,258 - 268,435,456 = 70,460,791,576 B
    assert plan(make_inputs(**base, weight_format="fp8")).usable_kv_bytes == 70_460_791_576


def test_cli_json_carries_the_terms():
    out = subprocess.run([sys.executable, "-m", "planner.cli", "plan", "--model", "llama-3.1-8b", "--gpu", "h100-sxm",
                          "--gpus-per-replica", "2", "--gpu-memory-utilization", "0.95", "--context", "8192",
                          "--hit-rate", "0", "--output-tokens", "0", "--engine", "vllm", "--engine-version", "0.19.0",
                          "--json"], capture_output=True, text=True, check=True)
    d = json.loads(out.stdout)
    assert d["usable_kv_bytes"] == 68_470_402_385  # test_llama_8b_tp2_all_reduce_buffers
    assert {t["name"] for t in d["engine_budget"]["terms"]} >= {"weights", "non-torch memory"}
    bad = subprocess.run([sys.executable, "-m", "planner.cli", "plan", "--model", "llama-3.1-8b",
                          "--engine", "tgi"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "engine" in bad.stderr


def test_sglang_rule():
    # SGLang (python/sglang/srt/model_executor/model_runner.py, init_torch_distributed + profile_max_num_token):
    # pool = free after loading - F x (1 - mem_fraction_static), F the free memory before loading, so
    # pool = (total - in use before loading) x mem_fraction_static - weights loaded. Version 0.5 constants
    # (planner/data/engine_budget.toml, docs.sglang.ai logs of 2026-02): in use before loading 0.76 GiB =
    # int(0.76 x 2**30) = 816,043,786 B; loader extra 0.03 GiB = 32,212,254 B.
    # Qwen3-8B: 8,190,735,360 parameters (embeddings and head 2 x 151,936 x 4,096, attention 36 x 41,943,040,
    # MLP 36 x 3 x 4,096 x 12,288, norms 299,008 + q/k norms 9,216) x 2 B + rotary 40,960 x 128 x 2 B =
    # 16,391,956,480 B; + 32,212,254 = 16,424,168,734 B.
    # free 85,029,615,043 - 816,043,786 = 84,213,571,257; floor(x 0.88) = 74,107,942,706;
    # 74,107,942,706 - 16,424,168,734 = 57,683,773,972 B
    r = plan(make_inputs(model_id="qwen3-8b", gpu_id="h100-sxm", gpus_per_replica=1, gpu_memory_utilization=0.88,
                         engine="sglang", engine_version="0.5"))
    assert r.usable_kv_bytes == 57_683_773_972
    assert r.engine_budget["engine_version"] == "0.5"
    assert [t["name"] for t in r.engine_budget["terms"]][0] == "memory in use before loading"


def test_nothing_fits_says_the_engine_budget():
    # gpt-oss-120b on one H100 at utilization 0.8: floor(85,029,615,043 x 0.8) = 68,023,692,034 B requested; its
    # weights as vLLM's Triton MXFP4 backend holds them are 64.38 GiB per GPU: 36 layers x 128 experts x 14,060,160 B
    # (the gpt-oss-20b TP 1 expert of tests/test_checkpoint_weights.py: same hidden and intermediate) = 64,789,217,280
    # + 2 x 1,158,266,880 (embeddings, head) + 36 x 53,094,400 (attention) + 26,542,080 (router) + 420,480 (norms)
    # + 33,554,432 (FP32 rotary) + 50,135,040 (allocator) = 69,127,801,472 B, more than requested before the sampler
    # peak (14.8 B x 1,024 x 201,088 + 1.12 x 8,192 x 2,880 x 2 B = 2.89 GiB) and 0.25 GiB non-torch: the plan says
    # so in the engine's terms
    r = plan(make_inputs(model_id="gpt-oss-120b", gpu_id="h100-sxm", gpus_per_replica=1, context_tokens=8192,
                         hit_rate=0, output_tokens=0, engine="vllm", gpu_memory_utilization=0.8))
    assert r.engine_budget["requested_bytes"] == 68_023_692_034
    assert next(t for t in r.engine_budget["terms"] if t["name"] == "weights")["bytes"] == 69_127_801_472
    assert r.usable_kv_bytes == 0 and r.sessions_per_replica == 0
    assert r.engine_budget["available_kv_bytes"] < 0
    assert "predicted KV budget" in str(r.message)
    assert any("MXFP4" in a for a in r.engine_budget["assumptions"])
