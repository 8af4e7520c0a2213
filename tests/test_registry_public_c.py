"""Golden values of real public configs of architectures the generic readers price (tests/data/configs, SOURCES.md).

Each figure is derived by hand from the vLLM model file of the architecture (the class and the factors are written
next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``, vllm/config/model.py). BF16
is two bytes per element; every layer stores K and V (the factor 2).
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


# (file, architecture, B/token at TP 1, maximum context, layer pattern). Derivations:
GOLDEN = [
    # Qwen/Qwen1.5-MoE-A2.7B-Chat. vLLM Qwen2MoeAttention.__init__ (qwen2_moe.py): num_kv_heads =
    # num_key_value_heads = 16, head_dim = hidden_size // num_attention_heads = 2,048 / 16 = 128, an Attention
    # with no per-layer window; use_sliding_window false, so ModelConfig.get_sliding_window is None and the
    # sliding_window 32,768 / max_window_layers 21 do not apply. MoE (60 experts, shared expert) changes no KV.
    # 2 x 24 layers x 16 x 128 x 2 B = 196,608 B/token; max_position_embeddings 32,768, no RoPE scaling.
    ("qwen1.5-moe-a2.7b-chat", "Qwen2MoeForCausalLM", 196_608, 32_768, "F" * 24),
    # stabilityai/stablelm-3b-4e1t (transformers-native StableLm config). vLLM StablelmAttention.__init__
    # (stablelm.py): num_key_value_heads = 32, head_dim = hidden_size // num_attention_heads = 2,560 / 32 = 80;
    # partial_rotary_factor 0.25 rotates 20 of the 80 dims (rotary_ndims), no cache change.
    # 2 x 32 x 32 x 80 x 2 B = 327,680 B/token; max_position_embeddings 4,096.
    ("stablelm-3b-4e1t", "StableLmForCausalLM", 327_680, 4_096, "F" * 32),
    # stabilityai/stablelm-2-zephyr-1_6b: same class; 32 KV heads of 2,048 / 32 = 64; use_qkv_bias is a weight bias.
    # 2 x 24 x 32 x 64 x 2 B = 196,608 B/token; max_position_embeddings 4,096.
    ("stablelm-2-zephyr-1_6b", "StableLmForCausalLM", 196_608, 4_096, "F" * 24),
    # OrionStarAI Orion-14B. vLLM OrionAttention.__init__ (orion.py): num_key_value_heads = 40,
    # head_dim = 5,120 / 40 = 128. 2 x 40 x 40 x 128 x 2 B = 819,200 B/token.
    # Maximum: the smallest of max_position_embeddings 4,096 and max_sequence_length 4,096 (both in vLLM's
    # possible_keys) = 4,096.
    ("orion-14b", "OrionForCausalLM", 819_200, 4_096, "F" * 40),
    # MiMo-7B (partial config: the keys of a public fixture). vLLM MiMoForCausalLM (mimo.py) builds MiMoModel, a
    # Qwen2Model: Qwen2Attention with num_key_value_heads = 8 of 4,096 / 32 = 128, no window (no
    # use_sliding_window); the num_nextn_predict_layers = 1 MTP layer is loaded only as a speculative draft
    # (MiMoMTP), not by the served model. 2 x 36 x 8 x 128 x 2 B = 147,456 B/token; max_position_embeddings 32,768.
    ("mimo-7b.partial", "MiMoForCausalLM", 147_456, 32_768, "F" * 36),
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


def test_starcoder2_7b_window_on_every_layer():
    # bigcode/starcoder2-7b. vLLM Starcoder2Attention.__init__ (starcoder2.py, read at vllm-project/vllm 03f03ff):
    # num_kv_heads = num_key_value_heads = 4, head_dim = hidden_size // num_attention_heads = 4,608 / 36 = 128, and an
    # Attention given no per-layer window, so it takes cache_config.sliding_window = the config's 4,096 on all
    # 32 layers. Per layer per token 2 x 4 x 128 x 2 B = 2,048 B; 32 x 2,048 = 65,536 B/token inside the window;
    # past it each layer keeps 4,096 tokens: 32 x 4,096 x 2,048 B = 268,435,456 B at any length >= 4,096.
    model = model_from_config(load("starcoder2-7b"))
    assert model.layer_pattern == "S" * 32
    assert model.estimate(1_000).kv_bytes == 65_536_000
    assert model.estimate(4_096).kv_bytes == 268_435_456
    assert model.estimate(16_384).kv_bytes == 268_435_456
    assert model.max_context_tokens == 16_384  # max_position_embeddings


def test_starcoder2_7b_tensor_parallel():
    # TP 4: 36 heads % 4 == 0; 4 KV heads / 4 = 1 per GPU (Starcoder2Attention: max(1, 4 // 4)):
    # 2 x 32 x 1 x 128 x 2 B = 16,384 B/token per GPU inside the window.
    model = model_from_config(load("starcoder2-7b"))
    assert model.estimate(1_000, tp=4).kv_bytes == 16_384_000
    # TP 8: vLLM ModelConfig.verify_with_parallel_config: "Total number of attention heads (36) must be divisible by
    # tensor parallel size (8)".
    with pytest.raises(PlanInputError, match=r"attention heads \(36\)"):
        model.estimate(1_000, tp=8)


def test_orion_14b_tensor_parallel():
    # TP 8: 40 heads and 40 KV heads split 5 per GPU: 2 x 40 x 5 x 128 x 2 B = 102,400 B/token per GPU.
    model = model_from_config(load("orion-14b"))
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 102_400
    # TP 3: 40 % 3 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(40\)"):
        model.estimate(4_096, tp=3)


def test_qwen1_5_moe_tp8():
    # TP 8: 16 KV heads / 8 = 2 per GPU: 2 x 24 x 2 x 128 x 2 B = 24,576 B/token per GPU.
    assert model_from_config(load("qwen1.5-moe-a2.7b-chat")).estimate(4_096, tp=8).kv_bytes_per_token == 24_576


def test_cli_prints_a_large_per_token_figure_whole(tmp_path):
    # An MHA model of 64 layers, 64 heads of 128 (the published Tele-FLM geometry, config keys written here):
    # 2 x 64 x 64 x 128 x 2 B = 2,097,152 B/token. "{:,.6g}" printed it "2.09715e+06", a rounded figure.
    cfg = {"architectures": ["TeleFLMForCausalLM"], "model_type": "teleflm", "num_hidden_layers": 64,
           "num_attention_heads": 64, "num_key_value_heads": 64, "hidden_size": 8_192,
           "max_position_embeddings": 4_096}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(path), "--context", "4096"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "KV bytes per token: 2,097,152 B per GPU" in out
    assert "e+06" not in out


def test_telechat_published_spelling_is_not_vllms():
    # Tele-AI's own TeleChat configs (Tele-AI/Telechat models/7B, Tele-AI/TeleChat2 model/115B) name the remote class
    # "TelechatForCausalLM"; vLLM's registry (the vendored _TEXT_GENERATION_MODELS) has "TeleChatForCausalLM" and
    # "TeleChat2ForCausalLM" only, and its lookup is by exact name, so kvplan refuses the spelling and names the nearest.
    for name in ("telechat-7b", "telechat2-115b"):
        with pytest.raises(PlanInputError, match="nearest supported: TeleChatForCausalLM") as exc:
            model_from_config(load(name))
        assert exc.value.field == "config.architectures"


def test_telechat2_115b_geometry_with_flash_attn():
    # Tele-AI/TeleChat2 model/115B/config.json under vLLM's name TeleChat2ForCausalLM (every other key as published).
    # vLLM TeleChat2Model.__init__ (telechat2.py) maps n_layer -> num_hidden_layers (96) and n_head ->
    # num_attention_heads (64) and builds LlamaModel: LlamaAttention with num_key_value_heads = 8 KV heads of
    # hidden_size // num_attention_heads = 8,192 / 64 = 128. 2 x 96 x 8 x 128 x 2 B = 393,216 B/token.
    # Maximum: seq_length 8,192 (the only one of vLLM's possible_keys present). "flash_attn": true is the remote
    # code's kernel switch, read by neither telechat2.py nor vLLM's Telechat2Config: accepted, not refused.
    config = {**load("telechat2-115b"), "architectures": ["TeleChat2ForCausalLM"]}
    model = model_from_config(config)
    assert model.estimate(8_192).kv_bytes_per_token == 393_216
    assert model.max_context_tokens == 8_192
    assert model.layer_pattern == "F" * 96
    assert not model.ignored_fields
    # TP 16: 64 heads split 4 per GPU; 8 KV heads < 16 -> replicated, one per GPU (16 % 8 == 0):
    # 2 x 96 x 1 x 128 x 2 B = 49,152 B/token per GPU.
    assert model.estimate(8_192, tp=16).kv_bytes_per_token == 49_152


def test_learned_attention_sinks_refused_by_name():
    # openPangu's sink attention (vLLM openpangu.py OpenPanguSinkAttention -> StaticSinkAttention) keeps
    # param_sink_number sink tokens per layer in the KV cache, with K of qk_nope_dim + qk_rope_dim and V of v_channels:
    # not modelled, so a positive count is refused by name; 0 means no sinks and the plain attention is priced.
    base = {"architectures": ["PanguEmbeddedForCausalLM"], "model_type": "PanguEmbedded", "num_hidden_layers": 34,
            "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4_096,
            "max_position_embeddings": 32_768}
    with pytest.raises(PlanInputError) as exc:
        model_from_config({**base, "param_sink_number": 128, "param_sink_with_value": True})
    assert exc.value.field == "config.param_sink_number"
    # 2 x 34 x 8 x (4,096 / 32 = 128) x 2 B = 139,264 B/token with no sinks.
    assert model_from_config({**base, "param_sink_number": 0}).estimate(1_000).kv_bytes_per_token == 139_264
    # any other sink field is a layout field the decoder does not read: refused by name
    with pytest.raises(PlanInputError) as exc:
        model_from_config({**base, "param_sink_with_value": True})
    assert exc.value.field == "config.param_sink_with_value"


def test_telechat_without_kv_heads_is_refused_as_vllm_cannot_build_it():
    # Tele-AI's TeleChat-7B config (Tele-AI/Telechat models/7B) has no num_key_value_heads. Under vLLM's name
    # TeleChatForCausalLM, vLLM's Telechat2Config (transformers_utils/configs/telechat2.py) sets the attribute to None,
    # LlamaDecoderLayer passes getattr(config, "num_key_value_heads", heads) = None and LlamaAttention.__init__
    # compares None >= tp_size: the model cannot be built, so kvplan refuses rather than price it as MHA.
    config = {**load("telechat-7b"), "architectures": ["TeleChatForCausalLM"]}
    with pytest.raises(PlanInputError) as exc:
        model_from_config(config)
    assert exc.value.field == "config.num_key_value_heads"
