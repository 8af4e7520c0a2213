"""Recommend page: the fewest GPUs (then the lowest cost) meeting a sessions or requests/s target.

Reads the shared plan (``kvplan_app.state.current_inputs``: model, context, hit rate, TTL, pauses,
throughputs, and a user-defined accelerator if the plan has one); its own widgets use ``recommend_`` keys.
The search and its checks are in ``planner.recommend``; each row links to its plan.
"""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from planner.accelerators import accelerator_from_link
from planner.catalog import GPUS
from planner.errors import PlanInputError
from planner.figures import recommend_figure
from planner.formats import FORMATS
from planner.frontier import Accelerator
from planner.models import WEIGHT_BYTES_PER_PARAM
from planner.recommend import DEFAULT_GPUS_PER_REPLICA, recommend, trace_hit_rate_curve
from planner.traces import load_sample
from kvplan_app.i18n import num, t
from kvplan_app.share import root_url, share_url
from kvplan_app.state import current_inputs, escape_markdown, to_query

VERIFY_ROWS = 50  # rows checked by the scalar plan and shown
DEFAULT_GPUS = ("h100-sxm", "h200", "b200")
TRACE_SAMPLES = ("conversation", "synthetic")  # bundled samples with prefix hashes (Mooncake)

inputs = current_inputs()
user = accelerator_from_link(inputs.accelerator) if inputs.accelerator else None
st.title(t("Recommend GPUs"))
st.caption(f"For {inputs.model_id} at {inputs.context_tokens:,} tokens, TTL "
           f"{inputs.ttl_s:g} s, pauses {inputs.pause_mean_s:g} s (the Plan page's inputs). tp: a replica's GPUs split "
           "each session's KV heads; dp: each GPU holds whole sessions. Identical replicas, no pipeline parallel; rows "
           "rank by total GPUs, then cost, then headroom.")

choices = list(GPUS) + ([user.id] if user else [])
names = {**{g: GPUS[g].name for g in GPUS}, **({user.id: f"{user.name} (yours)"} if user else {})}
c1, c2, c3 = st.columns([1, 1, 2])
kind = c1.radio(t("Target"), ["sessions", "requests_per_s"], key="recommend_kind",
                format_func=lambda k: "concurrent sessions" if k == "sessions" else "requests per second")
target = c2.number_input(t("Target value"), min_value=0.001, max_value=1e12, value=1000.0, key="recommend_target")
gpu_ids = c3.multiselect(t("Accelerators"), choices, default=[g for g in (*DEFAULT_GPUS, *(
    [user.id] if user else [])) if g in choices], key="recommend_gpus", format_func=lambda g: names[g])
d1, d2, d3 = st.columns(3)
gprs = d1.multiselect(t("GPUs per replica"), [1, 2, 4, 8, 16, 32], default=list(DEFAULT_GPUS_PER_REPLICA),
                      key="recommend_gprs")
kv_formats = d2.multiselect(t("KV formats"), ["native", *FORMATS], default=["native", "fp8"], key="recommend_kv")
attention = d3.multiselect(t("Attention parallelism"), ["tp", "dp"], default=["tp", "dp"], key="recommend_attention",
                           format_func=lambda a: "data-parallel (dp)" if a == "dp" else "tensor-parallel (tp)")
prices_df = st.data_editor(
    pd.DataFrame({"accelerator": gpu_ids, "price per GPU-hour": [
        user.price_per_gpu_hour if user and g == user.id and user.price_per_gpu_hour is not None else None
        for g in gpu_ids]}),
    disabled=["accelerator"], hide_index=True, key="recommend_prices")
h1, h3 = st.columns([2, 1])
weight_formats = h3.multiselect(t("Weight formats"), ["catalog", *WEIGHT_BYTES_PER_PARAM], default=["catalog"],
                                key="recommend_weights")
hit_source = h1.selectbox(t("Prefix hit rate"), ["plan", *TRACE_SAMPLES], key="recommend_hit_source",
                          format_func=lambda x: f"the plan's ({inputs.hit_rate:g})" if x == "plan" else
                          f"measured on the {x} sample trace at each configuration's KV pool")
g1, g2 = st.columns(2)  # toggles side by side: their labels fit at 1280 px
by_cost = g1.toggle(t("Chart against cost per hour (priced rows only)"), key="recommend_by_cost")
scale = g2.toggle(t("Scale throughput per accelerator"), value=True, key="recommend_scale",
                  help=t("Scale the plan's decode throughput by HBM bandwidth and its prefill throughput by BF16 "
                         "FLOP/s, relative to the plan's accelerator (as the Frontier page does)."))


@st.cache_resource(show_spinner="Reading the trace's reuse profile ...")
def _curve(sample: str):
    # one reuse profile per sample and server (pure data, read-only afterwards)
    return trace_hit_rate_curve(load_sample(sample))

try:
    prices = {str(r["accelerator"]): float(r["price per GPU-hour"]) for _, r in prices_df.iterrows()
              if r["price per GPU-hour"] is not None and not pd.isna(r["price per GPU-hour"])}
    accs = [Accelerator.of_user(user) if user and g == user.id else Accelerator(g) for g in gpu_ids]
    curve = None if hit_source == "plan" else _curve(hit_source)
    rec = recommend(inputs, accs, target_kind=kind, target=float(target), gpus_per_replica=gprs,
                    kv_formats=kv_formats, attention=attention, prices=prices, verify=VERIFY_ROWS,
                    weight_formats=[None if w == "catalog" else w for w in weight_formats],
                    hit_rate_curve=curve, scale_throughput=scale)
except PlanInputError as exc:
    st.error(escape_markdown(str(exc), keep="_"))
    st.stop()

for why in rec.refused:
    st.warning(escape_markdown(why, keep="_"))
st.caption(f"{rec.searched:,} configurations searched, {rec.infeasible:,} hold nothing; the first {VERIFY_ROWS} rows "
           "are checked by the plan itself.")
if rec.frame.empty:
    st.info(t("No configuration meets the target: add accelerators, GPUs per replica or KV formats."))
    st.stop()

top = rec.frame.head(VERIFY_ROWS).copy()
root = root_url("recommend")
top["plan link"] = [share_url(root, to_query(i), "plan") for i in rec.inputs[:len(top)]]
top["cost_per_hour"] = [None if math.isnan(c) else c for c in top["cost_per_hour"]]
best = top.iloc[0]
st.success(f"Fewest GPUs: {int(best.total_gpus):,} x {best.accelerator} ({int(best.replicas):,} replicas of "
           f"{int(best.gpus_per_replica)}, KV {best.kv_format}), {best.capacity:,.6g} against {rec.target:,.6g}; "
           f"{best.one_fewer}.")
st.plotly_chart(recommend_figure(rec.frame, by_cost=by_cost, tr=t), key="recommend_chart")
st.dataframe(top.drop(columns=["target"]), hide_index=True, key="recommend_table",
             column_config={"plan link": st.column_config.LinkColumn("plan link", display_text="open plan"),
                            "headroom": st.column_config.NumberColumn("headroom", format="percent")})
