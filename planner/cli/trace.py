"""``kvplan trace``: measured prefix-cache hit rates from a request trace.

Replays FILE (a Mooncake JSONL, Azure CSV or generic JSONL trace, or a bundled
``sample:NAME``) through an LRU prefix cache of the given capacity and TTL, and
with ``--sweep`` prints the whole hit-rate-vs-capacity curve (stack distances,
one pass). Semantics: ``planner.traces.replay``; formats: ``docs/traces.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time

from planner.plan import MIN_TOKENS_PER_S
from planner.cli.args import bounded_float, nonneg_int, positive_int
from planner.errors import PlanInputError
from planner.io import require_regular_file
from planner.traces import (
    FORMATS, capacity_curve, concurrency, kv_bytes_per_token_for, read_trace, replay, reuse_profile, summarize,
    typical_context_tokens,
)
from planner.traces.readers import MAX_BLOCK_TOKENS
from planner.traces.samples import SAMPLES
from planner.traces.stack import MAX_CAPACITY_BLOCKS, blocks_for_bytes
from planner.units import GB, GiB, format_bytes, gib_to_bytes

DEFAULT_SESSION_DECODE_TOKENS_PER_S = 50.0
"""Decode speed of one request for the concurrency estimate, tokens/s (the plan's default)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``trace`` subcommand."""
    samples = ", ".join(f"sample:{n}" for n in SAMPLES)
    p = sub.add_parser("trace", help="measured prefix-cache hit rates from a request trace",
                       description="Replay a request trace through an LRU prefix cache of a given size and TTL.")
    p.add_argument("file", metavar="FILE", help=f"trace file, or a bundled sample: {samples}")
    p.add_argument("--format", choices=FORMATS, default=None, help="trace format (default: detected)")
    p.add_argument("--block-tokens", type=positive_int(MAX_BLOCK_TOKENS), default=None,
                   help="tokens per hash_ids block (generic JSONL; Mooncake is 512)")
    p.add_argument("--model", default=None, help="catalog model id: prices blocks in bytes (kvplan models)")
    p.add_argument("--kv-format", default=None, help="KV format id for --model (default: native)")
    cap = p.add_mutually_exclusive_group()
    cap.add_argument("--capacity-gib", type=bounded_float(0, 10_000_000), default=None,
                     help="cache capacity, GiB (2^30 B); needs --model")
    cap.add_argument("--capacity-blocks", type=nonneg_int(MAX_CAPACITY_BLOCKS), default=None,
                     help="cache capacity, blocks (default: unlimited)")
    p.add_argument("--ttl-s", type=bounded_float(0, 1e9), default=None,
                   help="entries unused this many seconds expire (default: no TTL; 0 = nothing persists)")
    p.add_argument("--session-decode-tokens-per-s", type=bounded_float(MIN_TOKENS_PER_S, 1e7),
                   default=DEFAULT_SESSION_DECODE_TOKENS_PER_S,
                   help="decode speed of one request, for the concurrency estimate (default 50)")
    p.add_argument("--sweep", action="store_true", help="also compute hit rate vs capacity (whole curve)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _num(x: float | None) -> float | None:
    """JSON-safe float: NaN and inf become null."""
    return None if x is None or not math.isfinite(x) else float(x)


def _progress(fraction: float, label: str) -> None:
    if sys.stderr.isatty():
        print(f"\rkvplan trace: {label} {fraction:4.0%}", end="", file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Read, replay, print."""
    if not str(args.file).startswith("sample:"):
        require_regular_file(args.file, "trace")  # a device, FIFO or directory is refused before any read
    trace = read_trace(args.file, format=args.format, block_tokens=args.block_tokens)
    per_token = None
    if args.model is not None:
        per_token = kv_bytes_per_token_for(args.model, typical_context_tokens(trace), args.kv_format)
    elif args.kv_format is not None:
        raise PlanInputError("--model", None, "a catalog model id when --kv-format is given")
    capacity_blocks = args.capacity_blocks
    if args.capacity_gib is not None:
        if per_token is None:
            raise PlanInputError("--model", None, "a catalog model id, to turn --capacity-gib into blocks")
        if trace.has_prefix_hashes:
            capacity_blocks = blocks_for_bytes(gib_to_bytes(args.capacity_gib), per_token, trace.block_tokens)

    result = replay(trace, capacity_blocks=capacity_blocks, ttl_s=args.ttl_s, kv_bytes_per_token=per_token)
    summary = summarize(trace)
    conc = concurrency(trace, session_decode_tokens_per_s=args.session_decode_tokens_per_s)
    block_bytes = per_token * trace.block_tokens if (per_token is not None and trace.block_tokens) else None
    cap_bytes = result.capacity_bytes
    if args.capacity_gib is not None and not trace.has_prefix_hashes:
        cap_bytes = float(gib_to_bytes(args.capacity_gib))

    curve = None
    if args.sweep and trace.has_prefix_hashes:
        started = time.perf_counter()
        print(f"kvplan trace: computing the hit-rate curve over {trace.num_block_refs:,} block references",
              file=sys.stderr)
        profile = reuse_profile(trace, progress=_progress)
        frame = capacity_curve(profile, ttl_s=args.ttl_s, kv_bytes_per_token=per_token)
        if sys.stderr.isatty():
            print(file=sys.stderr)
        print(f"kvplan trace: curve done in {time.perf_counter() - started:.2f} s", file=sys.stderr)
        curve = [{
            "capacity_blocks": int(r.capacity_blocks), "capacity_bytes": _num(r.capacity_bytes),
            "capacity_gb": _num(r.capacity_gb), "capacity_gib": _num(r.capacity_gib),
            "block_hit_rate": float(r.block_hit_rate), "token_hit_rate": float(r.token_hit_rate),
        } for r in frame.itertuples()]

    data = {
        "trace": trace.name, "format": trace.format, "source": trace.source,
        "requests": trace.num_requests, "duration_s": summary.duration_s,
        "mean_rate_per_s": summary.mean_rate_per_s,
        "block_tokens": trace.block_tokens, "block_refs": trace.num_block_refs,
        "unique_blocks": trace.num_unique_blocks, "input_tokens": result.num_input_tokens,
        "malformed_rows": trace.malformed.num_malformed,
        "malformed_examples": [{"line": line, "reason": reason} for line, reason in trace.malformed.examples],
        "notes": list(trace.notes),
        "hit_rates_measurable": result.measurable, "message": result.message,
        "model": args.model, "kv_bytes_per_token": per_token, "block_bytes": block_bytes,
        "capacity_blocks": result.capacity_blocks, "capacity_bytes": _num(cap_bytes),
        "capacity_gb": _num(cap_bytes / GB) if cap_bytes is not None else None,
        "capacity_gib": _num(cap_bytes / GiB) if cap_bytes is not None else None,
        "ttl_s": result.ttl_s,
        "hit_blocks": result.num_hit_blocks, "hit_tokens": result.num_hit_tokens,
        "block_hit_rate": result.block_hit_rate, "token_hit_rate": result.token_hit_rate,
        "session_decode_tokens_per_s": conc.session_decode_tokens_per_s,
        "peak_concurrent_requests": conc.peak_concurrent_requests,
        "mean_concurrent_requests": conc.mean_concurrent_requests,
    }
    if args.sweep:
        data["curve"] = curve
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0

    print(f"{trace.name} ({trace.format}): {trace.num_requests:,} requests over {summary.duration_s / 60:.1f} min, "
          f"{summary.mean_rate_per_s:.3g} requests/s")
    print(f"  {trace.malformed.summary()}")
    for note in trace.notes:
        print(f"  note: {note}")
    if not result.measurable:
        print(f"  {result.message}")
    else:
        print(f"  {trace.num_block_refs:,} block references of {trace.block_tokens:,} tokens, "
              f"{trace.num_unique_blocks:,} distinct")
        size = "unlimited" if result.capacity_blocks is None else f"{result.capacity_blocks:,} blocks"
        if cap_bytes is not None:
            size += f" = {format_bytes(cap_bytes)}"
        if per_token is not None:
            size += f" at {per_token:,.6g} B/token ({args.model})"
        ttl = "none" if result.ttl_s is None else f"{result.ttl_s:g} s"
        print(f"  cache: {size}; TTL {ttl}")
        print(f"  block hit rate: {result.block_hit_rate:.1%}   token hit rate: {result.token_hit_rate:.1%}")
    print(f"  concurrency at {conc.session_decode_tokens_per_s:g} tokens/s per request: "
          f"peak {conc.peak_concurrent_requests:,}, mean {conc.mean_concurrent_requests:.3g}")
    if curve:
        print("\n  capacity_blocks   capacity                   block_hit  token_hit")
        for row in curve:
            shown = format_bytes(row["capacity_bytes"]) if row["capacity_bytes"] is not None else ""
            print(f"  {row['capacity_blocks']:>15,}   {shown:<25}  {row['block_hit_rate']:>8.1%}  "
                  f"{row['token_hit_rate']:>8.1%}")
    return 0
