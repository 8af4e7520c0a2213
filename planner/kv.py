"""KV-cache layouts: per-layer groups, and the bytes a sequence holds.

A model's KV cache is a tuple of layer groups. Each group is a frozen spec with
one number format; each variant overrides exactly one thing, how many entries a
layer stores for a sequence of ``n`` tokens (``entries``), or how wide one entry
is (``entry_bytes``):

========================  ==============================  =====================
group                     entry bytes (per layer, per GPU)  entries for n tokens
========================  ==============================  =====================
``FullAttentionGroup``    ceil(H_kv/TP) * (vec(d_k)+vec(d_v))  n
``SlidingWindowGroup``    same                            min(n, W)
``ChunkedLocalGroup``     same                            min(n, C)
``MLAGroup``              vec(kv_lora_rank + rope_dim)    n (replicated on TP)
``CompressedGroup``       vec(entry_dim)                  n // compress_ratio
``StateGroup``            fixed bytes per sequence        1
========================  ==============================  =====================

``vec`` is :meth:`planner.formats.KVFormat.vector_bytes` (block scales per
vector, rounded up). Sources: MHA/GQA, Ainslie et al. arXiv:2305.13245; MLA,
DeepSeek-V2 paper arXiv:2405.04434 Table 1 ((d_c + d_h^R) * l elements per
token, no factor 2); sliding window, Mistral 7B arXiv:2310.06825; TP head split
and replication, vLLM ``get_num_kv_heads`` (max(1, H_kv // TP)).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Literal

from planner.errors import PlanInputError
from planner.formats import KVFormat, cdiv

Role = Literal["main", "indexer", "ring", "state"]
"""What a group stores. ``kv_format`` overrides apply to ``main`` groups only;
indexer keys, window rings and fixed state keep their own formats."""


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
            DeepSeek V4.1-Flash's window ring per its release notes (seed 000).
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

    def bytes_for(self, num_tokens: int, tp: int = 1) -> int:
        """Bytes this group holds for one sequence of ``num_tokens`` tokens, per GPU."""
        return self.num_layers * self.entries(num_tokens) * self.entry_bytes(tp)

    def bytes_per_token(self, num_tokens: int, tp: int = 1) -> float:
        """Marginal bytes per extra token at ``num_tokens`` (0 once capped)."""
        if self.capped and self.entries(num_tokens + 1) == self.entries(num_tokens):
            return 0.0
        return self.num_layers * self.entry_bytes(tp) / self.tokens_per_entry

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

    def entry_bytes(self, tp: int = 1) -> int:
        fmt = self.kv_format
        return self.kv_heads_per_gpu(tp) * (fmt.vector_bytes(self.k_head_dim) + fmt.vector_bytes(self.v_head_dim))


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

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.kv_lora_rank + self.qk_rope_head_dim)


@dataclass(frozen=True, kw_only=True)
class CompressedGroup(KVGroup):
    """DeepSeek V4-style compressed entries: one entry of ``entry_dim`` channels
    per ``compress_ratio`` tokens; a partial group of tokens stays in the window
    ring until complete, so ``entries = n // compress_ratio``. Replicated on TP
    (one KV head). Indexer keys are a separate group with role ``indexer``."""

    compress_ratio: int
    entry_dim: int

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.entry_dim)

    def entries(self, num_tokens: int) -> int:
        return num_tokens // self.compress_ratio

    @property
    def tokens_per_entry(self) -> int:
        return self.compress_ratio


@dataclass(frozen=True, kw_only=True)
class WindowRingGroup(KVGroup):
    """A per-layer ring of the last ``window_tokens`` tokens of ``entry_dim``
    channels, replicated on TP (DeepSeek V4 sliding-window branch)."""

    window_tokens: int
    entry_dim: int

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.entry_dim)

    def entries(self, num_tokens: int) -> int:
        return min(num_tokens, self.window_tokens)

    @property
    def capped(self) -> bool:
        return True


@dataclass(frozen=True, kw_only=True)
class StateGroup(KVGroup):
    """Fixed per-sequence state (SSM / linear attention): ``state_bytes`` per
    layer, independent of length once the sequence has a token."""

    state_bytes: int

    def entry_bytes(self, tp: int = 1) -> int:
        return self.state_bytes

    def entries(self, num_tokens: int) -> int:
        return 1 if num_tokens > 0 else 0

    @property
    def capped(self) -> bool:
        return True


@dataclass(frozen=True)
class GroupBytes:
    """One group's share of a sequence's KV, as shown in breakdowns.

    Attributes:
        name, kind, role, kv_format: the group (kind is the class name).
        num_layers: layers storing this group.
        entry_bytes: bytes of one entry in one layer (per GPU).
        entries: entries per layer for the sequence.
        bytes: ``num_layers * entries * entry_bytes``.
        bytes_per_token: marginal bytes per extra token (0 when capped).
        capped: True if it stops growing.
        in_pool: True if it lives in the HBM pool.
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


@dataclass(frozen=True)
class KVEstimate:
    """KV bytes of one sequence of ``context_tokens`` tokens, per GPU.

    Attributes:
        model_id: catalog id or "custom".
        context_tokens: sequence length.
        kv_format: "native" (the model's published formats) or a format id.
        tp: tensor-parallel degree the per-GPU figures assume.
        kv_bytes: bytes in the engine's KV pool (window-capped groups included,
            out-of-pool state excluded).
        state_bytes: per-session state kept outside the pool.
        kv_bytes_per_token: marginal pool bytes per extra token at this length.
        basis: "reported coefficient" or "architecture".
        groups: per-group breakdown (architecture view; for a reported
            coefficient, the breakdown that explains it, if known).
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


def group_bytes(group: KVGroup, num_tokens: int, tp: int = 1) -> GroupBytes:
    """Breakdown row of ``group`` for a sequence of ``num_tokens`` tokens."""
    entries = group.entries(num_tokens)
    entry = group.entry_bytes(tp)
    return GroupBytes(
        name=group.name,
        kind=type(group).__name__,
        role=group.role,
        kv_format=group.kv_format.id,
        num_layers=group.num_layers,
        entry_bytes=entry,
        entries=entries,
        bytes=group.num_layers * entries * entry,
        bytes_per_token=group.bytes_per_token(num_tokens, tp),
        capped=group.capped,
        in_pool=group.in_pool,
    )


def check_tokens(name: str, value: object, *, maximum: int = 10**12) -> int:
    """Validate a token count: an integer in [0, maximum].

    Raises:
        PlanInputError: not an integer, negative, or above ``maximum``.
    """
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise PlanInputError(name, value, f"a whole number of tokens in [0, {maximum:,}]")
    if not 0 <= value <= maximum:
        raise PlanInputError(name, value, f"a whole number of tokens in [0, {maximum:,}]")
    return value


def check_tp(name: str, value: object) -> int:
    """Validate a parallel degree: an integer in [1, 1024].

    Raises:
        PlanInputError: otherwise.
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1024:
        raise PlanInputError(name, value, "a whole number in [1, 1024]")
    return value
