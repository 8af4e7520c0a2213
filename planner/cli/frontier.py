"""``kvplan frontier``: sessions per GPU and request rate over accelerators x contexts x hit rates.

The same vectorized grid as the Frontier page (:func:`planner.frontier.frontier_grid`).
Every ``kvplan plan`` flag applies except those the grid sweeps (``--gpu``,
``--hbm-gib``, ``--context``, ``--hit-rate``) and ``--target-sessions`` (a
frontier is what HBM holds). ``custom:N`` in ``--gpus`` is an accelerator with
N GiB of HBM.

Output: a table of sessions per GPU per hit rate (text), one JSON object with
``rows`` in the column contract of :data:`planner.frontier.FRAME_COLUMNS`
(``--json``; undefined rates are ``null``), or that table as CSV (``--csv``).
JSON and CSV are written in chunks of rows, so memory stays bounded up to the
largest grid accepted (:data:`planner.frontier.MAX_GRID_POINTS`).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

from planner.capacity import make_inputs
from planner.catalog import get_gpu
from planner.cli.plan import PLAN_FLAGS, write_csv
from planner.export import to_csv_bytes
from planner.frontier import FRAME_COLUMNS, frontier_grid, parse_accelerators, parse_contexts, parse_hit_rates

_SWEPT = ("--gpu", "--hbm-gib", "--context", "--hit-rate", "--target-sessions")
"""Plan flags the frontier replaces with its axes (or ignores)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``frontier`` subcommand."""
    p = sub.add_parser("frontier", help="sessions per GPU and request rate over accelerators, contexts, hit rates",
                       description="Vectorized frontier: every (accelerator, context, hit rate) plan, per GPU.")
    p.add_argument("--gpus", default="h100-sxm,h200,b200",
                   help="comma-separated accelerator ids (kvplan gpus), or custom:N for N GiB of HBM")
    p.add_argument("--contexts", default="128k,256k,512k,1M", help="comma-separated context lengths (128k, 1M, 1e6)")
    p.add_argument("--hit-rates", default="0,0.5,0.9", help="comma-separated prefix hit rates in [0, 1]")
    p.add_argument("--scale-throughput", action="store_true",
                   help="scale decode by HBM bandwidth and prefill by BF16 FLOP/s relative to --base-gpu")
    p.add_argument("--base-gpu", default="h200", help="the accelerator the throughput flags describe (default h200)")
    for flag, (dest, conv, help_text) in PLAN_FLAGS.items():
        if flag not in _SWEPT:
            p.add_argument(flag, dest=dest, type=conv, default=None, help=help_text)
    p.add_argument("--state-in-hbm", dest="state_in_hbm", action="store_true", default=None,
                   help="keep per-session window state in HBM instead of host RAM")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--csv", type=Path, help="write the grid as CSV here ('-' for stdout)")
    p.set_defaults(func=run)


def csv_chunks(grid) -> Iterator[bytes]:
    """The grid's CSV (:func:`planner.export.to_csv_bytes` of :meth:`FrontierGrid.frame`), chunk by chunk:
    the same bytes, one header row, memory bounded by the chunk size."""
    for i, chunk in enumerate(grid.frames()):
        data = to_csv_bytes(chunk)
        yield data if i == 0 else data[data.index(b"\n") + 1:]


def json_rows(frame) -> list[dict]:
    """Rows of a grid frame as JSON-ready dicts: labels as text, NaN and infinities as null, numpy as Python."""
    rows = frame.astype({"accelerator": str, "gpu_id": str, "rate_limit": str}).to_dict(orient="records")
    for r in rows:
        for k, v in r.items():
            if hasattr(v, "item"):
                v = r[k] = v.item()
            if isinstance(v, float) and not math.isfinite(v):
                r[k] = None
    return rows


def run(args: argparse.Namespace) -> int:
    """Evaluate the grid and print it."""
    fields = {dest: getattr(args, dest) for flag, (dest, *_) in PLAN_FLAGS.items()
              if flag not in _SWEPT and getattr(args, dest) is not None}
    if args.state_in_hbm is not None:
        fields["state_in_hbm"] = True
    get_gpu(args.base_gpu)
    base = make_inputs(gpu_id=args.base_gpu, **fields)
    accs = parse_accelerators(args.gpus)
    grid = frontier_grid(base, accs, parse_contexts(args.contexts), parse_hit_rates(args.hit_rates),
                         scale_throughput=args.scale_throughput)
    if args.csv is not None:  # the one CSV writer, as the Frontier page's downloads; in chunks, never one table
        write_csv(csv_chunks(grid), args.csv)
    if args.json:
        header = json.dumps({"model_id": base.model_id, "inputs": base.model_dump(mode="json"),
                             "scale_throughput": args.scale_throughput, "miss_probability": grid.miss_probability,
                             "columns": list(FRAME_COLUMNS)}, allow_nan=False)
        out = sys.stdout
        out.write(header[:-1] + ', "rows": [')
        first = True
        for chunk in grid.frames():
            for row in json_rows(chunk):
                out.write(("" if first else ", ") + json.dumps(row, allow_nan=False))
                first = False
        out.write("]}\n")
    elif args.csv is None or str(args.csv) != "-":
        names = [a.name for a in grid.accelerators]
        width = max(12, *(len(n) for n in names))
        print(f"{base.model_id}: sessions per GPU (request rate per GPU, /s); output {base.output_tokens:,} tokens, "
              f"{base.gpus_per_replica} GPUs per replica")
        for hi, h in enumerate(grid.hit_rates):
            print(f"\nhit rate {h:g}")
            print(f"{'context':>12}  " + "  ".join(f"{n:>{width}}" for n in names))
            for ci, n in enumerate(grid.contexts):
                cells = []
                for gi in range(len(names)):
                    rate = grid.request_rate_per_s[gi, ci, hi]
                    r = "-" if math.isnan(rate) else f"{rate:.3g}/s"
                    cells.append(f"{f'{int(grid.sessions_per_gpu[gi, ci, hi]):,} ({r})':>{width}}")
                print(f"{int(n):>12,}  " + "  ".join(cells))
    return 0
