"""KV number formats in torch, in exactly the byte layout that :mod:`planner.kv.formats` prices.

One *vector* of ``n`` channels (one head's K or V, one MLA latent, one
compressed entry, one indexer key) is stored as ``[codes | block scales]``::

    format     codes                         block scales                      bytes for n=512
    bf16/fp16  n x 2 B (little-endian)       none                              1024
    fp8        n x 1 B E4M3FN                none (FP32 per tensor/head apart)  512
    mxfp8      n x 1 B E4M3FN                ceil(n/32) x 1 B E8M0             512 + 16 = 528
    nvfp4      ceil(n/2) B, 2 E2M1 per byte  ceil(n/16) x 1 B E4M3 (+FP32/tensor) 256 + 32 = 288
    mxfp4      ceil(n/2) B, 2 E2M1 per byte  ceil(n/32) x 1 B E8M0             256 + 16 = 272

so ``quantize(x, fmt).shape[-1] == get_format(fmt).vector_bytes(n)`` always
(nvfp4 at 512 channels: 288 B; mxfp4 at 128: 64 + 4 = 68 B). Per-tensor (or
per-head) FP32 scales are returned apart, as the planner leaves them out of
per-token bytes.

Element codes and scale encodings (E2M1, E4M3, E8M0): :mod:`planner.probe.minifloat`.
The CPU path of nvfp4 / mxfp4 / mxfp8: :mod:`planner.probe.quant_cpu`.

Scales:

* nvfp4 (NVIDIA, "Introducing NVFP4", 2025-06-24): one E4M3 scale per 16
  channels, ``e4m3(amax_block / 6 / s_tensor)``, and one FP32 per tensor
  ``s_tensor = amax_tensor / (6 * 448)`` so that block scales use E4M3's range.
* mxfp4 / mxfp8 (OCP MX v1.0 §6.3): one E8M0 scale per 32 channels,
  ``2 ** (floor(log2(amax_block)) - emax_elem)`` with ``emax_elem`` 2 (E2M1)
  and 8 (E4M3); elements beyond the format's largest value saturate.
* fp8: one FP32 per tensor (or per head), ``amax / 448``.

Inputs must be finite floating-point tensors with channels in the last dim.
Functions work on any device; on the CPU, nvfp4 / mxfp4 / mxfp8 take their own path
(:func:`planner.probe.quant_cpu.quantize_blocks_cpu`), which writes the same bytes as the
generic path here.
"""

from __future__ import annotations

from planner.errors import PlanInputError
from planner.kv.formats import KVFormat, cdiv, get_format
from planner.messages import msg
from planner.probe._torch import require_torch
from planner.probe.layout import PROBE_FORMATS
from planner.probe.minifloat import (
    E2M1_EMAX,
    E2M1_MAX,
    E4M3_EMAX,
    E4M3_MAX,
    E5M2_MAX,
    _e2m1_codes_i32,
    _pack_i32,
    code_bytes,
    e4m3_round,
    e8m0_decode,
    e8m0_encode,
    fp4_values,
    fp8_values,
)
from planner.probe.quant_cpu import CPU_CHUNK_ELEMENTS, cpu_fast_path, quantize_blocks_cpu

torch = require_torch()

_FLOAT_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
_FP8 = {"fp8": ("float8_e4m3fn", E4M3_MAX), "fp8-e5m2": ("float8_e5m2", E5M2_MAX)}


def probe_format(format_id: str) -> KVFormat:
    """The planner's format with this id, if the probe can quantize it.

    Raises:
        PlanInputError: unknown id, or a format the probe does not implement.
    """
    fmt = get_format(format_id)
    if fmt.id not in PROBE_FORMATS:
        raise PlanInputError("kv_format", format_id, msg("a format the probe implements: {choices}",
                                                         choices=", ".join(PROBE_FORMATS)))
    return fmt


# ---------------------------------------------------------------------------
# Whole formats
# ---------------------------------------------------------------------------

def _blocks(x, block: int):
    """``x [..., n]`` float32 -> ``[..., ceil(n/block), block]`` (zero-padded)."""
    n = x.shape[-1]
    pad = cdiv(n, block) * block - n
    if pad:
        x = torch.nn.functional.pad(x, (0, pad))
    return x.reshape(*x.shape[:-1], -1, block)


def _amax(x, dim=None, keepdim=False):
    if dim is None:
        return x.abs().amax()
    return x.abs().amax(dim=dim, keepdim=keepdim)


def tensor_scale_for(x, format_id: str, dim=None):
    """The FP32 per-tensor scale a format needs for ``x`` (None for formats without one).

    nvfp4: ``amax / (6 * 448)``; fp8: ``amax / 448``; fp8-e5m2: ``amax / 57344``; an
    all-zero tensor gets 1. ``dim``: reduce over these dims only (per-head scales:
    the other dims keep their size, for broadcasting).
    """
    fid = probe_format(format_id).id
    if fid == "nvfp4":
        top = E2M1_MAX * E4M3_MAX
    elif fid in _FP8:
        top = _FP8[fid][1]
    else:
        return None
    xf = x.float()
    amax = _amax(xf) if dim is None else _amax(xf, dim=dim, keepdim=True)
    scale = amax / top
    return torch.where(scale > 0, scale, torch.ones_like(scale))


def quantize(x, format_id: str, *, tensor_scale=None, out=None, scratch=None):
    """Quantize vectors ``x [..., n]`` into the format's byte layout.

    Args:
        x: finite floating-point tensor, channels in the last dim.
        format_id: one of :data:`PROBE_FORMATS`.
        tensor_scale: the FP32 per-tensor (or per-head, broadcastable) scale for
            nvfp4 / fp8; None computes it from ``x`` (:func:`tensor_scale_for`).
        out: optional uint8 ``[..., vector_bytes(n)]`` to write into (e.g. a pool slice).
        scratch: optional :class:`planner.probe.quant_cpu.QuantScratch` whose buffers the CPU path reuses
            (for many calls in a row); None allocates them for this call.

    Returns:
        ``(data, tensor_scale)``: uint8 ``[..., vector_bytes(n)]`` and the FP32 scale
        used (None for formats without one).

    Raises:
        PlanInputError: a format the probe does not implement.
    """
    fmt = probe_format(format_id)
    fid, n = fmt.id, x.shape[-1]
    width = fmt.vector_bytes(n)
    if out is None:
        out = torch.empty(*x.shape[:-1], width, dtype=torch.uint8, device=x.device)
    elif out.shape[-1] != width or out.dtype != torch.uint8:
        raise PlanInputError("out", tuple(out.shape), msg("a uint8 tensor [..., {width}] for {fid} at {n} channels",
                                                          width=width, fid=fid, n=n))

    if fid in _FLOAT_DTYPES:
        dtype = getattr(torch, _FLOAT_DTYPES[fid])
        out.copy_(x.to(dtype).contiguous().view(torch.uint8))
        return out, None
    if fid in _FP8:
        dtype_name, top = _FP8[fid]
        if tensor_scale is None:
            tensor_scale = tensor_scale_for(x, fid)
        y = (x.float() / tensor_scale).clamp_(-top, top)
        out.copy_(y.to(getattr(torch, dtype_name)).view(torch.uint8))
        return out, tensor_scale

    if fid == "nvfp4" and tensor_scale is None:
        tensor_scale = tensor_scale_for(x, fid)
    if cpu_fast_path(x, fmt, tensor_scale):
        quantize_blocks_cpu(x, fmt, tensor_scale, out, scratch=scratch)
        return out, tensor_scale if fid == "nvfp4" else None

    cb = code_bytes(fmt, n)
    xf = x.float().contiguous()
    mags = _blocks(xf.abs(), fmt.block_size)  # [..., nb, block]; |x|, later |x| / scale
    # amax of non-negative floats on their int32 bit patterns (same order, faster reduction on the CPU)
    amax = mags.view(torch.int32).amax(dim=-1).view(torch.float32)  # [..., nb]
    if fid == "nvfp4":
        scale_fp8 = e4m3_round(amax / E2M1_MAX / tensor_scale)
        scale = scale_fp8.float() * tensor_scale
        inv = torch.where(scale > 0, 1.0 / scale, torch.zeros_like(scale))
        scale_bytes = scale_fp8.view(torch.uint8)
    else:  # mxfp4, mxfp8: power-of-two scales, so x / 2**k is exact
        emax = E2M1_EMAX if fid == "mxfp4" else E4M3_EMAX
        scale_bytes = e8m0_encode(amax, emax)
        inv = e8m0_decode(254 - scale_bytes)  # 2**(127 - code) = 1 / 2**(code - 127), exactly
        tensor_scale = None
    mags.mul_(inv.unsqueeze(-1))
    a = mags.flatten(-2)[..., :n]
    if fmt.element_bits == 4:
        if a.shape[-1] % 2 or not a.is_contiguous():
            a, xf = _pad_even(a), _pad_even(xf)
        out[..., :cb].copy_(_pack_i32(_e2m1_codes_i32(a, xf)))
    else:  # mxfp8: E4M3 of |x| / scale with the sign of x put back
        y = torch.copysign(a, xf).clamp_(-E4M3_MAX, E4M3_MAX)
        out[..., :cb].copy_(y.to(torch.float8_e4m3fn).view(torch.uint8))
    out[..., cb:].copy_(scale_bytes)
    return out, tensor_scale


def _pad_even(t):
    """Contiguous copy of ``t`` with the last dim zero-padded to an even length."""
    return torch.nn.functional.pad(t, (0, t.shape[-1] % 2)).contiguous()


def dequantize(data, format_id: str, num_channels: int, *, tensor_scale=None):
    """Inverse of :func:`quantize`: uint8 ``[..., vector_bytes(n)]`` -> float32 ``[..., n]``.

    Raises:
        PlanInputError: unknown format, width not ``vector_bytes(num_channels)``,
            or a missing tensor scale for nvfp4 / fp8.
    """
    fmt = probe_format(format_id)
    fid, n = fmt.id, num_channels
    width = fmt.vector_bytes(n)
    if data.shape[-1] != width:
        raise PlanInputError("data", tuple(data.shape), msg("[..., {width}] bytes for {fid} at {n} channels",
                                                            width=width, fid=fid, n=n))
    if fid in _FLOAT_DTYPES:
        dtype = getattr(torch, _FLOAT_DTYPES[fid])
        return data.contiguous().view(dtype).float()
    if fid in ("fp8", "fp8-e5m2", "nvfp4") and tensor_scale is None:
        raise PlanInputError("tensor_scale", None, msg("the FP32 per-tensor scale {fid} was quantized with", fid=fid))
    if fid in _FP8:
        return fp8_values(data, _FP8[fid][0]) * tensor_scale

    cb = code_bytes(fmt, n)
    codes, scale_bytes = data[..., :cb], data[..., cb:]
    if fid == "nvfp4":
        scale = fp8_values(scale_bytes) * tensor_scale
    else:
        scale = e8m0_decode(scale_bytes)
    if fmt.element_bits == 4:
        values = fp4_values(codes, n)
    else:
        values = fp8_values(codes)
    blocks = _blocks(values, fmt.block_size) * scale.unsqueeze(-1)
    return blocks.flatten(-2)[..., :n]


def quantize_rows(x, format_id: str, *, out, tensor_scale=None, rows_per_chunk: int | None = None,
                  scratch=None):
    """:func:`quantize` of a 2-D ``x [rows, n]`` into ``out [rows, vector_bytes(n)]``, in
    chunks of rows (on the CPU :data:`CPU_CHUNK_ELEMENTS` values, so temporaries stay in cache).

    Args:
        scratch: optional :class:`planner.probe.quant_cpu.QuantScratch` to reuse across calls (CPU block formats).

    Returns:
        the tensor scale used (computed once from the whole ``x`` when needed).
    """
    if tensor_scale is None:
        tensor_scale = tensor_scale_for(x, format_id)
    fmt = probe_format(format_id)
    if cpu_fast_path(x, fmt, tensor_scale):  # chunks itself, through one set of buffers
        quantize_blocks_cpu(x, fmt, tensor_scale, out, scratch=scratch, rows_per_chunk=rows_per_chunk)
        return tensor_scale
    rows = x.shape[0]
    step = rows_per_chunk or default_rows_per_chunk(x)
    for start in range(0, rows, step):
        quantize(x[start:start + step], format_id, tensor_scale=tensor_scale, out=out[start:start + step])
    return tensor_scale


def dequantize_rows(data, format_id: str, num_channels: int, *, out, tensor_scale=None,
                    rows_per_chunk: int | None = None):
    """:func:`dequantize` of ``data [rows, width]`` into float ``out [rows, n]``, in row chunks."""
    rows = data.shape[0]
    step = rows_per_chunk or default_rows_per_chunk(out)
    for start in range(0, rows, step):
        out[start:start + step].copy_(dequantize(data[start:start + step], format_id, num_channels,
                                                 tensor_scale=tensor_scale))
    return out


CUDA_CHUNK_ELEMENTS = 1 << 25
"""Elements per chunk on a GPU (32 Mi, 128 MiB per float32 temporary: enough to keep HBM busy,
small enough to bound the fill's scratch to about 0.8 GB)."""


def default_rows_per_chunk(x) -> int:
    """Rows per chunk for a 2-D tensor on its device."""
    budget = CUDA_CHUNK_ELEMENTS if x.device.type == "cuda" else CPU_CHUNK_ELEMENTS
    return max(1, budget // max(1, x.shape[-1]))
