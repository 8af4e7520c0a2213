"""Golden values of real public configs of PhiMoE and MiniCPM3 (tests/data/configs, SOURCES.md).

Each figure is derived by hand from the vLLM model file of the architecture (the class and the factors are written
next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``, vllm/config/model.py: the
smallest of the ``possible_keys`` present; the RoPE-scaling factor is not applied for ``su`` / ``longrope`` /
``llama3``). BF16 is two bytes per element; every layer stores K and V (the factor 2).
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
    # microsoft/Phi-3.5-MoE-instruct. vLLM PhiMoEDecoderLayer.__init__ (phimoe.py) builds PhiMoEAttention with
    # num_kv_heads = num_key_value_heads = 8 and head_dim = getattr(config, "head_dim", hidden_size //
    # num_attention_heads) = 4,096 / 32 = 128 (the config has no head_dim); its Attention is given no per-layer window,
    # so it takes cache_config.sliding_window = the config's sliding_window 131,072 on all 32 layers (S), a window as
    # wide as the context: within 131,072 tokens every layer keeps every token. The 16 experts (top 2) change no KV.
    # 2 x 32 x 8 x 128 x 2 B = 131,072 B/token. Maximum: max_position_embeddings 131,072 (the only possible_keys entry;
    # original_max_position_embeddings is not one); rope_scaling type "longrope" is not scaled.
    ("phi-3.5-moe-instruct", "PhiMoEForCausalLM", 131_072, 131_072, "S" * 32),
    # openbmb/MiniCPM3-4B. vLLM MiniCPM3Attention.__init__ (minicpm3.py) decompresses the kv_lora_rank 256 latent and
    # caches per-head K and V: Attention(num_local_heads, qk_head_dim, num_kv_heads=num_local_heads) with qk_head_dim =
    # qk_nope_head_dim + qk_rope_head_dim = 64 + 32 = 96 (V zero-padded to 96 in forward); num_heads =
    # num_attention_heads = 40, on all 62 layers (MiniCPM3Model._init_layers). 2 x 62 x 40 x 96 x 2 B = 952,320 B/token.
    # Maximum: max_position_embeddings 32,768; rope_scaling type "longrope" (no factor) is not scaled.
    ("minicpm3-4b", "MiniCPM3ForCausalLM", 952_320, 32_768, "F" * 62),
]


@pytest.mark.parametrize(("name", "arch", "per_token", "max_context", "pattern"), GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_public_config_kv_per_token(name, arch, per_token, max_context, pattern):
    config = load(name)
    assert config["architectures"] == [arch]
    assert registry.status(arch)[0] == "supported"
    model = model_from_config(config)
    # per token inside the context (for Phi-3.5-MoE's window, the marginal figure at exactly 131,072 tokens is 0:
    # the window is full there); the pool at the full context is per_token x max_context either way
    assert model.estimate(4_096).kv_bytes_per_token == per_token
    assert model.estimate(max_context).kv_bytes == per_token * max_context
    assert model.max_context_tokens == max_context
    assert model.layer_pattern == pattern
    assert not model.ignored_fields


def test_phi_3_5_moe_window_as_wide_as_the_context():
    # The 131,072-token window never drops a token within max_model_len 131,072: at 1,000 tokens and at the full
    # context the pool is that of full attention, 131,072 B per token per layer set: 1,000 x 131,072 = 131,072,000 B;
    # 131,072 x 131,072 = 17,179,869,184 B.
    model = model_from_config(load("phi-3.5-moe-instruct"))
    assert model.estimate(1_000).kv_bytes == 131_072_000
    assert model.estimate(131_072).kv_bytes == 17_179_869_184


def test_phi_3_5_moe_tensor_parallel():
    model = model_from_config(load("phi-3.5-moe-instruct"))
    # TP 8: 32 heads % 8 == 0; 8 KV heads / 8 = 1 per GPU (PhiMoEAttention: max(1, 8 // 8)):
    # 2 x 32 x 1 x 128 x 2 B = 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 16_384
    # TP 16: 32 % 16 == 0; 8 KV heads < 16, replicated (PhiMoEAttention asserts 16 % 8 == 0): still 1 per GPU,
    # 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=16).kv_bytes_per_token == 16_384
    # TP 3: vLLM ModelConfig.verify_with_parallel_config: "Total number of attention heads (32) must be divisible by
    # tensor parallel size (3)".
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_minicpm3_4b_tensor_parallel():
    model = model_from_config(load("minicpm3-4b"))
    # TP 8: MiniCPM3Attention num_local_heads = 40 / 8 = 5, and num_kv_heads = num_local_heads:
    # 2 x 62 x 5 x 96 x 2 B = 119,040 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 119_040
    # TP 5: 40 / 5 = 8 heads per GPU: 2 x 62 x 8 x 96 x 2 B = 190,464 B/token per GPU.
    assert model.estimate(4_096, tp=5).kv_bytes_per_token == 190_464
    # TP 16: 40 % 16 != 0 (MiniCPM3Attention asserts num_heads % tp_size == 0; ModelConfig refuses first).
    with pytest.raises(PlanInputError, match=r"attention heads \(40\)"):
        model.estimate(4_096, tp=16)


def test_minicpm3_4b_is_not_priced_as_its_latent():
    # The published kv_lora_rank 256 + qk_rope_head_dim 32 latent would be 62 x 288 x 2 B = 35,712 B/token if vLLM
    # cached it as MLA; vLLM's MiniCPM3Attention does not (it caches the decompressed per-head K and V above).
    model = model_from_config(load("minicpm3-4b"))
    assert model.estimate(1_000).kv_bytes_per_token != 35_712
    assert model.estimate(1_000).kv_bytes_per_token == 952_320
