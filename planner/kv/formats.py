"""KV-cache number formats as data: element width, block scales, bytes per vector.

A format stores each element in ``element_bits`` and, for block-quantized
formats, one scale of ``scale_bits`` per ``block_size`` consecutive elements of
one vector (one head's K or V, one MLA latent, one compressed entry). Scales are
counted per block and rounded up, never charged per element:
``vector_bytes(n) = ceil(n * element_bits / 8) + ceil(n / block_size) * scale_bits / 8``.

Per-tensor (or per-head) FP32 scales are a few bytes per layer, not per token;
they are listed in ``tensor_scale_note`` and left out of per-token figures.

Sources: OCP Microscaling Formats (MX) v1.0 specification (mxfp8, mxfp4: E8M0
scale per 32); NVIDIA technical blog "Introducing NVFP4" (2025-06-24: E2M1 with
one E4M3 scale per 16 values plus one FP32 per tensor); llama.cpp ``ggml-common.h``
(``block_q8_0``: 32 int8 + one FP16 = 34 B; ``block_q4_0``: 16 B of nibbles +
one FP16 = 18 B); FP8 E4M3FN / E5M2: Micikevicius et al., "FP8 Formats for Deep
Learning" (arXiv:2209.05433).

>>> get_format("nvfp4").vector_bytes(512)   # 256 B of E2M1 + 32 E4M3 scales
288
>>> get_format("mxfp4").vector_bytes(128)   # 64 B + 4 E8M0 scales
68
"""

from __future__ import annotations

from dataclasses import dataclass

from planner.errors import PlanInputError
from planner.messages import msg
from planner.units import cdiv

__all__ = ["FORMATS", "KVFormat", "cdiv", "get_format"]


@dataclass(frozen=True, kw_only=True)
class KVFormat:
    """One KV number format.

    Attributes:
        id: lowercase slug used by the CLI and links (``nvfp4``).
        label: what users read (``NVFP4: E2M1 + E4M3 scale / 16``).
        element_bits: bits per stored element.
        block_size: elements sharing one scale, or ``None`` for no block scale.
        scale_bits: bits of each block scale (plus a zero point for asymmetric
            integer formats), 0 when ``block_size`` is ``None``.
        tensor_scale_note: per-tensor scales left out of per-token bytes.
        source: where the layout is defined.
    """

    id: str
    label: str
    element_bits: int
    block_size: int | None = None
    scale_bits: int = 0
    tensor_scale_note: str = ""
    source: str

    def vector_bytes(self, num_elements: int) -> int:
        """Bytes for one vector of ``num_elements`` elements, block scales included.

        Raises:
            PlanInputError: ``num_elements`` is negative.
        """
        if num_elements < 0:
            raise PlanInputError("num_elements", num_elements, msg("an integer >= 0"))
        data_bytes = cdiv(num_elements * self.element_bits, 8)
        if self.block_size is None:
            return data_bytes
        return data_bytes + cdiv(num_elements, self.block_size) * self.scale_bits // 8

    def vector_formula(self, num_elements: int) -> str:
        """How :meth:`vector_bytes` prices ``num_elements``, in words.

        >>> get_format("nvfp4").vector_formula(512)
        '512 x 4 bit / 8 + ceil(512 / 16) x 8 bit / 8 = 256 + 32 = 288 B'
        >>> get_format("bf16").vector_formula(128)
        '128 x 16 bit / 8 = 256 B'
        """
        data = cdiv(num_elements * self.element_bits, 8)
        head = f"{num_elements} x {self.element_bits} bit / 8"
        if self.block_size is None:
            return f"{head} = {data} B"
        scales = cdiv(num_elements, self.block_size) * self.scale_bits // 8
        return (f"{head} + ceil({num_elements} / {self.block_size}) x {self.scale_bits} bit / 8 "
                f"= {data} + {scales} = {data + scales} B")

    @property
    def bits_per_element(self) -> float:
        """Average bits per element with block scales: nvfp4 -> 4.5, q8_0 -> 8.5."""
        if self.block_size is None:
            return float(self.element_bits)
        return self.element_bits + self.scale_bits / self.block_size


_OCP_MX = "OCP Microscaling Formats (MX) v1.0 specification, 2023-09"
_NVFP4 = "NVIDIA technical blog 'Introducing NVFP4 for Efficient and Accurate Low-Precision Inference', 2025-06-24"
_GGML = "llama.cpp ggml/src/ggml-common.h (block_q8_0, block_q4_0)"
_FP8 = "Micikevicius et al., 'FP8 Formats for Deep Learning', arXiv:2209.05433; vLLM --kv-cache-dtype fp8"
_IEEE = "IEEE 754 / bfloat16 (Google Brain); the engines' default KV dtype"
_INT = ("group-wise symmetric integer quantization, one FP16 scale per group of 128 "
        "channels (KIVI, arXiv:2402.02750, uses per-group scales; group size is kvplan's choice)")

FORMATS: dict[str, KVFormat] = {
    f.id: f
    for f in (
        KVFormat(id="fp32", label="FP32", element_bits=32, source=_IEEE),
        KVFormat(id="bf16", label="BF16", element_bits=16, source=_IEEE),
        KVFormat(id="fp16", label="FP16", element_bits=16, source=_IEEE),
        KVFormat(id="fp8", label="FP8 E4M3FN (per-tensor FP32 scale)", element_bits=8,
                 tensor_scale_note="one FP32 scale per tensor or head", source=_FP8),
        KVFormat(id="fp8-e5m2", label="FP8 E5M2", element_bits=8,
                 tensor_scale_note="one FP32 scale per tensor, if any", source=_FP8),
        KVFormat(id="mxfp8", label="MXFP8: E4M3 + E8M0 scale / 32", element_bits=8,
                 block_size=32, scale_bits=8, source=_OCP_MX),
        KVFormat(id="nvfp4", label="NVFP4: E2M1 + E4M3 scale / 16", element_bits=4,
                 block_size=16, scale_bits=8,
                 tensor_scale_note="one FP32 second-level scale per tensor", source=_NVFP4),
        KVFormat(id="mxfp4", label="MXFP4: E2M1 + E8M0 scale / 32", element_bits=4,
                 block_size=32, scale_bits=8, source=_OCP_MX),
        KVFormat(id="int8", label="INT8, FP16 scale / 128", element_bits=8,
                 block_size=128, scale_bits=16, source=_INT),
        KVFormat(id="int4", label="INT4, FP16 scale / 128", element_bits=4,
                 block_size=128, scale_bits=16, source=_INT),
        KVFormat(id="q8_0", label="llama.cpp q8_0 (34 B / 32)", element_bits=8,
                 block_size=32, scale_bits=16, source=_GGML),
        KVFormat(id="q4_0", label="llama.cpp q4_0 (18 B / 32)", element_bits=4,
                 block_size=32, scale_bits=16, source=_GGML),
    )
}
"""Every KV format kvplan prices, by id."""


def get_format(format_id: str) -> KVFormat:
    """The format with this id.

    Raises:
        PlanInputError: unknown id (the message lists the known ones).
    """
    try:
        return FORMATS[format_id]
    except (KeyError, TypeError):
        raise PlanInputError("kv_format", format_id, msg("one of {choices}", choices=", ".join(FORMATS))) from None
