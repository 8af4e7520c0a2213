"""Plan-input flags derived from :class:`planner.plan.PlanInputs`, shared by ``kvplan plan`` and ``kvplan frontier``.

One flag per PlanInputs field (``--gpu-memory-utilization`` for
``gpu_memory_utilization``; a few keep their short names: ``--model``,
``--gpu``, ``--context``, ``--target-sessions``). The converters only parse
what was typed (numbers, token suffixes through :func:`planner.units.parse_tokens`,
``none`` for an optional field); ranges and choices are checked once, by
PlanInputs, so the CLI and the model can never disagree. Help texts are the
fields' descriptions and ranges.
"""

from __future__ import annotations

import argparse
import sys
import typing
from pathlib import Path

from planner.cli.args import add_accelerators_flag, apply_user_gpu, finite_number, user_accelerators
from planner.errors import PlanInputError
from planner.plan import PlanInputs, field_range, rebase
from planner.files.planfile import load as load_plan_file
from planner.units import parse_tokens

UNSET = object()
"""What a converter returns for ``none`` typed for an optional field (argparse's None means "not given")."""

FLAG_NAMES: dict[str, str] = {
    "model_id": "--model",
    "gpu_id": "--gpu",
    "context_tokens": "--context",
    "target_sessions_per_gpu": "--target-sessions",
    "accelerator": "--accelerator",
}
"""PlanInputs fields whose flag is not ``--`` + the field name with dashes."""


def flag_of(field: str) -> str:
    """The command-line flag of a PlanInputs field."""
    return FLAG_NAMES.get(field, "--" + field.replace("_", "-"))


def _optional(info) -> bool:
    return type(None) in typing.get_args(info.annotation)


def _base_type(info) -> object:
    args = [a for a in typing.get_args(info.annotation) if a is not type(None)]
    return args[0] if args and typing.get_origin(info.annotation) is not typing.Literal else info.annotation


def _converter(field: str):
    """Parse one typed value for ``field`` (no range check: PlanInputs does that)."""
    info = PlanInputs.model_fields[field]
    kind = _base_type(info)
    optional = _optional(info)

    def convert(text: str):
        if optional and text.strip().lower() in ("none", "null"):
            return UNSET
        if kind is int:
            try:
                return parse_tokens(text, field=field, minimum=-(10**15), maximum=10**15)
            except PlanInputError:
                rng = field_range(PlanInputs, field) or "a whole number"
                hint = " (e.g. 8k, 1e6, 128K)" if "tokens" in field else ""  # suffixes are for token counts
                raise argparse.ArgumentTypeError(f"{text!r} is not allowed; expected {rng}{hint}") from None
        if kind is float:
            return finite_number(text)
        return text

    convert.__name__ = field
    return convert


def _help(field: str) -> str:
    info = PlanInputs.model_fields[field]
    parts = [info.description or field]
    if (rng := field_range(PlanInputs, field)) is not None:
        parts.append(rng)
    literal = _base_type(info)
    if typing.get_origin(literal) is typing.Literal:
        choices = [*map(str, typing.get_args(literal)), *(["none"] if _optional(info) else [])]
        parts.append("one of " + ", ".join(choices))
    parts.append(f"default {info.default}")
    return "; ".join(parts).replace("%", "%%")


def add_input_flags(parser: argparse.ArgumentParser) -> None:
    """Add one flag per PlanInputs field, plus ``--plan FILE``."""
    for field, info in PlanInputs.model_fields.items():
        if info.annotation is bool:
            parser.add_argument(flag_of(field), dest=field, action=argparse.BooleanOptionalAction, default=None,
                                help=_help(field))
        else:
            parser.add_argument(flag_of(field), dest=field, type=_converter(field), default=None, help=_help(field))
    parser.add_argument("--plan", dest="plan_file", type=Path, default=None,
                        help="start from this plan file (JSON); flags given here override its fields")
    add_accelerators_flag(parser)


def given_fields(args: argparse.Namespace) -> dict[str, object]:
    """The PlanInputs fields given on the command line (an optional field typed as ``none`` is given as None)."""
    fields = {}
    for field in PlanInputs.model_fields:
        value = getattr(args, field, None)
        if value is UNSET:
            fields[field] = None
        elif value is not None:
            fields[field] = value
    return fields


def inputs_from_args(args: argparse.Namespace) -> PlanInputs:
    """PlanInputs from the flags that were given, over ``--plan``'s file if any (else over the defaults).

    The change goes through :func:`planner.plan.rebase`: a measured figure that
    no longer applies (another model, format or GPU) is dropped, and each
    notice is printed as one line on stderr.
    """
    plan_path = getattr(args, "plan_file", None)
    base = PlanInputs()
    if plan_path is not None:
        loaded = load_plan_file(plan_path)
        base = loaded.inputs
        if loaded.notice:
            print(f"kvplan: note: {loaded.notice}", file=sys.stderr)
    fields = given_fields(args)
    if "gpu_id" in fields and "accelerator" not in fields:
        fields = {**fields, "accelerator": None}  # a new GPU replaces a user-defined one
    inputs, notices = rebase(base, **apply_user_gpu(fields, user_accelerators(args)))
    for notice in notices:
        print(f"kvplan: note: {notice}", file=sys.stderr)
    return inputs
