"""What one sequence's KV costs, as reported: per-group rows, the estimate, and
the validators of token counts and parallel degrees.

The layer kinds that produce these figures live in :mod:`planner.kv.kinds`.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from planner.errors import PlanInputError
from planner.messages import msg

MAX_PARALLEL = 1024
"""Largest TP or PP degree accepted."""


@dataclass(frozen=True)
class GroupBytes:
    """One group's share of a sequence's KV, as shown in breakdowns (per GPU).

    Attributes:
        name, kind, role, kv_format: the group (kind is the class name).
        num_layers: layers storing this group (whole model).
        entry_bytes: bytes of one entry in one layer (per GPU).
        entries: entries per layer for the sequence.
        bytes: ``num_layers_per_gpu * entries * entry_bytes``.
        growing_bytes_per_token: marginal bytes per extra token at this
            length, B/token (0 once a capped group stops growing); written as
            ``bytes_per_token`` in the CLI's JSON (:meth:`as_json`).
        capped: True if it stops growing.
        in_pool: True if it lives in the HBM pool.
        num_layers_per_gpu: ``ceil(num_layers / PP)``.
        kv_heads_per_gpu: KV heads (or latents) on one GPU; None for state.
        width: channels of one entry, in words.
        tokens_per_entry: tokens one entry covers (compression ratio).
        replicated_on_tp: True when every TP rank holds the whole entry.
        formula: how ``entry_bytes`` was computed, numbers plugged in.
        layer_ids: the model's layers this group stores, as ranges ("4, 12, 20, 28"); "" when not known.
        entry_bytes_per_token: bytes per token while the group grows
            (``num_layers_per_gpu * entry_bytes / tokens_per_entry``, B/token;
            inside a window, not 0 past it): the breakdown's ``bytes_per_token`` column.
    """

    name: str
    kind: str
    role: str
    kv_format: str
    num_layers: int
    entry_bytes: int
    entries: int
    bytes: int
    growing_bytes_per_token: float
    capped: bool
    in_pool: bool
    num_layers_per_gpu: int = 0
    kv_heads_per_gpu: int | None = None
    width: str = ""
    tokens_per_entry: int = 1
    replicated_on_tp: bool = False
    formula: str = ""
    layer_ids: str = ""
    entry_bytes_per_token: float = 0.0

    def as_json(self) -> dict:
        """The row as the CLI's JSON writes it: every field in order, the marginal
        figure under its published key ``bytes_per_token``, ``entry_bytes_per_token`` left out."""
        out: dict = {}
        for key, value in asdict(self).items():
            if key == "growing_bytes_per_token":
                out["bytes_per_token"] = value
            elif key != "entry_bytes_per_token":
                out[key] = value
        return out


@dataclass(frozen=True)
class KVEstimate:
    """KV bytes of one sequence of ``context_tokens`` tokens, per GPU.

    Attributes:
        model_id: catalog id or "custom".
        context_tokens: sequence length.
        kv_format: "native" (the model's published formats) or a format id.
        tp: tensor-parallel degree the per-GPU figures assume.
        kv_bytes: bytes in the engine's KV pool on one GPU (window-capped
            groups included, out-of-pool state excluded).
        state_bytes_outside_pool: per-sequence state kept outside the HBM pool
            (e.g. a host-RAM window ring), bytes per GPU.
        kv_bytes_per_token: marginal pool bytes per extra token at this
            length, per GPU.
        basis: "reported coefficient" or "architecture".
        groups: per-group breakdown (architecture view; for a reported
            coefficient, the breakdown that explains it, if known).
        pp: pipeline-parallel degree (per-GPU figures are for the largest stage).
        kv_bytes_per_replica: pool bytes on all ``tp x pp`` GPUs of one
            replica (replicated heads and latents counted on every rank).
        per: what the per-GPU figures mean, in words.
        state_bytes_in_pool: per-sequence state in the pool (Mamba / linear
            attention), bytes per GPU; included in ``kv_bytes``, constant in length.
        stage_bytes: at PP > 1 with every layer's kind known, each stage's pool bytes per GPU (vLLM's
            ``get_pp_indices`` split); () otherwise (then the per-group ``ceil(L / PP)`` bound is used).
        binding_stage: the index of the stage the figures are for (the most bytes), or None.
        stage_layers: that stage's ``[start, end)`` layers, or None.
    """

    model_id: str
    context_tokens: int
    kv_format: str
    tp: int
    kv_bytes: int
    state_bytes_outside_pool: int
    kv_bytes_per_token: float
    basis: str
    groups: tuple[GroupBytes, ...] = field(default_factory=tuple)
    pp: int = 1
    kv_bytes_per_replica: int = 0
    per: str = "GPU"
    state_bytes_in_pool: int = 0
    stage_bytes: tuple[int, ...] = ()
    binding_stage: int | None = None
    stage_layers: tuple[int, int] | None = None

    @property
    def state_bytes_per_sequence(self) -> int:
        """All per-sequence state, in the pool and outside it, bytes per GPU (the CLI's ``state_bytes``)."""
        return self.state_bytes_in_pool + self.state_bytes_outside_pool

    @property
    def state_bytes(self) -> int:
        """Alias of :attr:`state_bytes_outside_pool`, kept for the dashboard's Model page."""
        return self.state_bytes_outside_pool

    @property
    def pool_state_bytes(self) -> int:
        """Alias of :attr:`state_bytes_in_pool`, kept for the dashboard's Model page."""
        return self.state_bytes_in_pool


def check_tokens(name: str, value: object, *, maximum: int = 10**12) -> int:
    """Validate a token count: an integer in [0, maximum].

    Raises:
        PlanInputError: not an integer (NaN, inf, fractions, bools), negative,
            or above ``maximum``.
    """
    allowed = msg("a whole number of tokens in [0, {maximum:,}]", maximum=maximum)
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        else:
            raise PlanInputError(name, value, allowed)
    if not 0 <= value <= maximum:
        raise PlanInputError(name, value, allowed)
    return value


def check_tp(name: str, value: object) -> int:
    """Validate a parallel degree (TP or PP): an integer in [1, 1024].

    Raises:
        PlanInputError: otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_PARALLEL:
        raise PlanInputError(name, value, msg("a whole number in [1, {max_parallel:,}]", max_parallel=MAX_PARALLEL))
    return value
