"""Golden values of real public configs (Apertus, LFM2-MoE, Grok-1) read by the generic readers (tests/data/configs,
SOURCES.md).

Each figure is derived by hand from the vLLM model file of the architecture (apertus.py, lfm2_moe.py and grok1.py read
in the vLLM 0.23.0 source, commit 0fc695fc6; apertus.py and lfm2_moe.py unchanged on these lines at 0.34.0, commit
62d4bc3c7; the class and the factors are written next to the number) and from vLLM's maximum-length rule
(``_get_and_verify_max_len``, vllm/config/model.py). BF16 is two bytes per element; every attention layer stores K
and V (the factor 2).
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.errors import PlanInputError
from planner.hf import registry
from planner.hf.config import model_from_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "configs"


def load(name):
    return json.loads((CONFIGS / f"{name}.config.json").read_text())


def test_apertus_8b_kv_per_token_and_maximum():
    # swiss-ai/Apertus-8B (partial: the fields a public test fixture quotes, architectures included).
    # vLLM ApertusAttention.__init__ (apertus.py): total_num_kv_heads = num_key_value_heads = 8; head_dim =
    # getattr(config, "head_dim", None) or hidden_size // num_attention_heads = 4,096 / 32 = 128; no layer_types,
    # so per_layer_sliding_window is None on every layer. qk_norm (q_norm / k_norm RMSNorm of head_dim) and the
    # xIELU MLP change no cache. 2 x 32 layers x 8 x 128 x 2 B = 131,072 B/token.
    # Maximum: max_position_embeddings 65,536; rope_scaling rope_type "llama3" is one of the types
    # _get_and_verify_max_len does not multiply by the factor (8), so 65,536.
    config = load("apertus-8b.partial")
    assert config["architectures"] == ["ApertusForCausalLM"]
    assert registry.status("ApertusForCausalLM") == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(65_536).kv_bytes_per_token == 131_072
    assert model.estimate(65_536).kv_bytes == 131_072 * 65_536
    assert model.max_context_tokens == 65_536
    assert model.layer_pattern == "F" * 32
    assert not model.ignored_fields


def test_apertus_8b_tensor_parallel():
    model = model_from_config(load("apertus-8b.partial"))
    # TP 8: 32 heads % 8 == 0; ApertusAttention: 8 KV heads >= 8, 8 % 8 == 0, max(1, 8 // 8) = 1 per GPU:
    # 2 x 32 x 1 x 128 x 2 B = 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 16_384
    # TP 16: 8 KV heads < 16, replicated (16 % 8 == 0), still max(1, 8 // 16) = 1 per GPU: 16,384 B/token.
    assert model.estimate(4_096, tp=16).kv_bytes_per_token == 16_384
    # TP 3: vLLM ModelConfig.verify_with_parallel_config: 32 attention heads are not divisible by 3.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def lfm2_8b_a1b():
    # LiquidAI/LFM2-8B-A1B (partial: a trimmed public quotation with no architectures key, so the class the Hub
    # file names, Lfm2MoeForCausalLM, is added here).
    return {**load("lfm2-8b-a1b.partial"), "architectures": ["Lfm2MoeForCausalLM"]}


def test_lfm2_8b_a1b_attention_and_short_conv_state():
    # vLLM Lfm2MoeModel (lfm2_moe.py): layer_types[i] == "full_attention" builds an attention decoder layer, every
    # other ("conv") a short-convolution layer with no KV. Attention at 2, 6, 10, 14, 18, 21 (6 of 24).
    # Lfm2MoeAttention.__init__: num_kv_heads = num_key_value_heads = 8, head_dim = hidden_size //
    # num_attention_heads = 2,048 / 32 = 64, an Attention with no window. The MoE feed-forward (32 experts,
    # num_dense_layers 2) changes no cache. KV: 2 x 6 x 8 x 64 x 2 B = 12,288 B/token.
    assert registry.status("Lfm2MoeForCausalLM") == ("supported", "lfm2")
    model = model_from_config(lfm2_8b_a1b())
    assert model.layer_pattern == "KKFKKKFKKKFKKKFKKKFKKFKK"
    assert model.estimate(1_000).kv_bytes_per_token == 12_288
    # State: Lfm2MoeForCausalLM.get_mamba_state_shape_from_config -> short_conv_state_shape(tp, intermediate_size =
    # hidden_size 2,048, conv_kernel = conv_L_cache 3) = (3 - 1) x 2,048 per conv layer and sequence, in the model
    # dtype (BF16): 2 x 2,048 x 2 B = 8,192 B; x 18 conv layers = 147,456 B.
    assert model.estimate(1_000).kv_bytes == 12_288 * 1_000 + 147_456
    # Maximum: max_position_embeddings 128,000, no rope_scaling.
    assert model.max_context_tokens == 128_000


def test_lfm2_8b_a1b_tensor_parallel():
    model = model_from_config(lfm2_8b_a1b())
    # TP 8: 32 heads % 8 == 0; 8 KV heads / 8 = 1: 2 x 6 x 1 x 64 x 2 B = 1,536 B/token; conv state
    # divide(2,048, 8) = 256 channels: 2 x 256 x 2 B = 1,024 B x 18 = 18,432 B.
    assert model.estimate(1_000, tp=8).kv_bytes == 1_536 * 1_000 + 18_432
    # TP 16: 8 KV heads < 16, replicated (16 % 8 == 0): 1,536 B/token; state 2 x 128 x 2 B x 18 = 9,216 B.
    assert model.estimate(1_000, tp=16).kv_bytes == 1_536 * 1_000 + 9_216
    # TP 3: 32 heads % 3 != 0 (and vLLM's divide(2,048, 3) fails): refused.
    with pytest.raises(PlanInputError):
        model.estimate(1_000, tp=3)


@pytest.mark.parametrize(("name", "per_token"), [("apertus-8b.partial", "131,072"), ("lfm2-8b-a1b.partial", "12,288"),
                                                ("grok-1.partial", "262,144")])
def test_cli_kv_on_the_public_files(name, per_token):
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(CONFIGS / f"{name}.config.json"),
                          "--context", "4096"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert f"KV bytes per token: {per_token} B per GPU" in out


def test_grok_1_kv_per_token_and_maximum():
    # xAI Grok-1 in its Hugging Face form (hpcai-tech/grok-1; partial: the dict a public converter quotes,
    # architectures included). vLLM Grok1Attention.__init__ (grok1.py, read at vLLM 0.23.0, commit 0fc695fc6):
    # total_num_kv_heads = num_key_value_heads = 8, head_dim = hidden_size // total_num_heads = 6,144 / 48 = 128,
    # an Attention with no window. attn_output_multiplier (the softmax scale), max_attn_value (a logit cap),
    # embedding / output multipliers and the 8-expert MoE change no cache.
    # 2 x 64 layers x 8 x 128 x 2 B = 262,144 B/token. Maximum: max_position_embeddings 8,192, no rope_scaling.
    config = load("grok-1.partial")
    assert config["architectures"] == ["Grok1ModelForCausalLM"]
    assert registry.status("Grok1ModelForCausalLM") == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(8_192).kv_bytes_per_token == 262_144
    assert model.estimate(8_192).kv_bytes == 262_144 * 8_192
    assert model.max_context_tokens == 8_192
    assert model.layer_pattern == "F" * 64
    assert not model.ignored_fields


def test_grok_1_tensor_parallel():
    model = model_from_config(load("grok-1.partial"))
    # TP 8: 48 heads % 8 == 0; Grok1Attention: 8 KV heads >= 8, max(1, 8 // 8) = 1 per GPU:
    # 2 x 64 x 1 x 128 x 2 B = 32,768 B/token per GPU.
    assert model.estimate(8_192, tp=8).kv_bytes_per_token == 32_768
    # TP 16: 48 % 16 == 0; 8 KV heads < 16, replicated (16 % 8 == 0), one per GPU: 32,768 B/token.
    assert model.estimate(8_192, tp=16).kv_bytes_per_token == 32_768
    # TP 32: "Total number of attention heads (48) must be divisible by tensor parallel size (32)".
    with pytest.raises(PlanInputError, match=r"attention heads \(48\)"):
        model.estimate(8_192, tp=32)
