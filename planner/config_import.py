"""Build a KV layout from a Hugging Face ``config.json``, saying what was read,
derived, defaulted or ignored.

Rules (docs/accounting.md, and public bug reports against KV calculators and engines):

* ``num_key_value_heads`` absent or null means MHA (= ``num_attention_heads``);
  a per-layer list is read per layer, never replaced by a default.
* an explicit ``head_dim`` wins; null counts as absent; else
  ``hidden_size / num_attention_heads`` (which must divide).
* MLA (``kv_lora_rank`` set): ``kv_lora_rank + qk_rope_head_dim`` per layer,
  no factor 2; ``num_key_value_heads`` is ignored.
* sliding layers from ``layer_types``, else ``sliding_window_pattern`` (Gemma 3:
  every P-th layer global), else the family's known pattern (Gemma 2
  alternates, layer 0 local: google/gemma_pytorch ``get_config_for_9b``), else
  ``use_sliding_window: false`` means none, else a non-null ``sliding_window``
  applies to all layers (Mistral-7B-v0.1).
* DeepSeek V4 (``compress_ratios``): per KV-source layer, ``1/ratio`` compressed
  entries of ``head_dim`` channels; indexer keys of ``index_head_dim`` on C4
  layers (V4) or on ``index_source_layer_ids`` that are KV sources (V4.1); a
  ``sliding_window`` ring on every layer; ratio 0 means window only.
* linear attention (``layer_types`` with ``linear_attention``, or Qwen3-Next's
  ``full_attention_interval``): a fixed Gated DeltaNet state per layer and
  sequence, conv ``(K-1) x (2 H_k d_k + H_v d_v)`` plus recurrent
  ``H_v x d_v x d_k`` elements (vLLM ``gated_delta_net_state_shape``). Mamba /
  SSM layer types are refused with an error naming ``layer_types[i]``.
* Llama 4 (``attention_chunk_size``): ``no_rope_layers`` per layer, or derived
  from ``no_rope_layer_interval`` (default 4) as Hugging Face does.
* a per-layer array (KV heads, sliding windows) is read per layer; a wrong
  length is an error, never replaced by a default.
* the KV format is never taken from the weights' dtype: unless given, main KV,
  indexer keys and rings are BF16, and the report says so ("defaulted");
  ``torch_dtype`` is reported as ignored.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from typing import Any

from planner.errors import PlanInputError
from planner.formats import KVFormat, get_format
from planner.kv import (
    ChunkedLocalGroup,
    CompressedGroup,
    FullAttentionGroup,
    KVGroup,
    MLAGroup,
    SlidingWindowGroup,
    StateGroup,
    WindowRingGroup,
)

MAX_CONFIG_BYTES = 1_000_000
"""Largest config.json accepted (1 MB); real configs are a few kB."""


@dataclass(frozen=True)
class ConfigField:
    """One line of the import report.

    Attributes:
        field: the config key (or a derived name).
        value: what kvplan used.
        how: "read", "derived", "defaulted" or "ignored".
        note: why, in words.
    """

    field: str
    value: object
    how: str
    note: str = ""


@dataclass(frozen=True)
class ImportedLayout:
    """The groups built from a config, the report, and the maximum context."""

    groups: tuple[KVGroup, ...]
    report: tuple[ConfigField, ...]
    max_context_tokens: int | None
    model_type: str


def parse_config_text(text: str | bytes) -> dict[str, Any]:
    """Parse config.json text into a dict.

    Raises:
        PlanInputError: too large, not JSON, or not a JSON object.
    """
    if len(text) > MAX_CONFIG_BYTES:
        raise PlanInputError("config", f"{len(text):,} bytes", f"a config.json of at most {MAX_CONFIG_BYTES:,} bytes")
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError, >4,300 digits, deep nesting
        raise PlanInputError("config", "malformed JSON", f"valid JSON ({exc.__class__.__name__}: {exc})"[:200]) from None
    if not isinstance(data, dict):
        raise PlanInputError("config", type(data).__name__, "a JSON object ({...}) at the top level")
    return data


class _Reader:
    """Reads typed fields from a config, recording each in the report."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.report: list[ConfigField] = []

    def present(self, key: str) -> bool:
        return self.config.get(key) is not None

    def int_field(self, key: str, *, minimum: int = 1, maximum: int = 10**9, required: bool = True) -> int | None:
        value = self.config.get(key)
        if value is None:
            if required:
                raise PlanInputError(f"config.{key}", value, f"an integer in [{minimum}, {maximum:,}] (the field is required)")
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
            raise PlanInputError(f"config.{key}", value, f"an integer in [{minimum}, {maximum:,}]")
        self.report.append(ConfigField(key, value, "read"))
        return value

    def int_list(self, key: str, length: int | None, *, minimum: int = 0, maximum: int = 10**9) -> list[int]:
        value = self.config.get(key)
        if not isinstance(value, list) or not all(
            isinstance(v, int) and not isinstance(v, bool) and minimum <= v <= maximum for v in value
        ):
            raise PlanInputError(f"config.{key}", value, f"a list of integers in [{minimum}, {maximum:,}]")
        if length is not None and len(value) != length:
            raise PlanInputError(f"config.{key}", f"{len(value)} entries", f"{length} entries (one per layer)")
        self.report.append(ConfigField(key, value if len(value) <= 8 else f"{len(value)} entries", "read"))
        return value

    def note(self, key: str, value: object, how: str, note: str = "") -> None:
        self.report.append(ConfigField(key, value, how, note))


def layout_from_config(
    config: dict[str, Any],
    *,
    main_format: KVFormat | None = None,
    indexer_format: KVFormat | None = None,
    ring_format: KVFormat | None = None,
    ring_in_pool: bool = True,
    state_format: KVFormat | None = None,
) -> ImportedLayout:
    """KV layer groups of a Hugging Face config.

    Args:
        config: the parsed config.json (a nested ``text_config`` is merged over
            the top level, as multimodal models nest their language model).
        main_format, indexer_format, ring_format: formats of the main KV,
            DeepSeek V4 indexer keys and window rings; ``None`` = BF16, reported
            as defaulted.
        ring_in_pool: False keeps DeepSeek V4 window rings outside the HBM pool.
        state_format: format of linear-attention conv state (and recurrent
            state unless the config says ``mamba_ssm_dtype``); None = BF16,
            reported as defaulted.

    Returns:
        ImportedLayout with per-group specs (per replica, TP applied later).

    Raises:
        PlanInputError: a missing, null-where-required, mistyped, out-of-range
            or contradictory field, naming it (``config.num_key_value_heads``).
    """
    if not isinstance(config, dict):
        raise PlanInputError("config", type(config).__name__, "a JSON object")
    merged = dict(config)
    if isinstance(config.get("text_config"), dict):
        merged.update(config["text_config"])
    r = _Reader(merged)
    if isinstance(config.get("text_config"), dict):
        r.note("text_config", "merged", "read", "language-model fields read from text_config")
    bf16 = get_format("bf16")
    formats = {}
    for role, fmt in (("main", main_format), ("indexer", indexer_format), ("ring", ring_format)):
        formats[role] = fmt or bf16
    if main_format is None:
        r.note("kv_format", "bf16", "defaulted",
               "config.json does not say the KV dtype; BF16 assumed (engines' 'auto'); choose a KV format to change it")
    for key in ("torch_dtype", "dtype"):
        if isinstance(merged.get(key), str):
            r.note(key, merged[key][:32], "ignored", "the weights' dtype; never used as the KV dtype")

    model_type = _text(merged.get("model_type", ""), 64)
    num_layers = r.int_field("num_hidden_layers", maximum=100_000)
    max_ctx = r.int_field("max_position_embeddings", maximum=10**9, required=False)
    if max_ctx is None:
        r.note("max_position_embeddings", None, "defaulted", "not in config: no maximum context known")

    if merged.get("compress_ratios") is not None:
        groups = _deepseek_v4(r, merged, num_layers, formats, ring_in_pool)
    elif merged.get("kv_lora_rank") is not None:
        groups = _mla(r, merged, num_layers, formats["main"])
    else:
        groups = _attention(r, merged, num_layers, formats["main"], model_type, max_ctx, state_format)
    return ImportedLayout(groups=tuple(groups), report=tuple(r.report), max_context_tokens=max_ctx, model_type=model_type)


def _mla(r: _Reader, cfg: dict, num_layers: int, fmt: KVFormat) -> list[KVGroup]:
    rank = r.int_field("kv_lora_rank", maximum=1_000_000)
    rope = r.int_field("qk_rope_head_dim", minimum=0, maximum=1_000_000)
    for key in ("num_key_value_heads", "qk_nope_head_dim", "v_head_dim", "head_dim"):
        if cfg.get(key) is not None:
            r.note(key, cfg[key], "ignored", "MLA caches one latent per token and layer, not K and V per head")
    r.note("mla_latent_dim", rank + rope, "derived", "kv_lora_rank + qk_rope_head_dim, no factor 2")
    return [MLAGroup(name="MLA latent", num_layers=num_layers, kv_format=fmt, kv_lora_rank=rank, qk_rope_head_dim=rope)]


def _head_dim(r: _Reader, cfg: dict, num_heads: int) -> int:
    if cfg.get("head_dim") is not None:
        return r.int_field("head_dim", maximum=1_000_000)
    hidden = r.int_field("hidden_size", maximum=10**7)
    if hidden % num_heads:
        raise PlanInputError("config.hidden_size", hidden,
                             f"a multiple of num_attention_heads ({num_heads}) when head_dim is absent")
    value = hidden // num_heads
    why = "head_dim is null" if "head_dim" in cfg else "head_dim absent"
    r.note("head_dim", value, "derived", f"{why}: hidden_size / num_attention_heads")
    return value


def _attention(r: _Reader, cfg: dict, num_layers: int, fmt: KVFormat, model_type: str,
               max_ctx: int | None, state_format: KVFormat | None = None) -> list[KVGroup]:
    num_heads = r.int_field("num_attention_heads", maximum=1_000_000)
    kinds = _layer_kinds(r, cfg, num_layers, model_type)
    attn_layers = [i for i, k in enumerate(kinds) if k != "linear"]

    kv_raw = cfg.get("num_key_value_heads")
    if isinstance(kv_raw, list):
        kv_heads = r.int_list("num_key_value_heads", num_layers, minimum=0, maximum=num_heads)
    elif kv_raw is None:
        kv_heads = [num_heads] * num_layers
        if attn_layers:
            r.note("num_key_value_heads", num_heads, "defaulted", "absent or null: MHA, one KV head per attention head")
    else:
        kv_heads = [r.int_field("num_key_value_heads", maximum=num_heads)] * num_layers
    for i in attn_layers:
        h = kv_heads[i]
        if h and num_heads % h:
            raise PlanInputError("config.num_key_value_heads", h,
                                 f"a divisor of num_attention_heads ({num_heads}) (layer {i})")
    head_dim = v_head_dim = 0
    if attn_layers:
        head_dim = _head_dim(r, cfg, num_heads)
        v_head_dim = head_dim
        if cfg.get("v_head_dim") is not None:
            v_head_dim = r.int_field("v_head_dim", maximum=1_000_000)

    windows = _windows(r, cfg, kinds, max_ctx)
    chunk = None
    if "chunked" in kinds:
        chunk = r.int_field("attention_chunk_size", maximum=10**9)
        if max_ctx is not None and chunk > max_ctx:
            raise PlanInputError("config.attention_chunk_size", chunk, f"at most max_position_embeddings ({max_ctx:,})")

    # One group per (kind, kv heads, window); layers with 0 KV heads store nothing.
    counts: dict[tuple[str, int, int], int] = {}
    for i in attn_layers:
        if kv_heads[i]:
            key = (kinds[i], kv_heads[i], windows[i])
            counts[key] = counts.get(key, 0) + 1
    many_heads = len({k[1] for k in counts}) > 1
    groups: list[KVGroup] = []
    for (kind, h, window), n in counts.items():
        common = dict(num_layers=n, kv_format=fmt, num_kv_heads=h, k_head_dim=head_dim, v_head_dim=v_head_dim)
        suffix = f", {h} KV heads" if many_heads else ""
        if kind == "full":
            groups.append(FullAttentionGroup(name="full attention" + suffix, **common))
        elif kind == "sliding":
            groups.append(SlidingWindowGroup(name=f"sliding window {window:,}" + suffix, window_tokens=window, **common))
        else:
            groups.append(ChunkedLocalGroup(name=f"chunked local {chunk:,}" + suffix, chunk_tokens=chunk, **common))
    num_linear = kinds.count("linear")
    if num_linear:
        groups.extend(_linear_attention_state(r, cfg, num_linear, state_format))
    if not groups:
        raise PlanInputError("config.num_key_value_heads", 0, "at least one layer with KV heads >= 1")
    return groups


def _windows(r: _Reader, cfg: dict, kinds: list[str], max_ctx: int | None) -> list[int]:
    """The sliding window of each layer (0 for layers that do not slide)."""
    if "sliding" not in kinds:
        return [0] * len(kinds)
    raw = cfg.get("sliding_window")
    if isinstance(raw, list):
        # A per-layer array: read per layer, never replaced by a scalar default.
        per_layer = r.int_list("sliding_window", len(kinds), minimum=0, maximum=10**9)
        windows = []
        for i, (k, w) in enumerate(zip(kinds, per_layer)):
            if k == "sliding" and w < 1:
                raise PlanInputError(f"config.sliding_window[{i}]", w, "a window >= 1 for a sliding layer")
            windows.append(w if k == "sliding" else 0)
    else:
        w = r.int_field("sliding_window", maximum=10**9)
        windows = [w if k == "sliding" else 0 for k in kinds]
    for i, w in enumerate(windows):
        if max_ctx is not None and w > max_ctx:
            field = "config.sliding_window" if not isinstance(raw, list) else f"config.sliding_window[{i}]"
            raise PlanInputError(field, w, f"at most max_position_embeddings ({max_ctx:,}): a window larger than "
                                 "the context is contradictory")
    return windows


def _linear_attention_state(r: _Reader, cfg: dict, num_layers: int, state_format: KVFormat | None) -> list[KVGroup]:
    """Gated DeltaNet state of ``linear_attention`` layers (Qwen3-Next, Qwen3.5).

    Per layer and sequence (vLLM ``gated_delta_net_state_shape``, TP 1):
    conv state ``(K - 1) x (2 * H_k * d_k + H_v * d_v)`` elements and recurrent
    state ``H_v x d_v x d_k`` elements; TP divides the conv channels and the
    value heads. Formats: ``state_format`` (BF16 unless given, reported as
    defaulted, vLLM's ``mamba_cache_dtype`` "auto" = the model's dtype); the
    recurrent state in FP32 when the config says ``mamba_ssm_dtype: float32``.
    """
    h_k = r.int_field("linear_num_key_heads", maximum=1_000_000)
    h_v = r.int_field("linear_num_value_heads", maximum=1_000_000)
    d_k = r.int_field("linear_key_head_dim", maximum=1_000_000)
    d_v = r.int_field("linear_value_head_dim", maximum=1_000_000)
    kernel = r.int_field("linear_conv_kernel_dim", minimum=2, maximum=1_000)
    conv_dim = 2 * h_k * d_k + h_v * d_v
    conv_fmt = state_format or get_format("bf16")
    if state_format is None:
        r.note("state dtype", "bf16", "defaulted",
               "config.json does not say the state dtype; BF16 assumed (vLLM mamba_cache_dtype 'auto' = model dtype)")
    ssm_raw = cfg.get("mamba_ssm_dtype")
    ssm_fmt = conv_fmt
    if ssm_raw is not None:
        known = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
        if not isinstance(ssm_raw, str) or ssm_raw not in known:
            raise PlanInputError("config.mamba_ssm_dtype", ssm_raw, "one of " + ", ".join(known))
        ssm_fmt = get_format(known[ssm_raw])
        r.note("mamba_ssm_dtype", ssm_raw, "read", "recurrent state dtype")
    r.note("linear-attention state", f"{num_layers} layers", "derived",
           f"conv (K-1) x (2 H_k d_k + H_v d_v) = {kernel - 1} x {conv_dim:,}; recurrent H_v x d_v x d_k = "
           f"{h_v} x {d_v} x {d_k} elements per layer and sequence (vLLM gated_delta_net_state_shape)")
    return [
        StateGroup(name="linear attention conv state", num_layers=num_layers, kv_format=conv_fmt, role="state",
                   num_units=conv_dim, elements_per_unit=kernel - 1,
                   shape_note=f"conv {kernel - 1} x {conv_dim:,} channels"),
        StateGroup(name="linear attention recurrent state", num_layers=num_layers, kv_format=ssm_fmt, role="state",
                   num_units=h_v, elements_per_unit=d_v * d_k,
                   shape_note=f"recurrent {h_v} heads x {d_v} x {d_k}"),
    ]


_LAYER_TYPE_KINDS = {
    "full_attention": "full",
    "global": "full",
    "attention": "full",
    "sliding_attention": "sliding",
    "local": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
}
_UNSUPPORTED_LAYER_TYPES = ("mamba", "mamba2", "ssm", "hybrid", "conv", "short_conv", "rwkv", "retention", "kda")


def _layer_kinds(r: _Reader, cfg: dict, num_layers: int, model_type: str) -> list[str]:
    """'full', 'sliding', 'chunked' or 'linear' for each layer."""
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != num_layers:
            shown = f"{len(layer_types)} entries" if isinstance(layer_types, list) else layer_types
            raise PlanInputError("config.layer_types", shown, f"a list of {num_layers} layer types (one per layer)")
        kinds = []
        for i, t in enumerate(layer_types):
            if not isinstance(t, str) or t not in _LAYER_TYPE_KINDS:
                extra = ""
                if isinstance(t, str) and t.lower() in _UNSUPPORTED_LAYER_TYPES:
                    extra = (" (Mamba / SSM state import is not supported: give the model's bytes per token "
                             "and its state bytes instead)")
                raise PlanInputError(f"config.layer_types[{i}]", t, "one of " + ", ".join(_LAYER_TYPE_KINDS) + extra)
            kinds.append(_LAYER_TYPE_KINDS[t])
        r.note("layer_types", ", ".join(f"{kinds.count(k)} {k}" for k in ("full", "sliding", "chunked", "linear")
                                        if kinds.count(k)), "read")
        return kinds
    if cfg.get("full_attention_interval") is not None and cfg.get("linear_num_value_heads") is not None:
        every = r.int_field("full_attention_interval", maximum=100_000)
        kinds = ["full" if (i + 1) % every == 0 else "linear" for i in range(num_layers)]
        r.note("layer kinds", f"{kinds.count('linear')} linear, {kinds.count('full')} full", "derived",
               f"layer i is full attention when (i+1) % {every} == 0, else linear attention "
               "(Hugging Face Qwen3NextConfig default layer_types)")
        return kinds
    if cfg.get("sliding_window_pattern") is not None:
        pattern = r.int_field("sliding_window_pattern", maximum=100_000)
        kinds = ["full" if (i + 1) % pattern == 0 else "sliding" for i in range(num_layers)]
        r.note("sliding layers", kinds.count("sliding"), "derived",
               f"every {pattern}th layer global (layer i global when (i+1) % {pattern} == 0)")
        return kinds
    if model_type in ("gemma3", "gemma3_text") and cfg.get("sliding_window") is not None:
        kinds = ["full" if (i + 1) % 6 == 0 else "sliding" for i in range(num_layers)]
        r.note("sliding_window_pattern", 6, "defaulted",
               "absent: Gemma 3's default, every 6th layer global (Hugging Face Gemma3TextConfig)")
        return kinds
    if model_type == "gemma2" and cfg.get("sliding_window") is not None:
        kinds = ["sliding" if i % 2 == 0 else "full" for i in range(num_layers)]
        r.note("sliding layers", kinds.count("sliding"), "derived",
               "Gemma 2 alternates local and global layers, layer 0 local (google/gemma_pytorch)")
        return kinds
    if cfg.get("attention_chunk_size") is not None:
        return _llama4_kinds(r, cfg, num_layers)
    if cfg.get("use_sliding_window") is not None and not isinstance(cfg["use_sliding_window"], bool):
        raise PlanInputError("config.use_sliding_window", cfg["use_sliding_window"], "true or false")
    if cfg.get("use_sliding_window") is False:
        if cfg.get("sliding_window") is not None:
            r.note("sliding_window", cfg["sliding_window"], "ignored", "use_sliding_window is false")
        return ["full"] * num_layers
    if cfg.get("sliding_window") is not None:
        if cfg.get("use_sliding_window") is True and cfg.get("max_window_layers") is not None:
            first = r.int_field("max_window_layers", minimum=0, maximum=num_layers)
            kinds = ["sliding" if i >= first else "full" for i in range(num_layers)]
            r.note("sliding layers", kinds.count("sliding"), "derived", "layers from max_window_layers on slide (Qwen2)")
            return kinds
        r.note("sliding layers", num_layers, "derived", "sliding_window set with no per-layer pattern: all layers slide")
        return ["sliding"] * num_layers
    return ["full"] * num_layers


def _llama4_kinds(r: _Reader, cfg: dict, num_layers: int) -> list[str]:
    """Llama 4: ``no_rope_layers[i] == 1`` (RoPE) layers are chunked, 0 (NoPE) global.

    Absent or empty, Hugging Face's Llama4TextConfig derives it from
    ``no_rope_layer_interval`` (default 4): ``int((i + 1) % interval != 0)``.
    """
    nope = cfg.get("no_rope_layers")
    if nope:
        if not isinstance(nope, list) or len(nope) != num_layers or any(v not in (0, 1) or isinstance(v, bool)
                                                                           for v in nope):
            shown = f"{len(nope)} entries" if isinstance(nope, list) else nope
            raise PlanInputError("config.no_rope_layers", shown, f"a list of {num_layers} entries, each 0 or 1")
        kinds = ["chunked" if v else "full" for v in nope]
        r.note("no_rope_layers", f"{kinds.count('full')} global, {kinds.count('chunked')} chunked", "read")
        return kinds
    if cfg.get("no_rope_layer_interval") is not None:
        every = r.int_field("no_rope_layer_interval", maximum=100_000)
    else:
        every = 4
        r.note("no_rope_layer_interval", 4, "defaulted", "absent: Llama4TextConfig default")
    kinds = ["chunked" if (i + 1) % every else "full" for i in range(num_layers)]
    r.note("no_rope_layers", f"{kinds.count('full')} global, {kinds.count('chunked')} chunked", "derived",
           f"absent: layer i is global (NoPE) when (i+1) % {every} == 0 (Hugging Face Llama4TextConfig)")
    return kinds


def _deepseek_v4(r: _Reader, cfg: dict, num_layers: int, formats: dict[str, KVFormat],
                 ring_in_pool: bool) -> list[KVGroup]:
    raw = cfg.get("compress_ratios")
    if not isinstance(raw, list) or len(raw) < num_layers:
        shown = f"{len(raw)} entries" if isinstance(raw, list) else raw
        raise PlanInputError("config.compress_ratios", shown,
                             f"a list of at least {num_layers} ratios (one per layer, MTP layers may follow)")
    ratios = r.int_list("compress_ratios", None, minimum=0, maximum=1_000_000)[:num_layers]
    if len(raw) > num_layers:
        r.note("compress_ratios[num_hidden_layers:]", len(raw) - num_layers, "ignored", "MTP / draft layers hold no serving KV here")
    entry_dim = r.int_field("head_dim", maximum=1_000_000)
    if cfg.get("kv_source_layer_ids") is not None:
        sources = sorted(set(r.int_list("kv_source_layer_ids", None, minimum=0, maximum=num_layers - 1)))
        r.note("kv sharing", f"{len(sources)} source layers serve {num_layers - len(sources)} others", "derived",
               "cross-layer sharing: only KV-source layers store entries")
    else:
        sources = list(range(num_layers))
    index_dim = r.int_field("index_head_dim", maximum=1_000_000, required=False) or 0
    if cfg.get("index_source_layer_ids") is not None:
        idx = set(r.int_list("index_source_layer_ids", None, minimum=0, maximum=num_layers - 1))
        indexed = {i for i in sources if i in idx}
        r.note("indexer layers", sorted(indexed), "derived",
               "index_source_layer_ids that are also KV sources (others reuse a source's keys)")
    else:
        indexed = {i for i in sources if ratios[i] == 4} if index_dim else set()
        if index_dim:
            r.note("indexer layers", len(indexed), "derived", "C4 layers (compress ratio 4) carry indexer keys")

    groups: list[KVGroup] = []
    by_ratio: dict[int, list[int]] = {}
    for i in sources:
        by_ratio.setdefault(ratios[i], []).append(i)
    for ratio in sorted(by_ratio, key=lambda x: (x == 0, x)):
        layers = by_ratio[ratio]
        if ratio == 0:
            r.note("window-only layers", len(layers), "derived", "compress ratio 0: sliding-window branch only")
            continue
        groups.append(CompressedGroup(name=f"compressed 1/{ratio} main", num_layers=len(layers),
                                      kv_format=formats["main"], compress_ratio=ratio, entry_dim=entry_dim))
        n_idx = sum(1 for i in layers if i in indexed)
        if n_idx and index_dim:
            groups.append(CompressedGroup(name=f"compressed 1/{ratio} indexer keys", num_layers=n_idx,
                                          kv_format=formats["indexer"], role="indexer",
                                          compress_ratio=ratio, entry_dim=index_dim))
    window = r.int_field("sliding_window", maximum=10**9, required=False)
    if window:
        groups.append(WindowRingGroup(name=f"window ring {window}", num_layers=num_layers, kv_format=formats["ring"],
                                      role="ring", in_pool=ring_in_pool, window_tokens=window, entry_dim=entry_dim))
    if not groups:
        raise PlanInputError("config.compress_ratios", ratios, "at least one KV-source layer with a ratio >= 1")
    return groups


def model_from_config(config: dict[str, Any], *, name: str = "imported config", model_id: str = "custom",
                      main_format: KVFormat | None = None, source: str = "uploaded config.json"):
    """A :class:`planner.models.ModelSpec` from a parsed config.json (architecture
    basis, no reported coefficient), carrying the import report.

    Raises:
        PlanInputError: from :func:`layout_from_config`.
    """
    from planner.models import ModelSpec  # local: planner.models imports this module

    layout = layout_from_config(config, main_format=main_format)
    label = main_format.id if main_format is not None else "BF16 (defaulted: config.json has no KV dtype)"
    return ModelSpec(id=model_id, name=str(name)[:80], groups=layout.groups,
                     max_context_tokens=layout.max_context_tokens, source=source,
                     native_format_label=label, config_report=layout.report)


def _text(value: object, limit: int) -> str:
    """``str(value)`` cut to ``limit`` characters; a value too deep or too long to print is named by its type."""
    if isinstance(value, str):
        return value[:limit]
    try:
        return str(value)[:limit]
    except (RecursionError, ValueError):
        return f"<{type(value).__name__}>"


def report_rows(report: tuple[ConfigField, ...]) -> list[dict[str, str]]:
    """The import report as rows ``field, value, how, note`` (values as text, for tables)."""
    return [{"field": f.field, "value": _text(f.value, 120), "how": f.how, "note": f.note} for f in report]


def is_finite_positive(x: float) -> bool:
    """True for a finite number > 0."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0
