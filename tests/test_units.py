"""Units: GB is 10^9 B, GiB is 2^30 B, both shown and labelled."""

import math

import pytest

from planner.errors import PlanInputError
from planner.units import GB, GiB, MiB, format_bytes, gib_to_bytes, parse_tokens, to_gb, to_gib


def test_constants():
    assert GB == 1_000_000_000
    assert GiB == 1_073_741_824
    assert MiB == 1_048_576


def test_h100_reported_memory():
    # nvidia-smi on an H100 SXM: 81,559 MiB = 85,520,809,984 B = 79.65 GiB
    b = 81_559 * MiB
    assert b == 85_520_809_984
    assert round(to_gib(b), 2) == 79.65
    assert round(to_gb(b), 2) == 85.52


def test_format_shows_both_units_labelled():
    assert format_bytes(890_000_000) == "0.89 GB (0.829 GiB)"
    assert format_bytes(2**30) == "1.07 GB (1 GiB)"
    assert format_bytes(0) == "0 GB (0 GiB)"


@pytest.mark.parametrize("text,tokens", [("1000000", 1_000_000), ("1,000,000", 1_000_000), ("1e6", 1_000_000),
                                         ("1m", 1_000_000), ("128k", 128_000), (" 2048 ", 2048)])
def test_parse_tokens(text, tokens):
    assert parse_tokens(text) == tokens


# vLLM vllm/utils/argparse_utils.py, human_readable_int (formerly vllm/engine/arg_utils.py): lower-case suffixes
# are decimal {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}, upper-case binary {"K": 2**10, "M": 2**20,
# "G": 2**30, "T": 2**40}; its docstring: '1k' -> 1,000, '1K' -> 1,024, '25.6k' -> 25,600.
@pytest.mark.parametrize("text,tokens", [
    ("32k", 32_000), ("32K", 32 * 1024), ("1k", 1_000), ("1K", 1_024), ("25.6k", 25_600),
    ("1m", 1_000_000), ("1M", 1024 * 1024), ("1.5m", 1_500_000), ("128K", 128 * 1024),
    ("0.1g", 100_000_000),
])
def test_token_suffixes_as_vllm_reads_them(text, tokens):
    assert parse_tokens(text) == tokens


@pytest.mark.parametrize("text", ["1.5K", "2.0M", "1.5G"])
def test_a_decimal_before_a_binary_suffix_is_refused_as_vllm_refuses_it(text):
    # vLLM: "Decimals are not allowed with binary suffixes like K. Did you mean to use 1.5k instead?"
    with pytest.raises(PlanInputError, match="binary suffix") as info:
        parse_tokens(text)
    assert text[:-1] + text[-1].lower() in str(info.value)


def test_32K_and_32k_in_every_token_field():
    """The CLI's token flags, a link's ctx, a plan file's counts and the pages' boxes all read through parse_tokens."""
    from planner.cli.plan_inputs import _converter
    from planner.plan import make_inputs

    assert _converter("context_tokens")("32K") == 32_768 and _converter("context_tokens")("32k") == 32_000
    assert _converter("output_tokens")("1K") == 1_024
    assert make_inputs(context_tokens="32K").context_tokens == 32_768
    assert make_inputs(context_tokens="32k").context_tokens == 32_000


@pytest.mark.parametrize("text", ["", "abc", "1.5", "-1", "0", "1e99", "nan", "inf", "x" * 1000])
def test_parse_tokens_rejects(text):
    with pytest.raises(PlanInputError, match="context_tokens"):
        parse_tokens(text)


def test_gib_to_bytes_rejects_nan():
    with pytest.raises(ValueError, match="gib"):
        gib_to_bytes(math.nan)


@pytest.mark.parametrize("text,tokens", [("1 000 000", 1_000_000), ("128\u00a0000", 128_000), ("131\u202f072", 131_072)])
def test_parse_tokens_reads_space_grouped_thousands(text, tokens):
    # SI / RAE style grouping: what the Spanish pages pre-fill their token boxes with
    assert parse_tokens(text) == tokens


@pytest.mark.parametrize("text,plain", [("128.000", "128000"), ("1.000.000", "1000000"), ("1.024", "1024")])
def test_a_dot_before_three_digits_is_refused_not_read_as_a_decimal(text, plain):
    # '128.000' typed on the Spanish page meant 128,000 tokens and was read as 128
    with pytest.raises(PlanInputError, match="without a dot before three digits") as err:
        parse_tokens(text)
    assert plain in str(err.value)
