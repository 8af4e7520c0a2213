"""The CPU path of the block formats (nvfp4, mxfp4, mxfp8): the bytes of :func:`planner.probe.quant.quantize`'s
generic path, faster.

Inputs must be finite floating-point tensors with channels in the last dim.
On the CPU, nvfp4 / mxfp4 / mxfp8 take their own
path (:func:`quantize_blocks_cpu`): row chunks of :data:`CPU_CHUNK_ELEMENTS`
values, buffers reused from chunk to chunk (:class:`QuantScratch`), in-place
and ``out=`` ops, block scales built from bits, and the magic-addition codes:
15 passes over each chunk for nvfp4 / mxfp4 (the last four write 1- or 2-byte
data), against 22 on fresh temporaries for the generic path. It writes the
same bytes as the generic path, which the tests check against the reference
pieces (``bucketize`` codes, ``e4m3_round``, ``e8m0_encode``).
"""

from __future__ import annotations

import functools

from planner.errors import PlanInputError
from planner.kv.formats import KVFormat
from planner.messages import msg
from planner.probe._torch import require_torch
from planner.probe.minifloat import (
    _LITTLE_ENDIAN,
    _MAGIC_BITS,
    E2M1_EMAX,
    E2M1_MAX,
    E4M3_EMAX,
    E4M3_MAX,
    _e2m1_biased_codes,
    code_bytes,
)

torch = require_torch()

CPU_CHUNK_ELEMENTS = 1 << 19
"""Elements per chunk on the CPU (512 Ki float32 = 2 MiB: the temporaries stay in the L3 cache;
measured on a 2-vCPU VM, smaller chunks lose more to per-op dispatch, about 5 us an op,
than they gain in cache, and larger ones miss the cache)."""
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


def cpu_fast_path(x, fmt: KVFormat, tensor_scale) -> bool:
    """Whether :func:`quantize_blocks_cpu` takes ``x``: a CPU floating tensor of whole blocks, a
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


def quantize_blocks_cpu(x, fmt: KVFormat, tensor_scale, out, *, scratch=None, rows_per_chunk=None) -> None:
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
    """One chunk of :func:`quantize_blocks_cpu`: ``x [rows, n]`` float32 contiguous into
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
