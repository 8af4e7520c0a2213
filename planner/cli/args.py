"""Typed argparse converters shared by the subcommands.

Each returns a validated value or raises :class:`argparse.ArgumentTypeError`,
which the parser turns into a one-line error (exit code 2) naming the flag.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from planner.errors import PlanInputError, number_text, short_repr
from planner.units import MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS, parse_tokens


def finite_number(text: str) -> float:
    """A command-line float: finite, or an argparse error naming the text."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number")
    if value == 0.0 and any(c in "123456789" for c in text.lower().partition("e")[0]):
        raise argparse.ArgumentTypeError(f"{text!r} is too small to be told from 0 (it underflows a 64-bit float); "
                                         "expected 0 or a number of magnitude at least 2.2e-308")
    if 0.0 < abs(value) < sys.float_info.min:
        raise argparse.ArgumentTypeError(f"{text!r} is a subnormal float that loses its digits; expected 0 or a "
                                         "number of magnitude at least 2.2e-308")
    return value


def _whole(text: str, minimum: int, maximum: int, noun: str) -> int:
    """A count of ``noun`` as people type it, read by the one count parser (:func:`planner.units.parse_tokens`)."""
    try:
        return parse_tokens(text, field="count", minimum=minimum, maximum=maximum, noun=noun)
    except PlanInputError as exc:
        raise argparse.ArgumentTypeError(f"{short_repr(text)} is not allowed; expected {exc.allowed}") from None


def positive_int(maximum: int, noun: str):
    """Converter for a count of ``noun`` (named in the error: "tokens", "sessions", "GPUs", ...) in
    [1, maximum]: 131072, 131,072, 1_000_000, 1e6, 128k, 32K (32,768), 1.5m (when whole)."""

    def convert(text: str) -> int:
        return _whole(text, 1, maximum, noun)

    return convert


def nonneg_int(maximum: int, noun: str):
    """Converter for a count of ``noun`` in [0, maximum]: as :func:`positive_int`, 0 allowed."""

    def convert(text: str) -> int:
        return _whole(text, 0, maximum, noun)

    return convert


def context_tokens_arg(text: str) -> int:
    """Converter for a context length: the plan's range (``PlanInputs.context_tokens``,
    [MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS]) on every subcommand."""
    return _whole(text, MIN_CONTEXT_TOKENS, MAX_CONTEXT_TOKENS, "tokens")


def bounded_float(lo: float, hi: float, *, lo_open: bool = False):
    """Converter for a finite float in [lo, hi] (or (lo, hi] with ``lo_open``)."""

    def convert(text: str) -> float:
        value = finite_number(text)
        ok = (value > lo if lo_open else value >= lo) and value <= hi
        if not ok:
            bracket = "(" if lo_open else "["
            raise argparse.ArgumentTypeError(f"{text!r} is not in {bracket}{number_text(lo)}, {number_text(hi)}]")
        return value

    return convert


def config_path(text: str) -> Path:
    """A ``--config`` value as a path; an empty one is refused by argparse (``Path("")`` would read as ``.``)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("'' is not allowed; expected a config.json or a checkpoint directory")
    return Path(text)


def add_accelerators_flag(parser: argparse.ArgumentParser) -> None:
    """``--accelerators FILE``: user-defined accelerators (TOML or JSON, :mod:`planner.catalog.accelerators`)."""
    from pathlib import Path

    parser.add_argument("--accelerators", type=Path, default=None, metavar="FILE",
                        help="TOML or JSON file of your own accelerators; their ids work wherever a catalog id does")


def user_accelerators(args: argparse.Namespace) -> dict:
    """The accelerators of ``--accelerators`` by id ({} without the flag).

    Raises:
        PlanInputError: an unreadable or invalid file.
    """
    from planner.catalog.accelerators import load_accelerators

    path = getattr(args, "accelerators", None)
    return load_accelerators(path) if path is not None else {}


def apply_user_gpu(fields: dict, user: dict) -> dict:
    """Plan fields with a user accelerator id in ``gpu_id`` turned into ``gpu_id='custom'`` + ``accelerator``."""
    gpu = fields.get("gpu_id")
    if gpu in user:
        return {**fields, "gpu_id": "custom", "accelerator": user[gpu].to_link()}
    return fields
