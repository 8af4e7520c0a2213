"""Golden values of real public configs published under vLLM's alias spellings (tests/data/configs, SOURCES.md).

Each figure is derived by hand from the vLLM model file the alias maps to (vLLM's registry,
vllm/model_executor/models/registry.py, read at vllm-project/vllm 0002bff) and from vLLM's maximum-length rule
(``_get_and_verify_max_len``, vllm/config/model.py: the smallest of the possible_keys the config object carries).
BF16 is two bytes per element; every layer stores K and V (the factor 2).
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


# (file, architecture, B/token at TP 1, maximum context, layer pattern). Derivations:
GOLDEN = [
    # LLaMA-7B in the pre-release transformers format (class spelled LLaMAForCausalLM). vLLM's registry maps
    # "LLaMAForCausalLM" ("For decapoda-research/llama-*") to llama.LlamaForCausalLM. The config has no
    # num_key_value_heads: transformers' LlamaConfig (model_type "llama") sets it to num_attention_heads, and vLLM's
    # LlamaDecoderLayer reads getattr(config, "num_key_value_heads", num_attention_heads) = 32 (MHA);
    # head_dim = hidden_size // num_attention_heads = 4,096 / 32 = 128; no sliding window.
    # 2 x 32 layers x 32 x 128 x 2 B = 524,288 B/token.
    # Maximum: max_sequence_length 2,048 (in vLLM's possible_keys); the LlamaConfig object also carries its default
    # max_position_embeddings 2,048; the smallest is 2,048.
    ("llama-7b-hf", "LLaMAForCausalLM", 524_288, 2_048, "F" * 32),
    # LLaMA-13B, same format: 40 KV heads (= 40 attention heads) of 5,120 / 40 = 128, 40 layers.
    # 2 x 40 x 40 x 128 x 2 B = 819,200 B/token; maximum 2,048 as above.
    ("llama-13b-hf", "LLaMAForCausalLM", 819_200, 2_048, "F" * 40),
    # BAAI Aquila2-34B (partial: the published file less its model_type, see SOURCES.md). vLLM's registry maps
    # "AquilaForCausalLM" to llama.LlamaForCausalLM: LlamaAttention with num_key_value_heads = 8 KV heads of
    # hidden_size // num_attention_heads = 6,144 / 48 = 128, no window. 2 x 60 x 8 x 128 x 2 B = 245,760 B/token.
    # Maximum: max_position_embeddings 4,096 (the only one of vLLM's possible_keys present); rope_scaling null.
    ("aquila2-34b.partial", "AquilaForCausalLM", 245_760, 4_096, "F" * 60),
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


def test_llama_7b_tensor_parallel():
    model = model_from_config(load("llama-7b-hf"))
    # TP 8: 32 heads % 8 == 0; 32 KV heads / 8 = 4 per GPU: 2 x 32 x 4 x 128 x 2 B = 65,536 B/token per GPU.
    assert model.estimate(2_048, tp=8).kv_bytes_per_token == 65_536
    # TP 3: vLLM ModelConfig.verify_with_parallel_config: "Total number of attention heads (32) must be divisible by
    # tensor parallel size (3)".
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(2_048, tp=3)


def test_llama_13b_tensor_parallel():
    model = model_from_config(load("llama-13b-hf"))
    # TP 8: 40 heads % 8 == 0; 40 KV heads / 8 = 5 per GPU: 2 x 40 x 5 x 128 x 2 B = 102,400 B/token per GPU.
    assert model.estimate(2_048, tp=8).kv_bytes_per_token == 102_400
    # TP 16: 40 % 16 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(40\)"):
        model.estimate(2_048, tp=16)


def test_aquila2_34b_tensor_parallel():
    model = model_from_config(load("aquila2-34b.partial"))
    # TP 8: 48 heads % 8 == 0; 8 KV heads / 8 = 1 per GPU: 2 x 60 x 1 x 128 x 2 B = 30,720 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 30_720
    # TP 16: 48 % 16 == 0; 8 KV heads < 16 -> replicated, one per GPU (LlamaAttention: max(1, 8 // 16), 16 % 8 == 0):
    # still 30,720 B/token per GPU.
    assert model.estimate(4_096, tp=16).kv_bytes_per_token == 30_720
    # TP 5: 48 % 5 != 0, refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(48\)"):
        model.estimate(4_096, tp=5)

