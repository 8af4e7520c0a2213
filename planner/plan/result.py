"""A plan's figures (:class:`PlanResult`) and the scalar :func:`plan`: the 0-d case of :func:`planner.plan.core.evaluate`."""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from planner.catalog.entries import get_model
from planner.errors import PlanInputError
from planner.kv.notes import past_maximum_note
from planner.kv.models import NATIVE, ModelSpec, with_pool_state
from planner.engines.launch import LaunchFlags, launch_flags
from planner.plan.core import Admission, evaluate, kv_split
from planner.plan.hardware import hardware_arrays, hbm_override_note, resolve_hardware
from planner.plan.inputs import MAX_SESSIONS_PER_GPU, AttentionParallelism, PlanInputs
from planner.plan.rebase import kv_binding_mismatch, usable_binding_mismatch
from planner.plan.placement import TierPlacement, place_sessions
from planner.units import cdiv, format_figure, to_gib
from planner.message_field import Text
from planner.messages import Figure, msg


class OtherParallelism(BaseModel):
    """The same plan under the other attention parallelism, shown where its sessions per GPU differ.

    Attributes:
        attention_parallelism: "dp" when the plan is "tp", and back.
        sessions_per_gpu, sessions_per_replica, sessions_basis: that plan's figures.
        how: the flags that get it, in words (per engine when none is named).
        launch_flags: the named engine's full command line for it (None without an engine).
    """

    model_config = ConfigDict(frozen=True)

    attention_parallelism: AttentionParallelism
    sessions_per_gpu: int | float
    sessions_per_replica: int
    sessions_basis: Literal["steady state", "engine admission"]
    how: Text
    launch_flags: LaunchFlags | None = None


class PlanResult(BaseModel):
    """A plan's figures, per GPU unless named otherwise; carries its inputs.

    Bytes are integers, per GPU (the GPU of the largest pipeline stage);
    ``*_gb`` / ``*_gib`` views are derived for display. Seconds are expected
    values over pauses (``*_s``). Session counts: ``sessions_per_replica``
    (whole sessions), ``sessions_per_gpu`` (``sessions_per_replica /
    gpus_per_replica``: a share under ``tp``, where a session spans every GPU
    of the replica) and ``sessions_per_domain`` (sessions sharing one set of
    GPUs: the replica under ``tp``, one GPU under ``dp`` without pipeline
    parallel).
    """

    model_config = ConfigDict(frozen=True)

    inputs: PlanInputs
    model_name: str
    ignored_config_fields: list[str] = Field(
        default_factory=list, description="an imported config's fields accepted unread (--ignore-field): no figure "
                                          "accounts for them")
    model_notes: list[str] = Field(
        default_factory=list, description="caveats of the model's figures: an imported config's architecture not yet "
                                          "checked against a published config, the fields --ignore-field accepted")
    gpu_name: str
    attention_parallelism: AttentionParallelism = Field(description="the parallelism every figure assumes")
    tensor_parallel_size: int = Field(description="TP degree the KV is split at (1 under dp)")
    kv_domain_gpus: int = Field(description="GPUs holding one session's KV together")
    parallelism_note: Text = Field("", description="the assumption in words, for display next to the figures")
    hbm_bytes: int
    hbm_source: str
    kv_source: Literal["reported", "architecture", "measured"] = Field(
        "architecture", description="what prices KV bytes per token: the publisher's coefficient, the layout, "
                                    "or a measurement (measured_kv_bytes_per_token)")
    usable_kv_source: Literal["computed", "measured", "engine"] = Field(
        "computed", description="computed from HBM, weights and reserve, measured_usable_kv_gib, or the named "
                                "engine's predicted budget (engine_budget)")
    engine_budget: dict[str, Any] | None = Field(
        None, description="with an engine: its predicted budget per GPU on the binding rank, every term with its "
                          "bytes and source, and the assumptions behind them")
    weights_bytes_per_gpu: int
    weight_format: str = Field("", description="the weight format priced: weight_format, else the model's own")
    reserve_bytes: int
    usable_kv_bytes: int
    kv_bytes_per_token: float = Field(description="growing KV bytes per token per GPU at this parallelism")
    prefix_tokens: int = Field(description="shared prefix tokens: floor(shared_prefix x context_tokens)")
    tail_tokens: int = Field(description="context tokens each session holds itself: context_tokens - prefix_tokens")
    session_kv_bytes: int = Field(description="one session's KV per GPU with no prefix sharing, N+T tokens")
    shared_prefix_bytes: int = Field(description="one shared prefix per GPU, stored once per distinct prefix")
    per_session_bytes: int
    state_bytes_per_session: int = Field(description="per-session state outside the pool (host RAM unless in HBM)")
    host_state_bytes: int = Field(description="state_bytes_per_session x sessions when kept in host RAM")
    sessions_per_domain: int
    sessions_per_gpu: int | float
    sessions_per_replica: int
    sessions_basis: Literal["steady state", "engine admission"] = Field(
        "steady state", description="what sessions_per_replica (and the rate, tiers, frontier, recommend and the CSV) "
                                    "follow: kvplan's steady state (windows only) or the named engine's admission "
                                    "of full-length requests")
    steady_state_sessions_per_replica: int = Field(
        0, description="kvplan's steady state: windows only, each shared prefix once (the upper bound)")
    steady_state_sessions_per_gpu: int | float = Field(0, description="steady_state_sessions_per_replica / GPUs")
    engine_num_blocks: int | None = Field(None, description="the engine's KV blocks per GPU for usable_kv_bytes "
                                                            "(vLLM num_gpu_blocks); None without an engine model")
    engine_blocks_per_request: int | None = Field(
        None, description="blocks one full-length request (context + output tokens) takes (vLLM)")
    engine_max_concurrency: float | None = Field(
        None, description="vLLM's 'Maximum concurrency' per KV domain: engine_num_blocks / engine_blocks_per_request; "
                          "SGLang: engine_max_total_num_tokens / (context + output tokens)")
    engine_max_total_num_tokens: int | None = Field(
        None, description="SGLang's max_total_num_tokens per KV domain for usable_kv_bytes (its full-attention pool "
                          "for a sliding-window model); None without the SGLang admission model")
    engine_max_running_requests: int | None = Field(
        None, description="SGLang's default max_running_requests at --context-length = context + output tokens")
    sessions_note: Text = Field("", description="both session figures in words, and which one drives the plan")
    launch_flags: LaunchFlags | None = Field(None, description="the named engine's command line that realises this "
                                                               "plan (None without an engine)")
    other_parallelism: OtherParallelism | None = Field(
        None, description="the other attention parallelism's sessions and the flag that gets it, where they differ")
    time_per_request_s: float | None
    request_rate_per_s: float | None
    request_rate_limit: Literal["decode throughput", "sessions", "none"]
    message: Text
    # -- shared prefixes ------------------------------------------------------
    prefix_copies: int = Field(0, description="shared prefixes stored in HBM: min(shared_prefixes, sessions)")
    shared_prefixes_bytes: int = Field(0, description="prefix_copies x shared_prefix_bytes")
    # -- misses and replay ----------------------------------------------------
    state_parked: bool = Field(False, description="window state waits in host RAM between turns (TTL applies)")
    miss_probability: float = Field(0.0, description="P(a resumed session finds its window state expired)")
    state_alive_fraction: float = Field(1.0, description="share of paused sessions whose state is within its TTL")
    replay_window_tokens: int = Field(0, description="the model's window W (out-of-pool ring); 0 when none")
    replay_tokens_per_miss: int = Field(0, description="min(W, context_tokens)")
    replay_tokens_per_turn: float = Field(0.0, description="miss_probability x replay_tokens_per_miss")
    replay_seconds_per_miss: float = Field(0.0, description="replay_tokens_per_miss / prefill_tokens_per_s")
    replay_seconds_per_turn: float = Field(0.0, description="miss_probability x replay_seconds_per_miss")
    state_reload_s: float = Field(0.0, description="window state bytes / host link bandwidth")
    restore_s: float = Field(0.0, description="expected seconds to restore a resumed session before decoding")
    prompt_prefill_tokens: int = Field(0, description="prompt tokens no cache holds, prefilled per request: "
                                                      "context_tokens - floor(hit_rate x context_tokens)")
    prompt_prefill_s: float = Field(0.0, description="prompt_prefill_tokens / prefill_tokens_per_s")
    ttft_s: float = Field(0.0, description="restore_s + prompt_prefill_s + one decode step "
                                           "(1 / session_decode_tokens_per_s)")
    gpu_seconds_per_request: float | None = Field(None, description="T / decode_tokens_per_s + prompt prefill, "
                                                  "replay and recompute prefill per turn")
    replay_share_of_gpu_time: float = Field(0.0, description="share of GPU time per request spent replaying")
    new_session_prefill_s: float = Field(0.0, description="first turn of a new session: tail_tokens / prefill")
    active_fraction: float = Field(1.0, description="share of its time a session runs a turn")
    # -- tiers ----------------------------------------------------------------
    host_link_id: str = ""
    host_link_bytes_per_s: float = 0.0
    ssd_link_id: str = ""
    ssd_link_bytes_per_s: float = 0.0
    host_ram_bytes_per_gpu: int = 0
    ssd_bytes_per_gpu: int = 0
    tier_source: str = Field("", description="where the host RAM, SSD and link figures come from")
    parked_session_bytes: int = Field(0, description="bytes a parked session moves back: per_session_bytes")
    reload_from_host_s: float = Field(0.0, description="parked_session_bytes / host link")
    reload_from_ssd_s: float = Field(0.0, description="parked_session_bytes / min(SSD, host link)")
    recompute_s: float = Field(0.0, description="(tail + output tokens) / prefill_tokens_per_s")
    fastest_recovery: Literal["host RAM reload", "SSD reload", "recompute"] = "host RAM reload"
    tiers: TierPlacement | None = None
    overflow_action: Literal["none", "offload", "evict", "reject"] = "none"
    overflow_message: Text = ""


def effective_model(inputs: PlanInputs, model: ModelSpec | None = None) -> tuple[ModelSpec, str, str]:
    """The model and KV format a plan prices bytes with, and what prices them.

    Returns:
        (model, kv_format, kv_source): with ``measured_kv_bytes_per_token`` set,
        the model's layout in ``inputs.kv_format`` with the measured figure as
        its coefficient and kv_format "native", source "measured"; otherwise
        the model as given (catalog by default), ``inputs.kv_format``, and
        "reported" or "architecture".

    Raises:
        PlanInputError: unknown model, a format the model cannot take, a
            measured figure bound to another model or format (call
            :func:`planner.plan.rebase` first), or a measured figure under
            ``tp`` for a model whose KV heads split over TP (a measurement is
            per GPU at TP 1).
    """
    model = model or get_model(inputs.model_id)
    fmt = inputs.kv_format
    if inputs.state_bytes_per_sequence is not None:
        model = with_pool_state(model, inputs.state_bytes_per_sequence)
    if inputs.measured_kv_bytes_per_token is None:
        return model, fmt, ("reported" if model.uses_coefficient(fmt) else "architecture")
    if (why := kv_binding_mismatch(inputs)) is not None:
        raise PlanInputError("measured_kv_bytes_per_token", inputs.measured_kv_bytes_per_token,
                             msg("a figure measured on this plan's model and format ({why})", why=why))
    tp = kv_split(inputs).tp
    if tp > 1 and model.growing_bytes(1_000_000, fmt, tp) != model.growing_bytes(1_000_000, fmt):
        raise PlanInputError("measured_kv_bytes_per_token", inputs.measured_kv_bytes_per_token,
                             msg("a figure for TP 1: under tensor-parallel attention {id}'s KV heads split over TP "
                                 "{tp}, which the measurement did not see; use attention_parallelism=dp or drop it",
                                 id=model.id, tp=tp))
    # The measurement prices growing KV in the chosen format; window and state groups keep the layout.
    measured = replace(model, groups=model.layout(fmt), reported_kv_bytes_per_token=inputs.measured_kv_bytes_per_token,
                       native_format_label=f"{fmt}, measured: {format_figure(inputs.measured_kv_bytes_per_token, 6)} B/token")
    return measured, NATIVE, "measured"


def _tp_kv_words(model: ModelSpec | None, fmt: str | None, tp: int) -> str:
    """What TP does to this model's KV, in words: heads split (or repeated when TP passes them), one-head
    entries (MLA latents, indexer keys, rings) replicated on every rank."""
    groups = [g for g in model.layout(fmt) if g.in_pool and g.role != "state"] if model is not None else []
    heads = max((g.kv_heads_per_gpu(1) or 0 for g in groups if not g.replicated_on_tp), default=0)
    parts = []
    if heads:
        per_gpu = cdiv(heads, tp)
        if heads >= tp:
            parts.append(msg("split the {heads:,} KV heads ({per_gpu} per GPU)" if heads != 1 else
                             "split the {heads:,} KV head ({per_gpu} per GPU)", heads=heads, per_gpu=per_gpu))
        else:
            parts.append(msg("repeat the {heads:,} KV heads (TP {tp} passes them: each GPU keeps one head, each head "
                             "is on {ranks} or more ranks)" if heads != 1 else
                             "repeat the {heads:,} KV head (TP {tp} passes it: each GPU keeps one head, each head "
                             "is on {ranks} or more ranks)", heads=heads, tp=tp, ranks=tp // heads))
    replicated = [g.name for g in groups if g.replicated_on_tp]
    if replicated:
        names = ", ".join(dict.fromkeys(replicated))
        parts.append(msg("replicate the one-head entries ({names}) on every rank", names=names))
    if not parts:
        return msg("split the KV")
    return parts[0] if len(parts) == 1 else msg("{first} and {second}", first=parts[0], second=parts[1])


def parallelism_note(inputs: PlanInputs, model: ModelSpec | None = None, fmt: str | None = None) -> str:
    """The attention parallelism a plan assumes, in words (shown next to its figures); with ``model``, what
    TP does to its KV (heads split, one-head entries replicated)."""
    split = kv_split(inputs)
    g = inputs.gpus_per_replica
    pp = msg(", pipeline parallel {pp} (layers split)", pp=split.pp) if split.pp > 1 else ""
    gpus = msg("{gpus:,} GPU" if g == 1 else "{gpus:,} GPUs", gpus=g)
    if inputs.attention_parallelism == "tp":
        if split.tp == 1:
            ranks = msg("one GPU holds the whole KV of each layer")
        else:
            ranks = msg("the replica's {tp} TP ranks {what}", tp=split.tp, what=_tp_kv_words(model, fmt, split.tp))
        spans = msg("each session is on its one GPU") if g == 1 else msg("each session spans all {gpus}", gpus=gpus)
        return msg("Tensor-parallel attention (vLLM and SGLang default): {ranks}{pp}; {spans}, so sessions are "
                   "counted per replica and per GPU is that count / GPUs.", ranks=ranks, pp=pp, spans=spans)
    return msg("Data-parallel attention (SGLang --enable-dp-attention, DeepSeek's deployments): each GPU holds whole "
               "sessions at TP 1{pp}; sessions per replica = sessions per GPU x {gpus}.", pp=pp, gpus=gpus)


def _f(x) -> float:
    return float(x)


@dataclass(frozen=True, eq=False)
class _Same:
    """A model as an ``lru_cache`` key, by identity: two equal specs stay apart, and the cache
    keeps the model alive so its id stays its own."""

    model: ModelSpec

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Same) and other.model is self.model

    def __hash__(self) -> int:
        return id(self.model)


@functools.lru_cache(maxsize=4096)
def _slope(key: _Same, n: int, fmt: str, tp: int, pp: int) -> float:
    return key.model.estimate(n, fmt, tp, pp).kv_bytes_per_token


def _kv_bytes_per_token(model: ModelSpec, n: int, fmt: str, tp: int, pp: int) -> float:
    """``model.estimate(n, fmt, tp, pp).kv_bytes_per_token`` (B/token), remembered for the last few thousand calls."""
    return _slope(_Same(model), n, fmt, tp, pp)


def _mixture_of_experts(inputs: PlanInputs, model: ModelSpec | None) -> bool | None:
    """Whether the planned model has routed experts, from its config.json (an imported model's own, else the
    catalog's); None when no config is known."""
    from planner.hf.weights import has_routed_experts

    try:
        spec = model if model is not None else get_model(inputs.model_id)
    except PlanInputError:
        return None
    if spec.checkpoint_config is not None:
        return has_routed_experts(spec.checkpoint_config)
    return _catalog_routed_experts(spec.id)


@functools.lru_cache(maxsize=256)
def _catalog_routed_experts(model_id: str) -> bool | None:
    """:func:`planner.hf.weights.has_routed_experts` of a catalog model's shipped config.json (remembered:
    the shipped files do not change); None for an id without one."""
    from planner.catalog.entries import catalog_config
    from planner.hf.weights import has_routed_experts

    try:
        return has_routed_experts(catalog_config(model_id))
    except PlanInputError:  # not a catalog model, and no config of its own
        return None


def plan_arrays(inputs: PlanInputs, model: ModelSpec | None, context_tokens):
    """The arithmetic of :func:`plan` at one or many context lengths: its checks, its model and its accelerator,
    then :func:`planner.plan.core.evaluate` with ``context_tokens`` (an int or an int64 array of token counts in
    [1, MAX_CONTEXT_TOKENS]) in place of ``inputs.context_tokens``; every other input is the plan's.

    Returns:
        (arrays, model, kv_format, kv_source, hardware): :class:`planner.plan.core.PlanArrays` shaped like
        ``context_tokens``, the model that prices KV (measured coefficient applied), its KV format, where its
        KV bytes per token come from, and the resolved accelerator.

    Raises:
        PlanInputError: as :func:`plan`.
    """
    if (why := usable_binding_mismatch(inputs)) is not None:
        raise PlanInputError("measured_usable_kv_gib", inputs.measured_usable_kv_gib,
                             msg("a figure measured with this plan's GPU and weights ({why})", why=why))
    priced, fmt, kv_source = effective_model(inputs, model)
    hw = resolve_hardware(inputs, model=model)
    a = evaluate(inputs, priced, fmt, hardware_arrays([hw], inputs.decode_tokens_per_s, inputs.prefill_tokens_per_s),
                 context_tokens, inputs.shared_prefix, inputs.hit_rate)
    return a, priced, fmt, kv_source, hw


def plan(inputs: PlanInputs, model: ModelSpec | None = None, *, compare: bool = True) -> PlanResult:
    """Evaluate one plan: :func:`planner.plan.core.evaluate` on 0-d values, with its messages.

    Args:
        inputs: validated inputs.
        model: a model to use instead of the catalog's ``inputs.model_id``
            (an imported config or a measured coefficient).
        compare: also plan the other attention parallelism (``other_parallelism``).

    Raises:
        PlanInputError: unknown model, GPU or format, a format the model cannot
            take, or a measured figure bound to other inputs (call
            :func:`planner.plan.rebase` first).
    """
    given_model = model
    a, model, fmt, kv_source, hw = plan_arrays(inputs, model, inputs.context_tokens)
    split = a.split
    weights = a.weights_bytes_per_gpu
    usable, shared, per = int(a.usable_kv_bytes), int(a.shared_prefix_bytes), int(a.per_session_bytes)
    sessions = int(a.sessions)
    n, t, k = inputs.context_tokens, inputs.output_tokens, inputs.shared_prefixes
    state = int(a.state_bytes)
    parked_state = bool(a.parked_state)
    slope = _kv_bytes_per_token(model, n, fmt, split.tp, split.pp)
    per_gpu = sessions if split.domain_gpus == 1 else _f(a.sessions_per_gpu)

    where = (msg("one GPU") if split.domain_gpus == 1 else msg("the replica") if inputs.attention_parallelism == "tp"
             else msg("one pipeline of {gpus} GPUs", gpus=split.domain_gpus))
    if usable <= 0 and hw.engine_budget is not None:
        message = msg("Nothing fits: {engine}'s predicted KV budget is {budget} GiB per GPU (its terms: engine_budget). "
                      "Add GPUs per replica, more HBM or a smaller weight format.", engine=hw.engine_budget.engine,
                      budget=Figure(format_figure(to_gib(hw.engine_budget.available_kv_bytes))))
    elif usable <= 0:
        util_bytes = hw.hbm_bytes * inputs.gpu_memory_utilization
        message = msg("Nothing fits: weights ({weights} GiB per GPU) and reserve ({reserve:g} GiB) exceed HBM x "
                      "utilization ({usable} GiB). Add GPUs per replica, more HBM or a smaller weight format.",
                      weights=Figure(format_figure(to_gib(weights))), reserve=inputs.reserve_gib,
                      usable=Figure(format_figure(to_gib(util_bytes))))
    elif sessions == 0 and a.admission.vllm is not None and int(a.steady_sessions) > 0:
        adm = a.admission.vllm
        message = msg("vLLM would not admit one request of {tokens:,} tokens {where}: it reserves {need} GiB per GPU "
                      "for it ({blocks:,} blocks), usable KV is {usable} GiB per GPU, so it refuses to start. Lower "
                      "the context, or add GPUs or HBM.", tokens=n + t, where=where,
                      need=Figure(format_figure(to_gib(adm.blocks_per_request(n + t) * adm.bytes_per_block))),
                      blocks=adm.blocks_per_request(n + t), usable=Figure(format_figure(to_gib(usable))))
    elif sessions == 0 and a.admission.sglang is not None and int(a.steady_sessions) > 0:
        message = msg("SGLang would not run one request of {tokens:,} tokens on {where}: its token pool holds {pool:,} "
                      "tokens (usable KV {usable} GiB per GPU), so it caps requests at that length. Lower the context, "
                      "or add GPUs or HBM.", tokens=n + t, where=where,
                      pool=int(a.admission.sglang.pool_tokens(usable)[0]), usable=Figure(format_figure(to_gib(usable))))
    elif sessions == 0:
        message = msg("Not one session fits {where}: the shared prefix plus one session need {need} GiB per GPU, "
                      "usable KV is {usable} GiB per GPU.", where=where,
                      need=Figure(format_figure(to_gib(shared + per))), usable=Figure(format_figure(to_gib(usable))))
        if inputs.attention_parallelism == "dp" and inputs.gpus_per_replica > split.pp and kv_source != "measured":
            try:
                alt = plan(inputs.model_copy(update={"attention_parallelism": "tp"}), model, compare=False)
            except PlanInputError:
                alt = None  # a TP size vLLM refuses for this model (check_tp_heads): no suggestion
            if alt is not None and alt.sessions_per_replica > 0:
                message = msg("{message} Under tensor-parallel attention (attention_parallelism=tp) the replica's "
                              "{gpus} would split each session's KV heads and {sessions:,} sessions would fit per "
                              "replica.", message=message, sessions=alt.sessions_per_replica,
                              gpus=msg("{gpus:,} GPU" if inputs.gpus_per_replica == 1 else "{gpus:,} GPUs",
                                       gpus=inputs.gpus_per_replica))
    elif sessions >= MAX_SESSIONS_PER_GPU:
        message = msg("Memory does not bound sessions: every token of a session is in the shared prefix (reported "
                      "as {sessions:,}).", sessions=MAX_SESSIONS_PER_GPU)
    else:
        message = ""

    host_link, ssd_link = hw.host_link, hw.ssd_link
    target = int(a.target_sessions)
    placement = place_sessions(
        target, hbm_sessions=sessions, active_fraction=_f(a.active_fraction), usable_hbm_bytes=usable,
        prefix_bytes=shared, num_prefixes=k, per_session_bytes=per, state_bytes=state if parked_state else 0,
        state_alive_fraction=_f(a.state_alive_fraction), host_ram_bytes=hw.host_ram_bytes, ssd_bytes=hw.ssd_bytes,
        counts=a.placement,
    )
    reload_host, reload_ssd, recompute = _f(a.reload_from_host_s), _f(a.reload_from_ssd_s), _f(a.recompute_s)
    fastest = min((reload_host, "host RAM reload"), (reload_ssd, "SSD reload"), (recompute, "recompute"))[1]

    if t == 0:
        time_per_request = gpu_seconds = rate = None
        limit = "none"
        message = message or msg("No output tokens: request rate is undefined (no decode).")
    else:
        time_per_request, gpu_seconds = _f(a.time_per_request_s), _f(a.gpu_seconds_per_request)
        rate = _f(a.request_rate_per_s)
        limit = "sessions" if bool(a.limited_by_sessions) else "decode throughput"

    for note in (hbm_override_note(inputs, hw.hbm_bytes), past_maximum_note(model, n + t)):
        if note:
            message = msg("{note} {message}", note=note, message=message) if message else note

    steady = int(a.steady_sessions)
    steady_gpu = steady if split.domain_gpus == 1 else steady / split.domain_gpus
    steady_replica = steady * split.domains_per_replica
    engine_blocks = per_request = concurrency = pool_tokens = max_running = None
    if a.admission.vllm is not None:
        adm = a.admission.vllm
        engine_blocks, per_request = adm.num_blocks(usable), adm.blocks_per_request(n + t)
        concurrency = engine_blocks / per_request
    elif a.admission.sglang is not None:
        full, _ = a.admission.sglang.pool_tokens(usable)
        pool_tokens = int(full)
        max_running = int(a.admission.sglang.max_running_requests(pool_tokens, n + t))
        concurrency = pool_tokens / (n + t)
    note = sessions_note(inputs, a.admission, where, sessions, steady, engine_blocks, per_request, concurrency,
                         usable_bytes=usable)
    replica = int(a.sessions_per_replica)
    flags = None
    if inputs.engine is not None:
        flags = launch_flags(inputs.engine, attention_parallelism=inputs.attention_parallelism,
                             gpus_per_replica=inputs.gpus_per_replica, pipeline_parallel_size=split.pp,
                             request_tokens=n + t, kv_format=inputs.kv_format, hit_rate=inputs.hit_rate,
                             gpu_memory_utilization=inputs.gpu_memory_utilization, usable_kv_bytes=usable,
                             usable_measured=bool(a.usable_measured) and hw.engine_budget is None,
                             weights_bytes_per_gpu=weights, engine_budget=hw.engine_budget is not None,
                             hbm_bytes=hw.hbm_bytes, sessions_per_engine=sessions if inputs.attention_parallelism == "dp"
                             else replica, sessions_per_replica=replica,
                             engine_admission=a.admission.basis == "engine admission",
                             mixture_of_experts=_mixture_of_experts(inputs, given_model),
                             windowed_layers=a.admission.vllm is None or any(
                                 t.spec.vllm_kind in ("sliding", "chunked") and not t.converted
                                 for t in a.admission.vllm.paging.types),
                             model_max_tokens=model.max_context_tokens)
    other = other_parallelism(inputs, given_model, per_gpu) if compare else None
    copies = min(k, sessions)
    return PlanResult(
        inputs=inputs, model_name=model.name, ignored_config_fields=list(model.ignored_fields),
        model_notes=[str(n) for n in model.notes], gpu_name=hw.gpu_name,
        attention_parallelism=inputs.attention_parallelism, tensor_parallel_size=split.tp,
        kv_domain_gpus=split.domain_gpus, parallelism_note=parallelism_note(inputs, model, fmt),
        hbm_bytes=hw.hbm_bytes, hbm_source=hw.hbm_source, kv_source=kv_source,
        usable_kv_source=("engine" if hw.engine_budget is not None else "measured") if bool(a.usable_measured)
        else "computed",
        engine_budget=None if hw.engine_budget is None else hw.engine_budget.to_dict(),
        weights_bytes_per_gpu=weights, weight_format=inputs.weight_format or model.weight_format,
        reserve_bytes=a.reserve_bytes, usable_kv_bytes=usable,
        kv_bytes_per_token=slope, prefix_tokens=int(a.prefix_tokens),
        tail_tokens=n - int(a.prefix_tokens), session_kv_bytes=int(a.growing_total_bytes) + int(a.capped_bytes),
        shared_prefix_bytes=shared, per_session_bytes=per, state_bytes_per_session=state,
        host_state_bytes=0 if inputs.state_in_hbm else state * sessions,
        sessions_per_domain=sessions, sessions_per_gpu=per_gpu, sessions_per_replica=int(a.sessions_per_replica),
        sessions_basis=a.admission.basis, steady_state_sessions_per_replica=steady_replica,
        steady_state_sessions_per_gpu=steady_gpu, engine_num_blocks=engine_blocks,
        engine_blocks_per_request=per_request, engine_max_concurrency=concurrency,
        engine_max_total_num_tokens=pool_tokens, engine_max_running_requests=max_running, sessions_note=note,
        launch_flags=flags, other_parallelism=other,
        time_per_request_s=time_per_request, request_rate_per_s=rate, request_rate_limit=limit, message=message,
        prefix_copies=copies, shared_prefixes_bytes=copies * shared, state_parked=parked_state,
        miss_probability=_f(a.miss_probability), state_alive_fraction=_f(a.state_alive_fraction),
        replay_window_tokens=a.replay_window_tokens, replay_tokens_per_miss=int(a.replay_tokens_per_miss),
        replay_tokens_per_turn=_f(a.replay_tokens_per_turn), replay_seconds_per_miss=_f(a.replay_seconds_per_miss),
        replay_seconds_per_turn=_f(a.replay_seconds_per_turn), state_reload_s=_f(a.state_reload_s),
        restore_s=_f(a.restore_s), prompt_prefill_tokens=int(a.prompt_prefill_tokens),
        prompt_prefill_s=_f(a.prompt_prefill_s), ttft_s=_f(a.ttft_s), gpu_seconds_per_request=gpu_seconds,
        replay_share_of_gpu_time=_f(a.replay_share_of_gpu_time), new_session_prefill_s=_f(a.new_session_prefill_s),
        active_fraction=_f(a.active_fraction), host_link_id=host_link.id, host_link_bytes_per_s=host_link.bytes_per_s,
        ssd_link_id=ssd_link.id, ssd_link_bytes_per_s=ssd_link.bytes_per_s, host_ram_bytes_per_gpu=hw.host_ram_bytes,
        ssd_bytes_per_gpu=hw.ssd_bytes, tier_source=hw.tier_source, parked_session_bytes=per,
        reload_from_host_s=reload_host, reload_from_ssd_s=reload_ssd, recompute_s=recompute, fastest_recovery=fastest,
        tiers=placement, overflow_action=placement.action, overflow_message=placement.message,
    )


def _switch_words(engine: str | None, to: str, width: int, mixture_of_experts: bool | None = None) -> str:
    """The flags that switch a replica of ``width`` GPUs per stage to attention parallelism ``to``, in words
    (``--enable-expert-parallel`` unless the model is known to be dense, as :func:`launch_flags` prints it)."""
    if to == "dp" and mixture_of_experts is False:
        vllm = msg("vLLM --data-parallel-size {width} --tensor-parallel-size 1", width=width)
        sglang = msg("SGLang --tp-size {width} --dp-size {width} --enable-dp-attention", width=width)
    elif to == "dp":
        vllm = msg("vLLM --data-parallel-size {width} --tensor-parallel-size 1 --enable-expert-parallel", width=width)
        sglang = msg("SGLang --tp-size {width} --dp-size {width} --enable-dp-attention", width=width)
    else:
        vllm = msg("vLLM --tensor-parallel-size {width} (no --data-parallel-size)", width=width)
        sglang = msg("SGLang --tp-size {width} without --enable-dp-attention", width=width)
    if engine == "vllm":
        return vllm
    if engine == "sglang":
        return sglang
    return msg("{vllm}; or {sglang}", vllm=vllm, sglang=sglang)


def other_parallelism(inputs: PlanInputs, model: ModelSpec | None, sessions_per_gpu: int | float) -> OtherParallelism | None:
    """The plan under the other attention parallelism, when the replica's stages are wider than one GPU and its
    sessions per GPU differ from ``sessions_per_gpu`` (None otherwise, or when that plan cannot be made, e.g. a
    measured TP-1 figure under TP attention)."""
    width = inputs.gpus_per_replica // inputs.pipeline_parallel_size
    if width <= 1:
        return None
    to = "dp" if inputs.attention_parallelism == "tp" else "tp"
    try:
        alt = plan(inputs.model_copy(update={"attention_parallelism": to}), model, compare=False)
    except PlanInputError:
        return None
    if alt.sessions_per_gpu == sessions_per_gpu:
        return None
    return OtherParallelism(attention_parallelism=to, sessions_per_gpu=alt.sessions_per_gpu,
                            sessions_per_replica=alt.sessions_per_replica, sessions_basis=alt.sessions_basis,
                            how=_switch_words(inputs.engine, to, width, _mixture_of_experts(inputs, model)),
                            launch_flags=alt.launch_flags)


def sessions_note(inputs: PlanInputs, admission: Admission, where: str, sessions: int, steady: int,
                  num_blocks: int | None, per_request: int | None, concurrency: float | None,
                  usable_bytes: int = 0) -> str:
    """Both session figures in words, and which one the plan follows (said once, here).

    ``where`` is the KV domain in words; counts are per domain.
    """
    n = inputs.context_tokens + inputs.output_tokens
    if admission.vllm is not None:
        s = admission.vllm.settings
        windowed = any(t.kind in ("sliding", "chunked") for t in admission.vllm.paging.types)
        if windowed:
            note = msg("Sessions are vLLM's admission figure: {sessions:,} full-length requests of {tokens:,} tokens "
                       "at once on {where} (its maximum concurrency, {num_blocks:,} blocks / {per_request:,} per "
                       "request = {concurrency:.2f}x; a sliding-window layer holds its window plus one prefill chunk "
                       "of {batched:,} tokens, in blocks of {block} tokens). kvplan's steady state (windows only) "
                       "holds {steady:,}: the upper bound. The headline, the frontier, recommend and the CSV use the "
                       "admission figure.", sessions=sessions, tokens=n, where=where, num_blocks=num_blocks,
                       per_request=per_request, concurrency=concurrency, batched=s.max_num_batched_tokens,
                       block=s.block_size, steady=steady)
        else:
            note = msg("Sessions are vLLM's admission figure: {sessions:,} full-length requests of {tokens:,} tokens "
                       "at once on {where} (its maximum concurrency, {num_blocks:,} blocks / {per_request:,} per "
                       "request = {concurrency:.2f}x, in blocks of {block} tokens). kvplan's steady state holds "
                       "{steady:,}: the upper bound. The headline, the frontier, recommend and the CSV use the "
                       "admission figure.", sessions=sessions, tokens=n, where=where, num_blocks=num_blocks,
                       per_request=per_request, concurrency=concurrency, block=s.block_size, steady=steady)
        if inputs.hit_rate > 0:
            note = msg("{note} vLLM's figure reserves every request's whole prefix; requests that share a cached "
                       "prefix take fewer new blocks, so more may run.", note=note)
        return note
    if admission.sglang is not None:
        g = admission.sglang
        full, swa = g.pool_tokens(usable_bytes)
        running = int(g.max_running_requests(full, n))
        note = msg("Sessions are SGLang's admission figure: {sessions:,} full-length requests of {tokens:,} tokens at "
                   "once on {where} (its token pool of {pool:,} tokens / {tokens:,} = {concurrency:.2f}, bounded by "
                   "its default max_running_requests of {running:,} at --context-length {tokens:,}). kvplan's steady "
                   "state (windows only) holds {steady:,}: the upper bound. The headline, the frontier, recommend and "
                   "the CSV use the admission figure.", sessions=sessions, tokens=n, where=where, pool=int(full),
                   concurrency=concurrency or 0.0, running=running, steady=steady)
        if g.swa_bytes_per_token:
            note = msg("{note} Sliding-window layers: a second pool of {swa:,} tokens (--swa-full-tokens-ratio "
                       "{ratio:g}), where each request holds at most its window of {window:,} plus one prefill chunk "
                       "of {chunk:,} tokens.", note=note, swa=int(swa), ratio=g.swa_full_tokens_ratio,
                       window=g.window_tokens, chunk=g.chunked_prefill_size)
        if inputs.hit_rate > 0:
            note = msg("{note} Requests that share a cached prefix (RadixAttention) take fewer new pool slots, so "
                       "more may run.", note=note)
        return note
    if inputs.engine is not None:
        return msg("Sessions are kvplan's steady state (windows only), the upper bound of what {engine} admits: "
                   "{reason}. The headline, the frontier, recommend and the CSV use it.",
                   engine={"vllm": "vLLM", "sglang": "SGLang"}[inputs.engine], reason=admission.reason)
    return ""


def format_sessions(value: int | float) -> str:
    """A session count for display: whole numbers with separators, a per-GPU share with 3 significant digits.

    >>> format_sessions(240), format_sessions(0.75), format_sessions(3.0), format_sessions(27_100.4), format_sessions(0.000123)
    ('240', '0.75', '3', '27,100', '0.000123')
    """
    if isinstance(value, (int, np.integer)) or float(value).is_integer():
        return f"{int(value):,}"
    return format_figure(float(value), 3)  # "27,100", never "2.71e+04"
