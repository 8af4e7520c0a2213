"""Live probe with torch: formats, the pool, memory cap, lock, time limit, JSON.

Skipped as a module only when torch is not installed (CI installs it). GPU tests
are marked ``gpu`` and skipped without a CUDA device. Expected values are worked
by hand next to each number (OCP MX v1.0, NVIDIA's NVFP4 blog, docs/sources.md);
no timing assertions.
"""

import json
import math
import threading

import pytest

torch = pytest.importorskip("torch", reason="the live probe needs torch: pip install 'kvplan[probe]'")

from planner.errors import PlanInputError  # noqa: E402
from planner.kv.formats import get_format  # noqa: E402
from planner.probe import (  # noqa: E402
    ProbeBusyError,
    ProbeTimeoutError,
    load_probe_result,
    plan_pool,
    run_probe,
)
from planner.probe import minifloat as mf  # noqa: E402
from planner.probe import pool as pool_mod  # noqa: E402
from planner.probe import quant as q  # noqa: E402
from planner.probe import quant_cpu as qc  # noqa: E402
from planner.probe import run as run_mod  # noqa: E402
from planner.probe.memory import HostMemory  # noqa: E402
from planner.units import GiB  # noqa: E402

V41 = "deepseek-v4.1-flash"
CUDA = torch.cuda.is_available()
needs_cuda = pytest.mark.skipif(not CUDA, reason="needs a CUDA device: torch.cuda.is_available() is False here")


# ---------------------------------------------------------------------------
# E2M1 codes
# ---------------------------------------------------------------------------

def test_e2m1_code_table_is_exact():
    # OCP MX v1.0 Table 4: E2M1 = 1 sign, 2 exponent (bias 1), 1 mantissa;
    # 0b0000..0b0111 = 0, 0.5 (subnormal), 1, 1.5, 2, 3, 4, 6; 0b1xxx the negatives
    expected = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
    assert mf.e2m1_code_table().tolist() == expected
    assert mf.e2m1_decode(torch.arange(16, dtype=torch.uint8)).tolist() == expected
    assert torch.signbit(mf.e2m1_code_table()[8])    # code 8 is -0


@pytest.mark.parametrize("value, code", [
    (0.0, 0), (0.5, 1), (1.0, 2), (1.5, 3), (2.0, 4), (3.0, 5), (4.0, 6), (6.0, 7),   # on the grid
    (0.25, 0),     # tie between 0 (code 0) and 0.5 (code 1): to the even code 0
    (0.75, 2),     # tie 0.5 / 1.0: to code 2
    (1.25, 2),     # tie 1.0 / 1.5: code 2
    (1.75, 4),     # tie 1.5 / 2.0: code 4
    (2.5, 4),      # tie 2 / 3: code 4
    (3.5, 6),      # tie 3 / 4: code 6
    (5.0, 6),      # tie 4 / 6: code 6
    (5.01, 7), (4.99, 6), (0.26, 1), (2.51, 5),
    (7.0, 7), (1e6, 7),                     # saturates at 6
    (-1.0, 10), (-6.5, 15), (-0.1, 8),      # sign in bit 3; -0.1 rounds to -0
])
def test_e2m1_rounding_nearest_ties_to_even(value, code):
    assert mf.e2m1_encode(torch.tensor([value])).item() == code


def test_e2m1_fast_path_matches_bucketize_reference():
    gen = torch.Generator().manual_seed(0)
    mids = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0])
    near = torch.cat([mids, torch.nextafter(mids, torch.zeros(7)), torch.nextafter(mids, torch.full((7,), 9.0))])
    values = torch.cat([torch.linspace(-8, 8, 200_001), torch.randn(200_000, generator=gen) * 3, near, -near])
    assert torch.equal(mf.e2m1_encode(values), mf.e2m1_encode_reference(values))


def test_e2m1_magic_addition_matches_reference_on_a_bit_sweep():
    # e2m1_encode (and the CPU quantize path) round with three float32 additions of 2**22-based
    # constants (minifloat._e2m1_biased_codes); against bucketize on every bit pattern within 64 ulps
    # of each grid value and midpoint, every 977th pattern from 0 to 16, zero and the first
    # subnormals, and the largest floats, both signs (checked once offline: every pattern below 2**25)
    points = torch.tensor(list(mf.E2M1_VALUES) + [0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0, 7.0, 8.0])
    near = (points.view(torch.int32).unsqueeze(1) + torch.arange(-64, 65, dtype=torch.int32)).flatten().clamp(min=0)
    sweep = torch.arange(0, 0x41800000, 977, dtype=torch.int32)
    tiny = torch.arange(0, 2000, dtype=torch.int32)
    big = torch.tensor([2.0**22, 2.0**23, 2.0**24 + 2, 1e30, torch.finfo(torch.float32).max]).view(torch.int32)
    mags = torch.cat([near, sweep, tiny, big]).view(torch.float32)
    values = torch.cat([mags, -mags])
    assert torch.equal(mf.e2m1_encode(values), mf.e2m1_encode_reference(values))


def test_pack_unpack_round_trip_low_nibble_first():
    # [1, 2, 15] -> byte 0 = 1 | 2 << 4 = 0x21 = 33; byte 1 = 15 (odd length: high nibble 0)
    assert mf.pack_fp4(torch.tensor([1, 2, 15], dtype=torch.uint8)).tolist() == [33, 15]
    gen = torch.Generator().manual_seed(1)
    for n in (1, 2, 15, 16, 513):
        codes = torch.randint(0, 16, (7, n), generator=gen, dtype=torch.uint8)
        packed = mf.pack_fp4(codes)
        assert packed.shape == (7, math.ceil(n / 2)) and packed.dtype == torch.uint8
        assert torch.equal(mf.unpack_fp4(packed, n), codes)
        assert torch.equal(mf.fp4_values(packed, n), mf.e2m1_decode(codes))


def test_packed_bytes_view_as_float4_x2():
    packed = mf.pack_fp4(torch.tensor([1, 2, 3, 4], dtype=torch.uint8))
    view = mf.as_float4_x2(packed)
    if hasattr(torch, "float4_e2m1fn_x2"):   # torch >= 2.8
        assert view.dtype == torch.float4_e2m1fn_x2 and view.element_size() == 1
    assert view.data_ptr() == packed.data_ptr() and view.view(torch.uint8).tolist() == [0x21, 0x43]


# ---------------------------------------------------------------------------
# Scales
# ---------------------------------------------------------------------------

def test_e4m3_scale_rounding():
    # 0.3 = 1.2 x 2**-2; E4M3 has 3 mantissa bits: neighbours 1.125 and 1.25 x 2**-2 = 0.28125, 0.3125;
    # 0.3 is 0.0125 from 0.3125 and 0.01875 from 0.28125 -> 0.3125, bits 0 0101 010 = 0x2A = 42
    s = mf.e4m3_round(torch.tensor([0.3, 500.0, 448.0, 2.0**-9]))
    assert s.float().tolist() == [0.3125, 448.0, 448.0, 2.0**-9]   # 500 saturates; 2**-9 is the smallest subnormal
    assert s.view(torch.uint8).tolist()[0] == 42


def test_nvfp4_block_scale_is_e4m3_of_amax_over_6():
    # one 16-channel block with amax 1.8 and tensor scale 1: scale = e4m3(1.8 / 6) = e4m3(0.3) = 0.3125 (0x2A)
    x = torch.zeros(1, 16)
    x[0, 0] = 1.8
    x[0, 1] = -0.3125
    data, ts = q.quantize(x, "nvfp4", tensor_scale=torch.tensor(1.0))
    assert data.shape == (1, 9)                    # 8 B of codes + 1 E4M3 scale
    assert data[0, 8].item() == 42
    # 1.8 / 0.3125 = 5.76 -> 6 (code 7); -0.3125 / 0.3125 = -1 -> code 10; packed low nibble first: 7 | 10 << 4
    assert data[0, 0].item() == 7 | (10 << 4)
    back = q.dequantize(data, "nvfp4", 16, tensor_scale=ts)
    assert back[0, 0].item() == 6 * 0.3125 and back[0, 1].item() == -0.3125


@pytest.mark.parametrize("amax, emax, code", [
    (1.0, 2, 125),      # floor(log2 1) = 0; 0 - 2 = -2 -> 127 - 2 = 125, scale 0.25 (1.0 / 0.25 = 4, E2M1's 4)
    (6.0, 2, 127),      # floor(log2 6) = 2 -> 2**0
    (7.99, 2, 127),     # still 2**0: 7.99 will saturate to 6 (the OCP rule)
    (8.0, 2, 128),      # floor(log2 8) = 3 -> 2**1
    (448.0, 8, 127),    # E4M3: floor(log2 448) = 8; 8 - 8 = 0
    (512.0, 8, 128),
    (0.0, 2, 0),        # all-zero block: smallest scale, 2**-127
    (2.0**-140, 2, 0),  # below the range: clamped to code 0
])
def test_e8m0_power_of_two_scales(amax, emax, code):
    got = mf.e8m0_encode(torch.tensor([amax]), emax)
    assert got.item() == code
    value = mf.e8m0_decode(got).item()
    assert value == 2.0 ** (code - 127)
    mantissa, _ = math.frexp(value)
    assert mantissa == 0.5       # an exact power of two


def test_e8m0_decode_edges():
    vals = mf.e8m0_decode(torch.tensor([0, 127, 254, 255], dtype=torch.uint8)).tolist()
    assert vals[:3] == [2.0**-127, 1.0, 2.0**127] and math.isnan(vals[3])


# ---------------------------------------------------------------------------
# Whole formats
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", q.PROBE_FORMATS)
@pytest.mark.parametrize("n", [1, 15, 16, 17, 128, 512, 576])
def test_byte_layout_matches_planner_vector_bytes(fmt, n):
    x = torch.randn(3, n, generator=torch.Generator().manual_seed(n))
    data, ts = q.quantize(x, fmt)
    assert data.dtype == torch.uint8 and data.shape == (3, get_format(fmt).vector_bytes(n))
    assert q.dequantize(data, fmt, n, tensor_scale=ts).shape == (3, n)


def test_golden_vector_bytes():
    # OCP MX v1.0, NVIDIA's NVFP4 blog, docs/sources.md: nvfp4 512 ch = 256 + 32 = 288; mxfp4 128 = 64 + 4 = 68; mxfp8 512 = 512 + 16 = 528
    for fmt, n, width in (("nvfp4", 512, 288), ("mxfp4", 128, 68), ("mxfp8", 512, 528), ("bf16", 128, 256),
                          ("fp8", 128, 128)):
        assert q.quantize(torch.randn(2, n), fmt)[0].shape[-1] == width


def test_grid_values_round_trip_exactly():
    # E2M1 values times a power of two, block amax 6 x 2**-3: MXFP4 stores them exactly
    grid = torch.tensor(mf.E2M1_VALUES * 4) * 2.0**-3
    x = torch.stack([grid, -grid])
    data, _ = q.quantize(x, "mxfp4")
    assert torch.equal(q.dequantize(data, "mxfp4", 32), x)


def test_e4m3_bytes_to_float_via_float16_is_exact():
    # the CPU path reads block scales back as float16 (byte << 7) x 256: every non-negative
    # E4M3 byte but NaN (0x7F), subnormals 0x01..0x07 included
    b = torch.arange(0, 0x7F, dtype=torch.uint8)
    assert torch.equal(qc._e4m3_values(b), b.view(torch.float8_e4m3fn).float())


def reference_block_bytes(x, fmt_id, tensor_scale=None):
    """nvfp4 / mxfp4 / mxfp8 bytes of ``x [rows, n]`` from the reference pieces only: float
    amax, e4m3_round or e8m0_encode, a division-free 1 / scale, bucketize codes, pack_fp4."""
    block = get_format(fmt_id).block_size
    blocks = x.float().view(x.shape[0], -1, block)
    amax = blocks.abs().amax(-1)
    if fmt_id == "nvfp4":
        ts = q.tensor_scale_for(x, "nvfp4") if tensor_scale is None else tensor_scale
        scale_fp8 = mf.e4m3_round(amax / 6 / ts)
        scale = scale_fp8.float() * ts
        inv = torch.where(scale > 0, 1 / scale, torch.zeros_like(scale))
        scale_bytes = scale_fp8.view(torch.uint8)
    else:
        scale_bytes = mf.e8m0_encode(amax, 2 if fmt_id == "mxfp4" else 8)
        inv = 1 / mf.e8m0_decode(scale_bytes)      # 2**(127 - code): exact
    y = torch.copysign(blocks.abs() * inv.unsqueeze(-1), blocks).flatten(-2)
    if fmt_id == "mxfp8":
        codes = y.clamp(-448, 448).to(torch.float8_e4m3fn).view(torch.uint8)
    else:
        codes = mf.pack_fp4(mf.e2m1_encode_reference(y))
    return torch.cat([codes, scale_bytes], dim=-1)


def hard_inputs(n):
    """Rows that probe every corner of the block formats: synthetic KV at several magnitudes,
    zero blocks and -0.0, exact E2M1 / E4M3 ties after a power-of-two scale and their float
    neighbours, blocks 10**6 times smaller than the others, subnormal values."""
    gen = torch.Generator().manual_seed(7)
    x = synthetic(96, n, seed=3)
    zeros = x.clone()
    zeros[:, :32] = 0.0
    zeros[::2, 40:48] = -0.0
    grid = torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0, 7.0, 7.5])
    ties = grid[torch.randint(0, len(grid), (96, n), generator=gen)]
    ties *= torch.where(torch.rand(96, n, generator=gen) < 0.5, -1.0, 1.0)
    ties[:, ::32] = 6.0                                          # block amax 6 x 2**k
    ties *= 2.0 ** torch.randint(-30, 30, (96, 1), generator=gen).float()
    up = torch.nextafter(ties, torch.full_like(ties, float("inf")))
    down = torch.nextafter(ties, torch.zeros_like(ties))
    small = x.clone()
    small[:, : n // 2] *= 1e-6
    return [x, x * 1e-30, x * 1e30, zeros, ties, up, down, small, x * 1e-41]


@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4", "mxfp8"])
def test_cpu_block_path_equals_reference_bytes(fmt):
    # quantize's CPU path (chunks, reused buffers, magic-addition codes, bit-built scales) writes
    # byte for byte what the reference pieces give, for every corner input, whole and in chunks
    # into a slice of wider entries; nvfp4 also with tensor scales from other data (block values
    # far above 6, or many zero block scales) and one outside the path's range (the generic path)
    scratch = qc.QuantScratch()
    for x in hard_inputs(512):
        scales = [None]
        if fmt == "nvfp4":
            ts = q.tensor_scale_for(x, "nvfp4")
            if ts < 2.0**-100:  # subnormal inputs: 1 / scale overflows in any path (out of scope)
                continue
            scales = [None, ts * 0.01, ts * 100, torch.tensor(2.0**-101)]
        for ts in scales:
            expected = reference_block_bytes(x, fmt, ts)
            data, used = q.quantize(x, fmt, tensor_scale=ts)
            assert torch.equal(data, expected)
            assert qc.cpu_fast_path(x, get_format(fmt), used) == (fmt != "nvfp4" or float(used) != 2.0**-101)
            width = expected.shape[1]
            wide = torch.zeros(x.shape[0], 3, width + 5, dtype=torch.uint8)
            q.quantize_rows(x, fmt, out=wide[:, 1, 2:2 + width], tensor_scale=used, rows_per_chunk=37, scratch=scratch)
            assert torch.equal(wide[:, 1, 2:2 + width], expected)
            assert not wide[:, 0].any() and not wide[:, 2].any() and not wide[:, 1, :2].any()


def test_cpu_block_path_other_shapes_and_dtypes():
    # 3-D input into a non-flattenable slice (the pool's layout), bfloat16 input, 576 channels
    # (36 nvfp4 blocks, 18 MX blocks), and a row count that leaves a partial chunk
    x = synthetic(300, 576, seed=4).view(100, 3, 576)
    for fmt in ("nvfp4", "mxfp4", "mxfp8"):
        width = get_format(fmt).vector_bytes(576)
        entries = torch.zeros(100, 3 * width + 7, dtype=torch.uint8)
        target = entries[:, 7:].view(100, 3, width)
        _, ts = q.quantize(x, fmt, out=target)
        assert torch.equal(target.reshape(300, width), reference_block_bytes(x.reshape(300, 576), fmt, ts))
        assert not entries[:, :7].any()
        xb = x.bfloat16()
        assert torch.equal(q.quantize(xb, fmt)[0].reshape(300, width), reference_block_bytes(xb.reshape(300, 576), fmt))


def synthetic(rows, n, seed=0):
    return pool_mod.synthetic_kv((rows, n), generator=torch.Generator().manual_seed(seed), device=torch.device("cpu"),
                                 outliers=pool_mod.outlier_channels(n, seed))


def block_amax(x, block):
    return x.abs().view(x.shape[0], -1, block).amax(-1, keepdim=True).expand(-1, -1, block).reshape(x.shape)


def test_error_bounds_per_element():
    x = synthetic(2048, 512)
    # nvfp4: s = amax/6 rounded to E4M3 (relative error <= 2**-4), so s_dec <= s x 17/16; the largest E2M1 gap is
    # 4 -> 6, half of it 1 x s_dec; saturation of values up to 6 x 16/15 costs at most 0.4 x s_dec.
    # => |err| <= s_dec <= amax_block / 6 x 17/16
    data, ts = q.quantize(x, "nvfp4")
    err = (q.dequantize(data, "nvfp4", 512, tensor_scale=ts) - x).abs()
    assert (err <= block_amax(x, 16) / 6 * 17 / 16 + 1e-6).all()
    # mxfp4: X = 2**(floor(log2 amax) - 2), amax / X in [4, 8): rounding <= 1 x X, saturation 8 -> 6 <= 2 x X
    # => |err| <= 2 X <= amax / 2
    data, _ = q.quantize(x, "mxfp4")
    err = (q.dequantize(data, "mxfp4", 512) - x).abs()
    assert (err <= block_amax(x, 32) / 2).all()
    # mxfp8: X = 2**(floor(log2 amax) - 8), amax / X in [256, 512): E4M3 half-ulp at [256, 448] is 16 X,
    # saturation 512 -> 448 is 64 X <= amax / 4
    data, _ = q.quantize(x, "mxfp8")
    err = (q.dequantize(data, "mxfp8", 512) - x).abs()
    assert (err <= block_amax(x, 32) / 4).all()
    # bf16: 8 significant bits, round to nearest: relative error <= 2**-8 (the unit roundoff)
    data, _ = q.quantize(x, "bf16")
    err = (q.dequantize(data, "bf16", 512) - x).abs()
    assert (err <= x.abs() * 2.0**-8).all()


def test_relative_rmse_on_fixed_seed():
    # fp8 E4M3 per tensor: 4 significant bits, relative error <= 2**-4 per normal element -> rel RMSE < 0.0625;
    # bf16 (8 significant bits) -> < 2**-8. The 4-bit bands are regression bands around the values measured at seed 0
    # (nvfp4 0.093, mxfp4 0.13-0.16, mxfp8 0.031-0.036), not hand goldens.
    got = {f: pool_mod.measure_quality(f, 512, "main", device=torch.device("cpu"), seed=0, num_elements=1 << 19)
           for f in ("bf16", "fp8", "mxfp8", "nvfp4", "mxfp4")}
    assert got["bf16"].rel_rmse < 2.0**-8
    assert got["fp8"].rel_rmse < 0.0625
    assert 0.02 < got["mxfp8"].rel_rmse < 0.05
    assert 0.07 < got["nvfp4"].rel_rmse < 0.12
    assert 0.10 < got["mxfp4"].rel_rmse < 0.20
    assert got["nvfp4"].rel_rmse < got["mxfp4"].rel_rmse   # finer blocks, finer scales


# ---------------------------------------------------------------------------
# The pool
# ---------------------------------------------------------------------------

def test_small_cpu_pool_measured_equals_predicted():
    # 16,384 tokens = 1,024 whole blocks: 890 x 16,384 = 14,581,760 B, planner and pool alike
    r = run_probe(V41, 16_384, "nvfp4", device="cpu", measure_formats=False)
    assert r.pool_bytes == r.predicted_bytes == r.measured_bytes == 14_581_760
    assert r.measured_bytes_per_token == 890.0 and r.measured_over_predicted == 1.0
    # per-tensor FP32 scales, kept apart: nvfp4 groups of 1 and 3 layers, one scale each = 16 B
    assert r.tensor_scale_bytes == 16
    assert r.released and r.fill == "tile" and r.reserved_bytes is None


def test_partly_used_blocks_are_measured():
    # V4.1 at 1,000 tokens (test_probe_layout): pool 897,120 B in whole blocks, planner 890,000 B
    r = run_probe(V41, 1000, "nvfp4", device="cpu", measure_formats=False)
    assert r.pool_bytes == r.measured_bytes == 897_120 and r.predicted_bytes == 890_000
    assert r.measured_bytes_per_token == 897.12


@pytest.mark.parametrize("mode", ["tile", "quantize"])
def test_fill_writes_every_block(mode):
    layout = plan_pool("llama-3.1-8b", 40, "nvfp4")     # 3 blocks per layer, the last one partly used
    pool = pool_mod.allocate(layout, torch.device("cpu"))
    pool.data[0].zero_()
    pool_mod.fill(pool, mode=mode, seed=3, deadline=pool_mod.Deadline(60))
    data = pool.data[0]
    assert (data.view(32, 3, -1) != 0).any(-1).all()     # every block of every layer written
    # decode layer 0's K of head 0 back: finite, roughly unit scale with outliers
    g = layout.groups[0]
    width = get_format("nvfp4").vector_bytes(128)
    k0 = data[0].reshape(-1, g.entry_bytes)[:, :width]
    values = q.dequantize(k0, "nvfp4", 128, tensor_scale=pool.scales[0][0, 0])
    assert torch.isfinite(values).all() and 0.5 < values.std().item() < 5
    assert pool.storage_bytes() == layout.pool_bytes
    pool.release()
    assert pool.storage_bytes() == 0


def fake_host(monkeypatch, available):
    monkeypatch.setattr(run_mod, "host_memory", lambda: HostMemory(total=8 * GiB, available=available))


def test_memory_cap_refuses_oversize_request_with_tokens_that_fit(monkeypatch):
    # free 1 GiB, max fraction 0.5 -> cap 536,870,912 B; less fill scratch 6 x 4 B x 4 Mi = 100,663,296 B
    # and the 4 MiB scale reserve 4,194,304 B -> 432,013,312 B for the pool. At 890 B per token in whole
    # 16-token blocks: 432,013,312 / 890 = 485,408.2 -> 485,408 tokens (30,338 blocks, 432,013,120 B).
    fake_host(monkeypatch, 1 * GiB)
    with pytest.raises(PlanInputError) as info:
        run_probe(V41, 1_000_000, "nvfp4", device="cpu", max_fraction=0.5, measure_formats=False)
    assert info.value.field == "tokens" and info.value.value == 1_000_000
    assert "at most 485,408 tokens" in str(info.value)
    # and the probe is free again afterwards
    assert run_mod.probe_lock().acquire(blocking=False)
    run_mod.probe_lock().release()


@pytest.mark.parametrize("fraction", [0, -0.1, 1.01, float("nan"), "half", True])
def test_bad_fraction(fraction):
    with pytest.raises(PlanInputError) as info:
        run_probe(V41, 16, "nvfp4", device="cpu", max_fraction=fraction)
    assert info.value.field == "max_fraction"


def test_cuda_without_a_device_is_bad_input():
    if CUDA:
        pytest.skip("a CUDA device is present")
    with pytest.raises(PlanInputError) as info:
        run_probe(V41, 16, "nvfp4", device="cuda")
    assert info.value.field == "device" and "cpu" in info.value.allowed


def test_lock_second_probe_is_refused_or_waits():
    lock = run_mod.probe_lock()
    held = threading.Event()
    release = threading.Event()

    def holder():       # stands for a running probe in another thread
        with lock:
            held.set()
            release.wait(10)

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert held.wait(10)
        with pytest.raises(ProbeBusyError, match="another probe is running"):
            run_probe(V41, 16, "nvfp4", device="cpu", measure_formats=False)                # no wait: refused
        with pytest.raises(ProbeBusyError, match="waited 0.05 s"):
            run_probe(V41, 16, "nvfp4", device="cpu", measure_formats=False, lock_timeout_s=0.05)
        results = []
        waiter = threading.Thread(target=lambda: results.append(
            run_probe(V41, 16, "nvfp4", device="cpu", measure_formats=False, lock_timeout_s=30)))
        waiter.start()          # waits for the lock ...
        release.set()           # ... which the "running probe" now gives back
        waiter.join(60)
        assert len(results) == 1 and results[0].measured_bytes == 14_240   # 16 x 890
    finally:
        release.set()
        t.join(10)


def test_time_limit_stops_and_releases():
    with pytest.raises(ProbeTimeoutError, match="time limit"):
        run_probe(V41, 100_000, "nvfp4", device="cpu", time_limit_s=1e-6)
    r = run_probe(V41, 16, "nvfp4", device="cpu", measure_formats=False)   # lock released, probe usable
    assert r.released


def test_result_json_round_trip_and_forgery():
    r = run_probe(V41, 4096, "nvfp4", device="cpu")
    assert {x.kv_format for x in r.quality} == {"nvfp4", "mxfp4", "mxfp8"}   # main, indexer, window ring
    assert all(t.copy_gbps > 0 and t.quantize_over_copy > 0 for t in r.throughput)
    back = load_probe_result(r.to_json())
    assert back == r
    data = json.loads(r.to_json())
    data["measured_bytes_per_token"] = data["measured_bytes_per_token"] * 10
    with pytest.raises(PlanInputError) as info:
        load_probe_result(json.dumps(data))
    assert info.value.field == "measured_bytes_per_token"


def test_cli_json_output(capsys):
    from planner.cli import main

    code = main(["probe", "--model", V41, "--tokens", "1024", "--kv-format", "nvfp4", "--device", "cpu",
                 "--no-formats", "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    r = load_probe_result(out)
    assert r.pool_bytes == r.measured_bytes == 911_360   # 1,024 tokens = 64 blocks: 890 x 1,024


def test_cli_text_output(capsys):
    from planner.cli import main

    assert main(["probe", "--model", V41, "--tokens", "1024", "--device", "cpu", "--no-formats"]) == 0
    out = capsys.readouterr().out
    assert "measured/predicted" in out and "890.0" in out and "released: yes" in out


# ---------------------------------------------------------------------------
# GPU
# ---------------------------------------------------------------------------

@pytest.mark.gpu
@needs_cuda
def test_gpu_pool_allocated_delta_matches_pool():
    # 16,384 tokens: 14,581,760 B of pool in 4 tensors (scales allocated before the baseline); the caching
    # allocator rounds each block to 512 B, and every tensor here is a multiple of 512 already:
    # 1 x 1,024 x 16 x 288 = 4,718,592 = 512 x 9,216; 1 x 1,024 x 16 x 68 = 1,114,112 = 512 x 2,176;
    # 3 x 1,024 x 8 x 288 = 7,077,888 = 512 x 13,824; 3 x 1,024 x 8 x 68 = 1,671,168 = 512 x 3,264
    r = run_probe(V41, 16_384, "nvfp4", device="cuda", measure_formats=False)
    assert r.device == "cuda" and r.cuda_version
    assert r.measured_bytes == 14_581_760
    assert r.released and r.residual_bytes == 0
    assert r.reserved_bytes is not None and r.reserved_bytes >= r.measured_bytes


@pytest.mark.gpu
@needs_cuda
@pytest.mark.parametrize("fmt", ["nvfp4", "mxfp4", "mxfp8", "fp8", "bf16"])
def test_gpu_quantize_matches_cpu_bytes(fmt):
    x = synthetic(512, 512, seed=5)
    ts = q.tensor_scale_for(x, fmt)
    cpu, _ = q.quantize(x, fmt, tensor_scale=ts)
    gpu, _ = q.quantize(x.cuda(), fmt, tensor_scale=ts.cuda() if ts is not None else None)
    assert torch.equal(gpu.cpu(), cpu)


@pytest.mark.gpu
@needs_cuda
def test_gpu_probe_formats_and_quantize_fill():
    r = run_probe(V41, 100_000, "nvfp4", device="cuda", fill="quantize")
    assert r.fill == "quantize" and r.released
    assert all(t.source_dtype == "bfloat16" and t.copy_gbps > 0 for t in r.throughput)
    assert load_probe_result(r.to_json()) == r


def test_doctests():
    import doctest

    import planner.probe

    for mod in (mf, q, qc, planner.probe):
        assert doctest.testmod(mod).failed == 0
