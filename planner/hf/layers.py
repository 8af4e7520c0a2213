"""The layer mix of a ``config.json``: which kind each layer is, in every public dialect.

Kinds: ``full``, ``sliding``, ``chunked`` (Llama 4), ``linear`` (Gated
DeltaNet), ``mamba`` (Mamba1 or Mamba2, decided by the state fields) and
``none`` (an MLP / MoE-only block that stores no KV). Dialects, first match wins:

* ``layer_types`` (Hugging Face; Gemma 3/4, gpt-oss, Qwen3.5, Granite);
* ``hybrid_override_pattern`` (Nemotron-H / Nemotron 3: ``M`` Mamba2, ``*``
  attention, ``-`` MLP, ``E`` MoE; Hugging Face ``NemotronHConfig``);
* ``layers_block_type`` (``mamba`` / ``attention`` / ``mlp`` / ``moe``);
* ``attn_layer_period`` / ``attn_layer_offset`` (Jamba: layer ``i`` is
  attention when ``i % period == offset``, else Mamba; ``JambaConfig.layers_block_type``);
* ``hybrid_layer_pattern`` (MiMo-V2: 0 full, 1 sliding window);
* ``full_attention_interval`` with linear-attention fields (Qwen3-Next);
* ``sliding_window_pattern``; the Gemma 2 / Gemma 3 defaults;
* ``attention_chunk_size`` for Llama 4 only (``model_type`` ``llama4*`` or
  Llama 4's own ``no_rope_layers`` / ``no_rope_layer_interval``); MiMo uses
  the same key for something else, so elsewhere it is reported as ignored;
* ``use_sliding_window`` / ``max_window_layers`` / ``sliding_window`` (Qwen2, Mistral).

A config whose fields say it has state layers (Mamba, KDA, parallel hybrid
blocks) but whose mix is in no dialect above is refused, never priced as attention.
"""

from __future__ import annotations

from planner.hf.report import ConfigReader
from planner.errors import PlanInputError
from planner.messages import msg

KINDS = ("full", "sliding", "chunked", "linear", "lightning", "mamba", "conv", "shared", "none")
"""Every layer kind the importer knows."""

PATTERN_CODES = {"full": "F", "sliding": "S", "chunked": "C", "linear": "L", "lightning": "N", "mamba": "M", "conv": "K",
                 "shared": "s", "none": "-"}
"""One character per kind in a per-layer pattern string."""

_LAYER_TYPE_KINDS = {
    "full_attention": "full",
    "global": "full",
    "attention": "full",
    "sliding_attention": "sliding",
    "local": "sliding",
    "chunked_attention": "chunked",
    "linear_attention": "linear",
    "mamba": "mamba",
    "mamba2": "mamba",
}
_UNSUPPORTED_LAYER_TYPES = ("ssm", "hybrid", "conv", "short_conv", "rwkv", "retention", "kda", "gated_deltanet")
_NO_STATE_ADVICE = msg("; kvplan cannot size its state: give the model's bytes per token and per-sequence state "
                       "bytes instead (kvplan kv --bytes-per-token B --state-bytes S)")
_NEMOTRON_CODES = {"M": "mamba", "*": "full", "-": "none", "E": "none"}
_BLOCK_TYPES = {"mamba": "mamba", "attention": "full", "mlp": "none", "moe": "none"}
_STATE_HINTS = ("mamba_d_state", "ssm_state_size", "mamba_num_heads", "mamba_n_heads", "mamba_d_ssm",
                "linear_attn_config", "mamba_expand")


def layer_kinds(r: ConfigReader, cfg: dict, num_layers: int, model_type: str) -> list[str]:
    """The kind of each of ``num_layers`` layers (see :data:`KINDS`).

    Raises:
        PlanInputError: a mix field of the wrong type or length, an unknown
            layer kind, or state fields with no mix that says where they apply.
    """
    kinds = _read_kinds(r, cfg, num_layers, model_type)
    shared = r.int_field("num_kv_shared_layers", minimum=0, maximum=num_layers, required=False)
    if shared:
        kinds = kinds[:num_layers - shared] + ["shared"] * shared
        r.note("shared KV layers", shared, "derived",
               msg("the last num_kv_shared_layers layers reuse the KV of an earlier layer of their type and store none (Hugging Face Gemma3nTextConfig: first_kv_shared_layer_idx = num_hidden_layers - num_kv_shared_layers)"))
    if cfg.get("attention_chunk_size") is not None and "chunked" not in kinds:
        r.note("attention_chunk_size", cfg["attention_chunk_size"], "ignored",
               msg("read as Llama 4 chunked attention only for model_type llama4 (this is {value})", value=model_type or 'unnamed'))
    return kinds


def pattern_string(kinds: list[str]) -> str:
    """The per-layer pattern, one :data:`PATTERN_CODES` character per layer.

    >>> pattern_string(["mamba", "none", "full", "none"])
    'M-F-'
    """
    return "".join(PATTERN_CODES[k] for k in kinds)


SAME_KIND = "__kvplan_every_layer"
"""Private config key a family's reader sets to ``(kind, why)`` when every layer has one kind by the engine's
model class (``mamba`` for vLLM ``MambaForCausalLM`` / ``Mamba2ForCausalLM``; ``full`` for Falcon-H1, whose Mamba2
mixer runs beside the attention in every layer)."""


PER_LAYER_KINDS = "__kvplan_layer_kinds"
"""Private config key a family's reader sets to ``(kinds, why)`` when the engine's model class decides each layer's
kind from a field of its own (MiniMax-Text-01's ``attn_type_list``: 0 lightning, 1 softmax attention)."""


def _read_kinds(r: ConfigReader, cfg: dict, num_layers: int, model_type: str) -> list[str]:
    if cfg.get(PER_LAYER_KINDS) is not None:
        kinds, why = cfg[PER_LAYER_KINDS]
        if len(kinds) != num_layers:
            raise PlanInputError("config.num_hidden_layers", num_layers,
                                 msg("the length of the per-layer attention list ({n})", n=len(kinds)))
        r.note("layer kinds", _counts(kinds), "derived", why)
        return list(kinds)
    if cfg.get(SAME_KIND) is not None:
        kind, why = cfg[SAME_KIND]
        r.note("layer kinds", f"{num_layers} {kind}", "derived", why)
        return [kind] * num_layers
    if cfg.get("conv_L_cache") is not None:
        return _lfm2_kinds(r, cfg, num_layers)
    if cfg.get("layer_types") is not None:
        return _from_layer_types(r, cfg["layer_types"], num_layers)
    if cfg.get("hybrid_override_pattern") is not None:
        return _from_codes(r, "hybrid_override_pattern", cfg["hybrid_override_pattern"], num_layers, _NEMOTRON_CODES)
    if cfg.get("layers_block_type") is not None:
        return _from_codes(r, "layers_block_type", cfg["layers_block_type"], num_layers, _BLOCK_TYPES)
    if cfg.get("attn_layer_period") is not None:
        period = r.int_field("attn_layer_period", maximum=100_000)
        offset = r.int_field("attn_layer_offset", minimum=0, maximum=period - 1,
                             need=msg("Jamba's attention layers are those with i % attn_layer_period == "
                                      "attn_layer_offset"))
        kinds = ["full" if i % period == offset else "mamba" for i in range(num_layers)]
        r.note("layer kinds", _counts(kinds), "derived",
               msg("layer i is attention when i % {period} == {offset}, else Mamba (Hugging Face JambaConfig)", period=period, offset=offset))
        return kinds
    if cfg.get("hybrid_layer_pattern") is not None:
        pattern = r.int_list("hybrid_layer_pattern", num_layers, minimum=0, maximum=1)
        kinds = ["sliding" if v else "full" for v in pattern]
        r.note("layer kinds", _counts(kinds), "derived",
               msg("hybrid_layer_pattern: 0 full attention, 1 sliding window (MiMo-V2)"))
        return kinds
    if cfg.get("attn_layer_indices") is not None:
        attn = set(r.int_list("attn_layer_indices", None, minimum=0, maximum=num_layers - 1))
        kinds = ["full" if i in attn else "mamba" for i in range(num_layers)]
        r.note("layer kinds", _counts(kinds), "derived",
               msg("attn_layer_indices are attention, every other layer Mamba2 (Hugging Face BambaConfig."
                   "layers_block_type, read by vLLM's BambaModel)"))
        return kinds
    for key in _STATE_HINTS:
        if cfg.get(key) is not None:
            raise PlanInputError("config.layer_types", None,
                                 msg("a per-layer mix (layer_types, hybrid_override_pattern, layers_block_type or "
                                     "attn_layer_period) for a model with state fields such as {key}{no_state_advice}",
                                     key=key, no_state_advice=_NO_STATE_ADVICE))
    if cfg.get("full_attention_interval") is not None and cfg.get("linear_num_value_heads") is not None:
        every = r.int_field("full_attention_interval", maximum=100_000)
        kinds = ["full" if (i + 1) % every == 0 else "linear" for i in range(num_layers)]
        r.note("layer kinds", f"{kinds.count('linear')} linear, {kinds.count('full')} full", "derived",
               msg("layer i is full attention when (i+1) % {every} == 0, else linear attention (Hugging Face Qwen3NextConfig default layer_types)", every=every))
        return kinds
    if cfg.get("sliding_window_pattern") is not None:
        pattern = r.int_field("sliding_window_pattern", maximum=100_000)
        kinds = ["full" if (i + 1) % pattern == 0 else "sliding" for i in range(num_layers)]
        r.note("sliding layers", kinds.count("sliding"), "derived",
               msg("every {pattern}th layer global (layer i global when (i+1) % {pattern} == 0)", pattern=pattern))
        return kinds
    if model_type in ("gemma3", "gemma3_text") and cfg.get("sliding_window") is not None:
        kinds = ["full" if (i + 1) % 6 == 0 else "sliding" for i in range(num_layers)]
        r.note("sliding_window_pattern", 6, "defaulted",
               msg("absent: Gemma 3's default, every 6th layer global (Hugging Face Gemma3TextConfig)"))
        return kinds
    if model_type == "gemma2" and cfg.get("sliding_window") is not None:
        kinds = ["sliding" if i % 2 == 0 else "full" for i in range(num_layers)]
        r.note("sliding layers", kinds.count("sliding"), "derived",
               msg("Gemma 2 alternates local and global layers, layer 0 local (google/gemma_pytorch)"))
        return kinds
    if cfg.get("attention_chunk_size") is not None:
        llama4 = model_type.startswith("llama4") or any(
            cfg.get(k) is not None for k in ("no_rope_layers", "no_rope_layer_interval"))
        if not llama4:
            raise PlanInputError("config.attention_chunk_size", cfg["attention_chunk_size"],
                                 msg("absent for model_type {value}: kvplan reads it as Llama 4 chunked attention "
                                     "only (model_type llama4*), and its meaning here is not known",
                                     value=model_type or '(none)'))
        return _llama4_kinds(r, cfg, num_layers)
    return _sliding_flags(r, cfg, num_layers)


def _lfm2_kinds(r: ConfigReader, cfg: dict, num_layers: int) -> list[str]:
    """LFM2 (``conv_L_cache`` set): attention layers by ``layer_types`` ("full_attention" / "conv") or by
    ``full_attn_idxs``; every other layer a short convolution (vLLM lfm2.py builds ``Lfm2AttentionDecoderLayer``
    for the attention indices, ``Lfm2ShortConvDecoderLayer`` for the rest; Hugging Face ``Lfm2Config`` derives
    one field from the other)."""
    types, idxs = cfg.get("layer_types"), cfg.get("full_attn_idxs")
    if types is not None:
        if not isinstance(types, list) or len(types) != num_layers or any(t not in ("full_attention", "conv")
                                                                           for t in types):
            shown = f"{len(types)} entries" if isinstance(types, list) else types
            raise PlanInputError("config.layer_types", shown, msg("{num_layers} entries, each full_attention or conv "
                                                                  "(LFM2)", num_layers=num_layers))
        kinds = ["full" if t == "full_attention" else "conv" for t in types]
        if idxs is not None and sorted(set(idxs)) != [i for i, k in enumerate(kinds) if k == "full"]:
            raise PlanInputError("config.full_attn_idxs", idxs, msg("the attention layers of layer_types (LFM2: both "
                                                                    "name the same layers)"))
        r.note("layer_types", _counts(kinds), "read", msg("LFM2: full_attention layers, short convolutions elsewhere"))
        return kinds
    attn = set(r.int_list("full_attn_idxs", None, minimum=0, maximum=num_layers - 1))
    kinds = ["full" if i in attn else "conv" for i in range(num_layers)]
    r.note("layer kinds", _counts(kinds), "derived", msg("LFM2: full_attn_idxs are attention, every other layer a "
                                                         "short convolution"))
    return kinds


def _counts(kinds: list[str]) -> str:
    return ", ".join(f"{kinds.count(k)} {k}" for k in KINDS if kinds.count(k))


def _from_layer_types(r: ConfigReader, layer_types: object, num_layers: int) -> list[str]:
    if not isinstance(layer_types, list) or len(layer_types) != num_layers:
        shown = f"{len(layer_types)} entries" if isinstance(layer_types, list) else layer_types
        raise PlanInputError("config.layer_types", shown, msg("a list of {num_layers} layer types (one per layer)",
                                                              num_layers=num_layers))
    kinds = []
    for i, t in enumerate(layer_types):
        if not isinstance(t, str) or t not in _LAYER_TYPE_KINDS:
            extra = _NO_STATE_ADVICE if isinstance(t, str) and t.lower() in _UNSUPPORTED_LAYER_TYPES else ""
            raise PlanInputError(f"config.layer_types[{i}]", t, msg("one of {choices}{extra}",
                                                                    choices=", ".join(_LAYER_TYPE_KINDS), extra=extra))
        kinds.append(_LAYER_TYPE_KINDS[t])
    r.note("layer_types", _counts(kinds), "read")
    return kinds


def _from_codes(r: ConfigReader, key: str, raw: object, num_layers: int, codes: dict[str, str]) -> list[str]:
    items = list(raw) if isinstance(raw, str) else raw
    if not isinstance(items, list) or len(items) != num_layers:
        shown = f"{len(items)} entries" if isinstance(items, list) else raw
        raise PlanInputError(f"config.{key}", shown, msg("{num_layers} entries (one per layer)", num_layers=num_layers))
    kinds = []
    for i, c in enumerate(items):
        if not isinstance(c, str) or c not in codes:
            allowed = msg("one of {choices}{advice}", choices=", ".join(repr(k) for k in codes),
                          advice=_NO_STATE_ADVICE)
            raise PlanInputError(f"config.{key}[{i}]", c, allowed)
        kinds.append(codes[c])
    r.note(key, _counts(kinds), "read")
    return kinds


def _llama4_kinds(r: ConfigReader, cfg: dict, num_layers: int) -> list[str]:
    """Llama 4: ``no_rope_layers[i] == 1`` (RoPE) layers are chunked, 0 (NoPE) global.

    Absent or empty, Hugging Face's Llama4TextConfig derives it from
    ``no_rope_layer_interval`` (default 4): ``int((i + 1) % interval != 0)``.
    """
    nope = cfg.get("no_rope_layers")
    if nope:
        if not isinstance(nope, list) or len(nope) != num_layers or any(v not in (0, 1) or isinstance(v, bool)
                                                                           for v in nope):
            shown = f"{len(nope)} entries" if isinstance(nope, list) else nope
            raise PlanInputError("config.no_rope_layers", shown, msg("a list of {num_layers} entries, each 0 or 1",
                                                                     num_layers=num_layers))
        kinds = ["chunked" if v else "full" for v in nope]
        r.note("no_rope_layers", f"{kinds.count('full')} global, {kinds.count('chunked')} chunked", "read")
        return kinds
    if cfg.get("no_rope_layer_interval") is not None:
        every = r.int_field("no_rope_layer_interval", maximum=100_000)
    else:
        every = 4
        r.note("no_rope_layer_interval", 4, "defaulted", msg("absent: Llama4TextConfig default"))
    kinds = ["chunked" if (i + 1) % every else "full" for i in range(num_layers)]
    r.note("no_rope_layers", f"{kinds.count('full')} global, {kinds.count('chunked')} chunked", "derived",
           msg("absent: layer i is global (NoPE) when (i+1) % {every} == 0 (Hugging Face Llama4TextConfig)", every=every))
    return kinds


def _sliding_flags(r: ConfigReader, cfg: dict, num_layers: int) -> list[str]:
    """Qwen2 / Mistral: ``use_sliding_window``, ``max_window_layers``, ``sliding_window``."""
    if cfg.get("use_sliding_window") is not None and not isinstance(cfg["use_sliding_window"], bool):
        raise PlanInputError("config.use_sliding_window", cfg["use_sliding_window"], msg("true or false"))
    if cfg.get("use_sliding_window") is False:
        if cfg.get("sliding_window") is not None:
            r.note("sliding_window", cfg["sliding_window"], "ignored", msg("use_sliding_window is false"))
        return ["full"] * num_layers
    if cfg.get("sliding_window") is not None:
        if cfg.get("use_sliding_window") is True and cfg.get("max_window_layers") is not None:
            first = r.int_field("max_window_layers", minimum=0, maximum=num_layers)
            kinds = ["sliding" if i >= first else "full" for i in range(num_layers)]
            r.note("sliding layers", kinds.count("sliding"), "derived", msg("layers from max_window_layers on slide (Qwen2)"))
            return kinds
        r.note("sliding layers", num_layers, "derived", msg("sliding_window set with no per-layer pattern: all layers slide"))
        return ["sliding"] * num_layers
    return ["full"] * num_layers
