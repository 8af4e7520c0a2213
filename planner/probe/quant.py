"""KV number formats in torch, in exactly the byte layout that :mod:`planner.formats` prices.

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

E2M1 (OCP MX v1.0 §5.3.3): 1 sign, 2 exponent (bias 1), 1 mantissa bit; codes
0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and codes 8..15 their negatives. Two codes
share a byte, the first channel in the low nibble (the order of torchao's
``pack_uint4`` and of CUDA's ``__nv_fp4x2_e2m1`` from a ``float2``); the packed
bytes can be viewed as ``torch.float4_e2m1fn_x2`` (torch >= 2.8) with
:func:`as_float4_x2`. Rounding is to nearest, ties to the even code, saturating
at +-6 (the OCP conversion rule). torch has no fp4 cast on the CPU, so
quantization goes through ``uint8`` codes computed with plain tensor arithmetic
(no per-element Python): with ``a = |y|``, the piecewise-linear map
``g(a) = min(2a, a + 2, a/2 + 4)`` sends the eight E2M1 magnitudes to 0..7 and
the midpoints between them to k + 0.5, so ``round(g(a))`` (round half to even)
is the nearest code with ties to the even code; it is evaluated exactly as
``min(round(2a), round(a) + 2, round(a/2) + 4)``. :func:`e2m1_encode_reference`
does the same with ``torch.bucketize`` on the code table, for tests.

Scales:

* nvfp4 (NVIDIA, "Introducing NVFP4", 2025-06-24): one E4M3 scale per 16
  channels, ``e4m3(amax_block / 6 / s_tensor)``, and one FP32 per tensor
  ``s_tensor = amax_tensor / (6 * 448)`` so that block scales use E4M3's range.
* mxfp4 / mxfp8 (OCP MX v1.0 §6.3): one E8M0 scale per 32 channels,
  ``2 ** (floor(log2(amax_block)) - emax_elem)`` with ``emax_elem`` 2 (E2M1)
  and 8 (E4M3); elements beyond the format's largest value saturate.
* fp8: one FP32 per tensor (or per head), ``amax / 448``.

Inputs must be finite floating-point tensors with channels in the last dim.
Functions work on any device; on the CPU, process large tensors in row chunks
(:func:`quantize_rows`) so that the temporaries stay in cache.
"""

from __future__ import annotations

import sys

from planner.errors import PlanInputError
from planner.formats import KVFormat, cdiv, get_format
from planner.probe._torch import require_torch
from planner.probe.layout import PROBE_FORMATS

torch = require_torch()


E2M1_VALUES: tuple[float, ...] = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
"""E2M1 magnitudes of codes 0..7 (OCP MX v1.0 Table 4); codes 8..15 are their negatives."""
E2M1_MAX = 6.0
"""Largest E2M1 magnitude (1.5 x 2**2)."""
E4M3_MAX = 448.0
"""Largest E4M3FN magnitude (1.75 x 2**8)."""
E5M2_MAX = 57344.0
"""Largest E5M2 magnitude (1.75 x 2**15)."""
E2M1_EMAX = 2
"""Exponent of E2M1's largest power of two (OCP MX ``emax_elem``)."""
E4M3_EMAX = 8
"""Exponent of E4M3's largest power of two (OCP MX ``emax_elem``)."""
E8M0_BIAS = 127
"""E8M0 stores 2**(code - 127); code 255 is NaN."""

_E2M1_MIDPOINTS = (0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0)
_FLOAT_DTYPES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16"}
_FP8 = {"fp8": ("float8_e4m3fn", E4M3_MAX), "fp8-e5m2": ("float8_e5m2", E5M2_MAX)}
_LITTLE_ENDIAN = sys.byteorder == "little"


def probe_format(format_id: str) -> KVFormat:
    """The planner's format with this id, if the probe can quantize it.

    Raises:
        PlanInputError: unknown id, or a format the probe does not implement.
    """
    fmt = get_format(format_id)
    if fmt.id not in PROBE_FORMATS:
        raise PlanInputError("kv_format", format_id, "a format the probe implements: " + ", ".join(PROBE_FORMATS))
    return fmt


# ---------------------------------------------------------------------------
# E2M1 codes
# ---------------------------------------------------------------------------

def e2m1_code_table(device=None, dtype=None):
    """The 16 E2M1 values by code: 0, 0.5, ..., 6, -0, -0.5, ..., -6 (float32)."""
    mags = list(E2M1_VALUES)
    return torch.tensor(mags + [-v for v in mags], device=device, dtype=dtype or torch.float32)


def e2m1_encode(y):
    """Nearest E2M1 code (uint8 in 0..15) of each element of ``y``, ties to the even code,
    saturating at +-6. ``y`` is already divided by its scale.

    >>> e2m1_encode(torch.tensor([0.25, 0.75, 2.5, 5.0, 7.0, -1.0])).tolist()
    [0, 2, 4, 6, 7, 10]
    """
    y = y.float().contiguous()
    return _e2m1_codes_i32(y.abs(), y).to(torch.uint8)


def _e2m1_codes_i32(a, sign_source):
    """int32 E2M1 codes of magnitudes ``a`` (float32, overwritten) with the signs of
    ``sign_source`` (float32, contiguous, same shape)."""
    # round(g(a)) = min(round(2a), round(a) + 2, round(a/2) + 4): rounding is monotone, and
    # rounding before adding the integer keeps every step exact in float32 (a + 2 is not).
    g = torch.mul(a, 2.0).round_()
    t = torch.round(a).add_(2.0)
    torch.minimum(g, t, out=g)
    a.mul_(0.5).round_().add_(4.0)
    torch.minimum(g, a, out=g)
    codes = g.clamp_(max=7.0).to(torch.int32)
    # the sign bit (bit 31) moved to bit 3: an arithmetic shift by 28 keeps it there, & 8 isolates it
    sign8 = sign_source.view(torch.int32).bitwise_right_shift(28).bitwise_and_(8)
    return codes.bitwise_or_(sign8)


def e2m1_encode_reference(y):
    """Same as :func:`e2m1_encode`, by ``torch.bucketize`` on the midpoints of the code
    table (slower; an independent check for tests)."""
    a = y.abs().float()
    mids = torch.tensor(_E2M1_MIDPOINTS, device=y.device, dtype=torch.float32)
    idx = torch.bucketize(a, mids)  # a == midpoint k -> k (the lower neighbour)
    padded = torch.cat([mids, mids.new_full((1,), float("inf"))])
    tie_to_upper = (a == padded[idx]) & (idx % 2 == 1)  # an odd lower code: the tie goes up to even
    code = (idx + tie_to_upper.long()).clamp(max=7)
    return (code + torch.signbit(y).long() * 8).to(torch.uint8)


def e2m1_decode(codes):
    """E2M1 codes (uint8, 0..15) -> float32 values."""
    return e2m1_code_table(codes.device)[codes.long()]


def pack_fp4(codes):
    """Pack E2M1 codes (``[..., n]``, integers in 0..15) two per byte, the first channel in
    the low nibble: ``[..., ceil(n/2)]`` uint8 (an odd ``n`` leaves the last high nibble 0).

    >>> pack_fp4(torch.tensor([1, 2, 15], dtype=torch.uint8)).tolist()
    [33, 15]
    """
    if codes.shape[-1] % 2:
        codes = torch.nn.functional.pad(codes, (0, 1))
    return _pack_i32(codes.to(torch.int32).contiguous())


def _pack_i32(codes):
    """:func:`pack_fp4` of contiguous int32 codes with an even last dim."""
    if _LITTLE_ENDIAN:
        # a pair (lo, hi) read as one int64 is lo + hi * 2**32; (v | v >> 28) & 0xFF = lo | hi << 4.
        # Contiguous 64-bit ops: about twice as fast on the CPU as strided even/odd slices.
        v = codes.view(torch.int64)
        return v.bitwise_or(v >> 28).bitwise_and_(0xFF).to(torch.uint8)
    return (codes[..., 0::2] | (codes[..., 1::2] << 4)).to(torch.uint8)


def unpack_fp4(packed, num_channels: int):
    """Inverse of :func:`pack_fp4`: ``[..., m]`` bytes -> ``[..., num_channels]`` codes."""
    lo = packed & 0x0F
    hi = packed >> 4
    codes = torch.stack((lo, hi), dim=-1).flatten(-2)
    return codes[..., :num_channels]


def _fp4_pair_table(device):
    """float32 ``[256, 2]``: the two E2M1 values of each packed byte (low nibble first)."""
    values = e2m1_code_table(device)
    byte = torch.arange(256, device=device)
    return torch.stack((values[byte & 0x0F], values[byte >> 4]), dim=-1)


_PAIR_TABLES: dict[str, object] = {}


def fp4_values(packed, num_channels: int):
    """Packed E2M1 bytes ``[..., m]`` -> float32 values ``[..., num_channels]`` (one gather
    of a 256 x 2 table: both nibbles of a byte at once)."""
    key = str(packed.device)
    table = _PAIR_TABLES.get(key)
    if table is None:
        table = _PAIR_TABLES[key] = _fp4_pair_table(packed.device)
    pairs = table.index_select(0, packed.reshape(-1).long())
    return pairs.view(*packed.shape[:-1], -1)[..., :num_channels]


_FP8_TABLES: dict[tuple[str, str], object] = {}


def fp8_values(codes, dtype_name: str = "float8_e4m3fn"):
    """FP8 bytes (uint8) -> float32, by a 256-entry table (several times faster than the
    CPU's fp8 cast; identical values, NaN codes included)."""
    key = (str(codes.device), dtype_name)
    table = _FP8_TABLES.get(key)
    if table is None:
        byte = torch.arange(256, dtype=torch.uint8, device=codes.device)
        table = _FP8_TABLES[key] = byte.view(getattr(torch, dtype_name)).float()
    return table.index_select(0, codes.reshape(-1).long()).view(codes.shape)


def as_float4_x2(packed):
    """View packed E2M1 bytes as ``torch.float4_e2m1fn_x2`` where torch has it (>= 2.8),
    else return the ``uint8`` tensor unchanged. Same storage, same bytes."""
    dtype = getattr(torch, "float4_e2m1fn_x2", None)
    return packed.view(dtype) if dtype is not None else packed


# ---------------------------------------------------------------------------
# Scales: E4M3 (NVFP4 blocks) and E8M0 (MX blocks)
# ---------------------------------------------------------------------------

def e4m3_round(x):
    """Round to E4M3FN (nearest, ties to even), saturating at +-448: a float8_e4m3fn tensor.

    >>> e4m3_round(torch.tensor([0.3, 500.0])).float().tolist()
    [0.3125, 448.0]
    """
    return x.float().clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn)


def e8m0_encode(amax, emax_elem: int):
    """E8M0 codes (uint8) of the MX shared scale ``2 ** (floor(log2(amax)) - emax_elem)``
    (OCP MX v1.0 §6.3), clamped to [2**-127, 2**127]; ``amax == 0`` -> code 0.

    ``floor(log2(amax))`` is exact: ``frexp`` gives ``amax = m * 2**e`` with m in [0.5, 1).

    >>> e8m0_encode(torch.tensor([1.0, 6.0, 0.0]), 2).tolist()   # 2**-2, 2**0, 2**-127
    [125, 127, 0]
    """
    amax = amax.float()
    _, exponent = torch.frexp(amax)
    unbiased = exponent - 1 - emax_elem
    code = (unbiased + E8M0_BIAS).clamp(0, 254)
    code = torch.where(amax > 0, code, torch.zeros_like(code))
    return code.to(torch.uint8)


def e8m0_decode(codes):
    """E8M0 codes -> float32 ``2 ** (code - 127)``, exactly, by building the float's bits
    (code 0 is the subnormal 2**-127; 255 is NaN)."""
    c = codes.to(torch.int32)
    bits = torch.where(c == 0, torch.full_like(c, 0x00400000), c << 23)
    bits = torch.where(c == 255, torch.full_like(c, 0x7FC00000), bits)
    return bits.view(torch.float32)


# ---------------------------------------------------------------------------
# Whole formats
# ---------------------------------------------------------------------------

def code_bytes(fmt: KVFormat, num_channels: int) -> int:
    """Bytes of a vector's element codes: ``ceil(n * element_bits / 8)``."""
    return cdiv(num_channels * fmt.element_bits, 8)


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


def quantize(x, format_id: str, *, tensor_scale=None, out=None):
    """Quantize vectors ``x [..., n]`` into the format's byte layout.

    Args:
        x: finite floating-point tensor, channels in the last dim.
        format_id: one of :data:`PROBE_FORMATS`.
        tensor_scale: the FP32 per-tensor (or per-head, broadcastable) scale for
            nvfp4 / fp8; None computes it from ``x`` (:func:`tensor_scale_for`).
        out: optional uint8 ``[..., vector_bytes(n)]`` to write into (e.g. a pool slice).

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
        raise PlanInputError("out", tuple(out.shape), f"a uint8 tensor [..., {width}] for {fid} at {n} channels")

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

    cb = code_bytes(fmt, n)
    xf = x.float().contiguous()
    mags = _blocks(xf.abs(), fmt.block_size)  # [..., nb, block]; |x|, later |x| / scale
    # amax of non-negative floats on their int32 bit patterns (same order, faster reduction on the CPU)
    amax = mags.view(torch.int32).amax(dim=-1).view(torch.float32)  # [..., nb]
    if fid == "nvfp4":
        if tensor_scale is None:
            tensor_scale = tensor_scale_for(x, fid)
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
        raise PlanInputError("data", tuple(data.shape), f"[..., {width}] bytes for {fid} at {n} channels")
    if fid in _FLOAT_DTYPES:
        dtype = getattr(torch, _FLOAT_DTYPES[fid])
        return data.contiguous().view(dtype).float()
    if fid in ("fp8", "fp8-e5m2", "nvfp4") and tensor_scale is None:
        raise PlanInputError("tensor_scale", None, f"the FP32 per-tensor scale {fid} was quantized with")
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


def quantize_rows(x, format_id: str, *, out, tensor_scale=None, rows_per_chunk: int | None = None):
    """:func:`quantize` of a 2-D ``x [rows, n]`` into ``out [rows, vector_bytes(n)]``, in
    chunks of rows (on the CPU about 256 Ki elements, so temporaries stay in cache).

    Returns:
        the tensor scale used (computed once from the whole ``x`` when needed).
    """
    if tensor_scale is None:
        tensor_scale = tensor_scale_for(x, format_id)
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


CPU_CHUNK_ELEMENTS = 1 << 18
"""Elements per chunk on the CPU (256 Ki float32 = 1 MiB: temporaries stay in L2/L3)."""
CUDA_CHUNK_ELEMENTS = 1 << 25
"""Elements per chunk on a GPU (32 Mi, 128 MiB per float32 temporary: enough to keep HBM busy,
small enough to bound the fill's scratch to about 0.8 GB)."""


def default_rows_per_chunk(x) -> int:
    """Rows per chunk for a 2-D tensor on its device."""
    budget = CUDA_CHUNK_ELEMENTS if x.device.type == "cuda" else CPU_CHUNK_ELEMENTS
    return max(1, budget // max(1, x.shape[-1]))
