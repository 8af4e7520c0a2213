"""``kvplan kv``: KV bytes of one sequence, from a catalog model, a config.json or a coefficient."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from planner.catalog import get_model
from planner.cli.args import bounded_float, nonneg_int, positive_int
from planner.config_import import layout_from_config, parse_config_text
from planner.errors import PlanInputError
from planner.formats import FORMATS, get_format
from planner.models import NATIVE, ModelSpec, coefficient_model
from planner.units import format_bytes, to_gb, to_gib


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``kv`` subcommand."""
    p = sub.add_parser("kv", help="KV bytes per token and per sequence",
                       description="KV-cache bytes of one sequence, per GPU.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="catalog model id (kvplan models)")
    src.add_argument("--config", type=Path, help="path to a Hugging Face config.json")
    src.add_argument("--bytes-per-token", type=bounded_float(0, 1e9, lo_open=True),
                     help="a reported KV coefficient, bytes per token")
    p.add_argument("--context", type=nonneg_int(10**9), default=1_000_000, help="sequence length, tokens")
    p.add_argument("--kv-format", default=NATIVE, help=f"native or one of {', '.join(FORMATS)}")
    p.add_argument("--tp", type=positive_int(1024), default=1, help="tensor-parallel degree (per-GPU figures)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def model_from_args(args: argparse.Namespace) -> ModelSpec:
    """The model named by --model, --config or --bytes-per-token."""
    if args.model is not None:
        return get_model(args.model)
    if args.config is not None:
        try:
            text = args.config.read_bytes()
        except OSError as exc:
            raise PlanInputError("config", str(args.config), f"a readable file ({exc.strerror})") from None
        fmt = None if args.kv_format == NATIVE else get_format(args.kv_format)
        layout = layout_from_config(parse_config_text(text), main_format=fmt)
        return ModelSpec(id="custom", name=args.config.name, groups=layout.groups,
                         max_context_tokens=layout.max_context_tokens, source=str(args.config),
                         config_report=layout.report)
    return coefficient_model(args.bytes_per_token)


def run(args: argparse.Namespace) -> int:
    """Print the estimate (text or JSON)."""
    model = model_from_args(args)
    fmt = args.kv_format
    if args.config is not None:
        fmt = NATIVE  # the format was applied when importing
    est = model.estimate(args.context, fmt, args.tp)
    out = {
        "model_id": est.model_id,
        "context_tokens": est.context_tokens,
        "kv_format": args.kv_format,
        "tp": est.tp,
        "kv_bytes_per_token": est.kv_bytes_per_token,
        "kv_bytes": est.kv_bytes,
        "kv_gb": to_gb(est.kv_bytes),
        "kv_gib": to_gib(est.kv_bytes),
        "state_bytes": est.state_bytes,
        "per": "GPU" if est.tp > 1 else "GPU (TP 1: one GPU holds the replica's KV)",
        "basis": est.basis,
        "groups": [g.__dict__ for g in est.groups],
    }
    if args.json:
        print(json.dumps(out))
    else:
        print(f"{model.name}: {est.context_tokens:,} tokens, KV format {args.kv_format}, TP {est.tp}")
        print(f"  KV bytes per token: {est.kv_bytes_per_token:,.6g} B ({est.basis})")
        print(f"  KV pool bytes:      {est.kv_bytes:,} B = {format_bytes(est.kv_bytes)} per GPU")
        if est.state_bytes:
            print(f"  state outside pool: {est.state_bytes:,} B = {format_bytes(est.state_bytes)} per session")
    return 0
