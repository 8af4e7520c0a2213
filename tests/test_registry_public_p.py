"""Golden values of real public configs of AFMoE, Arcee, Arctic, Bamba, dots.llm1, FlexOlmo, GLM (tests/data/configs).

Each config is a Hugging Face Hub ``config.json`` (tests/data/configs/SOURCES.md says which page it was read from and
how it was written back). Each figure is derived by hand from the vLLM model file of the architecture (the class and
the factors are written next to the number) and from vLLM's maximum-length rule (``_get_and_verify_max_len``,
vllm/config/model.py: the smallest of its possible_keys present, times the RoPE scaling factor where it applies).
BF16 is two bytes per element; every attention layer stores K and V (the factor 2).
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
    # THUDM/glm-4-9b-chat-hf. vLLM GlmForCausalLM (glm.py) is LlamaForCausalLM with partial_rotary_factor 0.5 (the
    # rotary half of each head, no cache change): LlamaAttention with num_key_value_heads = 2 KV heads of head_dim 128.
    # 2 x 40 layers x 2 x 128 x 2 B = 40,960 B/token; max_position_embeddings 131,072, no RoPE scaling.
    ("glm-4-9b-chat-hf", "GlmForCausalLM", 40_960, 131_072, "F" * 40),
    # Delta-Vector/Austral-AFM-SFT (a fine-tune of arcee-ai/AFM-4.5B, same geometry). vLLM ArceeDecoderLayer (arcee.py)
    # builds LlamaAttention with num_key_value_heads = 4 KV heads of head_dim 128 (the config's head_dim; 2,560 / 20 =
    # 128 too). 2 x 36 x 4 x 128 x 2 B = 73,728 B/token. Maximum: max_position_embeddings 65,536, then the YaRN rule
    # (rope_type "yarn": derived = original_max_position_embeddings 4,096 x factor 20) = 81,920.
    ("austral-afm-sft", "ArceeForCausalLM", 73_728, 81_920, "F" * 36),
    # rednote-hilab/dots.llm1.base (refs/pr/4). vLLM Dots1Attention (dots1.py): num_key_value_heads = 32, head_dim =
    # getattr(config, "head_dim", hidden_size // num_attention_heads) = 4,096 / 32 = 128, no window (sliding_window
    # null, use_sliding_window false). The MoE (128 routed + 2 shared experts) changes no KV.
    # 2 x 62 x 32 x 128 x 2 B = 1,015,808 B/token; max_position_embeddings 32,768.
    ("dots.llm1.base-pr4", "Dots1ForCausalLM", 1_015_808, 32_768, "F" * 62),
    # hf-internal-testing/tiny-random-FlexOlmoForCausalLM (transformers' test checkpoint). vLLM FlexOlmoAttention
    # (flex_olmo.py, an OlmoeAttention): num_key_value_heads = 2 KV heads of hidden_size // num_attention_heads =
    # 64 / 4 = 16. 2 x 2 x 2 x 16 x 2 B = 256 B/token; max_position_embeddings 4,096.
    ("tiny-random-flexolmo", "FlexOlmoForCausalLM", 256, 4_096, "F" * 2),
    # Snowflake/snowflake-arctic-instruct. vLLM ArcticAttention (arctic.py, read at 00db011): num_key_value_heads = 8
    # KV heads of hidden_size // num_attention_heads = 7,168 / 56 = 128 on all 35 layers (the residual MoE and
    # parallel_attn_mlp_res change weights and dataflow, not the KV). 2 x 35 x 8 x 128 x 2 B = 143,360 B/token.
    # Maximum: the smallest of max_position_embeddings 4,096 and max_sequence_length 4,096 = 4,096.
    ("snowflake-arctic-instruct", "ArcticForCausalLM", 143_360, 4_096, "F" * 35),
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


def test_glm_4_9b_chat_hf_tensor_parallel():
    model = model_from_config(load("glm-4-9b-chat-hf"))
    # TP 4: 32 heads / 4; 2 KV heads < 4 -> replicated, one per GPU (LlamaAttention: max(1, 2 // 4), 4 % 2 == 0):
    # 2 x 40 x 1 x 128 x 2 B = 20,480 B/token per GPU.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 20_480
    # TP 3: vLLM ModelConfig.verify_with_parallel_config: 32 attention heads are not divisible by 3.
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_austral_afm_tensor_parallel():
    model = model_from_config(load("austral-afm-sft"))
    # TP 4: 20 heads / 4 = 5; 4 KV heads / 4 = 1 per GPU: 2 x 36 x 1 x 128 x 2 B = 18,432 B/token per GPU.
    assert model.estimate(4_096, tp=4).kv_bytes_per_token == 18_432
    # TP 8: 20 % 8 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(20\)"):
        model.estimate(4_096, tp=8)


def test_dots_llm1_tensor_parallel():
    model = model_from_config(load("dots.llm1.base-pr4"))
    # TP 8: 32 KV heads / 8 = 4 per GPU: 2 x 62 x 4 x 128 x 2 B = 126,976 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 126_976
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(4_096, tp=3)


def test_arctic_instruct_tensor_parallel():
    model = model_from_config(load("snowflake-arctic-instruct"))
    # TP 8: 56 heads / 8 = 7; 8 KV heads / 8 = 1 per GPU: 2 x 35 x 1 x 128 x 2 B = 17,920 B/token per GPU.
    assert model.estimate(4_096, tp=8).kv_bytes_per_token == 17_920
    # TP 16: 56 % 16 != 0, refused as vLLM refuses it.
    with pytest.raises(PlanInputError, match=r"attention heads \(56\)"):
        model.estimate(4_096, tp=16)


def test_tiny_flexolmo_tensor_parallel():
    model = model_from_config(load("tiny-random-flexolmo"))
    # TP 4: 4 heads / 4 = 1; 2 KV heads < 4 -> one per GPU: 2 x 2 x 1 x 16 x 2 B = 128 B/token per GPU.
    assert model.estimate(1_000, tp=4).kv_bytes_per_token == 128
    with pytest.raises(PlanInputError, match=r"attention heads \(4\)"):
        model.estimate(1_000, tp=3)


def test_bamba_9b_attention_and_mamba2_state():
    # ibm-fms/Bamba-9B (the config as first published, before the ibm-ai-platform rename). vLLM BambaModel (bamba.py,
    # read at vllm-project/vllm 017597e) builds layer i from config.layers_block_type, which transformers' BambaConfig
    # derives from attn_layer_indices [9, 18, 27]: three BambaAttentionDecoderLayer, 29 BambaMixerDecoderLayer.
    config = load("bamba-9b")
    assert config["architectures"] == ["BambaForCausalLM"]
    model = model_from_config(config)
    pattern = "".join("F" if i in (9, 18, 27) else "M" for i in range(32))
    assert model.layer_pattern == pattern
    # Attention: num_key_value_heads 8 of head_dim = hidden_size // num_attention_heads = 4,096 / 32 = 128
    # (attn_rotary_emb 64 only sets the rotary width): 2 x 3 x 8 x 128 x 2 B = 12,288 B/token.
    estimate = model.estimate(4_096)
    assert estimate.kv_bytes_per_token == 12_288
    groups = {g.name: g.bytes for g in estimate.groups}
    assert groups["full attention"] == 3 * 4_096 * 8 * 2 * 128 * 2  # 50,331,648
    # Mamba2 state per sequence (BambaForCausalLM._get_mamba_cache_shape, BF16 as lm_head.weight):
    # conv: (mamba_expand 2 x 4,096 + 2 x mamba_n_groups 1 x mamba_d_state 128) x (mamba_d_conv 4 - 1)
    #       = 8,448 x 3 = 25,344 elements x 2 B = 50,688 B per layer; x 29 layers = 1,469,952 B.
    assert groups["Mamba2 conv state"] == 1_469_952
    # SSM: mamba_n_heads 128 x mamba_d_head 64 x mamba_d_state 128 = 1,048,576 x 2 B = 2,097,152 B per layer;
    # x 29 = 60,817,408 B.
    assert groups["Mamba2 SSM state"] == 60_817_408
    assert estimate.kv_bytes == 50_331_648 + 1_469_952 + 60_817_408
    # The published config has no max_position_embeddings (nor any other of vLLM's possible_keys): vLLM takes the
    # transformers BambaConfig class default, which the file does not state, so kvplan states no maximum.
    assert model.max_context_tokens is None
    # use_mamba_kernels is transformers' kernel switch, never read by vLLM: accepted, not ignored or refused.
    assert not model.ignored_fields


def test_bamba_9b_tensor_parallel():
    model = model_from_config(load("bamba-9b"))
    estimate = model.estimate(4_096, tp=8)
    groups = {g.name: g.bytes for g in estimate.groups}
    # TP 8: 8 KV heads / 8 = 1 per GPU: 2 x 3 x 1 x 128 x 2 B = 1,536 B/token per GPU.
    assert estimate.kv_bytes_per_token == 1_536
    assert groups["full attention"] == 4_096 * 1_536  # 6,291,456
    # conv: n_groups 1 + extra_groups_for_head_shards(1, 8) = 1 + 7 = 8 (mamba_mixer2.py: one group is replicated to
    # every shard); conv_dim = 8,192 + 2 x 8 x 128 = 10,240, / 8 = 1,280 x 3 = 3,840 elements x 2 B = 7,680 B per
    # layer; x 29 = 222,720 B.
    assert groups["Mamba2 conv state"] == 222_720
    # SSM: 128 / 8 = 16 heads x 64 x 128 = 131,072 elements x 2 B = 262,144 B per layer; x 29 = 7,602,176 B.
    assert groups["Mamba2 SSM state"] == 7_602_176
    # TP 3: 32 attention heads are not divisible by 3 (nor is the conv width): refused.
    with pytest.raises(PlanInputError):
        model.estimate(4_096, tp=3)


def test_tiny_trinity_layer_types_decide_the_window():
    # optimum-intel-internal-testing/tiny-random-trinity (an AFMoE test checkpoint). vLLM AfmoeAttention (afmoe.py,
    # read at vllm-project/vllm 055e47c) windows a layer when layer_types names it "sliding_attention", with
    # sliding_window 1,024; this file's list [sliding, full, sliding, full] disagrees with its
    # global_attn_every_n_layers 4 (which would make layer 3 the only full one), and the list decides.
    config = load("tiny-random-trinity")
    assert config["architectures"] == ["AfmoeForCausalLM"]
    assert registry.status("AfmoeForCausalLM")[0] == "supported"
    model = model_from_config(config)
    assert model.layer_pattern == "SFSF"
    assert not model.ignored_fields
    # num_key_value_heads 2 of head_dim 16 (the config's head_dim): per layer per token 2 x 2 x 16 x 2 B = 128 B;
    # 4 layers = 512 B/token while every layer grows.
    assert model.estimate(1_000).kv_bytes == 512 * 1_000
    # 4,096 tokens: 2 full layers x 4,096 x 128 B + 2 sliding layers x 1,024 x 128 B = 1,048,576 + 262,144.
    assert model.estimate(4_096).kv_bytes == 1_310_720
    # max_position_embeddings 16,384: 2 x 16,384 x 128 + 262,144 = 4,456,448 B.
    assert model.max_context_tokens == 16_384
    assert model.estimate(16_384).kv_bytes == 4_456_448
    # TP 2: 2 heads / 2, 2 KV heads / 2 = 1 per GPU: 4 x 1 x 16 x 2 x 2 B = 256 B/token per GPU (under the window).
    assert model.estimate(1_000, tp=2).kv_bytes == 256_000
    with pytest.raises(PlanInputError, match=r"attention heads \(2\)"):
        model.estimate(1_000, tp=4)


@pytest.mark.parametrize("name", ["glm-4-9b-chat-hf", "bamba-9b"])
def test_cli_kv_runs_on_the_public_configs(name):
    # (`kvplan plan --config` runs on GLM-4-9B-Chat-hf; on Bamba-9B it asks for --weights-gib: no weights formula)
    path = CONFIGS / f"{name}.config.json"
    kv = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(path), "--context", "4096"],
                        capture_output=True, text=True, cwd=ROOT)
    assert kv.returncode == 0, kv.stderr


def test_tiny_cohere2_both_layers_slide():
    # trl-internal-testing/tiny-Cohere2ForCausalLM (TRL's test checkpoint; the Command R7B / Command A files of
    # CohereLabs are gated and were not found whole). vLLM CohereAttention (commandr.py): head_dim = hidden_size //
    # num_attention_heads = 8 / 4 = 2, num_key_value_heads 2; a Cohere2 layer is windowed (sliding_window 4,096) where
    # layer_types says "sliding_attention", here both layers (with _sliding_window_pattern 4, (i + 1) % 4 != 0 for
    # i = 0, 1 says the same). Per layer per token 2 x 2 x 2 x 2 B = 16 B; 2 layers = 32 B/token under the window.
    config = load("tiny-cohere2")
    assert config["architectures"] == ["Cohere2ForCausalLM"]
    model = model_from_config(config)
    assert model.layer_pattern == "SS"
    assert not model.ignored_fields
    assert model.estimate(1_000).kv_bytes == 32_000
    # max_position_embeddings 8,192: each layer keeps 4,096 tokens: 2 x 4,096 x 16 B = 131,072 B.
    assert model.max_context_tokens == 8_192
    assert model.estimate(8_192).kv_bytes == 131_072
    # TP 2: 4 heads / 2, 2 KV heads / 2 = 1 per GPU: 2 x 1 x 2 x 2 x 2 B = 16 B/token per GPU.
    assert model.estimate(1_000, tp=2).kv_bytes == 16_000
    with pytest.raises(PlanInputError, match=r"attention heads \(4\)"):
        model.estimate(1_000, tp=3)


def test_command_r7b_layer_switch_is_read_as_vllm_reads_it():
    # huihui-ai/c4ai-command-r7b-12-2024-abliterated: Command R7B's own config (its _name_or_path), which carries
    # layer_switch 4 beside sliding_window_pattern 4. vLLM CohereAttention.__init__ (commandr.py) windows layer i when
    # (i + 1) % sliding_window_pattern != 0 and never reads layer_switch: layers 3, 7, ..., 31 are full (8), the other
    # 24 keep sliding_window 4,096 tokens. head_dim = hidden_size // num_attention_heads = 4,096 / 32 = 128; 8 KV
    # heads: 2 x 8 x 128 x 2 B = 4,096 B per layer per token.
    # Under the window: 32 x 4,096 = 131,072 B/token. At 8,192 tokens (max_position_embeddings; no model_max_length):
    # full 8 x 4,096 x 8,192 = 268,435,456 + sliding 24 x 4,096 x 4,096 = 402,653,184 -> 671,088,640 B;
    # past the window each token adds the full layers' 8 x 4,096 = 32,768 B.
    config = load("c4ai-command-r7b-12-2024-abliterated")
    assert config["layer_switch"] == 4
    model = model_from_config(config)
    assert model.layer_pattern == "SSSF" * 8
    assert not model.ignored_fields
    assert model.max_context_tokens == 8_192
    assert model.estimate(4_096).kv_bytes == 131_072 * 4_096
    assert model.estimate(8_192).kv_bytes == 671_088_640
    assert model.estimate(8_192).kv_bytes_per_token == 32_768
    # TP 8: 32 heads / 8 and 8 KV heads / 8 = 1 per GPU: 671,088,640 / 8 = 83,886,080 B per GPU; TP 3 is refused
    assert model.estimate(8_192, tp=8).kv_bytes == 83_886_080
    with pytest.raises(PlanInputError, match=r"attention heads \(32\)"):
        model.estimate(8_192, tp=3)
