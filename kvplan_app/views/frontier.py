"""Frontier page: sessions per GPU and request rate over accelerators, context lengths and hit rates.

Reads the shared plan (``kvplan_app.state.current_inputs``); its own widgets use
``frontier_`` keys and its own link parameters (``fgpus``, ``fctx``, ``fhit``, ``fshared``,
``fheat``, ``fscale``) are :class:`kvplan_app.link_models.FrontierLink`, read and written by the codec.
The shared prefix (memory, hence sessions) and the hit rate (prefill, time to first token, rate) start at the
plan's and are the page's own once moved.
All arithmetic is in ``planner.frontier`` (one vectorized grid per run).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from planner.plan import format_sessions, plan
from planner.catalog.entries import GPUS, get_model
from planner.errors import PlanInputError
from planner.files.export import CSV_MIME, to_csv_bytes
from kvplan_app.charts.frontier import (
    request_rate_figure,
    sessions_heatmap_figure,
    sessions_vs_context_figure,
    sessions_vs_hit_rate_figure,
)
from planner.frontier import accelerators_for, context_axis, frontier_grid, hit_rate_axis
from planner.units import format_bytes, format_duration, format_figure
from kvplan_app.render import number_slider, show_chart
from kvplan_app.i18n import language, num, planner_message, t, tn, words
from kvplan_app.link_models import FrontierLink
from kvplan_app.markdown import escape_markdown, md, plotly_text
from kvplan_app.notices import show_error
from kvplan_app.state import current_inputs, page_link, set_page_link
from kvplan_app.model_choices import model_label

MAX_CONTEXT_CHOICES = (32_000, 128_000, 256_000, 512_000, 1_000_000, 2_000_000, 4_000_000, 10_000_000)
# Right ends offered for the context axis (tokens).
CONTEXT_POINTS = 60
# Context lengths per line (log-spaced, plus the plan's).
HIT_RATE_POINTS = 101
# Hit rates per line (0, 0.01, ..., 1, plus the plan's).
DEFAULT_GPUS = ("h100-sxm", "h200", "b200")


inputs = current_inputs()
try:
    model = get_model(inputs.model_id)  # a catalog model, or a config uploaded in this session
except PlanInputError as exc:
    show_error(exc)
    st.stop()
st.title(t("Frontier: sessions and request rate"))
st.caption(t("{model}, {gpus} per replica, output {output}, {prefixes}, pauses {pause} ({distribution}), TTL "
             "{ttl}: every other input comes from the Plan page.", model=md(model_label(inputs.model_id)),  # names are never localized
             gpus=num(tn("{n} GPU", "{n} GPUs", inputs.gpus_per_replica, n=f"{inputs.gpus_per_replica:,}")),
             output=num(tn("{n} token", "{n} tokens", inputs.output_tokens, n=f"{inputs.output_tokens:,}")),
             prefixes=num(tn("{n} shared prefix", "{n} shared prefixes", inputs.shared_prefixes,
                           n=f"{inputs.shared_prefixes:,}")),
             pause=num(format_duration(inputs.pause_mean_s)), distribution=t(inputs.pause_distribution),
             ttl=num(format_duration(inputs.ttl_s))))

if "frontier_gpus" not in st.session_state:
    view = page_link("frontier")  # read by the codec (kvplan_app.links.FrontierLink)
    default_gpus = [g for g in dict.fromkeys([inputs.gpu_id, *DEFAULT_GPUS]) if g in GPUS]
    st.session_state["frontier_gpus"] = list(view.gpus) or default_gpus
    right = view.max_context_tokens or max(inputs.context_tokens, 1_000_000)
    # a link's own length is kept as it is (an extra stop on the slider), a default snaps to the next choice
    st.session_state["frontier_max_context"] = view.max_context_tokens or min(
        (c for c in MAX_CONTEXT_CHOICES if c >= right), default=MAX_CONTEXT_CHOICES[-1])
    st.session_state["frontier_hit_rate"] = float(view.hit_rate if view.hit_rate is not None else inputs.hit_rate)
    st.session_state["frontier_shared_prefix"] = float(view.shared_prefix if view.shared_prefix is not None
                                                       else inputs.shared_prefix)
    st.session_state["frontier_heatmap_gpu"] = view.heatmap_gpu or inputs.gpu_id
    st.session_state["frontier_scale"] = view.scale_throughput


def _tokens(n: int) -> str:
    if n % 1_000_000 == 0:
        return f"{n // 1_000_000}m"  # vLLM human_readable_int: 1m = 1,000,000 (1M = 1,048,576)
    return f"{n // 1_000}k" if n % 1_000 == 0 else f"{n:,}"


w1, w2 = st.columns([3.3, 1.7])  # the default accelerators' chips fit at 1280 px
gpu_ids = w1.multiselect(t("Accelerators (one line each)"), list(GPUS), key="frontier_gpus",
                         format_func=lambda g: GPUS[g].name)
context_choices = sorted({*MAX_CONTEXT_CHOICES, int(st.session_state["frontier_max_context"])})
max_context = w2.select_slider(t("Longest context"), context_choices, key="frontier_max_context",
                               format_func=_tokens)
w3, w3b, w4, w5 = st.columns([1.45, 1.45, 1.3, 1.4])  # "Scale throughput" uncut at 1280 px
hit_rate = number_slider(w3, t("Prefix hit rate (context and rate figures)"), 0.0, 1.0, step=0.01,
                         key="frontier_hit_rate",  # "0,50" in Spanish
                         help=t("All reused tokens, a session's own history included: prefill work, time to first "
                                "token and the request rate, never memory."))
shared_prefix = number_slider(w3b, t("Shared prefix (every figure)"), 0.0, 1.0, step=0.01,
                              key="frontier_shared_prefix",
                              help=t("The share of the context common to many concurrent sessions (system prompt, "
                                     "tool schemas), stored once per replica: it sets memory, hence sessions."))
heat_choices = list(dict.fromkeys([*gpu_ids, inputs.gpu_id]))
if st.session_state.get("frontier_heatmap_gpu") not in heat_choices:
    st.session_state["frontier_heatmap_gpu"] = heat_choices[0]
heat_gpu = w4.selectbox(t("Heatmap accelerator"), heat_choices, key="frontier_heatmap_gpu",
                        format_func=lambda g: GPUS[g].name if g in GPUS else t("custom (plan)"))
scale = w5.checkbox(t("Scale throughput"), key="frontier_scale",
                    help=t("Scale the plan's decode throughput by HBM bandwidth and its prefill throughput by BF16 "
                           "FLOP/s, relative to the plan's accelerator. Off: every accelerator gets the plan's figures."))

# The page's own inputs go to the link.
set_page_link("frontier", FrontierLink(gpus=tuple(gpu_ids), max_context_tokens=int(max_context),
                                       hit_rate=float(hit_rate), shared_prefix=float(shared_prefix),
                                       heatmap_gpu=heat_gpu, scale_throughput=bool(scale)))

try:
    accs = accelerators_for(list(dict.fromkeys([*gpu_ids, inputs.gpu_id])), inputs)
    contexts = context_axis(max_context, CONTEXT_POINTS, include=[inputs.context_tokens])
    hits = hit_rate_axis(HIT_RATE_POINTS, include=[inputs.hit_rate, hit_rate])
    grid = frontier_grid(inputs, accs, contexts, hits, scale_throughput=scale, shared_prefix=float(shared_prefix))
    result = plan(inputs)
except PlanInputError as exc:
    show_error(exc)
    st.stop()

gi_plan = next(i for i, a in enumerate(grid.accelerators) if a.gpu_id == inputs.gpu_id)
ci_plan = grid.nearest_context(inputs.context_tokens)
hi_plan = grid.nearest_hit_rate(inputs.hit_rate)
hi_view = grid.nearest_hit_rate(hit_rate)
plan_name = grid.accelerators[gi_plan].name

# The plan's own warning (kvplan plan says the same) for its context; the charts mark the model's maximum along
# their context axis themselves (a dashed segment past it), so a longest context chosen past it is no warning.
if past_maximum := grid.past_maximum_note(ci_plan):
    st.warning(escape_markdown(planner_message(past_maximum), keep="_"))

rate_here = grid.request_rate_per_s[gi_plan, ci_plan, hi_view]
# The headline figures are read at the plan's own context (computed even when beyond the charts' longest context).
st.markdown(num(t("**At the plan's context, {tokens} tokens, on {gpu}, hit rate {hit}, shared prefix {shared}:**",
                  tokens=f"{inputs.context_tokens:,}", gpu=md(plan_name), hit=f"{hit_rate:.2f}",
                  shared=f"{grid.shared_prefix:.2f}")))
m1, m2 = st.columns(2)
m3, m4 = st.columns(2)
m1.metric(t("Sessions per GPU"), num(format_sessions(grid.sessions_per_gpu[gi_plan, ci_plan, hi_view])),
          help=num(t("{gpu}, {tokens} tokens, hit rate {hit}.", gpu=md(plan_name), tokens=f"{inputs.context_tokens:,}",
                     hit=f"{hit_rate:.2f}")))
m2.metric(t("Request rate per GPU"),
          t("undefined (no output tokens)") if rate_here != rate_here else num(f"{format_figure(rate_here, 3)} /s"))
m3.metric(t("Miss probability"), num(format_figure(result.miss_probability, 3)),
          help=t("Probability that a session's window state has expired when it resumes (the plan's hit rate)."))
m4.metric(t("Time to first token"), num(format_duration(float(grid.ttft_s[gi_plan, ci_plan, hi_view]))))
st.caption(num(t("Every figure here stores a shared prefix of {shared} of the context once per replica (the Plan "
                 "page's: {plan_shared}); it sets sessions. The hit rate moves prefill, time to first token and the "
                 "request rate, never sessions.", shared=f"{grid.shared_prefix:.2f}",
                 plan_shared=f"{inputs.shared_prefix:.2f}")))
st.caption(num(t("Current plan ({gpu}, {tokens} tokens, hit rate {hit}): {sessions} sessions per GPU ({replica} per "
                 "replica), {bytes} per session. The black diamond marks it on every figure.", gpu=md(plan_name),
                 tokens=f"{inputs.context_tokens:,}", hit=f"{inputs.hit_rate:.2f}",
                 sessions=format_sessions(result.sessions_per_gpu), replica=f"{result.sessions_per_replica:,}",
                 bytes=format_bytes(result.per_session_bytes)))
           + (" " + result.parallelism_note if language() == "en" else ""))  # the planner's own sentence
if result.usable_kv_source == "measured":
    st.caption(num(t("Usable KV measured on {gpu} ({bytes}) applies to that accelerator only; the others use HBM x "
                     "utilization - weights - reserve.", gpu=md(inputs.measured_usable_kv_gpu_id),
                     bytes=format_bytes(result.usable_kv_bytes))))


def _stop_at(model, inputs) -> int | None:
    """Where lines stop: the model's maximum context, or the plan's own context when that is longer."""
    return None if model.max_context_tokens is None else max(model.max_context_tokens, inputs.context_tokens)


def _download(frame, name: str, key: str) -> None:
    # built on click (Streamlit runs the callable then), not on every slider move; the one CSV writer
    st.download_button(t("Download the {name} grid (CSV)", name=t(name)), partial(to_csv_bytes, frame),
                       file_name=f"kvplan-frontier-{name}.csv", mime=CSV_MIME, key=key)


# The black diamond: the plan's accelerator, context and hit rate on this grid, hence at the page's shared prefix
# (the plan's own figures when both shared prefixes agree: the grid is the scalar plan's code).
plan_sessions = float(grid.sessions_per_gpu[gi_plan, ci_plan, hi_plan])
plan_rate = float(grid.request_rate_per_s[gi_plan, ci_plan, hi_plan])
plan_rate = None if plan_rate != plan_rate else plan_rate
if grid.shared_prefix != inputs.shared_prefix:
    st.caption(num(t("The black diamond is the plan's point at this page's shared prefix {shared}: {sessions} sessions "
                     "per GPU (the plan, at {plan_shared}, holds {plan_sessions}).", shared=f"{grid.shared_prefix:.2f}",
                     sessions=format_sessions(plan_sessions), plan_shared=f"{inputs.shared_prefix:.2f}",
                     plan_sessions=format_sessions(result.sessions_per_gpu))))
plan_in_range = inputs.context_tokens <= max_context
# The context charts stop at the longest context: every plotted point is computed, none interpolated.
shown_contexts = [i for i, c in enumerate(grid.contexts) if c <= max_context]
plan_hit_note = None if hi_view == hi_plan else float(grid.hit_rates[hi_plan])
if not plan_in_range:
    st.caption(num(t("The plan's context ({tokens} tokens) is beyond the longest context shown ({longest} tokens): "
                     "the charts over context do not mark it.", tokens=f"{inputs.context_tokens:,}",
                     longest=f"{max_context:,}")))
elif plan_hit_note is not None:
    st.caption(num(t("The context charts are at hit rate {hit}; the black diamond is the plan at its own hit rate "
                     "{plan_hit}.", hit=f"{hit_rate:.2f}", plan_hit=f"{inputs.hit_rate:.2f}")))
left, right = st.columns(2)
with left:
    st.subheader(t("Sessions per GPU vs context"))
    frame = grid.frame(hit=[hi_view], context=shown_contexts)
    show_chart(sessions_vs_context_figure(
        frame, plan_point=(inputs.context_tokens, plan_sessions),
        hit_rate=float(grid.hit_rates[hi_view]), max_context_tokens=_stop_at(model, inputs),
        plan_hit_rate=plan_hit_note, tr=t), key="frontier_fig_context")
    _download(frame, "sessions-vs-context", "frontier_csv_context")
with right:
    st.subheader(t("Sessions per GPU vs prefix hit rate"))
    frame = grid.frame(context=[ci_plan])
    show_chart(sessions_vs_hit_rate_figure(frame, plan_point=(inputs.hit_rate, plan_sessions),
                                           context_tokens=inputs.context_tokens, tr=t), key="frontier_fig_hit")
    _download(frame, "sessions-vs-hit-rate", "frontier_csv_hit")

left, right = st.columns(2)
with left:
    st.subheader(t("Request-rate frontier"))
    frame = grid.frame(hit=[hi_view], context=shown_contexts)
    if inputs.output_tokens == 0:
        st.info(t("No output tokens in the plan: the request rate is undefined (no decode)."))
    shown_frame = frame.assign(rate_limit=frame["rate_limit"].astype(str).map(words))  # the hover's words; CSV: ids
    show_chart(request_rate_figure(
        shown_frame, plan_point=(inputs.context_tokens, plan_rate),
        hit_rate=float(grid.hit_rates[hi_view]), max_context_tokens=_stop_at(model, inputs),
        plan_hit_rate=plan_hit_note, tr=t), key="frontier_fig_rate")
    st.caption(t("min(decode throughput / output tokens incl. replay prefill, sessions / time per request); ")
               + (t("throughputs scaled per accelerator.") if scale else t("every accelerator gets the plan's throughputs.")))
    _download(frame, "request-rate", "frontier_csv_rate")
with right:
    st.subheader(t("Sessions over context and hit rate"))
    gi_heat = next(i for i, a in enumerate(grid.accelerators) if a.gpu_id == heat_gpu)
    frame = grid.frame(gpu=[gi_heat], context=shown_contexts)
    show_chart(sessions_heatmap_figure(frame, plan_point=(inputs.hit_rate, inputs.context_tokens),
                                       accelerator=plotly_text(grid.accelerators[gi_heat].name),
                                       plan_sessions=float(grid.sessions_per_gpu[gi_heat, ci_plan, hi_plan]),
                                       tr=t),
               key="frontier_fig_heat")
    _download(frame, "sessions-heatmap", "frontier_csv_heat")
