"""The probe's paged pool, as arithmetic: which tensors, how many blocks, how many bytes.

No torch here: the layout is planned (and a request checked against the memory
cap) before anything is imported or allocated.

For a catalog model, a KV format and ``num_tokens`` tokens, every group of
``model.layout(kv_format)`` that lives in the engine's pool (``in_pool``) gets
one ``uint8`` tensor ``[num_layers, num_blocks, entries_per_block, entry_bytes]``
(vLLM's paged layout, one KV-cache group per tensor):

* a block holds ``block_size`` tokens (vLLM's default 16), i.e.
  ``entries_per_block = block_size // tokens_per_entry`` entries: 16 for plain
  KV, 8 for DeepSeek V4's 2:1 compressed layers; an entry covering more tokens
  than a block (V4's 128:1 layers) gets one block of one entry;
* a group holding ``entries(n)`` entries per layer (the planner's own
  :meth:`planner.kv.kinds.KVGroup.entries`: ``n``, ``n // ratio``, ``min(n, W)``)
  needs ``ceil(entries / entries_per_block)`` blocks;
* an entry is the group's vectors back to back, each in its format's byte
  layout (:mod:`planner.probe.quant`): ``entry_bytes`` equals the planner's
  :meth:`~planner.kv.kinds.KVGroup.entry_bytes` (checked when the layout is built).

So the pool holds ``sum(num_layers * num_blocks * entries_per_block * entry_bytes)``
bytes, the planner's ``sum(num_layers * entries * entry_bytes)`` rounded up to
whole blocks. DeepSeek V4.1-Flash at 1,000,000 tokens in nvfp4: layer 20 keeps
1,000,000 entries of 288 + 68 B, layers 2, 8, 14 keep 500,000 each, so
356 x (1,000,000 + 3 x 500,000) = 890,000,000 B, 890 B per token; 1,000,000 is a
multiple of 16, so block rounding adds nothing. Groups outside the pool (V4.1's
window rings, kept in host RAM per its release notes) are listed, not allocated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planner.catalog.entries import get_model
from planner.engines.capacity import DEFAULT_BLOCK_SIZE, MAX_BLOCK_SIZE  # vLLM's default 16, and the largest accepted
from planner.errors import PlanInputError
from planner.kv.formats import KVFormat, cdiv
from planner.kv.kinds import (
    CompressedGroup,
    FullAttentionGroup,
    KVGroup,
    MLAGroup,
    StateGroup,
    WindowRingGroup,
    check_tokens,
)
from planner.kv.models import NATIVE
from planner.monotone import largest_fitting
from planner.messages import msg

PROBE_FORMATS: tuple[str, ...] = ("fp32", "bf16", "fp16", "fp8", "fp8-e5m2", "mxfp8", "nvfp4", "mxfp4")
"""Formats the probe can quantize (the integer formats int8, int4, q8_0, q4_0 are not implemented)."""

MAX_PROBE_TOKENS = 10**10
"""Largest token count accepted (any real request is refused earlier by the memory cap)."""


@dataclass(frozen=True)
class VectorSpec:
    """``count`` vectors of ``num_channels`` channels, each quantized on its own (one KV
    head's K, one latent). An entry is a sequence of these, back to back."""

    count: int
    num_channels: int


@dataclass(frozen=True, kw_only=True)
class PoolGroup:
    """One pool tensor: a planner group laid out in blocks.

    Attributes:
        name, role: the planner group's.
        kv_format: format id of the entries.
        num_layers: layers storing this group (tensor dim 0).
        vectors: what one entry holds; empty for raw fixed state (filled with random bytes).
        entry_bytes: bytes of one entry (= the planner's ``entry_bytes``).
        tokens_per_entry: tokens one entry covers (compression ratio).
        entries: entries per layer for the requested tokens (the planner's ``entries(n)``).
        entries_per_block: entries one block holds.
        num_blocks: blocks per layer, ``ceil(entries / entries_per_block)``.
    """

    name: str
    role: str
    kv_format: str
    num_layers: int
    vectors: tuple[VectorSpec, ...]
    entry_bytes: int
    tokens_per_entry: int
    entries: int
    entries_per_block: int
    num_blocks: int
    group: KVGroup = field(repr=False, compare=False)

    @property
    def pool_bytes(self) -> int:
        """Bytes of this group's tensor: layers x blocks x entries per block x entry bytes."""
        return self.num_layers * self.num_blocks * self.entries_per_block * self.entry_bytes

    @property
    def predicted_bytes(self) -> int:
        """The planner's bytes for this group: layers x entries x entry bytes (no block rounding)."""
        return self.num_layers * self.entries * self.entry_bytes

    @property
    def shape(self) -> tuple[int, int, int, int]:
        """``(num_layers, num_blocks, entries_per_block, entry_bytes)``."""
        return (self.num_layers, self.num_blocks, self.entries_per_block, self.entry_bytes)

    def at(self, num_tokens: int) -> "PoolGroup":
        """The same group sized for ``num_tokens`` tokens."""
        entries = self.group.entries(num_tokens)
        return PoolGroup(name=self.name, role=self.role, kv_format=self.kv_format, num_layers=self.num_layers,
                         vectors=self.vectors, entry_bytes=self.entry_bytes, tokens_per_entry=self.tokens_per_entry,
                         entries=entries, entries_per_block=self.entries_per_block,
                         num_blocks=cdiv(entries, self.entries_per_block), group=self.group)


@dataclass(frozen=True, kw_only=True)
class PoolLayout:
    """The whole pool for one model, format and token count.

    Attributes:
        model_id: catalog id.
        kv_format: the requested format id ("native" or a format).
        num_tokens: tokens the pool holds (one sequence of that length, as the planner prices it).
        block_size: tokens per block.
        groups: the pool tensors.
        outside_pool: names of groups the planner keeps outside the pool (not allocated).
        notes: what a reader should know about this layout.
    """

    model_id: str
    kv_format: str
    num_tokens: int
    block_size: int
    groups: tuple[PoolGroup, ...]
    outside_pool: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def pool_bytes(self) -> int:
        """Bytes of all pool tensors (block-rounded)."""
        return sum(g.pool_bytes for g in self.groups)

    @property
    def predicted_bytes(self) -> int:
        """The planner's bytes for ``num_tokens`` tokens, in-pool groups only."""
        return sum(g.predicted_bytes for g in self.groups)

    @property
    def predicted_bytes_per_token(self) -> float:
        """``predicted_bytes / num_tokens``."""
        return self.predicted_bytes / self.num_tokens

    @property
    def formats(self) -> tuple[str, ...]:
        """Distinct format ids of the pool's groups, in order."""
        return tuple(dict.fromkeys(g.kv_format for g in self.groups))

    def at(self, num_tokens: int) -> "PoolLayout":
        """The same layout sized for ``num_tokens`` tokens."""
        return PoolLayout(model_id=self.model_id, kv_format=self.kv_format, num_tokens=num_tokens,
                          block_size=self.block_size, groups=tuple(g.at(num_tokens) for g in self.groups),
                          outside_pool=self.outside_pool, notes=self.notes)


def vectors_of(group: KVGroup) -> tuple[VectorSpec, ...]:
    """The vectors one entry of ``group`` holds (one GPU, no tensor parallelism).

    Raises:
        PlanInputError: a group kind the probe cannot lay out.
    """
    if isinstance(group, FullAttentionGroup):  # includes sliding-window and chunked-local groups
        heads = group.kv_heads_per_gpu(1)
        return (VectorSpec(heads, group.k_head_dim), VectorSpec(heads, group.v_head_dim))
    if isinstance(group, MLAGroup):
        return (VectorSpec(1, group.kv_lora_rank + group.qk_rope_head_dim),)
    if isinstance(group, (CompressedGroup, WindowRingGroup)):
        return (VectorSpec(1, group.entry_dim),)
    if isinstance(group, StateGroup):
        return ()
    raise PlanInputError("model", type(group).__name__, msg("a layout of full, window, MLA, compressed or state groups"))


def entry_bytes_of(fmt: KVFormat, vectors: tuple[VectorSpec, ...]) -> int:
    """Bytes of one entry of ``vectors`` in ``fmt`` (each vector with its own block scales)."""
    return sum(v.count * fmt.vector_bytes(v.num_channels) for v in vectors)


def check_block_size(value: object) -> int:
    """Validate a block size in tokens.

    Raises:
        PlanInputError: not a whole number in [1, MAX_BLOCK_SIZE].
    """
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_BLOCK_SIZE:
        raise PlanInputError("block_size", value, msg("a whole number of tokens in [1, {max_block_size:,}]",
                                                      max_block_size=MAX_BLOCK_SIZE))
    return value


def plan_pool(model_id: str, num_tokens: int, kv_format: str | None = NATIVE,
              block_size: int = DEFAULT_BLOCK_SIZE) -> PoolLayout:
    """The pool the probe would allocate, without allocating it.

    Raises:
        PlanInputError: unknown model or format, a format the probe cannot
            quantize, tokens outside [1, 10**10], a block size outside
            [1, 4096] or not a multiple of a group's compression ratio.
    """
    model = get_model(model_id)
    n = check_tokens("tokens", num_tokens, maximum=MAX_PROBE_TOKENS)
    if n < 1:
        raise PlanInputError("tokens", num_tokens, msg("a whole number of tokens in [1, {max_probe_tokens:,}]",
                                                       max_probe_tokens=MAX_PROBE_TOKENS))
    block_size = check_block_size(block_size)
    fmt_id = kv_format or NATIVE
    groups: list[PoolGroup] = []
    outside: list[str] = []
    for g in model.layout(fmt_id):
        if not g.in_pool:
            outside.append(f"{g.name} ({g.kv_format.id}, {g.num_layers} layers)")
            continue
        if g.kv_format.id not in PROBE_FORMATS:
            raise PlanInputError("kv_format", g.kv_format.id,
                                 msg("a format the probe implements: {choices}", choices=", ".join(PROBE_FORMATS)))
        vectors = vectors_of(g)
        entry = g.entry_bytes(1)
        if vectors and entry_bytes_of(g.kv_format, vectors) != entry:  # pragma: no cover - a planner/probe mismatch
            raise RuntimeError(f"probe layout of {g.name!r} gives {entry_bytes_of(g.kv_format, vectors)} B per entry, "
                               f"the planner {entry} B")
        if isinstance(g, StateGroup):
            per_block = 1
        else:
            ratio = g.tokens_per_entry
            if block_size % ratio and ratio % block_size:
                raise PlanInputError("block_size", block_size,
                                     msg("a multiple or a divisor of {ratio}: group {name!r} stores one entry per "
                                         "{ratio} tokens", ratio=ratio, name=g.name))
            per_block = max(1, block_size // ratio)  # an entry wider than a block gets a block of its own
        entries = g.entries(n)
        groups.append(PoolGroup(name=g.name, role=g.role, kv_format=g.kv_format.id, num_layers=g.num_layers,
                                vectors=vectors, entry_bytes=entry, tokens_per_entry=g.tokens_per_entry,
                                entries=entries, entries_per_block=per_block,
                                num_blocks=cdiv(entries, per_block), group=g))
    if not groups:
        raise PlanInputError("model", model_id, msg("a model with KV in the engine's pool"))
    notes = []
    if model.uses_coefficient(fmt_id):
        notes.append(f"The planner prices {model.name}'s growing KV by its reported "
                     f"{model.reported_kv_bytes_per_token:,.0f} B/token; the probe allocates its architecture "
                     "layout, which is what 'predicted' means here.")
    if outside:
        notes.append("Not allocated (kept outside the pool by the planner): " + "; ".join(outside) + ".")
    return PoolLayout(model_id=model.id, kv_format=fmt_id, num_tokens=n, block_size=block_size,
                      groups=tuple(groups), outside_pool=tuple(outside), notes=tuple(notes))


def tokens_that_fit(layout: PoolLayout, budget_bytes: int) -> int:
    """The largest token count whose pool fits in ``budget_bytes`` (0 if not even one token).

    Pool bytes only grow with tokens, so a bisection (:func:`planner.monotone.largest_fitting`) is exact.
    """
    if budget_bytes <= 0:
        return 0
    return largest_fitting(lambda n: layout.at(n).pool_bytes <= budget_bytes, 1, MAX_PROBE_TOKENS)
