"""``kvplan recommend``: the fewest GPUs (then the lowest cost) meeting a target, each row checked by the plan.

``kvplan recommend --model llama-3.1-70b --context 32k --sessions 1000 --gpus h100-sxm,h200,b200 --json``.
Target: ``--sessions N`` (concurrent, whole deployment) or ``--requests-per-s R``.
Axes: ``--gpus`` (catalog ids, ``custom:N``, ids from ``--accelerators``), ``--replica-gpus 1,2,4,8`` (GPUs per
replica), ``--attention tp,dp``, ``--kv-formats native,fp8`` and ``--weight-formats``. Prices per GPU-hour:
``--prices h100-sxm=2.5,h200=3.2`` (or ``price_per_gpu_hour`` in the accelerators file).
Every other ``kvplan plan`` flag sets the other inputs (hit rate, TTL, pauses, output tokens, throughputs);
the flags the search sweeps (``--gpu``, ``--gpus-per-replica``, ...) are refused with the axis to use instead.

Output: the ranked rows (text), or one JSON object whose rows carry ``plan_args``: the ``kvplan plan``
arguments that reproduce each row's figures.
"""

from __future__ import annotations

import argparse
import json
import math

from planner.cli.args import apply_user_gpu, bounded_float, positive_int, user_accelerators
from planner.cli.plan_inputs import add_input_flags, flag_of, given_fields, inputs_from_args
from planner.errors import PlanInputError
from planner.frontier import parse_accelerators
from planner.plan import PlanInputs, rebase
from planner.recommend import COLUMNS, recommend
from planner.units import format_figure, plural

SEARCHED: dict[str, str] = {
    "gpu_id": "--gpus", "accelerator": "--gpus", "hbm_gib": "--gpus (custom:N)", "gpus_per_replica": "--replica-gpus",
    "attention_parallelism": "--attention", "pipeline_parallel_size": "--replica-gpus (PP is 1)",
    "kv_format": "--kv-formats", "weight_format": "--weight-formats", "target_sessions_per_gpu": "--sessions",
}
"""Plan fields the search sweeps -> the recommend flag to use instead."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``recommend`` subcommand."""
    p = sub.add_parser("recommend", help="fewest GPUs (then cost) meeting a sessions or requests/s target",
                       description="Search accelerators x GPUs per replica x attention x KV format for a target.")
    target = p.add_mutually_exclusive_group(required=True)
    target.add_argument("--sessions", type=positive_int(10**12, "sessions"), help="concurrent sessions for the deployment")
    target.add_argument("--requests-per-s", type=bounded_float(0, 1e12, lo_open=True),
                        help="requests per second for the deployment")
    p.add_argument("--headroom", type=bounded_float(0, 10), default=0.2,
                   help="headroom every row must have, a fraction (default 0.2: capacity at least 1.2 x the target)")
    p.add_argument("--gpus", default="h100-sxm,h200,b200", help="accelerator ids, custom:N, or ids from --accelerators")
    p.add_argument("--replica-gpus", default="1,2,4,8", help="GPUs per replica to try (comma-separated)")
    p.add_argument("--attention", default="tp,dp", help="attention parallelism to try: tp, dp or both")
    p.add_argument("--kv-formats", default="native,fp8", help="KV formats to try (native = the model's)")
    p.add_argument("--weight-formats", default="catalog", help="weight formats to try (catalog = the model's)")
    p.add_argument("--prices", default="", help="price per GPU-hour by id: h100-sxm=2.5,h200=3.2")
    p.add_argument("--trace", default=None, metavar="SOURCE",
                   help="plan each configuration at the hit rate its KV pool measures on this trace (a file with "
                        "prefix hashes, or sample:conversation / sample:synthetic) instead of --hit-rate")
    p.add_argument("--trace-ttl-s", type=bounded_float(0, 1e9), default=None,
                   help="TTL of the trace's prefix cache, s (default: none)")
    p.add_argument("--scale-throughput", action="store_true",
                   help="scale decode by HBM bandwidth and prefill by BF16 FLOP/s per accelerator, relative to "
                        "--base-gpu")
    p.add_argument("--base-gpu", default="h200",
                   help="the accelerator --decode-tokens-per-s and --prefill-tokens-per-s describe (default h200)")
    p.add_argument("--top", type=positive_int(100_000, "rows"), default=20, help="rows to print and verify (default 20)")
    add_input_flags(p)
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _ints(text: str, field: str) -> list[int]:
    try:
        out = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise PlanInputError(field, text, "comma-separated whole numbers") from None
    if not out:
        raise PlanInputError(field, text, "at least one whole number")
    return out


def _prices(text: str) -> dict[str, float]:
    out = {}
    for item in (x.strip() for x in text.split(",") if x.strip()):
        key, sep, value = item.partition("=")
        try:
            price = float(value)
        except ValueError:
            price = math.nan
        if not sep or not math.isfinite(price) or price < 0:
            raise PlanInputError("prices", item, "id=price pairs with a finite price >= 0 per GPU-hour")
        out[key.strip()] = price
    return out


def plan_args(inputs: PlanInputs) -> list[str]:
    """``kvplan plan`` arguments that reproduce these inputs (the fields that differ from the defaults)."""
    defaults = PlanInputs()
    args: list[str] = []
    for field, value in inputs.model_dump().items():
        if value == getattr(defaults, field):
            continue
        if isinstance(value, bool):
            args.append(("--" if value else "--no-") + flag_of(field).removeprefix("--"))
        elif value is None:
            args += [flag_of(field), "none"]
        else:
            args += [flag_of(field), repr(value) if isinstance(value, float) else str(value)]
    return args


def _missing(value: object) -> bool:
    """An empty cell: NaN, None or pandas' NA (an integer column with a gap)."""
    return value is None or (isinstance(value, float) and math.isnan(value)) or type(value).__name__ == "NAType"


def run(args: argparse.Namespace) -> int:
    """Search, verify, print."""
    swept = [f for f in given_fields(args) if f in SEARCHED]
    if swept:
        raise PlanInputError(flag_of(swept[0]), getattr(args, swept[0]), f"not given: recommend searches it "
                             f"(use {SEARCHED[swept[0]]})")
    user = user_accelerators(args)
    base, _ = rebase(inputs_from_args(args), **apply_user_gpu({"gpu_id": args.base_gpu, "accelerator": None}, user))
    accs = parse_accelerators(args.gpus, user)
    kind, value = ("sessions", args.sessions) if args.sessions is not None else ("requests_per_s", args.requests_per_s)
    wfmts = [None if w.strip() == "catalog" else w.strip() for w in args.weight_formats.split(",") if w.strip()]
    curve = None
    if args.trace is not None:
        if "hit_rate" in given_fields(args):
            raise PlanInputError("--hit-rate", args.hit_rate, "not given with --trace (the trace measures it)")
        from planner.recommend import trace_hit_rate_curve
        from planner.traces import read_trace

        curve = trace_hit_rate_curve(read_trace(args.trace), args.trace_ttl_s)
    rec = recommend(base, accs, target_kind=kind, target=value, hit_rate_curve=curve,
                    scale_throughput=args.scale_throughput,
                    gpus_per_replica=_ints(args.replica_gpus, "replica_gpus"),
                    kv_formats=[f.strip() for f in args.kv_formats.split(",") if f.strip()],
                    weight_formats=wfmts, attention=[a.strip() for a in args.attention.split(",") if a.strip()],
                    prices=_prices(args.prices), verify=args.top, headroom=args.headroom)
    top = rec.frame.head(args.top)
    if args.json:
        rows = []
        for i, row in enumerate(top.to_dict(orient="records")):
            row = {k: (None if _missing(v) else v) for k, v in row.items()}
            row["plan_args"] = plan_args(rec.inputs[i])
            rows.append(row)
        print(json.dumps({"target": {kind: value}, "headroom": rec.headroom,
                          "required": value * (1 + rec.headroom), "model_id": base.model_id,
                          "context_tokens": base.context_tokens,
                          "hit_rate": "from the trace" if curve is not None else base.hit_rate,
                          "shared_prefix": base.shared_prefix, "trace": args.trace, "searched": rec.searched,
                          "infeasible": rec.infeasible,
                          "refused": list(rec.refused), "notes": list(rec.notes), "columns": list(COLUMNS), "rows": rows},
                         indent=2, allow_nan=False, default=lambda o: o.item() if hasattr(o, "item") else str(o)))
        return 0
    unit = "sessions" if kind == "sessions" else "requests/s"
    hit = f"hit rate from {args.trace}" if curve is not None else f"hit rate {base.hit_rate:g}"
    print(f"{base.model_id}, {base.context_tokens:,} tokens, {hit}, shared prefix {base.shared_prefix:g}: target "
          f"{value:,.6g} {unit} with {rec.headroom:.0%} headroom (at least {value * (1 + rec.headroom):,.6g}); "
          f"{rec.searched:,} configurations searched, {rec.infeasible:,} hold nothing")
    for note in rec.notes:  # the plan's own warning, beside every row it concerns
        print(f"  note: {note}")
    for why in rec.refused:
        print(f"  not searched: {why}")
    if top.empty:
        print("  no configuration meets the target")
        return 0
    for row in top.itertuples():
        cost = "" if math.isnan(row.cost_per_hour) else f", {row.cost_per_hour:,.2f} per hour"
        mark = " *" if row.pareto else ""
        print(f"{row.rank:>4}. {row.total_gpus:,} x {row.accelerator} ({plural(row.replicas, 'replica')} of "
              f"{plural(row.gpus_per_replica, 'GPU')}, attention {row.attention}, KV {row.kv_format}, weights {row.weight_format}, "
              f"hit rate {row.hit_rate:.3g}): "
              f"{format_figure(row.capacity, 6)} {unit}, headroom {row.headroom:.1%}{cost}{mark}")
        print(f"      verified by the plan: {'yes' if row.verified else 'no'}; {row.one_fewer}")
        if row.assumptions:
            print(f"      assumes {row.assumptions}")
            no_share = ("not one session fits" if _missing(row.replicas_no_sharing) else f"{row.total_gpus_no_sharing:,} GPUs ({plural(int(row.replicas_no_sharing), 'replica')})")
            print(f"      with no shared prefix: {no_share}")
    print("  * on the Pareto front (GPUs or cost vs headroom)")
    return 0
