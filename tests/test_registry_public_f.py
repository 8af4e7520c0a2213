"""Golden values of real public configs of architectures the generic 'decoder' reader prices (tests/data/configs,
SOURCES.md), batch F: InternLM, InternLM2 / InternLM2.5, MiniCPM (dense and MoE), Qwen3-MoE, OLMo, Persimmon, HunYuan dense, Seed-OSS, OLMoE, Nemotron and openPangu-Embedded.

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
    # InternLM 7B (mlc-llm preset "internlm"). vLLM's registry serves InternLMForCausalLM with llama.py's
    # LlamaForCausalLM: LlamaDecoderLayer passes num_kv_heads = getattr(config, "num_key_value_heads",
    # num_attention_heads) = 32 (the config has no num_key_value_heads: MHA), and LlamaAttention's head_dim =
    # getattr(config, "head_dim", hidden_size // num_attention_heads) = 4,096 / 32 = 128; "bias": true only adds
    # q/k/v/o biases (LlamaDecoderLayer: attention_bias or bias). 2 x 32 layers x 32 x 128 x 2 B = 524,288 B/token;
    # maximum: max_position_embeddings 2,048, no RoPE scaling. (vLLM's vendored registry at 0002bff still lists
    # InternLMForCausalLM; later registries move it to _PREVIOUSLY_SUPPORTED_MODELS, last served by vLLM 0.23.0.)
    ("internlm-7b.partial", "InternLMForCausalLM", 524_288, 2_048, "F" * 32),
    # InternLM2 7B (mlc-llm preset "internlm2"). vLLM InternLM2Attention.__init__ (internlm2.py, read at
    # vllm-project/vllm 0531c22): num_kv_heads = config.num_key_value_heads = 8, head_dim = hidden_size //
    # total_num_heads = 4,096 / 32 = 128, one Attention per layer, no window. 2 x 32 x 8 x 128 x 2 B = 131,072 B/token;
    # maximum: max_position_embeddings 32,768, rope_scaling null.
    ("internlm2-7b.partial", "InternLM2ForCausalLM", 131_072, 32_768, "F" * 32),
    # InternLM2.5 7B (mlc-llm preset "internlm2_5_7b"): the same geometry, 131,072 B/token; rope_scaling
    # {"type": "dynamic", "factor": 2.0}: "dynamic" is not su / longrope / llama3, so vLLM multiplies the length by
    # the factor: 32,768 x 2.0 = 65,536.
    ("internlm2_5-7b.partial", "InternLM2ForCausalLM", 131_072, 65_536, "F" * 32),
    # MiniCPM-2B 128k (mlc-llm preset "minicpm_2b"). vLLM MiniCPMAttention.__init__ (minicpm.py, read at
    # vllm-project/vllm 00db011): num_kv_heads = config.num_key_value_heads = 36, head_dim = hidden_size //
    # total_num_heads = 2,304 / 36 = 64. 2 x 40 x 36 x 64 x 2 B = 368,640 B/token. Maximum: max_position_embeddings
    # 65,536 (max_length 131,072 is a generation setting, not one of vLLM's possible_keys) x dynamic factor 4.0 =
    # 262,144.
    ("minicpm-2b-128k.partial", "MiniCPMForCausalLM", 368_640, 262_144, "F" * 40),
    # MiniCPM-2B-sft-bf16 (mlc-llm preset "minicpm_2b_sft_bf16"): the same attention, 368,640 B/token;
    # max_position_embeddings 4,096, no rope_scaling; tie_word_embeddings changes weights only.
    ("minicpm-2b-sft-bf16.partial", "MiniCPMForCausalLM", 368_640, 4_096, "F" * 40),
    # MiniCPM-MoE-8x2B (mlc-llm preset "minicpm-moe-8x2b"): MiniCPMDecoderLayer builds MiniCPMMoE when num_experts
    # (8) > 0, the FFN only; the attention is the same: 368,640 B/token; max_position_embeddings 4,096.
    ("minicpm-moe-8x2b.partial", "MiniCPMForCausalLM", 368_640, 4_096, "F" * 40),
    # Qwen/Qwen3-30B-A3B (Qwen3MoeForCausalLM). vLLM Qwen3MoeDecoderLayer (qwen3_moe.py, read at vllm-project/vllm
    # 002456d) passes num_kv_heads = config.num_key_value_heads = 4 and head_dim = getattr(config, "head_dim") = 128
    # (not hidden_size // heads = 2,048 / 32 = 64) to Qwen3MoeAttention, one Attention per layer, no window
    # (sliding_window null, use_sliding_window false). The MoE (128 experts, 8 per token) is the FFN only.
    # 2 x 48 x 4 x 128 x 2 B = 98,304 B/token; maximum: max_position_embeddings 40,960, rope_scaling null.
    ("qwen3-30b-a3b", "Qwen3MoeForCausalLM", 98_304, 40_960, "F" * 48),
    # allenai/OLMo-1B-hf (partial: the architecture keys a public test quotes). vLLM OlmoAttention.__init__ (olmo.py,
    # read at vllm-project/vllm 4ae0583): total_num_heads = num_attention_heads = 16, head_dim = hidden_size //
    # total_num_heads = 2,048 / 16 = 128, QKVParallelLinear and Attention built from the query heads alone (MHA: 16
    # K/V heads; num_key_value_heads 16 agrees). clip_qkv null only clamps activations. 2 x 16 x 16 x 128 x 2 B =
    # 131,072 B/token; maximum: max_position_embeddings 2,048.
    ("olmo-1b-hf.partial", "OlmoForCausalLM", 131_072, 2_048, "F" * 16),
    # adept/persimmon-8b-base (partial: the keys of a public snapshot). vLLM PersimmonAttention.__init__
    # (persimmon.py): total_num_heads = num_attention_heads = 64, head_dim = hidden_size // total_num_heads =
    # 4,096 / 64 = 64, QKVParallelLinear and Attention from the query heads alone (MHA: 64 K/V heads;
    # num_key_value_heads 64 agrees). qk_layernorm normalises q and k, no cache change.
    # 2 x 36 x 64 x 64 x 2 B = 589,824 B/token; maximum: max_position_embeddings 16,384, rope_scaling null.
    ("persimmon-8b-base.partial", "PersimmonForCausalLM", 589_824, 16_384, "F" * 36),
    # Tencent Hunyuan-MT 7B (HunYuanDenseV1ForCausalLM). vLLM HunYuanAttention.__init__ (hunyuan_v1.py, read at
    # vllm-project/vllm 00f8d44): head_dim = config.head_dim = 128 (set and non-zero, so attention_head_dim 128 is
    # not consulted); HunYuanDecoderLayer passes num_kv_heads = num_key_value_heads = 8; no use_cla, so
    # _get_cla_factor is 1 and every layer is a DECODER attention with its own KV. 2 x 32 x 8 x 128 x 2 B =
    # 131,072 B/token. Maximum: max_position_embeddings 32,768 x rope_scaling "dynamic" factor 1.0 = 32,768 (alpha
    # changes the RoPE base only).
    ("hunyuan-mt-7b", "HunYuanDenseV1ForCausalLM", 131_072, 32_768, "F" * 32),
    # An OLMoE-1B-7B config.json (_name_or_path "step23842-hf", a converted training checkpoint of the 16-layer,
    # 64-expert OLMoE). vLLM OlmoeAttention.__init__ (olmoe.py, read at vllm-project/vllm 048a32c): num_kv_heads =
    # config.num_key_value_heads = 16, head_dim = hidden_size // total_num_heads = 2,048 / 16 = 128 (OLMoE never reads a
    # head_dim key); q_norm / k_norm and clip_qkv null change no cache; the MoE (64 experts, 8 per token) is the FFN.
    # 2 x 16 x 16 x 128 x 2 B = 131,072 B/token; maximum: max_position_embeddings 4,096, rope_scaling null.
    ("olmoe-1b-7b-step23842", "OlmoeForCausalLM", 131_072, 4_096, "F" * 16),
    # Nemotron-4 4B (NVIDIA TensorRT-LLM's Nemotron_4_4B_CONFIG). vLLM NemotronAttention.__init__ (nemotron.py):
    # num_kv_heads = num_key_value_heads = 8, head_dim = getattr(config, "head_dim", None) or hidden_size //
    # num_attention_heads = 3,072 / 24 = 128, which kv_channels 128 repeats (accepted as equal); partial_rotary_factor
    # 0.5 rotates 64 of the 128 dims, no cache change. 2 x 32 x 8 x 128 x 2 B = 131,072 B/token; maximum:
    # max_position_embeddings 4,096.
    ("nemotron-4-4b", "NemotronForCausalLM", 131_072, 4_096, "F" * 32),
    # openPangu-Embedded-7B (V1.1; partial: the PanguEmbeddedConfig transformers 4.53.2 printed). vLLM
    # OpenPanguEmbeddedAttention.__init__ (openpangu.py): num_kv_heads = num_key_value_heads = 8, head_dim =
    # getattr(config, "head_dim", None) or hidden_size // total_num_heads = 4,096 / 32 = 128 (the printed module tree
    # agrees: k_proj 4,096 -> 1,024 = 8 x 128); no param_sink_number, so the plain Attention, no window (no
    # interleaved_sliding_window). 2 x 34 x 8 x 128 x 2 B = 139,264 B/token; maximum: max_position_embeddings 32,768.
    ("openpangu-embedded-7b.partial", "PanguEmbeddedForCausalLM", 139_264, 32_768, "F" * 34),
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


def test_internlm_7b_tensor_parallel():
    # TP 2: 32 heads % 2 == 0; 32 KV heads / 2 = 16 per GPU: 2 x 32 x 16 x 128 x 2 B = 262,144 B/token per GPU.
    model = model_from_config(load("internlm-7b.partial"))
    assert model.estimate(2_048, tp=2).kv_bytes_per_token == 262_144
    # TP 3: 32 % 3 != 0, refused as vLLM's verify_with_parallel_config refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(2_048, tp=3)


def test_internlm2_5_7b_tensor_parallel():
    model = model_from_config(load("internlm2_5-7b.partial"))
    # TP 8: 32 heads / 8 = 4; 8 KV heads / 8 = 1 per GPU (InternLM2Attention: max(1, 8 // 8)):
    # 2 x 32 x 1 x 128 x 2 B = 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 16_384
    # TP 16: 32 % 16 == 0; 8 KV heads < 16, so replicated (16 % 8 == 0), still one per GPU: 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=16).kv_bytes_per_token == 16_384
    # TP 6: 32 % 6 != 0, refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=6)


def test_minicpm_2b_tensor_parallel():
    model = model_from_config(load("minicpm-2b-128k.partial"))
    # TP 4: 36 heads / 4 = 9, and 36 KV heads / 4 = 9 per GPU: 2 x 40 x 9 x 64 x 2 B = 92,160 B/token per GPU.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 92_160
    # TP 8: 36 % 8 != 0: vLLM refuses ("Total number of attention heads (36) must be divisible by tensor parallel
    # size (8)"); so does kvplan.
    with pytest.raises(PlanInputError, match=r"attention heads \(36\)"):
        model.estimate(4_096, tp=8)


def test_minicpm_2b_cli_kv():
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config",
                          str(CONFIGS / "minicpm-2b-128k.partial.config.json"), "--context", "4096"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert "KV bytes per token: 368,640 B per GPU" in out


def test_qwen3_30b_a3b_tensor_parallel():
    model = model_from_config(load("qwen3-30b-a3b"))
    # TP 4: 32 heads / 4 = 8; 4 KV heads / 4 = 1 per GPU: 2 x 48 x 1 x 128 x 2 B = 24,576 B/token per GPU.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 24_576
    # TP 8: 32 / 8 = 4 heads; 4 KV heads < 8, replicated (8 % 4 == 0), one per GPU: 24,576 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 24_576
    # TP 3: 32 % 3 != 0, refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_olmo_1b_tensor_parallel():
    model = model_from_config(load("olmo-1b-hf.partial"))
    # TP 4: 16 heads / 4 = 4 per GPU, and OLMo's K/V heads are its query heads: 2 x 16 x 4 x 128 x 2 B =
    # 32,768 B/token per GPU.
    assert model.estimate(2_048, tp=4).kv_bytes_per_token == 32_768
    # TP 3: 16 % 3 != 0 (OlmoAttention asserts total_num_heads % tp == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(16\)"):
        model.estimate(2_048, tp=3)


def test_olmo_grouped_query_heads_refused():
    # vLLM OlmoAttention never reads num_key_value_heads: it caches 16 K/V heads and cannot load weights with fewer,
    # so the GQA figure (2 x 16 x 8 x 128 x 2 B = 65,536 B/token) would price a model vLLM does not serve: refused.
    config = {**load("olmo-1b-hf.partial"), "num_key_value_heads": 8}
    with pytest.raises(PlanInputError) as exc:
        model_from_config(config)
    assert exc.value.field == "config.num_key_value_heads"


def test_persimmon_8b_tensor_parallel_and_gqa_refused():
    model = model_from_config(load("persimmon-8b-base.partial"))
    # TP 8: 64 heads / 8 = 8 per GPU, K/V heads = query heads: 2 x 36 x 8 x 64 x 2 B = 73,728 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 73_728
    # TP 6: 64 % 6 != 0 (PersimmonAttention asserts total_num_heads % tp == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(64\)"):
        model.estimate(4_096, tp=6)
    # PersimmonAttention never reads num_key_value_heads (MHA only): a smaller count is refused, not priced as GQA.
    with pytest.raises(PlanInputError) as exc:
        model_from_config({**load("persimmon-8b-base.partial"), "num_key_value_heads": 8})
    assert exc.value.field == "config.num_key_value_heads"


def test_hunyuan_mt_7b_tensor_parallel():
    model = model_from_config(load("hunyuan-mt-7b"))
    # TP 8: 32 heads / 8 = 4; 8 KV heads / 8 = 1 per GPU: 2 x 32 x 1 x 128 x 2 B = 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 16_384
    # TP 3: 32 % 3 != 0 (HunYuanAttention asserts total_num_heads % tp_size == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_seed_oss_36b():
    # ByteDance-Seed Seed-OSS-36B geometry (partial config: the 15 keys a public test decodes; no "architectures" key
    # is quoted, so the class vLLM serves model_type seed_oss with, SeedOssForCausalLM, is added here).
    # vLLM SeedOssDecoderLayer (seed_oss.py, read at vllm-project/vllm 055e47c) passes num_kv_heads =
    # num_key_value_heads = 8 and head_dim = config.head_dim = 128 (not 5,120 / 80 = 64) to SeedOssAttention, one
    # DECODER Attention per layer, no window. 2 x 64 x 8 x 128 x 2 B = 262,144 B/token. Maximum:
    # max_position_embeddings 524,288; rope_scaling {"rope_type": "default"} has no factor (1.0): 524,288.
    config = {**load("seed-oss-36b.partial"), "architectures": ["SeedOssForCausalLM"]}
    assert registry.status("SeedOssForCausalLM") == ("supported", "decoder")
    model = model_from_config(config)
    assert model.estimate(4_096).kv_bytes_per_token == 262_144
    assert model.max_context_tokens == 524_288
    assert model.layer_pattern == "F" * 64
    assert not model.ignored_fields
    # TP 8: 80 / 8 = 10 heads; 8 KV heads / 8 = 1 per GPU: 2 x 64 x 1 x 128 x 2 B = 32,768 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 32_768
    # TP 16: 80 / 16 = 5; 8 KV heads < 16, replicated (16 % 8 == 0), one per GPU: 32,768 B/token per GPU.
    assert model.estimate(4_096, tp=16).kv_bytes_per_token == 32_768
    # TP 32: 80 % 32 != 0 (SeedOssAttention asserts total_num_heads % tp_size == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(80\)"):
        model.estimate(4_096, tp=32)


def test_olmoe_tensor_parallel():
    model = model_from_config(load("olmoe-1b-7b-step23842"))
    # TP 8: 16 heads / 8 = 2, 16 KV heads / 8 = 2 per GPU: 2 x 16 x 2 x 128 x 2 B = 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 16_384
    # TP 3: 16 % 3 != 0 (OlmoeAttention asserts total_num_heads % tp_size == 0), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(16\)"):
        model.estimate(4_096, tp=3)


def test_nemotron_4_4b_tensor_parallel():
    model = model_from_config(load("nemotron-4-4b"))
    # TP 8: 24 heads / 8 = 3; 8 KV heads / 8 = 1 per GPU: 2 x 32 x 1 x 128 x 2 B = 16,384 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 16_384
    # TP 3: 24 % 3 == 0, but 8 KV heads >= 3 and 8 % 3 != 0: NemotronAttention asserts
    # total_num_kv_heads % tp_size == 0 (and QKVParallelLinear's divide() would fail), so vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"8 KV heads"):
        model.estimate(4_096, tp=3)
    # TP 16: 24 % 16 != 0, refused by verify_with_parallel_config.
    with pytest.raises(PlanInputError, match=r"attention heads \(24\)"):
        model.estimate(4_096, tp=16)


def test_openpangu_embedded_7b_tensor_parallel():
    model = model_from_config(load("openpangu-embedded-7b.partial"))
    # TP 16: 32 / 16 = 2 heads; 8 KV heads < 16 and 16 % 8 == 0, so replicated, one per GPU
    # (OpenPanguEmbeddedAttention: max(1, 8 // 16)): 2 x 34 x 1 x 128 x 2 B = 17,408 B/token per GPU.
    assert model.estimate(4_096, tp=16).kv_bytes_per_token == 17_408
    # TP 3: 32 % 3 != 0 ("total_num_heads 32 is not divisible by tp_size 3"), refused.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)
