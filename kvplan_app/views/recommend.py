"""Recommend page: the fewest GPUs (then the lowest cost) meeting a sessions or requests/s target.

Reads the shared plan (``kvplan_app.state.current_inputs``: model, context, hit rate, shared prefix, TTL,
pauses, throughputs, and a user-defined accelerator if the plan has one); its own widgets use ``recommend_``
keys and its full inputs (target, headroom, accelerators, GPUs per replica, formats, prices, hit-rate source)
go to the share link (``kvplan_app.link_models.RecommendLink``), so the link reproduces the search after a
restart. The search and its checks are in ``planner.recommend``; each row links to its plan.
"""

from __future__ import annotations


import pandas as pd
import streamlit as st
from pydantic import ValidationError

from planner.catalog.accelerators import accelerator_from_link
from planner.catalog.entries import GPUS
from planner.errors import PlanInputError
from kvplan_app.charts.figures import recommend_figure
from planner.kv.formats import FORMATS
from planner.frontier import Accelerator
from planner.kv.models import WEIGHT_BYTES_PER_PARAM
from planner.recommend import DEFAULT_GPUS_PER_REPLICA, DEFAULT_HEADROOM, recommend, trace_hit_rate_curve
from planner.traces import load_sample
from kvplan_app.render import number_box, show_chart, show_table
from kvplan_app.i18n import num, planner_message, t, tn, words
from kvplan_app.share import root_url, share_url
from kvplan_app.links import to_query
from kvplan_app.markdown import escape_markdown, md
from kvplan_app.link_models import RecommendLink
from kvplan_app.state import current_inputs, page_link, set_page_link
from kvplan_app.model_choices import is_uploaded, model_label

VERIFY_ROWS = 50  # rows checked by the scalar plan and shown
DEFAULT_GPUS = ("h100-sxm", "h200", "b200")
TRACE_SAMPLES = ("conversation", "synthetic")  # bundled samples with prefix hashes (Mooncake)

inputs = current_inputs()
user = accelerator_from_link(inputs.accelerator) if inputs.accelerator else None
st.title(t("Recommend GPUs"))
st.caption(t("For {model} at {tokens} tokens, shared prefix {shared}, TTL {ttl} s, pauses {pause} s (the Plan "
             "page's inputs: set the shared prefix there; 0 = no sharing). tp: a replica's GPUs split each session's "
             "KV heads; dp: each GPU holds whole sessions. Identical replicas, no pipeline parallel; rows rank by "
             "total GPUs, then cost, then headroom.",
             model=md(model_label(inputs.model_id)), tokens=num(f"{inputs.context_tokens:,}"),
             shared=num(f"{inputs.shared_prefix:g}"), ttl=num(f"{inputs.ttl_s:g}"),
             pause=num(f"{inputs.pause_mean_s:g}")))

choices = list(GPUS) + ([user.id] if user else [])
names = {**{g: GPUS[g].name for g in GPUS}, **({user.id: t("{name} (yours)", name=user.name)} if user else {})}
PRICE_COLUMN = "price per GPU-hour"
if "recommend_target" not in st.session_state:  # first run: the link's values, else the page's defaults
    view = page_link("recommend")
    st.session_state["recommend_kind"] = view.kind or "sessions"
    st.session_state["recommend_target"] = float(view.target if view.target is not None else 1000.0)
    st.session_state["recommend_headroom"] = float(100 * (view.headroom if view.headroom is not None
                                                          else DEFAULT_HEADROOM))
    st.session_state["recommend_attention"] = list(view.attention if view.attention is not None else ("tp", "dp"))
    st.session_state["recommend_kv"] = [f for f in (view.kv_formats if view.kv_formats is not None
                                                    else ("native", "fp8")) if f == "native" or f in FORMATS]
    st.session_state["recommend_gpus"] = [g for g in (view.gpus if view.gpus is not None else (
        *DEFAULT_GPUS, *([user.id] if user else []))) if g in choices]
    st.session_state["recommend_gprs"] = list(view.gpus_per_replica if view.gpus_per_replica is not None
                                              else DEFAULT_GPUS_PER_REPLICA)
    st.session_state["recommend_weights"] = list(view.weight_formats or ("catalog",))
    st.session_state["recommend_hit_source"] = view.hit_source or "plan"
    st.session_state["recommend_scale"] = True if view.scale_throughput is None else view.scale_throughput
    st.session_state["recommend_link_prices"] = {k: float(v) for k, _, v in (p.partition("=") for p in
                                                                            (view.prices or ()))}
c1, c2, c2b = st.columns([1, 0.8, 0.8])
c3, c4 = st.columns([1, 1.6])  # the chips on a row of their own: none cut at 1280 px
kind = c1.radio(t("Target"), ["sessions", "requests_per_s"], key="recommend_kind",
                format_func=lambda k: t("concurrent sessions") if k == "sessions" else t("requests per second"))
target = number_box(c2, t("Target value"), min_value=0.001, max_value=1e12, step=10.0, format="%g",
                         key="recommend_target")
headroom_pct = number_box(c2b, t("Headroom (%)"), min_value=0.0, max_value=1000.0, step=5.0, format="%g",
                                key="recommend_headroom",
                                help=t("Every row holds at least the target plus this much (20 %: 1.2 x the target)."))
attention = c3.multiselect(t("Attention parallelism"), ["tp", "dp"], key="recommend_attention",
                           format_func=str.upper,
                           help=t("TP: a replica's GPUs split each session's KV heads (tensor parallel). DP: each GPU "
                                  "holds whole sessions (data parallel)."))
kv_formats = c4.multiselect(t("KV formats"), ["native", *FORMATS], key="recommend_kv",
                            format_func=lambda f: t("native") if f == "native" else f,
                            help=t("native: the model's own KV format."))
d1, d2 = st.columns([1.8, 1])
gpu_ids = d1.multiselect(t("Accelerators"), choices, key="recommend_gpus", format_func=lambda g: names[g])
gprs_offered = sorted({1, 2, 4, 8, 16, 32, *st.session_state["recommend_gprs"]})
gprs = d2.multiselect(t("GPUs per replica"), gprs_offered, key="recommend_gprs")
link_prices = st.session_state["recommend_link_prices"]
prices_df = st.data_editor(
    pd.DataFrame({"accelerator": gpu_ids, "name": [names[g] for g in gpu_ids], PRICE_COLUMN: [
        link_prices[g] if g in link_prices else
        user.price_per_gpu_hour if user and g == user.id and user.price_per_gpu_hour is not None else None
        for g in gpu_ids]}),
    disabled=["accelerator", "name"], hide_index=True, key="recommend_prices", placeholder="—",
    column_order=["name", "price per GPU-hour"],  # the names the chips show; the id stays in the frame
    column_config={"name": st.column_config.TextColumn(t("Accelerator")),
                   "price per GPU-hour": st.column_config.NumberColumn(t("Price per GPU-hour (optional)"), min_value=0.0)})
h1, h3 = st.columns([2, 1])
weight_formats = h3.multiselect(t("Weight formats"), ["catalog", *WEIGHT_BYTES_PER_PARAM], key="recommend_weights",
                                format_func=lambda w: t("the catalogue's") if w == "catalog" else w)
hit_source = h1.selectbox(t("Prefix hit rate"), ["plan", *TRACE_SAMPLES], key="recommend_hit_source",
                          format_func=lambda x: num(t("the plan's ({hit_rate})", hit_rate=f"{inputs.hit_rate:g}"))
                          if x == "plan" else t("measured on the {sample} sample trace at each configuration's KV pool",
                                                sample=t(x)))
g1, g2 = st.columns(2)  # toggles side by side: their labels fit at 1280 px
by_cost = g1.toggle(t("Chart against cost per hour (priced rows only)"), key="recommend_by_cost")
scale = g2.toggle(t("Scale throughput per accelerator"), key="recommend_scale",
                  help=t("Scale the plan's decode throughput by HBM bandwidth and its prefill throughput by BF16 "
                         "FLOP/s, relative to the plan's accelerator (as the Frontier page does)."))


@st.cache_resource(show_spinner=False)
def _curve(sample: str):
    # one reuse profile per sample and server (pure data, read-only afterwards)
    return trace_hit_rate_curve(load_sample(sample))

try:
    prices = {str(r["accelerator"]): float(r[PRICE_COLUMN]) for _, r in prices_df.iterrows()
              if r[PRICE_COLUMN] is not None and not pd.isna(r[PRICE_COLUMN])}
    headroom = float(headroom_pct) / 100.0
    # the page's full inputs go to the link: it reproduces this search after a restart
    try:
        set_page_link("recommend", RecommendLink(
            kind=kind, target=float(target), headroom=headroom, attention=tuple(attention),
            kv_formats=tuple(kv_formats), gpus=tuple(gpu_ids), gpus_per_replica=tuple(int(g) for g in gprs),
            weight_formats=tuple(weight_formats), hit_source=hit_source, scale_throughput=bool(scale),
            prices=tuple(f"{g}={format(p, 'f').rstrip('0').rstrip('.') or '0'}" for g, p in prices.items())))
    except ValidationError:  # a value no link can carry (an accelerator id with spaces): the link keeps the rest
        pass
    accs = [Accelerator.of_user(user) if user and g == user.id else Accelerator(g) for g in gpu_ids]
    if hit_source == "plan":
        curve = None
    else:
        with st.spinner(t("Reading the trace's reuse profile ...")):
            curve = _curve(hit_source)
    rec = recommend(inputs, accs, target_kind=kind, target=float(target), gpus_per_replica=gprs,
                    kv_formats=kv_formats, attention=attention, prices=prices, verify=VERIFY_ROWS,
                    weight_formats=[None if w == "catalog" else w for w in weight_formats],
                    hit_rate_curve=curve, scale_throughput=scale, headroom=headroom)
except PlanInputError as exc:
    st.error(escape_markdown(planner_message(exc), keep="_"))
    st.stop()

for note in rec.notes:  # the plan's own warning (every row: the model cannot serve this context)
    st.warning(escape_markdown(planner_message(note), keep="_"))
for why in rec.refused:
    st.warning(escape_markdown(planner_message(why), keep="_"))
st.caption(num(t("{searched} configurations searched, {infeasible} hold nothing; the first {rows} rows are checked by "
                 "the plan itself.", searched=f"{rec.searched:,}", infeasible=f"{rec.infeasible:,}",
                 rows=f"{min(VERIFY_ROWS, len(rec.frame)):,}")))  # no more rows than the table has
if rec.frame.empty:
    st.info(t("No configuration meets the target: add accelerators, GPUs per replica or KV formats."))
    st.stop()

if is_uploaded(inputs.model_id):  # the rows' plan links name a config a link cannot carry
    st.caption(t("The rows' plan links open the plan in this session; elsewhere they need the same config.json "
                 "uploaded on the Model page first."))
top = rec.frame.head(VERIFY_ROWS).copy()
root = root_url("recommend")
top["plan link"] = [share_url(root, to_query(i), "plan") for i in rec.inputs[:len(top)]]
top["cost_per_hour"] = top["cost_per_hour"].astype("float64")
best = top.iloc[0]
replicas = int(best.replicas)
fewest = tn("Fewest GPUs: {gpus} x {accelerator} (1 replica of {per_replica}, KV {kv_format}), {capacity} against "
            "{target}.",
            "Fewest GPUs: {gpus} x {accelerator} ({replicas} replicas of {per_replica}, KV {kv_format}), {capacity} "
            "against {target}.", replicas)
st.success(fewest.format(  # names as they are, numbers per locale
    gpus=num(f"{int(best.total_gpus):,}"), accelerator=md(best.accelerator), replicas=num(f"{replicas:,}"),
    per_replica=int(best.gpus_per_replica), kv_format=md(words(best.kv_format)), capacity=num(f"{best.capacity:,.6g}"),
    target=num(f"{rec.target:,.6g}"))
           + " " + num(t("Headroom {headroom} (asked: at least {asked}).", headroom=f"{best.headroom:.1%}",
                         asked=f"{rec.headroom:.0%}"))
           + " " + escape_markdown(planner_message(best.one_fewer)) + ".")
st.markdown(escape_markdown(t("Assumes: {assumptions}.", assumptions=planner_message(best.assumptions))))
if pd.isna(best.total_gpus_no_sharing):
    st.warning(t("With no shared prefix, not one session of this configuration fits."))
else:
    st.info(num(t("With no shared prefix (every session holds its whole context): {gpus} GPUs ({replicas} "
                  "replicas) of this configuration for the same target and headroom.",
                  gpus=f"{int(best.total_gpus_no_sharing):,}", replicas=f"{int(best.replicas_no_sharing):,}")))
show_chart(recommend_figure(rec.frame, by_cost=by_cost, tr=t), key="recommend_chart")
unit = t("sessions") if kind == "sessions" else t("requests/s")
headings = {  # shown columns, in this order (the table keeps planner.recommend's column names; gpu_id, target left out)
    "rank": t("Rank"), "accelerator": t("Accelerator"), "gpus_per_replica": t("GPUs per replica"),
    "attention": t("Attention"), "kv_format": t("KV format"), "weight_format": t("Weight format"),
    "hit_rate": t("Prefix hit rate"), "shared_prefix": t("Shared prefix"), "replicas": t("Replicas"),
    "total_gpus": t("Total GPUs"), "total_gpus_no_sharing": t("GPUs, no sharing"),
    "sessions_per_replica": t("Sessions per replica"), "sessions_per_gpu": t("Sessions per GPU"),
    "request_rate_per_gpu": t("Requests/s per GPU"), "decode_tokens_per_s": t("Decode (tokens/s per GPU)"),
    "prefill_tokens_per_s": t("Prefill (tokens/s per GPU)"), "capacity": t("Capacity ({unit})", unit=unit),
    "headroom": t("Headroom"), "price_per_gpu_hour": t("Price per GPU-hour"), "cost_per_hour": t("Cost per hour"),
    "pareto": t("Pareto front"), "verified": t("Checked by the plan"), "one_fewer": t("With one GPU fewer"),
    "assumptions": t("Assumes"), "plan link": t("Plan"),
}
# The columns shown until the user asks for every one: they fit a 1280 px screen without scrolling sideways.
# The no-sharing answer of the top row is said above the table; every row's is under "Every column".
COMPACT = ("rank", "accelerator", "gpus_per_replica", "attention", "kv_format", "total_gpus", "capacity", "headroom",
           "cost_per_hour", "plan link")
every = st.toggle(t("Every column"), key="recommend_every_column",
                  help=t("Weight format, hit rate, shared prefix, replicas, sessions, request rate, throughput, the "
                         "plan's checks and each row's assumptions; on a narrow screen the table then scrolls "
                         "sideways."))
priced = bool(top["cost_per_hour"].notna().any())  # price columns only when a price was typed: no empty cells
shown = [c for c in headings if (every or c in COMPACT) and (priced or c not in ("price_per_gpu_hour", "cost_per_hour"))]
labels = headings
top["one_fewer"] = [planner_message(why) for why in top["one_fewer"]]
top["assumptions"] = [planner_message(a) for a in top["assumptions"]]
top["weight_format"] = [t("the catalogue's") if w == "catalog" else w for w in top["weight_format"]]
top["kv_format"] = top["kv_format"].map(words)  # shown only: the plan links were written from the inputs above
numbers = {c: st.column_config.NumberColumn(labels[c], format="localized") for c in shown
           if c not in ("accelerator", "attention", "kv_format", "weight_format", "pareto", "verified", "one_fewer",
                        "plan link", "headroom", "hit_rate", "shared_prefix", "assumptions")}
show_table(top, hide_index=True, key="recommend_table", column_order=shown, placeholder="—",
           column_config={**{c: labels[c] for c in shown}, **numbers,
                          "plan link": st.column_config.LinkColumn(labels["plan link"], display_text=t("open plan")),
                          "headroom": st.column_config.NumberColumn(labels["headroom"], format="percent"),
                          "hit_rate": st.column_config.NumberColumn(labels["hit_rate"], format="localized"),
                          "shared_prefix": st.column_config.NumberColumn(labels["shared_prefix"], format="localized"),
                          "pareto": st.column_config.CheckboxColumn(labels["pareto"]),
                          "verified": st.column_config.CheckboxColumn(labels["verified"])})
