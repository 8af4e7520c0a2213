"""Per-sequence state of Mamba and linear-attention layers, from a ``config.json``.

Shapes and their tensor-parallel split follow vLLM's
``MambaStateShapeCalculator`` and dtypes its ``MambaStateDtypeCalculator``
(``vllm/model_executor/layers/mamba/mamba_utils.py``), per layer and sequence:

* Mamba1 (``mamba1_state_shape``): conv ``(I / TP) x (K - 1)``, temporal
  ``(I / TP) x N`` with ``I = mamba_expand * hidden_size`` (Jamba), ``N`` the
  state size, ``K`` the conv kernel;
* Mamba2 (``mamba2_state_shape``): conv ``((I + 2 G' N) / TP) x (K - 1)`` with
  ``G'`` the groups after ``extra_groups_for_head_shards``, temporal
  ``(H / TP) x P x N`` (``H`` heads of ``P`` channels, ``I = H * P``);
* Gated DeltaNet (``gated_delta_net_state_shape``): conv
  ``((2 H_k d_k + H_v d_v) / TP) x (K - 1)``, temporal ``(H_v / TP) x d_v x d_k``.

Dtypes (``_mamba_state_dtype``): the conv state in ``mamba_cache_dtype``
("auto" = the model dtype, BF16 here unless chosen); the temporal (SSM) state
in ``mamba_ssm_cache_dtype``, "auto" = the conv dtype, except Nemotron-H whose
vLLM config hook defaults it to FP32 (``NemotronHForCausalLMConfig``,
``DEFAULT_MAMBA_SSM_CACHE_DTYPE = "float32"``, in
``vllm/model_executor/models/config.py``) unless the config names one.
"""

from __future__ import annotations

from planner.hf.report import ConfigReader
from planner.errors import PlanInputError
from planner.kv.formats import KVFormat, get_format
from planner.kv.kinds import KVGroup, Mamba2ConvStateGroup, StateGroup
from planner.messages import msg

_DTYPES = {"float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
PARALLEL_MAMBA = "__kvplan_parallel_mamba"
"""Private config key: every layer holds a Mamba2 mixer, attention layers included (Falcon-H1, vLLM
``FalconH1ParallelHybrid``; Zamba2, whose hybrid layers run the shared attention block before their own Mamba2 mixer,
vLLM ``Zamba2HybridLayer``), so every layer gets Mamba2 state as well as any KV."""
MAMBA_INNER = "__kvplan_mamba_inner"
"""Private config key a family's reader sets to ``(inner size, field to name in a refusal, how the engine derives it)`` when the engine takes
the Mamba inner size from a field of its own (vLLM ``MambaForCausalLM``: ``intermediate_size``; ``Mamba2ForCausalLM``:
``expand x hidden_size``; ``FalconH1ForCausalLM``: ``mamba_d_ssm``, else ``mamba_expand x hidden_size``)."""
MAMBA_GROUPS = "__kvplan_mamba_groups"
"""Private config key a family's reader sets to ``(groups, how the engine fixes them)`` when the engine passes a fixed
``n_groups`` to ``mamba2_state_shape`` instead of a config field (vLLM ``Plamo2ForCausalLM``: ``n_groups=0``, so the
conv state holds the inner channels only)."""
KDA_LAYERS = "__kvplan_kda_layers"
"""Private config key a family's reader sets to ``(layer ids, heads, head dim, conv kernel)`` for Kimi Delta
Attention layers (vLLM ``KimiLinearForCausalLM``: ``linear_attn_config``)."""
_FP32_SSM_DEFAULT = ("nemotron_h", "nemotron_h_puzzle")
"""model_types whose vLLM config hook defaults the SSM cache to float32."""


def _conv_format(r: ConfigReader, state_format: KVFormat | None) -> KVFormat:
    if state_format is not None:
        return state_format
    r.note("state dtype", "bf16", "defaulted",
           msg("conv state dtype: vLLM mamba_cache_dtype 'auto' = the model dtype, BF16 assumed"))
    return get_format("bf16")


def _ssm_format(r: ConfigReader, cfg: dict, conv: KVFormat, model_type: str, chosen: KVFormat | None) -> KVFormat:
    if chosen is not None:
        r.note("mamba_ssm_cache_dtype", chosen.id, "read", msg("chosen (the engine's --mamba-ssm-cache-dtype); a dtype in config.json is not used"))
        return chosen
    for key in ("mamba_ssm_cache_dtype", "mamba_ssm_dtype"):
        raw = cfg.get(key)
        if raw is None:
            continue
        if not isinstance(raw, str) or raw not in _DTYPES:
            raise PlanInputError(f"config.{key}", raw, msg("one of {choices}", choices=", ".join(_DTYPES)))
        r.note(key, raw, "read", msg("temporal (SSM / recurrent) state dtype"))
        return get_format(_DTYPES[raw])
    if model_type in _FP32_SSM_DEFAULT:
        r.note("mamba_ssm_cache_dtype", "float32", "defaulted",
               msg("absent: vLLM's Nemotron-H hook defaults the SSM state to float32 (NemotronHForCausalLMConfig)"))
        return get_format("fp32")
    r.note("mamba_ssm_cache_dtype", conv.id, "defaulted",
           msg("absent: vLLM mamba_ssm_cache_dtype 'auto' = the conv state dtype (_mamba_state_dtype)"))
    return conv


def mamba_state(r: ConfigReader, cfg: dict, layer_ids: list[int], model_type: str,
                state_format: KVFormat | None, ssm_state_format: KVFormat | None = None) -> list[KVGroup]:
    """Conv and temporal state groups of the Mamba layers ``layer_ids`` (Mamba2
    when the config gives Mamba heads, else Mamba1).

    Raises:
        PlanInputError: a state field missing or out of range, naming it.
    """
    num_layers, ids = len(layer_ids), tuple(layer_ids)
    conv_fmt = _conv_format(r, state_format)
    ssm_fmt = _ssm_format(r, cfg, conv_fmt, model_type, ssm_state_format)
    need = msg("Mamba layers need their state shape")
    if any(cfg.get(k) is not None for k in ("mamba_num_heads", "mamba_n_heads")):
        heads = r.first_int(("mamba_num_heads", "mamba_n_heads"), maximum=1_000_000, need=need)
        head_dim = r.first_int(("mamba_head_dim", "mamba_d_head"), maximum=1_000_000, need=need)
        if cfg.get(MAMBA_GROUPS) is not None:
            groups, how = cfg[MAMBA_GROUPS]
            r.note("Mamba2 groups", groups, "derived", how)
        else:
            groups = r.first_int(("n_groups", "mamba_n_groups", "mamba_num_groups"), maximum=1_000_000, need=need)
        state = r.first_int(("ssm_state_size", "mamba_d_state", "state_size"), maximum=1_000_000, need=need)
        kernel = r.first_int(("conv_kernel", "mamba_d_conv"), minimum=2, maximum=1_000, need=need)
        inner = heads * head_dim
        engine_inner = cfg.get(MAMBA_INNER)
        if engine_inner is not None:
            size, field_name, how = engine_inner
            if size != inner:
                raise PlanInputError(f"config.{field_name}", size, msg("the Mamba2 heads x head dim ({heads} x {head_dim} = {inner:,}), "
                                                    "as {how}: "
                                                    "kvplan does not know how the engine runs a Mamba2 mixer whose "
                                                    "inner size differs", heads=heads, head_dim=head_dim, inner=inner, how=how))
        else:
            for key in ("expand", "mamba_expand"):
                if cfg.get(key) is not None:
                    r.note(key, cfg[key], "ignored", msg("Mamba2 inner size is mamba_num_heads x mamba_head_dim = {inner:,} (vLLM), not expand x hidden_size", inner=inner))
        r.note("Mamba2 state", msg("{n} layers", n=num_layers), "derived",
               msg("conv (I + 2 G N) x (K-1) = ({inner:,} + 2 x {groups} x {state}) x {value}; temporal H x P x N = {heads} x {head_dim} x {state} (vLLM mamba2_state_shape, I = H x P)", inner=inner, groups=groups, state=state, value=kernel - 1, heads=heads, head_dim=head_dim))
        return [
            Mamba2ConvStateGroup(name="Mamba2 conv state", num_layers=num_layers, layer_ids=ids, kv_format=conv_fmt,
                                 role="state",
                                 num_units=inner + 2 * groups * state, elements_per_unit=kernel - 1,
                                 intermediate_size=inner, n_groups=groups, state_size=state,
                                 shape_note=f"conv {kernel - 1} x ({inner:,} + 2 x {groups} x {state}) channels"),
            StateGroup(name="Mamba2 SSM state", num_layers=num_layers, layer_ids=ids, kv_format=ssm_fmt, role="state",
                       num_units=heads, elements_per_unit=head_dim * state,
                       shape_note=f"SSM {heads} heads x {head_dim} x {state}"),
        ]
    why = msg("{need} (Mamba1: mamba_expand x hidden_size channels; Mamba2: mamba_num_heads, mamba_head_dim, "
              "n_groups)", need=need)
    engine_inner = cfg.get(MAMBA_INNER)
    if engine_inner is None:
        expand = r.int_field("mamba_expand", maximum=1_000, need=why)
        hidden = r.int_field("hidden_size", maximum=10**7)
    state = r.first_int(("mamba_d_state", "ssm_state_size", "state_size"), maximum=1_000_000, need=need)
    kernel = r.first_int(("mamba_d_conv", "conv_kernel"), minimum=2, maximum=1_000, need=need)
    if engine_inner is not None:
        inner, _field_name, how = engine_inner
        r.note("Mamba1 state", msg("{n} layers", n=num_layers), "derived",
               msg("conv I x (K-1) = {inner:,} x {value}; temporal I x N = {inner:,} x {state}, I = {how} (vLLM mamba1_state_shape)", inner=inner, value=kernel - 1, state=state, how=how))
    else:
        inner = expand * hidden
        r.note("Mamba1 state", msg("{n} layers", n=num_layers), "derived",
               msg("conv I x (K-1) = {inner:,} x {value}; temporal I x N = {inner:,} x {state}, I = mamba_expand x hidden_size = {expand} x {hidden:,} (vLLM mamba1_state_shape)", inner=inner, value=kernel - 1, state=state, expand=expand, hidden=hidden))
    return [
        StateGroup(name="Mamba1 conv state", num_layers=num_layers, layer_ids=ids, kv_format=conv_fmt, role="state",
                   num_units=inner, elements_per_unit=kernel - 1, shape_note=f"conv {inner:,} channels x {kernel - 1}"),
        StateGroup(name="Mamba1 SSM state", num_layers=num_layers, layer_ids=ids, kv_format=ssm_fmt, role="state",
                   num_units=inner, elements_per_unit=state, shape_note=f"SSM {inner:,} channels x {state}"),
    ]


def linear_attention_state(r: ConfigReader, cfg: dict, layer_ids: list[int], model_type: str,
                           state_format: KVFormat | None, ssm_state_format: KVFormat | None = None) -> list[KVGroup]:
    """Gated DeltaNet state of the ``linear_attention`` layers ``layer_ids`` (Qwen3-Next, Qwen3.5).

    Raises:
        PlanInputError: a state field missing or out of range, naming it.
    """
    h_k = r.int_field("linear_num_key_heads", maximum=1_000_000)
    h_v = r.int_field("linear_num_value_heads", maximum=1_000_000)
    d_k = r.int_field("linear_key_head_dim", maximum=1_000_000)
    d_v = r.int_field("linear_value_head_dim", maximum=1_000_000)
    kernel = r.int_field("linear_conv_kernel_dim", minimum=2, maximum=1_000)
    conv_dim = 2 * h_k * d_k + h_v * d_v
    num_layers, ids = len(layer_ids), tuple(layer_ids)
    conv_fmt = _conv_format(r, state_format)
    ssm_fmt = _ssm_format(r, cfg, conv_fmt, model_type, ssm_state_format)
    r.note("linear-attention state", msg("{n} layers", n=num_layers), "derived",
           msg("conv (K-1) x (2 H_k d_k + H_v d_v) = {value} x {conv_dim:,}; recurrent H_v x d_v x d_k = {h_v} x {d_v} x {d_k} elements per layer and sequence (vLLM gated_delta_net_state_shape)", value=kernel - 1, conv_dim=conv_dim, h_v=h_v, d_v=d_v, d_k=d_k))
    return [
        StateGroup(name="linear attention conv state", num_layers=num_layers, layer_ids=ids, kv_format=conv_fmt,
                   role="state",
                   num_units=conv_dim, elements_per_unit=kernel - 1,
                   shape_note=f"conv {kernel - 1} x {conv_dim:,} channels"),
        StateGroup(name="linear attention recurrent state", num_layers=num_layers, layer_ids=ids, kv_format=ssm_fmt,
                   role="state",
                   num_units=h_v, elements_per_unit=d_v * d_k,
                   shape_note=f"recurrent {h_v} heads x {d_v} x {d_k}"),
    ]


def lightning_attention_state(r: ConfigReader, cfg: dict, layer_ids: list[int], model_type: str,
                              state_format: KVFormat | None, ssm_state_format: KVFormat | None = None) -> list[KVGroup]:
    """Lightning-attention state of MiniMax-Text-01 / MiniMax-M1's linear layers: vLLM
    ``MiniMaxText01ForCausalLM.get_mamba_state_shape_from_config`` (minimax_text_01.py, read at vllm-project/vllm
    98370df) -> ``MambaStateShapeCalculator.linear_attention_state_shape(num_attention_heads, TP, head_dim)`` =
    ``(heads / TP, head_dim, head_dim)`` per layer and sequence, no conv state; its dtype
    (``get_mamba_state_dtype_from_config`` -> ``MambaStateDtypeCalculator.linear_attention_state_dtype``) is
    ``mamba_cache_dtype``, "auto" = the model dtype (BF16 here unless chosen); ``mamba_ssm_cache_dtype`` is not
    read. An earlier SGLang sized it in FP32 (``MiniMaxText01Config.minimax_cache_per_req``,
    python/sglang/srt/configs/minimax_text_01.py); SGLang 0.5.23 no longer serves the architecture.

    Raises:
        PlanInputError: a state field missing or out of range, naming it.
    """
    from planner.hf.config import _head_dim  # one head-size rule (head_dim, else hidden_size / heads)
    heads = r.int_field("num_attention_heads", maximum=1_000_000)
    head_dim = _head_dim(r, cfg, heads)
    fmt = _conv_format(r, state_format)
    if ssm_state_format is not None:
        r.note("mamba_ssm_cache_dtype", ssm_state_format.id, "ignored",
               msg("the lightning-attention state follows mamba_cache_dtype only (vLLM linear_attention_state_dtype)"))
    ids = tuple(layer_ids)
    r.note("lightning-attention state", msg("{n} layers", n=len(ids)), "derived",
           msg("heads x head_dim x head_dim = {heads} x {dim} x {dim} elements per layer and sequence, split over TP "
               "by heads (vLLM linear_attention_state_shape)", heads=heads, dim=head_dim))
    return [StateGroup(name="lightning attention state", num_layers=len(ids), layer_ids=ids, kv_format=fmt,
                       role="state", num_units=heads, elements_per_unit=head_dim * head_dim,
                       shape_note=f"state {heads} heads x {head_dim} x {head_dim}")]


def short_conv_state(r: ConfigReader, cfg: dict, layer_ids: list[int], model_type: str,
                     state_format: KVFormat | None, ssm_state_format: KVFormat | None = None) -> list[KVGroup]:
    """Short-convolution state of LFM2's conv layers: vLLM ``ShortConv.get_state_shape`` ->
    ``MambaStateShapeCalculator.short_conv_state_shape``: ``(conv_L_cache - 1) x dim / TP`` per layer and sequence,
    ``dim`` the conv width (``conv_dim`` when the config gives it, else ``hidden_size``), in the conv-state dtype.

    Raises:
        PlanInputError: a state field missing or out of range, or ``conv_dim`` and ``hidden_size`` disagreeing.
    """
    kernel = r.int_field("conv_L_cache", minimum=2, maximum=1_000)
    hidden = r.int_field("hidden_size", maximum=10**7)
    dim = hidden
    if cfg.get("conv_dim") is not None:
        dim = r.int_field("conv_dim", maximum=10**7)
        if dim != hidden:
            raise PlanInputError("config.conv_dim", dim, msg("hidden_size ({hidden:,}): kvplan does not know which "
                                                             "width vLLM gives the short convolution otherwise",
                                                             hidden=hidden))
    conv_fmt = _conv_format(r, state_format)
    ids = tuple(layer_ids)
    r.note("short-convolution state", msg("{n} layers", n=len(ids)), "derived",
           msg("conv (K-1) x dim = {value} x {dim:,} elements per layer and sequence (vLLM short_conv_state_shape)",
               value=kernel - 1, dim=dim))
    return [StateGroup(name="short convolution state", num_layers=len(ids), layer_ids=ids, kv_format=conv_fmt,
                       role="state", num_units=dim, elements_per_unit=kernel - 1,
                       shape_note=f"conv {kernel - 1} x {dim:,} channels")]


def kda_state(r: ConfigReader, cfg: dict, state_format: KVFormat | None,
              ssm_state_format: KVFormat | None = None) -> list[KVGroup]:
    """Kimi Delta Attention state of the layers in ``cfg[KDA_LAYERS]``: vLLM ``KimiLinearForCausalLM.
    get_mamba_state_shape_from_config`` -> ``MambaStateShapeCalculator.kda_state_shape(tp, num_heads, head_dim,
    conv_kernel_size)``: short convolutions of q, k and v, each ``(num_heads * head_dim / TP) x (K - 1)``, and a
    recurrent state ``(num_heads / TP) x head_dim x head_dim`` per layer and sequence. Dtypes
    (``MambaStateDtypeCalculator.kda_state_dtype``): the convolutions in ``mamba_cache_dtype`` ("auto" = the model
    dtype), the recurrent state always float32 (``mamba_ssm_cache_dtype`` is not read)."""
    ids, heads, head_dim, kernel = cfg[KDA_LAYERS]
    conv_fmt = _conv_format(r, state_format)
    if ssm_state_format is not None:
        r.note("mamba_ssm_cache_dtype", ssm_state_format.id, "ignored",
               msg("vLLM kda_state_dtype keeps the KDA recurrent state in float32"))
    r.note("KDA state", msg("{n} layers", n=len(ids)), "derived",
           msg("conv 3 (q, k, v) x H x d x (K-1) = 3 x {heads} x {head_dim} x {value}; recurrent H x d x d = {heads} x "
               "{head_dim} x {head_dim} in float32 (vLLM kda_state_shape, kda_state_dtype)", heads=heads,
               head_dim=head_dim, value=kernel - 1))
    ids = tuple(ids)
    return [
        StateGroup(name="KDA conv state", num_layers=len(ids), layer_ids=ids, kv_format=conv_fmt, role="state",
                   num_units=heads, elements_per_unit=3 * head_dim * (kernel - 1),
                   shape_note=f"conv 3 x {heads} heads x {head_dim} x {kernel - 1}"),
        StateGroup(name="KDA recurrent state", num_layers=len(ids), layer_ids=ids, kv_format=get_format("fp32"),
                   role="state", num_units=heads, elements_per_unit=head_dim * head_dim,
                   shape_note=f"recurrent {heads} heads x {head_dim} x {head_dim}"),
    ]
