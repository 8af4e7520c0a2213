"""Minifloat element codes and block scales in torch: E2M1 (fp4) codes and their packing, E4M3 and E8M0 scales.

The pieces :mod:`planner.probe.quant` builds whole formats from (and :mod:`planner.probe.quant_cpu`, the CPU
path of the block formats).

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

Scale encodings: E4M3 (nvfp4's per-16 block scales; nearest, ties to even, saturating at +-448) and E8M0
(OCP MX v1.0: a power of two ``2 ** (code - 127)``, the MX formats' per-32 block scales).
"""

from __future__ import annotations

import sys

from planner.kv.formats import KVFormat, cdiv
from planner.probe._torch import require_torch

torch = require_torch()

_LITTLE_ENDIAN = sys.byteorder == "little"

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


def code_bytes(fmt: KVFormat, num_channels: int) -> int:
    """Bytes of a vector's element codes: ``ceil(n * element_bits / 8)``."""
    return cdiv(num_channels * fmt.element_bits, 8)
