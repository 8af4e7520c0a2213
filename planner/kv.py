"""KV-cache layer kinds: one frozen spec per kind, each owning its bytes and pages.

A model's KV cache is a tuple of layer groups, derived from its per-layer
pattern (layers of equal kind and geometry). Each group is a frozen spec with
one number format; each variant overrides only what differs: how many entries
a layer stores for a sequence of ``n`` tokens (``entries``), how wide one entry
is (``entry_bytes``), how vLLM pages it (``vllm_kind``) and the sentence that
explains it (``entry_formula``):

==========================  ======================================  =====================
group                       entry bytes (per layer, per GPU)         entries for n tokens
==========================  ======================================  =====================
``FullAttentionGroup``      ceil(H_kv/TP) * (vec(d_k) + vec(d_v))    n
``SlidingWindowGroup``      same                                     min(n, W)
``ChunkedLocalGroup``       same                                     min(n, C)
``MLAGroup``                vec(kv_lora_rank + rope_dim)             n (replicated on TP)
``IndexerKeyGroup``         vec(index_head_dim), FP8 + FP32 / 128    n (replicated on TP)
``CompressedGroup``         vec(entry_dim)                           n // compress_ratio
``WindowRingGroup``         vec(entry_dim)                           min(n, W)
``StateGroup``              fixed state per sequence (TP-split)      1
``Mamba2ConvStateGroup``    conv channels with vLLM's group rule     1
==========================  ======================================  =====================

``vec`` is :meth:`planner.formats.KVFormat.vector_bytes` (block scales per
vector, rounded up: ``vec(n) = ceil(n * bits / 8) + ceil(n / block) * scale_bits / 8``);
:class:`RopeTailFormat` keeps an MLA latent's RoPE tail unscaled (vLLM's
``fp8_ds_mla``: 512 + 4 x 4 + 64 x 2 = 656 B).

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
sliding window, Mistral 7B arXiv:2310.06825; Mamba1 / Mamba2 / Gated DeltaNet
state, vLLM ``MambaStateShapeCalculator`` (``mamba1_state_shape``,
``mamba2_state_shape``, ``gated_delta_net_state_shape``); DSA indexer keys and
``fp8_ds_mla``, vLLM ``deepseek_v2.py`` and its DeepSeek V3.2 config hook.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from planner.errors import PlanInputError
from planner.formats import KVFormat, cdiv
from planner.kv_estimate import MAX_PARALLEL, GroupBytes, KVEstimate, check_tokens, check_tp

__all__ = [
    "ChunkedLocalGroup", "CompressedGroup", "DSA_INDEXER_FP8", "FP8_DS_MLA", "FullAttentionGroup", "GroupBytes",
    "IndexerKeyGroup", "KVEstimate", "KVGroup", "MAX_PARALLEL", "MLAGroup", "Mamba2ConvStateGroup", "Role",
    "RopeTailFormat", "SlidingWindowGroup", "StateGroup", "WindowRingGroup", "check_tokens", "check_tp",
    "group_bytes", "layer_ranges", "vector_formula",
]

Role = Literal["main", "indexer", "ring", "state"]
"""What a group stores. ``kv_format`` overrides apply to ``main`` groups only;
indexer keys, window rings and fixed state keep their own formats."""



def vector_formula(fmt: KVFormat, num_elements: int) -> str:
    """How :meth:`KVFormat.vector_bytes` prices ``num_elements``, in words.

    >>> from planner.formats import get_format
    >>> vector_formula(get_format("nvfp4"), 512)
    '512 x 4 bit / 8 + ceil(512 / 16) x 8 bit / 8 = 256 + 32 = 288 B'
    >>> vector_formula(get_format("bf16"), 128)
    '128 x 16 bit / 8 = 256 B'
    """
    tail = getattr(fmt, "tail_channels", 0)
    if tail:
        scaled = num_elements - tail
        return (f"{scaled} x {fmt.element_bits} bit / 8 + ceil({scaled} / {fmt.block_size}) x {fmt.scale_bits} bit / 8"
                f" + {tail} x {fmt.tail_bits} bit / 8 (unscaled tail) = {fmt.vector_bytes(num_elements)} B")
    data = cdiv(num_elements * fmt.element_bits, 8)
    head = f"{num_elements} x {fmt.element_bits} bit / 8"
    if fmt.block_size is None:
        return f"{head} = {data} B"
    scales = cdiv(num_elements, fmt.block_size) * fmt.scale_bits // 8
    return (f"{head} + ceil({num_elements} / {fmt.block_size}) x {fmt.scale_bits} bit / 8 "
            f"= {data} + {scales} = {data + scales} B")


@dataclass(frozen=True, kw_only=True)
class RopeTailFormat(KVFormat):
    """A block-scaled format whose last ``tail_channels`` channels of every vector
    stay unscaled at ``tail_bits`` (an MLA latent's RoPE part)."""

    tail_channels: int
    tail_bits: int

    def vector_bytes(self, num_elements: int) -> int:
        """``super().vector_bytes(n - tail) + ceil(tail * tail_bits / 8)``.

        Raises:
            PlanInputError: fewer elements than the tail.
        """
        if num_elements < self.tail_channels:
            raise PlanInputError("num_elements", num_elements, f"at least {self.tail_channels} (the unscaled tail)")
        return super().vector_bytes(num_elements - self.tail_channels) + cdiv(self.tail_channels * self.tail_bits, 8)


_VLLM_DSA = "vLLM vllm/model_executor/models/deepseek_v2.py (Indexer, DeepseekV32IndexerCache)"

FP8_DS_MLA = RopeTailFormat(
    id="fp8_ds_mla", label="vLLM fp8_ds_mla: 512 FP8 + 4 FP32 scales + 64 BF16 RoPE = 656 B",
    element_bits=8, block_size=128, scale_bits=32, tail_channels=64, tail_bits=16,
    source="vLLM FlashMLA sparse backend, kv cache dtype 'fp8_ds_mla' (656 B per token: 512 x 1 + 4 x 4 + 64 x 2); "
           "vllm/model_executor/models/config.py DeepseekV32ForCausalLM.verify_and_update_config")
"""vLLM's FP8 MLA entry for DeepSeek V3.2: ``vector_bytes(512 + 64) = 512 + 4 x 4 + 64 x 2 = 656``."""

DSA_INDEXER_FP8 = KVFormat(id="fp8-indexer", label="FP8 E4M3 + FP32 scale / 128 (DSA indexer keys)",
                           element_bits=8, block_size=128, scale_bits=32, source=_VLLM_DSA)
"""vLLM's DSA indexer key cache: ``vector_bytes(128) = 128 + 1 x 4 = 132``."""


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
        layer_ids: the model's layers (0-based) this group stores, when the
            layout came from a per-layer pattern; () when not known.
    """

    name: str
    num_layers: int
    kv_format: KVFormat
    role: Role = "main"
    in_pool: bool = True
    layer_ids: tuple[int, ...] = ()

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

    def check_split(self, tp: int) -> None:
        """Refuse a TP degree the engine cannot split this group over (default: any TP works)."""

    @property
    def vllm_kind(self) -> tuple[str, int | None] | None:
        """How vLLM V1 pages this group: ``("full", None)``, ``("sliding", W)``,
        ``("chunked", C)``, ``("mamba", None)``, or None when kvplan does not model
        vLLM's paging of it (the engine view then shows the theory and says so)."""
        return None


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

    @property
    def vllm_kind(self) -> tuple[str, int | None] | None:
        return ("full", None)


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

    @property
    def vllm_kind(self) -> tuple[str, int | None] | None:
        return ("sliding", self.window_tokens)



@dataclass(frozen=True, kw_only=True)
class ChunkedLocalGroup(FullAttentionGroup):
    """Chunked local attention (Llama 4 ``attention_chunk_size``): at most one chunk."""

    chunk_tokens: int

    def entries(self, num_tokens: int) -> int:
        return min(num_tokens, self.chunk_tokens)

    @property
    def capped(self) -> bool:
        return True

    @property
    def vllm_kind(self) -> tuple[str, int | None] | None:
        return ("chunked", self.chunk_tokens)



@dataclass(frozen=True, kw_only=True)
class MLAGroup(KVGroup):
    """Multi-head latent attention: one latent of ``kv_lora_rank + qk_rope_head_dim``
    per token and layer, no factor 2, replicated on every TP rank (DeepSeek-V2
    paper Table 1; vLLM MLA backends keep the full latent on each rank)."""

    kv_lora_rank: int
    qk_rope_head_dim: int
    fp8_format: KVFormat | None = None

    def with_format(self, kv_format: KVFormat) -> "KVGroup":
        """The same latent in another format; an FP8 choice becomes :attr:`fp8_format`
        when the engine stores FP8 latents its own way (vLLM's ``fp8_ds_mla`` for
        DeepSeek V3.2: ``DeepseekV32ForCausalLM.verify_and_update_config`` maps
        every ``fp8*`` cache dtype to it)."""
        if self.fp8_format is not None and kv_format.id.startswith("fp8"):
            kv_format = self.fp8_format
        return replace(self, kv_format=kv_format)

    @property
    def vllm_kind(self) -> tuple[str, int | None] | None:
        return ("full", None)


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
class IndexerKeyGroup(KVGroup):
    """DeepSeek V3.2 sparse attention (DSA): the lightning indexer's key cache,
    one key of ``index_head_dim`` channels per token and layer, replicated on
    TP (one head). vLLM stores it as FP8 values plus one FP32 scale per 128
    channels, whatever the main KV dtype: ``128 + 128 / 128 x 4 = 132 B`` for
    ``index_head_dim`` 128 (``deepseek_v2.py`` ``Indexer.__init__``:
    ``head_dim + head_dim // quant_block_size * 4``, ``DeepseekV32IndexerCache``
    an ``MLAAttentionSpec`` of uint8)."""

    entry_dim: int

    @property
    def width(self) -> str:
        return f"{self.entry_dim} (indexer key)"

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.entry_dim)

    @property
    def vllm_kind(self) -> tuple[str, int | None] | None:
        return ("full", None)

    def entry_formula(self, tp: int = 1) -> str:
        return (f"one indexer key of {self.entry_dim} channels per token, replicated on TP: "
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

    def units_at(self, tp: int = 1) -> int:
        """All units at ``tp`` before the split (Mamba2 adds groups at some TP)."""
        return self.num_units

    def check_split(self, tp: int) -> None:
        """Refuse a TP degree that does not divide the state: vLLM's ``divide``
        asserts an exact split (``MambaStateShapeCalculator``), so the engine
        would not start.

        Raises:
            PlanInputError: ``units_at(tp)`` not a multiple of ``tp``.
        """
        units = self.units_at(tp)
        if units and units % tp:
            raise PlanInputError("tp", tp, f"a divisor of {units:,} ({self.name}: vLLM splits it exactly over TP)")

    @property
    def vllm_kind(self) -> tuple[str, int | None] | None:
        # vLLM pages SSM / linear-attention state as a MambaSpec, one page per
        # sequence; a fixed reported figure has no shapes to page.
        return ("mamba", None) if self.num_units else None

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
        return (f"{self.shape_note}: {self.split_formula(tp)} = {units:,} units x {self.elements_per_unit} elements "
                f"= {n:,} elements; {vector_formula(self.kv_format, n)} per layer and sequence")

    def split_formula(self, tp: int = 1) -> str:
        """How :meth:`units_per_gpu` splits the units over ``tp`` ranks, in words."""
        return f"ceil({self.num_units:,} / {tp})"


@dataclass(frozen=True, kw_only=True)
class Mamba2ConvStateGroup(StateGroup):
    """Mamba2 convolution state: ``conv_kernel - 1`` elements for each of
    ``intermediate_size + 2 * n_groups * state_size`` channels per layer and
    sequence. Under TP a group that does not divide is replicated until it does,
    then the channels divide: vLLM ``MambaStateShapeCalculator.mamba2_state_shape``
    with ``extra_groups_for_head_shards`` (``n_groups % TP == 0``: no change;
    else ``n_groups + (TP - n_groups)``) in
    ``vllm/model_executor/layers/mamba/mamba_utils.py``."""

    intermediate_size: int
    n_groups: int
    state_size: int

    def groups_at(self, tp: int) -> int:
        """Groups after vLLM's ``extra_groups_for_head_shards`` at ``tp``."""
        return self.n_groups if self.n_groups % tp == 0 else self.n_groups + (tp - self.n_groups)

    def units_at(self, tp: int = 1) -> int:
        return self.intermediate_size + 2 * self.groups_at(tp) * self.state_size

    def units_per_gpu(self, tp: int = 1) -> int:
        return max(1, cdiv(self.units_at(tp), tp))

    def split_formula(self, tp: int = 1) -> str:
        g = self.groups_at(tp)
        return f"ceil(({self.intermediate_size:,} + 2 x {g} groups x {self.state_size}) / {tp})"


def layer_ranges(layer_ids: tuple[int, ...]) -> str:
    """Layer indices as compact ranges.

    >>> layer_ranges((0, 1, 2, 3, 5, 7, 8))
    '0-3, 5, 7-8'
    >>> layer_ranges(())
    ''
    """
    parts: list[str] = []
    ids = sorted(layer_ids)
    start = prev = None
    for i in ids + [None]:
        if start is not None and i == prev + 1:
            prev = i
            continue
        if start is not None:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
        start = prev = i
    return ", ".join(parts)


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
        layer_ids=layer_ranges(group.layer_ids),
    )
