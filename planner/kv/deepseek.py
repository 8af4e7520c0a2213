"""DeepSeek layer kinds and the engine formats they need: V3.2 sparse-attention
(DSA) indexer keys and vLLM's ``fp8_ds_mla`` latent; V4 compressed entries and
window rings.
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.errors import PlanInputError
from planner.kv.formats import KVFormat, cdiv
from planner.kv.group import KVGroup, WindowCapped, vector_formula
from planner.messages import msg

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
            raise PlanInputError("num_elements", num_elements, msg("at least {tail_channels} (the unscaled tail)",
                                                                   tail_channels=self.tail_channels))
        return super().vector_bytes(num_elements - self.tail_channels) + cdiv(self.tail_channels * self.tail_bits, 8)

    def vector_formula(self, num_elements: int) -> str:
        """:meth:`vector_bytes` in words: the scaled part, then the unscaled tail."""
        scaled = num_elements - self.tail_channels
        return (f"{scaled} x {self.element_bits} bit / 8 + ceil({scaled} / {self.block_size}) x {self.scale_bits} bit / 8"
                f" + {self.tail_channels} x {self.tail_bits} bit / 8 (unscaled tail) = {self.vector_bytes(num_elements)} B")


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
        return (msg("one entry of {entry_dim} channels per {compress_ratio} token(s), replicated on TP: "
                    "{vector_formula}", entry_dim=self.entry_dim, compress_ratio=self.compress_ratio,
                    vector_formula=vector_formula(self.kv_format, self.entry_dim)))


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
        return msg("{entry_dim} (indexer key)", entry_dim=self.entry_dim)

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.entry_dim)

    @property
    def vllm_kind(self) -> str | None:
        return "full"  # an MLAAttentionSpec of uint8: the full-attention rule

    def entry_formula(self, tp: int = 1) -> str:
        return (msg("one indexer key of {entry_dim} channels per token, replicated on TP: {vector_formula}",
                    entry_dim=self.entry_dim, vector_formula=vector_formula(self.kv_format, self.entry_dim)))


@dataclass(frozen=True, kw_only=True)
class WindowRingGroup(WindowCapped, KVGroup):
    """A per-layer ring of the last ``window_tokens`` tokens of ``entry_dim``
    channels, replicated on TP (DeepSeek V4 sliding-window branch)."""

    window_tokens: int
    entry_dim: int

    @property
    def width(self) -> str:
        return str(self.entry_dim)

    def entry_bytes(self, tp: int = 1) -> int:
        return self.kv_format.vector_bytes(self.entry_dim)

    def entry_formula(self, tp: int = 1) -> str:
        return (msg("ring of the last {window_tokens} tokens x {entry_dim} channels, replicated on TP: "
                    "{vector_formula} per token", window_tokens=self.window_tokens, entry_dim=self.entry_dim,
                    vector_formula=vector_formula(self.kv_format, self.entry_dim)))
