"""``kvplan plan``: sessions per GPU and request rate for a model on an accelerator."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from planner.capacity import PlanInputs, make_inputs, plan, plan_frame
from planner.cli.args import bounded_float, nonneg_int, positive_int
from planner.errors import PlanInputError
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
    "--decode-tokens-per-s": ("decode_tokens_per_s", bounded_float(0, 1e9, lo_open=True),
                              "aggregate decode throughput per GPU"),
    "--session-decode-tokens-per-s": ("session_decode_tokens_per_s", bounded_float(0, 1e7, lo_open=True),
                                      "decode speed of one session"),
}


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand."""
    p = sub.add_parser("plan", help="sessions per GPU and request rate",
                       description="Plan KV capacity (figures per GPU unless named per replica).")
    for flag, (dest, conv, help_text) in _FLAGS.items():
        p.add_argument(flag, dest=dest, type=conv, default=None, help=help_text)
    p.add_argument("--state-in-hbm", dest="state_in_hbm", action="store_true", default=None,
                   help="keep per-session window state in HBM instead of host RAM")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--csv", type=Path, help="write the plan CSV here ('-' for stdout)")
    p.set_defaults(func=run)


def inputs_from_args(args: argparse.Namespace) -> PlanInputs:
    """PlanInputs from the flags that were given (others keep their defaults)."""
    fields = {dest: getattr(args, dest) for dest, *_ in _FLAGS.values() if getattr(args, dest) is not None}
    if args.state_in_hbm is not None:
        fields["state_in_hbm"] = True
    return make_inputs(**fields)


def run(args: argparse.Namespace) -> int:
    """Evaluate and print the plan."""
    result = plan(inputs_from_args(args))
    if args.csv is not None:
        frame = plan_frame(result)
        if str(args.csv) == "-":
            print(frame.to_csv(index=False), end="")
        else:
            try:
                frame.to_csv(args.csv, index=False)
            except OSError as exc:
                raise PlanInputError("csv", str(args.csv), f"a writable path ({exc.strerror})") from None
    if args.json:
        print(result.model_dump_json())
    elif args.csv is None or str(args.csv) != "-":
        i = result.inputs
        print(f"{result.model_name} on {result.gpu_name} ({i.gpus_per_replica} GPUs per replica), "
              f"{i.context_tokens:,} tokens, hit rate {i.hit_rate:g}")
        print(f"  usable KV per GPU:   {format_bytes(result.usable_kv_bytes)}")
        print(f"  shared prefix:       {format_bytes(result.shared_prefix_bytes)}")
        print(f"  per session:         {format_bytes(result.per_session_bytes)}")
        print(f"  sessions per GPU:    {result.sessions_per_gpu:,}")
        rate = "undefined" if result.request_rate_per_s is None else f"{result.request_rate_per_s:.4g} /s"
        print(f"  request rate per GPU: {rate} (limited by {result.request_rate_limit})")
        if result.message:
            print(f"  note: {result.message}")
    return 0
