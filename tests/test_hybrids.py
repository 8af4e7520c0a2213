"""2026 architectures to the byte: Mamba hybrids, DSA indexer caches, per-kind
geometry, checkpoint KV dtypes; and refusals where a config cannot be priced.

Configs are the bundled ones (planner/data/models, SOURCES.md). Every expected
value is derived by hand next to it from the engine's source:

* Mamba state: vLLM ``vllm/model_executor/layers/mamba/mamba_utils.py``,
  ``MambaStateShapeCalculator.mamba1_state_shape`` / ``mamba2_state_shape``
  (conv and temporal shapes, TP split) and ``MambaStateDtypeCalculator``
  (conv in the model dtype, SSM "auto" = conv dtype); Nemotron-H's SSM state in
  float32 by ``NemotronHForCausalLMConfig`` in ``vllm/model_executor/models/config.py``;
* DSA: vLLM ``deepseek_v2.py`` ``Indexer`` (key cache ``head_dim + head_dim // 128 * 4``
  bytes) and ``DeepseekV32ForCausalLM.verify_and_update_config`` ("auto" and fp8 -> fp8_ds_mla,
  656 B = 512 + 4 x 4 + 64 x 2);
* Mamba paging: ``HybridAttentionMambaModelConfig.verify_and_update_config``.
"""

import json

import pytest

from planner.catalog.entries import get_model
from planner.cli import main
from planner.hf.config import layout_from_config, model_from_config
from planner.engines.capacity import vllm_capacity
from planner.errors import PlanInputError
from planner.kv.formats import get_format
from planner.units import GiB

K128 = 131_072


def est(model_id, n=K128, fmt=None, tp=1):
    return get_model(model_id).estimate(n, fmt, tp)


# (model, kv format, TP) -> (growing bytes per token, per-sequence state in the pool)
GOLDEN = {
    # Nemotron-H 8B: 4 attention layers of 8 KV heads x 128; 24 Mamba2 layers.
    # TP 1 BF16: 4 x 2 x 8 x 128 x 2 B = 16,384 B/token. State per layer: conv (8,192 + 2 x 8 x 128) x 3 x 2 B
    # = 10,240 x 3 x 2 = 61,440 B; SSM 128 heads x 64 x 128 x 4 B (FP32) = 4,194,304 B; 24 x 4,255,744 = 102,137,856.
    ("nemotron-h-8b", "bf16", 1): (16_384, 102_137_856),
    # TP 8: 8 / 8 = 1 KV head: 4 x 2 x 1 x 128 x 2 = 2,048. conv 10,240 / 8 = 1,280 x 3 x 2 = 7,680 B
    # (8 groups divide by 8: no extra groups); SSM 128 / 8 = 16 x 64 x 128 x 4 = 524,288 B; 24 x 531,968 = 12,767,232.
    ("nemotron-h-8b", "bf16", 8): (2_048, 12_767_232),
    # FP8 KV halves attention only; --kv-cache-dtype does not set mamba_cache_dtype: state unchanged.
    ("nemotron-h-8b", "fp8", 1): (8_192, 102_137_856),
    ("nemotron-h-8b", "fp8", 8): (1_024, 12_767_232),
    # Jamba 1.5 Mini: attention at i % 8 == 4 (4 layers, 8 KV heads x 128), 28 Mamba1 layers,
    # I = mamba_expand 2 x 4,096 = 8,192, d_state 16, d_conv 4, state BF16 (vLLM 'auto').
    # Per layer: conv 8,192 x 3 x 2 = 49,152 B; SSM 8,192 x 16 x 2 = 262,144 B; 28 x 311,296 = 8,716,288.
    ("jamba-1.5-mini", "bf16", 1): (16_384, 8_716_288),
    # TP 8: conv 1,024 x 3 x 2 = 6,144; SSM 1,024 x 16 x 2 = 32,768; 28 x 38,912 = 1,089,536.
    ("jamba-1.5-mini", "bf16", 8): (2_048, 1_089_536),
    ("jamba-1.5-mini", "fp8", 1): (8_192, 8_716_288),
    ("jamba-1.5-mini", "fp8", 8): (1_024, 1_089_536),
    # DeepSeek-V3.2, 61 layers, replicated on TP. BF16 latent (512 + 64) x 2 = 1,152 B + indexer key
    # 128 + 128 / 128 x 4 = 132 B: 61 x 1,284 = 78,324. FP8 -> fp8_ds_mla 656 B: 61 x (656 + 132) = 48,068.
    ("deepseek-v3.2", "bf16", 1): (78_324, 0),
    ("deepseek-v3.2", "bf16", 8): (78_324, 0),
    ("deepseek-v3.2", "fp8", 1): (48_068, 0),
    ("deepseek-v3.2", "fp8", 8): (48_068, 0),
    # Gemma 4 26B-A4B: 5 global layers of 2 KV heads x 512 (K = V, both stored): 5 x 2 x (512 + 512) x 2 = 20,480;
    # TP 8: max(1, ceil(2 / 8)) = 1 head: 5 x 1 x 1,024 x 2 = 10,240. (Sliding layers stop at the window.)
    ("gemma-4-26b-a4b", "bf16", 1): (20_480, 0),
    ("gemma-4-26b-a4b", "bf16", 8): (10_240, 0),
    ("gemma-4-26b-a4b", "fp8", 1): (10_240, 0),
    ("gemma-4-26b-a4b", "fp8", 8): (5_120, 0),
    # MiMo-V2-Flash: 9 global layers of 4 KV heads x (192 K + 128 V): 9 x 4 x 320 x 2 = 23,040;
    # TP 8: 1 head: 9 x 320 x 2 = 5,760.
    ("mimo-v2-flash", "bf16", 1): (23_040, 0),
    ("mimo-v2-flash", "bf16", 8): (5_760, 0),
    ("mimo-v2-flash", "fp8", 1): (11_520, 0),
    ("mimo-v2-flash", "fp8", 8): (2_880, 0),
    # nvidia/Gemma-4-26B-A4B-NVFP4 declares quantization_config.kv_cache_scheme {dynamic false, num_bits 8,
    # type float} with quant_method modelopt: vLLM get_kv_cache_quant_algo_string (vllm/utils/torch_utils.py)
    # maps it to "fp8" -> "fp8_e4m3", 1 B per element, and resolve_kv_cache_dtype_string returns that for "auto".
    # Same layers as Gemma 4 26B-A4B above: 5 x 2 x (512 + 512) x 1 = 10,240; TP 8 (1 head): 5 x 1,024 x 1 = 5,120;
    # BF16 chosen: twice that.
    ("gemma-4-26b-a4b-nvfp4", None, 1): (10_240, 0),
    ("gemma-4-26b-a4b-nvfp4", None, 8): (5_120, 0),
    ("gemma-4-26b-a4b-nvfp4", "bf16", 1): (20_480, 0),
    ("gemma-4-26b-a4b-nvfp4", "bf16", 8): (10_240, 0),
}


@pytest.mark.parametrize("key", list(GOLDEN), ids=[f"{m}-{f}-tp{t}" for m, f, t in GOLDEN])
def test_per_token_and_state_equal_the_engine(key):
    model_id, fmt, tp = key
    per_token, state = GOLDEN[key]
    e = est(model_id, 300_000, fmt, tp)  # past every window
    assert e.kv_bytes_per_token == per_token
    assert e.state_bytes_in_pool == state


def test_deepseek_v32_native_is_vllms_auto_fp8_ds_mla():
    # vLLM resolves 'auto' to fp8_ds_mla for DeepSeek V3.2: 61 x (656 + 132) = 48,068 B/token.
    assert est("deepseek-v3.2").kv_bytes_per_token == 48_068


def test_gemma4_sliding_layers_use_their_own_geometry():
    # 25 sliding layers x 8 KV heads x (256 + 256) x 2 B = 204,800 B/token, capped at 1,024 tokens:
    # 209,715,200 B; at 131,072 tokens the global layers add 20,480 x 131,072 = 2,684,354,560 B.
    assert est("gemma-4-26b-a4b").kv_bytes == 2_684_354_560 + 209_715_200


def test_mimo_attention_chunk_size_is_not_llama4():
    # MiMo's attention_chunk_size 128 is not Llama 4 chunked attention: reported as ignored, no chunked layers.
    m = get_model("mimo-v2-flash")
    assert not any(g.name.startswith("chunked") for g in m.groups)
    assert any(f.field == "attention_chunk_size" and f.how == "ignored" for f in m.config_report)
    # 39 sliding layers x 8 heads x 320 x 2 = 199,680 B/token up to 128 tokens: 25,559,040 B.
    assert est("mimo-v2-flash", 128).kv_bytes == 128 * (23_040 + 199_680)


def test_mimo_sliding_layers_take_sliding_window_size():
    # vLLM MiMoV2FlashDecoderLayer passes config.sliding_window_size to its sliding layers (mimo_v2_flash.py).
    # With sliding_window 4,096 and sliding_window_size 128, at 300,000 tokens: 9 global layers
    # 300,000 x 23,040 = 6,912,000,000 B + 39 sliding layers 128 x 199,680 = 25,559,040 B.
    cfg = json.loads(open("planner/data/models/mimo-v2-flash.config.json").read())
    cfg["sliding_window"] = 4096
    m = model_from_config(cfg)
    assert m.estimate(300_000).kv_bytes == 6_912_000_000 + 25_559_040
    assert ("sliding_window", "ignored") in {(f.field, f.how) for f in m.config_report}


def test_gemma4_global_kv_heads_only_with_k_eq_v():
    # vLLM Gemma4DecoderLayer: num_kv_heads = num_global_key_value_heads only if attention_k_eq_v, else
    # num_key_value_heads (8); head_dim = global_head_dim (512) either way: 5 x 8 x (512 + 512) x 2 = 81,920 B/token.
    cfg = json.loads(open("planner/data/models/gemma-4-26b-a4b.config.json").read())
    cfg["text_config"]["attention_k_eq_v"] = False
    m = model_from_config(cfg)
    assert m.estimate(300_000).kv_bytes_per_token == 81_920
    assert ("num_global_key_value_heads", "ignored") in {(f.field, f.how) for f in m.config_report}


def test_layer_patterns():
    assert get_model("nemotron-h-8b").layer_pattern.count("M") == 24
    assert get_model("nemotron-h-8b").layer_pattern.count("F") == 4
    jamba = get_model("jamba-1.5-mini").layer_pattern
    assert [i for i, c in enumerate(jamba) if c == "F"] == [4, 12, 20, 28]
    mimo = get_model("mimo-v2-flash").layer_pattern
    assert [i for i, c in enumerate(mimo) if c == "F"] == [0, 5, 11, 17, 23, 29, 35, 41, 47]


def test_checkpoint_kv_scheme_is_read_not_defaulted():
    report = {(f.field, f.how) for f in get_model("gemma-4-26b-a4b-nvfp4").config_report}
    assert ("quantization_config.kv_cache_scheme", "read") in report
    assert ("kv_format", "defaulted") not in report


def _llama_with(quant):
    cfg = json.loads(open("planner/data/models/llama-3.1-8b.config.json").read())
    cfg["quantization_config"] = quant
    return cfg


# Llama 3.1 8B with an FP8 KV: 32 layers x 2 x 8 KV heads x 128 x 1 B = 65,536 B/token.
@pytest.mark.parametrize("quant", [
    # ModelOpt string algorithm ("FP8" -> fp8_e4m3, get_kv_cache_quant_algo_string), top level and nested.
    {"quant_method": "modelopt", "quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"},
    {"quant_method": "modelopt", "quantization": {"quant_algo": "NVFP4", "kv_cache_quant_algo": "FP8"}},
    # compressed-tensors: Attention.__init__ sets the cache dtype to fp8 when kv_cache_scheme is set and it is auto.
    {"quant_method": "compressed-tensors", "kv_cache_scheme": {"num_bits": 8, "type": "float", "dynamic": False}},
])
def test_kv_schemes_vllm_follows_to_fp8(quant):
    assert model_from_config(_llama_with(quant)).estimate(1).kv_bytes_per_token == 65_536


@pytest.mark.parametrize("quant, field", [
    # vLLM maps a ModelOpt dict only when dynamic is False (else it falls back to the model dtype).
    ({"quant_method": "modelopt", "kv_cache_scheme": {"num_bits": 8, "type": "float", "dynamic": True}},
     "config.quantization_config.kv_cache_scheme"),
    # MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP maps "mixed_precision" to "auto" (the model dtype).
    ({"quant_method": "modelopt", "quantization": {"kv_cache_quant_algo": "MIXED_PRECISION"}},
     "config.quantization_config.quantization.kv_cache_quant_algo"),
    ({"quant_method": "compressed-tensors", "kv_cache_scheme": {"num_bits": 8, "type": "int"}},
     "config.quantization_config.kv_cache_scheme"),
    # Neither resolver reads a KV scheme under another quant_method.
    ({"quant_method": "fp8", "kv_cache_scheme": {"num_bits": 8, "type": "float", "dynamic": False}},
     "config.quantization_config.kv_cache_scheme"),
])
def test_kv_schemes_vllm_does_not_store_as_fp8_are_refused(quant, field):
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(_llama_with(quant))
    assert exc.value.field == field


@pytest.mark.parametrize("quant", [
    {"quant_method": "modelopt", "kv_cache_quant_algo": "NVFP4"},
    {"quant_method": "modelopt", "kv_cache_scheme": {"num_bits": 4, "type": "float", "dynamic": False}},
])
def test_modelopt_nvfp4_kv(quant):
    # vLLM get_kv_cache_quant_algo_string maps NVFP4 to "nvfp4": head_size // 2 + head_size // 16 bytes per head
    # (nvfp4_kv_cache_full_dim): 128 // 2 + 128 // 16 = 72 B. Llama 3.1 8B: 32 x 2 x 8 x 72 = 36,864 B/token.
    assert model_from_config(_llama_with(quant)).estimate(1).kv_bytes_per_token == 36_864


def test_a_chosen_kv_format_overrides_a_refused_scheme():
    cfg = _llama_with({"quant_method": "modelopt", "kv_cache_quant_algo": "MIXED_PRECISION"})
    layout = layout_from_config(cfg, main_format=get_format("bf16"))
    assert ("quantization_config.kv_cache_quant_algo", "ignored") in {(f.field, f.how) for f in layout.report}


# ---------------------------------------------------------------------------
# vLLM paging of Mamba hybrids (HybridAttentionMambaModelConfig)
# ---------------------------------------------------------------------------

def test_nemotron_h_budget_in_vllm_terms():
    # attention page per token 2 x 8 x 128 x 2 = 4,096 B; Mamba page 4,255,744 B (above);
    # block = 16 x cdiv(4,255,744, 16 x 4,096) = 16 x 65 = 1,040 tokens; page = 1,040 x 4,096 = 4,259,840 B.
    # 4 attention vs 24 Mamba layers: group size 4 (24 >= 1.5 x 4): 1 + 6 = 7 KV-cache groups.
    # 40 GiB = 42,949,672,960 B // 4,259,840 = 10,082 // 4 = 2,520 blocks; tokens 2,520 // 7 x 1,040 = 374,400;
    # per 8,192-token request: cdiv(8,192, 1,040) = 8 attention blocks + 6 Mamba pages = 14: 2,520 / 14 = 180.
    cap = vllm_capacity(get_model("nemotron-h-8b"), 40 * GiB, 8_192)
    assert (cap.block_size, cap.page_size_bytes, cap.num_kv_groups) == (1_040, 4_259_840, 7)
    assert (cap.num_blocks, cap.max_tokens, cap.blocks_per_request) == (2_520, 374_400, 14)
    assert cap.max_concurrency == 180.0


def test_jamba_budget_in_vllm_terms():
    # Mamba page 311,296 B; block = 16 x cdiv(311,296, 65,536) = 16 x 5 = 80; page 80 x 4,096 = 327,680 B;
    # 4 + 28 layers: group size 4, 1 + 7 = 8 groups; 42,949,672,960 // 327,680 // 4 = 131,072 // 4 = 32,768 blocks;
    # tokens 32,768 // 8 x 80 = 327,680.
    cap = vllm_capacity(get_model("jamba-1.5-mini"), 40 * GiB, 262_144)
    assert (cap.block_size, cap.page_size_bytes, cap.num_blocks, cap.max_tokens) == (80, 327_680, 32_768, 327_680)


# ---------------------------------------------------------------------------
# The CLI: state everywhere, refusals in one line
# ---------------------------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_hybrid_json_has_state_and_budget(capsys):
    code, out, _ = run(capsys, "kv", "--config", "planner/data/models/nemotron-h-8b.config.json", "--context", "128k",
                       "--json", "--kv-budget-gib", "40")
    data = json.loads(out)
    assert code == 0 and data["state_bytes"] == 102_137_856 and data["state_bytes_in_pool"] == 102_137_856
    assert data["num_blocks"] == 2_520 and data["max_tokens"] == 374_400 and data["max_concurrency"] > 0


def test_cli_hybrid_text_shows_state(capsys):
    code, out, _ = run(capsys, "kv", "--model", "nemotron-h-8b", "--context", "1000")
    assert code == 0 and "state per sequence: 102,137,856 B" in out


def test_cli_state_bytes_for_a_coefficient(capsys):
    # 16,384 B/token x 1,000 + 102,137,856 B of state in the pool = 118,521,856 B.
    code, out, _ = run(capsys, "kv", "--bytes-per-token", "16384", "--state-bytes", "102137856", "--context", "1000",
                       "--json")
    data = json.loads(out)
    assert data["kv_bytes"] == 118_521_856 and data["state_bytes"] == 102_137_856


@pytest.mark.parametrize("change, field", [
    ({"hybrid_override_pattern": "X" * 52}, "config.hybrid_override_pattern[0]"),   # unknown layer kind
    ({"ssm_state_size": None}, "config.ssm_state_size"),                             # a missing state field
    ({"hybrid_override_pattern": None}, "config.layer_types"),                       # state fields, no layer mix
])
def test_cli_unpriceable_hybrid_exits_2_naming_the_field(capsys, tmp_path, change, field):
    cfg = json.loads(open("planner/data/models/nemotron-h-8b.config.json").read())
    cfg.update(change)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    code, _, err = run(capsys, "kv", "--config", str(path))
    assert code == 2 and field in err and err.strip().count("\n") == 0


def test_attention_chunk_size_outside_llama4_is_refused():
    cfg = {"model_type": "foo", "num_hidden_layers": 4, "num_attention_heads": 8, "num_key_value_heads": 8,
           "head_dim": 64, "attention_chunk_size": 128}
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(cfg)
    assert exc.value.field == "config.attention_chunk_size"


def test_plan_counts_a_reported_state_once_per_session():
    # Nemotron-H's state is 102,137,856 B per sequence (above); a reported 1,000 B replaces it:
    # one session's bytes fall by 102,137,856 - 1,000 = 102,136,856 B.
    from planner.plan import PlanInputs, plan

    base = dict(model_id="nemotron-h-8b", context_tokens=8_192, output_tokens=0, gpus_per_replica=1)
    layout = plan(PlanInputs(**base))
    reported = plan(PlanInputs(**base, state_bytes_per_sequence=1_000))
    assert layout.per_session_bytes - reported.per_session_bytes == 102_136_856


def test_tp_that_does_not_split_the_state_is_refused():
    # vLLM divides Mamba state exactly (mamba_utils.divide): at TP 3 Nemotron-H's conv channels are
    # 8,192 + 2 x 3 x 128 = 8,960 (8 groups raised to 3 by extra_groups_for_head_shards), not a multiple of 3.
    with pytest.raises(PlanInputError) as exc:
        get_model("nemotron-h-8b").estimate(1_000, tp=3)
    assert exc.value.field == "tp" and "8,960" in exc.value.allowed


def test_fields_that_could_change_kv_are_reported_when_ignored():
    report = {(f.field, f.how) for f in get_model("deepseek-v3.2").config_report}
    assert ("num_nextn_predict_layers", "ignored") in report
    assert ("expand", "ignored") in {(f.field, f.how) for f in get_model("nemotron-h-8b").config_report}


def test_nemotron_nano_9b_v2_attention_block_672_as_vllm_reports():
    # vLLM issue #24280 (2025-09): "672 tokens for nvidia/NVIDIA-Nemotron-Nano-9B-v2", the attention block size vLLM
    # sets so that an attention page holds a Mamba page, at a vLLM whose SSM cache followed the model dtype (BF16).
    # Config fields as quoted in a public test fixture (56 layers, 27 Mamba2, 4 attention; H 128, P 80, G 8, N 128).
    # Mamba page: conv (10,240 + 2 x 8 x 128) x 3 x 2 B = 73,728 + SSM 128 x 80 x 128 x 2 B = 2,621,440 = 2,695,168 B;
    # attention page per token 2 x 8 x 128 x 2 = 4,096 B; block = 16 x cdiv(2,695,168, 65,536) = 16 x 42 = 672.
    from planner.engines.capacity import theory_vs_engine

    cfg = {"model_type": "nemotron_h", "num_hidden_layers": 56, "hidden_size": 4480, "num_attention_heads": 40,
           "num_key_value_heads": 8, "head_dim": 128,
           "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
           "ssm_state_size": 128, "conv_kernel": 4, "mamba_num_groups": 8, "mamba_num_heads": 128,
           "mamba_head_dim": 80, "max_position_embeddings": 131072, "mamba_ssm_cache_dtype": "bfloat16"}
    view = theory_vs_engine(model_from_config(cfg), 8_192)
    assert {(t.kind, t.block_size, t.page_size_bytes) for t in view.types} == {("full", 672, 672 * 4_096),
                                                                               ("mamba", 672, 672 * 4_096)}


# ---------------------------------------------------------------------------
# Other dialects (small configs shaped like the public ones; arithmetic by hand)
# ---------------------------------------------------------------------------

def test_layers_block_type_with_granite_style_mamba_fields():
    # 4 layers: mamba, mamba, attention, mamba. Mamba2 fields spelled mamba_n_heads / mamba_d_head / mamba_n_groups /
    # mamba_d_state / mamba_d_conv (Granite 4.0-H, Bamba). H 8, P 64 (I = 512), G 1, N 128, K 4, BF16 state.
    # conv (512 + 2 x 1 x 128) x 3 x 2 B = 768 x 6 = 4,608 B; SSM 8 x 64 x 128 x 2 B = 131,072 B; 3 x 135,680 = 407,040 B.
    # attention: 1 layer x 2 x 4 KV heads x 64 x 2 B = 1,024 B/token.
    cfg = {"model_type": "granitemoehybrid", "num_hidden_layers": 4, "hidden_size": 512, "num_attention_heads": 8,
           "num_key_value_heads": 4, "layers_block_type": ["mamba", "mamba", "attention", "mamba"],
           "mamba_n_heads": 8, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4,
           "mamba_expand": 2}
    e = model_from_config(cfg).estimate(1_000)
    assert e.kv_bytes_per_token == 1_024 and e.state_bytes_in_pool == 407_040
    # TP 2: the single group does not divide by 2, so vLLM raises it to 2 groups: conv (512 + 2 x 2 x 128) / 2
    # = 512 channels x 3 x 2 B = 3,072 B; SSM 4 x 64 x 128 x 2 = 65,536 B; 3 x 68,608 = 205,824 B.
    assert model_from_config(cfg).estimate(1_000, tp=2).state_bytes_in_pool == 205_824


def test_shared_kv_layers_store_none():
    # 6 layers, the last 2 reuse earlier KV: 4 x 2 x 8 x 128 x 2 = 16,384 B/token (not 6 x 4,096 = 24,576).
    cfg = {"model_type": "gemma3n_text", "num_hidden_layers": 6, "num_attention_heads": 8, "num_key_value_heads": 8,
           "head_dim": 128, "num_kv_shared_layers": 2, "layer_types": ["full_attention"] * 6}
    m = model_from_config(cfg)
    assert m.estimate(10).kv_bytes_per_token == 16_384 and m.layer_pattern == "FFFFss"


def test_hybrid_layer_pattern_of_the_wrong_length_is_refused():
    cfg = json.loads(open("planner/data/models/mimo-v2-flash.config.json").read())
    cfg["hybrid_layer_pattern"] = cfg["hybrid_layer_pattern"][:-1]
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(cfg)
    assert exc.value.field == "config.hybrid_layer_pattern"


# ---------------------------------------------------------------------------
# Garbage in the new dialects: an error naming a config field, never a crash
# ---------------------------------------------------------------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 10**6), st.floats(allow_nan=True), st.text(max_size=4))
_VALUES = st.one_of(
    _SCALARS,
    st.text(alphabet="M*-EX", max_size=60),
    st.lists(st.one_of(_SCALARS, st.sampled_from(["mamba", "attention", "mlp", "full", "shared", "kda"])), max_size=60),
    st.dictionaries(st.sampled_from(["kv_cache_scheme", "kv_cache_quant_algo", "type", "num_bits", "quant_method"]),
                    st.one_of(_SCALARS, st.dictionaries(st.sampled_from(["type", "num_bits"]), _SCALARS, max_size=2)),
                    max_size=3),
)
_KEYS = st.sampled_from([
    "hybrid_override_pattern", "layers_block_type", "attn_layer_period", "attn_layer_offset", "hybrid_layer_pattern",
    "mamba_num_heads", "mamba_head_dim", "n_groups", "ssm_state_size", "conv_kernel", "mamba_expand", "mamba_d_state",
    "mamba_d_conv", "mamba_ssm_cache_dtype", "num_global_key_value_heads", "global_head_dim", "swa_num_key_value_heads",
    "swa_head_dim", "swa_v_head_dim", "swa_num_attention_heads", "index_topk", "index_head_dim", "indexer_types",
    "quantization_config", "num_kv_shared_layers", "attention_chunk_size", "kv_lora_rank", "qk_rope_head_dim",
    "layer_types", "model_type", "sliding_window",
])


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=8))
def test_garbage_in_hybrid_dialects_raises_only_plan_input_errors(change):
    cfg = json.loads(open("planner/data/models/nemotron-h-8b.config.json").read())
    cfg.update(change)
    try:
        model = model_from_config(cfg)
    except PlanInputError as exc:
        assert str(exc.field).startswith("config")
        return
    for tp in (1, 8):
        try:
            e = model.estimate(1_000, tp=tp)
        except PlanInputError as exc:
            assert exc.field == "tp"
            continue
        assert e.kv_bytes >= e.state_bytes_in_pool >= 0


def test_cli_mamba_ssm_cache_dtype_as_vllms_flag(capsys):
    # --mamba-ssm-cache-dtype bfloat16: SSM 128 x 64 x 128 x 2 B = 2,097,152 B + conv 61,440 B per layer;
    # 24 x 2,158,592 = 51,806,208 B (half of the FP32 SSM default, 102,137,856).
    for source in (("--model", "nemotron-h-8b"), ("--config", "planner/data/models/nemotron-h-8b.config.json")):
        code, out, _ = run(capsys, "kv", *source, "--context", "1000", "--json", "--mamba-ssm-cache-dtype", "bfloat16")
        assert code == 0 and json.loads(out)["state_bytes"] == 51_806_208
    code, _, err = run(capsys, "kv", "--bytes-per-token", "10", "--mamba-ssm-cache-dtype", "bfloat16")
    assert code == 2 and "mamba_ssm_cache_dtype" in err
