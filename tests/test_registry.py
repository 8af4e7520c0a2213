"""The architecture registry: every vendored vLLM name has a status, the generated doc is current, unknown
architectures and unread layout fields are refused, legacy field names read, and golden values of real public
configs (tests/data/configs, SOURCES.md) derived by hand from the vLLM source each reader cites.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from planner.errors import PlanInputError
from planner.hf import registry
from planner.hf.checkpoint import read_checkpoint, with_sidecars
from planner.hf.config import layout_from_config, model_from_config

ROOT = Path(__file__).resolve().parents[1]
CONFIGS = ROOT / "tests" / "data" / "configs"


def load(name):
    return json.loads((CONFIGS / f"{name}.config.json").read_text())


def per_token(config, **kw):
    """Growing bytes per token at TP 1, past every window (architecture basis)."""
    return model_from_config(config, **kw).estimate(10**6).kv_bytes_per_token


# ---------------------------------------------------------------------------
# Coverage and the generated doc
# ---------------------------------------------------------------------------

def test_every_vendored_name_has_a_status():
    data = registry.vendored()
    assert data["source"]["commit"] == registry.VLLM_COMMIT
    names = data["architectures"]
    assert len(names) == 119  # _TEXT_GENERATION_MODELS at 0002bff
    missing = [n for n in names if registry.status(n)[0] == "unknown"]
    assert not missing, missing


def test_every_family_names_its_source_and_golden_test():
    for fam in registry.FAMILIES.values():
        assert "vllm" in fam.source.lower() or "deepseek" in fam.source.lower(), fam.id
        assert fam.golden, fam.id
    used = set(registry.ARCHITECTURES.values())
    assert used == set(registry.FAMILIES), set(registry.FAMILIES) - used


def test_architectures_doc_is_current():
    doc = (ROOT / "docs" / "architectures.md").read_text(encoding="utf-8")
    assert doc == registry.markdown(), "regenerate: python -m planner.hf.registry --markdown > docs/architectures.md"
    for name in registry.vendored()["architectures"]:
        assert f"| `{name}` |" in doc


def test_markdown_command_line():
    out = subprocess.run([sys.executable, "-m", "planner.hf.registry", "--markdown"], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout == registry.markdown()


# ---------------------------------------------------------------------------
# Refusals
# ---------------------------------------------------------------------------

LLAMA = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "num_hidden_layers": 32,
         "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "max_position_embeddings": 8192}


def test_unknown_architecture_names_the_nearest():
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**LLAMA, "architectures": ["LlamaForCausalLMX"]})
    assert exc.value.field == "config.architectures"
    assert "nearest supported: LlamaForCausalLM" in str(exc.value)


def test_refused_architecture_says_why():
    with pytest.raises(PlanInputError, match="looped layers") as exc:
        layout_from_config({**LLAMA, "architectures": ["OuroForCausalLM"]})
    assert exc.value.field == "config.architectures"
    with pytest.raises(PlanInputError, match="encoder only"):
        layout_from_config({**LLAMA, "architectures": ["BertModel"]})


def test_refused_model_type_without_architectures():
    cfg = {k: v for k, v in LLAMA.items() if k != "architectures"}
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**cfg, "model_type": "longcat_flash"})
    assert exc.value.field == "config.model_type"


@pytest.mark.parametrize("field, value", [
    ("cross_attention_layers", [3, 8, 13]),        # Mllama: cross-attention layers
    ("full_attn_idxs", [2, 5, 8]),                  # LFM2: attention layers by index
    ("linear_attn_config", {"kda_layers": [1, 2]}),  # Kimi-Linear: KDA layers in a nested config
    ("global_attn_layers", [4, 12]),                # an unknown per-layer list
    ("kv_sharing_layers", 4),                       # some layer-sharing scheme
])
def test_unknown_layout_field_is_refused_by_name(field, value):
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**LLAMA, field: value})
    assert field in str(exc.value)  # one line naming the field
    if field != "linear_attn_config":  # a state field with no layer mix: the layer-mix rule refuses it first
        assert exc.value.field == f"config.{field}"
        assert f"--ignore-field {field}" in str(exc.value)


def test_ignore_field_accepts_and_says_so():
    model = model_from_config({**LLAMA, "full_attn_idxs": [2, 5]}, ignore_fields=("full_attn_idxs",))
    assert any("full_attn_idxs" in n for n in model.notes)
    rows = {(f.field, f.how) for f in model.config_report}
    assert ("full_attn_idxs", "ignored") in rows
    # 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B/token: the figure of the plain decoder, said to ignore the field
    assert model.estimate(10**6).kv_bytes_per_token == 131_072


def test_layout_field_set_off_passes():
    # a null, false or empty layout field turns the feature off: nothing to refuse
    assert per_token({**LLAMA, "cross_attention_layers": None, "use_cla": False, "full_attn_idxs": []}) == 131_072


def test_benign_fields_pass():
    cfg = {**LLAMA, "attention_dropout": 0.0, "attention_bias": False, "layer_norm_eps": 1e-5, "head_dim": 128,
           "rope_scaling": {"type": "linear"}, "num_experts_per_tok": 2, "output_router_logits": False,
           "router_aux_loss_coef": 0.01, "mlp_bias": False}
    assert per_token(cfg) == 131_072


# ---------------------------------------------------------------------------
# Golden values from real public configs (tests/data/configs/SOURCES.md)
# ---------------------------------------------------------------------------

def test_gpt2_legacy_names():
    # openai-community/gpt2: n_layer 12, n_head 12, n_embd 768 (HF GPT2Config.attribute_map maps them to
    # num_hidden_layers / num_attention_heads / hidden_size). vLLM GPT2Attention: MHA, head_dim = 768 / 12 = 64.
    # 2 (K, V) x 12 layers x 12 heads x 64 x 2 B (BF16) = 36,864 B/token; n_positions 1024 is the context.
    model = model_from_config(load("gpt2"))
    assert model.estimate(1024).kv_bytes_per_token == 36_864
    assert model.max_context_tokens == 1024
    rows = {(f.field, f.how) for f in model.config_report}
    assert ("n_layer", "read") in rows and ("n_embd", "read") in rows


def test_chatglm3_6b():
    # THUDM/chatglm3-6b: num_layers 28, 32 heads, hidden 4096; vLLM GLMAttention: multi_query_attention true ->
    # multi_query_group_num = 2 KV heads; head_dim = hidden_size // num_attention_heads = 128.
    # 2 x 28 x 2 x 128 x 2 B = 28,672 B/token (FP16 model dtype, 2 B like BF16); seq_length 8192 the context.
    model = model_from_config(load("chatglm3-6b"))
    assert model.estimate(8192).kv_bytes_per_token == 28_672
    assert model.max_context_tokens == 8192


def test_falcon_7b_multi_query():
    # tiiuae/falcon-7b-instruct: 32 layers, 71 heads, hidden 4544 -> head_dim 64; new_decoder_architecture false and
    # multi_query true -> vLLM FalconAttention keeps ONE KV head (num_kv_heads 71 in the config is not read).
    # 2 x 32 x 1 x 64 x 2 B = 8,192 B/token.
    assert per_token(load("falcon-7b-instruct")) == 8_192


def test_falcon_new_decoder_architecture():
    # Falcon-40B shape (tiiuae/falcon-40b config.json: 60 layers, 128 heads, hidden 8192, num_kv_heads 8,
    # new_decoder_architecture true): 2 x 60 x 8 x 64 x 2 B = 122,880 B/token.
    cfg = {"architectures": ["FalconForCausalLM"], "model_type": "falcon", "num_hidden_layers": 60,
           "num_attention_heads": 128, "num_kv_heads": 8, "hidden_size": 8192, "new_decoder_architecture": True,
           "parallel_attn": True, "alibi": False, "bias": False}
    assert per_token(cfg) == 122_880


def test_nemotron_nas_block_configs():
    # nvidia/Llama-3_3-Nemotron-Super-49B-v1: 80 blocks; vLLM DeciLMDecoderLayer builds attention unless
    # attention.no_op: 49 blocks have attention with n_heads_in_group 8 -> 64 // 8 = 8 KV heads; 31 are no-op.
    # head_dim = 8192 / 64 = 128. 2 x 49 x 8 x 128 x 2 B = 200,704 B/token
    # (priced as 80 uniform MHA layers it would be 2 x 80 x 64 x 128 x 2 = 2,621,440: +1,206 %).
    model = model_from_config(load("llama-3_3-nemotron-super-49b-v1"))
    assert model.estimate(10**5).kv_bytes_per_token == 200_704
    assert model.layer_pattern.count("F") == 49 and model.layer_pattern.count("-") == 31
    assert model.layer_pattern[:12] == "FFFFFF--FFF-"


def test_nemotron_nas_replace_with_linear_is_refused():
    cfg = load("llama-3_3-nemotron-super-49b-v1")
    cfg["block_configs"][6]["attention"].update(no_op=False, replace_with_linear=True)
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(cfg)
    assert exc.value.field == "config.block_configs[6].attention.replace_with_linear"


def test_mpt_legacy_names():
    # mosaicml/mpt-7b shape: n_layers 32, n_heads 32, d_model 4096, max_seq_len 2048, attn_config without
    # kv_n_heads -> vLLM MPTAttention keeps one KV head per attention head. 2 x 32 x 32 x 128 x 2 = 524,288 B/token.
    cfg = {"architectures": ["MPTForCausalLM"], "model_type": "mpt", "n_layers": 32, "n_heads": 32, "d_model": 4096,
           "max_seq_len": 2048, "attn_config": {"alibi": True, "attn_type": "multihead_attention", "clip_qkv": None}}
    assert per_token(cfg) == 524_288
    # DBRX (databricks/dbrx-base shape): 40 layers, 48 heads, d_model 6144, attn_config.kv_n_heads 8 ->
    # 2 x 40 x 8 x 128 x 2 = 163,840 B/token.
    dbrx = {"architectures": ["DbrxForCausalLM"], "model_type": "dbrx", "n_layers": 40, "n_heads": 48,
            "d_model": 6144, "max_seq_len": 32768, "attn_config": {"kv_n_heads": 8, "clip_qkv": 8, "rope_theta": 5e5}}
    assert per_token(dbrx) == 163_840


def test_bloom_legacy_names():
    # bigscience/bloom-560m shape: n_layer 24, n_head 16, hidden_size 1024 -> MHA 64-wide heads (vLLM
    # BloomAttention). 2 x 24 x 16 x 64 x 2 = 98,304 B/token.
    cfg = {"architectures": ["BloomForCausalLM"], "model_type": "bloom", "n_layer": 24, "n_head": 16,
           "hidden_size": 1024, "apply_residual_connection_post_layernorm": False, "slow_but_exact": False}
    assert per_token(cfg) == 98_304


def test_gpt_bigcode_multi_query():
    # bigcode/starcoder shape: n_layer 40, n_head 48, n_embd 6144, multi_query true -> one KV head of 128
    # (vLLM GPTBigCodeAttention). 2 x 40 x 1 x 128 x 2 = 20,480 B/token.
    cfg = {"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode", "n_layer": 40, "n_head": 48,
           "n_embd": 6144, "n_positions": 8192, "multi_query": True}
    assert per_token(cfg) == 20_480


def test_qwen1_mha():
    # Qwen/Qwen-7B shape: 32 layers, 32 heads, hidden 4096, kv_channels 128, seq_length 8192 (QWenAttention MHA):
    # 2 x 32 x 32 x 128 x 2 = 524,288 B/token.
    cfg = {"architectures": ["QWenLMHeadModel"], "model_type": "qwen", "num_hidden_layers": 32,
           "num_attention_heads": 32, "hidden_size": 4096, "kv_channels": 128, "seq_length": 8192}
    model = model_from_config(cfg)
    assert model.estimate(8192).kv_bytes_per_token == 524_288
    assert model.max_context_tokens == 8192


def test_minicpm3_per_head_kv():
    # openbmb/MiniCPM3-4B shape (model card / config.json values: 62 layers, 40 heads, hidden 2,560, q_lora_rank 768,
    # kv_lora_rank 256, qk_nope_head_dim 64, qk_rope_head_dim 32, 32,768 positions). vLLM MiniCPM3Attention caches
    # per-head K and V of qk_head_dim = 64 + 32 = 96 (V zero-padded from 64), num_kv_heads = the 40 heads, not the
    # 256 + 32 latent: 2 x 62 x 40 x 96 x 2 B = 952,320 B/token (priced as MLA it would say 62 x 288 x 2 = 35,712).
    cfg = {"architectures": ["MiniCPM3ForCausalLM"], "model_type": "minicpm3", "num_hidden_layers": 62,
           "num_attention_heads": 40, "num_key_value_heads": 40, "hidden_size": 2560, "q_lora_rank": 768,
           "kv_lora_rank": 256, "qk_nope_head_dim": 64, "qk_rope_head_dim": 32, "max_position_embeddings": 32768,
           "scale_emb": 12, "dim_model_base": 256, "scale_depth": 1.4}
    model = model_from_config(cfg)
    assert model.estimate(1000).kv_bytes_per_token == 952_320
    # TP 4: 40 / 4 = 10 heads per GPU: 952,320 / 4 = 238,080 B/token
    assert model.estimate(1000, tp=4).kv_bytes_per_token == 238_080
    # a v_head_dim in the config does not shrink V: vLLM pads it to qk_head_dim
    assert per_token({**cfg, "v_head_dim": 64}) == 952_320
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({k: v for k, v in cfg.items() if k != "qk_rope_head_dim"})
    assert exc.value.field == "config.qk_rope_head_dim"


# ---------------------------------------------------------------------------
# Checkpoint directories and sidecars
# ---------------------------------------------------------------------------

def test_checkpoint_directory_reads_older_modelopt_sidecar(tmp_path):
    # ModelOpt <= 0.29 keeps quantization in hf_quant_config.json; vLLM get_config uses it as quantization_config,
    # and its 'auto' KV dtype follows kv_cache_quant_algo FP8: 1 B per element.
    # Llama shape above: 2 x 32 x 8 x 128 x 1 B = 65,536 B/token (131,072 in BF16).
    (tmp_path / "config.json").write_text(json.dumps(LLAMA))
    (tmp_path / "hf_quant_config.json").write_text(json.dumps(
        {"producer": {"name": "modelopt", "version": "0.19.0"},
         "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8"}}))
    config, name = read_checkpoint(tmp_path, 10**6)
    assert name == tmp_path.name
    assert per_token(config) == 65_536
    assert per_token(read_checkpoint(tmp_path / "config.json", 10**6)[0]) == 131_072


def test_config_quantization_wins_over_sidecar():
    cfg = {**LLAMA, "quantization_config": {"quant_method": "fp8"}}
    merged = with_sidecars(cfg, {"hf_quant_config.json": {"quantization": {"kv_cache_quant_algo": "FP8"}}})
    assert merged["quantization_config"] == {"quant_method": "fp8"}
    assert per_token(merged) == 131_072


def test_unknown_sidecar_refused():
    with pytest.raises(PlanInputError):
        with_sidecars(LLAMA, {"tokenizer.json": {}})


# ---------------------------------------------------------------------------
# Parallelism the engine's way (vllm/distributed/utils.py get_pp_indices; vllm/config/model.py)
# ---------------------------------------------------------------------------

def test_vllm_pp_partition():
    from planner.kv.pipeline import vllm_pp_partition
    # get_pp_indices: L // PP each, the remainder one each to partitions[-2], [-3], ...
    assert vllm_pp_partition(80, 2) == (40, 40)
    assert vllm_pp_partition(62, 4) == (15, 16, 16, 15)  # 62 = 4 x 15 + 2: stages 1 and 2 get one more
    assert vllm_pp_partition(61, 3) == (20, 21, 20)
    assert vllm_pp_partition(10, 4) == (2, 3, 3, 2)      # remainder 2 -> partitions[-2] and [-3]
    with pytest.raises(PlanInputError):
        vllm_pp_partition(80, 2, (30, 40))                 # VLLM_PP_LAYER_PARTITION must sum to the layers


def test_pp_binds_on_the_stage_with_the_most_attention():
    # Nemotron Super 49B at PP 2: get_pp_indices gives layers 0-39 and 40-79. Attention layers (block_configs not
    # no_op): 0-5, 8-10, 12-41, 52, 71-79. Stage 0 holds 6 + 3 + 28 = 37 of them, stage 1 holds 40, 41, 52 and
    # 71-79 = 12. Stage 0 binds: 37 x 2 x 8 x 128 x 2 B = 151,552 B/token (splitting each group evenly, ceil(49/2)
    # = 25 layers, would say 102,400: the engine's stage 0 holds 48 % more).
    model = model_from_config(load("llama-3_3-nemotron-super-49b-v1"))
    est = model.estimate(1000, pp=2)
    assert est.kv_bytes_per_token == 151_552
    assert est.binding_stage == 0 and est.stage_layers == (0, 40)
    assert est.stage_bytes == (151_552_000, 12 * 4096 * 1000)
    # VLLM_PP_LAYER_PARTITION 52,28: stage 0 = layers 0-51 holds 6 + 3 + 30 = 39 attention layers
    # (12-41) -> 39 x 4,096 = 159,744; stage 1 holds 52 and 71-79 = 10.
    from dataclasses import replace
    est = replace(model, pp_layer_partition=(52, 28)).estimate(1000, pp=2)
    assert est.kv_bytes_per_token == 159_744
    assert est.stage_bytes == (159_744_000, 10 * 4096 * 1000)


def test_tp_the_engine_refuses():
    # Falcon-7B: 71 attention heads; vLLM: "Total number of attention heads (71) must be divisible by tensor
    # parallel size (2)" (ModelConfig.verify_with_parallel_config).
    falcon = model_from_config(load("falcon-7b-instruct"))
    with pytest.raises(PlanInputError, match=r"attention heads \(71\)"):
        falcon.estimate(1000, tp=2)
    assert falcon.estimate(1000, tp=71).kv_bytes_per_token == 8_192  # one KV head, replicated on every rank
    # ChatGLM3-6B: 32 heads, 2 KV heads. TP 4: 4 % 2 == 0, heads replicated (1 per GPU):
    # 2 x 28 x 1 x 128 x 2 = 14,336 B/token.
    glm = model_from_config(load("chatglm3-6b"))
    assert glm.estimate(1000, tp=4).kv_bytes_per_token == 14_336
    # 12 KV heads (GPT-2) at TP 8: 12 % 8 != 0 and 8 < 12 -> QKVParallelLinear's divide() fails. But GPT-2's
    # 12 attention heads are refused first (12 % 8).
    with pytest.raises(PlanInputError):
        model_from_config(load("gpt2")).estimate(100, tp=8)
    # KV heads alone: 32 query heads, 12 KV heads is not a valid GQA (32 % 12); take 48 heads, 12 KV heads, TP 8:
    # 48 % 8 == 0 but 12 % 8 != 0 -> refused.
    cfg = {**LLAMA, "num_attention_heads": 48, "num_key_value_heads": 12, "hidden_size": 6144}
    with pytest.raises(PlanInputError, match="12 KV heads"):
        model_from_config(cfg).estimate(100, tp=8)



def test_lfm2_short_conv():
    # LiquidAI/LFM2-1.2B shape: 16 layers, attention at full_attn_idxs [2, 5, 8, 10, 12, 14], 32 heads, 8 KV heads,
    # hidden 2048 (head_dim 64), conv_L_cache 3. Attention: 6 x 2 x 8 x 64 x 2 B = 12,288 B/token.
    # Short convolutions (vLLM short_conv_state_shape: (L_cache - 1) x dim): 10 layers x 2 x 2,048 x 2 B = 81,920 B
    # per sequence.
    cfg = {"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2", "num_hidden_layers": 16, "hidden_size": 2048,
           "num_attention_heads": 32, "num_heads": 32, "num_key_value_heads": 8, "conv_L_cache": 3, "conv_bias": False,
           "conv_dim": 2048, "conv_dim_out": 2048, "block_dim": 2048, "block_ff_dim": 12288,
           "full_attn_idxs": [2, 5, 8, 10, 12, 14], "max_position_embeddings": 128000, "norm_eps": 1e-5}
    est = model_from_config(cfg).estimate(1000)
    assert est.kv_bytes_per_token == 12_288
    assert est.state_bytes_in_pool == 81_920
    assert est.kv_bytes == 12_288 * 1000 + 81_920
    # the newer spelling, layer_types, names the same layers
    types = ["full_attention" if i in (2, 5, 8, 10, 12, 14) else "conv" for i in range(16)]
    assert model_from_config({**cfg, "layer_types": types}).estimate(1000).kv_bytes == est.kv_bytes
    # TP 2: the conv state splits (2,048 / 2 channels), attention 4 KV heads per GPU: 6,144 B/token + 40,960 B
    est2 = model_from_config(cfg).estimate(1000, tp=2)
    assert est2.kv_bytes_per_token == 6_144 and est2.state_bytes_in_pool == 40_960


def test_falcon_40b_rw_config():
    # tiiuae/falcon-40b's original RW config: model_type RefinedWeb, n_layer 60, n_head 128, n_head_kv 8,
    # hidden_size 8192 -> 8 KV heads of 64: 2 x 60 x 8 x 64 x 2 B = 122,880 B/token (as the new decoder above).
    cfg = {"architectures": ["RWForCausalLM"], "model_type": "RefinedWeb", "n_layer": 60, "n_head": 128,
           "n_head_kv": 8, "hidden_size": 8192, "parallel_attn": True, "alibi": False, "bias": False}
    assert per_token(cfg) == 122_880


@pytest.mark.parametrize("extra", [
    {"order_of_interleaved_layers": "local_attn_first", "sliding_window_pattern": 4, "sliding_window": 4096},
    {"layerdrop": 0.0, "do_layer_norm_before": True, "word_embed_proj_dim": 4096},
    {"mamba_chunk_size": 256},
])
def test_known_harmless_fields_pass(extra):
    assert per_token({**LLAMA, **extra}) > 0


def test_minimax_m2_attn_type_list():
    # MiniMaxAI/MiniMax-M2 shape: 62 layers, 48 heads, 8 KV heads, head_dim 128, attn_type_list all 1 (softmax):
    # vLLM MiniMaxM2Attention on every layer: 2 x 62 x 8 x 128 x 2 B = 253,952 B/token.
    cfg = {"architectures": ["MiniMaxM2ForCausalLM"], "model_type": "minimax_m2", "num_hidden_layers": 62,
           "num_attention_heads": 48, "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 3072,
           "attn_type_list": [1] * 62, "mtp_transformer_layers": 1, "max_position_embeddings": 196608}
    assert per_token(cfg) == 253_952
    # the residual alpha / beta scales MiniMax configs may carry (vLLM MiniMaxText01DecoderLayer) change no KV
    scales = {"full_attn_alpha_factor": 3.56, "full_attn_beta_factor": 1.0, "linear_attn_alpha_factor": 3.56,
              "linear_attn_beta_factor": 1.0, "mlp_alpha_factor": 3.56, "mlp_beta_factor": 1.0}
    assert per_token({**cfg, **scales}) == 253_952
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**cfg, "attn_type_list": [0] + [1] * 61})
    assert exc.value.field == "config.attn_type_list"


def test_bamba_attn_layer_indices():
    # ibm-ai-platform/Bamba-9B shape: 32 layers, attention at attn_layer_indices [9, 18, 27] (32 heads, 8 KV heads,
    # head_dim 128), Mamba2 elsewhere: 128 heads x 64, 1 group, state 128, conv kernel 4 (vLLM mamba2_state_shape;
    # SSM dtype 'auto' = the conv dtype, BF16).
    # Attention: 3 x 2 x 8 x 128 x 2 B = 12,288 B/token.
    # Per Mamba layer: conv 3 x (8,192 + 2 x 1 x 128) x 2 B = 50,688 B; SSM 128 x 64 x 128 x 2 B = 2,097,152 B;
    # 29 layers x 2,147,840 B = 62,287,360 B per sequence.
    cfg = {"architectures": ["BambaForCausalLM"], "model_type": "bamba", "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "attn_layer_indices": [9, 18, 27],
           "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4,
           "mamba_expand": 2, "mamba_chunk_size": 256, "mamba_conv_bias": True, "mamba_proj_bias": False,
           "max_position_embeddings": 262144}
    est = model_from_config(cfg).estimate(1000)
    assert est.kv_bytes_per_token == 12_288
    assert est.state_bytes_in_pool == 62_287_360


def test_hunyuan_cross_layer_attention():
    # use_cla false: every layer stores its KV (2 x 32 x 8 x 128 x 2 = 131,072 B/token); true: refused, not priced
    cfg = {**LLAMA, "architectures": ["HunYuanDenseV1ForCausalLM"], "use_cla": False, "cla_share_factor": 2}
    assert per_token(cfg) == 131_072
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**cfg, "use_cla": True})
    assert exc.value.field == "config.use_cla"


# --- Attention-free Mamba and Falcon-H1 (vLLM mamba.py, mamba2.py, falcon_h1.py; layers/mamba/mamba_utils.py) ---
# State dtypes: conv state in vLLM's mamba_cache_dtype 'auto' (the model dtype; kvplan assumes BF16, 2 B), SSM state
# 'auto' = the conv dtype (MambaStateDtypeCalculator._mamba_state_dtype), so 2 B everywhere below.

def test_falcon_mamba_7b():
    # tiiuae/falcon-mamba-7b: vLLM MambaForCausalLM.get_mamba_state_shape_from_config -> mamba1_state_shape(
    # intermediate_size=8,192, state_size=16, conv_kernel=4); expand (16) is not read.
    # Per layer: conv 8,192 x 3 x 2 B = 49,152 B; SSM 8,192 x 16 x 2 B = 262,144 B; 311,296 B.
    # 64 layers: 19,922,944 B per sequence; no attention, no KV per token.
    est = model_from_config(load("falcon-mamba-7b")).estimate(1000)
    assert est.kv_bytes_per_token == 0
    assert est.state_bytes_in_pool == 19_922_944


def test_mamba_2_8b():
    # state-spaces/mamba-2.8b-hf: 64 layers, intermediate_size 5,120, state 16, conv 4 (n_layer is the same 64).
    # Per layer: 5,120 x 3 x 2 B = 30,720 B conv + 5,120 x 16 x 2 B = 163,840 B SSM = 194,560 B; x 64 = 12,451,840 B.
    est = model_from_config(load("mamba-2.8b-hf")).estimate(1000)
    assert est.kv_bytes_per_token == 0
    assert est.state_bytes_in_pool == 12_451_840


def test_mamba_codestral_7b():
    # mistralai/Mamba-Codestral-7B-v0.1: vLLM Mamba2ForCausalLM -> mamba2_state_shape(intermediate_size = expand x
    # hidden_size = 2 x 4,096 = 8,192, n_groups 8, num_heads 128, head_dim 64, state_size 128, conv_kernel 4).
    # Per layer: conv (8,192 + 2 x 8 x 128) x 3 x 2 B = 10,240 x 6 = 61,440 B; SSM 128 x 64 x 128 x 2 B = 2,097,152 B;
    # 2,158,592 B x 64 layers = 138,149,888 B per sequence.
    est = model_from_config(load("mamba-codestral-7b-v0.1")).estimate(1000)
    assert est.kv_bytes_per_token == 0
    assert est.state_bytes_in_pool == 138_149_888


def test_mamba2_inner_size_must_match_heads():
    # expand x hidden_size = 3 x 4,096 = 12,288 is not 128 heads x 64: kvplan refuses rather than guess.
    cfg = {**load("mamba-codestral-7b-v0.1"), "expand": 3}
    with pytest.raises(PlanInputError):
        layout_from_config(cfg)


# tiiuae/Falcon-H1-7B shape as quoted in public test code (fields that size the cache): 44 layers, 12 heads, 2 KV
# heads of 128, Mamba2 24 heads x 128 (mamba_d_ssm 3,072), 1 group, state 256, conv 4, max 262,144 positions.
FALCON_H1_7B = {"architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "hidden_size": 3072,
                "num_hidden_layers": 44, "num_attention_heads": 12, "num_key_value_heads": 2, "head_dim": 128,
                "intermediate_size": 12288, "vocab_size": 130048, "tie_word_embeddings": False,
                "mamba_d_state": 256, "mamba_n_groups": 1, "mamba_n_heads": 24, "mamba_d_head": 128,
                "mamba_d_ssm": 3072, "mamba_expand": 2, "mamba_d_conv": 4, "mamba_chunk_size": 128,
                "max_position_embeddings": 262144}


def test_falcon_h1_7b():
    # vLLM FalconH1ParallelHybrid: attention AND Mamba2 in all 44 layers.
    # KV: 44 x 2 (K, V) x 2 KV heads x 128 x 2 B = 45,056 B/token.
    # State per layer: conv (3,072 + 2 x 1 x 256) x 3 x 2 B = 21,504 B; SSM 24 x 128 x 256 x 2 B = 1,572,864 B;
    # 1,594,368 B x 44 = 70,152,192 B per sequence.
    est = model_from_config(FALCON_H1_7B).estimate(1000)
    assert est.kv_bytes_per_token == 45_056
    assert est.state_bytes_in_pool == 70_152_192


def test_falcon_h1_0_5b():
    # tiiuae/Falcon-H1-0.5B as quoted in NVIDIA Megatron-Bridge's tests (Apache-2.0): 36 layers, 8 heads, 2 KV heads of
    # 64; Mamba2 24 heads x 64, 1 group, state 128, conv 4; that quotation has no mamba_d_ssm, so vLLM's rule gives
    # int(mamba_expand x hidden_size) = 2 x 1,024 = 2,048, which is not 24 x 64 = 1,536: refused, not guessed.
    quoted = {"architectures": ["FalconH1ForCausalLM"], "attention_bias": False, "attention_dropout": 0.0,
              "attention_in_multiplier": 1.0, "attention_out_multiplier": 0.9375, "attn_layer_indices": None,
              "embedding_multiplier": 5.656854249492381, "head_dim": 64, "hidden_act": "silu", "hidden_size": 1024,
              "initializer_range": 0.02, "intermediate_size": 2048, "key_multiplier": 0.39062499999999994,
              "lm_head_multiplier": 0.0390625, "mamba_chunk_size": 128, "mamba_conv_bias": True, "mamba_d_conv": 4,
              "mamba_d_head": 64, "mamba_d_state": 128, "mamba_expand": 2, "mamba_n_groups": 1, "mamba_n_heads": 24,
              "mamba_norm_before_gate": False, "mamba_proj_bias": False, "mamba_rms_norm": False,
              "mamba_use_mlp": True, "max_position_embeddings": 16384, "mlp_bias": False,
              "mlp_multipliers": [0.8838834764831844, 0.5859375], "model_type": "falcon_h1",
              "num_attention_heads": 8, "num_hidden_layers": 36, "num_key_value_heads": 2, "projectors_bias": False,
              "rms_norm_eps": 1e-5, "rope_scaling": None, "rope_theta": 100000000000.0, "ssm_in_multiplier": 1.25,
              "ssm_multipliers": [0.3535533905932738, 0.25, 0.3535533905932738, 0.5, 0.3535533905932738],
              "ssm_out_multiplier": 0.23570226039551587, "tie_word_embeddings": False, "torch_dtype": "bfloat16",
              "vocab_size": 32784}
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(quoted)
    assert exc.value.field == "config.mamba_d_ssm"
    # With mamba_d_ssm 1,536 (24 x 64): KV 36 x 2 x 2 x 64 x 2 B = 18,432 B/token; state per layer conv
    # (1,536 + 2 x 128) x 3 x 2 B = 10,752 B + SSM 24 x 64 x 128 x 2 B = 393,216 B = 403,968 B; x 36 = 14,542,848 B.
    est = model_from_config({**quoted, "mamba_d_ssm": 1536}).estimate(1000)
    assert est.kv_bytes_per_token == 18_432
    assert est.state_bytes_in_pool == 14_542_848


def test_bamba_pp2_binding_stage_everywhere():
    # The Bamba-9B shape above (32 layers, attention at 9, 18, 27) at PP 2: vLLM get_pp_indices(32, 2) gives layers
    # 0-15 (attention 9; 15 Mamba layers) and 16-31 (attention 18, 27; 14 Mamba layers). At 100,000 tokens stage 1
    # binds: 2 x (2 x 8 x 128 x 2 B) = 8,192 B/token x 100,000 = 819,200,000 B + 14 x 2,147,840 = 30,069,760 B state,
    # against stage 0's 409,600,000 + 32,217,600. Per-group ceilings (2 attention + 15 Mamba layers) would say
    # 819,200,000 + 32,217,600: a GPU vLLM never builds.
    from planner.engines.capacity import theory_vs_engine
    cfg = {"architectures": ["BambaForCausalLM"], "model_type": "bamba", "num_hidden_layers": 32,
           "num_attention_heads": 32, "num_key_value_heads": 8, "hidden_size": 4096, "attn_layer_indices": [9, 18, 27],
           "mamba_n_heads": 128, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4,
           "mamba_expand": 2, "max_position_embeddings": 262144}
    model = model_from_config(cfg)
    est = model.estimate(100_000, pp=2)
    assert est.binding_stage == 1
    assert est.state_bytes_in_pool == 30_069_760
    assert est.kv_bytes == 819_200_000 + 30_069_760
    assert model.growing_bytes(100_000, pp=2) == 819_200_000  # the plan's byte methods: the same stage
    assert model.state_bytes_in_pool(100_000, pp=2) == 30_069_760
    view = theory_vs_engine(model, 100_000, pp=2)  # vLLM pages the same stage: 2 attention, 14 Mamba layers
    assert {t.kind: t.layers for t in view.types} == {"full": 2, "mamba": 14}


def test_kv_channels_and_max_attn_value_not_false_refusals():
    # Nemotron / Minitron exports carry Megatron's kv_channels beside head_dim; vLLM's NemotronAttention takes the
    # head size from head_dim (else hidden_size // heads). Equal: read, no change (32 layers x 2 x 8 x 128 x 2 B =
    # 131,072 B/token); different: refused by name, since kvplan cannot tell which the weights follow.
    cfg = {"architectures": ["NemotronForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 48,
           "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 4096, "kv_channels": 128,
           "max_position_embeddings": 4096}
    assert per_token(cfg) == 131_072
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**cfg, "kv_channels": 96})
    assert exc.value.field == "config.kv_channels"
    # Grok-1's max_attn_value caps attention scores (vLLM grok1.py); 64 layers x 2 x 8 x 128 x 2 B = 262,144 B/token
    grok = {"architectures": ["Grok1ModelForCausalLM"], "num_hidden_layers": 64, "num_attention_heads": 48,
            "num_key_value_heads": 8, "hidden_size": 6144, "head_dim": 128, "max_attn_value": 30.0,
            "attn_output_multiplier": 0.08838834764831845, "max_position_embeddings": 8192}
    assert per_token(grok) == 262_144


def test_phi3_mini_4k_sliding_window_every_layer():
    # microsoft/Phi-3-mini-4k-instruct: vLLM Phi3ForCausalLM is its LlamaForCausalLM; with no layer_types,
    # LlamaAttention passes no per-layer window and vLLM's Attention takes cache_config.sliding_window (the config's
    # 2,047) on every layer. 32 layers x 2 x 32 KV heads x 96 (3,072 / 32) x 2 B = 393,216 B/token up to 2,047 tokens;
    # past it each layer keeps 2,047 tokens: 32 x 2,047 x 12,288 B = 804,913,152 B.
    model = model_from_config(load("phi-3-mini-4k-instruct"))
    assert model.estimate(1_000).kv_bytes == 393_216_000
    assert model.estimate(4_096).kv_bytes == 804_913_152


# ---------------------------------------------------------------------------
# More real public configs (tests/data/configs/SOURCES.md): families the generic decoder reads
# ---------------------------------------------------------------------------

def test_olmo2_1124_7b():
    # allenai/OLMo-2-1124-7B: vLLM Olmo2Attention (olmo2.py) takes num_key_value_heads (32: MHA) and
    # head_dim = hidden_size // num_attention_heads = 4,096 / 32 = 128.
    # 2 (K, V) x 32 layers x 32 KV heads x 128 x 2 B (BF16) = 524,288 B/token; max_position_embeddings 4,096.
    model = model_from_config(load("olmo-2-1124-7b"))
    assert model.estimate(4096).kv_bytes_per_token == 524_288
    assert model.max_context_tokens == 4096
    assert model.layer_pattern == "F" * 32


def test_qwen2_0_5b_window_switched_off():
    # Qwen/Qwen2-0.5B: sliding_window 131,072 and max_window_layers 24, but use_sliding_window false: vLLM Qwen2Attention
    # (qwen2.py) passes a per-layer window only when use_sliding_window is true, and ModelConfig drops the window
    # when use_sliding_window is false, so every layer is full attention.
    # 2 x 24 layers x 2 KV heads x 64 (896 / 14) x 2 B = 12,288 B/token, growing past any window:
    # at 200,000 tokens (beyond the 131,072 the window would keep) 24 x 200,000 x 512 B = 2,457,600,000 B.
    model = model_from_config(load("qwen2-0.5b"))
    assert model.estimate(1000).kv_bytes_per_token == 12_288
    assert model.layer_pattern == "F" * 24
    assert model.estimate(200_000).kv_bytes == 2_457_600_000


def test_phi3_medium_4k_window_on_every_layer():
    # microsoft/Phi-3-medium-4k-instruct: Phi3ForCausalLM is vLLM's LlamaForCausalLM; no layer_types, so every layer
    # takes cache_config.sliding_window = the config's 2,047. 40 layers, 10 KV heads of 5,120 / 40 = 128:
    # per layer per token 2 x 10 x 128 x 2 B = 5,120 B; 40 x 5,120 = 204,800 B/token up to the window;
    # past it each layer keeps 2,047 tokens: 40 x 2,047 x 5,120 = 419,225,600 B.
    model = model_from_config(load("phi-3-medium-4k-instruct"))
    assert model.estimate(1000).kv_bytes == 204_800_000
    assert model.estimate(4096).kv_bytes == 419_225_600
    assert model.layer_pattern == "S" * 40


def test_phi3_medium_128k_window_past_context():
    # microsoft/Phi-3-medium-128k-instruct: same geometry, sliding_window 131,072 = max_position_embeddings, so the
    # window never binds inside the context: 4,096 tokens x 204,800 B = 838,860,800 B (the LongRoPE "su" scaling
    # changes positions, not KV).
    model = model_from_config(load("phi-3-medium-128k-instruct"))
    assert model.estimate(4096).kv_bytes == 838_860_800
    assert model.max_context_tokens == 131_072


def test_phi2_partial_rotary_no_kv_change():
    # microsoft/phi-2: vLLM PhiAttention (phi.py): MHA, head_size = 2,560 / 32 = 80; partial_rotary_factor 0.4 rotates
    # 32 of the 80 dims and changes no cache shape. 2 x 32 layers x 32 heads x 80 x 2 B = 327,680 B/token.
    model = model_from_config(load("phi-2"))
    assert model.estimate(2048).kv_bytes_per_token == 327_680
    assert model.max_context_tokens == 2048


def test_mpt_7b_real_config():
    # mosaicml/mpt-7b: d_model 4,096, n_heads 32, n_layers 32, attn_config without kv_n_heads -> vLLM MPTAttention keeps
    # one KV head per attention head (head 128); alibi, attn_impl, prefix_lm, qk_ln, softmax_scale change no cache shape.
    # 2 x 32 x 32 x 128 x 2 B = 524,288 B/token; max_seq_len 2,048.
    model = model_from_config(load("mpt-7b"))
    assert model.estimate(2048).kv_bytes_per_token == 524_288
    assert model.max_context_tokens == 2048


def test_gpt_j_6b():
    # EleutherAI/gpt-j-6b: n_layer 28, n_head 16, n_embd 4,096 (GPT-J config attribute_map); vLLM GPTJAttention: MHA,
    # head_size = 4,096 / 16 = 256 (rotary_dim 64 rotates part of it). 2 x 28 x 16 x 256 x 2 B = 458,752 B/token.
    model = model_from_config(load("gpt-j-6b"))
    assert model.estimate(2048).kv_bytes_per_token == 458_752
    assert model.max_context_tokens == 2048


def test_phi3_small_is_not_served_by_the_vendored_vllm():
    # microsoft/Phi-3-small-8k-instruct (Phi3SmallForCausalLM, block-sparse attention) is not in vLLM's
    # _TEXT_GENERATION_MODELS at the vendored commit (vLLM's _PREVIOUSLY_SUPPORTED_MODELS: up to 0.9.2); SGLang
    # still serves it (phi3_small.py), so it has a status: refused by name, with why.
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(load("phi-3-small-8k-instruct"))
    assert exc.value.field == "config.architectures"
    assert "Phi3SmallForCausalLM" in str(exc.value) and "0.9.2" in str(exc.value)


# --- Fields of real configs that change no KV in vLLM (were refused) or that vLLM reads (were unread) ---

def test_phi3_mini_128k_window_wider_than_context():
    # microsoft/Phi-3-mini-128k-instruct: sliding_window 262,144 beside max_position_embeddings 131,072. vLLM serves it
    # with that window on every layer; SlidingWindowSpec keeps at most max_model_len tokens per layer, so within the
    # context every layer holds every token, as full attention (kvplan refused this config before).
    # 32 layers x 2 x 32 KV heads x 96 (3,072 / 32) x 2 B = 393,216 B/token; at 131,072 tokens 51,539,607,552 B.
    model = model_from_config(load("phi-3-mini-128k-instruct"))
    assert model.layer_pattern == "F" * 32
    assert model.estimate(131_072).kv_bytes == 51_539_607_552
    assert model.estimate(1000).kv_bytes_per_token == 393_216
    assert ("sliding_window", "derived") in {(f.field, f.how) for f in model.config_report}


def test_phi4_mini_full_attn_mod_is_not_a_layout():
    # microsoft/Phi-4-mini-instruct config.json fields (https://huggingface.co/microsoft/Phi-4-mini-instruct): 32 layers,
    # 24 heads, 8 KV heads, hidden 3,072 (head 128), partial_rotary_factor 0.75, sliding_window 262,144 (past the
    # 131,072 positions), full_attn_mod 1, interpolate_factor 1. vLLM's Phi3ForCausalLM (LlamaForCausalLM) reads no
    # full_attn_mod. 2 x 32 x 8 x 128 x 2 B = 131,072 B/token.
    cfg = {"architectures": ["Phi3ForCausalLM"], "model_type": "phi3", "hidden_size": 3072, "num_hidden_layers": 32,
           "num_attention_heads": 24, "num_key_value_heads": 8, "max_position_embeddings": 131072,
           "original_max_position_embeddings": 4096, "partial_rotary_factor": 0.75, "sliding_window": 262144,
           "full_attn_mod": 1, "interpolate_factor": 1, "lm_head_bias": False, "mlp_bias": False}
    assert per_token(cfg) == 131_072
    # past 100,000 tokens the 262,144 window has not bound yet: 100,000 x 131,072 B
    assert model_from_config(cfg).estimate(100_000).kv_bytes == 13_107_200_000


def test_cohere2_and_arctic_weight_fields_pass():
    # CohereForAI/c4ai-command-r7b-12-2024 fields: 32 layers, 32 heads, 8 KV heads, head_dim 128, sliding_window 4,096 on
    # 3 layers of 4 (sliding_window_pattern 4, vLLM commandr.py); use_embedding_sharing / use_parallel_block describe
    # weights and dataflow (vLLM CohereDecoderLayer is always parallel and ties embeddings).
    # Past the window only the 8 full layers grow: 2 x 8 x 8 x 128 x 2 B = 32,768 B/token.
    cohere2 = {"architectures": ["Cohere2ForCausalLM"], "model_type": "cohere2", "hidden_size": 4096, "head_dim": 128,
               "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
               "max_position_embeddings": 8192, "sliding_window": 4096, "sliding_window_pattern": 4,
               "order_of_interleaved_layers": "local_attn_first", "use_embedding_sharing": True,
               "use_parallel_block": True, "use_parallel_embedding": True, "use_gated_activation": True,
               "position_embedding_type": "rope_gptj", "rotary_pct": 1.0}
    assert per_token(cohere2) == 32_768
    # Snowflake/snowflake-arctic-instruct fields: 35 layers, 56 heads, 8 KV heads, hidden 7,168 (head 128); vLLM
    # ArcticAttention reads no enc_index. 2 x 35 x 8 x 128 x 2 B = 143,360 B/token.
    arctic = {"architectures": ["ArcticForCausalLM"], "model_type": "arctic", "hidden_size": 7168,
              "num_hidden_layers": 35, "num_attention_heads": 56, "num_key_value_heads": 8,
              "max_position_embeddings": 4096, "enc_index": 0, "moe_layer_frequency": 1,
              "parallel_attn_mlp_res": True, "use_residual": True, "sliding_window": None}
    assert per_token(arctic) == 143_360


def test_hunyuan_attention_head_dim():
    # vLLM HunYuanAttention: head_dim if set and non-zero, else attention_head_dim, else hidden // heads.
    # 32 layers, 32 heads, 8 KV heads, hidden 4,096, attention_head_dim 64 and no head_dim -> head 64:
    # 2 x 32 x 8 x 64 x 2 B = 65,536 B/token (hidden // heads would say 128: 131,072, +100 %).
    cfg = {**LLAMA, "architectures": ["HunYuanDenseV1ForCausalLM"], "attention_head_dim": 64, "use_cla": False}
    model = model_from_config(cfg)
    assert model.estimate(1000).kv_bytes_per_token == 65_536
    assert ("attention_head_dim", "read") in {(f.field, f.how) for f in model.config_report}
    # head_dim set: it wins, attention_head_dim ignored (2 x 32 x 8 x 128 x 2 = 131,072)
    assert per_token({**cfg, "head_dim": 128}) == 131_072
    # head_dim null or 0 is "not set" for vLLM (a falsy head_dim): attention_head_dim decides
    assert per_token({**cfg, "head_dim": 0}) == 65_536


def test_afmoe_interval_beside_layer_types():
    # vLLM AfmoeAttention windows layer i when layer_types[i] == "sliding_attention"; global_attn_every_n_layers is not
    # read. 8 layers, 3 sliding then 1 full, twice; 4 KV heads, head_dim 128, window 2,048.
    # Past the window only the 2 full layers grow: 2 x 2 x 4 x 128 x 2 B = 4,096 B/token.
    types = (["sliding_attention"] * 3 + ["full_attention"]) * 2
    cfg = {"architectures": ["AfmoeForCausalLM"], "model_type": "afmoe", "hidden_size": 2048, "head_dim": 128,
           "num_hidden_layers": 8, "num_attention_heads": 16, "num_key_value_heads": 4, "sliding_window": 2048,
           "max_position_embeddings": 131072, "layer_types": types, "global_attn_every_n_layers": 4,
           "num_limited_groups": 1, "num_dense_layers": 2}
    assert per_token(cfg) == 4_096
    # without layer_types the interval would decide the layout, and kvplan does not read it: refused by name
    no_types = {k: v for k, v in cfg.items() if k != "layer_types"}
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(no_types)
    assert exc.value.field == "config.global_attn_every_n_layers"


def test_every_vendored_sglang_name_has_a_status():
    data = registry.vendored_sglang()
    assert data["source"]["repository"] == "sgl-project/sglang"
    names = data["architectures"]
    assert len(names) == 53  # SGLang-only text-generation EntryClass names of sglang 0.5.23
    vllm = registry.vendored()["architectures"]
    for name, where in names.items():
        assert name not in vllm, name  # SGLang-only: not in vLLM's list at the vendored commit
        assert registry.status(name)[0] != "unknown", name
        assert where["file"].startswith("python/sglang/srt/models/") and where["entry"].startswith("EntryClass")
        assert name in where["entry"]
    doc = (ROOT / "docs" / "architectures.md").read_text(encoding="utf-8")
    for name in names:
        assert f"| `{name}` |" in doc


def test_sglang_only_architecture_refused_with_its_reason():
    with pytest.raises(PlanInputError, match="block-diffusion") as exc:
        layout_from_config({**LLAMA, "architectures": ["LLaDA2MoeModelLM"]})
    assert exc.value.field == "config.architectures"


def test_minimax_m1_lightning_and_softmax_layers():
    # MiniMaxAI/MiniMax-M1 config.json (tests/data/configs/SOURCES.md): 80 layers, attn_type_list seven 0s then a 1,
    # ten times: 70 lightning-attention layers, 10 softmax-attention layers; 64 heads, 8 KV heads, head_dim 128.
    # vLLM MiniMaxText01DecoderLayer (minimax_text_01.py @ 98370df): softmax layers are Attention(num_kv_heads=8,
    # head_dim=128), no window: 10 x 2 (K, V) x 8 x 128 x 2 B (BF16) = 40,960 B per token.
    # Lightning layers: get_mamba_state_shape_from_config -> linear_attention_state_shape(64, TP, 128) = (64/TP, 128,
    # 128), dtype mamba_cache_dtype "auto" = the BF16 model dtype: 64 x 128 x 128 x 2 B = 2,097,152 B per layer and
    # sequence; x 70 = 146,800,640 B.
    est = model_from_config(load("minimax-m1")).estimate(1000)
    assert est.kv_bytes_per_token == 40_960
    assert est.state_bytes_in_pool == 146_800_640
    layout = layout_from_config(load("minimax-m1"))
    assert layout.layer_pattern == ("N" * 7 + "F") * 10
    # TP 8: 8 heads of state per GPU (64 / 8), one KV head per GPU (8 / 8).
    est8 = model_from_config(load("minimax-m1")).estimate(1000, tp=8)
    assert est8.state_bytes_in_pool == 146_800_640 // 8
    assert est8.kv_bytes_per_token == 40_960 // 8


def test_minimax_layer_types_spelling_and_default():
    # Hugging Face's native MiniMaxForCausalLM spells the mix as layer_types; vLLM MiniMaxText01Model maps
    # linear_attention -> 0, full_attention -> 1.
    cfg = {**load("minimax-m1"), "architectures": ["MiniMaxForCausalLM"], "model_type": "minimax"}
    types = cfg.pop("attn_type_list")
    cfg["layer_types"] = ["linear_attention" if t == 0 else "full_attention" for t in types]
    assert model_from_config(cfg).estimate(1000).kv_bytes_per_token == 40_960
    del cfg["layer_types"]
    # model_type minimax without layer_types: Hugging Face MiniMaxConfig.__post_init__ fills full_attention when
    # (i + 1) % 2, else linear_attention: 40 softmax layers, 40 lightning layers.
    # 40 x 2 x 8 x 128 x 2 B = 163,840 B per token; 40 x 64 x 128 x 128 x 2 B = 83,886,080 B per sequence.
    est = model_from_config(cfg).estimate(1000)
    assert (est.kv_bytes_per_token, est.state_bytes_in_pool) == (163_840, 83_886_080)
    assert layout_from_config(cfg).layer_pattern == "FN" * 40
    # The remote-code config class (model_type minimax_m1) sets no default: vLLM MiniMaxText01Model makes every
    # layer softmax attention: 80 x 2 x 8 x 128 x 2 B = 327,680 B per token, no state.
    est = model_from_config({**cfg, "model_type": "minimax_m1"}).estimate(1000)
    assert (est.kv_bytes_per_token, est.state_bytes_in_pool) == (327_680, 0)


def test_minimax_attn_type_list_of_wrong_length_refused():
    cfg = {**load("minimax-m1"), "attn_type_list": [0, 1] * 3}
    with pytest.raises(PlanInputError) as err:
        layout_from_config(cfg)
    assert err.value.field == "config.num_hidden_layers"
    cfg = {**load("minimax-m1"), "attn_type_list": [2] * 80}
    with pytest.raises(PlanInputError) as err:
        layout_from_config(cfg)
    assert err.value.field == "config.attn_type_list"


@pytest.mark.parametrize("config", [
    # the top level of meta-llama/Llama-3.2-11B-Vision-Instruct's config.json, language model in text_config
    {"architectures": ["MllamaForConditionalGeneration"], "model_type": "mllama",
     "text_config": {"model_type": "mllama_text_model", "num_hidden_layers": 40,
                     "cross_attention_layers": [3, 8, 13, 18, 23, 28, 33, 38]}},
    {"model_type": "mllama"},
])
def test_mllama_refused_as_vllm_no_longer_serves_it(config):
    # vLLM registry.py @ 0002bff: _PREVIOUSLY_SUPPORTED_MODELS["MllamaForConditionalGeneration"] = "0.10.2"
    # ("encoder-decoder models except whisper have been removed for V0 deprecation").
    with pytest.raises(PlanInputError) as err:
        layout_from_config(config)
    assert "0.10.2" in str(err.value) and "_PREVIOUSLY_SUPPORTED_MODELS" in str(err.value)


def test_every_sglang_entry_class_listed_with_a_category_and_a_status():
    # sglang 0.5.23 (PyPI wheel, sglang/srt/models): 225 top-level modules define EntryClass, naming 290 classes
    # (counted from the source, SOURCES in planner/data/sglang_text_generation_models.json).
    data = registry.vendored_sglang()
    entries = data["entry_classes"]
    assert len(entries) == 290
    assert len({e["file"] for e in entries.values()}) == 225
    vllm_names = set(registry.vendored()["architectures"])
    for name, e in entries.items():
        assert e["category"] in data["source"]["categories"], name
        # "vLLM also serves it" for the text-generation dict is checked against the vendored vLLM list itself
        assert (e["category"] == "vllm_text_generation") == (name in vllm_names), name
    sglang_only = {n for n, e in entries.items() if e["category"] == "text_generation"}
    assert set(data["architectures"]) == sglang_only
    missing = [n for n in sglang_only if registry.status(n)[0] == "unknown"]
    assert not missing, missing
    # the SGLang-only text decoders kvplan prices are the ones newer than the vendored vLLM commit
    assert {n for n in sglang_only if registry.status(n)[0] == "supported"} == {
        "DeepseekV4ForCausalLM", "Gemma4ForCausalLM", "Qwen3_5ForCausalLM", "Qwen3_5MoeForCausalLM"}


def test_sglang_only_sdar_refused_as_block_diffusion():
    with pytest.raises(PlanInputError) as err:
        layout_from_config({"architectures": ["SDARForCausalLM"], "num_hidden_layers": 2})
    assert "block-diffusion" in str(err.value)


@pytest.mark.parametrize("model_type", ["minimax_m1", "minimax_text_01", "minimax"])
def test_minimax_model_type_without_architectures(model_type):
    # No architectures: the model_type names the MiniMax-Text-01 reader (vLLM serves all three through
    # MiniMaxText01ForCausalLM); the same 40,960 B per token and 146,800,640 B of state as MiniMax-M1 above.
    cfg = {k: v for k, v in load("minimax-m1").items() if k != "architectures"}
    est = model_from_config({**cfg, "model_type": model_type}).estimate(1000)
    assert (est.kv_bytes_per_token, est.state_bytes_in_pool) == (40_960, 146_800_640)


def test_minimax_state_dtype_follows_mamba_cache_dtype_only():
    # vLLM linear_attention_state_dtype(model dtype, mamba_cache_dtype): FP32 state doubles the BF16 figure,
    # 70 x 64 x 128 x 128 x 4 B = 293,601,280 B; a chosen SSM dtype is not read (and says so).
    from planner.kv.formats import get_format
    est = model_from_config(load("minimax-m1"), state_format=get_format("fp32")).estimate(1000)
    assert est.state_bytes_in_pool == 293_601_280
    model = model_from_config(load("minimax-m1"), ssm_state_format=get_format("fp32"))
    assert model.estimate(1000).state_bytes_in_pool == 146_800_640
    assert any(f.field == "mamba_ssm_cache_dtype" and f.how == "ignored" for f in model.config_report)


# ---------------------------------------------------------------------------
# Zamba2 and PLaMo 2: Mamba2 hybrids with vLLM's own layer placement
# ---------------------------------------------------------------------------

def zamba2_2_7b():
    """Zyphra/Zamba2-2.7B-Instruct-v2's config.json as published up to ``n_mamba_heads`` (the vendored file, see
    SOURCES.md), completed with the four keys that follow it in that file and size the cache, at the values of the
    same 2.7B network's earlier published config (Zyphra/Zamba2-2.7B-instruct @ d3e3e11): 32 attention heads, 54
    layers, 32 KV heads, 2 shared blocks."""
    cfg = load("zamba2-2.7b-instruct-v2.partial")
    cfg.update({"num_attention_heads": 32, "num_hidden_layers": 54, "num_key_value_heads": 32, "num_mem_blocks": 2})
    return cfg


def test_zamba2_2_7b_instruct_v2():
    # vLLM zamba2.py (vllm-project/vllm @ 0527cbc): Zamba2Model builds one layer per layers_block_type entry; the 9
    # "hybrid" ones (6, 12, 18, 24, 30, 36, 42, 47, 51) each own an Attention (Zamba2Attention.__init__: "KV cache is
    # unique for every attention layer") of num_attention_heads = 32 heads, no KV-head count (MHA), head size
    # attention_head_dim = 2 x hidden_size // heads = 2 x 2,560 // 32 = 160 (Hugging Face Zamba2Config.__init__).
    # KV: 9 layers x 2 (K, V) x 32 heads x 160 x 2 B (BF16) = 184,320 B per token.
    # Every one of the 54 layers (hybrid ones too) runs a Mamba2 mixer; get_mamba_state_shape_from_config ->
    # mamba2_state_shape(intermediate = mamba_expand x hidden = 2 x 2,560 = 5,120, n_groups = mamba_ngroups = 1,
    # heads = n_mamba_heads = 80, head_dim = 5,120 // 80 = 64, state = mamba_d_state = 64, conv = mamba_d_conv = 4):
    # conv (5,120 + 2 x 1 x 64) x (4 - 1) x 2 B = 31,488 B; SSM 80 x 64 x 64 x 2 B (mamba_ssm_cache_dtype "auto" =
    # the conv dtype, BF16) = 655,360 B; 686,848 B per layer x 54 = 37,089,792 B per sequence.
    model = model_from_config(zamba2_2_7b())
    est = model.estimate(1000)
    assert est.kv_bytes_per_token == 184_320
    assert est.state_bytes_in_pool == 37_089_792
    assert est.kv_bytes == 184_320 * 1000 + 37_089_792
    assert model.layer_pattern.count("F") == 9 and model.layer_pattern.count("M") == 45
    assert [i for i, c in enumerate(model.layer_pattern) if c == "F"] == [6, 12, 18, 24, 30, 36, 42, 47, 51]
    # TP 2: 16 heads per GPU (9 x 2 x 16 x 160 x 2 = 92,160 B/token); Mamba2 conv (5,120 + 2 x 2 x 64) / 2 = 2,688
    # channels (extra_groups_for_head_shards: 1 group -> 2 at TP 2) x 3 x 2 B = 16,128 B, SSM 40 x 64 x 64 x 2 B =
    # 327,680 B; 343,808 B x 54 = 18,565,632 B.
    est2 = model_from_config(zamba2_2_7b()).estimate(1000, tp=2)
    assert est2.kv_bytes_per_token == 92_160 and est2.state_bytes_in_pool == 18_565_632
    # vLLM's Zamba2ForCausalLM does not implement SupportsPP: ModelConfig.verify_with_parallel_config refuses PP > 1
    with pytest.raises(PlanInputError, match="SupportsPP") as exc:
        model_from_config(zamba2_2_7b()).estimate(1000, pp=2)
    assert exc.value.field == "pp"
    # the config's own attention_head_dim 160 / mamba_headdim 64 agree here, but Zamba2Config recomputes them: reported
    report = {f.field: f.how for f in model.config_report}
    assert report["attention_head_dim"] == "ignored" and report["hybrid_layer_ids"] == "ignored"


def test_zamba2_geometry_refusals():
    cfg = zamba2_2_7b()
    for bad, field in (({"num_key_value_heads": 8}, "config.num_key_value_heads"),  # vLLM's attention is MHA
                       ({"num_hidden_layers": 53}, "config.num_hidden_layers"),    # one layer per entry
                       ({"n_mamba_heads": 96}, "config.mamba_expand"),            # 5,120 // 96 x 96 != 5,120
                       ({"layers_block_type": None}, "config.layers_block_type")):
        with pytest.raises(PlanInputError) as exc:
            layout_from_config({**cfg, **bad})
        assert exc.value.field == field, bad
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**cfg, "mamba_layer_period": 3})  # a layout field the reader does not know
    assert exc.value.field == "config.mamba_layer_period"
    with pytest.raises(PlanInputError) as exc:  # vLLM would window the hybrid layers' attention: not modelled here
        layout_from_config({**cfg, "sliding_window": 4096})
    assert exc.value.field == "config.sliding_window"
    # use_long_context: Hugging Face Zamba2Config.__init__ sets max_position_embeddings = 16384
    assert layout_from_config(cfg).max_context_tokens == 4096
    assert layout_from_config({**cfg, "use_long_context": True}).max_context_tokens == 16384


def test_zamba2_old_format_config_refused():
    # Zyphra/Zamba2-1.2B @ 4f8e85c, the pre-transformers-4.48 format ("m" / "g" layer codes, state_size,
    # conv_dimension, expansion_factor): Hugging Face Zamba2Config, which vLLM loads it with, reads none of these and
    # would fall back to its defaults (n_mamba_heads 8, mamba_d_state 64), which do not describe this checkpoint.
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(load("zamba2-1.2b-4f8e85c"))
    assert exc.value.field == "config.layers_block_type"


def plamo2_1b():
    """PLaMo 2 1B's published config (the vendored file, see SOURCES.md), under the architecture name pfnet's current
    checkpoint uses and vLLM serves (Plamo2ForCausalLM; vLLM tests/models/registry.py: pfnet/plamo-2-1b)."""
    return {**load("plamo-2-1b"), "architectures": ["Plamo2ForCausalLM"]}


def test_plamo2_1b():
    # vLLM plamo2.py (vllm-project/vllm @ 002fb90): is_mamba(config, i) with mamba_step 2 and 16 layers > 2 // 2:
    # layer i is attention when i % 2 == 1, so layers 1, 3, ..., 15 (8) are attention, 8 are Mamba2.
    # Plamo2AttentionMixer: num_key_value_heads = 1 KV head of hidden_size_per_head = 128; its Attention takes the
    # model-level window (ModelConfig.get_sliding_window: sliding_window = 2048).
    # KV while growing: 8 x 2 x 1 x 128 x 2 B = 4,096 B per token, up to 2,048 tokens per layer.
    # Mamba2 (get_mamba_state_shape_from_config): intermediate = mamba_num_heads x hidden_size_per_head = 32 x 128 =
    # 4,096, n_groups = 0, 32 heads x 128, state 64, conv 4: conv 4,096 x 3 x 2 B = 24,576 B; SSM 32 x 128 x 64 x 2 B =
    # 524,288 B; 548,864 B per layer x 8 = 4,390,912 B per sequence.
    model = model_from_config(plamo2_1b())
    assert model.layer_pattern == "MS" * 8
    est = model.estimate(1000)
    assert est.kv_bytes_per_token == 4_096
    assert est.state_bytes_in_pool == 4_390_912
    assert est.kv_bytes == 4_096 * 1000 + 4_390_912
    # past the window: 2,048 tokens x 4,096 B = 8,388,608 B + the state
    assert model_from_config(plamo2_1b()).estimate(100_000).kv_bytes == 8_388_608 + 4_390_912
    # Plamo2ForCausalLM implements SupportsPP: PP 2 splits 16 layers 8 / 8 (get_pp_indices), 4 attention and 4 Mamba2
    # layers a stage: 4 layers x 2,048 tokens x (2 x 1 x 128 x 2 B = 512 B) = 4,194,304 B + 4 x 548,864 B of state =
    # 6,389,760 B per GPU at 100,000 tokens
    assert model_from_config(plamo2_1b()).estimate(100_000, pp=2).kv_bytes == 4_194_304 + 2_195_456
    # without a sliding_window the attention layers are full attention
    full = {k: v for k, v in plamo2_1b().items() if k != "sliding_window"}
    assert model_from_config(full).layer_pattern == "MF" * 8
    assert model_from_config(full).estimate(100_000).kv_bytes == 4_096 * 100_000 + 4_390_912


def test_plamo2_published_architecture_name_and_step():
    # the file as published names "PlamoForCausalLM", which vLLM's registry does not list: refused, nearest named
    with pytest.raises(PlanInputError, match="Plamo2ForCausalLM") as exc:
        layout_from_config(load("plamo-2-1b"))
    assert exc.value.field == "config.architectures"
    # mamba_step 4 on 16 layers: attention where i % 4 == 2 (2, 6, 10, 14)
    assert model_from_config({**plamo2_1b(), "mamba_step": 4}).layer_pattern == "MMSM" * 4
    # a short model (2 layers <= 4 // 2): attention on the last layer only
    assert model_from_config({**plamo2_1b(), "mamba_step": 4, "num_hidden_layers": 2}).layer_pattern == "MS"
    for bad, field in (({"mamba_step": 1}, "config.mamba_step"), ({"mamba_enabled": False}, "config.mamba_enabled")):
        with pytest.raises(PlanInputError) as exc:
            layout_from_config({**plamo2_1b(), **bad})
        assert exc.value.field == field


# ---------------------------------------------------------------------------
# Kimi-Linear: KDA state on linear_attn_config.kda_layers, MLA latents elsewhere
# ---------------------------------------------------------------------------

def test_kimi_linear_tiny_random_published():
    # hyper-accel/tiny-random-kimi-linear's config.json (a partial quotation, see SOURCES.md: every key through
    # rms_norm_eps, which holds all the cache geometry). vLLM kimi_linear.py (vllm-project/vllm @ 01d9958):
    # KimiDecoderLayer builds KDA where is_kda_layer(i) (i + 1 in kda_layers [1, 2, 3]: layers 0-2) and MLA elsewhere
    # (layers 3 and 4: full_attn_layers [4] is never read, and layer 5 is MLA too).
    # MLA latent (MultiHeadLatentAttentionWrapper): kv_lora_rank + qk_rope_head_dim = 32 + 16 = 48 elements x 2 B (BF16)
    # = 96 B per layer and token; 2 layers = 192 B per token.
    # KDA (kda_state_shape(tp, num_heads 8, head_dim 64, conv_kernel_size 4); kda_state_dtype): q, k, v convolutions
    # 3 x 8 x 64 x (4 - 1) x 2 B = 9,216 B; recurrent 8 x 64 x 64 x 4 B (float32) = 131,072 B; 140,288 B x 3 layers =
    # 420,864 B per sequence.
    model = model_from_config(load("tiny-random-kimi-linear.partial"))
    assert model.layer_pattern == "LLLAA"
    est = model.estimate(1000)
    assert est.kv_bytes_per_token == 192
    assert est.state_bytes_in_pool == 420_864
    assert est.kv_bytes == 192 * 1000 + 420_864
    report = {f.field: f.how for f in model.config_report}
    assert report["linear_attn_config.full_attn_layers"] == "ignored"


def test_kimi_linear_48b_shape():
    # moonshotai/Kimi-Linear-48B-A3B-Instruct's cache geometry. No verbatim copy of its config.json was available to
    # vendor, so this is a shape test: the values are those its config.json publishes as quoted, identically, by
    # several independent public code bases (checkpoint-pinned fixtures; llama.cpp's kimi-linear.cpp maps 27 layers
    # to the 48B-A3B), and Transformers' kimi_linear page describes the pattern (KDA in most layers, MLA every fourth):
    # kda_layers 1-3, 5-7, ..., 25-26 (20 layers), full_attn_layers [4, 8, 12, 16, 20, 24, 27], KDA 32 heads x 128,
    # short conv 4; kv_lora_rank 512, qk_rope_head_dim 64, mla_use_nope true, q_lora_rank null.
    # MLA: 7 layers x (512 + 64) x 2 B = 8,064 B per token.
    # KDA per layer: conv 3 x 32 x 128 x 3 x 2 B = 73,728 B; recurrent 32 x 128 x 128 x 4 B = 2,097,152 B;
    # 2,170,880 B x 20 = 43,417,600 B per sequence.
    full = [4, 8, 12, 16, 20, 24, 27]
    cfg = {"architectures": ["KimiLinearForCausalLM"], "model_type": "kimi_linear", "num_hidden_layers": 27,
           "hidden_size": 2304, "num_attention_heads": 32, "num_key_value_heads": 32, "head_dim": 72,
           "kv_lora_rank": 512, "q_lora_rank": None, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
           "v_head_dim": 128, "mla_use_nope": True, "model_max_length": 1048576,
           "linear_attn_config": {"full_attn_layers": full, "head_dim": 128,
                                  "kda_layers": [i for i in range(1, 28) if i not in full], "num_heads": 32,
                                  "short_conv_kernel_size": 4}}
    est = model_from_config(cfg).estimate(1000)
    assert est.kv_bytes_per_token == 8_064
    assert est.state_bytes_in_pool == 43_417_600
    # TP 2: the MLA latent is replicated (8,064 B/token per GPU); KDA heads split 16 per GPU: conv 36,864 B +
    # recurrent 1,048,576 B = 1,085,440 B x 20 = 21,708,800 B.
    est2 = model_from_config(cfg).estimate(1000, tp=2)
    assert est2.kv_bytes_per_token == 8_064 and est2.state_bytes_in_pool == 21_708_800
    # what vLLM asserts, or a nested key kvplan does not read, is refused by name
    lac = cfg["linear_attn_config"]
    for bad, field in (({"mla_use_nope": False}, "config.mla_use_nope"),
                       ({"q_lora_rank": 1536}, "config.q_lora_rank"),
                       ({"linear_attn_config": {**lac, "num_kv_heads": 8}}, "config.linear_attn_config.num_kv_heads"),
                       ({"linear_attn_config": {**lac, "kda_layers": [0, 1]}}, "config.linear_attn_config.kda_layers"),
                       ({"linear_attn_config": None}, "config.linear_attn_config")):
        with pytest.raises(PlanInputError) as exc:
            layout_from_config({**cfg, **bad})
        assert exc.value.field == field, bad


def test_sidecar_without_producer_sets_no_kv_format_and_says_so(tmp_path, capsys):
    # An hf_quant_config.json with no quant_method and no ModelOpt producer: vLLM's ModelConfig sets quant_method only
    # for producer "modelopt", so the KV stays the model dtype. Llama-3.3-Nemotron-Super-49B: 49 attention layers x 2 x
    # 8 KV heads x 128 x 2 B = 200,704 B/token in BF16 (an FP8 KV would be 100,352), and the CLI says why.
    from planner.cli import main
    (tmp_path / "config.json").write_text((CONFIGS / "llama-3_3-nemotron-super-49b-v1.config.json").read_text())
    (tmp_path / "hf_quant_config.json").write_text(json.dumps({"quantization": {"kv_cache_quant_algo": "FP8"}}))
    assert main(["kv", "--config", str(tmp_path), "--context", "100k"]) == 0
    out = capsys.readouterr().out
    assert "KV bytes per token: 200,704 B" in out
    assert "no quant_method and no ModelOpt producer, so no KV format is taken from it" in out


def test_unknown_architecture_far_from_every_name_gets_no_misleading_suggestion():
    # "FooBarForCausalLM" shares only the "ForCausalLM" suffix with supported names: no nearest is named
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**LLAMA, "architectures": ["FooBarForCausalLM"]})
    assert exc.value.field == "config.architectures"
    assert "none is close to it" in str(exc.value) and "nearest" not in str(exc.value)


def test_olmo2_head_dim_other_than_hidden_over_heads_is_refused():
    # vLLM Olmo2Attention (olmo2.py, serving Olmo2ForCausalLM and Olmo3ForCausalLM) sizes heads hidden_size //
    # num_attention_heads = 4,096 / 32 = 128 and never reads head_dim: a config saying 64 is refused by name, one
    # saying 128 (or none) is read: 2 x 32 layers x 32 KV heads x 128 x 2 B = 524,288 B/token
    shape = {"architectures": ["Olmo2ForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 32,
             "num_key_value_heads": 32, "hidden_size": 4096, "max_position_embeddings": 4096}
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**shape, "head_dim": 64})
    assert exc.value.field == "config.head_dim" and exc.value.value == 64
    from planner.hf.config import model_from_config
    assert model_from_config({**shape, "head_dim": 128}).estimate(1).kv_bytes_per_token == 524_288
    assert model_from_config({**shape, "architectures": ["Olmo3ForCausalLM"]}).estimate(1).kv_bytes_per_token == 524_288
