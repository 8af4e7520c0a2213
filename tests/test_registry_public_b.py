"""Golden values of real public configs of architectures without one so far (tests/data/configs, SOURCES.md).

Each figure is derived by hand from the vLLM model file of the architecture (the class and the factors are written
next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``, vllm/config/model.py, with the
keys of ``derive_max_model_len_and_key``, vllm/transformers_utils/model_arch_config_convertor.py: the smallest of
max_position_embeddings, n_positions, max_seq_len, seq_length, model_max_length, max_target_positions,
max_sequence_length, max_seq_length, seq_len present). BF16 is two bytes per element; every layer stores K and V
(the factor 2). vLLM source read in the vLLM 0.23.0 tree (vllm/_version.py: commit 0fc695fc6); gpt_bigcode.py also
at vllm-project/vllm 2758bed7fb2f428f00ebb90ac75ba7cb95173856, with the same head size and multi-query rule.
"""

import json
from pathlib import Path

import pytest

from planner.errors import PlanInputError
from planner.hf import registry
from planner.hf.config import model_from_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "configs"


def load(name):
    return json.loads((CONFIGS / f"{name}.config.json").read_text())


# (file, architecture, family, B/token at TP 1, maximum context, layer pattern). Derivations:
GOLDEN = [
    # bigcode/gpt_bigcode-santacoder. vLLM GPTBigCodeAttention.__init__ (gpt_bigcode.py): head_dim = hidden_size //
    # total_num_heads = n_embd 2,048 / n_head 16 = 128; multi_query true -> total_num_kv_heads = 1 (one KV head).
    # 24 layers (n_layer), each a GPTBigCodeBlock with one Attention, no window.
    # 2 x 24 x 1 x 128 x 2 B = 12,288 B/token. Maximum: n_positions 2,048 (GPTBigCodeConfig maps
    # max_position_embeddings to it; the only length key present; runner_max_sequence_length is not one of them).
    ("gpt_bigcode-santacoder", "GPTBigCodeForCausalLM", "gpt_bigcode", 12_288, 2_048, "F" * 24),
    # Qwen/Qwen-1_8B (Qwen v1, remote code). vLLM QWenAttention.__init__ (qwen.py): head_dim = hidden_size //
    # total_num_heads = 2,048 / 16 = 128 (= the config's kv_channels 128), MHA: Attention(num_heads, head_dim)
    # with no num_kv_heads, so 16 KV heads; 24 QWenBlock layers. use_dynamic_ntk / use_logn_attn change the
    # attention scores, not the cache. 2 x 24 x 16 x 128 x 2 B = 196,608 B/token.
    # Maximum: the smallest of max_position_embeddings 8,192 and seq_length 8,192 = 8,192.
    ("qwen-1_8b", "QWenLMHeadModel", "qwen1", 196_608, 8_192, "F" * 24),
    # togethercomputer RedPajama-INCITE 3B v1 (GPTNeoXForCausalLM). vLLM GPTNeoXAttention.__init__ (gpt_neox.py):
    # head_size = hidden_size // total_num_heads = 2,560 / 32 = 80, MHA (Attention(num_heads, head_size) with no
    # num_kv_heads: 32 KV heads); 32 GPTNeoXLayer layers; rotary_pct 1.0 rotates all 80 dims, no cache change.
    # 2 x 32 x 32 x 80 x 2 B = 327,680 B/token. Maximum: max_position_embeddings 2,048.
    ("redpajama-incite-3b-v1", "GPTNeoXForCausalLM", "decoder", 327_680, 2_048, "F" * 32),
    # facebook/opt-125m. vLLM OPTDecoderLayer (opt.py) builds OPTAttention(embed_dim = hidden_size, num_heads =
    # num_attention_heads): head_dim = embed_dim // total_num_heads = 768 / 12 = 64, MHA (Attention with no
    # num_kv_heads: 12 KV heads); 12 layers. 2 x 12 x 12 x 64 x 2 B = 36,864 B/token.
    # Maximum: max_position_embeddings 2,048.
    ("opt-125m", "OPTForCausalLM", "decoder", 36_864, 2_048, "F" * 12),
    # facebook/opt-350m: same class; 1,024 / 16 = 64, 16 KV heads, 24 layers. word_embed_proj_dim 512 sizes only
    # project_in / project_out (OPTDecoder) and do_layer_norm_before false only moves the layer norms: no cache change.
    # 2 x 24 x 16 x 64 x 2 B = 98,304 B/token. Maximum: max_position_embeddings 2,048.
    ("opt-350m", "OPTForCausalLM", "decoder", 98_304, 2_048, "F" * 24),
]


@pytest.mark.parametrize(("name", "arch", "family", "per_token", "max_context", "pattern"), GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_public_config_kv_per_token(name, arch, family, per_token, max_context, pattern):
    config = load(name)
    assert config["architectures"] == [arch]
    assert registry.status(arch) == ("supported", family)
    model = model_from_config(config)
    assert model.estimate(max_context).kv_bytes_per_token == per_token
    assert model.estimate(max_context).kv_bytes == per_token * max_context
    assert model.max_context_tokens == max_context
    assert model.layer_pattern == pattern
    assert not model.ignored_fields


def test_santacoder_single_kv_head_is_replicated_across_tp():
    # vLLM GPTBigCodeAttention: with multi_query the per-GPU num_kv_heads is 1 whatever the TP degree (the one KV
    # head is replicated; QKVParallelLinear with total_num_kv_heads 1); num_heads = 16 // tp.
    # TP 4: 2 x 24 x 1 x 128 x 2 B = 12,288 B/token per GPU, the TP-1 figure.
    model = model_from_config(load("gpt_bigcode-santacoder"))
    assert model.estimate(2_048, tp=4).kv_bytes_per_token == 12_288
    # TP 3: "Total number of attention heads (16) must be divisible by tensor parallel size (3)"
    # (ModelConfig.verify_with_parallel_config); GPTBigCodeAttention also asserts it.
    with pytest.raises(PlanInputError, match=r"attention heads \(16\)"):
        model.estimate(2_048, tp=3)


def test_qwen_1_8b_tensor_parallel():
    # TP 8: 16 heads / 8 = 2 per GPU (QWenAttention: total_num_heads // tp), 2 KV heads each:
    # 2 x 24 x 2 x 128 x 2 B = 24,576 B/token per GPU.
    model = model_from_config(load("qwen-1_8b"))
    assert model.estimate(8_192, tp=8).kv_bytes_per_token == 24_576
    with pytest.raises(PlanInputError, match=r"attention heads \(16\)"):
        model.estimate(8_192, tp=3)


def test_redpajama_3b_tensor_parallel():
    # TP 8: 32 heads / 8 = 4 per GPU: 2 x 32 x 4 x 80 x 2 B = 40,960 B/token per GPU.
    model = model_from_config(load("redpajama-incite-3b-v1"))
    assert model.estimate(2_048, tp=8).kv_bytes_per_token == 40_960
    # TP 3: 32 % 3 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(2_048, tp=3)


# ---------------------------------------------------------------------------
# Nemotron-H (NemotronHForCausalLM): attention KV plus Mamba2 state per sequence
# ---------------------------------------------------------------------------
# vLLM nemotron_h.py: hybrid_override_pattern gives one block per layer ("M" Mamba2, "*" attention, "-" MLP,
# "E" MoE; only "*" caches KV, only "M" holds state). NemotronHAttention: head_dim = config.head_dim when present,
# else hidden_size // num_attention_heads; num_kv_heads = max(1, num_key_value_heads // tp) (replicated when fewer
# than TP). NemotronHForCausalLM.get_mamba_state_shape_from_config -> mamba2_state_shape (layers/mamba/mamba_utils.py):
# intermediate = mamba_num_heads x mamba_head_dim, conv state (conv_kernel - 1) x (intermediate + 2 x n_groups x
# ssm_state_size) / tp in the model dtype (BF16), SSM state (mamba_num_heads / tp) x mamba_head_dim x ssm_state_size
# in mamba_ssm_cache_dtype, which NemotronHForCausalLMConfig.update_mamba_ssm_cache_dtype (models/config.py) takes
# from the config, float32 when absent.


def test_nemotron_h_56b_base_8k():
    # nvidia/Nemotron-H-56B-Base-8K: the pattern has 118 blocks, 10 "*" and 54 "M".
    # Attention: 8 KV heads, head_dim = 8,192 / 64 = 128 (no head_dim key; attention_head_dim 128 agrees):
    # 10 x 2 x 8 x 128 x 2 B = 40,960 B/token. State per Mamba layer: intermediate 256 x 64 = 16,384;
    # conv 3 x (16,384 + 2 x 8 x 256 = 20,480) x 2 B = 122,880 B; SSM 256 x 64 x 256 x 4 B (float32, no
    # mamba_ssm_cache_dtype key) = 16,777,216 B; 54 x 16,900,096 = 912,605,184 B per sequence.
    # Maximum: max_position_embeddings 8,192.
    # time_step_rank 512 is not read by vLLM's nemotron_h.py (a Mamba1 dt rank): accepted, not ignored silently.
    model = model_from_config(load("nemotron-h-56b-base-8k"))
    assert registry.status("NemotronHForCausalLM") == ("supported", "nemotron_h")
    est = model.estimate(8_192)
    assert est.kv_bytes_per_token == 40_960
    assert est.state_bytes_in_pool == 912_605_184
    assert est.kv_bytes == 40_960 * 8_192 + 912_605_184
    assert model.max_context_tokens == 8_192
    assert model.layer_pattern.count("F") == 10 and model.layer_pattern.count("M") == 54
    assert len(model.layer_pattern) == 118
    assert not model.ignored_fields
    # TP 8: 8 KV heads / 8 = 1: 10 x 2 x 1 x 128 x 2 B = 5,120 B/token per GPU. 8 groups % 8 == 0 (no extra
    # groups): conv 20,480 / 8 = 2,560 x 3 x 2 B = 15,360 B; SSM 256 / 8 = 32 x 64 x 256 x 4 B = 2,097,152 B;
    # 54 x 2,112,512 = 114,075,648 B per sequence per GPU.
    est8 = model.estimate(8_192, tp=8)
    assert (est8.kv_bytes_per_token, est8.state_bytes_in_pool) == (5_120, 114_075_648)
    # TP 3: 64 heads % 3 != 0 and the conv state does not split evenly: vLLM cannot build it.
    with pytest.raises(PlanInputError):
        model.estimate(8_192, tp=3)


def test_nemotron_3_nano_30b_a3b():
    # nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16: 52 blocks, 6 "*", 23 "M", 23 "E" (MoE, no cache).
    # Attention: head_dim 128 from the config (not 2,688 / 32 = 84), 2 KV heads:
    # 6 x 2 x 2 x 128 x 2 B = 6,144 B/token. State per Mamba layer: intermediate 64 x 64 = 4,096;
    # conv 3 x (4,096 + 2 x 8 x 128 = 6,144) x 2 B = 36,864 B; SSM 64 x 64 x 128 x 4 B (mamba_ssm_cache_dtype
    # "float32") = 2,097,152 B; 23 x 2,134,016 = 49,082,368 B per sequence. Maximum: max_position_embeddings 262,144.
    model = model_from_config(load("nvidia-nemotron-3-nano-30b-a3b-bf16"))
    est = model.estimate(4_096)
    assert est.kv_bytes_per_token == 6_144
    assert est.state_bytes_in_pool == 49_082_368
    assert model.max_context_tokens == 262_144
    assert model.layer_pattern.count("F") == 6 and model.layer_pattern.count("M") == 23
    assert not model.ignored_fields
    # TP 4: 32 heads / 4 = 8; 2 KV heads < 4 -> replicated, 1 per GPU (4 % 2 == 0): 6 x 2 x 1 x 128 x 2 B =
    # 3,072 B/token. 8 groups % 4 == 0: conv 6,144 / 4 = 1,536 x 3 x 2 B = 9,216 B; SSM 16 x 64 x 128 x 4 B =
    # 524,288 B; 23 x 533,504 = 12,270,592 B per sequence per GPU.
    est4 = model.estimate(4_096, tp=4)
    assert (est4.kv_bytes_per_token, est4.state_bytes_in_pool) == (3_072, 12_270_592)
    # TP 3: 32 heads % 3 != 0; and extra_groups_for_head_shards(8, 3) = 3 - 8 leaves 3 groups: conv channels
    # 4,096 + 2 x 3 x 128 = 4,864, not divisible by 3 (vLLM's divide asserts).
    with pytest.raises(PlanInputError):
        model.estimate(4_096, tp=3)


def test_opt_tensor_parallel():
    # opt-125m TP 4: 12 heads / 4 = 3 per GPU: 2 x 12 x 3 x 64 x 2 B = 9,216 B/token per GPU.
    model = model_from_config(load("opt-125m"))
    assert model.estimate(2_048, tp=4).kv_bytes_per_token == 9_216
    # TP 8: 12 % 8 != 0: "Total number of attention heads (12) must be divisible by tensor parallel size (8)".
    with pytest.raises(PlanInputError, match=r"attention heads \(12\)"):
        model.estimate(2_048, tp=8)
    # opt-350m TP 8: 16 / 8 = 2 per GPU: 2 x 24 x 2 x 64 x 2 B = 12,288 B/token per GPU.
    assert model_from_config(load("opt-350m")).estimate(2_048, tp=8).kv_bytes_per_token == 12_288


def test_bloom_560m_alibi_mha_and_no_length_key():
    # bigscience/bloom-560m (a partial quotation: see SOURCES.md). vLLM BloomAttention.__init__ (bloom.py):
    # total_num_heads = n_head 16, head_dim = hidden_size // total_num_heads = 1,024 / 16 = 64, MHA (Attention with
    # no num_kv_heads: 16 KV heads); ALiBi slopes change scores, not the cache; n_layer 24 BloomBlock layers.
    # 2 x 24 x 16 x 64 x 2 B = 98,304 B/token.
    config = load("bloom-560m.partial")
    assert config["architectures"] == ["BloomForCausalLM"]
    assert registry.status("BloomForCausalLM") == ("supported", "bloom")
    model = model_from_config(config)
    assert model.estimate(1_000).kv_bytes_per_token == 98_304
    assert model.layer_pattern == "F" * 24
    assert not model.ignored_fields
    # No length key of vLLM's list is in the config (ALiBi, no position table): vLLM takes the tokenizer's
    # model_max_length when tokenizer_config.json has one, else assumes 2,048 with a warning
    # (_get_and_verify_max_len). The config alone does not fix it, so kvplan states no maximum.
    assert model.max_context_tokens is None
    # TP 8: 16 / 8 = 2 heads per GPU: 2 x 24 x 2 x 64 x 2 B = 12,288 B/token per GPU.
    assert model.estimate(1_000, tp=8).kv_bytes_per_token == 12_288
    # TP 3: 16 % 3 != 0 (BloomAttention asserts it; ModelConfig.verify_with_parallel_config refuses it first).
    with pytest.raises(PlanInputError, match=r"attention heads \(16\)"):
        model.estimate(1_000, tp=3)


def test_dbrx_instruct_gqa_under_the_mpt_reader():
    # databricks/dbrx-instruct as re-published by mlx-community (dbrx-instruct-4bit; a partial quotation, see
    # SOURCES.md). vLLM DbrxAttention.__init__ (dbrx.py): total_num_heads = n_heads 48, head_dim = d_model //
    # total_num_heads = 6,144 / 48 = 128, total_num_kv_heads = attn_config.kv_n_heads = 8 (num_kv_heads =
    # max(1, 8 // tp), replicated when fewer than TP); n_layers 40 DbrxBlock layers, no window. clip_qkv clamps
    # the projections and the 16-expert MoE (ffn_config) has no cache.
    # 2 x 40 x 8 x 128 x 2 B = 163,840 B/token. Maximum: max_seq_len 32,768 (the only length key present).
    config = load("dbrx-instruct-4bit-mlx.partial")
    assert config["architectures"] == ["DbrxForCausalLM"]
    assert registry.status("DbrxForCausalLM") == ("supported", "mpt")
    model = model_from_config(config)
    assert model.estimate(32_768).kv_bytes_per_token == 163_840
    assert model.max_context_tokens == 32_768
    assert model.layer_pattern == "F" * 40
    assert not model.ignored_fields
    # "quantization" is MLX's weight-format block (mlx-community adds it); vLLM reads quantization_config, not it,
    # and it has no bearing on the cache: the figure is the same without it.
    bare = {k: v for k, v in config.items() if k != "quantization"}
    assert model_from_config(bare).estimate(32_768).kv_bytes_per_token == 163_840
    # TP 16: 48 heads / 16 = 3; 8 KV heads < 16 -> one per GPU (16 % 8 == 0): 2 x 40 x 1 x 128 x 2 B = 20,480 B/token.
    assert model.estimate(32_768, tp=16).kv_bytes_per_token == 20_480
    # TP 5: 48 % 5 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(48\)"):
        model.estimate(32_768, tp=5)
