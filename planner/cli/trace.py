"""``kvplan trace``: measured prefix-cache hit rates from a request trace, on one cache or a fleet.

Reads FILE (Mooncake, Azure or generic JSONL, CSV or Parquet, plain, gzip or
zstd, any size, or a bundled ``sample:NAME``), gives the hit rate of an LRU
prefix cache of the given capacity and TTL (stack distances: the same
figures as ``planner.traces.replay``), with ``--sweep`` the whole
hit-rate-vs-capacity curve, with ``--replicas/--routing`` the fleet table,
with ``--sample-rate`` SHARDS estimates, with ``--save`` a curve file for the
Traces page. Semantics and formats: ``docs/traces.md``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time

from planner.cli.args import bounded_float, nonneg_int, positive_int
from planner.errors import PlanInputError
from planner.traces.rows import MIN_SAMPLE_RATE
from planner.reads import require_regular_file
from planner.traces import capacity_curve_columns, concurrency, kv_bytes_per_token_for, read_trace, reuse_profile, summarize
from planner.traces import typical_context_tokens
from planner.traces.curvefile import curve_document
from planner.traces.fleet import MAX_REPLICAS, ROUTING_POLICIES, fleet_table
from planner.traces.policy import DEFAULT_EVICTION_POLICY, EVICTION_POLICIES, POLICY_LABELS
from planner.traces.replay import NOT_MEASURABLE
from planner.traces.rows import MAX_BLOCK_TOKENS
from planner.traces.samples import SAMPLES
from planner.traces.sampling import sampling_note, standard_error
from planner.traces.checks import MAX_CAPACITY_BLOCKS, blocks_for_bytes
from planner.traces.trace import FORMATS
from planner.units import GB, MIN_TOKENS_PER_S, GiB, format_bytes, format_figure, gib_to_bytes

DEFAULT_SESSION_DECODE_TOKENS_PER_S = 50.0
"""Decode speed of one request for the concurrency estimate, tokens/s (the plan's default)."""


def _int_list(maximum: int):
    """Converter for a comma-separated list of 1 to 32 replica counts, each a whole number in [1, maximum]."""

    def convert(text: str) -> list[int]:
        parts = [part.strip() for part in text.split(",") if part.strip()]
        if not parts or len(parts) > 32 or not all(p.isdigit() and 1 <= int(p) <= maximum for p in parts):
            raise argparse.ArgumentTypeError(f"{text[:80]!r} is not allowed; expected 1 to 32 comma-separated "
                                             f"whole numbers of replicas in [1, {maximum:,}], e.g. 1,2,4,8,16")
        return sorted({int(p) for p in parts})

    return convert


def _routing_list(text: str) -> list[str]:
    values = [part.strip() for part in text.split(",") if part.strip()]
    bad = [v for v in values if v not in ROUTING_POLICIES]
    if not values or bad:
        raise argparse.ArgumentTypeError(f"{text!r}: each of " + ", ".join(ROUTING_POLICIES))
    return list(dict.fromkeys(values))


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``trace`` subcommand."""
    samples = ", ".join(f"sample:{n}" for n in SAMPLES)
    p = sub.add_parser("trace", help="measured prefix-cache hit rates from a request trace",
                       description="Replay a request trace through an LRU prefix cache of a given size and TTL.")
    p.add_argument("file", metavar="FILE", help=f"trace file (JSONL, CSV, Parquet; plain, .gz, .zst; any size), "
                                                f"or a bundled sample: {samples}")
    p.add_argument("--format", choices=FORMATS, default=None, help="trace format (default: detected)")
    p.add_argument("--block-tokens", type=positive_int(MAX_BLOCK_TOKENS, "tokens"), default=None,
                   help="tokens per hash_ids block (generic JSONL; Mooncake is 512)")
    p.add_argument("--model", default=None, help="catalog model id: prices blocks in bytes (kvplan models)")
    p.add_argument("--kv-format", default=None, help="KV format id for --model (default: native)")
    cap = p.add_mutually_exclusive_group()
    cap.add_argument("--capacity-gib", type=bounded_float(0, 10_000_000), default=None,
                     help="cache capacity (per replica), GiB (2^30 B); needs --model")
    cap.add_argument("--capacity-blocks", type=nonneg_int(MAX_CAPACITY_BLOCKS, "blocks"), default=None,
                     help="cache capacity (per replica), blocks (default: unlimited)")
    p.add_argument("--ttl-s", type=bounded_float(0, 1e9), default=None,
                   help="entries unused this many seconds expire (default: no TTL; 0 = nothing persists)")
    p.add_argument("--session-decode-tokens-per-s", type=bounded_float(MIN_TOKENS_PER_S, 1e7),
                   default=DEFAULT_SESSION_DECODE_TOKENS_PER_S,
                   help="decode speed of one request, for the concurrency estimate (default 50)")
    p.add_argument("--tokenizer", metavar="TOKENIZER.json", default=None,
                   help="FILE holds prompts (timestamp, prompt or messages, optional session_id, output_length): "
                        "tokenize them offline with this tokenizer.json and hash full --block-tokens blocks as the "
                        "engine does (docs/traces.md, 'Prompts')")
    p.add_argument("--chat-template", metavar="TEMPLATE.jinja", default=None,
                   help="Jinja chat template for messages rows (default: tokenizer_config.json beside --tokenizer)")
    p.add_argument("--kv-events", action="store_true",
                   help="FILE is a recorded vLLM KV-event stream (JSONL of KVEventBatch; docs/traces.md, "
                        "'The engine's record')")
    p.add_argument("--metrics", metavar="METRICS.txt", default=None,
                   help="a Prometheus snapshot of the engine (/metrics): its prefix-cache counters' hit rate is "
                        "shown beside the replay's")
    p.add_argument("--eviction-policy", choices=EVICTION_POLICIES, default=DEFAULT_EVICTION_POLICY,
                   help="the engine's eviction order: vllm (LRU, a request's tail blocks evicted first; default) "
                        "or sglang (LRU over radix-tree leaves)")
    p.add_argument("--sweep", action="store_true", help="also compute hit rate vs capacity (whole curve)")
    p.add_argument("--sample-rate", type=bounded_float(MIN_SAMPLE_RATE, 1), default=1.0,
                   help="keep this fraction of distinct blocks (SHARDS spatial sampling; e.g. 0.01); "
                        "results are estimates with their expected error (default 1: exact)")
    p.add_argument("--replicas", type=_int_list(MAX_REPLICAS), default=None,
                   help="fleet sizes to replay, e.g. 1,2,4,8,16 (each replica has the cache capacity)")
    p.add_argument("--routing", type=_routing_list, default=None,
                   help="routing policies for --replicas: " + ", ".join(ROUTING_POLICIES) + " (default: all)")
    dist = p.add_mutually_exclusive_group()
    dist.add_argument("--workers", type=positive_int(256, "worker processes"), default=None,
                      help="run the fleet replay (--replicas) on a local Dask cluster of N worker processes "
                           "(127.0.0.1 only; pip install 'kvplan[fleet]')")
    dist.add_argument("--scheduler", metavar="ADDRESS", default=None,
                      help="run the fleet replay on an existing Dask scheduler (tcp://host:8786)")
    p.add_argument("--save", metavar="CURVE.json", default=None,
                   help="write the curve (with the trace summary, settings and sampling) for the Traces page")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(func=run)


def _num(x: float | None) -> float | None:
    """JSON-safe float: NaN and inf become null."""
    return None if x is None or not math.isfinite(x) else float(x)


class _Bar:
    """A tqdm bar on stderr (shown on a terminal only) fed by ``(fraction, label)`` callbacks."""

    def __init__(self, what: str) -> None:
        self.bar = None
        if sys.stderr.isatty():   # tqdm imported only for a terminal
            from tqdm import tqdm

            self.bar = tqdm(total=1000, desc=f"kvplan trace: {what}", file=sys.stderr, leave=False,
                            bar_format="{desc}: {percentage:3.0f}%|{bar}| {elapsed}<{remaining}")

    def __call__(self, fraction: float, label: str) -> None:
        if self.bar is not None:
            self.bar.set_description_str(f"kvplan trace: {label}", refresh=False)
            self.bar.update(max(0, round(fraction * 1000) - self.bar.n))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _staged(what: str, func, *args, **kwargs):
    bar = _Bar(what)
    try:
        return func(*args, progress=bar, **kwargs)
    finally:
        bar.close()


def run(args: argparse.Namespace) -> int:
    """Read, measure, print."""
    if args.routing is not None and args.replicas is None:
        raise PlanInputError("--replicas", None, "a list of fleet sizes (e.g. 1,4,16) when --routing is given")
    if (args.workers is not None or args.scheduler is not None) and args.replicas is None:
        raise PlanInputError("--workers" if args.workers is not None else "--scheduler",
                             args.workers if args.workers is not None else args.scheduler,
                             "used with --replicas (it runs the fleet replay)")
    if args.save is not None and not args.sweep:
        raise PlanInputError("--save", args.save, "used with --sweep (it saves the curve)")
    if args.save is not None and os.path.isdir(args.save):
        raise PlanInputError("--save", args.save, "a file path, not a folder")
    if not str(args.file).startswith("sample:"):
        require_regular_file(args.file, "trace")  # a device, FIFO or directory is refused before any read
    started = time.perf_counter()
    if args.chat_template is not None and args.tokenizer is None:
        raise PlanInputError("--tokenizer", None, "a tokenizer.json when --chat-template is given")
    if args.kv_events and (args.tokenizer is not None or args.format is not None or args.sample_rate < 1.0):
        raise PlanInputError("--kv-events", True, "without --tokenizer, --format or --sample-rate")
    counters = None
    if args.metrics is not None:
        from planner.traces.kv_events import read_prefix_cache_counters

        require_regular_file(args.metrics, "metrics")
        counters = read_prefix_cache_counters(args.metrics)
    if args.tokenizer is not None and args.block_tokens is None:
        raise PlanInputError("--block-tokens", None, "the engine's tokens per block (e.g. 16), with --tokenizer")
    _compiled_loops()   # after the checks of the arguments, before the first loop runs
    if args.kv_events:
        from planner.traces.kv_events import read_kv_events

        trace = _staged("reading", read_kv_events, args.file)
    elif args.tokenizer is not None:
        from planner.traces.prompts import read_prompts

        if args.block_tokens is None:
            raise PlanInputError("--block-tokens", None, "the engine's tokens per block (e.g. 16), with --tokenizer")
        if args.format is not None or args.sample_rate < 1.0 or str(args.file).startswith("sample:"):
            raise PlanInputError("--tokenizer", args.tokenizer,
                                 "a prompts file of your own, without --format or --sample-rate")
        require_regular_file(args.tokenizer, "tokenizer")
        trace = _staged("reading", read_prompts, args.file, tokenizer=args.tokenizer, block_tokens=args.block_tokens,
                        chat_template=args.chat_template)
    else:
        trace = _staged("reading", read_trace, args.file, format=args.format, block_tokens=args.block_tokens,
                        max_bytes=None, sample_rate=args.sample_rate)
    per_token = None
    if args.model is not None:
        per_token = kv_bytes_per_token_for(args.model, typical_context_tokens(trace), args.kv_format)
    elif args.kv_format is not None:
        raise PlanInputError("--model", None, "a catalog model id when --kv-format is given")
    capacity_blocks = args.capacity_blocks
    cap_bytes = None
    if args.capacity_gib is not None:
        if per_token is None:
            raise PlanInputError("--model", None, "a catalog model id, to turn --capacity-gib into blocks")
        cap_bytes = float(gib_to_bytes(args.capacity_gib))
        if trace.has_prefix_hashes:
            capacity_blocks = blocks_for_bytes(cap_bytes, per_token, trace.block_tokens)
    block_bytes = per_token * trace.block_tokens if (per_token is not None and trace.block_tokens) else None
    if capacity_blocks is not None and block_bytes is not None:
        cap_bytes = capacity_blocks * block_bytes

    summary = summarize(trace)
    conc = concurrency(trace, session_decode_tokens_per_s=args.session_decode_tokens_per_s)
    measurable = trace.has_prefix_hashes
    hits = profile = frame = fleet = None
    sampling = None
    if measurable:
        profile = _staged("stack distances", reuse_profile, trace, with_ages=args.ttl_s is not None,
                          eviction_policy=args.eviction_policy)
        hits = profile.hits(capacity_blocks, args.ttl_s)
        if profile.sampled:
            sampling = {"sample_rate": profile.sample_rate,
                        "expected_error": _num(2 * standard_error(trace, profile, capacity_blocks)),
                        "note": sampling_note(trace, profile, capacity_blocks)}
    sharing = sharing_note = None
    if measurable:
        from planner.traces.sharing import measure_sharing

        try:
            sharing = measure_sharing(trace)
        except PlanInputError as exc:  # hash-sampled or too large: said, never guessed
            sharing_note = str(exc)
    curve = None
    if args.sweep and measurable:
        print(f"kvplan trace: computing the hit-rate curve over {trace.num_block_refs:,} block references",
              file=sys.stderr)
        frame = capacity_curve_columns(profile, ttl_s=args.ttl_s, kv_bytes_per_token=per_token)   # no pandas
        curve = [{
            "capacity_blocks": int(c), "capacity_bytes": _num(b), "capacity_gb": _num(gb), "capacity_gib": _num(gib),
            "block_hit_rate": float(br), "token_hit_rate": float(tr),
        } for c, b, gb, gib, br, tr in zip(*(frame[k] for k in ("capacity_blocks", "capacity_bytes", "capacity_gb",
                                                                  "capacity_gib", "block_hit_rate",
                                                                  "token_hit_rate")))]
    if args.replicas is not None and measurable and (args.workers is not None or args.scheduler is not None):
        from planner.traces.fleet_dask import fleet_table_dask

        table, _ = _staged("fleet", fleet_table_dask, trace, args.replicas, args.routing or list(ROUTING_POLICIES),
                           capacity_blocks=capacity_blocks, ttl_s=args.ttl_s, eviction_policy=args.eviction_policy,
                           workers=args.workers, scheduler=args.scheduler)
    elif args.replicas is not None and measurable:
        table, _ = _staged("fleet", fleet_table, trace, args.replicas, args.routing or list(ROUTING_POLICIES),
                           capacity_blocks=capacity_blocks, ttl_s=args.ttl_s, eviction_policy=args.eviction_policy)
    if args.replicas is not None and measurable:
        fleet = [{k: (None if isinstance(v, float) and not math.isfinite(v) else
                      v.item() if hasattr(v, "item") else v) for k, v in row.items()}
                 for row in table.to_dict(orient="records")]
    elapsed_s = time.perf_counter() - started
    print(f"kvplan trace: done in {elapsed_s:.2f} s", file=sys.stderr)

    data = {
        "trace": trace.name, "format": trace.format, "source": trace.source,
        "requests": trace.num_requests, "duration_s": summary.duration_s,
        "mean_rate_per_s": summary.mean_rate_per_s,
        "block_tokens": trace.block_tokens, "block_refs": trace.num_block_refs,
        "unique_blocks": trace.num_unique_blocks, "input_tokens": int(trace.input_tokens.sum()),
        "malformed_rows": trace.malformed.num_malformed,
        "malformed_examples": [{"line": line, "reason": reason} for line, reason in trace.malformed.examples],
        "notes": list(trace.notes),
        "hit_rates_measurable": measurable, "message": "" if measurable else NOT_MEASURABLE,
        "sampling": sampling,
        "model": args.model, "kv_bytes_per_token": per_token, "block_bytes": block_bytes,
        "capacity_blocks": capacity_blocks, "capacity_bytes": _num(cap_bytes),
        "capacity_gb": _num(cap_bytes / GB) if cap_bytes is not None else None,
        "capacity_gib": _num(cap_bytes / GiB) if cap_bytes is not None else None,
        "ttl_s": args.ttl_s,
        "eviction_policy": args.eviction_policy,
        "hit_blocks": hits.num_hit_blocks if hits else None, "hit_tokens": hits.num_hit_tokens if hits else None,
        "block_hit_rate": hits.block_hit_rate if hits else None,
        "token_hit_rate": hits.token_hit_rate if hits else None,
        "shared_prefix": None if sharing is None else {
            "shared_prefix": sharing.shared_prefix, "unlimited_token_hit_rate": sharing.hit_rate,
            "mean_prompt_tokens": sharing.mean_prompt_tokens, "window_s": sharing.window_s,
            "shared_tokens": sharing.shared_tokens, "input_tokens": sharing.input_tokens,
            "sessions_from": sharing.sessions_from},
        "shared_prefix_note": sharing_note,
        "engine_counters": None if counters is None else {
            "source": counters.source, "prefix_cache_queries_tokens": counters.queries_tokens,
            "prefix_cache_hits_tokens": counters.hits_tokens, "token_hit_rate": counters.token_hit_rate},
        "session_decode_tokens_per_s": conc.session_decode_tokens_per_s,
        "peak_concurrent_requests": conc.peak_concurrent_requests,
        "mean_concurrent_requests": conc.mean_concurrent_requests,
    }
    if args.sweep:
        data["curve"] = curve
    if args.replicas is not None:
        data["fleet"] = fleet
    if args.save is not None and frame is not None:
        _save(args, trace, summary, per_token, sampling, frame)
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0
    _print_text(data, trace, summary, conc, hits, per_token, args)
    return 0


def _compiled_loops() -> None:
    """Build the trace loops ahead of time on first use (``planner.traces.kernels``), saying so on a terminal
    (as the progress bar: a script's stderr keeps its one line per error)."""
    from planner.traces import kernels

    if not kernels.aot_enabled() or kernels.aot_ready():
        return
    say = sys.stderr.isatty()
    if say:
        print(f"kvplan trace: compiling the trace loops ahead of time, once, into {kernels.aot_dir()} (numba and a "
              f"C compiler; about 10 to 30 s); later runs load them without numba", file=sys.stderr)
    reason = kernels.compile_ahead_of_time()
    if reason is not None and say:
        print(f"kvplan trace: not compiled ahead of time ({reason}); numba compiles and caches the loops instead "
              f"(about 1 s of start-up per run)", file=sys.stderr)


def _save(args, trace, summary, per_token, sampling, frame) -> None:
    doc = curve_document(
        trace={"name": trace.name, "format": trace.format, "requests": trace.num_requests,
               "block_refs": trace.num_block_refs, "unique_blocks": trace.num_unique_blocks,
               "duration_s": summary.duration_s, "malformed_rows": trace.malformed.num_malformed,
               "mean_input_tokens": typical_context_tokens(trace)},
        block_tokens=int(trace.block_tokens), ttl_s=args.ttl_s, model=args.model, kv_bytes_per_token=per_token,
        sampling=None if sampling is None else {"sample_rate": sampling["sample_rate"],
                                                "expected_error": sampling["expected_error"] or 0.0},
        curve=frame, eviction_policy=args.eviction_policy)
    try:
        with open(args.save, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, allow_nan=False)
    except OSError as exc:
        raise PlanInputError("--save", args.save, f"a writable path ({exc.strerror or exc})") from None
    print(f"kvplan trace: curve saved to {args.save}", file=sys.stderr)


def _print_text(data, trace, summary, conc, hits, per_token, args) -> None:
    print(f"{trace.name} ({trace.format}): {trace.num_requests:,} requests over {summary.duration_s / 60:.1f} min, "
          f"{format_figure(summary.mean_rate_per_s)} requests/s")
    print(f"  {trace.malformed.summary()}")
    for note in trace.notes:
        print(f"  note: {note}")
    if hits is None:
        print(f"  {NOT_MEASURABLE}")
    else:
        print(f"  {trace.num_block_refs:,} block references of {trace.block_tokens:,} tokens, "
              f"{trace.num_unique_blocks:,} distinct")
        size = "unlimited" if data["capacity_blocks"] is None else f"{data['capacity_blocks']:,} blocks"
        if data["capacity_bytes"] is not None:
            size += f" = {format_bytes(data['capacity_bytes'])}"
        if per_token is not None:
            size += f" at {format_figure(per_token, 6)} B/token ({args.model})"
        ttl = "none" if args.ttl_s is None else f"{args.ttl_s:g} s"
        print(f"  cache: {size}; TTL {ttl}; eviction: {POLICY_LABELS[args.eviction_policy]}")
        print(f"  block hit rate: {hits.block_hit_rate:.1%}   token hit rate: {hits.token_hit_rate:.1%}")
        sp = data["shared_prefix"]
        if sp is not None:
            print(f"  shared prefix: {sp['shared_prefix']:.1%} of prompt tokens in blocks another session also "
                  f"references within {sp['window_s']:g} s (unlimited-cache token hit rate {sp['unlimited_token_hit_rate']:.1%}, "
                  f"own history included); measured at prompts of {sp['mean_prompt_tokens']:,.0f} tokens on average: "
                  f"kvplan plan --hit-rate {hits.token_hit_rate:.2f} --shared-prefix {sp['shared_prefix']:.2f}")
        elif data["shared_prefix_note"]:
            print(f"  shared prefix not measured: {data['shared_prefix_note']}")
        if data["sampling"]:
            print(f"  {data['sampling']['note']}")
    if data["engine_counters"] is not None:
        ec = data["engine_counters"]
        rate = "n/a" if ec["token_hit_rate"] is None else f"{ec['token_hit_rate']:.1%}"
        replayed = "" if hits is None else f" (replay above: {hits.token_hit_rate:.1%})"
        print(f"  engine's counters: token hit rate {rate}{replayed} = {ec['prefix_cache_hits_tokens']:,.0f} / "
              f"{ec['prefix_cache_queries_tokens']:,.0f} tokens (vllm:prefix_cache_hits / queries)")
    print(f"  concurrency at {conc.session_decode_tokens_per_s:g} tokens/s per request: "
          f"peak {conc.peak_concurrent_requests:,}, mean {format_figure(conc.mean_concurrent_requests)}")
    policy = POLICY_LABELS[args.eviction_policy]
    if data.get("curve"):
        print(f"\n  hit rate vs capacity (eviction: {policy})")
        print("  capacity_blocks   capacity                   block_hit  token_hit")
        for row in data["curve"]:
            shown = format_bytes(row["capacity_bytes"]) if row["capacity_bytes"] is not None else ""
            print(f"  {row['capacity_blocks']:>15,}   {shown:<25}  {row['block_hit_rate']:>8.1%}  "
                  f"{row['token_hit_rate']:>8.1%}")
    if data.get("fleet"):
        print(f"\n  fleet, each replica's cache as above (eviction: {policy})")
        print("  replicas  routing      method            block_hit  token_hit  replica range      imbalance")
        for row in data["fleet"]:
            print(f"  {row['replicas']:>8}  {row['routing']:<11}  {row['method']:<16}  {row['block_hit_rate']:>8.1%}  "
                  f"{row['token_hit_rate']:>8.1%}  {row['min_replica_block_hit_rate']:>6.1%} - "
                  f"{row['max_replica_block_hit_rate']:<6.1%}  {row['load_imbalance']:>8.3f}")
