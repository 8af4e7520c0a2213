"""Sessions per GPU and request rate, the seeds' method (domain.md §5).

With context ``N`` tokens, prefix hit rate ``h`` and ``T`` output tokens:

* the first ``floor(h*N)`` tokens are a prefix shared by the sessions on a GPU
  and stored once: ``shared_prefix_bytes`` (growing KV of those tokens);
* each session holds the rest: ``per_session_bytes = growing(N+T) - growing(prefix)
  + capped(N+T) + state_in_hbm``: its uncached tail, its output, its window
  layers and, when placed in HBM, its fixed state (window rings are per session:
  a window slides past the shared prefix);
* ``usable_kv_bytes = hbm_bytes * gpu_memory_utilization - weights_bytes_per_gpu - reserve_bytes``;
* ``sessions_per_gpu = floor((usable - shared_prefix) / per_session)`` (0 when
  nothing fits, with the reason in ``message``);
* ``request_rate_per_s = min(decode_tokens_per_s / output_tokens,
  sessions_per_gpu / time_per_request_s)`` with ``time_per_request_s =
  output_tokens / session_decode_tokens_per_s`` (Little's law).

Attention is data-parallel: each GPU holds whole sessions (DeepSeek's DP
attention); the GPUs of a replica split the weights. Figures are per GPU unless
named ``_per_replica``.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import pandas as pd
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from planner.catalog import GPUSpec, get_gpu, get_model
from planner.errors import PlanInputError
from planner.formats import FORMATS
from planner.models import NATIVE, WEIGHT_BYTES_PER_PARAM, ModelSpec
from planner.units import GiB, to_gb, to_gib

MAX_CONTEXT_TOKENS = 100_000_000
"""Largest context accepted (1e8 tokens; the longest published window is 1e7)."""
MAX_HBM_GIB = 100_000.0
"""Largest HBM accepted per GPU, GiB (far above any device)."""

Tokens = Annotated[int, Field(ge=1, le=MAX_CONTEXT_TOKENS)]


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
    decode_tokens_per_s: float = Field(5_000.0, gt=0, le=1e9, allow_inf_nan=False,
                                       description="aggregate decode throughput per GPU, tokens/s (assumed)")
    session_decode_tokens_per_s: float = Field(50.0, gt=0, le=1e7, allow_inf_nan=False,
                                               description="decode speed of one session, tokens/s (assumed)")

    @field_validator("kv_format")
    @classmethod
    def _known_format(cls, v: str) -> str:
        if v != NATIVE and v not in FORMATS:
            raise ValueError(f"one of native, {', '.join(FORMATS)}")
        return v

    @field_validator("weight_format")
    @classmethod
    def _known_weight_format(cls, v: str | None) -> str | None:
        if v is not None and v not in WEIGHT_BYTES_PER_PARAM:
            raise ValueError(f"one of {', '.join(WEIGHT_BYTES_PER_PARAM)}")
        return v


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
    return PlanInputError(field, err.get("input"), allowed.removeprefix("Value error, "))


def make_inputs(**fields) -> PlanInputs:
    """Build :class:`PlanInputs`, turning validation errors into :class:`PlanInputError`."""
    try:
        return PlanInputs(**fields)
    except ValidationError as exc:
        raise plan_error(exc, PlanInputs) from None


class PlanResult(BaseModel):
    """A plan's figures, per GPU unless named otherwise; carries its inputs.

    Bytes are integers; ``*_gb`` / ``*_gib`` views are derived for display.
    """

    model_config = ConfigDict(frozen=True)

    inputs: PlanInputs
    model_name: str
    gpu_name: str
    hbm_bytes: int
    hbm_source: str
    weights_bytes_per_gpu: int
    reserve_bytes: int
    usable_kv_bytes: int
    kv_bytes_per_token: float
    prefix_tokens: int
    tail_tokens: int
    session_kv_bytes: int = Field(description="one session's KV with no prefix sharing, N+T tokens")
    shared_prefix_bytes: int
    per_session_bytes: int
    state_bytes_per_session: int = Field(description="per-session state outside the pool (host RAM unless in HBM)")
    host_state_bytes: int = Field(description="state_bytes_per_session x sessions when kept in host RAM")
    sessions_per_gpu: int
    sessions_per_replica: int
    time_per_request_s: float | None
    request_rate_per_s: float | None
    request_rate_limit: Literal["decode throughput", "sessions", "none"]
    message: str


def resolve_hbm(inputs: PlanInputs, gpu: GPUSpec | None) -> tuple[int, str]:
    """HBM bytes per GPU and where the figure comes from."""
    if inputs.hbm_gib is not None:
        return int(round(inputs.hbm_gib * GiB)), "set by user"
    if gpu is None:
        raise PlanInputError("hbm_gib", None, "a size in GiB when gpu is 'custom'")
    return gpu.hbm_bytes, ("reported by the device" if gpu.memory_reported else "vendor figure")


def weights_per_gpu(inputs: PlanInputs, model: ModelSpec) -> int:
    """Weight bytes on each GPU: one replica's weights / gpus_per_replica (rounded up)."""
    if inputs.weights_gib is not None:
        total = int(round(inputs.weights_gib * GiB))
    else:
        total = model.weights_bytes(inputs.weight_format)
    return math.ceil(total / inputs.gpus_per_replica)


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
    model = model or get_model(inputs.model_id)
    gpu = None if inputs.gpu_id == "custom" else get_gpu(inputs.gpu_id)
    fmt = inputs.kv_format
    hbm_bytes, hbm_source = resolve_hbm(inputs, gpu)
    weights = weights_per_gpu(inputs, model)
    reserve = int(round(inputs.reserve_gib * GiB))
    usable = math.floor(hbm_bytes * inputs.gpu_memory_utilization) - weights - reserve

    n, t = inputs.context_tokens, inputs.output_tokens
    prefix = math.floor(inputs.hit_rate * n)
    total_tokens = n + t
    shared = model.growing_bytes(prefix, fmt)
    growing_total = model.growing_bytes(total_tokens, fmt)
    capped = model.capped_bytes(total_tokens, fmt)
    state = model.state_bytes(total_tokens, fmt)
    per_session = growing_total - shared + capped + (state if inputs.state_in_hbm else 0)
    estimate = model.estimate(n, fmt)

    if usable <= 0:
        sessions = 0
        message = (f"Nothing fits: weights ({to_gib(weights):.3g} GiB per GPU) and reserve "
                   f"({inputs.reserve_gib:g} GiB) exceed HBM x utilization ({to_gib(hbm_bytes * inputs.gpu_memory_utilization):.3g} GiB). "
                   "Add GPUs per replica, more HBM or a smaller weight format.")
    elif usable < shared + per_session:
        sessions = 0
        message = (f"Not one session fits: the shared prefix plus one session need "
                   f"{to_gib(shared + per_session):.3g} GiB, usable KV is {to_gib(usable):.3g} GiB.")
    else:
        sessions = (usable - shared) // per_session if per_session > 0 else 0
        message = ""

    if t == 0:
        time_per_request = None
        rate = None
        limit = "none"
        message = message or "No output tokens: request rate is undefined (no decode)."
    else:
        time_per_request = t / inputs.session_decode_tokens_per_s
        by_throughput = inputs.decode_tokens_per_s / t
        by_sessions = sessions / time_per_request
        rate = min(by_throughput, by_sessions)
        limit = "decode throughput" if by_throughput <= by_sessions else "sessions"

    return PlanResult(
        inputs=inputs,
        model_name=model.name,
        gpu_name=gpu.name if gpu else "custom",
        hbm_bytes=hbm_bytes,
        hbm_source=hbm_source,
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
    )


PLAN_CSV_COLUMNS: tuple[str, ...] = (
    "model_id", "gpu_id", "gpus_per_replica", "kv_format", "context_tokens", "output_tokens", "hit_rate",
    "gpu_memory_utilization", "hbm_bytes", "hbm_gib", "weights_bytes_per_gpu", "reserve_bytes",
    "usable_kv_bytes", "usable_kv_gib", "kv_bytes_per_token", "prefix_tokens",
    "session_kv_bytes", "session_kv_gb", "session_kv_gib", "shared_prefix_bytes", "shared_prefix_gib",
    "per_session_bytes", "per_session_gib", "state_bytes_per_session", "sessions_per_gpu",
    "sessions_per_replica", "request_rate_per_s",
)
"""Column contract of the plan CSV (one header row, one row per plan)."""


def plan_frame(result: PlanResult) -> pd.DataFrame:
    """One-row DataFrame with :data:`PLAN_CSV_COLUMNS`; bytes as integers."""
    i = result.inputs
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
