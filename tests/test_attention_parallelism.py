"""Attention parallelism: tensor-parallel (KV heads split over the replica) vs data-parallel (whole sessions per GPU).

Sources: vLLM ``vllm/config/model.py`` ``ModelConfig.get_num_kv_heads``: ``max(1, total_num_kv_heads //
tensor_parallel_size)`` KV heads per rank, and 1 (replicated) for MLA; SGLang ``--enable-dp-attention`` for
DP attention. Accelerator memory as ``nvidia-smi`` reports it: H100 SXM 81,559 MiB = 85,520,809,984 B,
H200 143,771 MiB = 150,754,820,096 B.
"""

import pytest

from planner.plan import format_sessions, kv_split, make_inputs, plan
from planner.errors import PlanInputError


def _llama70b(mode: str):
    return plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, context_tokens=128_000,
                            hit_rate=1, shared_prefix=0, attention_parallelism=mode))  # no sharing, no prefill


def test_llama_70b_on_4_h100_at_128k_tensor_parallel():
    # Llama 3.1 70B config.json: 80 layers, 8 KV heads, head_dim 128, BF16; 70.6e9 parameters (model card).
    # usable per GPU: floor(85,520,809,984 x 0.9) = 76,968,728,985 B
    #   - weights 70.6e9 x 2 B / 4 GPUs = 35,300,000,000 B - reserve 2 GiB 2,147,483,648 B = 39,521,245,337 B
    # TP 4: max(1, 8 // 4) = 2 KV heads per GPU -> 80 layers x 2 heads x (128 + 128) x 2 B = 81,920 B/token per GPU
    # one session: (128,000 + 1,000 output) x 81,920 = 10,567,680,000 B per GPU
    # sessions per replica = floor(39,521,245,337 / 10,567,680,000) = floor(3.74) = 3; per GPU 3 / 4 = 0.75
    # rate per GPU = min(5,000 / 1,000 = 5, 0.75 / (1,000 / 50 = 20 s)) = 0.0375 /s
    r = _llama70b("tp")
    assert r.attention_parallelism == "tp" and r.tensor_parallel_size == 4 and r.kv_domain_gpus == 4
    assert r.usable_kv_bytes == 39_521_245_337
    assert r.kv_bytes_per_token == 81_920
    assert r.per_session_bytes == 10_567_680_000
    assert r.sessions_per_replica == 3 and r.sessions_per_gpu == 0.75
    assert r.request_rate_per_s == pytest.approx(0.0375)
    assert "Tensor-parallel" in r.parallelism_note and r.message == ""


def test_llama_70b_on_4_h100_at_128k_data_parallel_names_tp():
    # TP 1: 80 x 8 x 256 x 2 = 327,680 B/token (llama.cpp: Llama-3-70B f16 at 2,048 tokens = 640 MiB
    # = 671,088,640 B / 2,048 = 327,680); one session 129,000 x 327,680 = 42,270,720,000 B > 39,521,245,337 B usable
    r = _llama70b("dp")
    assert r.per_session_bytes == 42_270_720_000
    assert r.sessions_per_gpu == 0 and r.sessions_per_replica == 0
    assert "attention_parallelism=tp" in r.message and "3 sessions would fit per replica" in r.message


def _v3(mode: str):
    return plan(make_inputs(model_id="deepseek-v3", gpu_id="h200", gpus_per_replica=8, context_tokens=128_000,
                            hit_rate=0, shared_prefix=0, attention_parallelism=mode))


def test_deepseek_v3_mla_latent_is_replicated_under_tp():
    # DeepSeek-V3 config.json: 61 layers, kv_lora_rank 512 + qk_rope_head_dim 64 = 576 elements, BF16:
    # 61 x 576 x 2 = 70,272 B/token ("Insights into DeepSeek-V3", ISCA'25, Table 1: 70.272 KB), the same on
    # every TP rank (MLA latents are replicated; vLLM get_num_kv_heads returns 1 for MLA).
    # usable per GPU: floor(150,754,820,096 x 0.9) = 135,679,338,086 - 671e9 x 1 B (FP8) / 8 = 83,875,000,000
    #   - 2,147,483,648 = 49,656,854,438 B
    # one session: 129,000 x 70,272 = 9,065,088,000 B per GPU; floor(49,656,854,438 / 9,065,088,000) = 5
    t = _v3("tp")
    assert t.usable_kv_bytes == 49_656_854_438 and t.per_session_bytes == 9_065_088_000
    assert t.kv_bytes_per_token == 70_272
    assert t.sessions_per_replica == 5 and t.sessions_per_gpu == 0.625  # 5 / 8
    d = _v3("dp")
    assert d.per_session_bytes == 9_065_088_000
    assert d.sessions_per_gpu == 5 and d.sessions_per_replica == 40  # 5 x 8: DP attention does not replicate


def test_pipeline_parallel_splits_layers_in_both_modes():
    # Llama 3.1 70B, 4 GPUs as TP 2 x PP 2: 40 layers per stage.
    # tp: max(1, 8 // 2) = 4 heads: 40 x 4 x 256 x 2 = 81,920 B/token per GPU; dp: TP 1, 40 x 8 x 256 x 2 = 163,840
    tp = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, pipeline_parallel_size=2,
                          context_tokens=128_000, hit_rate=0, shared_prefix=0))
    assert tp.kv_bytes_per_token == 81_920 and tp.sessions_per_replica == 3  # the same split as TP 4
    dp = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, pipeline_parallel_size=2,
                          context_tokens=128_000, hit_rate=0, shared_prefix=0, attention_parallelism="dp"))
    # one pipeline of 2 GPUs holds 129,000 x 163,840 = 21,135,360,000 B per GPU: floor(39,521,245,337 / that) = 1
    # per pipeline; 2 pipelines per replica -> 2 per replica, 2 / 4 = 0.5 per GPU
    assert dp.kv_bytes_per_token == 163_840 and dp.per_session_bytes == 21_135_360_000
    assert dp.sessions_per_domain == 1 and dp.sessions_per_replica == 2 and dp.sessions_per_gpu == 0.5
    assert kv_split(dp.inputs).domain_gpus == 2


def test_pipeline_stages_must_divide_the_replica():
    with pytest.raises(PlanInputError, match="pipeline_parallel_size"):
        make_inputs(gpus_per_replica=4, pipeline_parallel_size=3)


def test_one_gpu_replicas_agree_in_both_modes():
    a = plan(make_inputs(gpus_per_replica=1, weights_gib=0))
    b = plan(make_inputs(gpus_per_replica=1, weights_gib=0, attention_parallelism="dp"))
    assert a.sessions_per_gpu == b.sessions_per_gpu == a.sessions_per_replica
    assert format_sessions(a.sessions_per_gpu) == format_sessions(b.sessions_per_gpu)


def test_a_measured_bytes_per_token_is_refused_where_tp_splits_heads():
    # a measurement is per GPU at TP 1: Llama's 8 KV heads split over TP 4, which the probe did not see
    with pytest.raises(PlanInputError, match="measured_kv_bytes_per_token"):
        plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4,
                         measured_kv_bytes_per_token=327_680))
    # under dp, or for an MLA latent that TP replicates, it applies as measured
    d = plan(make_inputs(model_id="llama-3.1-70b", gpu_id="h100-sxm", gpus_per_replica=4, context_tokens=128_000,
                         hit_rate=0, shared_prefix=0, attention_parallelism="dp", measured_kv_bytes_per_token=327_680))
    assert d.kv_source == "measured" and d.per_session_bytes == 42_270_720_000  # 129,000 x 327,680
    m = plan(make_inputs(model_id="deepseek-v3", gpu_id="h200", gpus_per_replica=8, context_tokens=128_000,
                         hit_rate=0, shared_prefix=0, measured_kv_bytes_per_token=70_272))
    assert m.kv_source == "measured" and m.per_session_bytes == 9_065_088_000 and m.sessions_per_replica == 5
