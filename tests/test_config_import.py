"""config.json import: what is read, derived, defaulted or ignored, and clear errors (docs/accounting.md).

Expected values are worked by hand in comments; configs are the bundled ones
(planner/data/models, SOURCES.md) or small dicts shaped like cited public configs.
"""

import json
from importlib import resources

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.hf.config import layout_from_config, model_from_config, parse_config_text, report_rows
from planner.errors import PlanInputError
from planner.kv.formats import get_format
from planner.kv.kinds import ChunkedLocalGroup, CompressedGroup, MLAGroup, SlidingWindowGroup, StateGroup, WindowRingGroup
from planner.kv.models import ModelSpec


def bundled(stem):
    return json.loads(resources.files("planner.data.models").joinpath(f"{stem}.config.json").read_text())


def per_token(config, **kw):
    """Growing bytes per token at TP 1 of an imported config (architecture basis), past every window."""
    m = ModelSpec(id="t", name="t", groups=layout_from_config(config, **kw).groups)
    return m.estimate(10**6).kv_bytes_per_token


def report(config, **kw):
    return {(f.field, f.how): f for f in layout_from_config(config, **kw).report}


LLAMA_8B = {"model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
            "hidden_size": 4096, "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}

# Qwen3-4B shape (Qwen/Qwen3-4B config.json): 36 layers, 32 heads, 8 KV heads, head_dim 128,
# hidden_size 2560 (2560 / 32 = 80, *not* the head_dim).
QWEN3_4B = {"model_type": "qwen3", "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
            "head_dim": 128, "hidden_size": 2560, "max_position_embeddings": 40960, "sliding_window": None,
            "use_sliding_window": False, "rope_scaling": None, "torch_dtype": "bfloat16"}

# Qwen3-Next-80B-A3B / Qwen3-Coder-Next shape (huggingface.co/Qwen/Qwen3-Coder-Next config.json, as quoted
# in public tests): 48 layers, full attention every 4th, 16 heads, 2 KV heads x 256; Gated DeltaNet with
# 16 key heads, 32 value heads, 128 x 128, conv kernel 4.
QWEN3_NEXT = {"model_type": "qwen3_next", "num_hidden_layers": 48, "num_attention_heads": 16,
              "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048, "full_attention_interval": 4,
              "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
              "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "max_position_embeddings": 262144}


# ---------------------------------------------------------------------------
# head_dim, KV heads, dtypes
# ---------------------------------------------------------------------------

def test_qwen3_4b_head_dim_is_read_not_derived():
    # 2 x 36 x 8 x 128 x 2 = 147,456 B/token (derived head_dim 80 would give 92,160)
    assert per_token(QWEN3_4B) == 147_456
    rep = report(QWEN3_4B)
    assert ("head_dim", "read") in rep and ("head_dim", "derived") not in rep


def test_head_dim_null_is_derived_not_a_crash():
    # Mixtral-8x22B has head_dim: null -> hidden_size / heads = 6144 / 48 = 128; 56 layers, 8 KV heads:
    # 2 x 56 x 8 x 128 x 2 = 229,376 B/token
    cfg = {"num_hidden_layers": 56, "num_attention_heads": 48, "num_key_value_heads": 8, "hidden_size": 6144,
           "head_dim": None, "sliding_window": None, "max_position_embeddings": 65536}
    assert per_token(cfg) == 229_376
    assert "null" in report(cfg)[("head_dim", "derived")].note


def test_kv_heads_absent_or_null_means_mha_and_is_reported():
    # GPT-2-like MHA: 12 layers x 12 heads x 64: 2 x 12 x 12 x 64 x 2 = 36,864 B/token
    base = {"num_hidden_layers": 12, "num_attention_heads": 12, "hidden_size": 768}
    for cfg in (base, {**base, "num_key_value_heads": None}):
        assert per_token(cfg) == 36_864
        assert ("num_key_value_heads", "defaulted") in report(cfg)


def test_kv_width_from_kv_heads_not_hidden_size():
    # 2 x 32 x 8 x 128 x 2 = 131,072, not 2 x 32 x 4096 x 2 = 524,288 (§8)
    assert per_token(LLAMA_8B) == 131_072


def test_kv_dtype_is_never_the_weights_dtype():
    # torch_dtype float32 (weights) must not make the KV 4 B per element; BF16 is assumed and *said*
    cfg = {**LLAMA_8B, "torch_dtype": "float32"}
    assert per_token(cfg) == 131_072
    rep = report(cfg)
    assert rep[("kv_format", "defaulted")].value == "bf16"
    assert ("torch_dtype", "ignored") in rep


def test_chosen_kv_format_is_used_and_not_reported_as_defaulted():
    # fp8: 2 x 32 x 8 x 128 x 1 = 65,536
    assert per_token(LLAMA_8B, main_format=get_format("fp8")) == 65_536
    assert ("kv_format", "defaulted") not in report(LLAMA_8B, main_format=get_format("fp8"))


def test_per_layer_kv_heads_are_read_per_layer():
    # 16 layers x 8 heads + 16 layers x 4 heads, head 128 BF16 (512 B per head for K+V):
    # 16 x 8 x 512 + 16 x 4 x 512 = 65,536 + 32,768 = 98,304 B/token (a default of 8 everywhere: 131,072)
    cfg = {**LLAMA_8B, "num_key_value_heads": [8] * 16 + [4] * 16}
    assert per_token(cfg) == 98_304
    assert len(layout_from_config(cfg).groups) == 2


def test_v_head_dim_differs():
    # 8 heads x (K 128 + V 64) x 2 B = 3,072 B per layer x 32 = 98,304 B/token
    assert per_token({**LLAMA_8B, "v_head_dim": 64}) == 98_304


# ---------------------------------------------------------------------------
# Bundled configs
# ---------------------------------------------------------------------------

def test_gemma_2_alternates_from_layer_0():
    groups = layout_from_config(bundled("gemma-2-9b")).groups
    kinds = {type(g).__name__: g.num_layers for g in groups}
    assert kinds == {"SlidingWindowGroup": 21, "FullAttentionGroup": 21}  # 42 layers, alternating
    assert ("sliding layers", "derived") in report(bundled("gemma-2-9b"))


def test_gemma_3_pattern_6():
    # sliding_window_pattern 6: layers 5, 11, ..., 59 global: 10 global, 52 sliding (W 1,024)
    groups = {type(g).__name__: g for g in layout_from_config(bundled("gemma-3-27b")).groups}
    assert groups["FullAttentionGroup"].num_layers == 10
    assert groups["SlidingWindowGroup"].num_layers == 52 and groups["SlidingWindowGroup"].window_tokens == 1024


def test_gemma_3_without_pattern_defaults_to_6_and_says_so():
    cfg = {k: v for k, v in bundled("gemma-3-27b").items() if k != "sliding_window_pattern"}
    groups = {type(g).__name__: g.num_layers for g in layout_from_config(cfg).groups}
    assert groups == {"SlidingWindowGroup": 52, "FullAttentionGroup": 10}
    assert ("sliding_window_pattern", "defaulted") in report(cfg)


def test_gpt_oss_layer_types():
    groups = layout_from_config(bundled("gpt-oss-120b")).groups
    sliding = [g for g in groups if isinstance(g, SlidingWindowGroup)][0]
    assert sliding.num_layers == 18 and sliding.window_tokens == 128
    assert ("layer_types", "read") in report(bundled("gpt-oss-120b"))


def test_mistral_all_sliding():
    groups = layout_from_config(bundled("mistral-7b-v0.1")).groups
    assert len(groups) == 1 and isinstance(groups[0], SlidingWindowGroup) and groups[0].num_layers == 32


def test_qwen2_sliding_flag_off_means_full():
    # Qwen2.5-7B: use_sliding_window false -> 28 full layers; 4 KV heads x 128: 2 x 28 x 4 x 128 x 2 = 57,344
    cfg = bundled("qwen2.5-7b")
    assert per_token(cfg) == 57_344
    assert ("sliding_window", "ignored") in report(cfg)


def test_qwen2_max_window_layers():
    # use_sliding_window true, max_window_layers 14 of 28: layers 14..27 slide
    cfg = {**bundled("qwen2.5-7b"), "use_sliding_window": True, "max_window_layers": 14, "sliding_window": 4096}
    groups = {type(g).__name__: g.num_layers for g in layout_from_config(cfg).groups}
    assert groups == {"FullAttentionGroup": 14, "SlidingWindowGroup": 14}


def test_deepseek_v2_mla_ignores_per_head_fields():
    # (512 + 64) x 60 x 2 B = 69,120 B/token; num_key_value_heads 128, v_head_dim, qk_nope_head_dim ignored
    cfg = bundled("deepseek-v2")
    groups = layout_from_config(cfg).groups
    assert len(groups) == 1 and isinstance(groups[0], MLAGroup)
    assert per_token(cfg) == 69_120
    rep = report(cfg)
    for key in ("num_key_value_heads", "v_head_dim", "qk_nope_head_dim"):
        assert (key, "ignored") in rep


def test_deepseek_v4_flash_bf16_from_compress_ratios():
    # 43 layers (+1 MTP ratio ignored): ratios 0,0, then 4/128 alternating, last 4: 21 C4, 20 C128, 2 window-only.
    # BF16: main 512 x 2 = 1,024 B; indexer key on C4 layers 128 x 2 = 256 B.
    # 21 x (1,024 + 256) / 4 + 20 x 1,024 / 128 = 6,720 + 160 = 6,880 B/token
    cfg = bundled("deepseek-v4-flash")
    groups = layout_from_config(cfg).groups
    by = {g.name: g for g in groups}
    assert by["compressed 1/4 main"].num_layers == 21 and by["compressed 1/4 main"].entry_bytes() == 1_024
    assert by["compressed 1/4 indexer keys"].num_layers == 21 and by["compressed 1/4 indexer keys"].entry_bytes() == 256
    assert by["compressed 1/128 main"].num_layers == 20
    assert per_token(cfg) == 6_880
    ring = [g for g in groups if isinstance(g, WindowRingGroup)][0]
    assert ring.num_layers == 43 and ring.bytes_for(10**6) == 5_636_096  # 43 x 128 x 1,024
    assert ("compress_ratios[num_hidden_layers:]", "ignored") in report(cfg)


def test_deepseek_v4_pro_bf16():
    # 61 layers: ratios 128, 128, then 4/128 alternating (29 each), last 4: 30 C4, 31 C128.
    # 30 x 1,280 / 4 + 31 x 1,024 / 128 = 9,600 + 248 = 9,848 B/token
    assert per_token(bundled("deepseek-v4-pro")) == 9_848


def test_deepseek_v41_flash_native_formats_890():
    cfg = bundled("deepseek-v4.1-flash")
    layout = layout_from_config(cfg, main_format=get_format("nvfp4"), indexer_format=get_format("mxfp4"),
                                ring_format=get_format("mxfp8"), ring_in_pool=False)
    compressed = [g for g in layout.groups if isinstance(g, CompressedGroup)]
    # sources 2, 8, 14 (ratio 2) and 20 (ratio 1); indexer sources 2, 8, 14, 20 (the rest are not KV sources)
    assert sorted((g.compress_ratio, g.role, g.num_layers) for g in compressed) == [
        (1, "indexer", 1), (1, "main", 1), (2, "indexer", 3), (2, "main", 3)]
    assert per_token(cfg, main_format=get_format("nvfp4"), indexer_format=get_format("mxfp4"),
                     ring_format=get_format("mxfp8"), ring_in_pool=False) == 890
    assert ("text_config", "read") in report(cfg)


def test_deepseek_v41_flash_all_bf16():
    # main 1,024 + indexer 256 = 1,280 B per entry; 1 x 1,280 + 3 x 1,280 / 2 = 1,280 + 1,920 = 3,200 B/token
    assert per_token(bundled("deepseek-v4.1-flash")) == 3_200


# ---------------------------------------------------------------------------
# Linear attention (fixed state), Llama 4, unsupported layers
# ---------------------------------------------------------------------------

def test_qwen3_next_linear_attention_state():
    # 12 full layers x 2 heads x (256 + 256) x 2 B = 12 x 2,048 = 24,576 B/token.
    # Per linear layer, BF16: conv (4 - 1) x (2 x 16 x 128 + 32 x 128) = 3 x 8,192 = 24,576 el = 49,152 B;
    # recurrent 32 x 128 x 128 = 524,288 el = 1,048,576 B. 36 layers x 1,097,728 = 39,518,208 B per sequence.
    m = model_from_config(QWEN3_NEXT)
    est = m.estimate(1_000)
    assert est.kv_bytes_per_token == 24_576
    assert est.kv_bytes == 24_576 * 1_000 + 39_518_208  # = 64,094,208
    states = [g for g in m.groups if isinstance(g, StateGroup)]
    assert sorted(g.entry_bytes() for g in states) == [49_152, 1_048_576]
    assert all(g.num_layers == 36 and g.in_pool for g in states)
    rep = report(QWEN3_NEXT)
    assert ("layer kinds", "derived") in rep and ("state dtype", "defaulted") in rep


def test_qwen35_layer_types_and_fp32_recurrent_state():
    # Qwen3.5 configs name layer_types and mamba_ssm_dtype float32: recurrent 524,288 x 4 = 2,097,152 B;
    # 36 x (49,152 + 2,097,152) = 36 x 2,146,304 = 77,266,944 B per sequence
    cfg = {k: v for k, v in QWEN3_NEXT.items() if k != "full_attention_interval"}
    cfg.update(layer_types=(["linear_attention"] * 3 + ["full_attention"]) * 12, mamba_ssm_dtype="float32")
    est = model_from_config(cfg).estimate(1)
    assert est.kv_bytes == 24_576 + 77_266_944


def test_linear_attention_missing_field_is_named():
    cfg = {k: v for k, v in QWEN3_NEXT.items() if k != "linear_conv_kernel_dim"}
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(cfg)
    assert exc.value.field == "config.linear_conv_kernel_dim"


def test_mamba_layers_without_state_fields_are_refused_by_name():
    # Mamba layers are priced from their state fields; a config without them is refused, naming the first
    # field a Mamba1 layer would need (Mamba2 fields are listed in the advice), never priced as attention.
    cfg = {**LLAMA_8B, "layer_types": ["mamba"] * 31 + ["attention"]}
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(cfg)
    assert exc.value.field == "config.mamba_expand" and "Mamba2" in exc.value.allowed


def test_llama4_no_rope_default():
    # Llama 4 Scout shape: 48 layers, no no_rope_layers: interval 4 -> 12 global (NoPE), 36 chunked (8,192)
    cfg = {"model_type": "llama4_text", "num_hidden_layers": 48, "num_attention_heads": 40,
           "num_key_value_heads": 8, "head_dim": 128, "hidden_size": 5120, "attention_chunk_size": 8192,
           "max_position_embeddings": 10485760}
    groups = {type(g).__name__: g.num_layers for g in layout_from_config(cfg).groups}
    assert groups == {"ChunkedLocalGroup": 36, "FullAttentionGroup": 12}
    rep = report(cfg)
    assert ("no_rope_layer_interval", "defaulted") in rep and ("no_rope_layers", "derived") in rep
    explicit = {**cfg, "no_rope_layers": [1, 1, 1, 0] * 12}
    assert ("no_rope_layers", "read") in report(explicit)
    chunked = [g for g in layout_from_config(explicit).groups if isinstance(g, ChunkedLocalGroup)][0]
    assert chunked.chunk_tokens == 8192


def test_per_layer_sliding_windows():
    # windows per layer; layer_types says which slide: 2 layers of 1,024 and 2 of 4,096
    cfg = {**LLAMA_8B, "num_hidden_layers": 6,
           "layer_types": ["sliding_attention"] * 4 + ["full_attention"] * 2,
           "sliding_window": [1024, 1024, 4096, 4096, 0, 0]}
    windows = sorted(g.window_tokens for g in layout_from_config(cfg).groups if isinstance(g, SlidingWindowGroup))
    assert windows == [1024, 4096]


# ---------------------------------------------------------------------------
# Errors: malformed, missing, contradictory, wrong length (never replaced by a default)
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("text", ["{not json", "", "[1, 2]", '"a string"', "null", b"\xff\xfe{", "{" * 100_000])
def test_malformed_json(text):
    with pytest.raises(PlanInputError) as exc:
        parse_config_text(text)
    assert exc.value.field == "config"


def test_too_large():
    with pytest.raises(PlanInputError):
        parse_config_text("{" + " " * 1_000_001 + "}")


@pytest.mark.parametrize("change, field", [
    ({"num_hidden_layers": None}, "config.num_hidden_layers"),                  # null where required
    ({"num_attention_heads": None}, "config.num_attention_heads"),
    ({"num_attention_heads": 0}, "config.num_attention_heads"),                 # zero heads
    ({"num_key_value_heads": 0}, "config.num_key_value_heads"),
    ({"num_key_value_heads": 5}, "config.num_key_value_heads"),                 # 5 does not divide 32
    ({"num_key_value_heads": 64}, "config.num_key_value_heads"),                # more KV heads than heads
    ({"num_key_value_heads": [8] * 31}, "config.num_key_value_heads"),          # 31 entries for 32 layers
    ({"hidden_size": 4095}, "config.hidden_size"),                              # head_dim absent, 4095 / 32
    ({"num_hidden_layers": -1}, "config.num_hidden_layers"),
    ({"num_hidden_layers": 1e20}, "config.num_hidden_layers"),                  # absurd
    ({"num_hidden_layers": float("nan")}, "config.num_hidden_layers"),
    ({"num_hidden_layers": "32"}, "config.num_hidden_layers"),                  # a string
    ({"num_hidden_layers": True}, "config.num_hidden_layers"),
    ({"head_dim": 0}, "config.head_dim"),
    ({"layer_types": ["full_attention"] * 31}, "config.layer_types"),           # wrong length
    ({"layer_types": ["full_attention"] * 31 + ["cross"]}, "config.layer_types[31]"),
    ({"layer_types": ["sliding_attention"] * 32, "sliding_window": None}, "config.sliding_window"),
    ({"layer_types": ["sliding_attention"] * 32, "sliding_window": [4096] * 31}, "config.sliding_window"),
    ({"attention_chunk_size": 8192, "no_rope_layers": [1] * 31}, "config.no_rope_layers"),
    ({"layer_types": [["full_attention"]] * 32}, "config.layer_types[0]"),     # not a string: no crash
    ({"use_sliding_window": "yes", "sliding_window": 4096}, "config.use_sliding_window"),
])
def test_bad_fields_are_named(change, field):
    with pytest.raises(PlanInputError) as exc:
        layout_from_config({**LLAMA_8B, **change})
    assert exc.value.field == field


def test_compress_ratios_too_short():
    cfg = bundled("deepseek-v4-flash")
    cfg["compress_ratios"] = cfg["compress_ratios"][:10]
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(cfg)
    assert exc.value.field == "config.compress_ratios"


def test_kv_source_out_of_range():
    cfg = bundled("deepseek-v4.1-flash")
    cfg["text_config"]["kv_source_layer_ids"] = [2, 8, 14, 40]  # only layers 0..39 exist
    with pytest.raises(PlanInputError) as exc:
        layout_from_config(cfg)
    assert exc.value.field == "config.kv_source_layer_ids"


def test_not_a_dict():
    with pytest.raises(PlanInputError):
        layout_from_config([1, 2])


def test_report_rows_have_known_kinds():
    for stem in ("llama-3.1-8b", "gemma-2-9b", "deepseek-v4.1-flash", "deepseek-v2", "qwen3-8b"):
        rows = report_rows(layout_from_config(bundled(stem)).report)
        assert rows and {r["how"] for r in rows} <= {"read", "derived", "defaulted", "ignored"}


_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10, 10**7), st.floats(allow_nan=True), st.text(max_size=5))
_VALUES = st.one_of(_SCALARS, st.lists(st.integers(-2, 300), max_size=70),
                    st.lists(st.one_of(_SCALARS, st.sampled_from(["full_attention", "sliding_attention", "mamba"]),
                                       st.lists(st.integers(), max_size=2), st.dictionaries(st.text(max_size=2),
                                                                                            st.integers(), max_size=2)),
                             max_size=40),
                    st.dictionaries(st.text(max_size=3), st.integers(), max_size=3))
_KEYS = st.sampled_from(["num_hidden_layers", "num_attention_heads", "num_key_value_heads", "hidden_size",
                         "head_dim", "v_head_dim", "sliding_window", "layer_types", "kv_lora_rank",
                         "qk_rope_head_dim", "max_position_embeddings", "compress_ratios", "attention_chunk_size",
                         "no_rope_layers", "use_sliding_window", "sliding_window_pattern", "index_head_dim",
                         "kv_source_layer_ids", "full_attention_interval", "linear_num_value_heads",
                         "mamba_ssm_dtype", "text_config", "model_type", "index_source_layer_ids"])


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=12))
def test_garbage_configs_raise_only_plan_input_errors(cfg):
    # Nulls, NaN, strings, bools and wrong lengths are errors naming a field, never crashes.
    cfg = {**LLAMA_8B, **cfg}
    try:
        layout = layout_from_config(cfg)
    except PlanInputError as exc:
        assert str(exc.field).startswith("config")
        return
    m = ModelSpec(id="t", name="t", groups=layout.groups)
    assert m.estimate(1_000).kv_bytes >= 0
