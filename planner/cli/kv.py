"""``kvplan kv``: KV bytes of one sequence, from a catalog model, a config.json or a coefficient.

Per GPU at ``--tp`` / ``--pp`` (the GPU of the largest pipeline stage). With
``--engine vllm`` it adds vLLM's allocation next to the window-capped theory;
with ``--kv-budget-gib`` it adds vLLM's blocks, tokens and maximum concurrency
for that budget (per GPU) and the largest max_model_len the budget serves.
Per-sequence state (Mamba / linear attention in the pool, host-RAM rings outside
it) is its own figure: ``state_bytes`` (= in pool + outside) in the JSON.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, replace

from planner.catalog.entries import get_model, model_with_state_formats
from planner.cli.args import bounded_float, config_path, context_tokens_arg, nonneg_int, positive_int
from planner.hf.checkpoint import read_checkpoint
from planner.hf.config import MAX_CONFIG_BYTES, model_from_config, pattern_legend
from planner.engines.capacity import (
    DEFAULT_BLOCK_SIZE,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    MAX_BLOCK_SIZE,
    VLLMSettings,
    theory_vs_engine,
    vllm_capacity,
    vllm_max_model_len,
)
from planner.kv.formats import FORMATS, get_format
from planner.kv.pipeline import parse_partition
from planner.errors import PlanInputError
from planner.kv.notes import past_maximum_note, window_cap
from planner.messages import msg
from planner.hf.report import assumed_fields
from planner.kv.models import NATIVE, ModelSpec, coefficient_model
from planner.units import (MAX_CONTEXT_TOKENS, MIN_CONTEXT_TOKENS, format_bytes, format_figure, gib_to_bytes, to_gb,
                           to_gib)

MAX_BUDGET_GIB = 1_000_000.0
"""Largest --kv-budget-gib accepted (far above any device)."""


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``kv`` subcommand."""
    p = sub.add_parser("kv", help="KV bytes per token and per sequence",
                       description="KV-cache bytes of one sequence, per GPU.")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", help="catalog model id (kvplan models)")
    src.add_argument("--config", type=config_path, help="a Hugging Face config.json, or a checkpoint directory (config.json "
                                                 "and the sidecars the engine reads, e.g. hf_quant_config.json)")
    p.add_argument("--ignore-field", action="append", default=[], metavar="NAME",
                   help="accept a config field kvplan does not model (repeatable); the result says so")
    src.add_argument("--bytes-per-token", type=bounded_float(0, 1e9, lo_open=True),
                     help="a reported KV coefficient, bytes per token")
    p.add_argument("--mamba-cache-dtype", choices=sorted(STATE_DTYPES), default="auto",
                   help="Mamba / linear-attention conv state dtype, as vLLM's flag (auto = the model dtype, BF16)")
    p.add_argument("--mamba-ssm-cache-dtype", choices=sorted(STATE_DTYPES), default="auto",
                   help="temporal (SSM) state dtype, as vLLM's flag (auto = the config's, else the engine default)")
    p.add_argument("--state-bytes", type=nonneg_int(10**15, "bytes"), default=0,
                   help="with --bytes-per-token: fixed per-sequence state in the KV pool, bytes per GPU "
                        "(a Mamba / linear-attention hybrid's state)")
    p.add_argument("--context", type=context_tokens_arg, default=1_000_000,
                   help=f"sequence length, tokens, in [{MIN_CONTEXT_TOKENS:,}, {MAX_CONTEXT_TOKENS:,}]")
    p.add_argument("--kv-format", default=NATIVE, help=f"native or one of {', '.join(FORMATS)}")
    p.add_argument("--tp", type=positive_int(1024, "GPUs"), default=1, help="tensor-parallel degree (per-GPU figures)")
    p.add_argument("--pp", type=positive_int(1024, "pipeline stages"), default=1,
                   help="pipeline-parallel degree (per GPU of the largest stage: ceil(layers / PP) per group)")
    p.add_argument("--pp-layer-partition", metavar="N,N,...",
                   help="layers per pipeline stage, as vLLM's VLLM_PP_LAYER_PARTITION (default: vLLM's get_pp_indices)")
    p.add_argument("--engine", choices=["vllm"], help="add the engine's allocation next to the theory")
    p.add_argument("--block-size", type=positive_int(MAX_BLOCK_SIZE, "tokens"), default=DEFAULT_BLOCK_SIZE,
                   help="engine tokens per KV block (vLLM default 16)")
    p.add_argument("--max-num-batched-tokens", type=positive_int(10**8, "tokens"), default=DEFAULT_MAX_NUM_BATCHED_TOKENS,
                   help="engine tokens per scheduler step (sliding-window reservation)")
    p.add_argument("--no-hybrid-kv-cache-manager", action="store_true",
                   help="model vLLM with its hybrid KV cache manager off (e.g. with a KV connector)")
    p.add_argument("--kv-budget-gib", type=bounded_float(0, MAX_BUDGET_GIB),
                   help="available KV memory per GPU, GiB: adds vLLM's num_blocks, max_tokens, max_concurrency")
    p.add_argument("--max-model-len", type=positive_int(10**9, "tokens"),
                   help="tokens per request for max_concurrency (default: the model's maximum context)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


STATE_DTYPES = {"auto": None, "float32": "fp32", "bfloat16": "bf16", "float16": "fp16"}
"""vLLM's ``--mamba-cache-dtype`` / ``--mamba-ssm-cache-dtype`` values -> kvplan format ids."""


def model_from_args(args: argparse.Namespace) -> ModelSpec:
    """The model named by --model, --config or --bytes-per-token (state dtypes applied).

    Raises:
        PlanInputError: unknown model, unreadable or invalid config, or state
            dtypes given with --bytes-per-token.
    """
    conv, ssm = (get_format(STATE_DTYPES[v]) if STATE_DTYPES[v] else None
                 for v in (args.mamba_cache_dtype, args.mamba_ssm_cache_dtype))
    if args.ignore_field and args.config is None:
        raise PlanInputError("ignore_field", args.ignore_field[0], "only with --config (a catalog model reads "
                             "its own fields)")
    if args.model is not None:
        return model_with_state_formats(args.model, conv, ssm) if conv or ssm else get_model(args.model)
    if args.config is not None:
        config, name = read_checkpoint(args.config, MAX_CONFIG_BYTES)
        fmt = None if args.kv_format == NATIVE else get_format(args.kv_format)
        return model_from_config(config, name=name, main_format=fmt, source=str(args.config), state_format=conv,
                                 ssm_state_format=ssm, ignore_fields=tuple(args.ignore_field))
    if conv or ssm:
        flag, value = (("mamba_cache_dtype", args.mamba_cache_dtype) if conv
                       else ("mamba_ssm_cache_dtype", args.mamba_ssm_cache_dtype))
        raise PlanInputError(flag, value,
                             "auto with --bytes-per-token (give the state in bytes with --state-bytes)")
    return coefficient_model(args.bytes_per_token, state_bytes=args.state_bytes, state_in_pool=True)


def run(args: argparse.Namespace) -> int:
    """Print the estimate (text or JSON)."""
    if args.state_bytes and args.bytes_per_token is None:
        raise PlanInputError("state_bytes", args.state_bytes, "0 unless --bytes-per-token is given (a catalog model "
                             "or config.json brings its own state)")
    model = model_from_args(args)
    if args.pp_layer_partition is not None:
        model = replace(model, pp_layer_partition=parse_partition(args.pp_layer_partition))
    fmt = args.kv_format
    if args.config is not None:
        fmt = NATIVE  # the format was applied when importing
    est = model.estimate(args.context, fmt, args.tp, args.pp)
    settings = VLLMSettings(block_size=args.block_size, max_num_batched_tokens=args.max_num_batched_tokens,
                            max_model_len=args.max_model_len,
                            hybrid_kv_cache_manager=not args.no_hybrid_kv_cache_manager)
    out = {
        "model_id": est.model_id,
        "context_tokens": est.context_tokens,
        "kv_format": args.kv_format,
        "native_kv_format": str(model.native_format_label),
        "assumed_fields": assumed_fields(model.config_report),  # fields the config did not give: defaults taken  # what "native" means for this model, as `catalog` says
        "tp": est.tp,
        "pp": est.pp,
        "kv_bytes_per_token": est.kv_bytes_per_token,
        "kv_bytes": est.kv_bytes,
        "kv_gb": to_gb(est.kv_bytes),
        "kv_gib": to_gib(est.kv_bytes),
        "kv_bytes_per_replica": est.kv_bytes_per_replica,
        "state_bytes": est.state_bytes_per_sequence,
        "state_bytes_in_pool": est.state_bytes_in_pool,
        "state_bytes_outside_pool": est.state_bytes_outside_pool,
        "layer_pattern": model.layer_pattern,
        "ignored_fields": list(model.ignored_fields),
        "pp_stage_bytes": list(est.stage_bytes),
        "pp_binding_stage": est.binding_stage,
        "per": est.per,
        "basis": est.basis,
        "groups": [g.as_json() for g in est.groups],
    }
    engine = None
    if args.engine == "vllm":
        engine = theory_vs_engine(model, args.context, fmt, est.tp, est.pp, settings)
        out["engine"] = {
            "engine": engine.engine, "theory_bytes": engine.theory_bytes, "engine_bytes": engine.engine_bytes,
            "engine_gb": to_gb(engine.engine_bytes), "engine_gib": to_gib(engine.engine_bytes),
            "differs": engine.differs, "reasons": list(engine.reasons), "types": [asdict(t) for t in engine.types],
            "not_modelled": list(engine.unmodelled),
            "block_size": settings.block_size, "max_model_len": engine.settings.max_model_len,
            "per": engine.per,
        }
    cap = fit = None
    if args.kv_budget_gib is not None:
        budget = gib_to_bytes(args.kv_budget_gib)
        cap = vllm_capacity(model, budget, args.max_model_len, fmt, est.tp, est.pp, settings)
        fit = vllm_max_model_len(model, budget, fmt, est.tp, est.pp, settings)
        out.update({
            "kv_budget_bytes": cap.kv_budget_bytes, "block_size": cap.block_size, "max_model_len": cap.max_model_len,
            "page_size_bytes": cap.page_size_bytes, "bytes_per_block": cap.bytes_per_block,
            "num_blocks": cap.num_blocks, "max_tokens": cap.max_tokens, "max_concurrency": cap.max_concurrency,
            "blocks_per_request": cap.blocks_per_request, "fits_one_request": cap.fits_one_request,
            "largest_max_model_len": fit.max_model_len, "capacity_formula": cap.formula,
            "max_concurrency_note": cap.note, "capacity_per": cap.per,
        })
    cap_w = window_cap(model, fmt, est.tp, est.pp)
    if cap_w is not None:
        out.update({"window_tokens": cap_w.window_tokens,
                    "kv_bytes_per_token_in_window": cap_w.kv_bytes_per_token_in_window,
                    "kv_bytes_per_token_past_window": cap_w.kv_bytes_per_token_past_window,
                    "window_note": cap_w.sentence})
    notes = [n for n in (past_maximum_note(model, est.context_tokens, msg("Context")),) if n]
    notes.extend(model.notes if args.config is not None else ())
    notes.extend(f"checkpoint sidecar: {row.value}" for row in (model.config_report or ())
                 if row.field == "checkpoint sidecar")  # which file beside config.json set (or not) the KV format
    if cap is not None and args.max_model_len is None and cap.max_model_len != est.context_tokens:
        notes.append(f"vLLM's capacity figures are for {cap.max_model_len:,}-token requests (the model's maximum "
                     f"context; set --max-model-len), not {est.context_tokens:,}.")
    out["notes"] = notes
    if args.json:
        print(json.dumps(out, allow_nan=False))
        return 0
    shown = (f"{NATIVE} = {model.native_format_label}" if args.kv_format == NATIVE  # say what "native" resolved to
             else args.kv_format)
    print(f"{model.name}: {est.context_tokens:,} tokens, KV format {shown}, TP {est.tp}, PP {est.pp}")
    ignored = (f"; ignoring config field {', '.join(model.ignored_fields)} (--ignore-field)"
               if model.ignored_fields else "")
    # format_figure, not "{:,.6g}": from 1,000,000 B/token (an MHA model of 64+ layers) "g" turned to scientific
    # notation and rounded the figure (2,097,152 printed as 2.09715e+06)
    full = ("" if est.kv_bytes_per_token or not est.kv_bytes else
            "; every layer's window is full, so one more token adds nothing: the pool bytes below are the total"
            if cap_w is not None else "; no layer keeps per-token KV: the pool bytes below are per-sequence state")
    print(f"  KV bytes per token: {format_figure(est.kv_bytes_per_token, 6)} B per GPU at this length "
          f"({est.basis}{ignored}{full})")
    for sentence in assumed_fields(model.config_report):  # what the config did not say, beside the figure
        print(f"  assumed:            {sentence}")
    if cap_w is not None:
        chunked = "C" in (model.layer_pattern or "")  # Llama 4's chunked local attention caps KV as a window does
        print(f"  {'chunked / window:' if chunked else 'sliding window:  '}   {cap_w.sentence}, per GPU")
    if est.state_bytes_in_pool:
        print(f"  state per sequence: {est.state_bytes_in_pool:,} B = {format_bytes(est.state_bytes_in_pool)} per GPU, "
              "in the pool, constant in length (counted once per session)")
    print(f"  KV pool bytes:      {est.kv_bytes:,} B = {format_bytes(est.kv_bytes)} per {est.per}"
          + (" (state included)" if est.state_bytes_in_pool else ""))
    if est.stage_bytes:
        start, end = est.stage_layers
        print(f"  pipeline stages:    {', '.join(f'{b:,}' for b in est.stage_bytes)} B per GPU (vLLM get_pp_indices"
              f"{' with --pp-layer-partition' if model.pp_layer_partition else ''}); the figures above are stage "
              f"{est.binding_stage} (layers {start}-{end - 1}), the one that binds")
    if model.layer_pattern:
        print(f"  layer pattern:      {model.layer_pattern}  ({pattern_legend(model.layer_pattern)})")
    if est.tp * est.pp > 1:
        print(f"  per replica:        {est.kv_bytes_per_replica:,} B = {format_bytes(est.kv_bytes_per_replica)} "
              f"on {est.tp * est.pp} GPUs")
    if est.state_bytes_outside_pool:
        print(f"  state outside pool: {est.state_bytes_outside_pool:,} B = {format_bytes(est.state_bytes_outside_pool)} per session")
    if engine is not None:
        same = " (same as theory)" if not engine.differs and not engine.unmodelled else ""
        print(f"  vLLM allocates:     {engine.engine_bytes:,} B = {format_bytes(engine.engine_bytes)} per GPU" + same)
        for reason in engine.reasons:
            print(f"    - {reason}")
    if cap is not None:
        print(f"  vLLM, {format_bytes(cap.kv_budget_bytes)} KV per GPU: {cap.num_blocks:,} blocks of {cap.block_size} "
              f"tokens = {cap.max_tokens:,} tokens; maximum concurrency for {cap.max_model_len:,} tokens per "
              f"request: {cap.max_concurrency:.2f}x (not a hard cap)")
        print(f"  largest max_model_len for this budget: {fit.max_model_len:,} tokens")
    for note in notes:
        print(f"  note: {note}")
    return 0

