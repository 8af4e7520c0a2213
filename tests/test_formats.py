"""Number formats (OCP MX v1.0, NVIDIA's NVFP4 blog): bytes per vector with block scales, priced per element, never per block.

Every expected value is worked by hand in the comment next to it.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.errors import PlanInputError
from planner.kv.formats import FORMATS, get_format
from planner.kv.kinds import FullAttentionGroup, vector_formula


@pytest.mark.parametrize("fmt, bits", [
    ("fp32", 32.0),
    ("bf16", 16.0),
    ("fp16", 16.0),
    ("fp8", 8.0),          # per-tensor FP32 scale: a few bytes per layer, not per token
    ("fp8-e5m2", 8.0),
    ("mxfp8", 8.25),       # 8 + 8/32 (OCP MX v1.0: E8M0 per 32)
    ("nvfp4", 4.5),        # 4 + 8/16 (NVIDIA NVFP4: E4M3 per 16)
    ("mxfp4", 4.25),       # 4 + 8/32
    ("int8", 8.125),       # 8 + 16/128 (FP16 scale per group of 128)
    ("int4", 4.125),       # 4 + 16/128
    ("q8_0", 8.5),         # llama.cpp block_q8_0: 34 B per 32 = 8.5 bit
    ("q4_0", 4.5),         # llama.cpp block_q4_0: 18 B per 32 = 4.5 bit
])
def test_bits_per_element(fmt, bits):
    assert get_format(fmt).bits_per_element == bits


@pytest.mark.parametrize("fmt, n, expected", [
    ("nvfp4", 512, 288),   # 512 x 4 / 8 = 256 B + ceil(512/16) = 32 E4M3 scales = 288 (NVIDIA's NVFP4 blog; V4.1 main entry, docs/sources.md)
    ("mxfp4", 128, 68),    # 128 x 4 / 8 = 64 B + 128/32 = 4 E8M0 scales = 68 (V4.1 indexer key)
    ("mxfp8", 512, 528),   # 512 B + 512/32 = 16 scales = 528 (V4.1 window ring, per token per layer)
    ("q8_0", 32, 34),      # one block_q8_0: 32 int8 + one FP16 scale
    ("q4_0", 32, 18),      # one block_q4_0: 16 B of nibbles + one FP16 scale
    ("q8_0", 128, 136),    # 128 + 4 blocks x 2 B = 136 (one Llama head)
    ("q8_0", 33, 37),      # 33 B + ceil(33/32) = 2 scales x 2 B: a partial block still has a scale
    ("nvfp4", 17, 11),     # ceil(17 x 4 / 8) = 9 B + ceil(17/16) = 2 scales = 11
    ("bf16", 128, 256),    # 128 x 2 B
    ("fp8", 128, 128),     # 128 x 1 B
    ("int4", 128, 66),     # 64 B + one FP16 scale per 128 = 66
    ("bf16", 0, 0),
])
def test_vector_bytes(fmt, n, expected):
    assert get_format(fmt).vector_bytes(n) == expected


def test_block_formats_priced_per_element_not_per_block():
    # §8 fault: one peer charged q8_0 at 34 B per *element* (32x over).
    # Llama-3-8B geometry (32 layers, 8 KV heads, head_dim 128) in q8_0:
    # per head 136 B (above) x (K + V) x 8 heads x 32 layers = 136 x 2 x 8 x 32 = 69,632 B/token.
    layer = FullAttentionGroup(name="full", num_layers=32, kv_format=get_format("q8_0"),
                               num_kv_heads=8, k_head_dim=128, v_head_dim=128)
    assert layer.growing_bytes_per_token(1) == 69_632
    assert layer.growing_bytes_per_token(1) != 2 * 32 * 8 * 128 * 34  # the per-element fault: 2,228,224


def test_vector_formula_shows_the_numbers():
    assert vector_formula(get_format("q8_0"), 128) == \
        "128 x 8 bit / 8 + ceil(128 / 32) x 16 bit / 8 = 128 + 8 = 136 B"


@pytest.mark.parametrize("bad", ["fp7", "", None, 3, "BF16 "])
def test_unknown_format_names_the_known_ones(bad):
    with pytest.raises(PlanInputError) as exc:
        get_format(bad)
    assert exc.value.field == "kv_format" and "nvfp4" in exc.value.allowed


def test_negative_length_is_an_error():
    with pytest.raises(PlanInputError):
        get_format("bf16").vector_bytes(-1)


@given(fmt=st.sampled_from(sorted(FORMATS)), n=st.integers(min_value=0, max_value=1 << 20))
def test_vector_bytes_bounds(fmt, n):
    # ceil(n e / 8) + ceil(n / b) s / 8 lies in [n x bits_per_element / 8, that + 1 B + one scale]:
    # scales are paid per block of n's elements, never per element.
    f = get_format(fmt)
    v = f.vector_bytes(n)
    one_scale = f.scale_bits // 8 if f.block_size else 0
    assert n * f.bits_per_element / 8 <= v <= n * f.bits_per_element / 8 + 1 + one_scale
    assert f.vector_bytes(n + 1) >= v
