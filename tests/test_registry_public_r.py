"""Golden values of real public configs: Qwen2-VL (2B and 7B Instruct), XVERSE-7B and Falcon-40B's original RW config
(tests/data/configs, SOURCES.md).

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
    # Qwen/Qwen2-VL-2B-Instruct. vLLM Qwen2VLForConditionalGeneration (qwen2_vl.py, read at 002d181) runs its text
    # through self.language_model, built by init_vllm_registered_model as a Qwen2ForCausalLM of the same (flat)
    # config. vLLM Qwen2Attention.__init__ (qwen2.py, read at 013a279): total_num_kv_heads = num_key_value_heads
    # = 2, head_dim = hidden_size // num_attention_heads = 1,536 / 12 = 128, an Attention with no per-layer window;
    # use_sliding_window false, so the sliding_window 32,768 / max_window_layers 28 do not apply.
    # 2 x 28 layers x 2 x 128 x 2 B = 28,672 B/token. Maximum: max_position_embeddings 32,768; rope_scaling is
    # the M-RoPE section split ("type": "mrope", mrope_section [16, 24, 24]) with no factor, so vLLM's factor
    # stays 1.0. The vision tower (vision_config, 32 blocks) keeps no KV cache.
    ("qwen2-vl-2b-instruct", "Qwen2VLForConditionalGeneration", 28_672, 32_768, "F" * 28),
    # Qwen/Qwen2-VL-7B-Instruct: the same classes; num_key_value_heads 4 of 3,584 / 28 = 128 on 28 layers.
    # 2 x 28 x 4 x 128 x 2 B = 57,344 B/token; max_position_embeddings 32,768, M-RoPE without a factor.
    ("qwen2-vl-7b-instruct", "Qwen2VLForConditionalGeneration", 57_344, 32_768, "F" * 28),
    # xverse/XVERSE-7B. vLLM's registry serves XverseForCausalLM with ("llama", "LlamaForCausalLM")
    # (vllm/model_executor/models/registry.py). LlamaDecoderLayer.__init__ (llama.py): num_kv_heads =
    # getattr(config, "num_key_value_heads", config.num_attention_heads); the config has no num_key_value_heads,
    # so 32 KV heads (MHA); head_dim = hidden_size // num_attention_heads = 4,096 / 32 = 128.
    # 2 x 32 x 32 x 128 x 2 B = 524,288 B/token. Maximum: max_position_embeddings 8,192 (the only one of vLLM's
    # possible_keys present; max_tokenizer_truncation 6,144 is not one of them), no RoPE scaling.
    ("xverse-7b", "XverseForCausalLM", 524_288, 8_192, "F" * 32),
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


def test_qwen2_vl_2b_tensor_parallel():
    model = model_from_config(load("qwen2-vl-2b-instruct"))
    # TP 4: 12 heads split 3 per GPU; 2 KV heads < 4, so Qwen2Attention replicates them: max(1, 2 // 4) = 1 per GPU.
    # 2 x 28 x 1 x 128 x 2 B = 14,336 B/token.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 14_336
    # TP 2: 1 KV head per GPU as well: 14,336 B/token.
    assert model.estimate(4_096, tp=2).kv_bytes_per_token == 14_336
    # TP 8: 12 % 8 != 0, refused as vLLM refuses it (ModelConfig.verify_with_parallel_config).
    with pytest.raises(PlanInputError, match=r"attention heads \(12\)"):
        model.estimate(4_096, tp=8)


def test_qwen2_vl_7b_tensor_parallel():
    model = model_from_config(load("qwen2-vl-7b-instruct"))
    # TP 4: 28 heads split 7 per GPU, 4 KV heads 1 per GPU: 2 x 28 x 1 x 128 x 2 B = 14,336 B/token.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 14_336
    # TP 8: 28 % 8 != 0, refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(28\)"):
        model.estimate(4_096, tp=8)


def test_xverse_7b_tensor_parallel():
    model = model_from_config(load("xverse-7b"))
    # TP 8: 32 KV heads split 4 per GPU: 2 x 32 x 4 x 128 x 2 B = 65,536 B/token.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 65_536
    # TP 3: 32 % 3 != 0, refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


@pytest.mark.parametrize(("name", "per_token"), [("qwen2-vl-2b-instruct", 28_672), ("xverse-7b", 524_288)])
def test_cli_kv_on_the_published_file(name, per_token):
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(CONFIGS / f"{name}.config.json"),
                          "--context", "4096"], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert f"{per_token:,} B per GPU" in out


def test_falcon_40b_original_rw_config():
    # tiiuae/falcon-40b's first config (RWForCausalLM, model_type "RefinedWeb", transformers 4.27.4). vLLM's registry
    # serves RWForCausalLM with FalconForCausalLM (falcon.py) and reads model_type RefinedWeb with its own RWConfig
    # (vllm/transformers_utils/configs/falcon.py): attribute_map num_attention_heads -> n_head = 128,
    # num_kv_heads -> n_head_kv = 8, num_hidden_layers -> n_layer = 60; __init__ sets new_decoder_architecture = True
    # because hidden_size == 8,192 ("Hack for falcon-40b"). FalconAttention.__init__: new_decoder_architecture ->
    # total_num_kv_heads = num_kv_heads = 8; head_dim = hidden_size // n_head = 8,192 / 128 = 64.
    # 2 x 60 x 8 x 64 x 2 B = 122,880 B/token.
    config = load("falcon-40b-rw")
    assert config["architectures"] == ["RWForCausalLM"]
    model = model_from_config(config)
    assert model.layer_pattern == "F" * 60
    assert model.estimate(2_048).kv_bytes_per_token == 122_880
    # No max_position_embeddings nor any other of vLLM's possible_keys: vLLM would fall back to 2,048 tokens;
    # kvplan names no maximum rather than assume one.
    assert model.max_context_tokens is None
    # TP 8: 128 heads 16 per GPU, 8 KV heads 1 per GPU: 2 x 60 x 1 x 64 x 2 B = 15,360 B/token.
    assert model.estimate(2_048, tp=8).kv_bytes_per_token == 15_360
    # TP 3: 128 % 3 != 0, refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(128\)"):
        model.estimate(2_048, tp=3)


def test_rw_config_new_decoder_follows_vllms_width_rule():
    # vLLM RWConfig.__init__ (model_type RefinedWeb and RefinedWebModel alike): new_decoder_architecture is forced
    # True when hidden_size == 8,192 and otherwise keeps the config's value (default False); multi_query defaults
    # True. Shapes written from that source (not published configs):
    # RefinedWeb at hidden 256, 4 heads, 2 layers, no new_decoder_architecture: multi_query -> 1 KV head of
    # 256 / 4 = 64: 2 x 2 x 1 x 64 x 2 B = 512 B/token (not the new decoder's MHA).
    small = {"architectures": ["RWForCausalLM"], "model_type": "RefinedWeb", "n_layer": 2, "n_head": 4,
             "hidden_size": 256}
    assert model_from_config(small).estimate(100).kv_bytes_per_token == 512
    # RefinedWebModel at hidden 8,192, 128 heads, n_head_kv 8, 2 layers: the new decoder, 8 KV heads of 64:
    # 2 x 2 x 8 x 64 x 2 B = 4,096 B/token.
    wide = {"architectures": ["RWForCausalLM"], "model_type": "RefinedWebModel", "n_layer": 2, "n_head": 128,
            "n_head_kv": 8, "hidden_size": 8_192}
    assert model_from_config(wide).estimate(100).kv_bytes_per_token == 4_096
    # An explicit new_decoder_architecture false at 8,192 is overridden by vLLM's RWConfig: still 122,880 B/token.
    forced = {**load("falcon-40b-rw"), "new_decoder_architecture": False}
    assert model_from_config(forced).estimate(100).kv_bytes_per_token == 122_880
