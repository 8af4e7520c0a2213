"""Golden values of real public configs of architectures the generic 'decoder' reader prices (tests/data/configs,
SOURCES.md), batch H: HunYuan MoE (Hunyuan-A13B), InternLM3, ERNIE 4.5 MoE, GLM-4 (0414).

Each figure is derived by hand from the vLLM model file of the architecture (the class and the factors are written
next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``, vllm/config/model.py): the
smallest of the ``possible_keys`` present, then the RoPE factor of any ``rope_scaling`` whose type is not ``su``,
``longrope`` or ``llama3`` (``dynamic`` is scaled). BF16 is two bytes per element; every layer stores K and V (the
factor 2).
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
    # Tencent Hunyuan-A13B (HunYuanMoEV1ForCausalLM; the config.json of Tencent's Hunyuan-A13B GitHub release).
    # vLLM HunYuanAttention.__init__ (hunyuan_v1.py, read at vllm-project/vllm 00f8d44): no head_dim key, so
    # head_dim = config.attention_head_dim = 128; HunYuanDecoderLayer passes num_kv_heads = num_key_value_heads = 8;
    # use_cla false, so _get_cla_factor is 1 (cla_share_factor 2 is not consulted) and every layer is a DECODER
    # attention with its own KV; use_mla false (kv_lora_rank null). The MoE (64 experts, top-8, one shared expert per
    # layer) is the FFN. 2 x 32 x 8 x 128 x 2 B = 131,072 B/token. Maximum: max_position_embeddings 32,768 x
    # rope_scaling "dynamic" factor 1.0 = 32,768 (alpha 1,000 changes the RoPE base only).
    ("hunyuan-a13b", "HunYuanMoEV1ForCausalLM", 131_072, 32_768, "F" * 32),
    # InternLM3-8B-Instruct (partial: the 16 keys a public test quotes as the "real InternLM3 configuration"). vLLM's
    # registry serves InternLM3ForCausalLM with llama.py's LlamaForCausalLM (registry.py: ("llama",
    # "LlamaForCausalLM")): LlamaDecoderLayer passes num_kv_heads = num_key_value_heads = 2 and LlamaAttention takes
    # head_dim = getattr(config, "head_dim", hidden_size // num_attention_heads) = 128 (here also 4,096 / 32); bias /
    # qkv_bias false add no biases; one DECODER Attention per layer, no window. 2 x 48 x 2 x 128 x 2 B =
    # 49,152 B/token. Maximum: max_position_embeddings 32,768 x rope_scaling "dynamic" factor 6.0 = 196,608.
    ("internlm3-8b-instruct.partial", "InternLM3ForCausalLM", 49_152, 196_608, "F" * 48),
    # ERNIE-4.5-21B-A3B (partial: FastDeploy's test copy of the checkpoint config, its test-only quantization_config
    # left out). vLLM Ernie4_5_MoeDecoderLayer (ernie45_moe.py, read at vllm-project/vllm 0028a75) passes num_kv_heads
    # = num_key_value_heads = 4 and head_dim = getattr(config, "head_dim", None) = None, so Ernie4_5_MoeAttention takes
    # hidden_size // num_heads = 2,560 / 20 = 128; one Attention per layer, no window; the MoE (64 experts, top-6,
    # 2 shared, from layer 1) is the FFN; num_nextn_predict_layers 1 is an MTP head whose weights
    # Ernie4_5_MoeModel.load_weights skips ("mtp" in name), so it adds no cached layer. 2 x 28 x 4 x 128 x 2 B =
    # 57,344 B/token. Maximum: max_position_embeddings 131,072, no rope_scaling.
    ("ernie-4.5-21b-a3b.partial", "Ernie4_5_MoeForCausalLM", 57_344, 131_072, "F" * 28),
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


def test_hunyuan_a13b_tensor_parallel():
    model = model_from_config(load("hunyuan-a13b"))
    # TP 8: 32 heads / 8 = 4; 8 KV heads / 8 = 1 per GPU (HunYuanAttention: max(1, 8 // 8)):
    # 2 x 32 x 1 x 128 x 2 B = 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 16_384
    # TP 16: 32 % 16 == 0; 8 KV heads < 16, replicated (16 % 8 == 0), one per GPU: 16,384 B/token per GPU
    # (HunYuanSparseMoeBlock only refuses TP above num_experts = 64).
    assert model.estimate(4_096, tp=16).kv_bytes_per_token == 16_384
    # TP 3: 32 % 3 != 0 (HunYuanAttention asserts total_num_heads % tp_size == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_internlm3_8b_tensor_parallel():
    model = model_from_config(load("internlm3-8b-instruct.partial"))
    # TP 2: 32 heads / 2 = 16; 2 KV heads / 2 = 1 per GPU: 2 x 48 x 1 x 128 x 2 B = 24,576 B/token per GPU.
    assert model.estimate(4_096, tp=2).kv_bytes_per_token == 24_576
    # TP 8: 32 / 8 = 4; 2 KV heads < 8, replicated (LlamaAttention: 8 % 2 == 0, max(1, 2 // 8) = 1 per GPU):
    # 24,576 B/token per GPU, the KV cache no longer shrinks past TP 2.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 24_576
    # TP 3: 32 % 3 != 0, refused as vLLM's verify_with_parallel_config refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_ernie_4_5_21b_a3b_tensor_parallel():
    model = model_from_config(load("ernie-4.5-21b-a3b.partial"))
    # TP 4: 20 heads / 4 = 5; 4 KV heads / 4 = 1 per GPU: 2 x 28 x 1 x 128 x 2 B = 14,336 B/token per GPU.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 14_336
    # TP 20: 20 % 20 == 0; 4 KV heads < 20 and 20 % 4 == 0, replicated, one per GPU: 14,336 B/token per GPU
    # (below moe_num_experts = 64, which Ernie4_5_MoeMoE requires).
    assert model.estimate(4_096, tp=20).kv_bytes_per_token == 14_336
    # TP 8: 20 % 8 != 0, refused (ModelConfig.verify_with_parallel_config).
    with pytest.raises(PlanInputError, match=r"attention heads \(20\)"):
        model.estimate(4_096, tp=8)
    # TP 5: 20 % 5 == 0, but 4 KV heads < 5 and 5 % 4 != 0: Ernie4_5_MoeAttention asserts tp_size % num_kv_heads == 0.
    with pytest.raises(PlanInputError, match="4 KV heads"):
        model.estimate(4_096, tp=5)


def test_glm_4_9b_0414():
    # zai-org/GLM-4-9B-0414 (partial: the 12 architecture keys a public Go test quotes as its "realConfig", citing
    # huggingface.co/zai-org/GLM-4-9B-0414; no "architectures" key is quoted, so the class vLLM serves model_type glm4
    # with, Glm4ForCausalLM, is added here). vLLM Glm4DecoderLayer (glm4.py, read at vllm-project/vllm 055e47c) passes
    # num_kv_heads = num_key_value_heads = 2 and head_dim = getattr(config, "head_dim", None) = 128 to Glm4Attention
    # (head_dim or hidden_size // num_heads); one DECODER Attention per layer, no window; partial_rotary_factor 0.5
    # rotates 64 of the 128 dims and the extra post-attention / post-MLP norms change no cache.
    # 2 x 40 x 2 x 128 x 2 B = 40,960 B/token.
    config = {**load("glm-4-9b-0414.partial"), "architectures": ["Glm4ForCausalLM"]}
    assert registry.status("Glm4ForCausalLM") == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(4_096).kv_bytes_per_token == 40_960
    assert model.estimate(4_096).kv_bytes == 40_960 * 4_096
    assert model.layer_pattern == "F" * 40
    assert not model.ignored_fields
    # The quotation holds none of vLLM's possible_keys for the length (the published file's max_position_embeddings
    # is not quoted), so no maximum is stated.
    assert model.max_context_tokens is None
    # TP 2: 32 heads / 2 = 16; 2 KV heads / 2 = 1 per GPU: 2 x 40 x 1 x 128 x 2 B = 20,480 B/token per GPU.
    assert model.estimate(4_096, tp=2).kv_bytes_per_token == 20_480
    # TP 8: 32 / 8 = 4; 2 KV heads < 8, replicated (8 % 2 == 0), one per GPU: 20,480 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 20_480
    # TP 3: 32 % 3 != 0 (Glm4Attention asserts total_num_heads % tp_size == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


@pytest.mark.parametrize("name", [g[0] for g in GOLDEN])
def test_public_config_cli_kv(name):
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(CONFIGS / f"{name}.config.json"),
                          "--context", "4096"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
