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
from typing import TYPE_CHECKING

from planner.errors import PlanInputError
from planner.kv.formats import get_format
from planner.kv.kinds import KVEstimate, KVGroup, StateGroup, check_tokens, check_tp, group_bytes
from planner.kv.pipeline import check_tp_heads, stage_ranges, vllm_pp_partition
from planner.messages import Figure, msg
from planner.units import EiB, format_figure

if TYPE_CHECKING:  # pandas is imported where a frame is built: `kvplan kv` never loads it
    import pandas as pd

MAX_KV_BYTES = 2**63 - 1
"""Largest KV figure an estimate gives, bytes (8 EiB): what a 64-bit table column (numpy, Arrow) holds."""

@dataclass(frozen=True)
class ConfigField:
    """One line of a model's import report (which config field gave which figure; built by :mod:`planner.hf`).

    Attributes:
        field: the config key (or a derived name).
        value: what kvplan used.
        how: "read", "derived", "defaulted" or "ignored".
        note: why, in words.
    """

    field: str
    value: object
    how: str
    note: str = ""


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
see planner.kv.formats for the sources)."""


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
        layer_pattern: one character per layer, its kind (legend:
            ``planner.hf.config.PATTERN_LEGEND``); "" when not known.
        num_attention_heads: the query heads, when known from a config: TP sizes vLLM refuses are then
            refused (:func:`planner.kv.pipeline.check_tp_heads`).
        ignored_fields: config fields the user accepted leaving unread (``--ignore-field``); the figures do
            not account for them.
        pp_layer_partition: layers per pipeline stage chosen by the user (vLLM's
            ``VLLM_PP_LAYER_PARTITION``); None = vLLM's ``get_pp_indices`` split.
        checkpoint_config: the config.json an imported model was read from (its weights and the engine
            budget are priced from it); None for catalog models (their shipped config is looked up by id).
        pp_refusal: the allowed value and the engine's reason when it refuses pipeline parallelism for this
            architecture (vLLM: the model class does not implement ``SupportsPP``); empty when PP is served.
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
    layer_pattern: str = ""
    num_attention_heads: int | None = None
    pp_layer_partition: tuple[int, ...] | None = None
    ignored_fields: tuple[str, ...] = ()
    checkpoint_config: dict | None = field(default=None, repr=False, compare=False)
    pp_refusal: str = ""

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
                                 msg("'native' for {id}: only its reported coefficient is known", id=self.name))
        return tuple(g.with_format(fmt) if g.role == "main" else g for g in self.groups)

    def uses_coefficient(self, kv_format: str | None) -> bool:
        """True when the reported coefficient (not the layout) prices growing KV."""
        return kv_format in (None, NATIVE) and self.reported_kv_bytes_per_token is not None

    # -- bytes --------------------------------------------------------------
    def check_pp(self, pp: int, kv_format: str | None = None) -> int:
        """Validate a pipeline-parallel degree for this model.

        Raises:
            PlanInputError: not in [1, 1024], more stages than the model has
                layers, or PP > 1 for a model known only by its coefficient.
        """
        pp = check_tp("pp", pp)
        if pp == 1:
            return pp
        if self.pp_refusal:
            raise PlanInputError("pp", pp, self.pp_refusal)
        if self.uses_coefficient(kv_format) and not self._coefficient_explained():
            raise PlanInputError("pp", pp, msg("1 for {id}: only its bytes per token are known, not its layers",
                                               id=self.name))  # the name the user knows (a config's file name)
        layers = self.num_hidden_layers
        if layers and pp > layers:
            raise PlanInputError("pp", pp, msg("at most {layers} (one layer per pipeline stage; {id} has {layers})",
                                               layers=layers, id=self.name))
        return pp

    @property
    def num_hidden_layers(self) -> int | None:
        """The model's layers: ``num_hidden_layers`` from its config import report, else the
        most layers any group has (a lower bound), else None."""
        for f in self.config_report:
            if f.field == "num_hidden_layers" and isinstance(f.value, int):
                return f.value
        return max((g.num_layers for g in self.groups), default=None)

    def _coefficient_explained(self) -> bool:
        return any(not g.capped and g.in_pool for g in self.groups)

    def _coefficient_scale(self, pp: int) -> float:
        """Share of the reported coefficient on the binding PP stage: the architecture's growing bytes per token
        on the stage that holds the most of them (vLLM ``get_pp_indices``, :meth:`stage_models`) over those at
        PP 1; with layers not known per group, each group's ``ceil(layers / PP)`` share."""
        if pp == 1:
            return 1.0
        growing = [g for g in self.groups if not g.capped and g.in_pool]
        whole = sum(g.entry_bytes_per_token() for g in growing)
        if self._layers_known(self.groups):
            stage = max(sum(g.entry_bytes_per_token() for g in m.groups if not g.capped and g.in_pool)
                        for _, m in self._stages(pp, None, self.groups))
        else:
            stage = sum(g.entry_bytes_per_token(1, pp) for g in growing)
        return stage / whole if whole else 1.0

    def binding_stage(self, num_tokens: int, kv_format: str | None, tp: int, pp: int) -> "ModelSpec | None":
        """The stage model that binds at ``num_tokens`` (the most pool bytes per GPU, vLLM ``get_pp_indices``
        stages), or None when PP is 1 or the layers of a group are not known (then each group's
        ``ceil(layers / PP)`` share is used). The one place the binding stage is chosen: :meth:`estimate`, the
        plan's byte methods, the coefficient's share and vLLM's paging (``planner.engines``) all use it. The
        stage model's groups already carry ``kv_format``: price it with ``kv_format=None`` and ``pp=1``."""
        if pp == 1 or not self._stages_known(kv_format):
            return None
        stages = [m for _, m in self.stage_models(pp, kv_format)]
        return stages[self._binding_index(stages, num_tokens, tp)]

    @staticmethod
    def _binding_index(stages: list["ModelSpec"], num_tokens: int, tp: int) -> int:
        pool = [m.growing_bytes(num_tokens, None, tp) + m.capped_bytes(num_tokens, None, tp) for m in stages]
        return max(range(len(stages)), key=lambda i: pool[i])

    def coefficient_bytes_per_token(self, pp: int = 1) -> float:
        """The reported coefficient on the GPU of the largest PP stage, B/token:
        ``reported_kv_bytes_per_token * _coefficient_scale(pp)``.

        Raises:
            TypeError: no reported coefficient (check :meth:`uses_coefficient` first).
        """
        return float(self.reported_kv_bytes_per_token) * self._coefficient_scale(pp)

    def growing_bytes(self, num_tokens: int, kv_format: str | None = None, tp: int = 1, pp: int = 1) -> int:
        """Pool bytes of the groups that grow with length (full, MLA, compressed), per GPU.

        A reported coefficient is per GPU at any TP (it prices caches with one
        KV head, replicated on every rank); at PP > 1 it is scaled by the
        architecture's share on the largest stage.
        """
        if self.uses_coefficient(kv_format):
            return math.ceil(self.coefficient_bytes_per_token(pp) * num_tokens)
        stage = self.binding_stage(num_tokens, kv_format, tp, pp)
        if stage is not None:
            return stage.growing_bytes(num_tokens, None, tp)
        return sum(g.bytes_for(num_tokens, tp, pp) for g in self.layout(kv_format) if not g.capped and g.in_pool)

    def capped_bytes(self, num_tokens: int, kv_format: str | None = None, tp: int = 1, pp: int = 1) -> int:
        """Pool bytes of capped groups (windows, chunks, fixed state) in HBM, per GPU (binding stage at PP > 1)."""
        stage = self.binding_stage(num_tokens, kv_format, tp, pp)
        if stage is not None:
            return stage.capped_bytes(num_tokens, None, tp)
        return sum(g.bytes_for(num_tokens, tp, pp) for g in self.layout(kv_format) if g.capped and g.in_pool)

    def state_bytes_outside_pool(self, num_tokens: int, kv_format: str | None = None, tp: int = 1,
                                 pp: int = 1) -> int:
        """Per-session bytes kept outside the HBM pool (e.g. host-RAM window rings), per GPU (binding stage)."""
        stage = self.binding_stage(num_tokens, kv_format, tp, pp)
        if stage is not None:
            return stage.state_bytes_outside_pool(num_tokens, None, tp)
        return sum(g.bytes_for(num_tokens, tp, pp) for g in self.layout(kv_format) if not g.in_pool)

    def state_bytes_in_pool(self, num_tokens: int, kv_format: str | None = None, tp: int = 1, pp: int = 1) -> int:
        """Per-sequence state in the HBM pool (Mamba / linear-attention state), per GPU:
        constant once a sequence has a token, counted once per session. Part of
        :meth:`capped_bytes`."""
        stage = self.binding_stage(num_tokens, kv_format, tp, pp)
        if stage is not None:
            return stage.state_bytes_in_pool(num_tokens, None, tp)
        return sum(g.bytes_for(num_tokens, tp, pp) for g in self.layout(kv_format)
                   if g.in_pool and g.role == "state")

    def replica_bytes(self, num_tokens: int, kv_format: str | None = None, tp: int = 1) -> int:
        """Pool bytes on all ``TP x PP`` GPUs of one replica (each layer once per TP rank)."""
        groups = self.layout(kv_format)
        capped = sum(g.bytes_for_replica(num_tokens, tp) for g in groups if g.capped and g.in_pool)
        if self.uses_coefficient(kv_format):
            return math.ceil(self.reported_kv_bytes_per_token * num_tokens) * tp + capped
        return capped + sum(g.bytes_for_replica(num_tokens, tp) for g in groups if not g.capped and g.in_pool)

    def estimate(self, context_tokens: int, kv_format: str | None = None, tp: int = 1, pp: int = 1) -> KVEstimate:
        """KV bytes of one sequence of ``context_tokens`` tokens, per GPU at TP ``tp``
        and PP ``pp`` (the GPU of the largest pipeline stage).

        Raises:
            PlanInputError: bad token count, TP or PP degree, or format; a TP
                degree that does not divide a state group (vLLM would not start); or a
                figure past :data:`MAX_KV_BYTES` (tables hold 64-bit integers; no machine
                holds 8 EiB).
        """
        n = check_tokens("context_tokens", context_tokens)
        tp = check_tp("tp", tp)
        groups = self.layout(kv_format)
        for g in groups:
            g.check_split(tp)
        if self.num_attention_heads is not None:
            check_tp_heads(tp, self.num_attention_heads,
                           [h for g in groups if g.role == "main" and (h := getattr(g, "num_kv_heads", None))])
        pp = self.check_pp(pp, kv_format)
        if pp > 1 and self._stages_known(kv_format):
            return self._binding_stage_estimate(n, kv_format, tp, pp)
        rows = tuple(group_bytes(g, n, tp, pp) for g in groups)
        if self.uses_coefficient(kv_format):
            slope = self.coefficient_bytes_per_token(pp)
            slope += sum(r.growing_bytes_per_token for r, g in zip(rows, groups) if g.capped and g.in_pool)
            basis = "reported coefficient"
        else:
            slope = sum(r.growing_bytes_per_token for r in rows if r.in_pool)
            basis = "architecture"
        per = "GPU"
        if tp > 1 or pp > 1:
            per = f"GPU (TP {tp}, PP {pp}: one GPU of the largest pipeline stage)"
        kv_bytes = self.growing_bytes(n, kv_format, tp, pp) + self.capped_bytes(n, kv_format, tp, pp)
        replica_bytes = self.replica_bytes(n, kv_format, tp)
        outside = self.state_bytes_outside_pool(n, kv_format, tp, pp)
        in_pool = self.state_bytes_in_pool(n, kv_format, tp, pp)
        largest = max(kv_bytes, replica_bytes, outside, in_pool, *(r.bytes for r in rows))
        if largest > MAX_KV_BYTES:
            per_token = max(largest / n, 1) if n else largest
            fits = max(int(MAX_KV_BYTES // per_token), 0)
            raise PlanInputError(
                "context_tokens", n,
                msg("at most about {fits:,} tokens for this model at TP {tp}, PP {pp}: its KV ({largest:.3g} B) "
                    "passes 2^63 B = {value:.0f} EiB, more than any machine holds (check num_hidden_layers, "
                    "num_key_value_heads and head_dim)", fits=fits, tp=tp, pp=pp, largest=largest,
                    value=MAX_KV_BYTES / EiB))
        return KVEstimate(
            model_id=self.id,
            context_tokens=n,
            kv_format=kv_format or NATIVE,
            tp=tp,
            kv_bytes=kv_bytes,
            state_bytes_outside_pool=outside,
            kv_bytes_per_token=slope,
            basis=basis,
            groups=rows,
            pp=pp,
            kv_bytes_per_replica=replica_bytes,
            per=per,
            state_bytes_in_pool=in_pool,
        )

    # -- pipeline stages (vLLM get_pp_indices) ------------------------------
    def _stages_known(self, kv_format: str | None) -> bool:
        """True when every group knows its layers, so stages can be split by layer as vLLM splits them."""
        return not self.uses_coefficient(kv_format) and self._layers_known(self.layout(kv_format))

    def _layers_known(self, groups) -> bool:
        groups = [g for g in groups if g.num_layers]
        return bool(groups) and self.num_hidden_layers is not None and all(
            len(g.layer_ids) == g.num_layers for g in groups)

    def stage_models(self, pp: int, kv_format: str | None = None) -> tuple[tuple[tuple[int, int], "ModelSpec"], ...]:
        """Each pipeline stage's layer range and the model restricted to it (vLLM's ``get_pp_indices``, or
        :attr:`pp_layer_partition`).

        Raises:
            PlanInputError: a partition of the wrong length or sum.
        """
        return self._stages(pp, kv_format, self.layout(kv_format))

    def _stages(self, pp: int, kv_format: str | None, layout) -> tuple[tuple[tuple[int, int], "ModelSpec"], ...]:
        key = (pp, kv_format, id(layout) if layout is self.groups else None)
        cache = self.__dict__.setdefault("_stage_cache", {})
        if key in cache:
            return cache[key]
        ranges = stage_ranges(vllm_pp_partition(self.num_hidden_layers, pp, self.pp_layer_partition))
        out = []
        for start, end in ranges:
            groups = []
            for g in layout:
                ids = tuple(i for i in g.layer_ids if start <= i < end)
                groups.append(replace(g, num_layers=len(ids), layer_ids=ids) if g.num_layers else g)
            out.append(((start, end), replace(self, groups=tuple(groups), reported_kv_bytes_per_token=None,
                                              pp_layer_partition=None, num_attention_heads=None)))
        cache[key] = tuple(out)
        return cache[key]

    def _binding_stage_estimate(self, n: int, kv_format: str | None, tp: int, pp: int) -> KVEstimate:
        """The estimate on the stage that holds the most bytes at ``n`` tokens (the one that binds)."""
        staged = self.stage_models(pp, kv_format)
        index = self._binding_index([m for _, m in staged], n, tp)
        stages = [(rng, m.estimate(n, None, tp, 1)) for rng, m in staged]
        (start, end), est = stages[index]
        per = f"GPU (TP {tp}, PP {pp}: one GPU of the largest pipeline stage)"
        return replace(est, model_id=self.id, kv_format=kv_format or NATIVE, pp=pp, per=per,
                       kv_bytes_per_replica=self.replica_bytes(n, kv_format, tp),
                       stage_bytes=tuple(e.kv_bytes for _, e in stages), binding_stage=index,
                       stage_layers=(start, end))

    def weights_bytes(self, weight_format: str | None = None) -> int:
        """Weight bytes of one replica: total parameters x bytes per parameter.

        Raises:
            PlanInputError: no parameter count known, or unknown weight format.
        """
        fmt = weight_format or self.weight_format
        if fmt not in WEIGHT_BYTES_PER_PARAM:
            raise PlanInputError("weight_format", fmt, msg("one of {choices}",
                                                           choices=", ".join(WEIGHT_BYTES_PER_PARAM)))
        if self.total_params is None:
            raise PlanInputError("weights", self.id, msg("a model with a known parameter count, or weights given in "
                                                         "GiB"))
        return math.ceil(self.total_params * WEIGHT_BYTES_PER_PARAM[fmt])


def coefficient_model(kv_bytes_per_token: float, *, state_bytes: int = 0, name: str = "custom",
                      state_in_pool: bool = False) -> ModelSpec:
    """A model known only by its KV bytes per token (and optional fixed state per sequence).

    ``state_bytes`` is per sequence and GPU, not split by TP: in the HBM pool
    with ``state_in_pool`` (a Mamba / linear-attention hybrid's state, counted
    once per session), else outside it (a host-RAM window ring).

    Raises:
        PlanInputError: coefficient not finite and in (0, 10**9], or state
            bytes outside [0, 10**15].
    """
    if isinstance(kv_bytes_per_token, bool) or not isinstance(kv_bytes_per_token, (int, float)) \
            or not math.isfinite(kv_bytes_per_token) or not 0 < kv_bytes_per_token <= 10**9:
        raise PlanInputError("kv_bytes_per_token", kv_bytes_per_token, msg("a number in (0, 1,000,000,000] bytes"))
    if isinstance(state_bytes, bool) or not isinstance(state_bytes, int) or not 0 <= state_bytes <= 10**15:
        raise PlanInputError("state_bytes", state_bytes, msg("a whole number of bytes in [0, 10**15]"))
    groups: tuple[KVGroup, ...] = ()
    if state_bytes:
        groups = (StateGroup(name="fixed session state", num_layers=1, kv_format=get_format("bf16"),
                             role="state", in_pool=state_in_pool, fixed_bytes_per_layer=state_bytes),)
    return ModelSpec(id="custom", name=name, groups=groups, reported_kv_bytes_per_token=float(kv_bytes_per_token),
                     native_format_label="as reported", source="user-supplied coefficient")


def with_pool_state(model: ModelSpec, state_bytes: int) -> ModelSpec:
    """``model`` with its in-pool state groups replaced by one reported figure of
    ``state_bytes`` per sequence and GPU (0 removes them).

    Raises:
        PlanInputError: ``state_bytes`` not a whole number in [0, 10**15].
    """
    if isinstance(state_bytes, bool) or not isinstance(state_bytes, int) or not 0 <= state_bytes <= 10**15:
        raise PlanInputError("state_bytes_per_sequence", state_bytes, msg("a whole number of bytes in [0, 10**15]"))
    groups = tuple(g for g in model.groups if not (g.in_pool and g.role == "state"))
    if state_bytes:
        groups += (StateGroup(name="reported state per sequence", num_layers=1, kv_format=get_format("bf16"),
                              role="state", fixed_bytes_per_layer=state_bytes),)
    return replace(model, groups=groups)


# ---------------------------------------------------------------------------
# Breakdown helpers (pure; the Model page and the CLI render them)
# ---------------------------------------------------------------------------

BREAKDOWN_COLUMNS: tuple[str, ...] = (
    "group", "kind", "role", "layers", "layers_per_gpu", "kv_heads_per_gpu", "channels", "kv_format",
    "entry_bytes", "tokens_per_entry", "bytes_per_token", "entries", "bytes", "growth", "in_pool",
    "replicated_on_tp", "layer_ids",
)
"""Column contract of :func:`breakdown_frame`, one row per layer group, per GPU:

* ``layers`` (whole model) and ``layers_per_gpu`` (``ceil(layers / PP)``);
* ``kv_heads_per_gpu``: ``ceil(H_kv / TP)``, at least 1 (1 for latents and
  compressed entries, empty for fixed state);
* ``channels``: width of one entry, in words;
* ``entry_bytes``: one entry of one layer in ``kv_format``, scales included;
* ``bytes_per_token``: ``layers_per_gpu * entry_bytes / tokens_per_entry``
  while the group grows (a capped group stops at its window / state), B/token:
  :attr:`GroupBytes.entry_bytes_per_token`, not the marginal
  :attr:`GroupBytes.growing_bytes_per_token` (0 past a window);
* ``entries`` and ``bytes``: what one sequence of the chosen context holds;
* ``growth``: "growing" or "capped"; ``in_pool``: in the HBM KV pool or not;
* ``layer_ids``: the model's layers the group stores, as ranges ("" when not known).
"""


def breakdown_frame(model: ModelSpec, context_tokens: int, kv_format: str | None = None,
                    tp: int = 1, pp: int = 1) -> pd.DataFrame:
    """Per-group breakdown of one sequence, per GPU, with :data:`BREAKDOWN_COLUMNS`.

    Raises:
        PlanInputError: from :meth:`ModelSpec.estimate`.
    """
    import pandas as pd

    est = model.estimate(context_tokens, kv_format, tp, pp)
    rows = []
    for g in est.groups:
        rows.append({
            "group": g.name, "kind": g.kind, "role": g.role, "layers": g.num_layers,
            "layers_per_gpu": g.num_layers_per_gpu, "kv_heads_per_gpu": g.kv_heads_per_gpu,
            "channels": g.width, "kv_format": g.kv_format, "entry_bytes": g.entry_bytes,
            "tokens_per_entry": g.tokens_per_entry,
            "bytes_per_token": g.entry_bytes_per_token,
            "entries": g.entries, "bytes": g.bytes, "growth": "capped" if g.capped else "growing",
            "in_pool": g.in_pool, "replicated_on_tp": g.replicated_on_tp, "layer_ids": g.layer_ids,
        })
    return pd.DataFrame(rows, columns=list(BREAKDOWN_COLUMNS))


@dataclass(frozen=True)
class CoefficientCheck:
    """A reported coefficient next to the architecture's bytes per token.

    Attributes:
        reported: the publisher's growing bytes per token (None if none).
        architecture: growing bytes per token from the layer groups, per GPU at
            TP 1, PP 1 in the native formats.
        matches: True when they agree to within 0.5 B.
        explanation: the sum, in words ("1 x 356 / 1 + 3 x 356 / 2 = 890 B").
    """

    reported: float | None
    architecture: float
    matches: bool
    explanation: str


def coefficient_check(model: ModelSpec) -> CoefficientCheck:
    """Does the architecture explain the reported coefficient? (native formats, TP 1, PP 1).

    >>> from planner.catalog.entries import get_model
    >>> coefficient_check(get_model("deepseek-v4.1-flash")).matches
    True
    """
    growing = [g for g in model.groups if not g.capped and g.in_pool]
    terms = [msg("{num_layers} x {entry_bytes} B / {tokens_per_entry} ({name})", num_layers=g.num_layers,
                 entry_bytes=g.entry_bytes(1), tokens_per_entry=g.tokens_per_entry, name=g.name) for g in growing]
    arch = sum(g.entry_bytes_per_token() for g in growing)
    reported = model.reported_kv_bytes_per_token
    total = terms[0] if terms else None
    for term in terms[1:]:
        total = msg("{sum} + {term}", sum=total, term=term)  # a Message each: the group names can be translated
    # format_figure, not "{:,.6g}": from 1,000,000 B/token "g" turns to scientific notation and rounds the figure
    text = (msg("{terms} = {arch} B/token", terms=total, arch=Figure(format_figure(arch, 6))) if terms
            else msg("no growing groups known"))
    if reported is not None:
        text = msg("{text}; reported {reported} B/token", text=text, reported=Figure(format_figure(reported, 6)))
    return CoefficientCheck(reported=reported, architecture=arch,
                            matches=reported is not None and abs(arch - reported) < 0.5, explanation=text)


def how_computed(model: ModelSpec, context_tokens: int, kv_format: str | None = None,
                 tp: int = 1, pp: int = 1) -> list[str]:
    """The formulas behind :meth:`ModelSpec.estimate`, numbers plugged in, one line each (Markdown-free text).

    Raises:
        PlanInputError: from :meth:`ModelSpec.estimate`.
    """
    est = model.estimate(context_tokens, kv_format, tp, pp)
    n = est.context_tokens
    lines = [msg("Per GPU at TP {tp}, PP {pp}: each group's layers per GPU = ceil(layers / {pp}); KV heads per GPU = "
                 "max(1, ceil(H_kv / {tp})); latents and compressed entries are replicated on TP.", tp=tp, pp=pp)]
    for g in est.groups:
        if g.tokens_per_entry > 1:
            ent = msg("{n:,} // {tokens_per_entry} = {entries:,} entries", n=n, tokens_per_entry=g.tokens_per_entry,
                      entries=g.entries)
        elif g.role == "state":
            ent = msg("{entries} state per sequence", entries=g.entries)
        elif g.capped:
            ent = msg("min({n:,}, cap) = {entries:,} entries", n=n, entries=g.entries)
        else:
            ent = msg("{entries:,} entries", entries=g.entries)
        where = msg("in the HBM pool") if g.in_pool else msg("outside the pool (per session)")
        lines.append(msg("{name} [{kv_format}]: entry = {formula}. {num_layers_per_gpu} layer(s) x {ent} x "
                         "{entry_bytes:,} B = {bytes:,} B, {where}.", name=g.name, kv_format=g.kv_format,
                         formula=g.formula, num_layers_per_gpu=g.num_layers_per_gpu, ent=ent,
                         entry_bytes=g.entry_bytes, bytes=g.bytes, where=where))
    if est.basis == "reported coefficient":
        chk = coefficient_check(model)
        scale = (msg(" x {coefficient_scale:.4g} (largest PP stage)", coefficient_scale=model._coefficient_scale(pp))
                 if pp > 1 else "")
        lines.append(msg("Growing KV uses the reported coefficient: ceil({reported_kv_bytes_per_token} "
                         "B/token{scale} x {n:,}) = {growing_bytes:,} B. Architecture check: {explanation}.",
                         reported_kv_bytes_per_token=Figure(format_figure(model.reported_kv_bytes_per_token, 6)),
                         scale=scale, n=n,
                         growing_bytes=model.growing_bytes(n, kv_format, tp, pp), explanation=chk.explanation))
    lines.append(msg("Total in the pool per GPU: {kv_bytes:,} B; per replica ({gpus:,} GPU): "
                     "{kv_bytes_per_replica:,} B; outside the pool: {state_bytes:,} B per session." if tp * pp == 1 else
                     "Total in the pool per GPU: {kv_bytes:,} B; per replica ({gpus:,} GPUs): "
                     "{kv_bytes_per_replica:,} B; outside the pool: {state_bytes:,} B per session.", kv_bytes=est.kv_bytes, gpus=tp * pp,
                     kv_bytes_per_replica=est.kv_bytes_per_replica, state_bytes=est.state_bytes_outside_pool))
    return lines
