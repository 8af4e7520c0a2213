"""Golden values of real public configs of hybrid and special-attention architectures (tests/data/configs,
SOURCES.md): Llama 4, MiniMax-M2 and others.

Each figure is derived by hand from the vLLM model file of the architecture (the class, the commit read and the
factors are written next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``,
vllm/config/model.py: the smallest of the length keys present, times the RoPE factor unless the rope_type is su,
longrope or llama3). BF16 is two bytes per element; every attention layer stores K and V (the factor 2).
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


# (file, architecture, family, B/token at TP 1 inside every window, maximum context, layer pattern). Derivations:
GOLDEN = [
    # MiniMaxAI/MiniMax-M2.7. vLLM MiniMaxM2DecoderLayer (minimax_m2.py, read at vllm-project/vllm 01d9958) builds
    # MiniMaxM2Attention on every layer with num_kv_heads = num_key_value_heads = 8 and head_dim = the config's 128
    # (hidden_size // heads = 3,072 / 48 = 64 would be wrong: head_dim wins, "head_dim or ..."); the decoder layer
    # passes no attn_window_size, so Attention gets per_layer_sliding_window None; attn_type_list is 62 ones
    # (softmax attention). The MTP modules (num_mtp_modules 3) are skipped by the main model's load_weights.
    # 2 x 62 layers x 8 x 128 x 2 B = 253,952 B/token; max_position_embeddings 204,800, no RoPE scaling.
    ("minimax-m2.7", "MiniMaxM2ForCausalLM", "minimax_m2", 253_952, 204_800, "F" * 62),
]


@pytest.mark.parametrize(("name", "arch", "family", "per_token", "max_context", "pattern"), GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_public_config_kv_per_token(name, arch, family, per_token, max_context, pattern):
    config = load(name)
    assert config["architectures"] == [arch]
    assert registry.status(arch) == ("supported", family)
    model = model_from_config(config)
    assert model.estimate(1_000).kv_bytes_per_token == per_token
    assert model.estimate(1_000).kv_bytes == per_token * 1_000
    assert model.max_context_tokens == max_context
    assert model.layer_pattern == pattern


def test_minimax_m2_7_tensor_parallel():
    model = model_from_config(load("minimax-m2.7"))
    # TP 8: 48 heads % 8 == 0; 8 KV heads / 8 = 1 per GPU: 2 x 62 x 1 x 128 x 2 B = 31,744 B/token per GPU.
    assert model.estimate(1_000, tp=8).kv_bytes_per_token == 31_744
    # TP 16: 48 % 16 == 0; 8 KV heads < 16, replicated (16 % 8 == 0), one per GPU: 31,744 B/token per GPU.
    assert model.estimate(1_000, tp=16).kv_bytes_per_token == 31_744
    # TP 32: 48 % 32 != 0, refused as vLLM ModelConfig.verify_with_parallel_config refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(48\)"):
        model.estimate(1_000, tp=32)


def test_llama_4_scout_chunked_and_global_layers():
    # meta-llama/Llama-4-Scout-17B-16E-Instruct (partial: the keys vendored; the text model is all there).
    # vLLM reads hf_text_config = text_config. Llama4Attention.__init__ (llama4.py, read at vllm-project/vllm
    # 0303cbd): nope = no_rope_layers[layer_idx] == 0; use_chunked_local_attn = not nope and attention_chunk_size,
    # so RoPE layers build ChunkedLocalAttention(attention_chunk_size = 8,192) and NoPE layers a plain Attention.
    # The config has no no_rope_layers: transformers' Llama4TextConfig fills it from no_rope_layer_interval
    # (default 4): int((i + 1) % 4 != 0), so layers 3, 7, ..., 47 (12) are NoPE / global and 36 are chunked.
    # num_kv_heads = 8, head_dim = the config's 128: per layer per token 2 x 8 x 128 x 2 B = 4,096 B.
    config = load("llama-4-scout-17b-16e-instruct.partial")
    assert config["architectures"] == ["Llama4ForConditionalGeneration"]
    assert registry.status("Llama4ForConditionalGeneration") == ("supported", "llama4")
    model = model_from_config(config)
    assert model.layer_pattern == "CCCF" * 12
    # inside one chunk every layer holds every token: 48 x 4,096 = 196,608 B/token
    assert model.estimate(1_000).kv_bytes == 196_608 * 1_000
    assert model.estimate(8_192).kv_bytes == 196_608 * 8_192  # 1,610,612,736
    # at 100,000 tokens the 36 chunked layers hold one chunk of 8,192 tokens and the 12 global layers all:
    # 12 x 4,096 x 100,000 + 36 x 4,096 x 8,192 = 4,915,200,000 + 1,207,959,552 = 6,123,159,552 B
    assert model.estimate(100_000).kv_bytes == 6_123_159_552
    # Maximum: max_position_embeddings 10,485,760; rope_scaling is llama3, which _get_and_verify_max_len does not
    # multiply by its factor (16): 10,485,760.
    assert model.max_context_tokens == 10_485_760


def test_llama_4_scout_tensor_parallel():
    model = model_from_config(load("llama-4-scout-17b-16e-instruct.partial"))
    # TP 8: 40 heads % 8 == 0; 8 KV heads / 8 = 1 per GPU: 48 x 2 x 1 x 128 x 2 B = 24,576 B/token per GPU.
    assert model.estimate(1_000, tp=8).kv_bytes_per_token == 24_576
    # TP 16: 40 % 16 != 0; vLLM refuses (and Llama4Attention asserts total_num_heads % tp_size == 0).
    with pytest.raises(PlanInputError, match=r"attention heads \(40\)"):
        model.estimate(1_000, tp=16)


def test_qwen3_next_80b_kv_and_gated_deltanet_state():
    # Qwen3-Next-80B-A3B-Instruct as nvidia/Qwen3-Next-80B-A3B-Instruct-NVFP4 publishes it (partial: a public
    # transcription; the NVFP4 weight recipe changes no cache: no kv_cache_scheme). vLLM Qwen3NextForCausalLM
    # (qwen3_next.py, read at vllm-project/vllm 002d607) builds Qwen3NextAttention on the full_attention layers
    # (layer_types: every 4th, (i + 1) % 4 == 0, 12 of 48) with num_key_value_heads = 2 KV heads of head_dim 256
    # (attn_output_gate doubles q, not K/V), and Qwen3NextGatedDeltaNet elsewhere (36 layers, no KV).
    config = load("qwen3-next-80b-a3b-instruct-nvfp4.partial")
    assert config["architectures"] == ["Qwen3NextForCausalLM"]
    assert registry.status("Qwen3NextForCausalLM") == ("supported", "qwen3_next")
    model = model_from_config(config)
    assert model.layer_pattern == "LLLF" * 12
    # KV: 2 x 12 x 2 x 256 x 2 B = 24,576 B/token
    assert model.estimate(1_000).kv_bytes_per_token == 24_576
    # State per sequence, get_mamba_state_shape_from_config -> MambaStateShapeCalculator.gated_delta_net_state_shape
    # (layers/mamba/mamba_utils.py): conv (2 x 16 x 128 + 32 x 128 = 8,192) x (linear_conv_kernel_dim 4 - 1 = 3),
    # recurrent 32 x 128 x 128; both BF16 (mamba_cache_dtype / mamba_ssm_cache_dtype "auto" = the model dtype):
    # 8,192 x 3 x 2 + 32 x 128 x 128 x 2 = 49,152 + 1,048,576 = 1,097,728 B per layer; x 36 = 39,518,208 B.
    assert model.estimate(1_000).kv_bytes == 24_576 * 1_000 + 39_518_208
    # Maximum: max_position_embeddings 262,144; rope_scaling null.
    assert model.max_context_tokens == 262_144


def test_qwen3_next_80b_tensor_parallel():
    model = model_from_config(load("qwen3-next-80b-a3b-instruct-nvfp4.partial"))
    # TP 2: 2 KV heads / 2 = 1 per GPU: 2 x 12 x 1 x 256 x 2 B = 12,288 B/token; state halves (divide(8,192, 2) =
    # 4,096 conv channels, 16 value heads): 4,096 x 3 x 2 + 16 x 128 x 128 x 2 = 548,864 B x 36 = 19,759,104 B.
    assert model.estimate(1_000, tp=2).kv_bytes == 12_288 * 1_000 + 19_759_104
    # TP 8: 2 KV heads < 8, replicated (8 % 2 == 0), one per GPU: still 12,288 B/token.
    assert model.estimate(1_000, tp=8).kv_bytes_per_token == 12_288
    # TP 3: 16 attention heads % 3 != 0 (and vLLM's divide() of the 8,192 conv channels fails): refused.
    with pytest.raises(PlanInputError):
        model.estimate(1_000, tp=3)


def test_lfm2_5_1_2b_attention_and_short_conv_state():
    # FlameF0X/LFM2.5-1.2B-Distilled-Claude-4.6, a public fine-tune of LiquidAI/LFM2.5-1.2B-Thinking (the LFM2 1.2B
    # network: 16 layers, 6 attention). vLLM Lfm2Model.get_layer (lfm2.py, read at vllm-project/vllm 055e47c):
    # layer_types[i] == "full_attention" builds Lfm2AttentionDecoderLayer, else Lfm2ShortConvDecoderLayer (no KV).
    # Lfm2Attention: num_kv_heads = num_key_value_heads = 8, head_dim = hidden_size // num_attention_heads =
    # 2,048 / 32 = 64, no window. KV: 2 x 6 x 8 x 64 x 2 B = 12,288 B/token (torch_dtype float16: also 2 B).
    config = load("lfm2.5-1.2b-distilled-claude-4.6")
    assert config["architectures"] == ["Lfm2ForCausalLM"]
    assert registry.status("Lfm2ForCausalLM") == ("supported", "lfm2")
    model = model_from_config(config)
    assert model.layer_pattern == "KKFKKFKKFKFKFKFK"
    assert model.estimate(1_000).kv_bytes_per_token == 12_288
    # State: Lfm2ForCausalLM.get_mamba_state_shape_from_config -> short_conv_state_shape(tp, conv_dim 2,048,
    # conv_L_cache 3) = (3 - 1) x 2,048 per layer and sequence, in the model dtype: 2 x 2,048 x 2 B = 8,192 B;
    # x 10 conv layers = 81,920 B.
    assert model.estimate(1_000).kv_bytes == 12_288 * 1_000 + 81_920
    # Maximum: max_position_embeddings 128,000; rope_parameters rope_type default (no factor).
    assert model.max_context_tokens == 128_000
    # Training and tooling keys (unsloth_version, model_name, use_pos_enc, conv_use_xavier_init, block_*) change
    # no cache and are not refused.
    assert not model.ignored_fields


def test_lfm2_5_1_2b_tensor_parallel():
    model = model_from_config(load("lfm2.5-1.2b-distilled-claude-4.6"))
    # TP 8: 32 heads % 8 == 0; 8 KV heads / 8 = 1: 2 x 6 x 1 x 64 x 2 B = 1,536 B/token; conv state
    # divide(2,048, 8) = 256 channels: 2 x 256 x 2 B = 1,024 B x 10 = 10,240 B.
    assert model.estimate(1_000, tp=8).kv_bytes == 1_536 * 1_000 + 10_240
    # TP 16: 8 KV heads < 16, replicated (16 % 8 == 0): 1,536 B/token; state 2 x 128 x 2 B x 10 = 5,120 B.
    assert model.estimate(1_000, tp=16).kv_bytes == 1_536 * 1_000 + 5_120
    # TP 3: 32 heads % 3 != 0 (and vLLM's divide(2,048, 3) fails): refused.
    with pytest.raises(PlanInputError):
        model.estimate(1_000, tp=3)


def test_granite_4_0_h_350m_attention_and_mamba2_state():
    # ibm-granite/granite-4.0-h-350m (partial: a trimmed public quotation with no architectures key, so the class
    # the Hub file names, GraniteMoeHybridForCausalLM, is added here). vLLM GraniteMoeHybridModel.get_layer
    # (granitemoehybrid.py, read at vllm-project/vllm 0195c9e): layer_types "attention" builds
    # GraniteMoeHybridAttention, "mamba" a Mamba2 mixer (no KV). Attention at 10, 13, 17, 27 (4 of 32):
    # head_dim = hidden_size // num_attention_heads = 768 / 12 = 64, num_key_value_heads = 4, no window
    # (position_embedding_type "nope": no rotary). KV: 2 x 4 x 4 x 64 x 2 B = 4,096 B/token.
    config = {**load("granite-4.0-h-350m.partial"), "architectures": ["GraniteMoeHybridForCausalLM"]}
    assert registry.status("GraniteMoeHybridForCausalLM")[0] == "supported"
    model = model_from_config(config)
    assert model.layer_pattern == "M" * 10 + "F" + "MM" + "F" + "MMM" + "F" + "M" * 9 + "F" + "MMMM"
    assert model.estimate(1_000).kv_bytes_per_token == 4_096
    # State: get_mamba_state_shape_from_config -> mamba2_state_shape(intermediate_size = mamba_expand x hidden_size
    # = 2 (Hugging Face GraniteMoeHybridConfig's default; the quotation has no mamba_expand) x 768 = 1,536,
    # n_groups 1, heads 48, head_dim 32, state 128, conv kernel 4): conv (1,536 + 2 x 1 x 128) x 3 = 5,376,
    # temporal 48 x 32 x 128 = 196,608 elements, BF16: (5,376 + 196,608) x 2 B = 403,968 B; x 28 Mamba layers
    # = 11,311,104 B per sequence.
    assert model.estimate(1_000).kv_bytes == 4_096 * 1_000 + 11_311_104
    # Maximum: max_position_embeddings 32,768, no RoPE scaling.
    assert model.max_context_tokens == 32_768


def test_granite_4_0_h_350m_tensor_parallel():
    model = model_from_config({**load("granite-4.0-h-350m.partial"), "architectures": ["GraniteMoeHybridForCausalLM"]})
    # TP 2: 4 KV heads / 2 = 2: 2 x 4 x 2 x 64 x 2 B = 2,048 B/token. mamba2_state_shape at TP 2: one group is
    # replicated to two (extra_groups_for_head_shards(1, 2) = 1): conv (1,536 + 2 x 2 x 128) / 2 = 1,024 x 3,
    # temporal 24 x 32 x 128: (3,072 + 98,304) x 2 B = 202,752 B x 28 = 5,677,056 B.
    assert model.estimate(1_000, tp=2).kv_bytes == 2_048 * 1_000 + 5_677_056
    # TP 4: 1 KV head per GPU: 1,024 B/token; conv (1,536 + 2 x 4 x 128) / 4 = 640 x 3, temporal 12 x 32 x 128:
    # (1,920 + 49,152) x 2 B = 102,144 B x 28 = 2,860,032 B.
    assert model.estimate(1_000, tp=4).kv_bytes == 1_024 * 1_000 + 2_860_032
    # TP 8: 12 attention heads % 8 != 0 (GraniteMoeHybridAttention asserts it): refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(12\)"):
        model.estimate(1_000, tp=8)


def test_gemma_2b_multi_query():
    # google/gemma-2b (GemmaForCausalLM). vLLM GemmaAttention (gemma.py): num_kv_heads = num_key_value_heads = 1 (MQA),
    # head_dim = the config's 256, no window. 2 x 18 x 1 x 256 x 2 B = 18,432 B/token; max_position_embeddings
    # 8,192, rope_scaling null.
    config = load("gemma-2b")
    assert config["architectures"] == ["GemmaForCausalLM"]
    assert registry.status("GemmaForCausalLM") == ("supported", "gemma")
    model = model_from_config(config)
    assert model.layer_pattern == "F" * 18
    assert model.estimate(4_096).kv_bytes == 18_432 * 4_096
    assert model.max_context_tokens == 8_192
    # TP 4: 8 heads % 4 == 0; the one KV head is replicated (4 % 1 == 0): 18,432 B/token on every GPU.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 18_432
    # TP 3: 8 % 3 != 0, refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(8\)"):
        model.estimate(4_096, tp=3)


def test_gemma_3_1b_it_local_and_global_layers():
    # google/gemma-3-1b-it (Gemma3ForCausalLM, model_type gemma3_text). vLLM Gemma3Attention.__init__ (gemma3.py, read
    # at vllm-project/vllm 004dc92): is_sliding = bool((layer_idx + 1) % sliding_window_pattern), pattern 6, so
    # layers 5, 11, 17, 23 (4) are global and 22 are local with the 512-token window (later vLLM reads the same split
    # from transformers' layer_types, which Gemma3TextConfig builds by the same rule). num_kv_heads = 1, head_dim
    # 256: per layer per token 2 x 1 x 256 x 2 B = 1,024 B.
    config = load("gemma-3-1b-it")
    assert config["architectures"] == ["Gemma3ForCausalLM"]
    model = model_from_config(config)
    assert model.layer_pattern == ("S" * 5 + "F") * 4 + "SS"
    # inside the window every layer holds every token: 26 x 1,024 = 26,624 B/token
    assert model.estimate(500).kv_bytes == 26_624 * 500
    # at 32,768 tokens: 4 x 1,024 x 32,768 + 22 x 1,024 x 512 = 134,217,728 + 11,534,336 = 145,752,064 B
    assert model.estimate(32_768).kv_bytes == 145_752_064
    # Maximum: max_position_embeddings 32,768 (a gemma3 model_type is never rescaled; rope_scaling is null anyway).
    assert model.max_context_tokens == 32_768
    # TP 2: 4 heads % 2 == 0; one KV head replicated: the same 1,024 B per layer per token per GPU.
    assert model.estimate(500, tp=2).kv_bytes == 26_624 * 500
    with pytest.raises(PlanInputError, match=r"attention heads \(4\)"):
        model.estimate(500, tp=3)


# Qwen3.5 configs carry mtp_num_hidden_layers (1), the MTP draft layer. vLLM's served model builds num_hidden_layers
# layers by layer_types and skips every "mtp." weight (qwen3_5.py Qwen3_5Model.load_weights, read at
# vllm-project/vllm 00def4f); only the speculative draft model loads it. kvplan refused the field by name (a layout
# word) until the qwen3_next family declared it irrelevant.


def test_qwen3_5_35b_a3b_kv_and_fp32_recurrent_state():
    # Qwen/Qwen3.5-35B-A3B (Qwen3_5MoeForConditionalGeneration; vLLM reads hf_text_config = text_config).
    # Qwen3_5Model (qwen3_5.py, 00def4f): layer_types "full_attention" (every 4th, 10 of 40) builds Qwen3NextAttention
    # with num_key_value_heads = 2 KV heads of head_dim 256; "linear_attention" a GatedDeltaNetAttention (no KV).
    # KV: 2 x 10 x 2 x 256 x 2 B = 20,480 B/token.
    config = load("qwen3.5-35b-a3b")
    assert config["architectures"] == ["Qwen3_5MoeForConditionalGeneration"]
    assert registry.status("Qwen3_5MoeForConditionalGeneration") == ("supported", "qwen3_next")
    model = model_from_config(config)  # mtp_num_hidden_layers accepted (see above)
    assert not model.ignored_fields
    assert model.layer_pattern == "LLLF" * 10
    assert model.estimate(1_000).kv_bytes_per_token == 20_480
    # State: gated_delta_net_state_shape: conv (2 x 16 x 128 + 32 x 128 = 8,192) x 3 in BF16 = 49,152 B; recurrent
    # 32 x 128 x 128 = 524,288 elements in float32, because vLLM's Qwen3_5ForConditionalGenerationConfig
    # (model_executor/models/config.py) sets mamba_ssm_cache_dtype "auto" to the config's mamba_ssm_dtype "float32":
    # 2,097,152 B. (49,152 + 2,097,152) x 30 layers = 64,389,120 B per sequence.
    assert model.estimate(1_000).kv_bytes == 20_480 * 1_000 + 64_389_120
    # Maximum: max_position_embeddings 262,144; rope_parameters rope_type default (mrope sections, no factor).
    assert model.max_context_tokens == 262_144
    # TP 2: 1 KV head per GPU: 10,240 B/token; conv 4,096 x 3 x 2 B = 24,576, recurrent 16 x 128 x 128 x 4 B =
    # 1,048,576: x 30 = 32,194,560 B.
    assert model.estimate(1_000, tp=2).kv_bytes == 10_240 * 1_000 + 32_194_560


def test_qwen3_5_27b_dense_kv_and_state_tensor_parallel():
    # Qwen/Qwen3.5-27B (Qwen3_5ForConditionalGeneration): 64 layers, 16 full attention with 4 KV heads of 256.
    # KV: 2 x 16 x 4 x 256 x 2 B = 65,536 B/token. State: conv (2 x 16 x 128 + 48 x 128 = 10,240) x 3 x 2 B =
    # 61,440 B; recurrent 48 x 128 x 128 x 4 B (float32, as above) = 3,145,728 B; x 48 layers = 153,944,064 B.
    config = load("qwen3.5-27b")
    assert config["architectures"] == ["Qwen3_5ForConditionalGeneration"]
    model = model_from_config(config)
    assert model.layer_pattern == "LLLF" * 16
    assert model.estimate(1_000).kv_bytes == 65_536 * 1_000 + 153_944_064
    assert model.max_context_tokens == 262_144
    # TP 8: 24 heads % 8 == 0; 4 KV heads < 8, replicated (8 % 4 == 0): 16,384 B/token; state divided by 8:
    # 1,280 x 3 x 2 B = 7,680 + 6 x 128 x 128 x 4 B = 393,216: 400,896 B x 48 = 19,243,008 B.
    assert model.estimate(1_000, tp=8).kv_bytes == 16_384 * 1_000 + 19_243_008
    # TP 3: 4 KV heads neither split over nor replicated to 3 (and divide(10,240, 3) fails): refused.
    with pytest.raises(PlanInputError):
        model.estimate(1_000, tp=3)


def test_llama_4_maverick_same_cache_shorter_context():
    # meta-llama/Llama-4-Maverick-17B-128E-Instruct (partial, as vendored): the text model of Scout with 128 experts
    # on every other layer (interleave_moe_layer_step 2, MoE: no KV) and use_qk_norm false (no cache change).
    # Same Llama4Attention geometry: 36 chunked (8,192) + 12 NoPE global layers, 8 KV heads of 128: 4,096 B per layer
    # per token; 12 x 4,096 x 100,000 + 36 x 4,096 x 8,192 = 6,123,159,552 B at 100,000 tokens.
    model = model_from_config(load("llama-4-maverick-17b-128e-instruct.partial"))
    assert model.layer_pattern == "CCCF" * 12
    assert model.estimate(1_000).kv_bytes == 196_608 * 1_000
    assert model.estimate(100_000).kv_bytes == 6_123_159_552
    # Maximum: max_position_embeddings 1,048,576, rope_scaling null.
    assert model.max_context_tokens == 1_048_576
