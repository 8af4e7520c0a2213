"""KV-cache layouts: per-layer groups, and the bytes a sequence holds.

A model's KV cache is a tuple of layer groups. Each group is a frozen spec with
one number format; each variant overrides exactly one thing, how many entries a
layer stores for a sequence of ``n`` tokens (``entries``), or how wide one entry
is (``entry_bytes``):

========================  ======================================  =====================
group                     entry bytes (per layer, per GPU)         entries for n tokens
========================  ======================================  =====================
``FullAttentionGroup``    ceil(H_kv/TP) * (vec(d_k) + vec(d_v))    n
``SlidingWindowGroup``    same                                     min(n, W)
``ChunkedLocalGroup``     same                                     min(n, C)
``MLAGroup``              vec(kv_lora_rank + rope_dim)             n (replicated on TP)
``CompressedGroup``       vec(entry_dim)                           n // compress_ratio
``WindowRingGroup``       vec(entry_dim)                           min(n, W)
``StateGroup``            fixed state per sequence (TP-split)      1
========================  ======================================  =====================

``vec`` is :meth:`planner.formats.KVFormat.vector_bytes` (block scales per
vector, rounded up: ``vec(n) = ceil(n * bits / 8) + ceil(n / block) * scale_bits / 8``).

Parallelism (per GPU):

* tensor parallel ``TP``: a GPU holds ``ceil(H_kv / TP)`` KV heads, at least
  one; with ``TP > H_kv`` heads are replicated (vLLM ``get_num_kv_heads``:
  ``max(1, H_kv // TP)``, which equals the ceiling whenever vLLM accepts the
  split). MLA latents, DeepSeek V4 compressed entries and window rings have one
  KV head and are replicated on every TP rank, never divided.
* pipeline parallel ``PP``: layers are split into ``PP`` contiguous stages.
  kvplan charges each GPU ``ceil(L_g / PP)`` layers of every group ``g``: the
  most any stage can hold of that group. Summed over groups this is the KV of
  the largest stage (exact when one group holds all layers, as in vLLM's
  ``get_pp_indices`` split, an upper bound by under one layer per group
  otherwise). Per replica, every layer is counted once per TP rank.

Sources: MHA/GQA, Ainslie et al. arXiv:2305.13245; MLA, DeepSeek-V2 paper
arXiv:2405.04434 Table 1 ((d_c + d_h^R) * l elements per token, no factor 2);
sliding window, Mistral 7B arXiv:2310.06825; Gated DeltaNet state, vLLM
``MambaStateShapeCalculator.gated_delta_net_state_shape``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

from planner.errors import PlanInputError
from planner.formats import KVFormat, cdiv

Role = Literal["main", "indexer", "ring", "state"]
"""What a group stores. ``kv_format`` overrides apply to ``main`` groups only;
indexer keys, window rings and fixed state keep their own formats."""

MAX_PARALLEL = 1024
"""Largest TP or PP degree accepted."""


def vector_formula(fmt: KVFormat, num_elements: int) -> str:
    """How :meth:`KVFormat.vector_bytes` prices ``num_elements``, in words.

    >>> from planner.formats import get_format
    >>> vector_formula(get_format("nvfp4"), 512)
    '512 x 4 bit / 8 + ceil(512 / 16) x 8 bit / 8 = 256 + 32 = 288 B'
    >>> vector_formula(get_format("bf16"), 128)
    '128 x 16 bit / 8 = 256 B'
    """
    data = cdiv(num_elements * fmt.element_bits, 8)
    head = f"{num_elements} x {fmt.element_bits} bit / 8"
    if fmt.block_size is None:
        return f"{head} = {data} B"
    scales = cdiv(num_elements, fmt.block_size) * fmt.scale_bits // 8
    return (f"{head} + ceil({num_elements} / {fmt.block_size}) x {fmt.scale_bits} bit / 8 "
            f"= {data} + {scales} = {data + scales} B")


@dataclass(frozen=True, kw_only=True)
class KVGroup:
    """Layers that store the same kind of KV entry in one format.

    Attributes:
        name: human label ("full attention", "sliding window 4096").
        num_layers: layers in this group that store KV (KV-source layers only).
        kv_format: the number format of this group's entries.
        role: see :data:`Role`.
        in_pool: True when the bytes live in the engine's KV pool in HBM;
            False for per-session state kept elsewhere (host RAM), e.g.
            DeepSeek V4.1-Flash's window ring per its release notes (docs/sources.md).
    """

    name: str
    num_layers: int
    kv_format: KVFormat
    role: Role = "main"
    in_pool: bool = True

    def entry_bytes(self, tp: int = 1) -> int:
        """Bytes of one stored entry in one layer, on one GPU of a TP group."""
        raise NotImplementedError

    def entries(self, num_tokens: int) -> int:
        """Entries one layer stores for a sequence of ``num_tokens`` tokens."""
        return num_tokens

    @property
    def capped(self) -> bool:
        """True when a sequence's entries stop growing (windows, chunks, state)."""
        return False

    @property
    def tokens_per_entry(self) -> int:
        """Tokens that one entry covers (compression ratio; 1 for plain KV)."""
        return 1

    @property
    def replicated_on_tp(self) -> bool:
        """True when every TP rank holds the whole entry (one KV head, latents)."""
        return True

    def kv_heads_per_gpu(self, tp: int = 1) -> int | None:
        """KV heads (or latents) one GPU holds; None for non-attention state."""
        return 1

    @property
    def width(self) -> str:
        """Channels of one entry, in words ("128 (K) + 128 (V) per head")."""
        return ""

    def entry_formula(self, tp: int = 1) -> str:
        """How :meth:`entry_bytes` is computed at ``tp``, with the numbers plugged in."""
        return f"{self.entry_bytes(tp)} B"

    def layers_per_gpu(self, pp: int = 1) -> int:
        """Layers of this group on the GPU of the largest pipeline stage: ``ceil(L / PP)``."""
        return cdiv(self.num_layers, pp)

    def bytes_for(self, num_tokens: int, tp: int = 1, pp: int = 1) -> int:
        """Bytes this group holds for one sequence of ``num_tokens`` tokens, per GPU."""
        return self.layers_per_gpu(pp) * self.entries(num_tokens) * self.entry_bytes(tp)

    def bytes_for_replica(self, num_tokens: int, tp: int = 1) -> int:
        """Bytes on all ``TP x PP`` GPUs of one replica: each layer once per TP rank."""
        return self.num_layers * self.entries(num_tokens) * self.entry_bytes(tp) * tp

    def bytes_per_token(self, num_tokens: int, tp: int = 1, pp: int = 1) -> float:
        """Marginal bytes per extra token at ``num_tokens`` (0 once capped), per GPU."""
        if self.capped and self.entries(num_tokens + 1) == self.entries(num_tokens):
            return 0.0
        return self.layers_per_gpu(pp) * self.entry_bytes(tp) / self.tokens_per_entry

    def with_format(self, kv_format: KVFormat) -> "KVGroup":
        """The same group in another format."""
        return replace(self, kv_format=kv_format)


@dataclass(frozen=True, kw_only=True)
class FullAttentionGroup(KVGroup):
    """MHA / GQA / MQA layers: K and V per KV head; widths may differ.

    TP splits heads: each GPU holds ``max(1, ceil(H_kv / TP))`` heads; with
    ``TP > H_kv`` heads are replicated, never divided below one (vLLM).
    """

    num_kv_heads: int
    k_head_dim: int
    v_head_dim: int

    def kv_heads_per_gpu(self, tp: int = 1) -> int:
        """KV heads one GPU holds at tensor parallel ``tp``."""
        return max(1, cdiv(self.num_kv_heads, tp))

    @property
    def replicated_on_tp(self) -> bool:
        return False

    @property
    def width(self) -> str:
        if self.k_head_dim == self.v_head_dim:
            return f"{self.k_head_dim} (K) + {self.v_head_dim} (V)"
        return f"{self.k_head_dim} (K) + {self.v_head_dim} (V, differs)"

    def entry_bytes(self, tp: int = 1) -> int:
        fmt = self.kv_format
        return self.kv_heads_per_gpu(tp) * (fmt.vector_bytes(self.k_head_dim) + fmt.vector_bytes(self.v_head_dim))

    def entry_formula(self, tp: int = 1) -> str:
        heads = self.kv_heads_per_gpu(tp)
        split = f"ceil({self.num_kv_heads} / {tp}) = {heads}"
        if tp > self.num_kv_heads:
            split = f"{heads} (TP {tp} > {self.num_kv_heads} KV heads: replicated, never below one)"
        fmt = self.kv_format
        k, v = fmt.vector_bytes(self.k_head_dim), fmt.vector_bytes(self.v_head_dim)
        parts = f"K: {vector_formula(fmt, self.k_head_dim)}"
        if self.v_head_dim != self.k_head_dim:
            parts += f"; V: {vector_formula(fmt, self.v_head_dim)}"
        return f"heads per GPU {split}; {parts}; {heads} x ({k} + {v}) = {self.entry_bytes(tp)} B"


@dataclass(frozen=True, kw_only=True)
class SlidingWindowGroup(FullAttentionGroup):
    """Sliding-window layers: a sequence holds its last ``window_tokens`` tokens."""

    window_tokens: int

    def entries(self, num_tokens: int) -> int:
        return min(num_tokens, self.window_tokens)

    @property
    def capped(self) -> bool:
        return True


@dataclass(frozen=True, kw_only=True)
class ChunkedLocalGroup(FullAttentionGroup):
    """Chunked local attention (Llama 4 ``attention_chunk_size``): at most one chunk."""

    chunk_tokens: int

    def entries(self, num_tokens: int) -> int:
        return min(num_tokens, self.chunk_tokens)

    @property
    def capped(self) -> bool:
        return True


@dataclass(frozen=True, kw_only=True)
class MLAGroup(KVGroup):
    """Multi-head latent attention: one latent of ``kv_lora_rank + qk_rope_head_dim``
    per token and layer, no factor 2, replicated on every TP rank (DeepSeek-V2
    paper Table 1; vLLM MLA backends keep the full latent on each rank)."""

    kv_lora_rank: int
    qk_rope_head_dim: int

    @property
    def width(self) -> str:
        return f"{self.kv_lora_rank} (latent) + {self.qk_rope_head_dim} (rope) = {self.kv_lora_rank + self.qk_rope_head_dim}"

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.kv_lora_rank + self.qk_rope_head_dim)

    def entry_formula(self, tp: int = 1) -> str:
        n = self.kv_lora_rank + self.qk_rope_head_dim
        return (f"one latent of {self.kv_lora_rank} + {self.qk_rope_head_dim} = {n} channels, no factor 2, "
                f"replicated on each of {tp} TP rank(s): {vector_formula(self.kv_format, n)}")


@dataclass(frozen=True, kw_only=True)
class CompressedGroup(KVGroup):
    """DeepSeek V4-style compressed entries: one entry of ``entry_dim`` channels
    per ``compress_ratio`` tokens; a partial group of tokens stays in the window
    ring until complete, so ``entries = n // compress_ratio``. Replicated on TP
    (one KV head). Indexer keys are a separate group with role ``indexer``."""

    compress_ratio: int
    entry_dim: int

    @property
    def width(self) -> str:
        return str(self.entry_dim)

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.entry_dim)

    def entries(self, num_tokens: int) -> int:
        return num_tokens // self.compress_ratio

    @property
    def tokens_per_entry(self) -> int:
        return self.compress_ratio

    def entry_formula(self, tp: int = 1) -> str:
        return (f"one entry of {self.entry_dim} channels per {self.compress_ratio} token(s), replicated on TP: "
                f"{vector_formula(self.kv_format, self.entry_dim)}")


@dataclass(frozen=True, kw_only=True)
class WindowRingGroup(KVGroup):
    """A per-layer ring of the last ``window_tokens`` tokens of ``entry_dim``
    channels, replicated on TP (DeepSeek V4 sliding-window branch)."""

    window_tokens: int
    entry_dim: int

    @property
    def width(self) -> str:
        return str(self.entry_dim)

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.entry_dim)

    def entries(self, num_tokens: int) -> int:
        return min(num_tokens, self.window_tokens)

    @property
    def capped(self) -> bool:
        return True

    def entry_formula(self, tp: int = 1) -> str:
        return (f"ring of the last {self.window_tokens} tokens x {self.entry_dim} channels, replicated on TP: "
                f"{vector_formula(self.kv_format, self.entry_dim)} per token")


@dataclass(frozen=True, kw_only=True)
class StateGroup(KVGroup):
    """Fixed per-sequence state (SSM / linear attention), independent of length
    once the sequence has a token.

    Either a fixed ``state_bytes`` per layer (a reported figure; not split by
    TP), or ``num_units`` TP-split units (heads or channels) of
    ``elements_per_unit`` elements each in ``kv_format``: a GPU holds
    ``ceil(num_units / TP)`` units (vLLM divides the state's head / channel
    dimension by TP, ``MambaStateShapeCalculator``).
    """

    state_bytes: int = 0
    num_units: int = 0
    elements_per_unit: int = 0
    shape_note: str = ""

    def units_per_gpu(self, tp: int = 1) -> int:
        """State units (heads or channels) one GPU holds."""
        return max(1, cdiv(self.num_units, tp)) if self.num_units else 0

    @property
    def replicated_on_tp(self) -> bool:
        return not self.num_units

    def kv_heads_per_gpu(self, tp: int = 1) -> int | None:
        return None

    @property
    def width(self) -> str:
        return self.shape_note or (f"{self.num_units} x {self.elements_per_unit}" if self.num_units else "fixed")

    def entry_bytes(self, tp: int = 1) -> int:
        if not self.num_units:
            return self.state_bytes
        return self.kv_format.vector_bytes(self.units_per_gpu(tp) * self.elements_per_unit)

    def entries(self, num_tokens: int) -> int:
        return 1 if num_tokens > 0 else 0

    @property
    def capped(self) -> bool:
        return True

    def entry_formula(self, tp: int = 1) -> str:
        if not self.num_units:
            return f"fixed {self.state_bytes:,} B per layer and sequence (reported)"
        units = self.units_per_gpu(tp)
        n = units * self.elements_per_unit
        return (f"{self.shape_note}: ceil({self.num_units} / {tp}) = {units} units x {self.elements_per_unit} elements "
                f"= {n:,} elements; {vector_formula(self.kv_format, n)} per layer and sequence")


@dataclass(frozen=True)
class GroupBytes:
    """One group's share of a sequence's KV, as shown in breakdowns (per GPU).

    Attributes:
        name, kind, role, kv_format: the group (kind is the class name).
        num_layers: layers storing this group (whole model).
        entry_bytes: bytes of one entry in one layer (per GPU).
        entries: entries per layer for the sequence.
        bytes: ``num_layers_per_gpu * entries * entry_bytes``.
        bytes_per_token: marginal bytes per extra token (0 when capped).
        capped: True if it stops growing.
        in_pool: True if it lives in the HBM pool.
        num_layers_per_gpu: ``ceil(num_layers / PP)``.
        kv_heads_per_gpu: KV heads (or latents) on one GPU; None for state.
        width: channels of one entry, in words.
        tokens_per_entry: tokens one entry covers (compression ratio).
        replicated_on_tp: True when every TP rank holds the whole entry.
        formula: how ``entry_bytes`` was computed, numbers plugged in.
    """

    name: str
    kind: str
    role: str
    kv_format: str
    num_layers: int
    entry_bytes: int
    entries: int
    bytes: int
    bytes_per_token: float
    capped: bool
    in_pool: bool
    num_layers_per_gpu: int = 0
    kv_heads_per_gpu: int | None = None
    width: str = ""
    tokens_per_entry: int = 1
    replicated_on_tp: bool = False
    formula: str = ""


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
        state_bytes: per-session state kept outside the pool, per GPU.
        kv_bytes_per_token: marginal pool bytes per extra token at this
            length, per GPU.
        basis: "reported coefficient" or "architecture".
        groups: per-group breakdown (architecture view; for a reported
            coefficient, the breakdown that explains it, if known).
        pp: pipeline-parallel degree (per-GPU figures are for the largest stage).
        kv_bytes_per_replica: pool bytes on all ``tp x pp`` GPUs of one
            replica (replicated heads and latents counted on every rank).
        per: what the per-GPU figures mean, in words.
    """

    model_id: str
    context_tokens: int
    kv_format: str
    tp: int
    kv_bytes: int
    state_bytes: int
    kv_bytes_per_token: float
    basis: str
    groups: tuple[GroupBytes, ...] = field(default_factory=tuple)
    pp: int = 1
    kv_bytes_per_replica: int = 0
    per: str = "GPU"


def group_bytes(group: KVGroup, num_tokens: int, tp: int = 1, pp: int = 1) -> GroupBytes:
    """Breakdown row of ``group`` for a sequence of ``num_tokens`` tokens, per GPU."""
    entries = group.entries(num_tokens)
    entry = group.entry_bytes(tp)
    layers = group.layers_per_gpu(pp)
    return GroupBytes(
        name=group.name,
        kind=type(group).__name__,
        role=group.role,
        kv_format=group.kv_format.id,
        num_layers=group.num_layers,
        entry_bytes=entry,
        entries=entries,
        bytes=layers * entries * entry,
        bytes_per_token=group.bytes_per_token(num_tokens, tp, pp),
        capped=group.capped,
        in_pool=group.in_pool,
        num_layers_per_gpu=layers,
        kv_heads_per_gpu=group.kv_heads_per_gpu(tp),
        width=group.width,
        tokens_per_entry=group.tokens_per_entry,
        replicated_on_tp=group.replicated_on_tp,
        formula=group.entry_formula(tp),
    )


def check_tokens(name: str, value: object, *, maximum: int = 10**12) -> int:
    """Validate a token count: an integer in [0, maximum].

    Raises:
        PlanInputError: not an integer (NaN, inf, fractions, bools), negative,
            or above ``maximum``.
    """
    allowed = f"a whole number of tokens in [0, {maximum:,}]"
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
        raise PlanInputError(name, value, f"a whole number in [1, {MAX_PARALLEL:,}]")
    return value
