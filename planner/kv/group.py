"""The base of every KV layer kind: :class:`KVGroup` (one frozen spec per kind,
its policy on itself), and how a vector's bytes are written out in words.

Kinds live in :mod:`planner.kv.attention` (full, sliding, chunked, MLA),
:mod:`planner.kv.deepseek` (DSA indexer keys, V4 compressed entries and rings)
and :mod:`planner.kv.state` (Mamba / linear-attention state); :mod:`planner.kv.kinds`
lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar, Literal

from planner.kv.formats import KVFormat, cdiv
from planner.messages import msg

Role = Literal["main", "indexer", "ring", "state"]
"""What a group stores. ``kv_format`` overrides apply to ``main`` groups only;
indexer keys, window rings and fixed state keep their own formats."""



def vector_formula(fmt: KVFormat, num_elements: int) -> str:
    """How :meth:`KVFormat.vector_bytes` prices ``num_elements``, in words
    (each format writes its own: :meth:`KVFormat.vector_formula`).

    >>> from planner.kv.formats import get_format
    >>> vector_formula(get_format("nvfp4"), 512)
    '512 x 4 bit / 8 + ceil(512 / 16) x 8 bit / 8 = 256 + 32 = 288 B'
    >>> vector_formula(get_format("bf16"), 128)
    '128 x 16 bit / 8 = 256 B'
    """
    return fmt.vector_formula(num_elements)


@dataclass(frozen=True, kw_only=True)
class PageUse:
    """What one vLLM KV-cache type holds for one sequence, on one GPU: the
    numbers a kind's :meth:`KVGroup.vllm_reason` writes out.

    Attributes:
        names: the kvplan groups the type pages, comma-separated.
        num_tokens: the sequence's length, tokens.
        block_size: tokens per block of this type.
        blocks: blocks per layer the sequence holds.
        page_size_bytes: one layer, one block, bytes.
        max_num_batched_tokens: tokens scheduled per step.
        max_model_len: the engine's maximum sequence length, tokens.
        theory_bytes: window-capped bytes of the type's layers (kvplan's figure), bytes.
        layers: real layers of the type on this GPU.
        converted: True when sliding / chunked layers are stored as full
            attention (hybrid KV cache manager off).
    """

    names: str
    num_tokens: int
    block_size: int
    blocks: int
    page_size_bytes: int
    max_num_batched_tokens: int
    max_model_len: int
    theory_bytes: int
    layers: int
    converted: bool = False


class WindowCapped:
    """The window rule, written once: a kind whose layers hold a sequence's last ``window_tokens`` tokens (a
    sliding window; a DeepSeek V4 window ring). Listed before :class:`KVGroup` in the kind's bases; the kind
    declares the ``window_tokens`` field itself (this mixin is no dataclass, so it adds no field)."""

    def entries(self, num_tokens: int) -> int:
        return min(num_tokens, self.window_tokens)

    @property
    def capped(self) -> bool:
        return True

    @property
    def cap_tokens(self) -> int | None:
        return self.window_tokens


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

    @property
    def cap_tokens(self) -> int | None:
        """Tokens at which a sequence's entries stop growing (a window ``W`` or a
        chunk ``C``), or None when no token count caps them (full attention,
        latents, compressed entries; per-sequence state has one entry, no window)."""
        return None

    def entry_bytes_per_token(self, tp: int = 1, pp: int = 1) -> float:
        """Bytes per token while the group grows, per GPU (B/token):
        ``layers_per_gpu(pp) * entry_bytes(tp) / tokens_per_entry``. The one
        per-token formula; inside a window it is what each token adds, past it
        :meth:`growing_bytes_per_token` is 0."""
        return self.layers_per_gpu(pp) * self.entry_bytes(tp) / self.tokens_per_entry

    def growing_bytes_per_token(self, num_tokens: int, tp: int = 1, pp: int = 1) -> float:
        """Marginal bytes per extra token at ``num_tokens``, per GPU (B/token):
        :meth:`entry_bytes_per_token`, or 0 once a capped group stops growing."""
        if self.capped and self.entries(num_tokens + 1) == self.entries(num_tokens):
            return 0.0
        return self.entry_bytes_per_token(tp, pp)

    def with_format(self, kv_format: KVFormat) -> "KVGroup":
        """The same group in another format."""
        return replace(self, kv_format=kv_format)

    def check_split(self, tp: int) -> None:
        """Refuse a TP degree the engine cannot split this group over (default: any TP works)."""

    # -- vLLM V1 paging (vllm/v1/kv_cache_interface.py): the full-attention rule; kinds override --
    @property
    def vllm_kind(self) -> str | None:
        """The vLLM spec that pages this group, in words ("full", "sliding",
        "chunked", "mamba"), or None when kvplan does not model vLLM's paging of
        it (the engine view then shows the theory and says so)."""
        return None

    vllm_per_sequence: ClassVar[bool] = False
    """True for state that vLLM pages as one ``MambaSpec`` page per layer and
    sequence (page padded to the attention page, grouped as its own type)."""

    def vllm_as_full(self) -> "KVGroup":
        """This group as vLLM stores it with the hybrid KV cache manager off
        (``unify_hybrid_kv_cache_specs``): windowed kinds become full attention;
        every other kind is unchanged (``self``)."""
        return self

    def vllm_max_blocks(self, max_model_len: int, max_num_batched_tokens: int, block_size: int) -> int:
        """Blocks per layer one request of ``max_model_len`` tokens may hold:
        ``max_memory_usage_bytes / page_size_bytes``. Full attention (and MLA):
        ``cdiv(max_model_len, block_size)`` (``FullAttentionSpec``)."""
        return cdiv(max_model_len, block_size)

    def vllm_blocks_for(self, num_tokens: int, max_model_len: int, max_num_batched_tokens: int,
                        block_size: int) -> int:
        """Blocks per layer a sequence of ``num_tokens`` tokens holds:
        ``ceil(num_tokens / block_size)``, at most :meth:`vllm_max_blocks`."""
        return min(cdiv(num_tokens, block_size), self.vllm_max_blocks(max_model_len, max_num_batched_tokens,
                                                                       block_size))

    def vllm_reason(self, use: PageUse) -> str:
        """Why vLLM's bytes for ``use`` differ from the theory, one sentence: block
        rounding, or (converted) full KV stored on windowed layers."""
        if use.converted:
            return msg("{names}: stored as full attention (hybrid manager off): ceil({n:,} / {block_size}) = "
                       "{blocks:,} blocks per layer instead of a capped window", names=use.names, n=use.num_tokens,
                       block_size=use.block_size, blocks=use.blocks)
        return msg("{names}: block rounding, ceil({n:,} / {block_size}) = {blocks:,} blocks = {value:,} token "
                   "slots per layer", names=use.names, n=use.num_tokens, block_size=use.block_size,
                   blocks=use.blocks, value=use.blocks * use.block_size)
