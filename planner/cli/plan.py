"""``kvplan plan``: sessions per GPU and request rate for a model on an accelerator.

Figures are per GPU. ``--host-ram-gib`` and ``--ssd-gib`` are per GPU too (a
node's host RAM or SSD divided by its GPUs); left out, they come from the
accelerator's typical node (``planner.catalog.tiers.NODES``). ``--json`` prints the
whole :class:`planner.plan.PlanResult`, including ``tiers`` (bytes per
tier), ``miss_probability``, ``replay_tokens_per_turn``,
``replay_seconds_per_turn``, ``ttft_s`` and the inputs behind them.

``--config PATH`` plans a Hugging Face config.json instead of a catalog model
(the import of ``kvplan kv --config``, ``--ignore-field`` included; model id
``config:<file name>``); its weights come from the checkpoint's config
(:func:`planner.hf.weights.checkpoint_weights`), ``--weights-gib`` where they
cannot be derived (the refusal says which field is missing), and with
``--engine`` the engine budget prices that config.

``--plan FILE`` starts from a plan file (``docs/plan-files.md``); flags given on
the command line override its fields, through :func:`planner.plan.rebase`: a
measured figure bound to another model, format or GPU is dropped with one
line on stderr. ``--save FILE`` writes the plan's inputs as a plan file.
Every flag is derived from a :class:`planner.plan.PlanInputs` field
(:mod:`planner.cli.plan_inputs`). ``--csv`` writes the bytes the Plan page's "Download plan CSV"
gives for the same inputs (one writer: :func:`planner.files.export.to_csv_bytes`).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from pathlib import Path

from planner.cli.args import config_path
from planner.cli.plan_inputs import add_input_flags, given_fields, inputs_from_args
from planner.errors import PlanInputError
from planner.files.export import to_csv_bytes
from planner.hf.config import MAX_CONFIG_BYTES, plan_model_from_config
from planner.hf.checkpoint import read_checkpoint
from planner.hf.report import assumed_fields
from planner.plan import format_sessions, plan, plan_frame
from planner.plan.measured import context_mismatch
from planner.files.planfile import save as save_plan_file
from planner.units import format_bytes, format_figure


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``plan`` subcommand."""
    p = sub.add_parser("plan", help="sessions per GPU and per replica, request rate",
                       description="Plan KV capacity (figures per GPU unless named per replica; the attention "
                                   "parallelism they assume is printed with them).")
    add_input_flags(p)
    p.add_argument("--config", type=config_path, default=None,
                   help="plan a Hugging Face config.json or checkpoint directory (read as `kvplan kv --config` reads "
                        "it) instead of --model; "
                        "its weights come from the checkpoint's config (--weights-gib where they cannot be derived)")
    p.add_argument("--ignore-field", action="append", default=[], metavar="NAME",
                   help="with --config: accept a config field kvplan does not model (repeatable), as `kvplan kv` "
                        "does; the plan says so")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--csv", type=Path, help="write the plan CSV here ('-' for stdout)")
    p.add_argument("--save", dest="save_file", type=Path, default=None, help="write the plan's inputs as a plan file")
    p.set_defaults(func=run)


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
    model = None
    if getattr(args, "ignore_field", None) and getattr(args, "config", None) is None:
        raise PlanInputError("ignore_field", args.ignore_field[0], "only with --config (a catalog model reads "
                             "its own fields)")
    if getattr(args, "config", None) is not None:
        if args.model_id is not None:
            raise PlanInputError("config", str(args.config), "a config.json or --model, not both")
        config, name = read_checkpoint(args.config, MAX_CONFIG_BYTES)  # a config.json or a checkpoint directory
        model = plan_model_from_config(config, name, source=str(args.config),
                                       ignore_fields=tuple(getattr(args, "ignore_field", ()) or ()))
        args.model_id = model.id
    inputs = inputs_from_args(args)
    try:
        result = plan(inputs, model)
    except PlanInputError as exc:
        if exc.field == "tp" and "gpus_per_replica" not in given_fields(args):
            # the user set no TP: the refused 8 is the default GPUs per replica, which the flag changes
            raise PlanInputError("tp", exc.value, f"{exc.allowed} (the default --gpus-per-replica "
                                                  f"{inputs.gpus_per_replica} is refused for this model: set "
                                                  "--gpus-per-replica)") from None
        raise
    if getattr(args, "save_file", None) is not None:
        save_plan_file(args.save_file, result.inputs)
    if args.csv is not None:
        write_csv(to_csv_bytes(plan_frame(result)), args.csv)
    if args.json:
        print(result.model_dump_json())
    elif args.csv is None or str(args.csv) != "-":
        i = result.inputs
        gpus = f"{i.gpus_per_replica} GPU{'' if i.gpus_per_replica == 1 else 's'} per replica"
        print(f"{result.model_name} on {result.gpu_name} ({gpus}), "
              f"{i.context_tokens:,} tokens, hit rate {i.hit_rate:g} (prefill), shared prefix {i.shared_prefix:g} "
              f"(memory)")
        for sentence in assumed_fields(model.config_report if model is not None else None):
            print(f"  assumed: {sentence}")  # what the imported config did not say, beside the figures
        if result.ignored_config_fields:
            print(f"  ignoring config field {', '.join(result.ignored_config_fields)} (--ignore-field): no figure "
                  "accounts for it")
        how = ""
        if result.usable_kv_source == "computed":  # the assumptions behind the figure, beside it
            how = (f" = HBM {format_bytes(result.hbm_bytes)} x utilization {i.gpu_memory_utilization:g} - weights "
                   f"{format_bytes(result.weights_bytes_per_gpu)} - reserve {format_bytes(result.reserve_bytes)}")
        print(f"  usable KV per GPU:   {format_bytes(max(result.usable_kv_bytes, 0))}{how}")
        if result.engine_budget is not None:
            b = result.engine_budget
            print(f"  engine budget:       {b['engine']} {b['engine_version']}, {b['binding_rank']}: "
                  + "; ".join(f"{t['name']} {format_bytes(t['bytes'])}" for t in b["terms"]))
        print(f"  shared prefix:       {format_bytes(result.shared_prefix_bytes)} ({result.prefix_tokens:,} tokens, "
              f"stored once per distinct prefix)")
        print(f"  per session:         {format_bytes(result.per_session_bytes)}")
        print(f"  attention:           {result.parallelism_note}")
        print(f"  sessions per replica: {result.sessions_per_replica:,}")
        print(f"  sessions per GPU:    {format_sessions(result.sessions_per_gpu)}")
        if result.sessions_basis != "steady state" or i.engine is not None:
            print(f"  steady state:        {result.steady_state_sessions_per_replica:,} per replica, "
                  f"{format_sessions(result.steady_state_sessions_per_gpu)} per GPU (upper bound)")
            print(f"  sessions basis:      {result.sessions_note}")
        rate = "undefined" if result.request_rate_per_s is None else f"{format_figure(result.request_rate_per_s, 4)} /s"
        limit = ("no output tokens, so no decode" if result.request_rate_per_s is None
                 else f"limited by {result.request_rate_limit}")
        print(f"  request rate per GPU: {rate} ({limit})")
        print(f"  miss probability:    {format_figure(result.miss_probability, 4)} (pause {i.pause_mean_s:g} s {i.pause_distribution}, "
              f"TTL {i.ttl_s:g} s)")
        print(f"  replay per turn:     {format_figure(result.replay_tokens_per_turn, 4)} tokens, {format_figure(result.replay_seconds_per_turn, 4)} s "
              f"(window {result.replay_window_tokens} tokens at {i.prefill_tokens_per_s:,.0f} tokens/s)")
        print(f"  prompt prefill:      {result.prompt_prefill_tokens:,} tokens the cache misses, "
              f"{format_figure(result.prompt_prefill_s, 4)} s at {i.prefill_tokens_per_s:,.0f} tokens/s")
        print(f"  time to first token: {format_figure(result.ttft_s, 4)} s")
        t = result.tiers
        if t is not None:
            print(f"  tiers ({t.sessions:,} session{'' if t.sessions == 1 else 's'}): HBM {format_bytes(t.hbm_bytes)}, host RAM "
                  f"{format_bytes(t.host_ram_bytes)}, SSD {format_bytes(t.ssd_bytes)}, evicted "
                  f"{format_bytes(t.evicted_bytes)}; overflow: {t.action}")
        print(f"  parked session back: host RAM {format_figure(result.reload_from_host_s, 4)} s ({result.host_link_id}), SSD "
              f"{format_figure(result.reload_from_ssd_s, 4)} s ({result.ssd_link_id}), recompute {format_figure(result.recompute_s, 4)} s")
        o = result.other_parallelism
        if o is not None:
            print(f"  under {o.attention_parallelism.upper()} attention: {format_sessions(o.sessions_per_gpu)} sessions per GPU, "
                  f"{o.sessions_per_replica:,} per replica ({o.how})")
        if result.launch_flags is not None:
            print(f"  launch:              {result.launch_flags.text()}")
            for note in result.launch_flags.notes:
                print(f"    ({note})")
        for note in result.model_notes:  # the imported config's caveats; fields it ignores are said above
            if not any(field in note for field in result.ignored_config_fields):
                print(f"  note: {note}")
        if result.message:
            print(f"  note: {result.message}")
        if (far := context_mismatch(i.figures_measured_at_tokens, i.context_tokens)):
            print(f"  note: {far}")
        if result.overflow_message:
            print(f"  tiers: {result.overflow_message}")
    return 0
