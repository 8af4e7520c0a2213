"""The maximum context of a ``config.json``, derived the engine's way.

vLLM derives a model's maximum length in ``_get_and_verify_max_len`` (``vllm/config/model.py``, read at
vllm-project/vllm 0052a5b); :func:`engine_max_len` mirrors it for what a ``config.json`` says:

1. the smallest of ``max_position_embeddings``, ``n_positions`` (GPT-2), ``max_seq_len`` (MPT), ``seq_length``
   (ChatGLM), ``model_max_length`` (Command-R), ``max_target_positions`` (Whisper), ``max_sequence_length``,
   ``max_seq_length``, ``seq_len``, each read when present;
2. a non-zero ``model_max_length`` then wins outright, even when larger ("For Command-R / Cohere, Cohere2 / Aya
   Vision models");
3. RoPE scaling (``rope_parameters``, or ``rope_scaling`` that vLLM's ``patch_rope_parameters`` renames; ``type``
   read as ``rope_type``; a dict per layer type is read per type): unless the ``model_type`` contains ``gemma3``
   (whose length is already scaled), every entry whose ``rope_type`` is not ``su``, ``longrope`` or ``llama3`` sets
   the factor (``factor``, default 1.0), and ``yarn`` first resets the length to its
   ``original_max_position_embeddings``; the length is multiplied by the factor once.

vLLM reads these from ``hf_text_config`` (a multimodal model's ``text_config``), as kvplan reads its merged config.
A ``tokenizer_config.json``'s ``model_max_length`` takes part only for pooling models with absolute position
embeddings (``ModelConfig.get_and_verify_max_len``), never for a text-generation model, so kvplan does not read it.

Not mirrored, and said so: the 2,048-token default vLLM assumes when no key is present (kvplan reports no maximum and
names that default); ``--disable-sliding-window``; and, with ``longrope``, vLLM's *default* ``max_model_len`` (the
top-level ``original_max_position_embeddings``) while the limit stays the derived length: kvplan keeps the limit and
notes the default.
"""

from __future__ import annotations

from planner.errors import PlanInputError
from planner.hf.report import ConfigReader
from planner.messages import msg

MAX_LEN_KEYS = ("max_position_embeddings", "n_positions", "max_seq_len", "seq_length", "model_max_length",
                "max_target_positions", "max_sequence_length", "max_seq_length", "seq_len")
"""vLLM's ``possible_keys``, in its order."""

_UNSCALED = ("su", "longrope", "llama3")
def engine_max_len(r: ConfigReader, cfg: dict, model_type: str) -> int | None:
    """The maximum context vLLM derives from ``cfg`` (see the module), each step reported; None when no key is present.

    Raises:
        PlanInputError: a length key not an integer in [1, 10^9]; a scaling entry malformed (named).
    """
    found = {key: r.int_field(key, maximum=10**9, required=False) for key in MAX_LEN_KEYS if cfg.get(key) is not None}
    if not found:
        r.note("max_position_embeddings", None, "defaulted",
               msg("not in config: no maximum context known (vLLM would assume 2,048 tokens)"))
        return None
    key = min(found, key=lambda k: (found[k], MAX_LEN_KEYS.index(k)))
    derived: float = found[key]
    if len(found) > 1:
        r.note("maximum context", found[key], "derived", msg("the smallest of {keys} ({key}), as vLLM "
                                                             "_get_and_verify_max_len", keys=", ".join(found), key=key))
    if found.get("model_max_length") and key != "model_max_length":
        derived = found["model_max_length"]
        r.note("model_max_length", derived, "read", msg("wins over the other length keys, as vLLM "
                                                        "_get_and_verify_max_len does (Command-R, Cohere2, Aya Vision)"))
    return _rope_scaled(r, cfg, model_type, derived)


def _rope_scaled(r: ConfigReader, cfg: dict, model_type: str, derived: float) -> int:
    raw = cfg.get("rope_parameters") if cfg.get("rope_parameters") is not None else cfg.get("rope_scaling")
    if raw is None:
        return int(derived)
    where = "rope_parameters" if cfg.get("rope_parameters") is not None else "rope_scaling"
    if not isinstance(raw, dict):
        raise PlanInputError(f"config.{where}", str(raw)[:60], msg("a JSON object (vLLM reads its rope_type and factor)"))
    # Transformers v5 keys rope_parameters by layer type (Gemma 4: full_attention / sliding_attention), each a dict
    per_type = bool(raw) and all(isinstance(v, dict) for v in raw.values())
    entries = raw if per_type else {"": raw}
    if "gemma3" in model_type:
        r.note(where, msg("not applied"), "ignored", msg("Gemma 3's max_position_embeddings is already scaled "
                                                         "(vLLM _get_and_verify_max_len)"))
        return int(derived)
    factor, longrope = 1.0, False
    for name, rp in entries.items():
        field = f"config.{where}" + (f".{name}" if name else "")
        if not isinstance(rp, dict):
            raise PlanInputError(field, str(rp)[:60], msg("a JSON object (vLLM reads its rope_type and factor)"))
        rope_type = rp.get("rope_type", rp.get("type", "default"))
        longrope = longrope or rope_type in ("longrope", "su")
        if rope_type in _UNSCALED:
            continue
        value = rp.get("factor", factor)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise PlanInputError(f"{field}.factor", value, msg("a number > 0"))
        factor = value
        if rope_type == "yarn":
            original = rp.get("original_max_position_embeddings")
            if isinstance(original, bool) or not isinstance(original, int) or original < 1:
                raise PlanInputError(f"{field}.original_max_position_embeddings", original,
                                     msg("an integer >= 1: vLLM scales YaRN's original length by its factor"))
            derived = original
    scaled = int(derived * factor)
    if factor != 1.0:
        r.note("maximum context", scaled, "derived", msg("{length:,} x RoPE factor {factor} (vLLM "
                                                          "_get_and_verify_max_len)", length=derived, factor=factor))
    if longrope and cfg.get("original_max_position_embeddings") is not None:
        r.note("original_max_position_embeddings", cfg["original_max_position_embeddings"], "read",
               msg("LongRoPE: vLLM's default max_model_len when none is given; the limit stays {limit:,}",
                   limit=scaled))
    return scaled
