"""``kvplan models`` and ``kvplan gpus``: the catalog, with sources."""

from __future__ import annotations

import argparse
import json

from planner.catalog.entries import GPUS, models
from planner.cli.args import add_accelerators_flag, user_accelerators
from planner.kv.notes import window_cap
from planner.units import format_bytes, format_figure, to_gib

LONG_CONTEXT_TOKENS = 1_000_000
"""Length at which the listed slope is taken: windows are full, only growing KV counts."""
SHORT_CONTEXT_TOKENS = 1_000
"""Length at which the per-token bytes inside every window are taken (windows of this catalog are longer)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``models`` and ``gpus`` subcommands."""
    p = sub.add_parser("models", help="list catalog models")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=run_models)
    g = sub.add_parser("gpus", help="list catalog accelerators")
    g.add_argument("--json", action="store_true")
    add_accelerators_flag(g)
    g.set_defaults(func=run_gpus)


def run_models(args: argparse.Namespace) -> int:
    """Print the models."""
    rows = []
    for m in models().values():
        est = m.estimate(LONG_CONTEXT_TOKENS, None)
        short = m.estimate(SHORT_CONTEXT_TOKENS, None)
        rows.append({"id": m.id, "name": m.name, "kv_bytes_per_token": est.kv_bytes_per_token,
                     "kv_bytes_per_token_short": short.kv_bytes / SHORT_CONTEXT_TOKENS,
                     "window_capped_bytes": m.capped_bytes(LONG_CONTEXT_TOKENS, "native"),
                     "basis": est.basis, "native_kv_format": m.native_format_label,
                     "max_context_tokens": m.max_context_tokens, "total_params": m.total_params,
                     "weight_format": m.weight_format, "source": m.source})
        cap = window_cap(m)
        rows[-1].update({"window_tokens": cap.window_tokens if cap else None,
                         "kv_bytes_per_token_in_window": cap.kv_bytes_per_token_in_window if cap else None,
                         "window_note": cap.sentence if cap else None})
    if args.json:
        print(json.dumps(rows, allow_nan=False))
    else:
        print(f"{'model':<22} {'B/token, 1k tokens':>19} {'B/token past windows':>21} {'window-capped':>24}  "
              f"{'max context':>11}  name")
        for r in rows:
            capped = format_bytes(r["window_capped_bytes"]) if r["window_capped_bytes"] else "none"
            max_ctx = f"{r['max_context_tokens']:,}" if r["max_context_tokens"] else "unknown"
            print(f"{r['id']:<22} {format_figure(r['kv_bytes_per_token_short'], 6):>19} {format_figure(r['kv_bytes_per_token'], 6):>21} "
                  f"{capped:>24}  {max_ctx:>11}  {r['name']}")
    return 0


def run_gpus(args: argparse.Namespace) -> int:
    """Print the accelerators."""
    rows = [{"id": g.id, "name": g.name, "hbm_bytes": g.hbm_bytes, "hbm_gib": to_gib(g.hbm_bytes),
             "memory_reported": g.memory_reported, "vendor_capacity": g.vendor_capacity,
             "hbm_bandwidth_bytes_per_s": g.hbm_bandwidth_bytes_per_s, "bf16_dense_flops": g.bf16_dense_flops,
             "cuda_total_bytes": g.cuda_total_bytes, "cuda_total_source": g.cuda_total_source,
             "source": g.source} for g in [*GPUS.values(), *(a.to_gpu_spec() for a in user_accelerators(args).values())]]
    if args.json:
        print(json.dumps(rows, allow_nan=False))
    else:
        for r in rows:
            how = "reported" if r["memory_reported"] else "vendor"
            cuda = "" if r["cuda_total_bytes"] is None else f"; as CUDA reports it {format_bytes(r['cuda_total_bytes'])}"
            print(f"{r['id']:<10} {format_bytes(r['hbm_bytes']):>24} ({how})  {r['name']}{cuda}")
    return 0
