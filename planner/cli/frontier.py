"""``kvplan frontier``: sessions and request rate over accelerators x contexts x hit rates.

The same plan code as ``kvplan plan`` (:func:`planner.frontier.frontier_grid`
calls :func:`planner.plan.core.evaluate` over arrays). Every ``kvplan plan``
flag applies (they are derived from :class:`planner.plan.PlanInputs`), and the
plan they describe is a point of the grid: its ``--gpu`` (with ``--hbm-gib``),
``--context`` and ``--hit-rate`` are added to ``--gpus``, ``--contexts`` and
``--hit-rates``. ``custom:N`` in ``--gpus`` is an accelerator with N GiB of
HBM. With ``--scale-throughput`` the throughput flags describe ``--gpu``.

Output: a table of sessions per GPU per hit rate (text), one JSON object with
``rows`` in the column contract of :data:`planner.frontier.FRAME_COLUMNS`
(``--json``; undefined rates are ``null``) and ``plan``, every figure of the
grid at the plan's own point (the same numbers as ``kvplan plan --json``), or
the rows as CSV (``--csv``). JSON and CSV rows are written in chunks, so
memory stays bounded up to the largest grid accepted
(:data:`planner.frontier.MAX_GRID_POINTS`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from planner.cli.plan import write_csv
from planner.cli.args import user_accelerators
from planner.cli.plan_inputs import add_input_flags, inputs_from_args
from planner.files.export import to_csv_bytes
from planner.frontier import (
    FRAME_COLUMNS,
    Accelerator,
    accelerators_for,
    frontier_grid,
    parse_accelerators,
    parse_contexts,
    parse_hit_rates,
    with_points,
)
from planner.plan import format_sessions
from planner.units import format_figure


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``frontier`` subcommand."""
    p = sub.add_parser("frontier", help="sessions and request rate over accelerators, contexts, hit rates",
                       description="Vectorized frontier: every (accelerator, context, hit rate) plan, per GPU; "
                                   "the plan of the other flags is one of its points.")
    p.add_argument("--gpus", default="h100-sxm,h200,b200",
                   help="comma-separated accelerator ids (kvplan gpus), custom:N for N GiB of HBM, or ids from "
                        "--accelerators")
    p.add_argument("--contexts", default="128k,256k,512k,1m",
                   help="comma-separated context lengths (128k = 128,000, 128K = 131,072, 1m, 1e6; vLLM's suffixes)")
    p.add_argument("--hit-rates", default="0,0.5,0.9", help="comma-separated prefix hit rates in [0, 1]")
    p.add_argument("--scale-throughput", action="store_true",
                   help="scale decode by HBM bandwidth and prefill by BF16 FLOP/s relative to --gpu")
    add_input_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--csv", type=Path, help="write the grid as CSV here ('-' for stdout)")
    p.set_defaults(func=run)


def csv_chunks(grid) -> Iterator[bytes]:
    """The grid's CSV (:func:`planner.files.export.to_csv_bytes` of :meth:`FrontierGrid.frame`), chunk by chunk:
    the same bytes, one header row, memory bounded by the chunk size."""
    for i, chunk in enumerate(grid.frames()):
        data = to_csv_bytes(chunk)
        yield data if i == 0 else data[data.index(b"\n") + 1:]


def json_rows(frame) -> list[dict]:
    """Rows of a grid frame as JSON-ready dicts: labels as text, NaN and infinities as null."""
    rows = frame.astype({"accelerator": str, "gpu_id": str, "rate_limit": str}).to_dict(orient="records")
    return [{k: _plain(v) for k, v in r.items()} for r in rows]


def _plain(value):
    """A numpy value as JSON (NaN and infinities as null)."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run(args: argparse.Namespace) -> int:
    """Evaluate the grid and print it."""
    base = inputs_from_args(args)
    accs = parse_accelerators(args.gpus, user_accelerators(args))
    own = accelerators_for([], base)[0] if base.gpu_id == "custom" else Accelerator(base.gpu_id, base.hbm_gib)
    if all(a != own for a in accs):
        accs.append(own)
    contexts = with_points(parse_contexts(args.contexts), base.context_tokens)
    hits = with_points(parse_hit_rates(args.hit_rates), base.hit_rate)
    grid = frontier_grid(base, accs, contexts, hits, scale_throughput=args.scale_throughput)
    if args.csv is not None:  # the one CSV writer, as the Frontier page's downloads; in chunks, never one table
        write_csv(csv_chunks(grid), args.csv)
    if args.json:
        gi = next(i for i, a in enumerate(grid.accelerators) if a == own)
        ci, hi = grid.nearest_context(base.context_tokens), grid.nearest_hit_rate(base.hit_rate)
        point = {f.name: _plain(np.broadcast_to(getattr(grid.arrays, f.name), grid.shape)[gi, ci, hi])
                 for f in dataclasses.fields(grid.arrays) if isinstance(getattr(grid.arrays, f.name), np.ndarray)}
        head = json.dumps({"model_id": base.model_id, "inputs": base.model_dump(mode="json"),
                           "attention_parallelism": base.attention_parallelism,
                           "scale_throughput": args.scale_throughput, "notes": list(grid.past_maximum_notes()),
                           "miss_probability": grid.miss_probability,
                           "columns": list(FRAME_COLUMNS)}, allow_nan=False)
        out = sys.stdout
        out.write(head[:-1] + ', "rows": [')  # the rows in chunks: memory bounded whatever the grid's size
        first = True
        for chunk in grid.frames():
            for row in json_rows(chunk):
                out.write(("" if first else ", ") + json.dumps(row, allow_nan=False))
                first = False
        out.write('], "plan": ' + json.dumps(point, allow_nan=False) + "}\n")
    elif args.csv is None or str(args.csv) != "-":
        names = [a.name for a in grid.accelerators]
        width = max(12, *(len(n) for n in names))
        print(f"{base.model_id}: sessions per GPU (request rate per GPU, /s); output {base.output_tokens:,} tokens, "
              f"{base.gpus_per_replica} GPUs per replica, {base.attention_parallelism} attention, shared prefix "
              f"{grid.shared_prefix:g} of the context (--shared-prefix: memory, hence sessions; the hit rates move "
              f"prefill and the rate)")
        for note in grid.past_maximum_notes():  # the plan's own warning for each context the model cannot serve
            print(f"note: {note}")
        if base.engine is not None:  # which session figure the grid follows (PlanResult.sessions_basis)
            basis = grid.arrays.admission.basis if grid.arrays.admission is not None else "steady state"
            print(f"sessions: {'the engine admission figure' if basis == 'engine admission' else 'the steady state'} "
                  f"({base.engine}; `kvplan plan` prints both)")
        for hi, h in enumerate(grid.hit_rates):
            print(f"\nhit rate {h:g}")
            print(f"{'context':>12}  " + "  ".join(f"{n:>{width}}" for n in names))
            for ci, n in enumerate(grid.contexts):
                cells = []
                for gi in range(len(names)):
                    rate = grid.request_rate_per_s[gi, ci, hi]
                    r = "-" if math.isnan(rate) else f"{format_figure(rate)}/s"
                    cells.append(f"{f'{format_sessions(grid.sessions_per_gpu[gi, ci, hi])} ({r})':>{width}}")
                print(f"{int(n):>12,}  " + "  ".join(cells))
    return 0
