"""``kvplan reconcile``: an engine's start-up log beside kvplan's prediction for the same settings.

``kvplan reconcile LOGFILE [LOGFILE ...] [--model ID] [--config config.json]
[--tp N] [--pp N] [--kv-format F] [--block-size N] [--max-model-len N] [--json]``.
Each log is read as text (at most :data:`planner.engines.logs.MAX_LOG_BYTES`),
never executed. With two logs of the same model, one line says whether both
engines store the same bytes per token per GPU and only their budgets differ.
Output: a table per log (text) or one JSON object (``--json``).
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from planner.catalog.entries import get_model
from planner.cli.args import config_path, positive_int
from planner.engines.logs import MAX_LOG_BYTES, parse_engine_log
from planner.errors import PlanInputError
from planner.engines.reconcile import NO_MODEL, pair_summary, reconcile


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``reconcile`` subcommand."""
    p = sub.add_parser("reconcile", help="compare a vLLM or SGLang start-up log with kvplan's prediction",
                       description="Engine start-up log vs kvplan: tokens, blocks, GiB, bytes per token per GPU.")
    p.add_argument("logs", nargs="+", type=Path, metavar="LOGFILE", help="start-up log(s), text ('-' for stdin)")
    p.add_argument("--model", help="catalog model id (default: the model the log names, when in the catalog)")
    p.add_argument("--config", type=config_path, help="a config.json instead of a catalog model")
    p.add_argument("--tp", type=positive_int(1024, "GPUs"), help="tensor-parallel size (default: the log's, else 1)")
    p.add_argument("--pp", type=positive_int(1024, "pipeline stages"),
                   help="pipeline-parallel size (default: the log's, else 1)")
    p.add_argument("--kv-format", help="KV format id or 'native' (default: the log's kv_cache_dtype)")
    p.add_argument("--block-size", type=positive_int(4096, "tokens"), help="vLLM block size (default: the log's, else 16)")
    p.add_argument("--max-model-len", type=positive_int(10**9, "tokens"), help="tokens per request for the concurrency figure")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _read(path: Path) -> str:
    import sys

    if str(path) == "-":
        data = sys.stdin.buffer.read(MAX_LOG_BYTES + 1)
    else:
        from planner.reads import read_capped

        data = read_capped(path, MAX_LOG_BYTES, "LOGFILE", "start-up log")
    if len(data) > MAX_LOG_BYTES:
        raise PlanInputError("LOGFILE", str(path), f"at most {MAX_LOG_BYTES:,} bytes (the start-up part of the log)")
    return data.decode("utf-8", errors="replace")


def _model(args: argparse.Namespace):
    if args.config is not None:
        from planner.hf.checkpoint import read_checkpoint
        from planner.hf.config import MAX_CONFIG_BYTES, model_from_config

        config, name = read_checkpoint(args.config, MAX_CONFIG_BYTES)
        return model_from_config(config, name=name, source=str(args.config))
    return get_model(args.model) if args.model else None


def run(args: argparse.Namespace) -> int:
    """Parse each log, reconcile it, print."""
    model = _model(args)
    results = []
    for path in args.logs:
        log = parse_engine_log(_read(path))
        results.append((str(path), reconcile(log, model, tp=args.tp, pp=args.pp, kv_format=args.kv_format,
                                             block_size=args.block_size, max_model_len=args.max_model_len)))
    summary = pair_summary(results[0][1], results[1][1]) if len(results) == 2 else None
    if args.json:
        print(json.dumps({"logs": [{"file": f, **asdict(r)} for f, r in results], "summary": summary}, indent=2,
                         default=str, allow_nan=False))
        return 0
    for f, r in results:
        print(f"== {f}: {r.engine}, model {r.model_id or '(none)'}")
        print("   settings: " + "; ".join(f"{s.name}={s.value} ({s.source})" for s in r.settings))
        if r.kv_bytes_per_token_per_gpu is not None:
            print(f"   kvplan: {r.kv_bytes_per_token_per_gpu:,} B per token per GPU")
        for row in r.rows:
            print(f"   {row.quantity}: engine {row.engine} | kvplan {row.kvplan or '-'} | {row.status}")
            if row.cause:
                print(f"      {row.cause}")
        for c in r.causes:
            print(f"   cause: {c}")
        for x in r.refusals:
            print(f"   not computed: {x}" + (" (pass --model)" if x == NO_MODEL else ""))
        for no, text in r.unread:
            print(f"   unread line {no}: {text[:200]}")
        if r.num_unread > len(r.unread):
            print(f"   ... {r.num_unread - len(r.unread)} more unread lines")
    if summary:
        print(summary)
    return 0
