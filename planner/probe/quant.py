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

E2M1 (OCP MX v1.0 §5.3.3): 1 sign, 2 exponent (bias 1), 1 mantissa bit; codes
0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6 and codes 8..15 their negatives. Two codes
share a byte, the first channel in the low nibble (the order of torchao's
``pack_uint4`` and of CUDA's ``__nv_fp4x2_e2m1`` from a ``float2``); the packed
bytes can be viewed as ``torch.float4_e2m1fn_x2`` (torch >= 2.8) with
:func:`as_float4_x2`. Rounding is to nearest, ties to the even code, saturating
at +-6 (the OCP conversion rule). torch has no fp4 cast on the CPU, so
quantization computes ``uint8`` codes with plain tensor arithmetic (no
per-element Python): with ``a = |y|``, the nearest code with ties to the even
code is ``min(RNE(2a), RNE(a) + 2, RNE(a/2) + 4, 7)`` (E2M1's grid is three
uniform pieces: step 0.5 up to 2, step 1 up to 4, step 2 above). The generic
path (any device) evaluates it with ``torch.round``; :func:`e2m1_encode` and
the CPU path of the block formats with one float32 addition of a "magic"
constant per term (:func:`_e2m1_biased_codes`): the same codes for every
finite float32 and for +-inf. :func:`e2m1_encode_reference` does the same with
``torch.bucketize`` on the code table, for tests.

Scales:

* nvfp4 (NVIDIA, "Introducing NVFP4", 2025-06-24): one E4M3 scale per 16
  channels, ``e4m3(amax_block / 6 / s_tensor)``, and one FP32 per tensor
  ``s_tensor = amax_tensor / (6 * 448)`` so that block scales use E4M3's range.
* mxfp4 / mxfp8 (OCP MX v1.0 §6.3): one E8M0 scale per 32 channels,
  ``2 ** (floor(log2(amax_block)) - emax_elem)`` with ``emax_elem`` 2 (E2M1)
  and 8 (E4M3); elements beyond the format's largest value saturate.
* fp8: one FP32 per tensor (or per head), ``amax / 448``.

Inputs must be finite floating-point tensors with channels in the last dim.
Functions work on any device. On the CPU, nvfp4 / mxfp4 / mxfp8 take their own
path (:func:`_quantize_blocks_cpu`): row chunks of :data:`CPU_CHUNK_ELEMENTS`
values, buffers reused from chunk to chunk (:class:`QuantScratch`), in-place
and ``out=`` ops, block scales built from bits, and the magic-addition codes:
15 passes over each chunk for nvfp4 / mxfp4 (the last four write 1- or 2-byte
data), against 22 on fresh temporaries for the generic path. It writes the
same bytes as the generic path, which the tests check against the reference
pieces (``bucketize`` codes, ``e4m3_round``, ``e8m0_encode``).
"""

from __future__ import annotations

import functools
import sys

from planner.errors import PlanInputError
from planner.kv.formats import KVFormat, cdiv, get_format
from planner.probe._torch import require_torch
from planner.probe.layout import PROBE_FORMATS
from planner.messages import msg

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
        raise PlanInputError("kv_format", format_id, msg("a format the probe implements: {choices}",
                                                         choices=", ".join(PROBE_FORMATS)))
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
    t, u = torch.empty_like(y), torch.empty_like(y)
    return _e2m1_biased_codes(y.abs(), y.view(torch.int32), t, u).bitwise_and_(0xFF).to(torch.uint8)


_MAGIC = 2.0 ** 22
"""float32 numbers in [2**22, 2**23) are 0.5 apart: adding this rounds to E2M1's finest step."""
_MAGIC_BITS = 0x4A800000
"""Bit pattern of :data:`_MAGIC` (low byte 0)."""
_MAGIC_SAT = _MAGIC + 3.5
"""``_MAGIC`` plus code 7 (6.0) in steps of 0.5: the saturation bound."""
_MAGIC_TERMS: dict[str, tuple] = {}


def _magic_terms(device):
    """0-dim float32 tensors ``2**22 + 1`` and ``2**22 + 2`` on ``device`` (the ``input`` of
    ``torch.add(input, a, alpha=...)``, which takes no Python number there)."""
    key = str(device)
    terms = _MAGIC_TERMS.get(key)
    if terms is None:
        terms = _MAGIC_TERMS[key] = (torch.tensor(_MAGIC + 1.0, device=device),
                                     torch.tensor(_MAGIC + 2.0, device=device))
    return terms


def _e2m1_biased_codes(a, sign_bits, t, u):
    """E2M1 codes of magnitudes ``a`` with the signs of ``sign_bits``, as int32 ``0x4A800000 +
    code`` (``code`` in 0..15, the sign in bit 3): the low byte of each int32 is the code.

    Args:
        a: float32 magnitudes (>= 0, already divided by the block scale); left unchanged.
        sign_bits: int32 bit patterns of the signed values (same shape; bit 31 is the sign).
        t, u: float32 work tensors of the same shape; ``t`` receives the result (an int32 view
            of it is returned).

    Why this is exact. E2M1's magnitudes 0, 0.5, 1, 1.5 | 2, 3 | 4, 6 are three uniform
    grids (steps 0.5, 1, 2), on which the codes are 2a, a + 2 and a/2 + 4, so the nearest
    code with ties to the even code is ``min(RNE(2a), RNE(a) + 2, RNE(a/2) + 4, 7)``: each
    term is monotone, equals the code on its own piece and is at least the code elsewhere.
    Each RNE is one float32 addition: floats in [2**22, 2**23) are exactly 0.5 apart, so
    ``a + 2**22`` is rounded by the FPU itself, to nearest with ties to even (one rounding of
    the exact sum), to ``2**22 + RNE(2a)/2``, whose bit pattern is ``0x4A800000 + RNE(2a)``.
    Likewise ``a/2 + (2**22 + 1)`` has the bits ``0x4A800000 + RNE(a) + 2`` and
    ``a/4 + (2**22 + 2)`` the bits ``0x4A800000 + RNE(a/2) + 4``: ``a/2`` and ``a/4`` are exact,
    and adding a whole number of steps (1.0 = 2 steps, 2.0 = 4) keeps the parity that
    ties-to-even looks at. All three sums lie in one binade, so the float minimum is the
    minimum of the codes; clamping at ``2**22 + 3.5`` saturates at code 7 (every larger ``a``,
    up to the float32 maximum, lands there). Then the sign: ``bits >> 31`` is 0 or -1, and
    subtracting 8 times it sets bit 3 for negative values, -0.0 included. Checked against the
    ``bucketize`` reference on every non-negative float32 below 2**25, subnormals and all ties
    included, and on the largest floats. Eight passes, against fourteen for the same rule
    written as ``min(round(2a), round(a) + 2, round(a/2) + 4)`` with a separate sign step.
    """
    one, two = _magic_terms(a.device)
    torch.add(a, _MAGIC, out=t)
    torch.add(one, a, alpha=0.5, out=u)
    torch.minimum(t, u, out=t)
    torch.add(two, a, alpha=0.25, out=u)
    torch.minimum(t, u, out=t)
    t.clamp_(max=_MAGIC_SAT)
    ti, ui = t.view(torch.int32), u.view(torch.int32)
    torch.bitwise_right_shift(sign_bits, 31, out=ui)
    return ti.sub_(ui, alpha=8)


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


def quantize(x, format_id: str, *, tensor_scale=None, out=None, scratch=None):
    """Quantize vectors ``x [..., n]`` into the format's byte layout.

    Args:
        x: finite floating-point tensor, channels in the last dim.
        format_id: one of :data:`PROBE_FORMATS`.
        tensor_scale: the FP32 per-tensor (or per-head, broadcastable) scale for
            nvfp4 / fp8; None computes it from ``x`` (:func:`tensor_scale_for`).
        out: optional uint8 ``[..., vector_bytes(n)]`` to write into (e.g. a pool slice).
        scratch: optional :class:`QuantScratch` whose buffers the CPU path reuses
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
    if _cpu_fast_path(x, fmt, tensor_scale):
        _quantize_blocks_cpu(x, fmt, tensor_scale, out, scratch=scratch)
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


# ---------------------------------------------------------------------------
# The CPU path of the block formats (nvfp4, mxfp4, mxfp8)
# ---------------------------------------------------------------------------

_CPU_FAST_FORMATS = ("nvfp4", "mxfp4", "mxfp8")
_TENSOR_SCALE_RANGE = (2.0 ** -100, 2.0 ** 100)
"""nvfp4 tensor scales the CPU path takes: every non-zero block scale (E4M3 >= 2**-9, times
the tensor scale) is then a normal float32 whose reciprocal is finite, so a zero scale is the
only source of an infinite reciprocal. Others go through the generic path."""


class QuantScratch:
    """Work buffers of the CPU path of :func:`quantize`, grown on demand and reused across
    calls (one chunk's worth: three float32 tensors, a uint8 and an int16 one, 14 B a value,
    7 MiB at :data:`CPU_CHUNK_ELEMENTS`). One per thread: calls through it must not overlap."""

    def __init__(self) -> None:
        self.numel = 0

    def take(self, numel: int):
        """``(a, t, u, codes, pairs)``: float32 ``[numel]`` x 3, uint8 ``[numel]``, int16 ``[numel // 2]``."""
        if numel > self.numel:
            self.a, self.t, self.u = (torch.empty(numel, dtype=torch.float32) for _ in range(3))
            self.codes = torch.empty(numel, dtype=torch.uint8)
            self.pairs = torch.empty(numel // 2, dtype=torch.int16)
            self.numel = numel
        return self.a[:numel], self.t[:numel], self.u[:numel], self.codes[:numel], self.pairs[:numel // 2]


@functools.lru_cache(maxsize=None)
def _casts_keep_low_bits() -> bool:
    """Whether int32 -> uint8 and int16 -> uint8 casts keep the low byte (C's conversion to an
    unsigned type; the CPU path relies on it and checks it once, vectorized lengths included)."""
    i32 = torch.full((100,), _MAGIC_BITS + 13, dtype=torch.int32)
    i16 = torch.full((100,), 0x0F3D, dtype=torch.int16)
    u8 = torch.empty(100, dtype=torch.uint8)
    return bool((u8.copy_(i32) == 13).all()) and bool((u8.copy_(i16) == 0x3D).all())


def _cpu_fast_path(x, fmt: KVFormat, tensor_scale) -> bool:
    """Whether :func:`_quantize_blocks_cpu` takes ``x``: a CPU floating tensor of whole blocks, a
    single nvfp4 tensor scale in :data:`_TENSOR_SCALE_RANGE`, a little-endian machine."""
    if fmt.id not in _CPU_FAST_FORMATS or x.device.type != "cpu" or not x.is_floating_point():
        return False
    n = x.shape[-1] if x.dim() else 0
    if n == 0 or n % fmt.block_size or not _LITTLE_ENDIAN:
        return False
    if fmt.id == "nvfp4":
        if not (torch.is_tensor(tensor_scale) and tensor_scale.numel() == 1
                and tensor_scale.device.type == "cpu" and tensor_scale.is_floating_point()):
            return False
        if not _TENSOR_SCALE_RANGE[0] <= float(tensor_scale.detach()) <= _TENSOR_SCALE_RANGE[1]:
            return False
    return _casts_keep_low_bits()


def _e4m3_values(scale_bytes, times=256.0):
    """Non-negative E4M3 bytes -> float32 values x ``times / 256`` (exactly the values for the
    default). The byte ``0EEEEMMM`` shifted left by 7 is the float16 ``0 0EEEE MMM0000000``:
    the same exponent and mantissa fields, biases 15 and 7, so the float16 is the E4M3 value
    / 2**8, subnormals included (both formats' subnormals have exponent field 0), and
    float16 -> float32 is exact. (Vectorized casts: several times faster on the CPU than
    ``float8_e4m3fn -> float32``.)"""
    half = scale_bytes.to(torch.int16).bitwise_left_shift_(7).view(torch.float16)
    return half.float().mul_(times)


def _quantize_blocks_cpu(x, fmt: KVFormat, tensor_scale, out, *, scratch=None, rows_per_chunk=None) -> None:
    """nvfp4 / mxfp4 / mxfp8 of ``x [..., n]`` into ``out [..., vector_bytes(n)]`` on the CPU,
    byte for byte what the generic path of :func:`quantize` writes, in row chunks of
    :data:`CPU_CHUNK_ELEMENTS` values through the buffers of ``scratch``."""
    n, width = x.shape[-1], fmt.vector_bytes(x.shape[-1])
    if tuple(out.shape) != (*x.shape[:-1], width) or out.dtype != torch.uint8:
        raise PlanInputError("out", tuple(out.shape), msg("a uint8 tensor {value} for {id}",
                                                          value=(*x.shape[:-1], width), id=fmt.id))
    xf = x.float().contiguous().view(-1, n)
    rows = xf.shape[0]
    try:
        dest, staged = out.view(rows, width), None
    except RuntimeError:  # leading dims not flattenable (a slice of wider entries): stage, then copy
        dest = staged = torch.empty((rows, width), dtype=torch.uint8)
    scratch = scratch if scratch is not None else QuantScratch()
    ts = tensor_scale.reshape(()) if fmt.id == "nvfp4" else None
    ts256 = ts.float() * 256.0 if ts is not None else None  # exact: ts is in _TENSOR_SCALE_RANGE
    step = rows_per_chunk or max(1, CPU_CHUNK_ELEMENTS // n)
    with torch.no_grad():  # out= ops refuse inputs that require grad; nothing here is differentiable
        for start in range(0, rows, step):
            _quantize_chunk_cpu(xf[start:start + step], fmt, ts, ts256, dest[start:start + step], scratch)
        if staged is not None:
            out.copy_(staged.view(out.shape))


def _quantize_chunk_cpu(x, fmt: KVFormat, ts, ts256, out, scratch: QuantScratch) -> None:
    """One chunk of :func:`_quantize_blocks_cpu`: ``x [rows, n]`` float32 contiguous into
    ``out [rows, width]`` (``ts``: the nvfp4 tensor scale, ``ts256`` = 256 ``ts``). Each
    full-size step is one pass over the chunk, into a reused buffer."""
    rows, n = x.shape
    block = fmt.block_size
    nb, cb = n // block, code_bytes(fmt, n)
    a, t, u, codes, pairs = scratch.take(rows * n)
    xv = x.view(-1)
    mags = torch.abs(xv, out=a).view(-1, block)
    # block amax on the int32 bit patterns: non-negative floats order like their bits, and the
    # integer reduction is several times faster than the float one (no NaN handling)
    amax_bits = mags.view(torch.int32).amax(dim=-1)
    if fmt.id == "nvfp4":  # the generic path's expressions, with where() and the fp8 -> float cast replaced
        s = torch.div(amax_bits.view(torch.float32), E2M1_MAX).div_(ts)  # e4m3_round, in place:
        scale_bytes = s.clamp_(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn).view(torch.uint8)
        # scale = e4m3 value x ts = (value / 256) x (256 ts), one rounding of the same product;
        # 1 / scale: a zero scale gives inf, and only it (see _TENSOR_SCALE_RANGE): make it 0
        inv = _e4m3_values(scale_bytes, times=ts256).reciprocal_().nan_to_num_(posinf=0.0)
    else:
        # E8M0 code = biased exponent of amax - emax_elem, clamped (what e8m0_encode's frexp gives:
        # a subnormal or zero amax has exponent field 0 and clamps to code 0); the inverse scale
        # 2**(127 - code) is the float with exponent field 254 - code (>= 2: a normal float)
        emax = E2M1_EMAX if fmt.id == "mxfp4" else E4M3_EMAX
        code = torch.bitwise_right_shift(amax_bits, 23).sub_(emax).clamp_(0, 254)
        scale_bytes = code.to(torch.uint8)
        inv = torch.bitwise_left_shift(254 - code, 23).view(torch.float32)
    inv = inv.unsqueeze(-1)
    if fmt.element_bits == 8:  # mxfp8: x / 2**k (exact), saturated, cast to E4M3 straight into out
        y = torch.mul(xv.view(-1, block), inv, out=t.view(-1, block)).clamp_(-E4M3_MAX, E4M3_MAX)
        out[:, :cb].view(torch.float8_e4m3fn).copy_(y.view(rows, n))
    else:
        mags.mul_(inv)
        codes.copy_(_e2m1_biased_codes(a, xv.view(torch.int32), t, u))  # int32 -> uint8 keeps the low byte
        # two codes as one little-endian int16 (first channel in the low byte): v | v >> 4 has
        # first | second << 4 in its low byte, which the int16 -> uint8 cast into out keeps
        v = codes.view(torch.int16)
        torch.bitwise_right_shift(v, 4, out=pairs).bitwise_or_(v)
        out[:, :cb].copy_(pairs.view(rows, cb))
    out[:, cb:].copy_(scale_bytes.view(rows, nb))


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
        scratch: optional :class:`QuantScratch` to reuse across calls (CPU block formats).

    Returns:
        the tensor scale used (computed once from the whole ``x`` when needed).
    """
    if tensor_scale is None:
        tensor_scale = tensor_scale_for(x, format_id)
    fmt = probe_format(format_id)
    if _cpu_fast_path(x, fmt, tensor_scale):  # chunks itself, through one set of buffers
        _quantize_blocks_cpu(x, fmt, tensor_scale, out, scratch=scratch, rows_per_chunk=rows_per_chunk)
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


CPU_CHUNK_ELEMENTS = 1 << 19
"""Elements per chunk on the CPU (512 Ki float32 = 2 MiB: the temporaries stay in the L3 cache;
measured on a 2-vCPU VM, smaller chunks lose more to per-op dispatch, about 5 us an op,
than they gain in cache, and larger ones miss the cache)."""
CUDA_CHUNK_ELEMENTS = 1 << 25
"""Elements per chunk on a GPU (32 Mi, 128 MiB per float32 temporary: enough to keep HBM busy,
small enough to bound the fill's scratch to about 0.8 GB)."""


def default_rows_per_chunk(x) -> int:
    """Rows per chunk for a 2-D tensor on its device."""
    budget = CUDA_CHUNK_ELEMENTS if x.device.type == "cuda" else CPU_CHUNK_ELEMENTS
    return max(1, budget // max(1, x.shape[-1]))
