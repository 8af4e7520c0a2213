"""Build a KV layout from a Hugging Face ``config.json``, saying what was read,
derived, defaulted or ignored.

Rules (domain.md §2, and the public bug reports it lists):

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
* the KV format is never taken from the weights' dtype: unless given, main KV,
  indexer keys and rings are BF16, and the report says so.
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
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
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
) -> ImportedLayout:
    """KV layer groups of a Hugging Face config.

    Args:
        config: the parsed config.json (a nested ``text_config`` is merged over
            the top level, as multimodal models nest their language model).
        main_format, indexer_format, ring_format: formats of the main KV,
            DeepSeek V4 indexer keys and window rings; ``None`` = BF16, reported
            as defaulted.
        ring_in_pool: False keeps DeepSeek V4 window rings outside the HBM pool.

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
    if "text_config" in config:
        r.note("text_config", "merged", "read", "language-model fields read from text_config")
    bf16 = get_format("bf16")
    formats = {}
    for role, fmt in (("main", main_format), ("indexer", indexer_format), ("ring", ring_format)):
        formats[role] = fmt or bf16
    if main_format is None:
        r.note("kv_format", "bf16", "defaulted",
               "config.json does not say the KV dtype; BF16 assumed (engines' 'auto'); choose a KV format to change it")

    model_type = str(merged.get("model_type", ""))[:64]
    num_layers = r.int_field("num_hidden_layers", maximum=100_000)
    max_ctx = r.int_field("max_position_embeddings", maximum=10**9, required=False)
    if max_ctx is None:
        r.note("max_position_embeddings", None, "defaulted", "not in config: no maximum context known")

    if merged.get("compress_ratios") is not None:
        groups = _deepseek_v4(r, merged, num_layers, formats, ring_in_pool)
    elif merged.get("kv_lora_rank") is not None:
        groups = _mla(r, merged, num_layers, formats["main"])
    else:
        groups = _attention(r, merged, num_layers, formats["main"], model_type, max_ctx)
    return ImportedLayout(groups=tuple(groups), report=tuple(r.report), max_context_tokens=max_ctx, model_type=model_type)


def _mla(r: _Reader, cfg: dict, num_layers: int, fmt: KVFormat) -> list[KVGroup]:
    rank = r.int_field("kv_lora_rank", maximum=1_000_000)
    rope = r.int_field("qk_rope_head_dim", minimum=0, maximum=1_000_000)
    if cfg.get("num_key_value_heads") is not None:
        r.note("num_key_value_heads", cfg["num_key_value_heads"], "ignored", "MLA caches one latent per token, not per head")
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
               max_ctx: int | None) -> list[KVGroup]:
    num_heads = r.int_field("num_attention_heads", maximum=1_000_000)
    kv_raw = cfg.get("num_key_value_heads")
    if isinstance(kv_raw, list):
        kv_heads = r.int_list("num_key_value_heads", num_layers, minimum=0, maximum=num_heads)
    elif kv_raw is None:
        kv_heads = [num_heads] * num_layers
        r.note("num_key_value_heads", num_heads, "defaulted", "absent or null: MHA, one KV head per attention head")
    else:
        kv_heads = [r.int_field("num_key_value_heads", maximum=num_heads)] * num_layers
    for i, h in enumerate(kv_heads):
        if h and num_heads % h:
            raise PlanInputError("config.num_key_value_heads", h,
                                 f"a divisor of num_attention_heads ({num_heads}) (layer {i})")
    head_dim = _head_dim(r, cfg, num_heads)
    v_head_dim = head_dim
    if cfg.get("v_head_dim") is not None:
        v_head_dim = r.int_field("v_head_dim", maximum=1_000_000)

    kinds = _layer_kinds(r, cfg, num_layers, model_type)
    window = None
    if "sliding" in kinds:
        window = r.int_field("sliding_window", maximum=10**9)
        if max_ctx is not None and window > max_ctx:
            raise PlanInputError("config.sliding_window", window,
                                 f"at most max_position_embeddings ({max_ctx:,})")
    chunk = None
    if "chunked" in kinds:
        chunk = r.int_field("attention_chunk_size", maximum=10**9)

    # One group per (kind, kv heads); layers with 0 KV heads store nothing.
    counts: dict[tuple[str, int], int] = {}
    for kind, h in zip(kinds, kv_heads):
        if h:
            counts[(kind, h)] = counts.get((kind, h), 0) + 1
    groups: list[KVGroup] = []
    for (kind, h), n in counts.items():
        common = dict(num_layers=n, kv_format=fmt, num_kv_heads=h, k_head_dim=head_dim, v_head_dim=v_head_dim)
        suffix = f", {h} KV heads" if len({k[1] for k in counts}) > 1 else ""
        if kind == "full":
            groups.append(FullAttentionGroup(name="full attention" + suffix, **common))
        elif kind == "sliding":
            groups.append(SlidingWindowGroup(name=f"sliding window {window:,}" + suffix, window_tokens=window, **common))
        else:
            groups.append(ChunkedLocalGroup(name=f"chunked local {chunk:,}" + suffix, chunk_tokens=chunk, **common))
    if not groups:
        raise PlanInputError("config.num_key_value_heads", 0, "at least one layer with KV heads >= 1")
    return groups


_LAYER_TYPE_KINDS = {
    "full_attention": "full",
    "global": "full",
    "sliding_attention": "sliding",
    "local": "sliding",
    "chunked_attention": "chunked",
}


def _layer_kinds(r: _Reader, cfg: dict, num_layers: int, model_type: str) -> list[str]:
    """'full', 'sliding' or 'chunked' for each layer."""
    layer_types = cfg.get("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != num_layers:
            shown = f"{len(layer_types)} entries" if isinstance(layer_types, list) else layer_types
            raise PlanInputError("config.layer_types", shown, f"a list of {num_layers} layer types (one per layer)")
        kinds = []
        for i, t in enumerate(layer_types):
            if t not in _LAYER_TYPE_KINDS:
                raise PlanInputError(f"config.layer_types[{i}]", t, "one of " + ", ".join(_LAYER_TYPE_KINDS))
            kinds.append(_LAYER_TYPE_KINDS[t])
        r.note("layer_types", f"{kinds.count('sliding')} sliding, {kinds.count('full')} full, "
               f"{kinds.count('chunked')} chunked", "read")
        return kinds
    if cfg.get("sliding_window_pattern") is not None:
        pattern = r.int_field("sliding_window_pattern", maximum=100_000)
        kinds = ["full" if (i + 1) % pattern == 0 else "sliding" for i in range(num_layers)]
        r.note("sliding layers", kinds.count("sliding"), "derived",
               f"every {pattern}th layer global (layer i global when (i+1) % {pattern} == 0)")
        return kinds
    if model_type == "gemma2" and cfg.get("sliding_window") is not None:
        kinds = ["sliding" if i % 2 == 0 else "full" for i in range(num_layers)]
        r.note("sliding layers", kinds.count("sliding"), "derived",
               "Gemma 2 alternates local and global layers, layer 0 local (google/gemma_pytorch)")
        return kinds
    if cfg.get("attention_chunk_size") is not None:
        nope = cfg.get("no_rope_layers")
        if isinstance(nope, list) and len(nope) == num_layers:
            # Llama 4: no_rope_layers[i] == 0 marks a global NoPE layer; the rest are chunked.
            kinds = ["full" if v == 0 else "chunked" for v in nope]
            r.note("no_rope_layers", f"{kinds.count('full')} global, {kinds.count('chunked')} chunked", "read")
            return kinds
        raise PlanInputError("config.no_rope_layers", nope,
                             f"a list of {num_layers} entries saying which layers are chunked (attention_chunk_size is set)")
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


def is_finite_positive(x: float) -> bool:
    """True for a finite number > 0."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0
