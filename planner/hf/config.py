"""Build a KV layout from a Hugging Face ``config.json``, saying what was read,
derived, defaulted or ignored.

Rules (and the public sources each follows):

* ``num_key_value_heads`` absent or null means MHA (= ``num_attention_heads``);
  a per-layer list is read per layer, never replaced by a default.
* an explicit ``head_dim`` wins; null counts as absent; else
  ``attention_head_dim``; else ``hidden_size / num_attention_heads`` (which must divide).
* geometry per layer kind: full-attention layers take ``global_head_dim`` and,
  with ``attention_k_eq_v`` (V equals K, both still stored),
  ``num_global_key_value_heads`` (Gemma 4, vLLM ``Gemma4DecoderLayer``); sliding
  layers take ``swa_num_key_value_heads``, ``swa_head_dim``, ``swa_v_head_dim``
  and ``sliding_window_size`` when given (MiMo-V2).
* the layer mix: :mod:`planner.hf.layers` (every dialect, fail closed);
  Mamba and linear-attention state: :mod:`planner.hf.state` (vLLM's
  ``MambaStateShapeCalculator``).
* MLA (``kv_lora_rank`` set): ``kv_lora_rank + qk_rope_head_dim`` per layer,
  no factor 2; ``num_key_value_heads`` is ignored. DeepSeek V3.2 sparse
  attention (``index_topk`` set, as vLLM tests it): plus an indexer key of
  ``index_head_dim`` FP8 channels and FP32 scales per layer and token, and
  vLLM's ``fp8_ds_mla`` entry (656 B) for its "auto" and FP8 KV dtypes.
* DeepSeek V4 (``compress_ratios``): per KV-source layer, ``1/ratio`` compressed
  entries of ``head_dim`` channels; indexer keys of ``index_head_dim`` on C4
  layers (V4) or on ``index_source_layer_ids`` that are KV sources (V4.1); a
  ``sliding_window`` ring on every layer; ratio 0 means window only.
* the KV dtype: a chosen format wins; else the checkpoint's FP8 KV scheme where
  vLLM's "auto" follows it (:mod:`planner.hf.quant`); else BF16, reported
  as defaulted. Never the weights' dtype (``torch_dtype`` is
  reported as ignored).
* a per-layer array (KV heads, sliding windows) is read per layer; a wrong
  length is an error, never replaced by a default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from planner.hf.deepseek import deepseek_v4, mla
from planner.hf.layers import layer_kinds, pattern_string
from planner.hf.maxlen import engine_max_len
from planner.hf.checkpoint import SIDECAR_KEY
from planner.hf.quant import checkpoint_kv_format
from planner.hf.public_goldens import PUBLIC_CONFIG_GOLDENS
from planner.hf.registry import Family, TrackedConfig, resolve, status, unread_layout_fields
from planner.hf.report import ConfigReader, report_rows, text
from planner.hf.state import (
    KDA_LAYERS,
    PARALLEL_MAMBA,
    kda_state,
    lightning_attention_state,
    linear_attention_state,
    mamba_state,
    short_conv_state,
)
from planner.errors import PlanInputError, json_kind
from planner.reads import DuplicateKey, json_error_text, json_text, unique_keys
from planner.kv.formats import KVFormat, get_format
from planner.kv.kinds import FP8_DS_MLA, ChunkedLocalGroup, FullAttentionGroup, KVGroup, SlidingWindowGroup
from planner.kv.models import ConfigField, ModelSpec
from planner.messages import msg

__all__ = ["ConfigField", "ImportedLayout", "MAX_CONFIG_BYTES", "PATTERN_LEGEND", "layout_from_config",
           "model_from_config", "parse_config_text", "pattern_legend", "report_rows"]

MAX_CONFIG_BYTES = 1_000_000
"""Largest config.json accepted (1 MB); real configs are a few kB."""


@dataclass(frozen=True)
class ImportedLayout:
    """The groups built from a config, the report, the maximum context and the
    per-layer pattern (one character per layer, see :data:`PATTERN_LEGEND`)."""

    groups: tuple[KVGroup, ...]
    report: tuple[ConfigField, ...]
    max_context_tokens: int | None
    model_type: str
    layer_pattern: str = ""
    num_attention_heads: int | None = None
    ignored_fields: tuple[str, ...] = ()
    pp_refusal: str = ""


PATTERN_LEGEND = {
    "F": msg("full attention"), "S": msg("sliding window"), "C": msg("chunked local (Llama 4)"),
    "L": msg("linear attention (Gated DeltaNet, KDA)"), "N": msg("lightning attention (MiniMax linear attention state)"),
    "M": msg("Mamba (SSM state)"), "K": msg("short convolution (LFM2 conv state)"), "A": msg("MLA latent"), "D": msg("MLA latent + DSA indexer keys"),
    "Z": msg("compressed entries (DeepSeek V4)"), "W": msg("window ring only (DeepSeek V4)"),
    "s": msg("shares another layer's KV (stores none)"), "-": msg("no KV (MLP / MoE block)"),
}
"""What each character of a layer pattern means."""


def pattern_legend(pattern: str) -> str:
    """The characters of a layer pattern, each with its meaning and count, in order of first use.

    >>> pattern_legend("M-MF")
    'M Mamba (SSM state) x 2; - no KV (MLP / MoE block) x 1; F full attention x 1'
    """
    items = [msg("{char} {meaning} x {count}", char=c, meaning=PATTERN_LEGEND.get(c, "?"), count=pattern.count(c))
             for c in dict.fromkeys(pattern)]
    legend = items[0] if items else ""
    for item in items[1:]:
        legend = msg("{first}; {rest}", first=legend, rest=item)
    return legend


def _same_json(a: Any, b: Any) -> bool:
    """Two parsed JSON values are the same value of the same JSON type (``1`` is not ``1.0`` nor ``true``)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _config_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``unique_keys`` for config.json, except that a key repeated with the same value is read once: transformers
    loads a config with Python's ``json.loads`` (``PretrainedConfig._dict_from_json_file``), where the last copy
    wins, and identical copies leave nothing to disagree on (BAAI/Aquila-7B's published config.json gives
    ``"model_type": "aquila"`` twice). Copies that differ are still refused."""
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen and not _same_json(seen[key], value):
            raise DuplicateKey(key)
        seen[key] = value
    return unique_keys(list(seen.items()))


def parse_config_text(text_or_bytes: str | bytes, source: str = "config.json") -> dict[str, Any]:
    """Parse config.json text into a dict; ``source`` names the file in errors.

    Raises:
        PlanInputError: too large, not UTF-8, not JSON (line and column named), or not a JSON object.
    """
    if len(text_or_bytes) > MAX_CONFIG_BYTES:
        raise PlanInputError("config", f"{len(text_or_bytes):,} bytes",
                             msg("a config.json of at most {max_config_bytes:,} bytes",
                                 max_config_bytes=MAX_CONFIG_BYTES))
    text = json_text(text_or_bytes, "config", source)
    try:
        data = json.loads(text, object_pairs_hook=_config_keys)
    except DuplicateKey as exc:
        raise PlanInputError("duplicate key", exc.key, msg("each key once (JSON parsers disagree on which copy wins)")
                             ) from None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, >4,300 digits, deep nesting
        raise PlanInputError("config", source, msg("a JSON object; this file is not valid JSON ({json_error_text})",
                                                   json_error_text=json_error_text(exc))
                             ) from None
    if not isinstance(data, dict):
        raise PlanInputError("config", json_kind(data), msg("a JSON object ({{...}}) at the top level"))
    return data


def layout_from_config(
    config: dict[str, Any],
    *,
    main_format: KVFormat | None = None,
    indexer_format: KVFormat | None = None,
    ring_format: KVFormat | None = None,
    ring_in_pool: bool = True,
    state_format: KVFormat | None = None,
    ssm_state_format: KVFormat | None = None,
    ignore_fields: tuple[str, ...] = (),
) -> ImportedLayout:
    """KV layer groups of a Hugging Face config.

    Args:
        config: the parsed config.json (a nested ``text_config`` is merged over
            the top level, as multimodal models nest their language model).
        main_format: format of the main KV; ``None`` = the checkpoint's KV
            scheme if it declares one, else the engine's "auto" (BF16, or
            ``fp8_ds_mla`` for DeepSeek V3.2), reported as such.
        indexer_format, ring_format: DeepSeek V4 indexer keys and window rings
            (``None`` = BF16, reported as defaulted).
        ring_in_pool: False keeps DeepSeek V4 window rings outside the HBM pool.
        state_format: conv-state format of Mamba / linear-attention layers (and
            of their temporal state unless the config or engine says otherwise);
            None = BF16, reported as defaulted (vLLM ``--mamba-cache-dtype``).
        ssm_state_format: temporal (SSM / recurrent) state format; None = the
            config's, else the engine's default (vLLM ``--mamba-ssm-cache-dtype``).
        ignore_fields: layout fields the user accepts leaving unread (``--ignore-field``); each is
            reported as ignored at the user's request.

    Returns:
        ImportedLayout with per-group specs (per replica, TP applied later).

    Raises:
        PlanInputError: a missing, null-where-required, mistyped, out-of-range,
            contradictory or unknown field, naming it (``config.num_key_value_heads``).
    """
    if not isinstance(config, dict):
        raise PlanInputError("config", json_kind(config), msg("a JSON object"))
    merged = TrackedConfig(config)
    if isinstance(config.get("text_config"), dict):
        merged.update(config["text_config"])
    family, chosen = resolve({"architectures": config.get("architectures"), "model_type": merged.get("model_type")})
    r = ConfigReader(merged)
    r.note("architecture", family.id, "read", chosen)
    if isinstance(config.get("text_config"), dict):
        r.note("text_config", "merged", "read", msg("language-model fields read from text_config"))
        _text_config_defaults(r, merged, config["text_config"])
    for used in config.get(SIDECAR_KEY) or ():
        r.note("checkpoint sidecar", used, "read")
    _legacy_names(r, merged, family)
    for key in ("torch_dtype", "dtype"):
        if isinstance(merged.get(key), str):
            r.note(key, merged[key][:32], "ignored", msg("the weights' dtype; never used as the KV dtype"))

    model_type = text(merged.get("model_type", ""), 64)
    num_layers = r.int_field("num_hidden_layers", maximum=100_000)
    max_ctx = engine_max_len(r, merged, model_type)
    fmt = _main_format(r, merged, main_format)
    for key, why in _IGNORED_BUT_RELEVANT.items():
        if merged.get(key) not in (None, 0, False):
            r.note(key, text(merged[key], 40), "ignored", why)
    formats = {"main": fmt, "indexer": indexer_format or get_format("bf16"), "ring": ring_format or get_format("bf16")}

    if merged.get("compress_ratios") is not None:
        groups, pattern = deepseek_v4(r, merged, num_layers, formats, ring_in_pool)
    elif merged.get(KDA_LAYERS) is not None:  # Kimi-Linear: MLA layers, KDA state elsewhere
        kda_ids = set(merged[KDA_LAYERS][0])
        groups, pattern = mla(r, merged, num_layers, fmt, tuple(i for i in range(num_layers) if i not in kda_ids))
        groups.extend(kda_state(r, merged, state_format, ssm_state_format))
        pattern = "".join("L" if i in kda_ids else c for i, c in enumerate(pattern))
    elif merged.get("kv_lora_rank") is not None:
        groups, pattern = mla(r, merged, num_layers, fmt)
    else:
        groups, pattern = _attention(r, merged, num_layers, fmt, model_type, max_ctx, (state_format, ssm_state_format))
    ignored = _no_field_unread(r, merged, family, ignore_fields)
    heads = dict.get(merged, "num_attention_heads")
    heads = heads if isinstance(heads, int) and not isinstance(heads, bool) and heads > 0 else None
    return ImportedLayout(groups=tuple(groups), report=tuple(r.report), max_context_tokens=max_ctx,
                          model_type=model_type, layer_pattern=pattern, num_attention_heads=heads,
                          ignored_fields=ignored, pp_refusal=family.pp_refusal)


_TEXT_CONFIG_DEFAULTS: dict[str, dict[str, int]] = {
    # transformers LlamaConfig (src/transformers/models/llama/configuration_llama.py, read at huggingface/transformers
    # 008e574): hidden_size 4096, num_hidden_layers 32, num_attention_heads 32, max_position_embeddings 2048;
    # num_key_value_heads None -> num_attention_heads and head_dim None -> hidden_size // num_attention_heads, which
    # kvplan derives the same way. llava-hf/llava-1.5-7b-hf's text_config names none of the four.
    "llama": {"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
              "max_position_embeddings": 2048},
}
"""Class defaults of a nested ``text_config``, by its ``model_type``.

A multimodal config (transformers ``LlavaConfig``) builds its language model's config as
``CONFIG_MAPPING[text_config["model_type"]](**text_config)``, so a key the nested dict omits takes that class's
default; vLLM reads that object (``ModelConfig.hf_text_config``; ``LlavaForConditionalGeneration.__init__``,
vllm/model_executor/models/llava.py, passes ``config.text_config`` to ``init_vllm_registered_model``), never the
top level. Only classes whose defaults were read are listed; any other omission stays a refusal."""


def _text_config_defaults(r: ConfigReader, merged: TrackedConfig, text_cfg: dict) -> None:
    """Fill what a nested ``text_config`` omits with its config class's defaults, each reported as defaulted."""
    model_type = text_cfg.get("model_type")
    defaults = _TEXT_CONFIG_DEFAULTS.get(model_type) if isinstance(model_type, str) else None
    for key, value in (defaults or {}).items():
        if key not in text_cfg:  # absent only: an explicit null reaches the config class as None, never the default
            dict.__setitem__(merged, key, value)
            r.note(key, value, "defaulted", msg("absent from text_config: the default of transformers' {cls} config, "
                                                "as vLLM reads it", cls=model_type))


def _legacy_names(r: ConfigReader, cfg: TrackedConfig, family: Family) -> None:
    """Legacy field names the engine's config class maps (``n_layer`` -> ``num_hidden_layers``, ...), then the
    family's own derivations (nested ``attn_config``, ``multi_query``, ``block_configs``)."""
    notes: list[tuple] = []
    for legacy, canonical in family.aliases:
        if cfg.get(canonical) is None and cfg.get(legacy) is not None:
            dict.__setitem__(cfg, canonical, dict.__getitem__(cfg, legacy))
            notes.append((legacy, dict.__getitem__(cfg, legacy), "read",
                          msg("read as {canonical} (the engine's config class maps it)", canonical=canonical)))
    if family.prepare is not None:
        family.prepare(cfg, notes)
    for note in notes:
        r.note(*note)


def _no_field_unread(r: ConfigReader, cfg: TrackedConfig, family: Family,
                     ignore_fields: tuple[str, ...]) -> tuple[str, ...]:
    """Refuse a layout field the reader did not consult, unless the user accepted it by name; returns the
    accepted fields that were present and unread (those the figure does not account for)."""
    unread = unread_layout_fields(cfg, family)
    for key in unread:
        if key not in ignore_fields:
            raise PlanInputError(f"config.{key}", text(dict.__getitem__(cfg, key), 60),
                                 msg("a field the '{family}' reader reads or knows does not change KV: its name "
                                     "speaks of the KV layout and kvplan would price the model without it (accept "
                                     "it with --ignore-field {key} on the command line, or by naming it under "
                                     "\"Accept config fields kvplan does not model\" on the Model page)",
                                     family=family.id, key=key))
    for key in ignore_fields:
        state = msg("present and not modelled") if key in unread else msg("not a field kvplan would refuse")
        r.note(key, state, "ignored", msg("accepted at your request (--ignore-field): the figure does not account "
                                          "for it"))
    return tuple(k for k in ignore_fields if k in unread)


_IGNORED_BUT_RELEVANT = {
    "num_nextn_predict_layers": msg("MTP layers hold KV only as a speculative-decoding draft (not modelled)"),
    "cache_implementation": msg("an inference-library cache choice, not the serving engine's"),
    "use_cache": msg("read by training / eager code; serving engines always cache"),
}
"""Config keys that could change KV in some deployment, reported as ignored when set."""


# ---------------------------------------------------------------------------
# The KV dtype
# ---------------------------------------------------------------------------

def _main_format(r: ConfigReader, cfg: dict, chosen: KVFormat | None) -> KVFormat:
    """The main KV format: chosen, else the checkpoint's KV scheme, else BF16 (defaulted)."""
    if chosen is not None:
        try:
            declared = checkpoint_kv_format(r, cfg)
        except PlanInputError as exc:  # a scheme kvplan would refuse does not matter once a format is chosen
            r.note(exc.field.removeprefix("config."), exc.value, "ignored", msg("a KV format was chosen ({id})", id=chosen.id))
            return chosen
        if declared is not None:
            r.note("checkpoint KV dtype", declared.id, "ignored", msg("a KV format was chosen ({id})", id=chosen.id))
        return chosen
    declared = checkpoint_kv_format(r, cfg)
    if declared is not None:
        return declared
    if cfg.get("index_topk") is not None and cfg.get("kv_lora_rank") is not None:
        r.note("kv_format", FP8_DS_MLA.id, "defaulted",
               msg("DeepSeek V3.2: vLLM resolves the 'auto' KV dtype to fp8_ds_mla (656 B per latent; DeepseekV32ForCausalLM.verify_and_update_config); choose bf16 for a BF16 cache"))
        return FP8_DS_MLA
    r.note("kv_format", "bf16", "defaulted",
           msg("config.json does not say the KV dtype; BF16 assumed (engines' 'auto'); choose a KV format to change it"))
    return get_format("bf16")


# ---------------------------------------------------------------------------
# Attention (GQA / sliding / chunked) with Mamba and linear-attention layers
# ---------------------------------------------------------------------------

def _head_dim(r: ConfigReader, cfg: dict, num_heads: int) -> int:
    """``head_dim``, else ``attention_head_dim`` (Nemotron-H / Zamba spelling), else hidden_size / heads."""
    if cfg.get("head_dim") is not None:
        return r.int_field("head_dim", maximum=1_000_000)
    if cfg.get("attention_head_dim") is not None:
        return r.int_field("attention_head_dim", maximum=1_000_000)
    hidden = r.int_field("hidden_size", maximum=10**7)
    if hidden % num_heads:
        raise PlanInputError("config.hidden_size", hidden,
                             msg("a multiple of num_attention_heads ({num_heads}) when head_dim is absent",
                                 num_heads=num_heads))
    value = hidden // num_heads
    why = msg("head_dim is null") if "head_dim" in cfg else msg("head_dim absent")
    r.note("head_dim", value, "derived", msg("{why}: hidden_size / num_attention_heads", why=why))
    return value


@dataclass(frozen=True)
class _Geometry:
    kv_heads: int
    k_dim: int
    v_dim: int


def _geometry(r: ConfigReader, cfg: dict, kinds: list[str], num_heads: int) -> list[_Geometry | None]:
    """KV heads and K / V head dims of each attention layer (None for other layers)."""
    n = len(kinds)
    kv_raw = cfg.get("num_key_value_heads")
    if isinstance(kv_raw, list):
        kv_heads = r.int_list("num_key_value_heads", n, minimum=0, maximum=num_heads)
    elif kv_raw is None:
        kv_heads = [num_heads] * n
        r.note("num_key_value_heads", num_heads, "defaulted", msg("absent or null: MHA, one KV head per attention head"))
    else:
        kv_heads = [r.int_field("num_key_value_heads", maximum=num_heads)] * n
    head_dim = _head_dim(r, cfg, num_heads)
    v_dim = r.int_field("v_head_dim", maximum=1_000_000) if cfg.get("v_head_dim") is not None else head_dim
    base = {"full": (None, head_dim, v_dim), "sliding": (None, head_dim, v_dim), "chunked": (None, head_dim, v_dim)}
    if "full" in kinds:
        # vLLM Gemma4DecoderLayer (gemma4.py): full layers take global_head_dim, and num_global_key_value_heads
        # only with attention_k_eq_v (as Hugging Face Gemma4TextAttention).
        k_eq_v = cfg.get("attention_k_eq_v")
        if k_eq_v is not None and not isinstance(k_eq_v, bool):
            raise PlanInputError("config.attention_k_eq_v", k_eq_v, msg("true or false"))
        g_heads = None
        if k_eq_v:
            g_heads = r.int_field("num_global_key_value_heads", maximum=num_heads, required=False)
        elif cfg.get("num_global_key_value_heads") is not None:
            r.note("num_global_key_value_heads", cfg["num_global_key_value_heads"], "ignored",
                   msg("used only with attention_k_eq_v true (vLLM Gemma4DecoderLayer); full layers keep num_key_value_heads"))
        g_dim = r.int_field("global_head_dim", maximum=1_000_000, required=False)
        if g_heads or g_dim:
            base["full"] = (g_heads, g_dim or head_dim, g_dim or v_dim)
            r.note("full-attention geometry", f"{g_heads or 'per num_key_value_heads'} KV heads x {g_dim or head_dim}",
                   "derived", msg("full-attention layers use global_head_dim and, with attention_k_eq_v, num_global_key_value_heads (Gemma 4)"))
        if k_eq_v:
            r.note("attention_k_eq_v", True, "read", msg("V equals K on full-attention layers; vLLM still caches K and V (Gemma4Attention loads the K weights into both slots), so both are counted"))
    if "sliding" in kinds and any(cfg.get(k) is not None for k in ("swa_num_key_value_heads", "swa_head_dim")):
        s_heads = r.int_field("swa_num_key_value_heads", maximum=1_000_000, required=False)
        s_k = r.int_field("swa_head_dim", maximum=1_000_000, required=False) or head_dim
        s_v = r.int_field("swa_v_head_dim", maximum=1_000_000, required=False) or s_k
        base["sliding"] = (s_heads, s_k, s_v)
        r.note("sliding geometry", f"{s_heads or 'per num_key_value_heads'} KV heads x ({s_k} K + {s_v} V)", "derived",
               msg("sliding layers use swa_num_key_value_heads / swa_head_dim / swa_v_head_dim (MiMo-V2)"))
    query_heads = {kind: num_heads for kind in base}
    if "sliding" in kinds and cfg.get("swa_num_attention_heads") is not None:
        query_heads["sliding"] = r.int_field("swa_num_attention_heads", maximum=1_000_000)
    out: list[_Geometry | None] = []
    for i, kind in enumerate(kinds):
        if kind not in base:
            out.append(None)
            continue
        heads, k, v = base[kind]
        h = heads if heads is not None else kv_heads[i]
        attn_heads = query_heads[kind]
        if h and attn_heads % h:
            raise PlanInputError("config.num_key_value_heads", h,
                                 msg("a divisor of the attention heads ({attn_heads}) (layer {i})",
                                     attn_heads=attn_heads, i=i))
        out.append(_Geometry(h, k, v))
    return out


def _attention(r: ConfigReader, cfg: dict, num_layers: int, fmt: KVFormat, model_type: str,
               max_ctx: int | None, state_formats: tuple[KVFormat | None, KVFormat | None] = (None, None),
               ) -> tuple[list[KVGroup], str]:
    kinds = layer_kinds(r, cfg, num_layers, model_type)
    attn = [i for i, k in enumerate(kinds) if k in ("full", "sliding", "chunked")]
    geo: list[_Geometry | None] = [None] * num_layers
    if attn:
        num_heads = r.int_field("num_attention_heads", maximum=1_000_000)
        geo = _geometry(r, cfg, kinds, num_heads)
    windows = _windows(r, cfg, kinds, max_ctx)
    _windows_past_context(r, kinds, windows, max_ctx)
    chunk = None
    if "chunked" in kinds:
        chunk = r.int_field("attention_chunk_size", maximum=10**9)
        if max_ctx is not None and chunk > max_ctx:
            raise PlanInputError("config.attention_chunk_size", chunk, msg("at most max_position_embeddings "
                                                                           "({max_ctx:,})", max_ctx=max_ctx))

    # One group per (kind, KV heads, window, K dim, V dim); layers with 0 KV heads store nothing.
    members: dict[tuple[str, int, int, int, int], list[int]] = {}
    for i in attn:
        g = geo[i]
        if g.kv_heads:
            members.setdefault((kinds[i], g.kv_heads, windows[i], g.k_dim, g.v_dim), []).append(i)
    many_heads = len({k[1] for k in members}) > 1
    names = [_group_name(kind, h, w, chunk, many_heads) for (kind, h, w, _, _) in members]
    groups: list[KVGroup] = []
    for name, ((kind, h, window, k_dim, v_dim), ids) in zip(names, members.items()):
        if names.count(name) > 1:
            name += f", head dim {k_dim}" + (f"/{v_dim}" if v_dim != k_dim else "")
        common = dict(name=name, num_layers=len(ids), layer_ids=tuple(ids), kv_format=fmt, num_kv_heads=h,
                      k_head_dim=k_dim, v_head_dim=v_dim)
        if kind == "full":
            groups.append(FullAttentionGroup(**common))
        elif kind == "sliding":
            groups.append(SlidingWindowGroup(window_tokens=window, **common))
        else:
            groups.append(ChunkedLocalGroup(chunk_tokens=chunk, **common))
    for kind, build in (("linear", linear_attention_state), ("lightning", lightning_attention_state),
                        ("mamba", mamba_state), ("conv", short_conv_state)):
        ids = [i for i, k in enumerate(kinds) if k == kind]
        if kind == "mamba" and cfg.get(PARALLEL_MAMBA):
            ids = list(range(num_layers))  # a Mamba2 mixer in every layer, beside any attention (Falcon-H1, Zamba2)
        if ids:
            groups.extend(build(r, cfg, ids, model_type, *state_formats))
    if kinds.count("none"):
        r.note("layers without KV", kinds.count("none"), "derived", msg("MLP / MoE blocks store no KV"))
    if not groups:
        raise PlanInputError("config.num_key_value_heads", 0, msg("at least one layer with KV heads >= 1"))
    return groups, pattern_string(kinds)


def _group_name(kind: str, heads: int, window: int, chunk: int | None, many_heads: bool) -> str:
    base = {"full": "full attention", "sliding": f"sliding window {window:,}",
            "chunked": f"chunked local {chunk or 0:,}"}
    return base[kind] + (f", {heads} KV heads" if many_heads else "")


def _windows(r: ConfigReader, cfg: dict, kinds: list[str], max_ctx: int | None) -> list[int]:
    """The sliding window of each layer (0 for layers that do not slide); MiMo-V2's
    ``sliding_window_size`` wins (vLLM ``MiMoV2FlashDecoderLayer`` passes it to sliding layers)."""
    if "sliding" not in kinds:
        return [0] * len(kinds)
    key = "sliding_window"
    if cfg.get("hybrid_layer_pattern") is not None and cfg.get("sliding_window_size") is not None:
        key = "sliding_window_size"
        if cfg.get("sliding_window") is not None and cfg["sliding_window"] != cfg[key]:
            r.note("sliding_window", cfg["sliding_window"], "ignored",
                   msg("MiMo-V2: vLLM's sliding layers take sliding_window_size (MiMoV2FlashDecoderLayer)"))
    raw = cfg.get(key)
    if isinstance(raw, list):
        # A per-layer array: read per layer, never replaced by a scalar default.
        per_layer = r.int_list(key, len(kinds), minimum=0, maximum=10**9)
        windows = []
        for i, (k, w) in enumerate(zip(kinds, per_layer)):
            if k == "sliding" and w < 1:
                raise PlanInputError(f"config.{key}[{i}]", w, msg("a window >= 1 for a sliding layer"))
            windows.append(w if k == "sliding" else 0)
    else:
        w = r.int_field(key, maximum=10**9)
        windows = [w if k == "sliding" else 0 for k in kinds]
    return windows


def _windows_past_context(r: ConfigReader, kinds: list[str], windows: list[int], max_ctx: int | None) -> None:
    """A window wider than ``max_position_embeddings`` never binds: Phi-3-mini-128k and Phi-4-mini publish
    ``sliding_window`` 262,144 beside 131,072 positions. vLLM serves them with that window on every layer, and its
    ``SlidingWindowSpec.max_memory_usage_bytes`` (vllm/v1/kv_cache_interface.py) keeps at most ``max_model_len``
    tokens per layer, the bytes of full attention within the context. kvplan prices such layers as full attention
    and says so (it refused them before)."""
    if max_ctx is None:
        return
    wide = [i for i, (k, w) in enumerate(zip(kinds, windows)) if k == "sliding" and w > max_ctx]
    if not wide:
        return
    for i in wide:
        kinds[i], windows[i] = "full", 0
    r.note("sliding_window", msg("{n} layers wider than the context", n=len(wide)), "derived",
           msg("a window above max_position_embeddings ({max_ctx:,}) never binds: priced as full attention, as "
               "vLLM keeps at most max_model_len tokens per layer", max_ctx=max_ctx))


def model_from_config(config: dict[str, Any], *, name: str = "imported config", model_id: str = "custom",
                      main_format: KVFormat | None = None, source: str = "uploaded config.json",
                      state_format: KVFormat | None = None, ssm_state_format: KVFormat | None = None,
                      ignore_fields: tuple[str, ...] = ()) -> ModelSpec:
    """A :class:`planner.kv.models.ModelSpec` from a parsed config.json (architecture
    basis, no reported coefficient), carrying the import report and layer pattern.

    Raises:
        PlanInputError: from :func:`layout_from_config`.
    """
    layout = layout_from_config(config, main_format=main_format, state_format=state_format,
                                ssm_state_format=ssm_state_format, ignore_fields=ignore_fields)
    main = next((g.kv_format.id for g in layout.groups if g.role == "main"), None)
    label = (main_format.id if main_format is not None
             else msg("none: no layer keeps attention KV") if main is None  # a pure state model (Mamba)
             else msg("{main} (the checkpoint's or the engine's 'auto')", main=main))
    return ModelSpec(id=model_id, name=str(name)[:80], groups=layout.groups,
                     max_context_tokens=layout.max_context_tokens, source=source,
                     native_format_label=label, config_report=layout.report, layer_pattern=layout.layer_pattern,
                     num_attention_heads=layout.num_attention_heads,
                     ignored_fields=layout.ignored_fields, checkpoint_config=config,
                     pp_refusal=layout.pp_refusal,
                     notes=tuple(msg("config field {key} ignored at your request (--ignore-field): this figure does "
                                     "not account for it", key=k) for k in layout.ignored_fields)
                     + unchecked_architecture_notes(config))


def unchecked_architecture_notes(config: dict) -> tuple[str, ...]:
    """One note when the config's architecture is supported but no published config of it has been checked
    against vLLM's figures (:data:`planner.hf.public_goldens.PUBLIC_CONFIG_GOLDENS`): its figure rests on the
    reader's rules alone, and the user should know. Empty otherwise (no ``architectures``, or a checked one)."""
    archs = config.get("architectures") if isinstance(config, dict) else None
    if not isinstance(archs, list) or not archs or not isinstance(archs[0], str):
        return ()
    state, family = status(archs[0])
    if state != "supported" or archs[0] in PUBLIC_CONFIG_GOLDENS:
        return ()
    return (msg("No published config of {name} has been checked against vLLM yet: this figure follows the "
                "'{family}' reader's rules (docs/architectures.md)", name=archs[0][:100], family=family),)


CONFIG_MODEL_PREFIX = "config:"
"""Model ids of imported configs in a plan (``config:<file name>``): never a catalog id, so a plan file or link
naming one says that the config itself must come with it."""


def plan_model_from_config(config: dict[str, Any] | str | bytes, name: str, source: str | None = None,
                           ignore_fields: tuple[str, ...] = ()) -> ModelSpec:
    """An imported config.json (its text, or the config :func:`planner.hf.checkpoint.read_checkpoint` read) as
    the model of a plan (``kvplan plan --config``, the Plan page's upload): the same import as ``kvplan kv
    --config``, its KV format left to the plan, id ``config:<name>``; ``ignore_fields`` as ``kvplan kv
    --ignore-field``.

    Raises:
        PlanInputError: the config cannot be read (named field).
    """
    name = str(name)[:80]
    if not isinstance(config, dict):
        config = parse_config_text(config, name)
    return model_from_config(config, name=name, model_id=CONFIG_MODEL_PREFIX + name,
                             source=source or f"imported: {name}", ignore_fields=tuple(ignore_fields))
