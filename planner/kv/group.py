"""The base of every KV layer kind: :class:`KVGroup` (one frozen spec per kind,
its policy on itself), and how a vector's bytes are written out in words.

Kinds live in :mod:`planner.kv.attention` (full, sliding, chunked, MLA),
:mod:`planner.kv.deepseek` (DSA indexer keys, V4 compressed entries and rings)
and :mod:`planner.kv.state` (Mamba / linear-attention state); :mod:`planner.kv.kinds`
lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from planner.kv.formats import KVFormat, cdiv

Role = Literal["main", "indexer", "ring", "state"]
"""What a group stores. ``kv_format`` overrides apply to ``main`` groups only;
indexer keys, window rings and fixed state keep their own formats."""



def vector_formula(fmt: KVFormat, num_elements: int) -> str:
    """How :meth:`KVFormat.vector_bytes` prices ``num_elements``, in words.

    >>> from planner.kv.formats import get_format
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
