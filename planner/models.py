"""Model specs: a KV layout (groups), an optional reported coefficient, weights.

A :class:`ModelSpec` answers "how many KV bytes does one sequence of ``n``
tokens hold, per GPU, in this format?" either from a reported coefficient (the
publisher's bytes per token, the source of truth when given, e.g. DeepSeek
V4.1-Flash's 890 B/token) or from its architecture (layer groups built from a
``config.json``). Choosing a KV format other than "native" always uses the
architecture, with the main KV in that format.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from planner.config_import import ConfigField
from planner.errors import PlanInputError
from planner.formats import get_format
from planner.kv import KVEstimate, KVGroup, check_tokens, check_tp, group_bytes

NATIVE = "native"
"""KV format id meaning "as the model's publisher ships it"."""

WEIGHT_BYTES_PER_PARAM: dict[str, float] = {
    "fp32": 4.0,
    "bf16": 2.0,
    "fp16": 2.0,
    "fp8": 1.0,
    "int8": 1.0,
    "nvfp4": 0.5625,
    "mxfp4": 0.53125,
    "int4": 0.5,
}
"""Bytes per weight parameter by storage format, block scales included
(nvfp4: 4 bits + one 8-bit scale per 16 = 4.5 bits; mxfp4: 4 + 8/32 = 4.25 bits;
see planner.formats for the sources)."""


@dataclass(frozen=True, kw_only=True)
class ModelSpec:
    """A model as kvplan plans it.

    Attributes:
        id: lowercase slug (``deepseek-v4.1-flash``).
        name: display name.
        groups: KV layer groups (architecture); may be empty for a
            coefficient-only model.
        reported_kv_bytes_per_token: publisher's bytes per token of the
            growing KV (native format), or None.
        native_format_label: what "native" means for this model, in words.
        max_context_tokens: the model's maximum context, if known.
        total_params: total parameters (all experts; never active ones).
        weight_format: key of :data:`WEIGHT_BYTES_PER_PARAM` for the shipped weights.
        source: where the layout, coefficient and parameter count come from.
        notes: facts a user should read next to the numbers.
        config_report: what the config import read, derived and defaulted.
    """

    id: str
    name: str
    groups: tuple[KVGroup, ...] = ()
    reported_kv_bytes_per_token: float | None = None
    native_format_label: str = "as in config.json (BF16 unless stated)"
    max_context_tokens: int | None = None
    total_params: int | None = None
    weight_format: str = "bf16"
    source: str = ""
    notes: tuple[str, ...] = ()
    config_report: tuple[ConfigField, ...] = field(default=(), repr=False)

    # -- layout -------------------------------------------------------------
    def layout(self, kv_format: str | None = None) -> tuple[KVGroup, ...]:
        """Groups with the main KV in ``kv_format`` (None or "native": as published).

        Raises:
            PlanInputError: unknown format, or a coefficient-only model asked
                for another format.
        """
        if kv_format in (None, NATIVE):
            return self.groups
        fmt = get_format(kv_format)
        if not any(g.role == "main" for g in self.groups):
            raise PlanInputError("kv_format", kv_format,
                                 f"'native' for {self.id}: only its reported coefficient is known")
        return tuple(g.with_format(fmt) if g.role == "main" else g for g in self.groups)

    def uses_coefficient(self, kv_format: str | None) -> bool:
        """True when the reported coefficient (not the layout) prices growing KV."""
        return kv_format in (None, NATIVE) and self.reported_kv_bytes_per_token is not None

    # -- bytes --------------------------------------------------------------
    def growing_bytes(self, num_tokens: int, kv_format: str | None = None, tp: int = 1) -> int:
        """Pool bytes of the groups that grow with length (full, MLA, compressed)."""
        if self.uses_coefficient(kv_format):
            return math.ceil(self.reported_kv_bytes_per_token * num_tokens)
        return sum(g.bytes_for(num_tokens, tp) for g in self.layout(kv_format) if not g.capped and g.in_pool)

    def capped_bytes(self, num_tokens: int, kv_format: str | None = None, tp: int = 1) -> int:
        """Pool bytes of capped groups (windows, chunks, fixed state) in HBM."""
        return sum(g.bytes_for(num_tokens, tp) for g in self.layout(kv_format) if g.capped and g.in_pool)

    def state_bytes(self, num_tokens: int, kv_format: str | None = None, tp: int = 1) -> int:
        """Per-session bytes kept outside the HBM pool (e.g. host-RAM window rings)."""
        return sum(g.bytes_for(num_tokens, tp) for g in self.layout(kv_format) if not g.in_pool)

    def estimate(self, context_tokens: int, kv_format: str | None = None, tp: int = 1) -> KVEstimate:
        """KV bytes of one sequence of ``context_tokens`` tokens, per GPU at TP ``tp``.

        Raises:
            PlanInputError: bad token count, TP degree or format.
        """
        n = check_tokens("context_tokens", context_tokens)
        tp = check_tp("tp", tp)
        groups = self.layout(kv_format)
        rows = tuple(group_bytes(g, n, tp) for g in groups)
        if self.uses_coefficient(kv_format):
            slope = float(self.reported_kv_bytes_per_token)
            slope += sum(r.bytes_per_token for r, g in zip(rows, groups) if g.capped and g.in_pool)
            basis = "reported coefficient"
        else:
            slope = sum(r.bytes_per_token for r in rows if r.in_pool)
            basis = "architecture"
        return KVEstimate(
            model_id=self.id,
            context_tokens=n,
            kv_format=kv_format or NATIVE,
            tp=tp,
            kv_bytes=self.growing_bytes(n, kv_format, tp) + self.capped_bytes(n, kv_format, tp),
            state_bytes=self.state_bytes(n, kv_format, tp),
            kv_bytes_per_token=slope,
            basis=basis,
            groups=rows,
        )

    def weights_bytes(self, weight_format: str | None = None) -> int:
        """Weight bytes of one replica: total parameters x bytes per parameter.

        Raises:
            PlanInputError: no parameter count known, or unknown weight format.
        """
        fmt = weight_format or self.weight_format
        if fmt not in WEIGHT_BYTES_PER_PARAM:
            raise PlanInputError("weight_format", fmt, "one of " + ", ".join(WEIGHT_BYTES_PER_PARAM))
        if self.total_params is None:
            raise PlanInputError("weights", self.id, "a model with a known parameter count, or weights given in GiB")
        return math.ceil(self.total_params * WEIGHT_BYTES_PER_PARAM[fmt])

    def with_reported(self, kv_bytes_per_token: float | None) -> "ModelSpec":
        """A copy with another reported coefficient (e.g. a measured one)."""
        return replace(self, reported_kv_bytes_per_token=kv_bytes_per_token)


def coefficient_model(kv_bytes_per_token: float, *, state_bytes: int = 0, name: str = "custom") -> ModelSpec:
    """A model known only by its KV bytes per token (and optional fixed state).

    Raises:
        PlanInputError: coefficient not finite and in (0, 10**9], or state
            bytes outside [0, 10**15].
    """
    if isinstance(kv_bytes_per_token, bool) or not isinstance(kv_bytes_per_token, (int, float)) \
            or not math.isfinite(kv_bytes_per_token) or not 0 < kv_bytes_per_token <= 10**9:
        raise PlanInputError("kv_bytes_per_token", kv_bytes_per_token, "a number in (0, 1,000,000,000] bytes")
    if isinstance(state_bytes, bool) or not isinstance(state_bytes, int) or not 0 <= state_bytes <= 10**15:
        raise PlanInputError("state_bytes", state_bytes, "a whole number of bytes in [0, 10**15]")
    from planner.kv import StateGroup  # local: avoids a cycle in type checkers only

    groups: tuple[KVGroup, ...] = ()
    if state_bytes:
        groups = (StateGroup(name="fixed session state", num_layers=1, kv_format=get_format("bf16"),
                             role="state", in_pool=False, state_bytes=state_bytes),)
    return ModelSpec(id="custom", name=name, groups=groups, reported_kv_bytes_per_token=float(kv_bytes_per_token),
                     native_format_label="as reported", source="user-supplied coefficient")
