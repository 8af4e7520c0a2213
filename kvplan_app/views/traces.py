"""Traces page: measured prefix-cache hit rates from a request trace, at the plan's usable KV.

Thin: ``planner.traces`` reads, replays and draws, in a worker process of the server's bounded pool
(``kvplan_app.trace_jobs``: memory cap, time limit, a shared cache of results); this page gathers inputs
(trace, TTL, fleet; model and GPU are the plan's, shared through ``kvplan_app.state``), waits for the job
(showing its queue position and stage) and renders. Widget keys start with ``traces_``; link keys
with ``t_``.
"""

import streamlit as st

from kvplan_app.jobs import JobError, JobsBusyError, session_owner
from kvplan_app.trace_jobs import METRICS_FILE, TOKENIZER_CONFIG_FILE, TOKENIZER_FILE, shared_analysis, upload_digest

from planner.plan import format_sessions, make_inputs, plan
from planner.catalog.entries import GPUS, models
from planner.errors import PlanInputError
from planner.files.export import CSV_MIME, to_csv_bytes
from planner.traces import DEFAULT_TTLS_S, MAX_TRACE_BYTES, SAMPLES, blocks_for_bytes, kv_bytes_per_token_for
from planner.traces.curvefile import MAX_CURVE_FILE_BYTES, load_curve
from kvplan_app.charts.traces import capacity_curve_figure
from planner.traces.fleet import ROUTING_POLICIES
from planner.traces.policy import EVICTION_POLICIES, POLICY_LABELS
from planner.traces.trace import FORMATS, MOONCAKE_BLOCK_TOKENS
from planner.traces.kv_events import MAX_METRICS_BYTES
from planner.traces.prompts import MAX_TOKENIZER_BYTES, MAX_TOKENIZER_CONFIG_BYTES
from planner.traces.rows import MAX_BLOCK_TOKENS
from planner.units import MB, format_bytes, format_duration, format_figure
from kvplan_app.uploads import file_uploader
from kvplan_app.render import show_chart
from kvplan_app.i18n import language, num, planner_message, t, tn, words
from kvplan_app.link_models import TracesLink
from kvplan_app.markdown import escape_markdown, md, plotly_text
from kvplan_app.notices import show_error, show_link_warnings
from kvplan_app.state import current_inputs, page_link, set_page_link, update_inputs
from kvplan_app.model_choices import is_uploaded, model_label
UPLOAD = "Upload a trace"
SAVED = "Load a saved curve"
FLEET_REPLICAS = [1, 2, 4, 8, 16, 32]
TTL_OPTIONS = [None if t == float("inf") else t for t in DEFAULT_TTLS_S]
# What an uploaded file holds -> its words; read as ``kvplan trace FILE``, ``--tokenizer``, ``--kv-events`` do.
UPLOAD_KINDS = {"trace": "Block ids or lengths (Mooncake, generic JSONL, Azure CSV)",
                "prompts": "Prompts or chat messages, with a tokenizer",
                "kv-events": "vLLM KV events, with a metrics snapshot"}


def _digest(upload, state_key: str) -> str:
    """SHA-256 of an upload, hashed once per file (not on every rerun)."""
    digest = st.session_state.get(state_key)
    if digest is None or digest[0] != upload.file_id:
        digest = (upload.file_id, upload_digest(upload.getvalue()))
        st.session_state[state_key] = digest
    return digest[1]


def ttl_label(ttl_s):
    if ttl_s is None:
        return t("no TTL")
    return num(f"{ttl_s / 60:g} min" if ttl_s >= 60 else f"{ttl_s:g} s")


st.title(t("Traces: measured prefix-cache hit rates"))
st.caption(t("Replay a real request trace through an LRU prefix cache of the plan's usable KV and a TTL. "
             "GB = 10^9 B, GiB = 2^30 B. Semantics and formats: docs/traces.md."))
show_link_warnings()
inputs = current_inputs()

# ---------------------------------------------------------------------------
# First run: widget state from the link (a bad value keeps the default, with a warning)
# ---------------------------------------------------------------------------
if "traces_link_read" not in st.session_state:
    st.session_state["traces_link_read"] = True
    link = page_link("traces")  # read by the codec (kvplan_app.links.TracesLink): refused values warned about there
    if link.sample is not None:
        st.session_state["traces_sample"] = link.sample
    if link.ttl_s is not None:
        st.session_state["traces_ttl"] = link.ttl_s

if is_uploaded(inputs.model_id):  # the replay runs in a worker that knows the catalog only
    st.info(t("The plan uses an uploaded config ({name}). Traces are replayed in a background worker that knows the "
              "catalog's models only: choose a catalog model on the Plan page to analyze a trace.",
              name=md(model_label(inputs.model_id))))
    st.stop()

for key, value in {"traces_sample": "conversation", "traces_ttl": None, "traces_format": "detect",
                   "traces_block_tokens": 16, "traces_prompt_block_tokens": 16, "traces_upload_kind": "trace", "traces_model_id": inputs.model_id,
                   "traces_gpu_id": inputs.gpu_id}.items():
    st.session_state.setdefault(key, value)
# Follow the plan when it changed on another page.
if st.session_state.get("traces_plan_seen") != (inputs.model_id, inputs.gpu_id):
    st.session_state["traces_model_id"] = inputs.model_id
    st.session_state["traces_gpu_id"] = inputs.gpu_id
    st.session_state["traces_plan_seen"] = (inputs.model_id, inputs.gpu_id)

# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------
c1, c4 = st.columns([3, 2])  # trace and TTL, then model and GPU: no name cut at 1280 px
c2, c3 = st.columns(2)
choice = c1.selectbox(t("Trace"), [*SAMPLES, UPLOAD, SAVED], key="traces_sample",
                      format_func=lambda s: t(SAMPLES[s].label) if s in SAMPLES else t(s))
model_id = c2.selectbox(t("Model"), list(models()), key="traces_model_id", format_func=lambda m: models()[m].name)
gpu_ids = list(GPUS) + (["custom"] if inputs.gpu_id == "custom" else [])
gpu_id = c3.selectbox(t("GPU"), gpu_ids, key="traces_gpu_id",
                      format_func=lambda g: GPUS[g].name if g in GPUS else t("Custom (the plan's HBM)"))
ttl_s = c4.select_slider(t("TTL (entries unused this long expire)"), TTL_OPTIONS, key="traces_ttl",
                         format_func=ttl_label)

if (model_id, gpu_id) != (inputs.model_id, inputs.gpu_id):
    # As on the Plan page: a new model drops its weights override, a new GPU its HBM override.
    changes = {"model_id": model_id, "gpu_id": gpu_id}
    if model_id != inputs.model_id:
        changes["weights_gib"] = None
    if gpu_id != inputs.gpu_id:
        changes["hbm_gib"] = None
    try:
        plan(make_inputs(**{**inputs.model_dump(), **changes}))
        inputs = update_inputs(**changes)
        st.session_state["traces_plan_seen"] = (inputs.model_id, inputs.gpu_id)
    except PlanInputError as exc:
        st.error(escape_markdown(planner_message(exc) + ". " + t("Keeping the plan's model and GPU.")))
set_page_link("traces", TracesLink(sample=choice if choice in SAMPLES else page_link("traces").sample, ttl_s=ttl_s))


def show_saved_curve():
    """A curve file from ``kvplan trace --sweep --save``: the curve at the plan's usable KV."""
    upload = file_uploader(st, num(t("Curve file (JSON from kvplan trace --sweep --save, at most {mb} MB)",
                                     mb=f"{MAX_CURVE_FILE_BYTES / MB:g}")), key="traces_curve_upload")
    if upload is None:
        st.info(t("Compute a curve once on a big machine (kvplan trace FILE --sweep --save curve.json) and load it "
                  "here."))
        st.stop()
    if upload.size > MAX_CURVE_FILE_BYTES:
        st.error(num(t("curve file: {size} B is larger than the {limit} B limit.", size=f"{upload.size:,}",
                       limit=f"{MAX_CURVE_FILE_BYTES:,}")))
        st.stop()
    try:
        saved = load_curve(upload.getvalue())
    except PlanInputError as exc:
        show_error(exc)
        st.stop()
    summary = ", ".join(f"{k}: {v:,}" if isinstance(v, int) else f"{k}: {v}" for k, v in saved.trace.items())
    st.caption(escape_markdown(t("Saved curve of {summary}. TTL: {ttl}.", summary=summary, ttl=ttl_label(saved.ttl_s))))
    policy = (t(POLICY_LABELS[saved.eviction_policy]) if saved.eviction_policy is not None
              else t("not recorded (a version-1 curve file, written before kvplan recorded the policy and evicted "
                     "tail blocks first)"))
    st.caption(num(t("Eviction: {policy}. Blocks of {block_tokens} tokens.", policy=policy,
                     block_tokens=f"{saved.block_tokens:,}")))
    if saved.sample_rate is not None:
        st.warning(num(t("Sampled curve: {rate} of distinct blocks (SHARDS); expected error about ±{error} in hit "
                         "rate.", rate=f"{saved.sample_rate:.4g}", error=f"{saved.expected_error:.4f}")))
    result = plan(inputs)
    try:
        per_token = kv_bytes_per_token_for(inputs.model_id, saved.context_tokens, inputs.kv_format)
    except PlanInputError as exc:
        show_error(exc)
        st.stop()
    blocks = blocks_for_bytes(max(result.usable_kv_bytes, 0), per_token, saved.block_tokens)
    at_blocks, block_rate, token_rate = saved.at(blocks)
    s1, s2, s3 = st.columns(3)
    s1.metric(t("Token hit rate"), num(f"{token_rate:.1%}"))
    s2.metric(t("Block hit rate"), num(f"{block_rate:.1%}"))
    s3.metric(t("Cache (usable KV per GPU)"), num(format_bytes(blocks * per_token * saved.block_tokens)))
    st.caption(t("At the largest saved capacity not above the usable KV: {at} of {blocks} blocks ({model} at {bytes} "
                 "B per token; a lower bound, as the hit rate never falls with capacity).", at=num(f"{at_blocks:,}"),
                 blocks=num(f"{blocks:,}"), model=md(result.model_name), bytes=num(f"{per_token:,.6g}")))
    use = round(token_rate, 2)
    if st.button(t("Use this hit rate on the Plan page ({hit}, token-weighted)", hit=num(f"{use:.2f}")),
                 key="traces_saved_use"):
        update_inputs(hit_rate=use, figures_measured_at_tokens=None)
        st.success(t("The Plan page's prefix hit rate is now {hit}.", hit=num(f"{use:.2f}")))
    frame = saved.frame(per_token)
    show_chart(capacity_curve_figure(frame, usable_kv_bytes=blocks * per_token * saved.block_tokens,
                                     usable_label=t("usable KV on {gpu}", gpu=plotly_text(result.gpu_name)), tr=t),
               key="traces_saved_curve")
    st.stop()


if choice == SAVED:
    show_saved_curve()
if choice == UPLOAD:
    kind = st.radio(t("The file holds"), list(UPLOAD_KINDS), key="traces_upload_kind", horizontal=True,
                    format_func=lambda k: t(UPLOAD_KINDS[k]))
    u1, u2, u3 = st.columns([2, 1, 1])
    upload = file_uploader(u1, num(t("Trace file (JSONL, CSV or Parquet; plain, .gz or .zst; at most {mb} MB)",
                                     mb=f"{MAX_TRACE_BYTES / MB:g}")), key="traces_upload")
    extra: dict[str, bytes] = {}
    extra_key: list[tuple[str, str]] = []
    fmt = "detect"
    if kind == "trace":
        fmt = u2.selectbox(t("Format"), ["detect", *FORMATS], key="traces_format")
        block_tokens = u3.number_input(t("Tokens per hash_ids block (generic JSONL)"), min_value=1, max_value=1 << 20,
                                       step=1, key="traces_block_tokens")
        st.caption(t("Generic JSONL: one object per line with timestamp_s (or timestamp_ms), input_length, "
                     "output_length and optional hash_ids (chained block hashes). Mooncake blocks are {tokens} "
                     "tokens.", tokens=MOONCAKE_BLOCK_TOKENS))
    elif kind == "prompts":
        tokenizer = file_uploader(u2, num(t("tokenizer.json (at most {mb} MB)", mb=f"{MAX_TOKENIZER_BYTES / MB:g}")),
                                  key="traces_tokenizer_upload")
        block_tokens = u3.number_input(t("Tokens per block (the engine's block size; vLLM's default is 16)"),
                                       min_value=1, max_value=MAX_BLOCK_TOKENS, step=1,
                                       key="traces_prompt_block_tokens")
        config = file_uploader(st, num(t("tokenizer_config.json with a chat_template, for messages rows (optional, "
                                         "at most {mb} MB)", mb=f"{MAX_TOKENIZER_CONFIG_BYTES / MB:g}")),
                               key="traces_tokenizer_config_upload")
        st.caption(t("Rows: timestamp (seconds), prompt (text) or messages (a list of role and content), optional "
                     "session_id and output_length; JSONL, CSV or Parquet. Each prompt is tokenized with your "
                     "tokenizer.json and every full block of that many tokens is hashed chained on its parent, as "
                     "vLLM does; a partial last block is not cached, so its tokens always miss. The hash ignores "
                     "LoRA adapters, images and other multimodal inputs, and cache salts, which vLLM also mixes into "
                     "block hashes: requests that differ only in those share blocks here."))
        for item, file_name, limit in ((tokenizer, TOKENIZER_FILE, MAX_TOKENIZER_BYTES),
                                       (config, TOKENIZER_CONFIG_FILE, MAX_TOKENIZER_CONFIG_BYTES)):
            if item is None:
                continue
            if item.size > limit:
                st.error(num(t("{file}: {size} B is larger than the {limit} B limit.", file=file_name,
                               size=f"{item.size:,}", limit=f"{limit:,}")))
                st.stop()
            extra[file_name] = item.getvalue()
            extra_key.append((file_name, _digest(item, f"traces_{file_name}_sha256")))
        if tokenizer is None:
            st.info(t("Upload the prompts and the model's tokenizer.json (from its Hugging Face repository)."))
            st.stop()
    else:
        metrics = file_uploader(u2, num(t("Metrics snapshot of the engine (optional; at most {mb} MB)",
                                          mb=f"{MAX_METRICS_BYTES / MB:g}")), key="traces_metrics_upload")
        block_tokens = 16   # the events carry their block size
        st.caption(t("A recorded vLLM KV-event stream: JSONL, one KVEventBatch per line (array-like as the "
                     "publisher sends it, or objects). Each BlockStored event becomes a request: its blocks after "
                     "their ancestors. A metrics snapshot (the engine's /metrics text) adds its prefix-cache "
                     "counters, vllm:prefix_cache_hits / vllm:prefix_cache_queries, beside the replay's hit rate."))
        if metrics is not None:
            if metrics.size > MAX_METRICS_BYTES:
                st.error(num(t("{file}: {size} B is larger than the {limit} B limit.", file=md(metrics.name),
                               size=f"{metrics.size:,}", limit=f"{MAX_METRICS_BYTES:,}")))
                st.stop()
            extra[METRICS_FILE] = metrics.getvalue()
            extra_key.append((METRICS_FILE, _digest(metrics, "traces_metrics_sha256")))
    if upload is None:
        st.info(t("Upload a trace, or pick a bundled one."))
        st.stop()
    if upload.size > MAX_TRACE_BYTES:
        st.error(num(t("trace: {size} B is larger than the {limit} B ({mb} MB) limit.", size=f"{upload.size:,}",
                       limit=f"{MAX_TRACE_BYTES:,}", mb=f"{MAX_TRACE_BYTES / MB:g}")))
        st.stop()
    upload_bytes = upload.getvalue()  # Streamlit's own copy (not copied); goes to the job as a file, if one runs
    source = {"sample": None, "path": None, "fmt": fmt, "block_tokens": int(block_tokens), "name": upload.name,
              "kind": kind}
    source_key = ("upload", _digest(upload, "traces_upload_sha256"), kind, fmt, int(block_tokens), upload.name,
                  *extra_key)
else:
    upload_bytes = None
    extra = None
    source = {"sample": choice, "path": None, "fmt": "detect", "block_tokens": 16, "name": "", "kind": "trace"}
    source_key = ("sample", choice)

# ---------------------------------------------------------------------------
# Read and replay in a worker (kvplan_app/trace_jobs.py); identical inputs share one job and its result
# ---------------------------------------------------------------------------
result = plan(inputs)
st.caption(t("Fleet: the hit rate with N replicas, each with this cache, by routing (below the single-GPU figures)."))
eviction_policy = st.selectbox(t("Eviction policy"), list(EVICTION_POLICIES), key="traces_eviction_policy",
                               format_func=lambda p: t(POLICY_LABELS[p]))
f1, f2 = st.columns(2)
fleet_ns = f1.multiselect(t("Replicas"), FLEET_REPLICAS, default=[1, 2, 4, 8, 16], key="traces_fleet_replicas")
fleet_policies = f2.multiselect(t("Routing (prefix is simulated request by request: slower)"), list(ROUTING_POLICIES),
                                default=["random", "session"], key="traces_fleet_routing", format_func=words)
job_inputs = {"model_id": inputs.model_id, "kv_format": inputs.kv_format,
              "usable_kv_bytes": float(max(result.usable_kv_bytes, 0)), "gpu_name": result.gpu_name, "ttl_s": ttl_s,
              "session_decode_tokens_per_s": inputs.session_decode_tokens_per_s, "ttl_label": ttl_label(ttl_s),
              "fleet_replicas": tuple(sorted(fleet_ns)), "fleet_routings": tuple(fleet_policies),
              "plan_context_tokens": inputs.context_tokens, "plan_sessions": result.sessions_per_replica,
              "plan_gpus_per_replica": inputs.gpus_per_replica,
              "plan_requests_per_min": None if result.request_rate_per_s is None else result.request_rate_per_s * 60,
              "plan_hit_rate": inputs.hit_rate, "lang": language(), "eviction_policy": eviction_policy}
bar = st.progress(0.0, text=t("Queued..."))
try:
    analysis = shared_analysis((*source_key, *sorted(job_inputs.items())), {**source, **job_inputs},
                               upload=upload_bytes, extra=extra or None, owner=session_owner(), on_update=lambda f, stage, ahead: bar.progress(
                                   min(1.0, max(0.0, f)), text=num(t("Jobs ahead in the queue: {ahead}", ahead=ahead)) if ahead
                                   else t(stage) + "..."))
except PlanInputError as exc:  # names the file and quotes its content: shown as text
    bar.empty()
    show_error(exc)
    st.stop()
except JobsBusyError as exc:
    bar.empty()
    st.warning(escape_markdown(planner_message(exc.args[0] if exc.args else exc)))
    st.stop()
except JobError as exc:
    bar.empty()
    st.error(escape_markdown(planner_message(exc.args[0] if exc.args else exc)))
    st.stop()
bar.empty()

# ---------------------------------------------------------------------------
# The trace
# ---------------------------------------------------------------------------
summary = analysis.summary
m1, m2, m3 = st.columns(3)
m1.metric(t("Requests"), num(f"{summary.num_requests:,}"))
m2.metric(t("Duration"), num(format_duration(summary.duration_s)))
m3.metric(t("Mean arrival rate"), num(f"{format_figure(summary.mean_rate_per_s, 3)} /s"))
m4, m5, m6 = st.columns(3)
m4.metric(t("Prompt tokens, median"), num(f"{summary.input_tokens.p50:,.0f}"))
m5.metric(t("Prompt tokens, mean"), num(f"{summary.input_tokens.mean:,.0f}"))
m6.metric(t("Malformed rows"), num(f"{analysis.num_malformed:,}"))
if analysis.num_malformed:
    st.warning(escape_markdown(planner_message(analysis.malformed_summary)))  # quotes the file: text, never markup
for note in analysis.notes:
    st.caption(escape_markdown(planner_message(note)))  # may quote the file (its name, its values): text, never a link
if analysis.source:
    st.caption(escape_markdown(t("Source: {source}", source=analysis.source)))


def show_traffic():
    left, right = st.columns(2)
    show_chart(analysis.figures["lengths"], left, key="traces_lengths")
    show_chart(analysis.figures["arrivals"], right, key="traces_arrivals")
    show_chart(analysis.figures["concurrency"], key="traces_concurrency")
    # like with like: the trace's requests are all its traffic, so the plan's figure beside them is per replica
    st.caption(t("Each request is active for its output tokens at {speed} tokens/s (the plan's decode speed per "
                 "session), queueing ignored: peak {peak}, mean {mean} requests in flight across the whole trace. One "
                 "replica of the plan ({gpus} GPUs, {attention} attention) holds {replica} sessions ({sessions} per "
                 "GPU): the dashed line.", speed=num(f"{inputs.session_decode_tokens_per_s:g}"),
                 peak=num(f"{analysis.peak_concurrent_requests:,}"), mean=num(format_figure(analysis.mean_concurrent_requests, 3)),
                 gpus=num(f"{inputs.gpus_per_replica:,}"), replica=num(f"{result.sessions_per_replica:,}"),
                 sessions=num(format_sessions(result.sessions_per_gpu)), attention=result.attention_parallelism))


if not analysis.has_prefix_hashes:
    st.info(t("Hit rates are not measurable from this trace: it has lengths and arrival times only, no prefix "
              "block hashes. Its lengths, arrivals and concurrency are below."))
    show_traffic()
    st.stop()

# ---------------------------------------------------------------------------
# Hit rates (stack distances: one pass gives every capacity and TTL)
# ---------------------------------------------------------------------------
kv_per_token, capacity_blocks, block_bytes = analysis.kv_bytes_per_token, analysis.capacity_blocks, analysis.block_bytes
hits, unlimited = analysis.hits, analysis.unlimited

st.subheader(t("Measured at the usable KV of one {gpu}", gpu=md(result.gpu_name)), anchor=False)  # no anchor from a name
h1, h2 = st.columns(2)
h3, h4 = st.columns(2)
h1.metric(t("Token hit rate"), num(f"{hits.token_hit_rate:.1%}"))
h2.metric(t("Block hit rate"), num(f"{hits.block_hit_rate:.1%}"))
h3.metric(t("Cache (usable KV per GPU)"), num(format_bytes(capacity_blocks * block_bytes)))
h4.metric(t("Unlimited-cache token hit rate"), num(f"{unlimited.token_hit_rate:.1%}"))
st.caption(t("Eviction: {policy}. A request looks up the cache as it was before it, then its blocks are touched "
             "tail first.", policy=t(POLICY_LABELS[hits.eviction_policy])))
st.caption(t("{model}: {per_token} B per token at the trace's mean prompt rounded up ({tokens} tokens), {block_tokens}-token "
             "blocks of {block_bytes} B: {blocks} blocks fit. TTL: {ttl}. Every reuse in the trace hits from "
             "{saturation} blocks up, {saturation_bytes}.", model=md(result.model_name),
             per_token=num(format_figure(kv_per_token, 6)), tokens=num(f"{analysis.typical_context_tokens:,}"),
             block_tokens=num(f"{analysis.block_tokens:,}"), block_bytes=num(f"{block_bytes:,.0f}"),
             blocks=num(f"{capacity_blocks:,}"), ttl=ttl_label(ttl_s), saturation=num(f"{analysis.saturation_blocks:,}"),
             saturation_bytes=num(format_bytes(analysis.saturation_blocks * block_bytes))))
counters = analysis.engine_counters
if counters is not None:
    st.subheader(t("Token hit rate: the engine's counters beside the replay"))
    e1, e2, e3 = st.columns(3)
    e1.metric(t("Engine's counters"),
              "–" if counters.token_hit_rate is None else num(f"{counters.token_hit_rate:.1%}"))
    e2.metric(t("Replay, usable KV"), num(f"{hits.token_hit_rate:.1%}"))
    e3.metric(t("Replay, unlimited cache"), num(f"{unlimited.token_hit_rate:.1%}"))
    st.caption(t("The engine's counters: {hits} of {queries} prompt tokens hit its prefix cache "
                 "(vllm:prefix_cache_hits / vllm:prefix_cache_queries, summed over label sets). The replay: the "
                 "requests rebuilt from the events, eviction {policy}. They cover the same period when the "
                 "recording began with the engine and the snapshot was taken when it ended; requests that hit on "
                 "every block store nothing and are missing from the events, so the replay reads low by them.",
                 hits=num(f"{counters.hits_tokens:,.0f}"), queries=num(f"{counters.queries_tokens:,.0f}"),
                 policy=t(POLICY_LABELS[hits.eviction_policy])))
if result.usable_kv_bytes <= 0:
    st.warning(escape_markdown(planner_message(result.message)) if result.message
               else t("No usable KV on this GPU: the cache holds nothing."))

use_rate = round(hits.token_hit_rate, 2)
sharing = analysis.sharing
if sharing is not None:
    s1, s2 = st.columns(2)
    s1.metric(t("Shared prefix (across sessions)"), num(f"{sharing.shared_prefix:.1%}"),
              help=t("Share of each request's prompt tokens in blocks that another session also references, "
                     "arriving within {window} s of it (another session: another session_id, or, without ids, a "
                     "request whose blocks are not a prefix of this one's nor this one's of its). It sets memory "
                     "on the Plan page; the hit rate counts own history too.", window=num(f"{sharing.window_s:g}")))
    s2.metric(t("Measured at prompts of (mean)"), num(t("{tokens} tokens", tokens=f"{sharing.mean_prompt_tokens:,.0f}")))
    use_shared = round(sharing.shared_prefix, 2)
    label = num(t("Use these figures on the Plan page (hit rate {hit}, shared prefix {shared})", hit=f"{use_rate:.2f}",
                  shared=f"{use_shared:.2f}"))
else:
    use_shared = None
    if analysis.sharing_note:
        st.caption(escape_markdown(t("Shared prefix not measured: {why}", why=planner_message(analysis.sharing_note))))
    label = num(t("Use this hit rate on the Plan page ({hit}, token-weighted)", hit=f"{use_rate:.2f}"))
if st.button(label, key="traces_use_hit_rate"):
    if use_shared is None:
        update_inputs(hit_rate=use_rate, figures_measured_at_tokens=None)
        st.success(num(t("The Plan page's prefix hit rate is now {hit} (rounded to its 0.01 step).",
                         hit=f"{use_rate:.2f}")))
    else:
        update_inputs(hit_rate=use_rate, shared_prefix=use_shared,
                      figures_measured_at_tokens=max(1, round(sharing.mean_prompt_tokens)))
        st.success(num(t("The Plan page's prefix hit rate is now {hit} and its shared prefix {shared} (rounded to "
                         "their 0.01 step), measured at prompts of {tokens} tokens.", hit=f"{use_rate:.2f}",
                         shared=f"{use_shared:.2f}", tokens=f"{sharing.mean_prompt_tokens:,.0f}")))

show_chart(analysis.figures["curve"], key="traces_curve")
st.download_button(t("Download the curve (CSV)"), to_csv_bytes(analysis.curve), mime=CSV_MIME, key="traces_curve_csv",
                   file_name="kvplan-hit-rate-vs-capacity.csv",
                   help=t("Columns as docs/csv.md lists them in its section on the trace curve (units in the names)."))

left, right = st.columns(2)
show_chart(analysis.figures["ttl_curve"], left, key="traces_ttl_curve")
show_chart(analysis.figures["cache_bytes"], right, key="traces_cache_bytes")

# ---------------------------------------------------------------------------
# Fleet of replicas (planner.traces.fleet: stack distances, or simulation for prefix routing)
# ---------------------------------------------------------------------------
def _fleet_in_words(fig):
    """The fleet chart (built once per trace job, legend and hover with the routing and method ids) with those ids in
    this session's language: a copy; the table and its CSV keep the ids."""
    import plotly.graph_objects as go

    out = go.Figure(fig)
    for line in out.data:
        routing = line.name
        line.name = words(routing)
        if line.hovertemplate:
            line.hovertemplate = line.hovertemplate.replace(f"<extra>{routing}</extra>", f"<extra>{line.name}</extra>")
        if line.customdata is not None and len(line.customdata) and len(line.customdata[0]) > 2:
            line.customdata = [[*row[:2], words(row[2]), *row[3:]] for row in line.customdata]
    return out


st.subheader(t("Fleet: N replicas, each with this cache"))
if analysis.fleet is not None:
    table = analysis.fleet
    show_chart(_fleet_in_words(analysis.figures["fleet"]), key="traces_fleet_chart")
    st.caption(t("Routing: random and round-robin ignore the cache; session keeps a conversation on one replica "
                 "(by the first block past the prefix every request shares, when the trace has no session id); "
                 "prefix sends a request to the replica holding its longest cached prefix (simulated). Load "
                 "imbalance = most requests on one replica / the mean. docs/traces.md says how each is computed."))
    st.caption(t("Eviction in each replica's cache: {policy}.", policy=t(POLICY_LABELS[analysis.eviction_policy])))
    st.download_button(t("Download the fleet table (CSV)"), to_csv_bytes(table), mime=CSV_MIME, key="traces_fleet_csv",
                       file_name="kvplan-hit-rate-vs-replicas.csv",
                       help=t("Columns as docs/csv.md lists them in its section on the fleet table (units in the names)."))
    u1, u2, u3 = st.columns([1, 1, 2])
    pick_n = u1.selectbox(t("Replicas"), sorted(fleet_ns), key="traces_fleet_pick_n")
    pick_policy = u2.selectbox(t("Routing"), fleet_policies, key="traces_fleet_pick_policy", format_func=words)
    row = table[(table["replicas"] == pick_n) & (table["routing"] == pick_policy)].iloc[0]
    fleet_rate = round(float(row["token_hit_rate"]), 2)
    fleet_hit = num(f"{fleet_rate:.2f}")
    if u3.button(tn("Use this hit rate on the Plan page ({hit}: 1 replica, {routing})",
                    "Use this hit rate on the Plan page ({hit}: {replicas} replicas, {routing})", pick_n, hit=fleet_hit,
                    replicas=pick_n, routing=words(pick_policy)),
                 key="traces_fleet_use"):
        update_inputs(hit_rate=fleet_rate)
        st.success(t("The Plan page's prefix hit rate is now {hit} ({replicas} replicas, {routing}).", hit=fleet_hit,
                     replicas=pick_n, routing=words(pick_policy)))

with st.expander(t("Lengths, arrivals and concurrency"), expanded=False):
    show_traffic()
