"""The Traces page's heavy work as one job for the worker pool (``kvplan_app.jobs``), and a bounded shared cache.

:func:`analyze_trace` runs in a worker process: it reads the trace (an upload's private temporary file, or a
bundled sample),
computes stack distances, the capacity and TTL curves, the replay at the plan's usable KV, the fleet table
and the traffic figures, all with :mod:`planner.traces`, and returns a :class:`TraceAnalysis`: scalars, small frames and
figures of at most ``planner.traces.binning.MAX_CHART_POINTS`` points per series, never the per-reference
arrays. Imports no Streamlit (it runs in the worker).

:func:`shared_analysis` keys each job by its inputs (an upload by its SHA-256): a second session asking for the
same thing, while it runs or afterwards, waits on the same job. An upload goes to its job as a file, written
(owner-only) only when a job is submitted for it and deleted when that job ends, fails or is cancelled: the
server keeps no copy of its own (the bytes are not pickled through the pool's pipe), only Streamlit's upload
store holds them while the session keeps the file. At most :data:`RESULT_ENTRIES` results are kept
for :data:`RESULT_TTL_S` seconds. A waiter whose session ends or reruns (Streamlit stops its script) lets go;
the job is cancelled when no session has waited on it for :data:`CANCEL_GRACE_S` seconds (a rerun of the same
page asks again well within that, and keeps the job).
"""

from __future__ import annotations

import atexit
import collections
import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pandas as pd

RESULT_ENTRIES = 8
"""Results kept for the whole server (each is small: a few hundred kB)."""
RESULT_TTL_S = 600.0
"""A result nobody asked for this long is computed again when next needed."""
CANCEL_GRACE_S = 10.0
"""A running job nobody waits on is cancelled after this long."""
TOKENIZER_FILE = "tokenizer.json"
TOKENIZER_CONFIG_FILE = "tokenizer_config.json"
METRICS_FILE = "metrics.prom"
EXTRA_FILES = (TOKENIZER_FILE, TOKENIZER_CONFIG_FILE, METRICS_FILE)
"""Names of the files an upload's job may get beside it (in one owner-only folder)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class TraceAnalysis:
    """What the Traces page shows for one trace, plan and TTL (everything small).

    Attributes:
        trace_name, block_tokens, num_requests, malformed_summary, num_malformed, notes, source: from the trace.
        summary: ``planner.traces.TraceSummary``.
        has_prefix_hashes: whether hit rates are measurable (the hit-rate fields are None when not).
        peak_concurrent_requests, mean_concurrent_requests: ``planner.traces.Concurrency``'s figures.
        kv_bytes_per_token, typical_context_tokens, capacity_blocks, block_bytes, saturation_blocks: sizing.
        hits, unlimited: ``planner.traces.HitRates`` at the usable KV and unlimited, at the TTL.
        curve: the capacity curve (``planner.traces.CURVE_COLUMNS``), for its CSV.
        sharing: ``planner.traces.sharing.SharingMeasure`` (the shared prefix beside the hit rate), or None when
            the trace cannot be measured that way (hash-sampled, too large); sharing_note says why.
        fleet: the fleet table (``planner.traces.FLEET_COLUMNS``), or None when no replicas or routing were asked.
        eviction_policy: the cache's policy id (``planner.traces.policy``).
        engine_counters: ``planner.traces.kv_events.EngineCounters`` of an uploaded metrics snapshot, or None.
        figures: name -> plotly figure (lengths, arrivals, concurrency; curve, ttl_curve, cache_bytes, fleet).
    """

    trace_name: str
    block_tokens: int | None
    num_requests: int
    num_malformed: int
    malformed_summary: str
    notes: tuple[str, ...]
    source: str
    summary: Any
    has_prefix_hashes: bool
    peak_concurrent_requests: int
    mean_concurrent_requests: float
    figures: dict
    kv_bytes_per_token: float | None = None
    typical_context_tokens: int | None = None
    capacity_blocks: int | None = None
    block_bytes: float | None = None
    saturation_blocks: int | None = None
    hits: Any = None
    unlimited: Any = None
    curve: pd.DataFrame | None = None
    fleet: pd.DataFrame | None = None
    sharing: Any = None
    sharing_note: str = ""
    eviction_policy: str = "vllm"
    engine_counters: Any = None


def analyze_trace(*, sample: str | None, path: str | None, fmt: str, block_tokens: int, name: str,
                  model_id: str, kv_format: str | None, usable_kv_bytes: float, gpu_name: str, ttl_s: float | None,
                  session_decode_tokens_per_s: float, ttl_label: str, fleet_replicas: tuple[int, ...] = (),
                  fleet_routings: tuple[str, ...] = (), plan_context_tokens: int | None = None,
                  plan_requests_per_min: float | None = None, plan_sessions: float | None = None,
                  plan_gpus_per_replica: int = 1,
                  plan_hit_rate: float | None = None, lang: str = "en", eviction_policy: str = "vllm",
                  kind: str = "trace", tokenizer_path: str | None = None, metrics_path: str | None = None,
                  max_refs: int | None = None,
                  progress: Callable[[str, float], None] | None = None) -> TraceAnalysis:
    """Read and replay one trace (in a worker; see the module docstring). ``sample`` names a bundled trace,
    else ``path`` holds the upload (read with ``fmt``, ``block_tokens`` for generic JSONL). The fleet
    table is computed for ``fleet_replicas`` x ``fleet_routings`` when both are given. The ``plan_*`` figures
    (context per session, request rate per GPU per minute, sessions per GPU, prefix hit rate) mark the plan on
    every chart; ``eviction_policy`` is the cache's (``planner.traces.policy``); chart text is in ``lang`` (the page's language, from the same catalogue as the page). ``path``: the
    upload's temporary file (:func:`shared_analysis` writes it; read here under the trace size cap).
    ``kind``: what the upload holds, as the CLI reads it: ``trace`` (``read_trace``), ``prompts``
    (``planner.traces.prompts.read_prompts`` with ``tokenizer_path``, a ``tokenizer.json`` written beside the
    uploaded ``tokenizer_config.json`` when there is one; ``block_tokens`` is the engine's) or ``kv-events``
    (``planner.traces.kv_events.read_kv_events``; ``metrics_path``, when uploaded, gives the engine's
    counters). ``max_refs``: the upload's reference limit for the last two (the reader stops past it).

    Raises:
        PlanInputError: the trace is unreadable, or the model has no KV figure at its typical context.
    """
    from planner.traces import (
        MAX_TRACE_BYTES, DEFAULT_TTLS_S, arrivals_per_minute, blocks_for_bytes, capacity_curve, concurrency, default_capacities,
        fleet_table, kv_bytes_per_token_for, load_sample, read_trace, replay, reuse_profile, summarize, ttl_curve,
        typical_context_tokens,
    )
    from kvplan_app.charts.traces import (
        arrivals_figure, cache_bytes_figure, capacity_curve_figure, concurrency_figure, fleet_figure,
        lengths_figure, ttl_curve_figure,
    )

    from kvplan_app.i18n import translator
    from planner.traces.policy import POLICY_ENGINES
    from kvplan_app.markdown import plotly_text

    tr = translator(lang)

    def step(stage: str, lo: float, hi: float = 0.0):
        if progress is None:
            return None
        progress(stage, lo)
        return lambda f, label: progress(label, lo + (hi - lo) * min(max(f, 0.0), 1.0))

    reading = step("reading the trace", 0.0, 0.3)
    counters = None
    if sample is not None:
        trace = load_sample(sample)
    elif kind == "prompts":
        from planner.errors import PlanInputError
        from planner.traces.prompts import read_prompts

        try:
            trace = read_prompts(path, tokenizer=tokenizer_path, block_tokens=block_tokens,
                                 name=name or "uploaded prompts", max_bytes=MAX_TRACE_BYTES, max_refs=max_refs,
                                 progress=reading)
        except PlanInputError as exc:   # name the uploaded file, never the server's temporary copy
            folder = (tokenizer_path or "")[:-len(TOKENIZER_FILE)]   # the private folder of the job's files
            if folder and isinstance(exc.value, str) and exc.value.startswith(folder):
                raise PlanInputError(exc.field, exc.value[len(folder):], exc.allowed) from None
            raise
    elif kind == "kv-events":
        from planner.errors import PlanInputError
        from planner.traces.kv_events import read_kv_events, read_prefix_cache_counters

        if metrics_path is not None:
            try:
                counters = read_prefix_cache_counters(metrics_path)
            except PlanInputError as exc:   # name the uploaded snapshot, never the server's temporary copy
                raise PlanInputError(exc.field, "metrics snapshot", exc.allowed) from None
        trace = read_kv_events(path, name=name or "uploaded KV events", max_bytes=MAX_TRACE_BYTES, max_refs=max_refs,
                               progress=reading)
    else:
        trace = read_trace(path, format=None if fmt == "detect" else fmt,   # streamed, under MAX_TRACE_BYTES
                           block_tokens=block_tokens if fmt in ("detect", "jsonl") else None,
                           name=name or "uploaded trace", progress=reading)
    conc = concurrency(trace, session_decode_tokens_per_s=session_decode_tokens_per_s)
    figures = {"lengths": lengths_figure(trace.input_tokens, trace.output_tokens,
                                         plan_context_tokens=plan_context_tokens, tr=tr),
               "arrivals": arrivals_figure(arrivals_per_minute(trace), plan_requests_per_min=plan_requests_per_min,
                                           tr=tr),
               "concurrency": concurrency_figure(conc, plan_sessions=plan_sessions,
                                                 plan_gpus_per_replica=plan_gpus_per_replica, tr=tr)}
    common = dict(trace_name=trace.name, block_tokens=trace.block_tokens, num_requests=trace.num_requests,
                  num_malformed=trace.malformed.num_malformed, malformed_summary=trace.malformed.summary(),
                  notes=tuple(trace.notes), source=trace.source, summary=summarize(trace),
                  has_prefix_hashes=trace.has_prefix_hashes, peak_concurrent_requests=conc.peak_concurrent_requests,
                  mean_concurrent_requests=conc.mean_concurrent_requests, figures=figures,
                  eviction_policy=eviction_policy, engine_counters=counters)
    if not trace.has_prefix_hashes:
        return TraceAnalysis(**common)

    profile = reuse_profile(trace, progress=step("stack distances", 0.3, 0.6), eviction_policy=eviction_policy)
    typical = typical_context_tokens(trace)
    kv_per_token = kv_bytes_per_token_for(model_id, typical, kv_format)
    capacity_blocks = blocks_for_bytes(max(usable_kv_bytes, 0), kv_per_token, trace.block_tokens)
    block_bytes = kv_per_token * trace.block_tokens
    caps = sorted(set(default_capacities(profile).tolist()) | {capacity_blocks})
    curve = capacity_curve(profile, caps, ttl_s=ttl_s, kv_bytes_per_token=kv_per_token)
    figures["curve"] = capacity_curve_figure(curve, usable_kv_bytes=capacity_blocks * block_bytes,
                                             usable_label=tr("this plan's usable KV on {gpu}").format(gpu=plotly_text(gpu_name)),
                                             title=tr("Hit rate vs cache capacity (TTL: {ttl}; eviction: {policy})").format(
                                                 ttl=ttl_label, policy=POLICY_ENGINES[eviction_policy]),
                                             tr=tr)
    figures["ttl_curve"] = ttl_curve_figure(ttl_curve(profile, DEFAULT_TTLS_S, capacity_blocks=capacity_blocks),
                                            title=tr("Hit rate vs TTL at the usable KV (eviction: {policy})").format(
                                                policy=POLICY_ENGINES[eviction_policy]), tr=tr,
                                            plan_ttl_s=float("inf") if ttl_s is None else ttl_s)
    timeline = replay(trace, capacity_blocks=capacity_blocks, ttl_s=ttl_s, kv_bytes_per_token=kv_per_token,
                      progress=step("replay", 0.6, 0.8), eviction_policy=eviction_policy).timeline
    figures["cache_bytes"] = cache_bytes_figure(timeline, capacity_bytes=capacity_blocks * block_bytes, tr=tr)
    fleet = None
    if fleet_replicas and fleet_routings:
        fleet, _ = fleet_table(trace, sorted(fleet_replicas), list(fleet_routings), capacity_blocks=capacity_blocks,
                               ttl_s=ttl_s, progress=step("fleet of replicas", 0.8, 1.0),
                               eviction_policy=eviction_policy)
        figures["fleet"] = fleet_figure(fleet, plan_hit_rate=plan_hit_rate, tr=tr)
    from planner.errors import PlanInputError
    from planner.traces.sharing import measure_sharing

    sharing, sharing_note = None, ""
    try:
        sharing = measure_sharing(trace)
    except PlanInputError as exc:
        sharing_note = str(exc)
    return TraceAnalysis(**common, sharing=sharing, sharing_note=sharing_note,
                         kv_bytes_per_token=kv_per_token, typical_context_tokens=typical,
                         capacity_blocks=capacity_blocks, block_bytes=block_bytes,
                         saturation_blocks=profile.saturation_blocks, hits=profile.hits(capacity_blocks, ttl_s),
                         unlimited=profile.hits(None, ttl_s), curve=curve, fleet=fleet)


@dataclass
class _Entry:
    job: Any
    waiters: int
    used: float


_RESULTS: "collections.OrderedDict[tuple, _Entry]" = collections.OrderedDict()
_LOCK = threading.Lock()
_SPOOL_DIR: str | None = None
_SPOOL_LOCK = threading.Lock()
SPOOL_CHUNK_BYTES = 1 << 20
"""Written 1 MiB at a time (each write releases the GIL)."""


def spool_dir() -> str:
    """This server's directory for upload files (owner-only, made on first use)."""
    global _SPOOL_DIR
    with _SPOOL_LOCK:
        if _SPOOL_DIR is None:
            _SPOOL_DIR = tempfile.mkdtemp(prefix="kvplan-uploads-")
            atexit.register(shutil.rmtree, _SPOOL_DIR, ignore_errors=True)
        return _SPOOL_DIR


def _new_spool_file() -> tuple[int, str]:
    global _SPOOL_DIR
    try:
        return tempfile.mkstemp(prefix="trace-", dir=spool_dir())
    except FileNotFoundError:   # the directory was removed (a temp cleaner): make a new one
        with _SPOOL_LOCK:
            _SPOOL_DIR = None
        return tempfile.mkstemp(prefix="trace-", dir=spool_dir())


def upload_digest(data) -> str:
    """SHA-256 of an upload's bytes (hex), 1 MiB at a time (hashlib releases the GIL on each chunk)."""
    view, digest = memoryview(data), hashlib.sha256()
    for start in range(0, len(view), SPOOL_CHUNK_BYTES):
        digest.update(view[start:start + SPOOL_CHUNK_BYTES])
    return digest.hexdigest()


def spool_upload(data) -> str:
    """Write an upload's bytes (bytes or memoryview) to a new owner-only file; returns its path."""
    fd, path = _new_spool_file()
    try:
        view = memoryview(data)
        with os.fdopen(fd, "wb") as fh:
            for start in range(0, len(view), SPOOL_CHUNK_BYTES):
                fh.write(view[start:start + SPOOL_CHUNK_BYTES])
    except BaseException:
        remove_spooled(path)
        raise
    return path


def remove_spooled(path: str, _future=None) -> None:
    """Delete an upload's file (a job's done callback: it ended, failed or was cancelled)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def _submit(pool, kwargs: dict, upload, owner: str | None = None, extra: dict[str, bytes] | None = None):
    if upload is None:
        return pool.submit(analyze_trace, kwargs, with_progress=True, owner=owner)
    from planner.traces.budget import check_upload_cost, upload_refs_limit

    # what the job would cost, from the file's metadata: refused here, before a worker is taken
    kind = kwargs.get("kind", "trace")
    cost = check_upload_cost(upload, name=kwargs.get("name") or None, memory_bytes=pool.settings.memory_bytes,
                             prompt_block_tokens=kwargs["block_tokens"] if kind == "prompts" else None,
                             count_refs=kind != "kv-events")
    from planner.traces.sources import write_private_files

    path = spool_upload(upload)   # the upload, and the files its job reads beside it (tokenizer, metrics)
    folder = None
    try:
        folder, paths = write_private_files(spool_dir(), extra, SPOOL_CHUNK_BYTES) if extra else (None, {})
        job = pool.submit(analyze_trace, {**kwargs, "path": path, "tokenizer_path": paths.get(TOKENIZER_FILE),
                                          "metrics_path": paths.get(METRICS_FILE),
                                          "max_refs": upload_refs_limit(cost, pool.settings.memory_bytes)},
                          with_progress=True, owner=owner)
    except BaseException:
        remove_spooled(path)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
        raise

    def cleanup(future):
        remove_spooled(path)
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)

    job.future.add_done_callback(cleanup)
    return job


def shared_analysis(key: tuple, kwargs: dict, *, upload=None, extra: dict[str, bytes] | None = None,
                    on_update: Callable[[float, str, int], None] | None = None, pool=None,
                    owner: str | None = None) -> TraceAnalysis:
    """:func:`analyze_trace` (``kwargs``) in the server's pool, shared by ``key`` (module docstring). ``upload``:
    the uploaded trace's bytes, written to a file for the job only when no job for ``key`` runs or is cached,
    and only when its rows and references fit (``planner.traces.budget.check_upload_cost``). ``owner``: the
    browser session asking (``kvplan_app.jobs.session_owner``), held to its share of the pool. ``extra``: files
    the upload's job reads beside it (a tokenizer, its config, a metrics snapshot; :data:`EXTRA_FILES` names ->
    bytes), written with it into one folder and deleted with it; ``key`` must include their digests.

    Raises:
        JobError, JobsBusyError: from ``kvplan_app.jobs``; PlanInputError: over the upload limits, or from the job.
    """
    from kvplan_app.jobs import job_pool

    pool = pool or job_pool()
    now = time.monotonic()
    with _LOCK:
        for k in [k for k, e in _RESULTS.items() if e.waiters == 0 and now - e.used > RESULT_TTL_S]:
            del _RESULTS[k]
        entry = _RESULTS.get(key)
        if entry is None:
            entry = _Entry(job=_submit(pool, kwargs, upload, owner, extra), waiters=0, used=now)
            _RESULTS[key] = entry
        _RESULTS.move_to_end(key)
        entry.waiters += 1
        entry.used = now
        while len(_RESULTS) > RESULT_ENTRIES:
            idle = next((k for k, e in _RESULTS.items() if e.waiters == 0), None)
            if idle is None:
                break
            del _RESULTS[idle]
    finished = False
    try:
        result = pool.result(entry.job, on_update=on_update)
        finished = True
        return result
    finally:
        with _LOCK:
            entry.waiters -= 1
            if entry.job.future.done() and not finished and _RESULTS.get(key) is entry:
                del _RESULTS[key]   # failed: the next request runs it again
        if not finished and not entry.job.future.done():   # its session ended or reran
            timer = threading.Timer(CANCEL_GRACE_S, _cancel_if_orphaned, args=(key, entry, pool))
            timer.daemon = True
            timer.start()


def _cancel_if_orphaned(key: tuple, entry: _Entry, pool) -> None:
    with _LOCK:
        if entry.waiters > 0 or entry.job.future.done():
            return
        pool.cancel(entry.job)
        if _RESULTS.get(key) is entry:
            del _RESULTS[key]
