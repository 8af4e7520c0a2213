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
from planner.kv.group import KVGroup, vector_formula
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
    def vllm_kind(self) -> tuple[str, int | None] | None:
        return ("full", None)


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
