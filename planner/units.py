"""Byte units and the formatter that always shows decimal and binary figures.

GB = 10**9 B (SI, what vendors print on data sheets); GiB = 2**30 B (IEC, what
``nvidia-smi`` and most allocators report). kvplan keeps every quantity in
bytes (``int``) and converts only for display, always showing both.

>>> format_bytes(890_000_000)
'0.89 GB (0.829 GiB)'
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation

KB: int = 10**3
"""Kilobyte, 10**3 B (SI)."""
MB: int = 10**6
"""Megabyte, 10**6 B (SI)."""
GB: int = 10**9
"""Gigabyte, 10**9 B (SI). Vendors' "80 GB" is this unit."""
TB: int = 10**12
"""Terabyte, 10**12 B (SI)."""
KiB: int = 2**10
"""Kibibyte, 2**10 B (IEC)."""
MiB: int = 2**20
"""Mebibyte, 2**20 B (IEC). ``nvidia-smi`` reports memory in MiB."""
GiB: int = 2**30
"""Gibibyte, 2**30 B (IEC)."""
TiB: int = 2**40
"""Tebibyte, 2**40 B (IEC)."""


EiB: int = 2**60
"""Exbibyte, 2**60 B (IEC)."""


def cdiv(a: int, b: int) -> int:
    """Ceiling division of non-negative integers, exact at any size: ``cdiv(33, 16) == 3``."""
    return -(-a // b)


def to_gb(num_bytes: float) -> float:
    """Bytes -> GB (10**9 B). ``to_gb(890_000_000) == 0.89``."""
    return num_bytes / GB


def to_gib(num_bytes: float) -> float:
    """Bytes -> GiB (2**30 B). ``to_gib(2**30) == 1.0``."""
    return num_bytes / GiB


def gib_to_bytes(gib: float) -> int:
    """GiB -> whole bytes, rounded to the nearest byte.

    Raises:
        ValueError: ``gib`` is NaN or infinite.
    """
    if not math.isfinite(gib):
        raise ValueError(f"gib: {gib!r} is not a finite number")
    return int(round(gib * GiB))


def format_number(value: float) -> str:
    """A short human figure: 3 significant digits below 100, one decimal above.

    >>> format_number(0.828877), format_number(8.9), format_number(140.4013), format_number(0.00001234)
    ('0.829', '8.9', '140.4', '0.0000123')
    """
    if value == 0:
        return "0"
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return format_figure(value, 3)


def format_figure(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits in fixed point, never in scientific notation:
    whole with thousands separators from ``10**digits`` up, trailing zeros dropped.

    >>> format_figure(27_100.4), format_figure(0.000123), format_figure(1.2345, 4), format_figure(5.0, 4)
    ('27,100', '0.000123', '1.234', '5')
    """
    if value == 0 or not math.isfinite(value):
        return "0" if value == 0 else str(value)
    places = digits - 1 - math.floor(math.log10(abs(value)))
    if places <= 0:
        return f"{value:,.0f}"
    return f"{value:,.{places}f}".rstrip("0").rstrip(".")


def format_bytes(num_bytes: float) -> str:
    """Bytes as "X GB (Y GiB)": both units, each labelled, never one for the other.

    >>> format_bytes(2**30)
    '1.07 GB (1 GiB)'
    """
    return f"{format_number(to_gb(num_bytes))} GB ({format_number(to_gib(num_bytes))} GiB)"


DECIMAL_SUFFIXES = {"k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
"""Lower-case suffixes: powers of 1,000 (vLLM ``human_readable_int``: ``32k`` = 32,000)."""
BINARY_SUFFIXES = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
"""Upper-case suffixes: powers of 1,024 (vLLM ``human_readable_int``: ``32K`` = 32,768), whole numbers only."""
_TOKEN_SUFFIXES = {**DECIMAL_SUFFIXES, **BINARY_SUFFIXES}
_SUFFIXED = re.compile(r"([0-9]+(?:\.[0-9]+)?)([kmgtKMGT])")
"""A count with a suffix, as vLLM's ``human_readable_int`` reads it: digits, an optional decimal part, one letter."""
_GROUPED = re.compile(r"[0-9]{1,3}(?:,[0-9]{3})+")
"""An integer with thousands commas: 1,500,000 (commas only here, so 1,5M is never read as 15M)."""
_SPACED = re.compile(r"[0-9]{1,3}(?:[ \u00a0\u202f][0-9]{3})+")
"""An integer grouped by spaces (the SI and RAE style: 1 500 000; a no-break or narrow no-break space too)."""
_DOT_THOUSANDS = re.compile(r"[0-9]{1,3}(?:\.[0-9]{3})+")
"""128.000 or 1.000.000: a thousands separator in Spanish and German, a decimal point in English: refused."""
_PLAIN = re.compile(r"(?:[0-9]+(?:_[0-9]+)*(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A decimal figure with optional underscores between digits and an exponent: 1_500_000, 1e6, 1.5e6."""
MAX_TOKEN_TEXT_CHARS = 40
"""Longest token-count text read (a longer one is refused before parsing)."""


MIN_CONTEXT_TOKENS = 1
"""Shortest context accepted anywhere (plan, frontier, ``kvplan kv``): one token."""
MIN_TOKENS_PER_S = 0.001
"""Slowest decode or prefill speed accepted, tokens/s (one token in 1,000 s).

A speed is a divisor of seconds: a denormal such as 5e-324 tokens/s would turn
one replayed token into infinite seconds (and 0 x inf into NaN), so speeds are
bounded below as well as above."""
MAX_CONTEXT_TOKENS = 100_000_000
"""Largest context accepted anywhere (1e8 tokens; the longest published window is 1e7)."""


def parse_tokens(text: str, *, field: str = "context_tokens", minimum: int = 1, maximum: int = 10**8,
                 noun: str = "tokens") -> int:
    """A token count typed by a person: "1000000", "1,000,000", "1_000_000", "1e6", "128k", "32K", "1.5m".

    Suffixes are read as vLLM reads ``--max-model-len`` (vLLM ``vllm/utils/argparse_utils.py``, function
    ``human_readable_int``, formerly in ``vllm/engine/arg_utils.py``): lower case is decimal (``k`` 10**3,
    ``m`` 10**6, ``g`` 10**9, ``t`` 10**12), upper case is binary (``K`` 2**10, ``M`` 2**20, ``G`` 2**30,
    ``T`` 2**40), so ``32k`` is 32,000 and ``32K`` is 32,768, ``1m`` is 1,000,000 and ``1M`` is 1,048,576.
    A suffix follows digits with an optional decimal part (``25.6k``); a decimal part with a binary suffix
    is refused, as vLLM refuses it (``1.5K``), and so is anything else vLLM's pattern does not take before a
    suffix (``.5k``, ``1e3k``, ``1,000k``). kvplan's arithmetic is exact (``Decimal``) and a count that is
    not whole is refused (``1.0005k``), where vLLM truncates ``float(number) * 1000``. Without a suffix
    kvplan also reads forms vLLM does not (``1e6``, ``1,000,000``), never differently. Commas are thousands
    separators only in a whole number written in groups of three (``1,500,000``); any other comma is
    ambiguous (``1,5M`` is 1.5M in much of Europe, 15M with the commas dropped) and refused. Spaces group
    thousands too (``1 500 000``, the SI style). A dot is a decimal point, and a dot before exactly three digits
    with no suffix (``128.000``, ``1.000.000``) is refused: in Spanish it groups thousands.
    Underscores go between digits, as in Python (``1_500_000``). Arithmetic is exact (``Decimal``).

    >>> parse_tokens("128k"), parse_tokens("1.5m"), parse_tokens("1e6"), parse_tokens("1,500,000")
    (128000, 1500000, 1000000, 1500000)
    >>> parse_tokens("32k"), parse_tokens("32K"), parse_tokens("1M"), parse_tokens("25.6k")
    (32000, 32768, 1048576, 25600)
    >>> parse_tokens("1 500 000")
    1500000

    ``noun`` names what is counted in the error ("tokens", "sessions", "blocks", ...; "" for a plain
    number such as a port or a seed).

    Raises:
        PlanInputError: ambiguous, not a whole number, or outside [minimum, maximum].
    """
    from planner.errors import PlanInputError

    examples = "131072, 131,072, 128k, 128K, 1.5m, 1e6" if noun == "tokens" else "64, 1,000, 1k, 1e3"
    from planner.messages import msg

    template = ("a whole number of tokens in [{minimum:,}, {maximum:,}] (e.g. {examples}; a comma only between groups "
                "of three digits)" if noun == "tokens" else
                "a whole number in [{minimum:,}, {maximum:,}] (e.g. {examples}; a comma only between groups of three "
                "digits)" if not noun else
                "a whole number of {noun} in [{minimum:,}, {maximum:,}] (e.g. {examples}; a comma only between groups "
                "of three digits)")
    allowed = msg(template, minimum=minimum, maximum=maximum, examples=examples, noun=msg(noun))
    raw = str(text).strip()
    if len(raw) > MAX_TOKEN_TEXT_CHARS:
        raise PlanInputError(field, text, allowed)
    scale = 1
    if _DOT_THOUSANDS.fullmatch(raw):
        grouped = raw.replace(".", "")
        raise PlanInputError(field, text, msg("a whole number of {noun}, without a dot before three digits (a decimal "
                                              "point in English, a thousands separator in Spanish): {plain} or {spaced}",
                                              noun=msg(noun) if noun else msg("units"), plain=grouped,
                                              spaced=f"{int(grouped):,}".replace(",", " ")))
    if _GROUPED.fullmatch(raw):
        raw = raw.replace(",", "")
    elif _SPACED.fullmatch(raw):
        raw = re.sub(r"[ \u00a0\u202f]", "", raw)
    elif (suffixed := _SUFFIXED.fullmatch(raw)) is not None:
        raw, letter = suffixed.groups()
        scale = _TOKEN_SUFFIXES[letter]
        if letter in BINARY_SUFFIXES and "." in raw:
            raise PlanInputError(field, text, msg("a whole number before a binary suffix ({letter} = {scale:,}), as "
                                                  "vLLM reads it; for a decimal count use the decimal suffix: "
                                                  "{decimal}", letter=letter, scale=scale,
                                                  decimal=raw + letter.lower()))
    elif _PLAIN.fullmatch(raw):
        raw = raw.replace("_", "")
    else:
        raise PlanInputError(field, text, allowed)
    try:
        value = Decimal(raw) * scale
        whole = value == value.to_integral_value()
    except (InvalidOperation, ArithmeticError):  # an exponent past Decimal's range
        raise PlanInputError(field, text, allowed) from None
    if not whole or not minimum <= value <= maximum:
        raise PlanInputError(field, text, allowed)
    return int(value)


def format_duration(seconds: float) -> str:
    """A duration for people: µs, ms, s, min or h, three significant digits, thousands separators, never
    scientific notation.

    >>> format_duration(5.66), format_duration(0.02), format_duration(0.0000123), format_duration(7200)
    ('5.66 s', '20 ms', '12.3 µs', '2 h')
    >>> format_duration(0), format_duration(123.4), format_duration(5_000_000)
    ('0 s', '2.06 min', '1,389 h')
    """
    if not math.isfinite(seconds):
        return "unbounded" if seconds > 0 else "undefined"
    if seconds == 0:
        return "0 s"
    for scale, unit in ((3600.0, "h"), (60.0, "min"), (1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if abs(seconds) >= scale or unit == "µs":
            return f"{format_figure(seconds / scale)} {unit}"
    raise AssertionError("unreachable")  # pragma: no cover


def plural(count: int, singular: str, plural_form: str | None = None) -> str:
    """``count`` with thousands separators and the noun in the right number.

    >>> plural(1, "GPU"), plural(8, "GPU"), plural(1_000, "shared prefix", "shared prefixes")
    ('1 GPU', '8 GPUs', '1,000 shared prefixes')
    """
    return f"{count:,} {singular if count == 1 else (plural_form or singular + 's')}"
