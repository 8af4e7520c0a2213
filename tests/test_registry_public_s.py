"""Golden values of real public configs (tests/data/configs, SOURCES.md): JAIS, OLMo 3 and others.

Each figure is derived by hand from the vLLM model file of the architecture (the class and the factors are written
next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``, vllm/config/model.py: the
smallest of the ``possible_keys`` present). BF16 is two bytes per element; every layer stores K and V (the factor 2).
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
    # inception-mbzuai/jais-13b (Hub copy core42/jais-13b). vLLM JAISAttention.__init__ (jais.py, read at
    # vllm-project/vllm 01dbb08): num_heads = num_attention_heads (n_head via JAISConfig's attribute_map) = 40,
    # head_dim = hidden_size // total_num_heads = 5,120 / 40 = 128, Attention(num_heads, head_dim) with no num_kv_heads:
    # MHA, 40 KV heads; ALiBi slopes, no window. 2 x 40 layers x 40 x 128 x 2 B = 819,200 B/token.
    # Maximum: n_positions 2,048 (one of vLLM's possible_keys; no rope_scaling).
    ("jais-13b", "JAISLMHeadModel", 819_200, 2_048, "F" * 40),
    # inceptionai/jais-family-590m: same class; mup_* keys are scales (JAISModel embeddings_scale, JAISLMHeadModel
    # output_logits_scale, JAISAttention attn_scale_power), not KV. 12 heads of 1,536 / 12 = 128, 18 layers:
    # 2 x 18 x 12 x 128 x 2 B = 110,592 B/token; n_positions 2,048.
    ("jais-family-590m", "JAISLMHeadModel", 110_592, 2_048, "F" * 18),
    # core42/jais-30b-v1: same class; 56 heads of 7,168 / 56 = 128, 48 layers:
    # 2 x 48 x 56 x 128 x 2 B = 1,376,256 B/token; n_positions 2,048.
    ("jais-30b-v1", "JAISLMHeadModel", 1_376_256, 2_048, "F" * 48),
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
    assert not model.ignored_fields


def test_jais_13b_tensor_parallel():
    # TP 8: JAISAttention asserts total_num_heads % tp == 0 (40 % 8 == 0) and keeps 40 / 8 = 5 heads per GPU:
    # 2 x 40 x 5 x 128 x 2 B = 102,400 B/token per GPU.
    model = model_from_config(load("jais-13b"))
    assert model.estimate(2_048, tp=8).kv_bytes_per_token == 102_400
    # TP 3: 40 % 3 != 0, refused (vLLM ModelConfig.verify_with_parallel_config).
    with pytest.raises(PlanInputError, match=r"attention heads \(40\)"):
        model.estimate(2_048, tp=3)


def test_jais_family_590m_tensor_parallel():
    # TP 4: 12 / 4 = 3 heads per GPU: 2 x 18 x 3 x 128 x 2 B = 27,648 B/token per GPU; TP 8: 12 % 8 != 0, refused.
    model = model_from_config(load("jais-family-590m"))
    assert model.estimate(2_048, tp=4).kv_bytes_per_token == 27_648
    with pytest.raises(PlanInputError, match=r"attention heads \(12\)"):
        model.estimate(2_048, tp=8)


def test_jais_30b_tensor_parallel():
    # TP 8: 56 / 8 = 7 heads per GPU: 2 x 48 x 7 x 128 x 2 B = 172,032 B/token per GPU; TP 16: 56 % 16 != 0, refused.
    model = model_from_config(load("jais-30b-v1"))
    assert model.estimate(2_048, tp=8).kv_bytes_per_token == 172_032
    with pytest.raises(PlanInputError, match=r"attention heads \(56\)"):
        model.estimate(2_048, tp=16)


def test_olmo3_190m_sliding_layers():
    # complexly/olmo3-190m-zh-continue (Olmo3ForCausalLM, transformers 5 rope_parameters). vLLM's Olmo3Config
    # (transformers_utils/configs/olmo3.py) serves Olmo3ForCausalLM with Olmo2ForCausalLM; Olmo2Attention.__init__
    # (olmo2.py, read at vllm-project/vllm 028aedf): num_kv_heads = num_key_value_heads = 12, head_dim =
    # hidden_size // num_attention_heads = 768 / 12 = 64, and per_layer_sliding_window = sliding_window (4,096) where
    # layer_types[i] == "sliding_attention" (layers 0-2, 4-6, 8-10), None on the full layers 3, 7, 11.
    # Per layer per token 2 x 12 x 64 x 2 B = 3,072 B; 12 layers: 36,864 B/token below the window.
    config = load("olmo3-190m-zh-continue")
    assert config["architectures"] == ["Olmo3ForCausalLM"]
    assert registry.status("Olmo3ForCausalLM")[0] == "supported"
    model = model_from_config(config)
    assert model.layer_pattern == "SSSF" * 3
    assert not model.ignored_fields
    assert model.estimate(1_000).kv_bytes == 36_864_000
    # Maximum: max_position_embeddings 4,096, equal to the window, so the window never binds: 4,096 x 36,864 B.
    assert model.max_context_tokens == 4_096
    assert model.estimate(4_096).kv_bytes == 150_994_944
    # Past the window only the 3 full layers grow: 3 x 3,072 = 9,216 B per further token.
    assert model.estimate(4_096).kv_bytes_per_token == 9_216
    # TP 4: 12 / 4 = 3 KV heads per GPU: 12 x 2 x 3 x 64 x 2 B = 9,216 B/token per GPU below the window.
    assert model.estimate(1_000, tp=4).kv_bytes == 9_216_000
    # TP 8: 12 % 8 != 0 (Olmo2Attention asserts total_num_heads % tp_size == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(12\)"):
        model.estimate(1_000, tp=8)


@pytest.mark.parametrize(("name", "plan_args"), [
    # JAIS's MLP (JAISMLP: c_fc, c_fc2, c_proj with biases) is not a gated decoder MLP kvplan prices, so the weights
    # are a fact the config does not give: plan needs --weights-gib.
    ("jais-13b", ["--weights-gib", "30"]),
    # 12 heads: the default 8 GPUs per replica is refused (12 % 8 != 0), 4 is accepted.
    ("olmo3-190m-zh-continue", ["--gpus-per-replica", "4"]),
])
def test_cli_kv_and_plan_accept_the_file(name, plan_args):
    path = CONFIGS / f"{name}.config.json"
    for args in (["kv", "--config", str(path), "--context", "2048"],
                 ["plan", "--config", str(path), "--gpu", "h200", "--context", "1024", *plan_args]):
        run = subprocess.run([sys.executable, "-m", "planner.cli", *args], capture_output=True, text=True, cwd=ROOT)
        assert run.returncode == 0, run.stderr
