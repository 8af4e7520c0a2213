"""Every input of a plan, its ranges, and the errors that name a bad one.

:class:`PlanInputs` is the one place where a plan's input ranges live: the
CLI's flags (``kvplan plan``, ``kvplan frontier``), share links and plan files
are all parsed by it, so they can never disagree on a range.

Measured figures are bound to what they measured. ``measured_kv_bytes_per_token``
carries the model and KV format it was measured for
(``measured_kv_model_id``, ``measured_kv_format``); ``measured_usable_kv_gib``
carries the accelerator, HBM, memory utilization and weights setting
(``measured_usable_kv_*``). A figure given without its binding is bound to the
inputs it arrives with (an old link or plan file); :func:`planner.plan.rebase`
decides whether it survives a change.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from planner.errors import PlanInputError, number_text, validation_rule
from planner.kv.formats import FORMATS
from planner.kv.models import NATIVE, WEIGHT_BYTES_PER_PARAM
from planner.catalog.tiers import AUTO, HOST_LINKS, SSD_LINKS
from planner.units import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS, MIN_TOKENS_PER_S, parse_tokens, plural
from planner.messages import Figure, msg

MAX_HBM_GIB = 100_000.0
"""Largest HBM accepted per GPU, GiB (far above any device)."""
MAX_GPUS_PER_REPLICA = 1024
"""Most GPUs in one replica."""
MAX_SECONDS = 31_536_000.0
"""Longest pause or TTL accepted, seconds (365 days)."""
MAX_TIER_GIB = 10_000_000.0
"""Largest host RAM or SSD accepted per GPU, GiB (about 10.7 PB)."""
MAX_SESSIONS_PER_GPU = 1_000_000_000
"""Sessions reported when memory does not bound them (every token in the shared prefix)."""
MAX_SHARED_PREFIXES = 1_000_000
"""Most distinct shared prefixes accepted per KV domain (one GPU under ``dp``, the replica under ``tp``)."""

Tokens = Annotated[int, Field(ge=MIN_CONTEXT_TOKENS, le=MAX_CONTEXT_TOKENS)]
PauseDistribution = Literal["exponential", "fixed"]
"""How pauses between turns are spread: exponential with the given mean, or always the mean."""
Engine = Literal["vllm", "sglang"]
"""A serving engine a plan can follow (``engine``): its admission figure is the headline and its launch flags
are printed."""
AttentionParallelism = Literal["tp", "dp"]
"""How a replica's GPUs hold attention KV.

* ``tp`` (vLLM's and SGLang's default): the replica's tensor-parallel ranks
  split the KV heads, ``max(1, H_kv // TP)`` per rank (vLLM
  ``ModelConfig.get_num_kv_heads``); one-head entries (MLA latents, compressed
  entries) are replicated on every rank. Every session lives on all of the
  replica's GPUs: sessions are counted per replica.
* ``dp`` (SGLang ``--enable-dp-attention``, DeepSeek's deployments): each GPU
  holds whole sessions at its TP-1 KV; sessions per replica = sessions per
  GPU x GPUs.

Pipeline parallel (``pipeline_parallel_size``) splits layers in both."""

MEASURED_KV_BINDING: tuple[str, ...] = ("measured_kv_model_id", "measured_kv_format")
"""Fields binding ``measured_kv_bytes_per_token`` to what it measured."""
MEASURED_USABLE_BINDING: tuple[str, ...] = (
    "measured_usable_kv_gpu_id", "measured_usable_kv_hbm_gib", "measured_usable_kv_utilization",
    "measured_usable_kv_weights",
)
"""Fields binding ``measured_usable_kv_gib`` to what it measured."""


def _one_of(value: str, choices, *also: str) -> str:
    """``value`` if it is one of ``also`` or ``choices``; else ValueError listing them (pydantic names the field)."""
    if value in also or value in choices:
        return value
    raise ValueError(msg('one of {choices}', choices=", ".join([*also, *choices])))


def weights_setting(model_id: str, weight_format: str | None, weights_gib: float | None, gpus_per_replica: int) -> str:
    """The weights setting a usable-KV measurement depends on, as one comparable string.

    >>> weights_setting("llama-3.1-8b", None, None, 1)
    'llama-3.1-8b catalog weights / 1 GPUs'
    >>> weights_setting("llama-3.1-8b", "fp8", 12.5, 2)
    '12.5 GiB / 2 GPUs'
    """
    if weights_gib is not None:
        return f"{float(weights_gib)!r} GiB / {plural(gpus_per_replica, 'GPU')}"
    return f"{model_id} {weight_format or 'catalog'} weights / {plural(gpus_per_replica, 'GPU')}"


class PlanInputs(BaseModel):
    """Every input of a plan, validated at construction (also parses links and JSON).

    Units: tokens, GiB (binary), tokens per second, seconds, fractions in [0, 1].

    Raises:
        pydantic.ValidationError: use :func:`make_inputs` to get a
            :class:`PlanInputError` naming the field, value and range instead.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: str = Field("deepseek-v4.1-flash", description="catalog model id")
    gpu_id: str = Field("h200", description="catalog accelerator id, or 'custom' with hbm_gib")
    gpus_per_replica: int = Field(8, ge=1, le=MAX_GPUS_PER_REPLICA,
                                  description="GPUs of one replica (TP x PP); they split the weights")
    attention_parallelism: AttentionParallelism = Field(
        "tp", description="tp: the replica's TP ranks split KV heads, sessions counted per replica (vLLM, SGLang "
                          "default); dp: each GPU holds whole sessions at TP 1 (DP attention)")
    engine: Engine | None = Field(
        None, description="serving engine: vllm or sglang. Its own KV budget replaces HBM x utilization - weights - "
                          "reserve (vllm: its predicted 'Available KV cache memory' per GPU, the binding rank under "
                          "PP; sglang: (total - memory in use before loading) x mem_fraction_static - weights), the "
                          "headline is its admission figure "
                          "and its launch flags are printed; None = kvplan's generic budget and steady state")
    pipeline_parallel_size: int = Field(1, ge=1, le=MAX_GPUS_PER_REPLICA,
                                        description="pipeline stages per replica (splits layers); divides "
                                                    "gpus_per_replica, TP = gpus_per_replica / this")
    hbm_gib: float | None = Field(None, gt=0, le=MAX_HBM_GIB, allow_inf_nan=False,
                                  description="HBM per GPU in GiB; None = the GPU's reported total")
    accelerator: str | None = Field(
        None, max_length=400,
        description="a user-defined accelerator in compact form (planner.catalog.accelerators: id, name, memory in bytes, "
                    "HBM GB/s, BF16 TFLOP/s, host link GB/s, price); needs gpu_id 'custom'; None = none")
    gpu_memory_utilization: float = Field(0.9, gt=0, le=1, allow_inf_nan=False,
                                          description="fraction of HBM the engine may use (vLLM default 0.9)")
    weights_gib: float | None = Field(None, ge=0, le=10_000_000, allow_inf_nan=False,
                                      description="weights of one replica, GiB; None = parameters x bytes per parameter")
    weight_format: str | None = Field(None, description="weight storage format; None = the catalog's")
    reserve_gib: float = Field(2.0, ge=0, le=MAX_HBM_GIB, allow_inf_nan=False,
                               description="runtime reserve per GPU (activations, CUDA graphs), GiB")
    context_tokens: Tokens = Field(1_000_000, description="prompt + history tokens per session")
    output_tokens: int = Field(1_000, ge=0, le=MAX_CONTEXT_TOKENS, description="generated tokens per request")
    hit_rate: float = Field(0.5, ge=0, le=1, allow_inf_nan=False,
                            description="prefix hit rate: share of each prompt read from cache (every reused token, "
                                        "a session's own history included); drives prefill work and time to first "
                                        "token, never memory")
    shared_prefix: float = Field(0.5, ge=0, le=1, allow_inf_nan=False,
                                 description="shared prefix: share of the context common to many concurrent sessions "
                                             "(system prompt, tool schemas), stored once per KV domain per distinct "
                                             "prefix; drives memory")
    figures_measured_at_tokens: int | None = Field(
        None, ge=1, le=MAX_CONTEXT_TOKENS,
        description="mean prompt length (tokens) of the trace hit_rate and shared_prefix were measured on "
                    "(the Traces page's 'Use these figures'); None = typed, not measured")
    kv_format: str = Field(NATIVE, description="KV format id, or 'native'")
    state_in_hbm: bool = Field(False, description="keep per-session out-of-pool state (window rings) in HBM")
    decode_tokens_per_s: float = Field(5_000.0, ge=MIN_TOKENS_PER_S, le=1e9, allow_inf_nan=False,
                                       description="aggregate decode throughput per GPU, tokens/s (assumed)")
    session_decode_tokens_per_s: float = Field(50.0, ge=MIN_TOKENS_PER_S, le=1e7, allow_inf_nan=False,
                                               description="decode speed of one session, tokens/s (assumed)")
    shared_prefixes: int = Field(1, ge=1, le=MAX_SHARED_PREFIXES,
                                 description="distinct shared prefixes per KV domain (GPU under dp, replica "
                                             "under tp), each stored once")
    pause_mean_s: float = Field(0.0, ge=0, le=MAX_SECONDS, allow_inf_nan=False,
                                description="mean pause between a session's turns, s (0 = turns follow at once)")
    pause_distribution: PauseDistribution = Field("exponential", description="exponential or fixed pauses")
    ttl_s: float = Field(60.0, ge=0, le=MAX_SECONDS, allow_inf_nan=False,
                         description="host-RAM TTL of window state, s (minute-level; 0 = never persisted, as vLLM)")
    prefill_tokens_per_s: float = Field(20_000.0, ge=MIN_TOKENS_PER_S, le=1e9, allow_inf_nan=False,
                                        description="prefill throughput per GPU for replay and recompute, "
                                                    "tokens/s (assumed)")
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
        description="KV bytes per token measured by `kvplan probe` (or an engine) for measured_kv_model_id and "
                    "measured_kv_format; replaces the growing-KV coefficient, marked as measured; "
                    "None = the planner's arithmetic")
    measured_kv_model_id: str | None = Field(
        None, max_length=200, description="the model measured_kv_bytes_per_token was measured on "
                                          "(None with a figure = this plan's model)")
    measured_kv_format: str | None = Field(
        None, max_length=200, description="the KV format measured_kv_bytes_per_token was measured in "
                                          "(None with a figure = this plan's kv_format)")
    measured_usable_kv_gib: float | None = Field(
        None, ge=0.001, le=MAX_HBM_GIB, allow_inf_nan=False,
        description="usable KV memory per GPU measured on the device (probe's free memory, an engine's log), GiB, "
                    "at least 0.001 GiB (about 1 MiB: a zero or denormal measurement is no measurement); "
                    "replaces HBM x utilization - weights - reserve; None = computed")
    measured_usable_kv_gpu_id: str | None = Field(
        None, max_length=200, description="the accelerator measured_usable_kv_gib was measured on")
    measured_usable_kv_hbm_gib: float | None = Field(
        None, gt=0, le=MAX_HBM_GIB, allow_inf_nan=False,
        description="the HBM setting of that measurement (None = the device's reported total)")
    measured_usable_kv_utilization: float | None = Field(
        None, gt=0, le=1, allow_inf_nan=False, description="the gpu_memory_utilization of that measurement")
    measured_usable_kv_weights: str | None = Field(
        None, max_length=400, description="the weights setting of that measurement (model, format or GiB, GPUs)")
    engine_version: str | None = Field(
        None, max_length=40, description="the engine release the budget is predicted for (vllm: 0.19.0); "
                                         "None = the latest calibrated one")
    state_bytes_per_sequence: int | None = Field(
        None, ge=0, le=10**15,
        description="per-sequence state in the KV pool (a Mamba / linear-attention hybrid's), bytes per GPU, as "
                    "reported or measured for this model; replaces the layout's state, counted once per session; "
                    "None = the planner's arithmetic")

    @field_validator("context_tokens", "output_tokens", mode="before")
    @classmethod
    def _token_suffixes(cls, v: object) -> object:
        """Links and files may write counts as people and vLLM do: "128k" (128,000), "128K" (131,072)."""
        if isinstance(v, str) and v.strip()[-1:].lower() in ("k", "m", "g", "t"):
            try:
                return parse_tokens(v, minimum=0, maximum=10**12)
            except PlanInputError:
                return v  # pydantic then names the field and its range
        return v

    @field_validator("accelerator")
    @classmethod
    def _valid_accelerator(cls, v: str | None, info) -> str | None:
        if v is None:
            return v
        if info.data.get("gpu_id") != "custom":
            raise ValueError(msg("gpu_id 'custom' alongside it (a user-defined accelerator describes the custom GPU)"))
        from planner.catalog.accelerators import accelerator_from_link

        return accelerator_from_link(v).to_link()  # canonical form; a PlanInputError names the bad part

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

    @field_validator("pipeline_parallel_size")
    @classmethod
    def _divides_gpus(cls, v: int, info) -> int:
        gpus = info.data.get("gpus_per_replica")
        if gpus is not None and gpus % v:
            raise ValueError(msg("a divisor of gpus_per_replica ({gpus}): the replica's GPUs are TP x PP", gpus=gpus))
        return v

    @model_validator(mode="after")
    def _bind_measured(self) -> "PlanInputs":
        """A measured figure without its binding is bound to these inputs; a binding without its figure is dropped.

        (Written into the frozen instance while it is being validated, before anyone can see it.)
        """
        bind: dict[str, Any] = {}
        if self.measured_kv_bytes_per_token is None:
            bind.update(dict.fromkeys(MEASURED_KV_BINDING))
        else:
            bind["measured_kv_model_id"] = self.measured_kv_model_id or self.model_id
            bind["measured_kv_format"] = self.measured_kv_format or self.kv_format
        if self.measured_usable_kv_gib is None:
            bind.update(dict.fromkeys(MEASURED_USABLE_BINDING))
        elif self.measured_usable_kv_gpu_id is None:
            bind.update(usable_binding_of(lambda f: getattr(self, f)))
        self.__dict__.update(bind)
        return self


def usable_binding_of(value_of) -> dict[str, Any]:
    """The ``measured_usable_kv_*`` binding of inputs whose field values ``value_of(field)`` returns."""
    acc = value_of("accelerator")
    return {
        "measured_usable_kv_gpu_id": value_of("gpu_id") if acc is None else acc.split("~", 1)[0],
        "measured_usable_kv_hbm_gib": value_of("hbm_gib"),
        "measured_usable_kv_utilization": value_of("gpu_memory_utilization"),
        "measured_usable_kv_weights": weights_setting(value_of("model_id"), value_of("weight_format"),
                                                      value_of("weights_gib"), value_of("gpus_per_replica")),
    }


def field_range(model: type[BaseModel], name: str) -> str | None:
    """The allowed range of a numeric pydantic field in words ("a finite number in (0, 1]")."""
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
    left = f"{'(' if lo_open else '['}{number_text(lo)}" if lo is not None else "(-inf"
    right = f"{number_text(hi)}{')' if hi_open else ']'}" if hi is not None else "inf)"
    kind = ("a whole number in {left}, {right}" if info.annotation in (int, int | None)
            else "a finite number in {left}, {right}")
    return msg(kind, left=Figure(left), right=Figure(right))


def plan_error(exc: ValidationError, model: type[BaseModel] | None = None) -> PlanInputError:
    """The first pydantic error as a :class:`PlanInputError` (field, value, allowed range)."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or "input"
    ctx = err.get("ctx") or {}
    allowed = validation_rule(err)
    if ctx.get("error") is None and model is not None and (rng := field_range(model, field)):
        allowed = rng
    if err.get("type") == "extra_forbidden":
        allowed = msg("no such field (known: {choices})", choices=", ".join((model or PlanInputs).model_fields))
    return PlanInputError(field, err.get("input"), allowed)


def make_inputs(**fields) -> PlanInputs:
    """Build :class:`PlanInputs`, turning validation errors into :class:`PlanInputError`."""
    try:
        return PlanInputs(**fields)
    except ValidationError as exc:
        raise plan_error(exc, PlanInputs) from None
