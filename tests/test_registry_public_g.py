"""Golden values of real public configs of multimodal wrappers whose language model sits in ``text_config``
(tests/data/configs, SOURCES.md).

Each figure is derived by hand from the vLLM model file of the architecture (the class and the factors are written
next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``, vllm/config/model.py), which
reads ``ModelConfig.hf_text_config`` (the ``text_config``). BF16 is two bytes per element; every layer stores K and V
(the factor 2).
"""

import json
from pathlib import Path

import pytest

from planner.errors import PlanInputError
from planner.hf import registry
from planner.hf.config import layout_from_config, model_from_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "configs"


def load(name):
    return json.loads((CONFIGS / f"{name}.config.json").read_text())


def gemma_3_12b_it():
    # The quotation is the keyword dict ai-toolkit passes to transformers' Gemma3Config, which has no `architectures`;
    # the class vLLM serves this config with is added here (every other key as quoted).
    return {"architectures": ["Gemma3ForConditionalGeneration"], **load("gemma-3-12b-it-unsloth.partial")}


# (config, architecture, B/token at TP 1 below any window, maximum context, layer pattern). Derivations:
GOLDEN = [
    # llava-hf/llava-1.5-7b-hf. vLLM LlavaForConditionalGeneration.__init__ (llava.py, read at 0004c54) builds its
    # language model with init_vllm_registered_model(hf_config=config.text_config): a LlamaForCausalLM of the text
    # config. That text_config names only max_position_embeddings, rms_norm_eps, vocab_size and model_type "llama":
    # transformers' LlavaConfig builds it as LlamaConfig(**text_config), whose defaults (configuration_llama.py, read
    # at huggingface/transformers 008e574) give hidden_size 4,096, num_hidden_layers 32, num_attention_heads 32,
    # num_key_value_heads None -> 32 (MHA), head_dim None -> 4,096 / 32 = 128. LlamaAttention: 32 KV heads of 128.
    # 2 x 32 x 32 x 128 x 2 B = 524,288 B/token; maximum: text_config max_position_embeddings 4,096, no RoPE scaling.
    ("llava-1.5-7b-hf", "LlavaForConditionalGeneration", 524_288, 4_096, "F" * 32),
    # Qwen2.5-VL-7B-Instruct as re-saved by transformers 4.53.1 (text_config nested). vLLM
    # Qwen2_5_VLForConditionalGeneration builds init_vllm_registered_model(hf_config=config.text_config,
    # architectures=["Qwen2ForCausalLM"]): Qwen2Attention with num_key_value_heads 4 KV heads of
    # hidden_size // num_attention_heads = 3,584 / 28 = 128 on 28 layers; use_sliding_window false and the text
    # config's sliding_window null: no window (layer_types all "full_attention").
    # 2 x 28 x 4 x 128 x 2 B = 57,344 B/token. Maximum: max_position_embeddings 128,000; rope_scaling is the M-RoPE
    # section split with rope_type "default" and no factor, so vLLM's factor stays 1.0.
    ("qwen2.5-vl-7b-instruct-qwen-image-te", "Qwen2_5_VLForConditionalGeneration", 57_344, 128_000, "F" * 28),
]


@pytest.mark.parametrize(("name", "arch", "per_token", "max_context", "pattern"), GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_public_config_kv_per_token(name, arch, per_token, max_context, pattern):
    config = load(name)
    assert config["architectures"] == [arch]
    assert registry.status(arch) == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(max_context).kv_bytes_per_token == per_token
    assert model.estimate(max_context).kv_bytes == per_token * max_context
    assert model.max_context_tokens == max_context
    assert model.layer_pattern == pattern
    assert not model.ignored_fields


def test_llava_text_config_defaults_are_reported():
    # The four LlamaConfig defaults kvplan fills are reported as defaulted, max_position_embeddings is the config's own.
    layout = layout_from_config(load("llava-1.5-7b-hf"))
    defaulted = {f.field: f.value for f in layout.report if f.how == "defaulted"}
    assert defaulted["num_hidden_layers"] == 32
    assert defaulted["num_attention_heads"] == 32
    assert defaulted["hidden_size"] == 4_096
    assert "max_position_embeddings" not in defaulted


def test_llava_tensor_parallel():
    model = model_from_config(load("llava-1.5-7b-hf"))
    # TP 8: 32 heads and 32 KV heads split 4 per GPU (LlamaAttention): 2 x 32 x 4 x 128 x 2 B = 65,536 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 65_536
    # TP 3: vLLM ModelConfig.verify_with_parallel_config refuses 32 heads over 3 GPUs.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_text_config_defaults_only_where_read():
    # A nested text_config of a class whose defaults kvplan has not read (MistralConfig here) that omits the layer
    # count is still refused by name: no default is assumed.
    config = {"architectures": ["LlavaForConditionalGeneration"], "model_type": "llava",
              "text_config": {"model_type": "mistral", "max_position_embeddings": 32_768}}
    with pytest.raises(PlanInputError) as exc:
        model_from_config(config)
    assert exc.value.field == "config.num_hidden_layers"
    # An explicit null is not absent: LlamaConfig(num_hidden_layers=None) keeps None and the model cannot be built.
    config = load("llava-1.5-7b-hf")
    config["text_config"]["num_hidden_layers"] = None
    with pytest.raises(PlanInputError) as exc:
        model_from_config(config)
    assert exc.value.field == "config.num_hidden_layers"
    # A top-level value does not stand in for what the nested LlamaConfig defaults: vLLM reads the text config only.
    config = {**load("llava-1.5-7b-hf"), "num_hidden_layers": 40}
    assert model_from_config(config).layer_pattern == "F" * 32


def test_qwen2_5_vl_tensor_parallel():
    model = model_from_config(load("qwen2.5-vl-7b-instruct-qwen-image-te"))
    # TP 4: 28 heads split 7 per GPU, 4 KV heads 1 per GPU (Qwen2Attention): 2 x 28 x 1 x 128 x 2 B = 14,336 B/token.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 14_336
    # TP 8: 28 % 8 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(28\)"):
        model.estimate(4_096, tp=8)


def test_gemma_3_12b_it_five_sliding_one_global():
    # Gemma 3 12B-it's config as quoted by ai-toolkit (the text encoder of LTX-2). vLLM Gemma3ForConditionalGeneration
    # (gemma3_mm.py) runs a Gemma3ForCausalLM of config.text_config. vLLM Gemma3Attention.__init__ (gemma3.py, read at
    # 004dc92): num_key_value_heads 8 KV heads of head_dim 256 on 48 layers; layer i slides when
    # (i + 1) % sliding_window_pattern (6) != 0, with the 1,024-token window, else it is global: 40 sliding, 8 global.
    # Per layer per token 2 x 8 x 256 x 2 B = 8,192 B; 48 x 8,192 = 393,216 B/token while every layer is inside the
    # window. At 131,072 tokens: 8 x 131,072 x 8,192 + 40 x 1,024 x 8,192 = 8,589,934,592 + 335,544,320
    # = 8,925,478,912 B. Maximum: max_position_embeddings 131,072; vLLM does not multiply a gemma3 model_type's length
    # by its linear rope_scaling factor 8 (already scaled, _get_and_verify_max_len).
    config = gemma_3_12b_it()
    assert registry.status("Gemma3ForConditionalGeneration") == ("supported", "gemma")
    model = model_from_config(config)
    assert model.layer_pattern == "SSSSSF" * 8
    assert model.estimate(1_000).kv_bytes_per_token == 393_216
    assert model.estimate(1_000).kv_bytes == 393_216_000
    assert model.estimate(131_072).kv_bytes == 8_925_478_912
    assert model.max_context_tokens == 131_072
    assert not model.ignored_fields


def test_gemma_3_12b_it_tensor_parallel():
    model = model_from_config(gemma_3_12b_it())
    # TP 8: 16 heads 2 per GPU, 8 KV heads 1 per GPU (Gemma3Attention): 48 x 2 x 1 x 256 x 2 B = 49,152 B/token.
    assert model.estimate(1_000, tp=8).kv_bytes_per_token == 49_152
    # TP 3: 16 % 3 != 0 (Gemma3Attention asserts total_num_heads % tp_size == 0; ModelConfig refuses first).
    with pytest.raises(PlanInputError, match=r"attention heads \(16\)"):
        model.estimate(1_000, tp=3)


def test_mistral_small_3_1_24b():
    # mistralai/Mistral-Small-3.1-24B-Instruct-2503 as quoted by TensorRT-LLM's test fixture, whose text_config sets
    # num_hidden_layers 4 with the comment "Reduce this from the original 40 to relieve memory needs for CI": the
    # original 40 is restored here (every other key as quoted). vLLM Mistral3ForConditionalGeneration (mistral3.py)
    # builds init_vllm_registered_model(hf_config=config.text_config): a MistralForCausalLM, whose LlamaAttention takes
    # num_key_value_heads 8 and the explicit head_dim 128 (not 5,120 / 32 = 160); sliding_window null: no window.
    # 2 x 40 x 8 x 128 x 2 B = 163,840 B/token; maximum: max_position_embeddings 131,072, no RoPE scaling.
    config = load("mistral-small-3.1-24b-instruct-2503.partial")
    assert config["architectures"] == ["Mistral3ForConditionalGeneration"]
    assert config["text_config"]["num_hidden_layers"] == 4
    config["text_config"]["num_hidden_layers"] = 40
    assert registry.status("Mistral3ForConditionalGeneration") == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(4_096).kv_bytes_per_token == 163_840
    assert model.max_context_tokens == 131_072
    assert model.layer_pattern == "F" * 40
    assert not model.ignored_fields
    # TP 8: 32 heads 4 per GPU, 8 KV heads 1 per GPU: 2 x 40 x 1 x 128 x 2 B = 20,480 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 20_480
    # TP 3: 32 % 3 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_qwen3_vl_4b():
    # A Qwen3-VL-4B config.json (transformers 4.57.0.dev0, text_config nested). vLLM Qwen3VLForConditionalGeneration
    # (qwen3_vl.py) builds Qwen3LLMForCausalLM(vllm_config.with_hf_config(config.text_config)): Qwen3Attention with
    # num_key_value_heads 8 KV heads of the explicit head_dim 128 on 36 layers, no window.
    # 2 x 36 x 8 x 128 x 2 B = 147,456 B/token. Maximum: max_position_embeddings 262,144; rope_scaling is the
    # interleaved M-RoPE split with rope_type "default" and no factor (vLLM's factor stays 1.0).
    config = load("qwen3-vl-4b")
    assert config["architectures"] == ["Qwen3VLForConditionalGeneration"]
    assert registry.status("Qwen3VLForConditionalGeneration") == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(4_096).kv_bytes_per_token == 147_456
    assert model.max_context_tokens == 262_144
    assert model.layer_pattern == "F" * 36
    assert not model.ignored_fields
    # TP 8: 32 heads 4 per GPU, 8 KV heads 1 per GPU: 2 x 36 x 1 x 128 x 2 B = 18,432 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 18_432
    # TP 3: 32 % 3 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_qwen3_vl_30b_a3b_instruct():
    # Qwen/Qwen3-VL-30B-A3B-Instruct. vLLM Qwen3VLMoeForConditionalGeneration (qwen3_vl_moe.py) runs a Qwen3 MoE
    # language model of config.text_config: Qwen3MoeAttention with num_key_value_heads 4 KV heads of the explicit
    # head_dim 128 on 48 layers, no window; the 128 experts change no KV.
    # 2 x 48 x 4 x 128 x 2 B = 98,304 B/token. Maximum: max_position_embeddings 262,144 (rope_type "default", no factor).
    config = load("qwen3-vl-30b-a3b-instruct")
    assert config["architectures"] == ["Qwen3VLMoeForConditionalGeneration"]
    assert registry.status("Qwen3VLMoeForConditionalGeneration") == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(4_096).kv_bytes_per_token == 98_304
    assert model.max_context_tokens == 262_144
    assert model.layer_pattern == "F" * 48
    assert not model.ignored_fields
    # TP 4: 4 KV heads 1 per GPU: 2 x 48 x 1 x 128 x 2 B = 24,576 B/token per GPU. TP 8: 4 KV heads < 8, replicated
    # (8 % 4 == 0), still one per GPU: 24,576 B/token per GPU.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 24_576
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 24_576
    # TP 3: 32 % 3 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)
