"""Sessions per GPU and request rate, the seeds' method (domain.md §5).

Sessions first, then the replay penalty. With context ``N`` tokens, prefix hit
rate ``h``, ``T`` output tokens and ``K`` distinct shared prefixes:

* the first ``floor(h*N)`` tokens are a prefix shared by the sessions on a GPU;
  each of the ``K`` prefixes is stored once: ``shared_prefix_bytes`` (growing KV
  of those tokens) per prefix;
* each session holds the rest: ``per_session_bytes = growing(N+T) - growing(prefix)
  + capped(N+T) + state_in_hbm``: its uncached tail, its output (which grows the
  tail), its window layers and, when placed in HBM, its fixed state (window
  rings are per session: a window slides past the shared prefix);
* ``usable_kv_bytes = floor(hbm_bytes * gpu_memory_utilization) - weights_bytes_per_gpu - reserve_bytes``
  (weights: total parameters, never active ones, / GPUs per replica);
* ``sessions_per_gpu = floor((usable - K * shared) / per_session)`` when at least
  ``K`` sessions fit (every prefix stored, each with a session), else
  ``floor(usable / (shared + per_session))`` (each session brings its own
  prefix); 0 when nothing fits, with the reason in ``message``;
* misses: between turns a session pauses (``pause_mean_s``); its window state
  waits in host RAM for ``ttl_s``. It is gone when the pause outlasts the TTL:
  ``miss_probability = P(pause > TTL)`` = ``exp(-TTL / mean)`` for exponential
  pauses, ``1 if mean > TTL else 0`` for a fixed pause (a state is still there
  at exactly ``TTL``). A miss replays the model's window (``min(W, N)`` tokens,
  W = 128 for V4.1-Flash) as prefill at ``prefill_tokens_per_s``; a hit reloads
  the state over the host link;
* the replay penalty: each turn costs the GPU ``T / decode_tokens_per_s +
  replay_tokens_per_turn / prefill_tokens_per_s`` seconds, and a session waits
  ``ttft_s`` (restore + one decode step) before its first token;
* ``request_rate_per_s = min(1 / gpu_seconds_per_request, sessions_per_gpu /
  time_per_request_s)`` with ``time_per_request_s = restore_s +
  output_tokens / session_decode_tokens_per_s`` (Little's law).

Tiers (:mod:`planner.tiers`): running sessions live in HBM, paused ones may be
parked in host RAM or on SSD when ``target_sessions_per_gpu`` asks for more
sessions than HBM holds; ``tiers`` says where every byte sits and what happens
to the excess (``offload``, ``evict`` or ``reject``).

Attention is data-parallel: each GPU holds whole sessions (DeepSeek's DP
attention); the GPUs of a replica split the weights. Figures are per GPU unless
named ``_per_replica``.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Annotated, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from planner.catalog import GPUSpec, get_gpu, get_model
from planner.errors import PlanInputError
from planner.formats import FORMATS
from planner.models import NATIVE, WEIGHT_BYTES_PER_PARAM, ModelSpec
from planner.tiers import AUTO, HOST_LINKS, SSD_LINKS, TierPlacement, node_for, place_sessions, resolve_links
from planner.units import GiB, to_gb, to_gib

MAX_CONTEXT_TOKENS = 100_000_000
"""Largest context accepted (1e8 tokens; the longest published window is 1e7)."""
MAX_HBM_GIB = 100_000.0
"""Largest HBM accepted per GPU, GiB (far above any device)."""

MAX_SECONDS = 31_536_000.0
"""Longest pause or TTL accepted, seconds (365 days)."""
MAX_TIER_GIB = 10_000_000.0
"""Largest host RAM or SSD accepted per GPU, GiB (about 10.7 PB)."""
MAX_SESSIONS_PER_GPU = 1_000_000_000
"""Sessions reported when memory does not bound them (every token in the shared prefix)."""
MAX_SHARED_PREFIXES = 1_000_000
"""Most distinct shared prefixes accepted per GPU."""
MIN_TOKENS_PER_S = 0.001
"""Slowest decode or prefill speed accepted, tokens/s (one token in 1,000 s).

A speed is a divisor of seconds: a denormal such as 5e-324 tokens/s would turn
one replayed token into infinite seconds (and 0 x inf into NaN), so speeds are
bounded below as well as above."""

Tokens = Annotated[int, Field(ge=1, le=MAX_CONTEXT_TOKENS)]
PauseDistribution = Literal["exponential", "fixed"]
"""How pauses between turns are spread: exponential with the given mean, or always the mean."""


def _one_of(value: str, choices, *also: str) -> str:
    """``value`` if it is one of ``also`` or ``choices``; else ValueError listing them (pydantic names the field)."""
    if value in also or value in choices:
        return value
    raise ValueError("one of " + ", ".join([*also, *choices]))


class PlanInputs(BaseModel):
    """Every input of a plan, validated at construction (also parses links and JSON).

    Units: tokens, GiB (binary), tokens per second, fractions in [0, 1].

    Raises:
        pydantic.ValidationError: use :func:`make_inputs` to get a
            :class:`PlanInputError` naming the field, value and range instead.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: str = Field("deepseek-v4.1-flash", description="catalog model id")
    gpu_id: str = Field("h200", description="catalog accelerator id, or 'custom' with hbm_gib")
    gpus_per_replica: int = Field(8, ge=1, le=1024, description="GPUs that split one replica's weights")
    hbm_gib: float | None = Field(None, gt=0, le=MAX_HBM_GIB, allow_inf_nan=False,
                                  description="HBM per GPU in GiB; None = the GPU's reported total")
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1, allow_inf_nan=False,
                                          description="fraction of HBM the engine may use (vLLM default 0.9)")
    weights_gib: float | None = Field(None, ge=0, le=10_000_000, allow_inf_nan=False,
                                      description="weights of one replica, GiB; None = parameters x bytes per parameter")
    weight_format: str | None = Field(None, description="weight storage format; None = the catalog's")
    reserve_gib: float = Field(2.0, ge=0, le=MAX_HBM_GIB, allow_inf_nan=False,
                               description="runtime reserve per GPU (activations, CUDA graphs), GiB")
    context_tokens: Tokens = Field(1_000_000, description="prompt + history tokens per session")
    output_tokens: int = Field(1_000, ge=0, le=MAX_CONTEXT_TOKENS, description="generated tokens per request")
    hit_rate: float = Field(0.5, ge=0, le=1, allow_inf_nan=False, description="prefix hit rate")
    kv_format: str = Field(NATIVE, description="KV format id, or 'native'")
    state_in_hbm: bool = Field(False, description="keep per-session out-of-pool state (window rings) in HBM")
    decode_tokens_per_s: float = Field(5_000.0, ge=MIN_TOKENS_PER_S, le=1e9, allow_inf_nan=False,
                                       description="aggregate decode throughput per GPU, tokens/s (assumed)")
    session_decode_tokens_per_s: float = Field(50.0, ge=MIN_TOKENS_PER_S, le=1e7, allow_inf_nan=False,
                                               description="decode speed of one session, tokens/s (assumed)")
    shared_prefixes: int = Field(1, ge=1, le=MAX_SHARED_PREFIXES,
                                 description="distinct shared prefixes per GPU, each stored once")
    pause_mean_s: float = Field(0.0, ge=0, le=MAX_SECONDS, allow_inf_nan=False,
                                description="mean pause between a session's turns, s (0 = turns follow at once)")
    pause_distribution: PauseDistribution = Field("exponential", description="exponential or fixed pauses")
    ttl_s: float = Field(60.0, ge=0, le=MAX_SECONDS, allow_inf_nan=False,
                         description="host-RAM TTL of window state, s (seed: minute-level; 0 = never persisted, as vLLM)")
    prefill_tokens_per_s: float = Field(20_000.0, ge=MIN_TOKENS_PER_S, le=1e9, allow_inf_nan=False,
                                        description="prefill throughput per GPU for replay and recompute, tokens/s (assumed)")
    host_ram_gib: float | None = Field(None, ge=0, le=MAX_TIER_GIB, allow_inf_nan=False,
                                       description="host RAM per GPU for KV, GiB; None = node RAM / GPUs per node")
    ssd_gib: float | None = Field(None, ge=0, le=MAX_TIER_GIB, allow_inf_nan=False,
                                  description="SSD per GPU for KV, GiB; None = node SSD / GPUs per node")
    host_link: str = Field(AUTO, description="host RAM <-> GPU link: auto (the node's), " + ", ".join(HOST_LINKS))
    ssd_link: str = Field(AUTO, description="SSD link: auto (the node's), " + ", ".join(SSD_LINKS))
    target_sessions_per_gpu: int | None = Field(None, ge=0, le=MAX_SESSIONS_PER_GPU,
                                                description="sessions to carry per GPU, running + paused; "
                                                            "None = what HBM holds")
    measured_kv_bytes_per_token: float | None = Field(
        None, ge=0.001, le=1e9, allow_inf_nan=False,
        description="KV bytes per token measured by `kvplan probe` (or an engine) for this model and kv_format; "
                    "replaces the growing-KV coefficient, marked as measured; None = the planner's arithmetic")
    measured_usable_kv_gib: float | None = Field(
        None, ge=0.001, le=MAX_HBM_GIB, allow_inf_nan=False,
        description="usable KV memory per GPU measured on the device (probe's free memory, an engine's log), GiB, "
                    "at least 0.001 GiB (about 1 MiB: a zero or denormal measurement is no measurement); "
                    "replaces HBM x utilization - weights - reserve; None = computed")

    @field_validator("context_tokens", "output_tokens", mode="before")
    @classmethod
    def _token_suffixes(cls, v: object) -> object:
        """Links and files may write counts as people do: "128k", "1M" (decimal)."""
        if isinstance(v, str) and v.strip()[-1:].lower() in ("k", "m", "g"):
            from planner.units import parse_tokens

            try:
                return parse_tokens(v, minimum=0, maximum=10**12)
            except PlanInputError:
                return v  # pydantic then names the field and its range
        return v

    @field_validator("kv_format")
    @classmethod
    def _known_format(cls, v: str) -> str:
        return _one_of(v, FORMATS, NATIVE)

    @field_validator("host_link")
    @classmethod
    def _known_host_link(cls, v: str) -> str:
        return _one_of(v, HOST_LINKS, AUTO)

    @field_validator("ssd_link")
    @classmethod
    def _known_ssd_link(cls, v: str) -> str:
        return _one_of(v, SSD_LINKS, AUTO)

    @field_validator("weight_format")
    @classmethod
    def _known_weight_format(cls, v: str | None) -> str | None:
        return v if v is None else _one_of(v, WEIGHT_BYTES_PER_PARAM)


def field_range(model: type[BaseModel], name: str) -> str | None:
    """The allowed range of a numeric pydantic field in words ("a number in (0, 1]")."""
    info = model.model_fields.get(name)
    if info is None:
        return None
    lo = hi = None
    lo_open = hi_open = False
    for m in info.metadata:
        for attr, is_lo, is_open in (("ge", True, False), ("gt", True, True), ("le", False, False), ("lt", False, True)):
            v = getattr(m, attr, None)
            if v is not None:
                if is_lo:
                    lo, lo_open = v, is_open
                else:
                    hi, hi_open = v, is_open
    if lo is None and hi is None:
        return None
    kind = "a whole number" if info.annotation is int else "a finite number"
    left = f"{'(' if lo_open else '['}{lo:,}" if lo is not None else "(-inf"
    right = f"{hi:,}{')' if hi_open else ']'}" if hi is not None else "inf)"
    return f"{kind} in {left}, {right}"


def plan_error(exc: ValidationError, model: type[BaseModel] | None = None) -> PlanInputError:
    """The first pydantic error as a :class:`PlanInputError` (field, value, allowed range)."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or "input"
    ctx = err.get("ctx") or {}
    allowed = err.get("msg", "a valid value")
    if ctx.get("error") is not None:
        allowed = str(ctx["error"])
    elif model is not None and (rng := field_range(model, field)):
        allowed = rng
    if err.get("type") == "extra_forbidden":
        allowed = "no such field (known: " + ", ".join((model or PlanInputs).model_fields) + ")"
    return PlanInputError(field, err.get("input"), allowed.removeprefix("Value error, ").removeprefix("Input should be "))


def make_inputs(**fields) -> PlanInputs:
    """Build :class:`PlanInputs`, turning validation errors into :class:`PlanInputError`."""
    try:
        return PlanInputs(**fields)
    except ValidationError as exc:
        raise plan_error(exc, PlanInputs) from None


class PlanResult(BaseModel):
    """A plan's figures, per GPU unless named otherwise; carries its inputs.

    Bytes are integers; ``*_gb`` / ``*_gib`` views are derived for display.
    Seconds are expected values over pauses (``*_s``).
    """

    model_config = ConfigDict(frozen=True)

    inputs: PlanInputs
    model_name: str
    gpu_name: str
    hbm_bytes: int
    hbm_source: str
    kv_source: Literal["reported", "architecture", "measured"] = Field(
        "architecture", description="what prices KV bytes per token: the publisher's coefficient, the layout, "
                                    "or a measurement (measured_kv_bytes_per_token)")
    usable_kv_source: Literal["computed", "measured"] = Field(
        "computed", description="computed from HBM, weights and reserve, or measured_usable_kv_gib")
    weights_bytes_per_gpu: int
    reserve_bytes: int
    usable_kv_bytes: int
    kv_bytes_per_token: float
    prefix_tokens: int
    tail_tokens: int
    session_kv_bytes: int = Field(description="one session's KV with no prefix sharing, N+T tokens")
    shared_prefix_bytes: int = Field(description="one shared prefix, stored once per distinct prefix")
    per_session_bytes: int
    state_bytes_per_session: int = Field(description="per-session state outside the pool (host RAM unless in HBM)")
    host_state_bytes: int = Field(description="state_bytes_per_session x sessions when kept in host RAM")
    sessions_per_gpu: int
    sessions_per_replica: int
    time_per_request_s: float | None
    request_rate_per_s: float | None
    request_rate_limit: Literal["decode throughput", "sessions", "none"]
    message: str
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
    ttft_s: float = Field(0.0, description="restore_s + one decode step (1 / session_decode_tokens_per_s)")
    gpu_seconds_per_request: float | None = Field(None, description="T / decode_tokens_per_s + replay and "
                                                  "recompute prefill per turn")
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
    overflow_message: str = ""


def resolve_hbm(inputs: PlanInputs, gpu: GPUSpec | None) -> tuple[int, str]:
    """HBM bytes per GPU and where the figure comes from."""
    if inputs.hbm_gib is not None:
        return int(round(inputs.hbm_gib * GiB)), "set by user"
    if gpu is None:
        raise PlanInputError("hbm_gib", None, "a size in GiB when gpu is 'custom'")
    return gpu.hbm_bytes, ("reported by the device" if gpu.memory_reported else "vendor figure")


def weights_per_gpu(inputs: PlanInputs, model: ModelSpec) -> int:
    """Weight bytes on each GPU: one replica's weights / gpus_per_replica (rounded up).

    The catalog prices total parameters (all experts), never active ones.
    """
    if inputs.weights_gib is not None:
        total = int(round(inputs.weights_gib * GiB))
    else:
        total = model.weights_bytes(inputs.weight_format)
    return math.ceil(total / inputs.gpus_per_replica)


def sessions_that_fit(usable_bytes: int, prefix_bytes: int, per_session_bytes: int, num_prefixes: int = 1) -> int:
    """Sessions whose tails fit in ``usable_bytes`` next to the shared prefixes.

    Each of ``num_prefixes`` prefixes is stored once while at least one of its
    sessions is resident. With room for every prefix and one session each,
    ``(usable - K * prefix) // per_session``; otherwise fewer sessions than
    prefixes fit and each brings its own: ``usable // (prefix + per_session)``.
    Capped at :data:`MAX_SESSIONS_PER_GPU` when sessions cost nothing of their own.

    >>> sessions_that_fit(107_374_182_400, 445_000_000, 445_000_000)   # the golden V4.1 case
    240
    >>> sessions_that_fit(10, 3, 2, num_prefixes=3)   # 3 x (3 + 2) > 10: each session brings its prefix
    2
    """
    if usable_bytes <= 0:
        return 0
    unit = prefix_bytes + per_session_bytes
    if unit == 0:
        return MAX_SESSIONS_PER_GPU
    if usable_bytes >= num_prefixes * unit:
        if per_session_bytes == 0:
            return MAX_SESSIONS_PER_GPU
        return min((usable_bytes - num_prefixes * prefix_bytes) // per_session_bytes, MAX_SESSIONS_PER_GPU)
    return usable_bytes // unit


def miss_probability(pause_mean_s: float, ttl_s: float, distribution: str = "exponential") -> float:
    """P(pause > TTL): the chance a resumed session finds its window state expired.

    Exponential pauses with mean ``m``: ``P(X > TTL) = exp(-TTL / m)``. A fixed
    pause ``m``: 1 when ``m > TTL``, else 0 (a state is still there at exactly
    its TTL). No pause (``m = 0``): 0. ``TTL = 0`` with any pause: 1 (never
    persisted, as vLLM).

    >>> round(miss_probability(60, 60), 6), miss_probability(30, 60, "fixed"), miss_probability(90, 60, "fixed")
    (0.367879, 0.0, 1.0)
    """
    if pause_mean_s <= 0:
        return 0.0
    if distribution == "fixed":
        return 1.0 if pause_mean_s > ttl_s else 0.0
    return math.exp(-ttl_s / pause_mean_s)


def state_alive_fraction(pause_mean_s: float, ttl_s: float, distribution: str = "exponential") -> float:
    """Share of paused sessions whose window state is still held: ``E[min(X, TTL)] / E[X]``.

    A state is kept for ``min(pause, TTL)`` of each pause. Exponential:
    ``m (1 - exp(-TTL/m)) / m = 1 - exp(-TTL/m)``; fixed: ``min(m, TTL) / m``.
    """
    if pause_mean_s <= 0:
        return 1.0
    if distribution == "fixed":
        return min(pause_mean_s, ttl_s) / pause_mean_s
    return -math.expm1(-ttl_s / pause_mean_s)


def replay_window_tokens(model: ModelSpec, kv_format: str | None = None) -> int:
    """The window W a miss replays: the widest out-of-pool window ring (0 when none).

    DeepSeek V4.1-Flash: 128 (the per-layer SWA ring kept in host RAM, seed 000).
    """
    windows = [int(getattr(g, "window_tokens", 0) or 0) for g in model.layout(kv_format) if not g.in_pool]
    return max(windows, default=0)


def host_tiers(inputs: PlanInputs) -> tuple[int, int, str]:
    """(host RAM bytes per GPU, SSD bytes per GPU, source) from the inputs or the accelerator's node."""
    node = node_for(inputs.gpu_id)
    host = (int(round(inputs.host_ram_gib * GiB)) if inputs.host_ram_gib is not None
            else node.host_ram_bytes_per_gpu)
    ssd = int(round(inputs.ssd_gib * GiB)) if inputs.ssd_gib is not None else node.ssd_bytes_per_gpu
    parts = []
    if inputs.host_ram_gib is None or inputs.ssd_gib is None or AUTO in (inputs.host_link, inputs.ssd_link):
        parts.append(f"{node.name}, {node.gpus_per_node} GPUs per node: {node.source}")
    if inputs.host_ram_gib is not None or inputs.ssd_gib is not None:
        parts.append("host RAM / SSD per GPU set by user" if inputs.host_ram_gib is not None
                     and inputs.ssd_gib is not None else "partly set by user")
    return host, ssd, " ".join(parts)


def effective_model(inputs: PlanInputs, model: ModelSpec | None = None) -> tuple[ModelSpec, str, str]:
    """The model and KV format a plan prices bytes with, and what prices them.

    Returns:
        (model, kv_format, kv_source): with ``measured_kv_bytes_per_token`` set,
        the model's layout in ``inputs.kv_format`` with the measured figure as
        its coefficient and kv_format "native", source "measured"; otherwise
        the model as given (catalog by default), ``inputs.kv_format``, and
        "reported" or "architecture".

    Raises:
        PlanInputError: unknown model, or a format the model cannot take.
    """
    model = model or get_model(inputs.model_id)
    fmt = inputs.kv_format
    if inputs.measured_kv_bytes_per_token is None:
        return model, fmt, ("reported" if model.uses_coefficient(fmt) else "architecture")
    # The measurement prices growing KV in the chosen format; window and state groups keep the layout.
    measured = replace(model, groups=model.layout(fmt), reported_kv_bytes_per_token=inputs.measured_kv_bytes_per_token,
                       native_format_label=f"{fmt}, measured: {inputs.measured_kv_bytes_per_token:,.6g} B/token")
    return measured, NATIVE, "measured"


def plan(inputs: PlanInputs, model: ModelSpec | None = None) -> PlanResult:
    """Evaluate one plan.

    Args:
        inputs: validated inputs.
        model: a model to use instead of the catalog's ``inputs.model_id``
            (an imported config or a measured coefficient).

    Raises:
        PlanInputError: unknown model, GPU or format, or a format the model
            cannot take.
    """
    model, fmt, kv_source = effective_model(inputs, model)
    gpu = None if inputs.gpu_id == "custom" else get_gpu(inputs.gpu_id)
    hbm_bytes, hbm_source = resolve_hbm(inputs, gpu)
    weights = weights_per_gpu(inputs, model)
    reserve = int(round(inputs.reserve_gib * GiB))
    usable = math.floor(hbm_bytes * inputs.gpu_memory_utilization) - weights - reserve
    usable_source = "computed"
    if inputs.measured_usable_kv_gib is not None:
        usable, usable_source = int(round(inputs.measured_usable_kv_gib * GiB)), "measured"
        if usable > hbm_bytes:
            raise PlanInputError("measured_usable_kv_gib", inputs.measured_usable_kv_gib,
                                 f"at most the GPU's HBM ({hbm_bytes / GiB:,.4g} GiB)")

    # -- 1. memory: sessions first ------------------------------------------
    n, t = inputs.context_tokens, inputs.output_tokens
    k = inputs.shared_prefixes
    prefix = math.floor(inputs.hit_rate * n)
    total_tokens = n + t
    shared = model.growing_bytes(prefix, fmt)
    growing_total = model.growing_bytes(total_tokens, fmt)
    capped = model.capped_bytes(total_tokens, fmt)
    state = model.state_bytes(total_tokens, fmt)
    per_session = growing_total - shared + capped + (state if inputs.state_in_hbm else 0)
    estimate = model.estimate(n, fmt)
    sessions = sessions_that_fit(usable, shared, per_session, k)

    if usable <= 0:
        message = (f"Nothing fits: weights ({to_gib(weights):.3g} GiB per GPU) and reserve "
                   f"({inputs.reserve_gib:g} GiB) exceed HBM x utilization ({to_gib(hbm_bytes * inputs.gpu_memory_utilization):.3g} GiB). "
                   "Add GPUs per replica, more HBM or a smaller weight format.")
    elif sessions == 0:
        message = (f"Not one session fits: the shared prefix plus one session need "
                   f"{to_gib(shared + per_session):.3g} GiB, usable KV is {to_gib(usable):.3g} GiB.")
    elif sessions >= MAX_SESSIONS_PER_GPU:
        message = ("Memory does not bound sessions: every token of a session is in the shared prefix "
                   f"(reported as {MAX_SESSIONS_PER_GPU:,}).")
    else:
        message = ""

    # -- 2. misses and replay: then the replay penalty -------------------------
    pause = inputs.pause_mean_s
    prefill = inputs.prefill_tokens_per_s
    parked_state = (not inputs.state_in_hbm) and state > 0
    window = replay_window_tokens(model, fmt)
    p_miss = miss_probability(pause, inputs.ttl_s, inputs.pause_distribution) if parked_state else 0.0
    alive = state_alive_fraction(pause, inputs.ttl_s, inputs.pause_distribution) if parked_state else 1.0
    replay_per_miss = min(window, n) if parked_state else 0
    replay_tokens_turn = p_miss * replay_per_miss
    replay_s_miss = replay_per_miss / prefill
    replay_s_turn = p_miss * replay_s_miss if p_miss else 0.0  # no miss, no replay (never 0 x a huge figure)

    host_link, ssd_link = resolve_links(inputs.gpu_id, inputs.host_link, inputs.ssd_link)
    state_reload = state / host_link.bytes_per_s if parked_state else 0.0
    ring_restore = ((1.0 - p_miss) * state_reload + replay_s_turn) if (pause > 0 and parked_state) else 0.0
    decode_s = t / inputs.session_decode_tokens_per_s
    turn = ring_restore + decode_s
    active = turn / (turn + pause) if pause > 0 else 1.0

    # -- 3. tiers -----------------------------------------------------------
    host_bytes, ssd_bytes, tier_source = host_tiers(inputs)
    target = sessions if inputs.target_sessions_per_gpu is None else inputs.target_sessions_per_gpu
    placement = place_sessions(
        target, hbm_sessions=min(sessions, MAX_SESSIONS_PER_GPU), active_fraction=active, usable_hbm_bytes=usable,
        prefix_bytes=shared, num_prefixes=k, per_session_bytes=per_session,
        state_bytes=state if parked_state else 0, state_alive_fraction=alive,
        host_ram_bytes=host_bytes, ssd_bytes=ssd_bytes,
    )
    reload_host = per_session / host_link.bytes_per_s
    reload_ssd = per_session / min(host_link.bytes_per_s, ssd_link.bytes_per_s)
    recompute = (n - prefix + t) / prefill
    fastest = min((reload_host, "host RAM reload"), (reload_ssd, "SSD reload"), (recompute, "recompute"))[1]

    paused = placement.sessions - placement.active_sessions
    if paused > 0 and pause > 0:
        tail_restore = (placement.sessions_in_host_ram * reload_host + placement.sessions_on_ssd * reload_ssd
                        + placement.sessions_evicted * recompute) / paused
        recompute_tokens_turn = placement.sessions_evicted * (n - prefix + t) / paused
    else:
        tail_restore = 0.0
        recompute_tokens_turn = 0.0
    restore = ring_restore + tail_restore
    ttft = restore + 1.0 / inputs.session_decode_tokens_per_s

    # -- 4. request rate ------------------------------------------------------
    if t == 0:
        time_per_request = None
        gpu_seconds = None
        rate = None
        limit = "none"
        replay_share = 0.0
        message = message or "No output tokens: request rate is undefined (no decode)."
    else:
        time_per_request = restore + decode_s
        extra_prefill_s = (replay_tokens_turn + recompute_tokens_turn) / prefill
        gpu_seconds = t / inputs.decode_tokens_per_s + extra_prefill_s
        replay_share = replay_s_turn / gpu_seconds
        # decode / T exactly when nothing is replayed (the issue-2 figure, to the last bit)
        by_throughput = inputs.decode_tokens_per_s / t if extra_prefill_s == 0 else 1.0 / gpu_seconds
        by_sessions = sessions / time_per_request
        rate = min(by_throughput, by_sessions)
        limit = "decode throughput" if by_throughput <= by_sessions else "sessions"

    if model.max_context_tokens is not None and n + t > model.max_context_tokens:
        longer = (f"Context + output ({n + t:,} tokens) exceeds {model.name}'s maximum context "
                  f"({model.max_context_tokens:,} tokens): the bytes are computed, the model cannot serve it.")
        message = f"{longer} {message}".strip()

    copies = min(k, sessions)
    return PlanResult(
        inputs=inputs,
        model_name=model.name,
        gpu_name=gpu.name if gpu else "custom",
        hbm_bytes=hbm_bytes,
        hbm_source=hbm_source,
        kv_source=kv_source,
        usable_kv_source=usable_source,
        weights_bytes_per_gpu=weights,
        reserve_bytes=reserve,
        usable_kv_bytes=usable,
        kv_bytes_per_token=estimate.kv_bytes_per_token,
        prefix_tokens=prefix,
        tail_tokens=n - prefix,
        session_kv_bytes=growing_total + capped,
        shared_prefix_bytes=shared,
        per_session_bytes=per_session,
        state_bytes_per_session=state,
        host_state_bytes=0 if inputs.state_in_hbm else state * sessions,
        sessions_per_gpu=sessions,
        sessions_per_replica=sessions * inputs.gpus_per_replica,
        time_per_request_s=time_per_request,
        request_rate_per_s=rate,
        request_rate_limit=limit,
        message=message,
        prefix_copies=copies,
        shared_prefixes_bytes=copies * shared,
        state_parked=parked_state,
        miss_probability=p_miss,
        state_alive_fraction=alive,
        replay_window_tokens=window,
        replay_tokens_per_miss=replay_per_miss,
        replay_tokens_per_turn=replay_tokens_turn,
        replay_seconds_per_miss=replay_s_miss,
        replay_seconds_per_turn=replay_s_turn,
        state_reload_s=state_reload,
        restore_s=restore,
        ttft_s=ttft,
        gpu_seconds_per_request=gpu_seconds,
        replay_share_of_gpu_time=replay_share,
        new_session_prefill_s=(n - prefix) / prefill,
        active_fraction=active,
        host_link_id=host_link.id,
        host_link_bytes_per_s=host_link.bytes_per_s,
        ssd_link_id=ssd_link.id,
        ssd_link_bytes_per_s=ssd_link.bytes_per_s,
        host_ram_bytes_per_gpu=host_bytes,
        ssd_bytes_per_gpu=ssd_bytes,
        tier_source=tier_source,
        parked_session_bytes=per_session,
        reload_from_host_s=reload_host,
        reload_from_ssd_s=reload_ssd,
        recompute_s=recompute,
        fastest_recovery=fastest,
        tiers=placement,
        overflow_action=placement.action,
        overflow_message=placement.message,
    )


PLAN_CSV_COLUMNS: tuple[str, ...] = (
    "model_id", "gpu_id", "gpus_per_replica", "kv_format", "context_tokens", "output_tokens", "hit_rate",
    "gpu_memory_utilization", "hbm_bytes", "hbm_gib", "weights_bytes_per_gpu", "reserve_bytes",
    "usable_kv_bytes", "usable_kv_gib", "kv_bytes_per_token", "prefix_tokens",
    "session_kv_bytes", "session_kv_gb", "session_kv_gib", "shared_prefix_bytes", "shared_prefix_gib",
    "per_session_bytes", "per_session_gib", "state_bytes_per_session", "sessions_per_gpu",
    "sessions_per_replica", "request_rate_per_s",
    "shared_prefixes", "prefix_copies", "pause_mean_s", "pause_distribution", "ttl_s", "prefill_tokens_per_s",
    "miss_probability", "replay_tokens_per_turn", "replay_seconds_per_turn", "ttft_s", "time_per_request_s",
    "host_link", "host_link_bytes_per_s", "ssd_link", "ssd_link_bytes_per_s",
    "host_ram_bytes_per_gpu", "ssd_bytes_per_gpu", "target_sessions_per_gpu",
    "tier_hbm_bytes", "tier_host_ram_bytes", "tier_ssd_bytes", "tier_evicted_bytes", "tier_total_bytes",
    "reload_from_host_s", "reload_from_ssd_s", "recompute_s", "overflow_action",
)
"""Column contract of the plan CSV (one header row, one row per plan); issue-4 columns appended."""


def plan_frame(result: PlanResult) -> pd.DataFrame:
    """One-row DataFrame with :data:`PLAN_CSV_COLUMNS`; bytes as integers."""
    i = result.inputs
    tiers = result.tiers
    row = {
        "model_id": i.model_id, "gpu_id": i.gpu_id, "gpus_per_replica": i.gpus_per_replica,
        "kv_format": i.kv_format, "context_tokens": i.context_tokens, "output_tokens": i.output_tokens,
        "hit_rate": i.hit_rate, "gpu_memory_utilization": i.gpu_memory_utilization,
        "hbm_bytes": result.hbm_bytes, "hbm_gib": to_gib(result.hbm_bytes),
        "weights_bytes_per_gpu": result.weights_bytes_per_gpu, "reserve_bytes": result.reserve_bytes,
        "usable_kv_bytes": result.usable_kv_bytes, "usable_kv_gib": to_gib(result.usable_kv_bytes),
        "kv_bytes_per_token": result.kv_bytes_per_token, "prefix_tokens": result.prefix_tokens,
        "session_kv_bytes": result.session_kv_bytes, "session_kv_gb": to_gb(result.session_kv_bytes),
        "session_kv_gib": to_gib(result.session_kv_bytes),
        "shared_prefix_bytes": result.shared_prefix_bytes, "shared_prefix_gib": to_gib(result.shared_prefix_bytes),
        "per_session_bytes": result.per_session_bytes, "per_session_gib": to_gib(result.per_session_bytes),
        "state_bytes_per_session": result.state_bytes_per_session, "sessions_per_gpu": result.sessions_per_gpu,
        "sessions_per_replica": result.sessions_per_replica, "request_rate_per_s": result.request_rate_per_s,
        "shared_prefixes": i.shared_prefixes, "prefix_copies": result.prefix_copies,
        "pause_mean_s": i.pause_mean_s, "pause_distribution": i.pause_distribution, "ttl_s": i.ttl_s,
        "prefill_tokens_per_s": i.prefill_tokens_per_s, "miss_probability": result.miss_probability,
        "replay_tokens_per_turn": result.replay_tokens_per_turn,
        "replay_seconds_per_turn": result.replay_seconds_per_turn, "ttft_s": result.ttft_s,
        "time_per_request_s": result.time_per_request_s,
        "host_link": result.host_link_id, "host_link_bytes_per_s": result.host_link_bytes_per_s,
        "ssd_link": result.ssd_link_id, "ssd_link_bytes_per_s": result.ssd_link_bytes_per_s,
        "host_ram_bytes_per_gpu": result.host_ram_bytes_per_gpu, "ssd_bytes_per_gpu": result.ssd_bytes_per_gpu,
        "target_sessions_per_gpu": i.target_sessions_per_gpu,
        "tier_hbm_bytes": tiers.hbm_bytes, "tier_host_ram_bytes": tiers.host_ram_bytes,
        "tier_ssd_bytes": tiers.ssd_bytes, "tier_evicted_bytes": tiers.evicted_bytes,
        "tier_total_bytes": tiers.total_bytes,
        "reload_from_host_s": result.reload_from_host_s, "reload_from_ssd_s": result.reload_from_ssd_s,
        "recompute_s": result.recompute_s, "overflow_action": result.overflow_action,
    }
    return pd.DataFrame([row], columns=list(PLAN_CSV_COLUMNS))


SEED_CONTEXTS = (100_000, 250_000, 500_000, 1_000_000)
"""Context lengths of the seed-004 table."""


def context_table(model: ModelSpec, contexts=SEED_CONTEXTS, kv_format: str = NATIVE) -> pd.DataFrame:
    """KV bytes per context length: columns ``context_tokens, kv_bytes, kv_gb, kv_gib, state_bytes``.

    The seed-004 table is ``context_table(get_model("deepseek-v4.1-flash"))``.
    """
    rows = []
    for n in contexts:
        e = model.estimate(int(n), kv_format)
        rows.append({"context_tokens": e.context_tokens, "kv_bytes": e.kv_bytes, "kv_gb": to_gb(e.kv_bytes),
                     "kv_gib": to_gib(e.kv_bytes), "state_bytes": e.state_bytes})
    return pd.DataFrame(rows, columns=["context_tokens", "kv_bytes", "kv_gb", "kv_gib", "state_bytes"])
