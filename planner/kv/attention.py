"""Attention layer kinds: full (MHA / GQA / MQA), sliding window, chunked local
(Llama 4) and MLA latents.

Sources: MHA/GQA, Ainslie et al. arXiv:2305.13245; MLA, DeepSeek-V2 paper
arXiv:2405.04434 Table 1 ((d_c + d_h^R) * l elements per token, no factor 2);
sliding window, Mistral 7B arXiv:2310.06825; TP split of KV heads, vLLM
``get_num_kv_heads`` (``max(1, H_kv // TP)``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from planner.kv.formats import KVFormat, cdiv
from planner.kv.group import KVGroup, PageUse, WindowCapped, vector_formula
from planner.messages import msg

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
            return msg("{k_head_dim} (K) + {v_head_dim} (V)", k_head_dim=self.k_head_dim, v_head_dim=self.v_head_dim)
        return msg("{k_head_dim} (K) + {v_head_dim} (V, differs)", k_head_dim=self.k_head_dim,
                   v_head_dim=self.v_head_dim)

    def entry_bytes(self, tp: int = 1) -> int:
        fmt = self.kv_format
        return self.kv_heads_per_gpu(tp) * (fmt.vector_bytes(self.k_head_dim) + fmt.vector_bytes(self.v_head_dim))

    @property
    def vllm_kind(self) -> str | None:
        return "full"

    def full_attention(self) -> "FullAttentionGroup":
        """The same heads as plain full attention (no window or chunk)."""
        return FullAttentionGroup(name=self.name, num_layers=self.num_layers, kv_format=self.kv_format,
                                  role=self.role, in_pool=self.in_pool, layer_ids=self.layer_ids,
                                  num_kv_heads=self.num_kv_heads, k_head_dim=self.k_head_dim,
                                  v_head_dim=self.v_head_dim)

    def entry_formula(self, tp: int = 1) -> str:
        heads = self.kv_heads_per_gpu(tp)
        split = f"ceil({self.num_kv_heads} / {tp}) = {heads}"
        if tp > self.num_kv_heads:
            split = msg("{heads} (TP {tp} > {kv_heads} KV heads: replicated, never below one)", heads=heads, tp=tp,
                        kv_heads=self.num_kv_heads)
        fmt = self.kv_format
        k, v = fmt.vector_bytes(self.k_head_dim), fmt.vector_bytes(self.v_head_dim)
        parts = f"K: {vector_formula(fmt, self.k_head_dim)}"
        if self.v_head_dim != self.k_head_dim:
            parts += f"; V: {vector_formula(fmt, self.v_head_dim)}"
        return msg("heads per GPU {split}; {parts}; {heads} x ({k} + {v}) = {entry_bytes} B", split=split, parts=parts,
                   heads=heads, k=k, v=v, entry_bytes=self.entry_bytes(tp))


@dataclass(frozen=True, kw_only=True)
class SlidingWindowGroup(WindowCapped, FullAttentionGroup):
    """Sliding-window layers: a sequence holds its last ``window_tokens`` tokens.

    vLLM pages them as a ``SlidingWindowSpec``: a request of ``max_model_len``
    tokens may hold ``cdiv(min(W - 1 + max_num_batched_tokens, max_model_len),
    block_size) + 1`` blocks per layer (the last ``W - 1`` tokens plus one
    scheduled chunk, +1 because the window need not start on a block boundary).
    """

    window_tokens: int

    @property
    def vllm_kind(self) -> str | None:
        return "sliding"

    def vllm_as_full(self) -> KVGroup:
        return self.full_attention()

    def vllm_max_blocks(self, max_model_len: int, max_num_batched_tokens: int, block_size: int) -> int:
        return cdiv(min(self.window_tokens - 1 + max_num_batched_tokens, max_model_len), block_size) + 1

    def vllm_reason(self, use: PageUse) -> str:
        return msg("{names}: theory keeps min(n, W) = {kept:,} tokens; vLLM holds min(ceil({n:,} / "
                   "{block_size}), cdiv(min({cap_tokens:,} - 1 + {max_num_batched_tokens:,}, {max_len:,}), "
                   "{block_size}) + 1) = {blocks:,} blocks per layer (window plus one prefill chunk, +1 for a "
                   "window not aligned to a block)", names=use.names, kept=min(use.num_tokens, self.window_tokens),
                   n=use.num_tokens, block_size=use.block_size, cap_tokens=self.window_tokens,
                   max_num_batched_tokens=use.max_num_batched_tokens, max_len=use.max_model_len, blocks=use.blocks)


@dataclass(frozen=True, kw_only=True)
class ChunkedLocalGroup(FullAttentionGroup):
    """Chunked local attention (Llama 4 ``attention_chunk_size``): at most one chunk.

    vLLM pages it as a ``ChunkedLocalAttentionSpec``: at most
    ``cdiv(min(C + max_num_batched_tokens, max_model_len), block_size)`` blocks
    per layer for one request.
    """

    chunk_tokens: int

    def entries(self, num_tokens: int) -> int:
        return min(num_tokens, self.chunk_tokens)

    @property
    def capped(self) -> bool:
        return True

    @property
    def cap_tokens(self) -> int | None:
        return self.chunk_tokens

    @property
    def vllm_kind(self) -> str | None:
        return "chunked"

    def vllm_as_full(self) -> KVGroup:
        return self.full_attention()

    def vllm_max_blocks(self, max_model_len: int, max_num_batched_tokens: int, block_size: int) -> int:
        return cdiv(min(self.chunk_tokens + max_num_batched_tokens, max_model_len), block_size)

    def vllm_reason(self, use: PageUse) -> str:
        return msg("{names}: theory keeps one chunk of {cap_tokens:,}; vLLM holds min(ceil({n:,} / "
                   "{block_size}), cdiv(min({cap_tokens:,} + {max_num_batched_tokens:,}, {max_len:,}), "
                   "{block_size})) = {blocks:,} blocks per layer", names=use.names, cap_tokens=self.chunk_tokens,
                   n=use.num_tokens, block_size=use.block_size, max_num_batched_tokens=use.max_num_batched_tokens,
                   max_len=use.max_model_len, blocks=use.blocks)


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
    def vllm_kind(self) -> str | None:
        return "full"  # MLAAttentionSpec: the full-attention rule, one latent per token

    @property
    def width(self) -> str:
        return msg("{kv_lora_rank} (latent) + {qk_rope_head_dim} (rope) = {value}", kv_lora_rank=self.kv_lora_rank,
                   qk_rope_head_dim=self.qk_rope_head_dim, value=self.kv_lora_rank + self.qk_rope_head_dim)

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.kv_lora_rank + self.qk_rope_head_dim)

    def entry_formula(self, tp: int = 1) -> str:
        n = self.kv_lora_rank + self.qk_rope_head_dim
        return (msg("one latent of {kv_lora_rank} + {qk_rope_head_dim} = {n} channels, no factor 2, replicated on "
                    "each of {tp} TP rank(s): {vector_formula}", kv_lora_rank=self.kv_lora_rank,
                    qk_rope_head_dim=self.qk_rope_head_dim, n=n, tp=tp,
                    vector_formula=vector_formula(self.kv_format, n)))
