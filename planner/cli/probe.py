"""``kvplan probe``: allocate a model's quantized KV pool on this machine and measure it.

Needs torch (``pip install 'kvplan[probe]'``); without it the command prints one
line naming the pip command and exits 2. Bad input and a pool larger than
``--max-fraction`` of free memory (the message says how many tokens fit) exit
2; a busy probe or one past ``--time-limit`` exit 1. See ``docs/probe.md``.

    kvplan probe --model deepseek-v4.1-flash --tokens 1000000 --kv-format nvfp4 --device cpu --json
"""

from __future__ import annotations

import argparse
import sys

from planner.catalog.entries import models
from planner.cli.args import bounded_float, nonneg_int, positive_int
from planner.engines.capacity import DEFAULT_BLOCK_SIZE, MAX_BLOCK_SIZE
from planner.kv.models import NATIVE
from planner.probe import PROBE_FORMATS, ProbeResult, plan_pool
from planner.probe.layout import MAX_PROBE_TOKENS
from planner.probe.result import tokens_fit_text
from planner.units import format_bytes


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``probe`` subcommand."""
    p = sub.add_parser(
        "probe", help="allocate the quantized KV pool on this GPU (or CPU) and measure its real bytes",
        description="Allocate a model's paged KV pool in a quantized format, fill it with synthetic KV, "
                    "measure the bytes the device really spent next to the planner's arithmetic, release it, "
                    "and measure each format's round-trip error and speed. Needs torch.")
    p.add_argument("--model", required=True, help="catalog model id (kvplan models)")
    p.add_argument("--tokens", type=positive_int(MAX_PROBE_TOKENS, "tokens"), required=True,
                   help="tokens the pool holds (one sequence of that length)")
    p.add_argument("--kv-format", default=NATIVE, help=f"native or one of {', '.join(PROBE_FORMATS)}")
    p.add_argument("--device", choices=["auto", "cuda", "cpu"], default="auto",
                   help="where to allocate (auto: CUDA if torch sees one, else the CPU)")
    p.add_argument("--block-size", type=positive_int(MAX_BLOCK_SIZE, "tokens"), default=DEFAULT_BLOCK_SIZE,
                   help="tokens per KV block (vLLM default 16)")
    p.add_argument("--max-fraction", type=bounded_float(0, 1, lo_open=True), default=0.5,
                   help="largest share of free memory the probe may use (default 0.5)")
    p.add_argument("--fill", choices=["quantize", "tile"],
                   help="quantize every entry, or tile one quantized tile (default: quantize on CUDA, tile on CPU)")
    p.add_argument("--seed", type=nonneg_int(2**62 - 1, ""), default=0, help="synthetic data seed")
    p.add_argument("--time-limit", type=bounded_float(0, 3600, lo_open=True), default=120.0,
                   help="wall-clock limit, seconds (default 120)")
    p.add_argument("--cpu-threads", type=nonneg_int(4096, "threads"), default=1,
                   help="torch threads for a CPU probe (default 1: cache-sized chunks; 0 = torch's setting)")
    p.add_argument("--no-formats", action="store_true", help="skip the round-trip error and throughput runs")
    p.add_argument("--json", action="store_true", help="print the ProbeResult as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Run the probe and print it; 2 when torch is missing, 1 when busy or out of time."""
    from planner.probe import ProbeBusyError, ProbeTimeoutError, ProbeUnavailableError, run_probe

    plan_pool(args.model, args.tokens, args.kv_format, args.block_size)  # bad input first, torch or not
    try:
        result = run_probe(args.model, args.tokens, args.kv_format, device=args.device, block_size=args.block_size,
                           max_fraction=args.max_fraction, fill=args.fill, seed=args.seed,
                           time_limit_s=args.time_limit, measure_formats=not args.no_formats,
                           cpu_threads=args.cpu_threads or None)
    except ProbeUnavailableError as exc:
        print(f"kvplan: error: {exc}", file=sys.stderr)
        return 2
    except (ProbeBusyError, ProbeTimeoutError) as exc:
        print(f"kvplan: error: {exc}", file=sys.stderr)
        return 1
    print(result.to_json() if args.json else render_text(result))
    return 0


def render_text(r: ProbeResult) -> str:
    """The human-readable report of a probe."""
    name = models()[r.model_id].name if r.model_id in models() else r.model_id
    lines = [
        f"kvplan probe: {name} ({r.model_id}), KV format {r.kv_format}, {r.num_tokens:,} tokens, "
        f"block {r.block_size} tokens, fill {r.fill}",
        f"device: {r.device} - {r.device_name}; total {format_bytes(r.total_bytes)}, "
        f"free {format_bytes(r.free_bytes)}; torch {r.torch_version}"
        + (f", CUDA {r.cuda_version}" if r.cuda_version else ""),
        "",
        "pool tensors (layers x blocks x entries/block x entry bytes):",
    ]
    for g in r.groups:
        lines.append(f"  {g.name:<30} {g.kv_format:<6} {g.num_layers:>3} x {g.num_blocks:>10,} x "
                     f"{g.entries_per_block:>3} x {g.entry_bytes:>6,} B = {g.pool_bytes:>16,} B")
    ratio = f"{r.measured_over_predicted:.6f}" if r.measured_over_predicted is not None else "n/a"
    overhead = r.overhead_over_measured
    lines += [
        "",
        f"predicted (planner)  {r.predicted_bytes:>16,} B  {r.predicted_bytes_per_token:>14,.6f} B/token  "
        f"{format_bytes(r.predicted_bytes)}",
        f"pool (whole blocks)  {r.pool_bytes:>16,} B",
        f"measured             {r.measured_bytes:>16,} B  {r.measured_bytes_per_token:>14,.6f} B/token  "
        f"measured/predicted {ratio}",
        f"  ({'torch.cuda.memory_allocated delta' if r.device == 'cuda' else 'pool storage bytes'}; "
        f"per-tensor FP32 scales apart: {r.tensor_scale_bytes:,} B)",
        f"resident             {r.resident_bytes:>16,} B  allocator/page overhead {r.allocator_overhead_bytes:+,} B"
        + (f" ({overhead:+.2%})" if overhead is not None else "")
        + (" (mem_get_info delta)" if r.device == "cuda" else " (process RSS delta)"),
    ]
    if r.reserved_bytes is not None:
        lines.append(f"reserved             {r.reserved_bytes:>16,} B  (caching allocator segments)")
    lines += [
        f"released: {'yes' if r.released else 'NO'} (residual {r.residual_bytes:+,} B)",
        f"KV cache size if all free memory held this pool: {tokens_fit_text(r.tokens_fit_free)} "
        f"(under max fraction {r.max_fraction:g}, scratch included: {tokens_fit_text(r.tokens_fit_cap)})",
    ]
    if r.quality:
        lines += ["", f"{'format':<7} {'channels':>8} {'role':<26} {'rel RMSE':>9} {'max |err|':>10} "
                      f"{'quant GB/s':>10} {'dequant GB/s':>12} {'copy GB/s':>9} {'quant/copy':>10}"]
        speed = {(t.kv_format, t.num_channels): t for t in r.throughput}
        for q in r.quality:
            t = speed.get((q.kv_format, q.num_channels))
            cols = (f"{t.quantize_gbps:>10.3g} {t.dequantize_gbps:>12.3g} {t.copy_gbps:>9.3g} "
                    f"{t.quantize_over_copy:>10.1%}") if t else ""
            lines.append(f"{q.kv_format:<7} {q.num_channels:>8} {q.role:<26} {q.rel_rmse:>9.4f} "
                         f"{q.max_abs_error:>10.4g} {cols}")
        if r.throughput:
            lines.append(f"  (GB/s of {r.throughput[0].source_dtype} source bytes, best of "
                         f"{r.throughput[0].repeats}; copy = a plain copy of the same bytes in the same run)")
    lines += ["", f"elapsed {r.elapsed_s:.2f} s"] + [f"note: {n}" for n in r.notes]
    return "\n".join(lines)
