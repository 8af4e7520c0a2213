"""``kvplan plan``: sessions per GPU and request rate for a model on an accelerator.

Figures are per GPU. ``--host-ram-gib`` and ``--ssd-gib`` are per GPU too (a
node's host RAM or SSD divided by its GPUs); left out, they come from the
accelerator's typical node (``planner.tiers.NODES``). ``--json`` prints the
whole :class:`planner.capacity.PlanResult`, including ``tiers`` (bytes per
tier), ``miss_probability``, ``replay_tokens_per_turn``,
``replay_seconds_per_turn``, ``ttft_s`` and the inputs behind them.

``--plan FILE`` starts from a plan file (``docs/plan-files.md``); flags given on
the command line override its fields. ``--save FILE`` writes the plan's inputs
as a plan file. ``--csv`` writes the bytes the Plan page's "Download plan CSV"
gives for the same inputs (one writer: :func:`planner.export.to_csv_bytes`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from pathlib import Path

from planner.capacity import (
    MAX_SECONDS,
    MAX_SESSIONS_PER_GPU,
    MAX_SHARED_PREFIXES,
    MAX_TIER_GIB,
    MIN_TOKENS_PER_S,
    PlanInputs,
    make_inputs,
    plan,
    plan_frame,
)
from planner.cli.args import bounded_float, nonneg_int, positive_int
from planner.errors import PlanInputError
from planner.export import to_csv_bytes
from planner.planfile import load as load_plan_file
from planner.planfile import save as save_plan_file
from planner.tiers import HOST_LINKS, SSD_LINKS
from planner.units import format_bytes

# flag -> PlanInputs field; converters validate early, PlanInputs validates again.
_FLAGS: dict[str, tuple[str, object, str]] = {
    "--model": ("model_id", str, "catalog model id"),
    "--gpu": ("gpu_id", str, "catalog accelerator id (kvplan gpus), or custom with --hbm-gib"),
    "--gpus-per-replica": ("gpus_per_replica", positive_int(1024), "GPUs splitting one replica's weights"),
    "--hbm-gib": ("hbm_gib", bounded_float(0, 100_000, lo_open=True), "HBM per GPU, GiB (default: reported)"),
    "--gpu-memory-utilization": ("gpu_memory_utilization", bounded_float(0, 1, lo_open=True), "fraction of HBM"),
    "--weights-gib": ("weights_gib", bounded_float(0, 10_000_000), "weights of one replica, GiB"),
    "--weight-format": ("weight_format", str, "weight storage format (bf16, fp8, mxfp4, ...)"),
    "--reserve-gib": ("reserve_gib", bounded_float(0, 100_000), "runtime reserve per GPU, GiB"),
    "--context": ("context_tokens", positive_int(100_000_000), "context tokens per session"),
    "--output-tokens": ("output_tokens", nonneg_int(100_000_000), "generated tokens per request"),
    "--hit-rate": ("hit_rate", bounded_float(0, 1), "prefix hit rate in [0, 1]"),
    "--kv-format": ("kv_format", str, "native or a KV format id"),
    "--decode-tokens-per-s": ("decode_tokens_per_s", bounded_float(MIN_TOKENS_PER_S, 1e9),
                              "aggregate decode throughput per GPU"),
    "--session-decode-tokens-per-s": ("session_decode_tokens_per_s", bounded_float(MIN_TOKENS_PER_S, 1e7),
                                      "decode speed of one session"),
    "--shared-prefixes": ("shared_prefixes", positive_int(MAX_SHARED_PREFIXES),
                          "distinct shared prefixes per GPU, each stored once (default 1)"),
    "--pause-mean-s": ("pause_mean_s", bounded_float(0, MAX_SECONDS),
                       "mean pause between a session's turns, s (default 0: no pauses)"),
    "--pause-distribution": ("pause_distribution", str, "exponential (default) or fixed"),
    "--ttl-s": ("ttl_s", bounded_float(0, MAX_SECONDS),
                "host-RAM TTL of window state, s (default 60; 0 = never persisted, as vLLM)"),
    "--prefill-tokens-per-s": ("prefill_tokens_per_s", bounded_float(MIN_TOKENS_PER_S, 1e9),
                               "prefill throughput per GPU for replay and recompute (default 20,000)"),
    "--host-ram-gib": ("host_ram_gib", bounded_float(0, MAX_TIER_GIB),
                       "host RAM per GPU for KV, GiB (node RAM / GPUs per node; default: the node's)"),
    "--ssd-gib": ("ssd_gib", bounded_float(0, MAX_TIER_GIB),
                  "SSD per GPU for KV, GiB (node SSD / GPUs per node; default: the node's)"),
    "--host-link": ("host_link", str, "host RAM <-> GPU link: auto, " + ", ".join(HOST_LINKS)),
    "--ssd-link": ("ssd_link", str, "SSD link: auto, " + ", ".join(SSD_LINKS)),
    "--target-sessions": ("target_sessions_per_gpu", nonneg_int(MAX_SESSIONS_PER_GPU),
                          "sessions to carry per GPU, running + paused (default: what HBM holds)"),
}
PLAN_FLAGS = _FLAGS
"""Flag -> (PlanInputs field, converter, help); shared with ``kvplan frontier``."""

MEASURED_FLAGS: dict[str, tuple[str, object, str]] = {
    "--measured-kv-bytes-per-token": ("measured_kv_bytes_per_token", bounded_float(0.001, 1e9),
                                      "KV bytes per token measured by kvplan probe for --model and --kv-format "
                                      "(replaces the coefficient; marked measured)"),
    "--measured-usable-kv-gib": ("measured_usable_kv_gib", bounded_float(0.001, 100_000),
                                 "usable KV per GPU measured on the device, GiB (replaces the computed figure)"),
}
"""Plan-only flags for measured figures (``kvplan probe`` results)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand."""
    p = sub.add_parser("plan", help="sessions per GPU and request rate",
                       description="Plan KV capacity (figures per GPU unless named per replica).")
    for flag, (dest, conv, help_text) in {**_FLAGS, **MEASURED_FLAGS}.items():
        p.add_argument(flag, dest=dest, type=conv, default=None, help=help_text)
    p.add_argument("--state-in-hbm", dest="state_in_hbm", action=argparse.BooleanOptionalAction, default=None,
                   help="keep per-session window state in HBM instead of host RAM")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--csv", type=Path, help="write the plan CSV here ('-' for stdout)")
    p.add_argument("--plan", dest="plan_file", type=Path, default=None,
                   help="start from this plan file (JSON); flags given here override its fields")
    p.add_argument("--save", dest="save_file", type=Path, default=None, help="write the plan's inputs as a plan file")
    p.set_defaults(func=run)


def inputs_from_args(args: argparse.Namespace) -> PlanInputs:
    """PlanInputs from the flags that were given, over ``--plan``'s file if any (else over the defaults)."""
    fields = {dest: getattr(args, dest) for dest, *_ in (*_FLAGS.values(), *MEASURED_FLAGS.values())
              if getattr(args, dest, None) is not None}
    if args.state_in_hbm is not None:
        fields["state_in_hbm"] = bool(args.state_in_hbm)
    plan_path = getattr(args, "plan_file", None)
    base = load_plan_file(plan_path).inputs.model_dump() if plan_path is not None else {}
    return make_inputs(**{**base, **fields})


def write_csv(data: bytes | Iterable[bytes], target: Path) -> None:
    """CSV bytes (or chunks of them, written as they come) to a file, or to stdout for ``-`` (no newline
    translation)."""
    chunks = [data] if isinstance(data, (bytes, bytearray)) else data
    if str(target) == "-":
        sys.stdout.flush()
        out = getattr(sys.stdout, "buffer", None)
        for chunk in chunks:
            if out is None:  # stdout replaced by a text stream (tests, notebooks)
                sys.stdout.write(chunk.decode("utf-8"))
            else:
                out.write(chunk)
        if out is not None:
            out.flush()
        return
    try:
        with open(target, "wb") as fh:
            for chunk in chunks:
                fh.write(chunk)
    except OSError as exc:
        raise PlanInputError("csv", str(target), f"a writable path ({exc.strerror})") from None


def run(args: argparse.Namespace) -> int:
    """Evaluate and print the plan."""
    if args.json and args.csv is not None and str(args.csv) == "-":
        raise PlanInputError("csv", "-", "a file path when --json also writes to stdout")
    result = plan(inputs_from_args(args))
    if getattr(args, "save_file", None) is not None:
        save_plan_file(args.save_file, result.inputs)
    if args.csv is not None:
        write_csv(to_csv_bytes(plan_frame(result)), args.csv)
    if args.json:
        print(result.model_dump_json())
    elif args.csv is None or str(args.csv) != "-":
        i = result.inputs
        print(f"{result.model_name} on {result.gpu_name} ({i.gpus_per_replica} GPUs per replica), "
              f"{i.context_tokens:,} tokens, hit rate {i.hit_rate:g}")
        print(f"  usable KV per GPU:   {format_bytes(max(result.usable_kv_bytes, 0))}")
        print(f"  shared prefix:       {format_bytes(result.shared_prefix_bytes)}")
        print(f"  per session:         {format_bytes(result.per_session_bytes)}")
        print(f"  sessions per GPU:    {result.sessions_per_gpu:,}")
        rate = "undefined" if result.request_rate_per_s is None else f"{result.request_rate_per_s:.4g} /s"
        print(f"  request rate per GPU: {rate} (limited by {result.request_rate_limit})")
        print(f"  miss probability:    {result.miss_probability:.4g} (pause {i.pause_mean_s:g} s {i.pause_distribution}, "
              f"TTL {i.ttl_s:g} s)")
        print(f"  replay per turn:     {result.replay_tokens_per_turn:.4g} tokens, {result.replay_seconds_per_turn:.4g} s "
              f"(window {result.replay_window_tokens} tokens at {i.prefill_tokens_per_s:,.0f} tokens/s)")
        print(f"  time to first token: {result.ttft_s:.4g} s")
        t = result.tiers
        if t is not None:
            print(f"  tiers ({t.sessions:,} sessions): HBM {format_bytes(t.hbm_bytes)}, host RAM "
                  f"{format_bytes(t.host_ram_bytes)}, SSD {format_bytes(t.ssd_bytes)}, evicted "
                  f"{format_bytes(t.evicted_bytes)}; overflow: {t.action}")
        print(f"  parked session back: host RAM {result.reload_from_host_s:.4g} s ({result.host_link_id}), SSD "
              f"{result.reload_from_ssd_s:.4g} s ({result.ssd_link_id}), recompute {result.recompute_s:.4g} s")
        if result.message:
            print(f"  note: {result.message}")
        if result.overflow_message:
            print(f"  tiers: {result.overflow_message}")
    return 0
