"""Typed argparse converters shared by the subcommands.

Each returns a validated value or raises :class:`argparse.ArgumentTypeError`,
which the parser turns into a one-line error (exit code 2) naming the flag.
"""

from __future__ import annotations

import argparse
import math


def _number(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    return value


def _whole(text: str, minimum: int, maximum: int) -> int:
    """A whole number as people type it (131072, 1e6, 1,000,000, 128k, 1M): :func:`planner.units.parse_tokens`."""
    from planner.errors import PlanInputError
    from planner.units import parse_tokens

    try:
        return parse_tokens(text, field="value", minimum=minimum, maximum=maximum)
    except PlanInputError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number in [{minimum:,}, {maximum:,}]") from None


def positive_int(maximum: int = 10**12):
    """Converter for an integer in [1, maximum] (accepts '1e6', '128k', '1M' when whole)."""

    def convert(text: str) -> int:
        return _whole(text, 1, maximum)

    return convert


def nonneg_int(maximum: int = 10**12):
    """Converter for an integer in [0, maximum] (accepts '1e6', '128k', '1M' when whole)."""

    def convert(text: str) -> int:
        return _whole(text, 0, maximum)

    return convert


def bounded_float(lo: float, hi: float, *, lo_open: bool = False):
    """Converter for a finite float in [lo, hi] (or (lo, hi] with ``lo_open``)."""

    def convert(text: str) -> float:
        value = _number(text)
        ok = (value > lo if lo_open else value >= lo) and value <= hi
        if not ok:
            bracket = "(" if lo_open else "["
            raise argparse.ArgumentTypeError(f"{text!r} is not in {bracket}{lo:g}, {hi:g}]")
        return value

    return convert
