"""What a probe measured, as a validated, JSON-round-tripping record.

:class:`ProbeResult` is written by :func:`planner.probe.run_probe` and read back
from files made on other machines (:func:`load_probe_result`). Reading is where
forged or inconsistent files are caught, so construction checks every figure
against the others and against the planner's own arithmetic:

* bytes and counts are non-negative integers, rates finite and positive;
* each pool group's ``num_blocks`` is ``ceil(entries / entries_per_block)`` and its
  ``pool_bytes`` is ``num_layers x num_blocks x entries_per_block x entry_bytes``;
* ``predicted_bytes`` is what the planner computes for the model, format and
  tokens (the same catalog layout), and the per-token figures and ratios are the
  quotients they claim to be;
* ``measured_bytes`` is at least the pool and at most a small allocator margin
  above it (512 B per tensor on CUDA, plus 1 %);
* free memory is at most the total; ``tokens_fit_free`` is the largest pool of
  the same layout (whole blocks, sliding windows capped) that fits in
  ``free_bytes``, and ``tokens_fit_cap`` is at most that. (A per-token quotient
  would not do: at one token a whole block is measured, and a window-capped pool
  stops growing.)

Violations raise :class:`planner.errors.PlanInputError` (field, value, what is
allowed); :func:`load_probe_result` passes it through, so the CLI prints one
line and the UI shows it in ``st.error``. No torch here.
"""

from __future__ import annotations

import json
import math
from datetime import datetime, timedelta, timezone
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from planner.errors import MISSING, PlanInputError, validation_rule
from planner.kv.formats import cdiv
from planner.reads import json_error_text
from planner.messages import msg

SCHEMA_VERSION = 1
"""Version of the ProbeResult JSON schema this code reads and writes."""
MAX_RESULT_FILE_BYTES = 1_000_000
"""Largest ProbeResult JSON accepted for upload (a real one is about 5 KB)."""
CUDA_ALLOCATION_ROUNDING_BYTES = 512
"""PyTorch's CUDA caching allocator rounds every block to a multiple of 512 B
(``c10/cuda/CUDACachingAllocator.cpp``, ``kMinBlockSize``)."""

NonNegInt = Annotated[int, Field(ge=0, le=10**16)]
PosFloat = Annotated[float, Field(gt=0, le=1e7, allow_inf_nan=False)]
Text = Annotated[str, Field(max_length=300)]


class PoolGroupResult(BaseModel):
    """One pool tensor as allocated (see :class:`planner.probe.layout.PoolGroup`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Text
    role: Text
    kv_format: Text
    num_layers: int = Field(ge=1, le=10_000)
    entry_bytes: int = Field(ge=1, le=10**9)
    entries: NonNegInt = Field(description="entries per layer the planner counts for the tokens")
    entries_per_block: int = Field(ge=1, le=1_000_000)
    num_blocks: NonNegInt
    pool_bytes: NonNegInt = Field(description="num_layers x num_blocks x entries_per_block x entry_bytes")

    @model_validator(mode="after")
    def _consistent(self) -> "PoolGroupResult":
        if self.num_blocks != cdiv(self.entries, self.entries_per_block):
            raise PlanInputError(f"groups[{self.name}].num_blocks", self.num_blocks,
                                 msg("ceil({entries} / {entries_per_block}) = {cdiv}", entries=self.entries,
                                     entries_per_block=self.entries_per_block,
                                     cdiv=cdiv(self.entries, self.entries_per_block)))
        expected = self.num_layers * self.num_blocks * self.entries_per_block * self.entry_bytes
        if self.pool_bytes != expected:
            raise PlanInputError(f"groups[{self.name}].pool_bytes", self.pool_bytes,
                                 msg("num_layers x num_blocks x entries_per_block x entry_bytes = {expected:,}",
                                     expected=expected))
        return self

    @property
    def predicted_bytes(self) -> int:
        """The planner's bytes for this group: layers x entries x entry bytes."""
        return self.num_layers * self.entries * self.entry_bytes


class FormatQuality(BaseModel):
    """Round-trip error of one format on the synthetic KV (fixed seed).

    ``rel_rmse = ||x - dequant(quant(x))||_2 / ||x||_2``; ``max_abs_error`` and
    ``max_abs_value`` are over the whole sample.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kv_format: Text
    role: Text
    num_channels: int = Field(ge=1, le=1_000_000)
    num_elements: int = Field(ge=1, le=10**12)
    rel_rmse: float = Field(ge=0, le=10, allow_inf_nan=False)
    max_abs_error: float = Field(ge=0, le=1e30, allow_inf_nan=False)
    max_abs_value: float = Field(gt=0, le=1e30, allow_inf_nan=False)


class FormatThroughput(BaseModel):
    """Quantize / dequantize speed of one format next to a plain copy of the same bytes.

    GB/s are source bytes (the unquantized tensor in ``source_dtype``) per second,
    best of ``repeats`` runs; ``*_over_copy`` are the ratios to ``copy_gbps``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kv_format: Text
    num_channels: int = Field(ge=1, le=1_000_000)
    source_dtype: Literal["float32", "bfloat16", "float16"]
    source_bytes: int = Field(ge=1, le=10**13)
    repeats: int = Field(ge=1, le=1000)
    quantize_gbps: PosFloat
    dequantize_gbps: PosFloat
    copy_gbps: PosFloat
    quantize_over_copy: PosFloat
    dequantize_over_copy: PosFloat

    @model_validator(mode="after")
    def _ratios(self) -> "FormatThroughput":
        for name, rate in (("quantize_over_copy", self.quantize_gbps), ("dequantize_over_copy", self.dequantize_gbps)):
            claimed = getattr(self, name)
            if not math.isclose(claimed, rate / self.copy_gbps, rel_tol=1e-6):
                raise PlanInputError(f"throughput[{self.kv_format}].{name}", claimed,
                                     msg("{rate:g} / {copy_gbps:g} = {value:.6g}", rate=rate, copy_gbps=self.copy_gbps,
                                         value=rate / self.copy_gbps))
        return self


class ProbeResult(BaseModel):
    """One live probe: the pool the planner predicts, what the device really spent, and
    how the formats behave. Bytes are integers; figures per token are bytes / tokens.

    Attributes (units in names): see the field descriptions; ``measured_bytes`` is
    ``torch.cuda.memory_allocated`` after minus before on CUDA and the pool
    tensors' storage ``nbytes`` on the CPU; ``resident_bytes`` is the device-level
    view (``torch.cuda.mem_get_info`` free before minus after, allocator segments
    included; on the CPU, the process RSS delta).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: Literal[1] = SCHEMA_VERSION
    timestamp: datetime = Field(description="when the probe finished (UTC)")
    device: Literal["cuda", "cpu"]
    device_name: Text
    total_bytes: int = Field(ge=1, le=10**16, description="device memory (CPU: MemTotal)")
    free_bytes: NonNegInt = Field(description="free before the probe (CUDA mem_get_info; CPU MemAvailable)")
    torch_version: Text
    cuda_version: Text | None = None

    model_id: Text
    kv_format: Text
    num_tokens: int = Field(ge=1, le=10**10)
    block_size: int = Field(ge=1, le=4096)
    fill: Literal["quantize", "tile"]
    seed: int = Field(ge=0, le=2**63 - 1)
    max_fraction: float = Field(gt=0, le=1, allow_inf_nan=False)
    groups: tuple[PoolGroupResult, ...] = Field(min_length=1, max_length=64)

    predicted_bytes: NonNegInt = Field(description="the planner's bytes for num_tokens (in-pool groups)")
    predicted_bytes_per_token: float = Field(ge=0, le=1e10, allow_inf_nan=False)
    pool_bytes: NonNegInt = Field(description="pool tensors' bytes, rounded up to whole blocks")
    tensor_scale_bytes: NonNegInt = Field(description="per-tensor FP32 scales, allocated before the baseline: "
                                                      "outside measured and per-token bytes")
    measured_bytes: NonNegInt
    measured_bytes_per_token: float = Field(ge=0, le=1e10, allow_inf_nan=False)
    measured_over_predicted: float | None = Field(None, ge=0, le=1e6, allow_inf_nan=False)
    resident_bytes: NonNegInt
    reserved_bytes: NonNegInt | None = Field(None, description="CUDA memory_reserved delta (None on the CPU)")
    allocator_overhead_bytes: int = Field(ge=-(10**16), le=10**16, description="resident_bytes - measured_bytes")
    tokens_fit_free: NonNegInt = Field(description="the largest pool of this layout in free_bytes, in tokens "
                                                   "(whole blocks, windows capped; at most MAX_PROBE_TOKENS)")
    tokens_fit_cap: NonNegInt = Field(description="largest pool under max_fraction x free_bytes less scratch, in "
                                                  "tokens (at most tokens_fit_free)")
    released: bool
    residual_bytes: int = Field(ge=-(10**16), le=10**16, description="after release minus before the pool")

    quality: tuple[FormatQuality, ...] = Field((), max_length=64)
    throughput: tuple[FormatThroughput, ...] = Field((), max_length=64)
    elapsed_s: float = Field(ge=0, le=86_400, allow_inf_nan=False)
    notes: tuple[Text, ...] = Field((), max_length=32)

    @field_validator("timestamp")
    @classmethod
    def _aware_and_plausible(cls, v: datetime) -> datetime:
        if v.tzinfo is None:
            raise ValueError(msg('a timestamp with a time zone (UTC)'))
        now = datetime.now(timezone.utc)
        if not datetime(2023, 1, 1, tzinfo=timezone.utc) <= v <= now + timedelta(days=1):
            raise ValueError(msg('a time between 2023-01-01 and now ({now:%Y-%m-%d})', now=now))
        return v.astimezone(timezone.utc)

    @model_validator(mode="after")
    def _consistent(self) -> "ProbeResult":
        def bad(field: str, value: object, allowed: str) -> None:
            raise PlanInputError(field, value, allowed)

        n = self.num_tokens
        if self.free_bytes > self.total_bytes:
            bad("free_bytes", self.free_bytes, msg("at most total_bytes ({total_bytes:,})",
                                                   total_bytes=self.total_bytes))
        pool = sum(g.pool_bytes for g in self.groups)
        if self.pool_bytes != pool:
            bad("pool_bytes", self.pool_bytes, msg("the sum of the groups' pool bytes ({pool:,})", pool=pool))
        predicted = sum(g.predicted_bytes for g in self.groups)
        if self.predicted_bytes != predicted:
            bad("predicted_bytes", self.predicted_bytes, msg("the sum of layers x entries x entry bytes "
                                                             "({predicted:,})", predicted=predicted))
        layout = self._check_planner(bad)
        floor = self.pool_bytes
        ceiling = floor + floor // 100 + CUDA_ALLOCATION_ROUNDING_BYTES * len(self.groups)
        if not floor <= self.measured_bytes <= ceiling:
            bad("measured_bytes", self.measured_bytes,
                msg("between the pool ({floor:,}) and the pool plus allocator rounding ({ceiling:,})", floor=floor,
                    ceiling=ceiling))
        if not math.isclose(self.predicted_bytes_per_token, self.predicted_bytes / n, rel_tol=1e-9, abs_tol=1e-9):
            bad("predicted_bytes_per_token", self.predicted_bytes_per_token,
                msg("predicted_bytes / num_tokens = {value:.6g}", value=self.predicted_bytes / n))
        if not math.isclose(self.measured_bytes_per_token, self.measured_bytes / n, rel_tol=1e-9, abs_tol=1e-9):
            bad("measured_bytes_per_token", self.measured_bytes_per_token,
                msg("measured_bytes / num_tokens = {value:.6g}", value=self.measured_bytes / n))
        if self.predicted_bytes:
            ratio = self.measured_bytes / self.predicted_bytes
            if self.measured_over_predicted is None or not math.isclose(self.measured_over_predicted, ratio,
                                                                          rel_tol=1e-9):
                bad("measured_over_predicted", self.measured_over_predicted,
                    msg("measured_bytes / predicted_bytes = {ratio:.6g}", ratio=ratio))
        elif self.measured_over_predicted is not None:
            bad("measured_over_predicted", self.measured_over_predicted, msg("None when predicted_bytes is 0"))
        if self.measured_bytes > self.total_bytes:
            bad("measured_bytes", self.measured_bytes, msg("at most total_bytes ({total_bytes:,})",
                                                           total_bytes=self.total_bytes))
        if self.resident_bytes > self.total_bytes:
            bad("resident_bytes", self.resident_bytes, msg("at most total_bytes ({total_bytes:,})",
                                                           total_bytes=self.total_bytes))
        if self.allocator_overhead_bytes != self.resident_bytes - self.measured_bytes:
            bad("allocator_overhead_bytes", self.allocator_overhead_bytes,
                msg("resident_bytes - measured_bytes = {value:,}", value=self.resident_bytes - self.measured_bytes))
        if self.device == "cpu" and (self.reserved_bytes is not None or self.cuda_version is not None):
            bad("reserved_bytes", self.reserved_bytes, msg("None on the CPU (and cuda_version None)"))
        if self.device == "cuda" and self.reserved_bytes is None:
            bad("reserved_bytes", None, msg("the CUDA memory_reserved delta, in bytes"))
        from planner.probe.layout import tokens_that_fit

        fit = tokens_that_fit(layout, self.free_bytes)
        if self.tokens_fit_free != fit:
            bad("tokens_fit_free", self.tokens_fit_free,
                msg("the largest pool of this layout in free_bytes ({free_bytes:,} B): {fit:,} tokens",
                    free_bytes=self.free_bytes, fit=fit))
        if self.tokens_fit_cap > self.tokens_fit_free:
            bad("tokens_fit_cap", self.tokens_fit_cap, msg("at most tokens_fit_free ({tokens_fit_free:,})",
                                                           tokens_fit_free=self.tokens_fit_free))
        return self

    def _check_planner(self, bad):
        """``predicted_bytes`` must be the planner's figure for this model, format and tokens; returns the layout."""
        from planner.probe.layout import plan_pool  # the catalog, not torch

        try:
            layout = plan_pool(self.model_id, self.num_tokens, self.kv_format, self.block_size)
        except PlanInputError as exc:
            raise PlanInputError(exc.field if exc.field != "tokens" else "num_tokens", exc.value, exc.allowed) from None
        if self.predicted_bytes != layout.predicted_bytes:
            bad("predicted_bytes", self.predicted_bytes,
                msg("the planner's {predicted_bytes:,} B for {model_id} in {kv_format} at {num_tokens:,} tokens",
                    predicted_bytes=layout.predicted_bytes, model_id=self.model_id, kv_format=self.kv_format,
                    num_tokens=self.num_tokens))
        if self.pool_bytes != layout.pool_bytes:
            bad("pool_bytes", self.pool_bytes, msg("the planner's block-rounded {pool_bytes:,} B",
                                                   pool_bytes=layout.pool_bytes))
        return layout

    # -- display helpers -------------------------------------------------------
    @property
    def overhead_over_measured(self) -> float | None:
        """Allocator overhead as a fraction of measured bytes (None if nothing measured)."""
        return self.allocator_overhead_bytes / self.measured_bytes if self.measured_bytes else None

    def to_json(self) -> str:
        """The result as indented JSON (what ``kvplan probe --json`` prints)."""
        return self.model_dump_json(indent=2)


def tokens_fit_text(tokens: int) -> str:
    """``tokens_fit_free`` / ``tokens_fit_cap`` in words: at the probe's largest count, "or more" (a pool whose
    every layer holds a sliding window stops growing, so any length fits)."""
    from planner.probe.layout import MAX_PROBE_TOKENS

    if tokens >= MAX_PROBE_TOKENS:
        return msg("{tokens:,} tokens or more (the pool stops growing)", tokens=MAX_PROBE_TOKENS)
    return msg("{tokens:,} tokens", tokens=tokens)


def _first_error(exc: ValidationError) -> PlanInputError:
    """The first validation error as a PlanInputError (ours passed through unchanged)."""
    for err in exc.errors():
        inner = (err.get("ctx") or {}).get("error")
        if isinstance(inner, PlanInputError):
            return inner
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err.get("loc", ())) or "result"
    allowed = validation_rule(err)
    if err.get("type") == "extra_forbidden":
        allowed = msg("no such field in a ProbeResult (schema_version 1)")
    elif err.get("type") == "missing":
        allowed = msg("a value (the field is required)")
    return PlanInputError(field, err.get("input"), allowed)


def make_probe_result(**fields) -> ProbeResult:
    """Build a :class:`ProbeResult`, turning validation errors into :class:`PlanInputError`."""
    try:
        return ProbeResult(**fields)
    except ValidationError as exc:
        raise _first_error(exc) from None


def load_probe_result(data: bytes | str, *, max_bytes: int = MAX_RESULT_FILE_BYTES) -> ProbeResult:
    """Parse and validate a ProbeResult JSON (e.g. an upload from another machine).

    Raises:
        PlanInputError: larger than ``max_bytes``, not UTF-8 JSON, another
            ``schema_version``, or any inconsistent or forged figure.
    """
    size = len(data.encode("utf-8") if isinstance(data, str) else data)
    if size > max_bytes:
        raise PlanInputError("file", f"{size:,} bytes", msg("a ProbeResult JSON of at most {max_bytes:,} bytes",
                                                            max_bytes=max_bytes))
    try:
        raw = json.loads(data)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:  # bad JSON, 4,300+ digit ints, deep nesting
        if isinstance(exc, json.JSONDecodeError):  # where and why, in words a user interface can translate
            raise PlanInputError("file", f"{size:,} bytes", msg("UTF-8 JSON ({error})", error=json_error_text(exc))) from None
        raise PlanInputError("file", f"{size:,} bytes",
                             msg("UTF-8 JSON ({error}: {exc})", error=exc.__class__.__name__, exc=str(exc)[:120])) from None
    if not isinstance(raw, dict):
        raise PlanInputError("file", type(raw).__name__, msg("a JSON object (a ProbeResult)"))
    version = raw.get("schema_version", MISSING)
    if version is MISSING:
        raise PlanInputError("schema_version", version, msg("{schema_version} (the field is missing)",
                                                            schema_version=SCHEMA_VERSION))
    if version != SCHEMA_VERSION:
        raise PlanInputError("schema_version", version, msg("{schema_version} (this kvplan reads only that)",
                                                            schema_version=SCHEMA_VERSION))
    try:
        text = data if isinstance(data, (str, bytes)) else json.dumps(raw, allow_nan=False)
        return ProbeResult.model_validate_json(text)
    except ValidationError as exc:
        raise _first_error(exc) from None
