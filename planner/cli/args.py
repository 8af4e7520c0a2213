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


def positive_int(maximum: int = 10**12):
    """Converter for an integer in [1, maximum] (accepts '1e6' when whole)."""

    def convert(text: str) -> int:
        value = _number(text)
        if not value.is_integer() or not 1 <= value <= maximum:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number in [1, {maximum:,}]")
        return int(value)

    return convert


def nonneg_int(maximum: int = 10**12):
    """Converter for an integer in [0, maximum]."""

    def convert(text: str) -> int:
        value = _number(text)
        if not value.is_integer() or not 0 <= value <= maximum:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number in [0, {maximum:,}]")
        return int(value)

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
