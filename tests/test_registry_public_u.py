"""Golden values of real public configs (Hugging Face Hub pages; tests/data/configs, SOURCES.md) for StableLM's
remote-code class, Baichuan-7B, GritLM, ChatGLM2 fine-tunes saved as ChatGLMForConditionalGeneration, Solar Pro,
Aquila-7B, and an MPT config vLLM cannot build.

Each figure is derived by hand from the vLLM model file of the architecture (the class and the factors are written
next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``, vllm/config/model.py: the
smallest of the ``possible_keys`` present, here with no RoPE scaling). BF16 is two bytes per element; every layer
stores K and V (the factor 2).
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
    # stabilityai/stablelm-3b-4e1t, its remote-code config (StableLMEpochForCausalLM). vLLM registry: StableLMEpoch
    # -> stablelm.py StablelmForCausalLM; StablelmAttention.__init__ (read at vllm-project/vllm 0531c22):
    # total_num_heads = num_attention_heads = 32, total_num_key_value_heads = num_key_value_heads = 32,
    # head_dim = hidden_size // total_num_heads = 2,560 / 32 = 80; rope_pct 0.25 rotates 20 of the 80 dims (no
    # cache change); num_heads is never read. 2 x 32 layers x 32 x 80 x 2 B = 327,680 B/token;
    # max_position_embeddings 4,096.
    ("stablelm-3b-4e1t-epoch", "StableLMEpochForCausalLM", 327_680, 4_096, "F" * 32),
    # hiyouga/Baichuan-7B-sft (Baichuan-7B's geometry; BaiChuanForCausalLM). vLLM baichuan.py BaiChuanForCausalLM
    # (RoPE); BaiChuanAttention.__init__: total_num_heads = num_attention_heads = 32, head_dim = hidden_size //
    # total_num_heads = 4,096 / 32 = 128, total_num_kv_heads = total_num_heads (MHA, W_pack).
    # 2 x 32 x 32 x 128 x 2 B = 524,288 B/token; max_position_embeddings 4,096.
    ("baichuan-7b-sft", "BaiChuanForCausalLM", 524_288, 4_096, "F" * 32),
    # BAAI/Aquila-7B (AquilaModel). vLLM registry: AquilaModel -> llama.py LlamaForCausalLM; LlamaAttention:
    # num_kv_heads = getattr(config, "num_key_value_heads", num_attention_heads) = 32 (absent),
    # head_dim = 4,096 / 32 = 128. 2 x 32 x 32 x 128 x 2 B = 524,288 B/token; max_position_embeddings 2,048.
    ("aquila-7b", "AquilaModel", 524_288, 2_048, "F" * 32),
    # NEUDM/PICA-V1, a ChatGLM2-6B fine-tune saved as ChatGLMForConditionalGeneration. vLLM chatglm.py
    # GLMAttention.__init__ (read at 028aedf): total_num_kv_heads = multi_query_group_num = 2 (multi_query_attention
    # true), head_dim = hidden_size // num_attention_heads = 4,096 / 32 = 128; num_layers 28 (GLMTransformer).
    # pre_seq_len 128 (P-tuning v2's prefix encoder in the remote code) is never read by vLLM's ChatGLM classes.
    # 2 x 28 x 2 x 128 x 2 B = 28,672 B/token; maximum: seq_length 32,768 (in vLLM's possible_keys).
    ("pica-v1", "ChatGLMForConditionalGeneration", 28_672, 32_768, "F" * 28),
    # CofeAI/Tele-FLM (52B; TeleFLMForCausalLM). vLLM teleflm.py TeleFLMForCausalLM(LlamaForCausalLM): muP only scales
    # the embeddings and logits (input_mult, output_mult / mup_scale_factor); LlamaAttention: num_key_value_heads 64,
    # head_dim = 8,192 / 64 = 128. 2 x 64 x 64 x 128 x 2 B = 2,097,152 B/token; max_position_embeddings 4,096.
    ("tele-flm", "TeleFLMForCausalLM", 2_097_152, 4_096, "F" * 64),
]


@pytest.mark.parametrize(("name", "arch", "per_token", "max_context", "pattern"), GOLDEN,
                         ids=[g[0] for g in GOLDEN])
def test_public_config_kv_per_token(name, arch, per_token, max_context, pattern):
    config = load(name)
    assert config["architectures"] == [arch]
    assert registry.status(arch)[0] == "supported"
    model = model_from_config(config)
    assert model.estimate(max_context).kv_bytes_per_token == per_token
    assert model.estimate(max_context).kv_bytes == per_token * max_context
    assert model.max_context_tokens == max_context
    assert model.layer_pattern == pattern


def test_stablelm_epoch_num_heads_must_match():
    # vLLM StablelmAttention reads num_attention_heads only; kvplan accepts num_heads when the two agree and refuses
    # it by name when they differ (it cannot tell which one the weights follow).
    cfg = load("stablelm-3b-4e1t-epoch")
    cfg["num_heads"] = 16
    with pytest.raises(PlanInputError, match="num_heads"):
        model_from_config(cfg)
    # the exception is StableLM's: another decoder carrying num_heads is still refused
    cfg = load("baichuan-7b-sft")
    cfg["num_heads"] = 32
    with pytest.raises(PlanInputError, match="num_heads"):
        model_from_config(cfg)


def test_tensor_parallel_splits():
    # StableLM 3B, TP 8: 32 heads % 8 == 0; 32 KV heads / 8 = 4 per GPU: 2 x 32 x 4 x 80 x 2 B = 40,960 B/token.
    assert model_from_config(load("stablelm-3b-4e1t-epoch")).estimate(4_096, tp=8).kv_bytes_per_token == 40_960
    # Baichuan-7B and Aquila-7B, TP 8: 32 / 8 = 4 KV heads per GPU: 2 x 32 x 4 x 128 x 2 B = 65,536 B/token.
    for name in ("baichuan-7b-sft", "aquila-7b"):
        model = model_from_config(load(name))
        assert model.estimate(2_048, tp=8).kv_bytes_per_token == 65_536
        # TP 3: vLLM ModelConfig.verify_with_parallel_config: 32 attention heads not divisible by 3.
        with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
            model.estimate(2_048, tp=3)
    # ChatGLM2 (PICA-V1), TP 4: 2 KV heads < 4, so GLMAttention replicates: max(1, 2 // 4) = 1 per GPU:
    # 2 x 28 x 1 x 128 x 2 B = 14,336 B/token; TP 2: 1 per GPU, the same figure.
    # Tele-FLM, TP 8: 64 KV heads / 8 = 8 per GPU: 2 x 64 x 8 x 128 x 2 B = 262,144 B/token; TP 3 refused (64 % 3).
    flm = model_from_config(load("tele-flm"))
    assert flm.estimate(4_096, tp=8).kv_bytes_per_token == 262_144
    with pytest.raises(PlanInputError, match=r"attention heads \(64\)"):
        flm.estimate(4_096, tp=3)
    glm = model_from_config(load("pica-v1"))
    assert glm.estimate(4_096, tp=4).kv_bytes_per_token == 14_336
    assert glm.estimate(4_096, tp=2).kv_bytes_per_token == 14_336


def test_gritlm_7b_window_on_every_layer():
    # parasail-ai/GritLM-7B-vllm (architectures ["GritLM"], the checkpoint vLLM's gritlm.py docstring names).
    # vLLM gritlm.py (read at 07b1349): GritLM(LlamaForCausalLM); as a pooling model it clears the window
    # (hf_config.sliding_window = None, is_causal = False), but served for generation it is LlamaForCausalLM:
    # LlamaAttention with num_key_value_heads 8, head_dim 4,096 / 32 = 128, and an Attention given no per-layer
    # window, so it takes cache_config.sliding_window = the config's 4,096 on all 32 layers.
    # Per layer per token 2 x 8 x 128 x 2 B = 4,096 B; 32 layers: 131,072 B/token inside the window; past it each
    # layer keeps 4,096 tokens: 32 x 4,096 x 4,096 B = 536,870,912 B at any length >= 4,096.
    config = load("gritlm-7b-vllm")
    assert config["architectures"] == ["GritLM"]
    model = model_from_config(config)
    assert model.layer_pattern == "S" * 32
    assert model.estimate(1_000).kv_bytes == 131_072_000
    assert model.estimate(4_096).kv_bytes == 536_870_912
    assert model.estimate(32_768).kv_bytes == 536_870_912
    assert model.max_context_tokens == 32_768  # max_position_embeddings
    # TP 16: 32 heads % 16 == 0; 8 KV heads < 16: replicated, 1 per GPU: 2 x 32 x 1 x 128 x 2 B = 16,384 B/token.
    assert model.estimate(1_000, tp=16).kv_bytes == 16_384_000
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(1_000, tp=3)


def test_solar_pro_preview_window_on_every_layer():
    # upstage/solar-pro-preview-instruct (SolarForCausalLM). vLLM solar.py (read at 00bd149) SolarAttention:
    # total_num_kv_heads = num_key_value_heads = 10, head_dim = hidden_size // num_attention_heads = 5,120 / 40 = 128,
    # and an Attention given no per-layer window, so it takes cache_config.sliding_window = the config's 2,047 on
    # all 64 layers (the bskcn_* skip connections mix hidden states between layers, not KV).
    # Per layer per token 2 x 10 x 128 x 2 B = 5,120 B; 64 layers: 327,680 B/token inside the window; past it each
    # layer keeps 2,047 tokens: 64 x 2,047 x 5,120 B = 670,760,960 B at any length >= 2,047.
    model = model_from_config(load("solar-pro-preview-instruct"))
    assert model.layer_pattern == "S" * 64
    assert model.estimate(1_000).kv_bytes == 327_680_000
    assert model.estimate(2_047).kv_bytes == 670_760_960
    assert model.estimate(4_096).kv_bytes == 670_760_960
    assert model.max_context_tokens == 4_096  # max_position_embeddings
    # TP 2: 10 KV heads / 2 = 5 per GPU: 2 x 64 x 5 x 128 x 2 B = 163,840 B/token inside the window.
    assert model.estimate(1_000, tp=2).kv_bytes == 163_840_000
    # TP 8: 40 heads % 8 == 0, but 10 KV heads >= 8 and 10 % 8 != 0: SolarAttention asserts
    # total_num_kv_heads % tp_size == 0, so the engine cannot build it.
    with pytest.raises(PlanInputError, match="10 KV heads"):
        model.estimate(1_000, tp=8)


def test_sea_lion_mpt_without_alibi_is_refused():
    # aisingapore/sea-lion-7b-instruct-research (MptForCausalLM): attn_config.alibi false, embedding_fraction 0.1.
    # vLLM mpt.py (read at 02d799b) MPTAttention.__init__ asserts config.attn_config.alibi and MPTModel.__init__
    # asserts config.embedding_fraction == 1.0: the engine cannot build this MPT, so kvplan refuses it by name.
    config = load("sea-lion-7b-instruct-research")
    assert config["architectures"] == ["MptForCausalLM"]
    with pytest.raises(PlanInputError, match=r"attn_config\.alibi"):
        model_from_config(config)
    config["attn_config"]["alibi"] = True
    with pytest.raises(PlanInputError, match="embedding_fraction"):
        model_from_config(config)
    # with both as vLLM requires it prices as MPT: 32 KV heads (no kv_n_heads) of 4,096 / 32 = 128:
    # 2 x 32 x 32 x 128 x 2 B = 524,288 B/token; max_seq_len 2,048.
    config["embedding_fraction"] = 1.0
    model = model_from_config(config)
    assert model.estimate(2_048).kv_bytes_per_token == 524_288
    assert model.max_context_tokens == 2_048
    # prefix_lm true: MPTAttention asserts it is off
    config["attn_config"]["prefix_lm"] = True
    with pytest.raises(PlanInputError, match=r"attn_config\.prefix_lm"):
        model_from_config(config)


@pytest.mark.parametrize("name", ["stablelm-3b-4e1t-epoch", "solar-pro-preview-instruct", "gritlm-7b-vllm"])
def test_cli_plan_reads_the_config(name):
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(CONFIGS / f"{name}.config.json"),
                          "--context", "4096"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr


def test_aquila_7b_repeated_identical_key_is_read_once(tmp_path):
    # BAAI/Aquila-7B's published config.json gives "model_type": "aquila" twice (lines 3 and 18). transformers reads
    # it with json.loads (the last copy wins); the copies are identical, so kvplan reads it once. A key repeated with
    # different values (BAAI/AquilaChat-7B: "AquilaChat", then "llama") is still refused.
    text = (CONFIGS / "aquila-7b.config.json").read_text()
    assert text.count('"model_type": "aquila"') == 2
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(CONFIGS / "aquila-7b.config.json"),
                          "--context", "2048"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "KV bytes per token: 524,288 B per GPU" in out.stdout
    path = tmp_path / "config.json"
    path.write_text(text.replace('"model_type": "aquila",\n  "num_attention_heads"',
                                 '"model_type": "llama",\n  "num_attention_heads"', 1))
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(path), "--context", "2048"],
                         capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2 and "duplicate key" in out.stderr and "model_type" in out.stderr


def test_tinygemma4_text_only_gemma4():
    # ApexDevelopment/tinygemma4, a tiny text-only Gemma 4 checkpoint (Gemma4ForCausalLM, model_type gemma4_text; no
    # whole text-only export of a Google Gemma 4 config was found). vLLM gemma4.py (read at 001cabc):
    # Gemma4DecoderLayer takes head_dim = global_head_dim (32) on full_attention layers and head_dim (32) on
    # sliding ones; num_kv_heads = num_key_value_heads = 1 (num_global_key_value_heads is used only when
    # attention_k_eq_v is true; it is false here, and both are 1); Gemma4Attention gives sliding layers
    # per_layer_sliding_window = sliding_window = 128; num_kv_shared_layers 0, so no layer shares another's KV.
    # layer_types: 9 sliding, 3 full (every fourth). Per layer per token 2 x 1 x 32 x 2 B = 128 B.
    config = load("tinygemma4")
    assert config["architectures"] == ["Gemma4ForCausalLM"]
    model = model_from_config(config)
    assert model.layer_pattern == "SSSF" * 3
    # 100 tokens (inside the window): 12 x 128 x 100 = 153,600 B.
    assert model.estimate(100).kv_bytes == 153_600
    # 1,000 tokens: full 3 x 128 x 1,000 = 384,000; sliding 9 x 128 x 128 = 147,456; total 531,456 B.
    assert model.estimate(1_000).kv_bytes == 531_456
    # 2,048 tokens (max_position_embeddings): 3 x 128 x 2,048 + 147,456 = 933,888 B.
    assert model.estimate(2_048).kv_bytes == 933_888
    assert model.max_context_tokens == 2_048
    # TP 2: 4 heads % 2 == 0; 1 KV head < 2, replicated: the same 128 B per layer per GPU.
    assert model.estimate(100, tp=2).kv_bytes == 153_600
    with pytest.raises(PlanInputError, match=r"attention heads \(4\)"):
        model.estimate(100, tp=3)


def test_phogpt2_mpt_transformers_native_spelling():
    # lam2/phogpt2, a PhoGPT-4B (vinai) MPT re-saved by transformers 4.56 under its native spelling MptForCausalLM.
    # vLLM mpt.py (read at 02d799b): MPTAttention: total_num_heads = n_heads = 24, head_dim = d_model // n_heads =
    # 3,072 / 24 = 128, total_num_kv_heads = total_num_heads (attn_config has no kv_n_heads); attn_config.alibi true,
    # prefix_lm false and embedding_fraction 1.0 pass the engine's asserts. 2 x 32 x 24 x 128 x 2 B = 393,216 B/token;
    # maximum: max_seq_len 8,192 (in vLLM's possible_keys).
    config = load("phogpt2")
    assert config["architectures"] == ["MptForCausalLM"]
    model = model_from_config(config)
    assert model.layer_pattern == "F" * 32
    assert model.estimate(8_192).kv_bytes_per_token == 393_216
    assert model.max_context_tokens == 8_192
    # TP 8: 24 / 8 = 3 KV heads per GPU: 2 x 32 x 3 x 128 x 2 B = 49,152 B/token; TP 3: 8 per GPU: 131,072 B/token.
    assert model.estimate(1_000, tp=8).kv_bytes_per_token == 49_152
    assert model.estimate(1_000, tp=3).kv_bytes_per_token == 131_072
    # TP 16: vLLM ModelConfig.verify_with_parallel_config: 24 heads not divisible by 16.
    with pytest.raises(PlanInputError, match=r"attention heads \(24\)"):
        model.estimate(1_000, tp=16)
