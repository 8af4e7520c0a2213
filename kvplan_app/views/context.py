"""GB vs context: KV bytes of one sequence for several models, against an accelerator's HBM.

Reads the shared plan (``kvplan_app.state.current_inputs``) for the defaults and the
usable-KV line; its own widgets use ``context_`` keys. Arithmetic lives in
``planner.frontier`` and ``planner.plan``.
"""

from __future__ import annotations

import streamlit as st

from planner.plan import MAX_CONTEXT_TOKENS, context_table, plan, rebase
from planner.catalog.accelerators import accelerator_from_link
from planner.catalog.entries import GPUS, get_gpu, get_model, models
from planner.errors import PlanInputError
from planner.files.export import CSV_MIME, to_csv_bytes
from kvplan_app.charts.figures import kv_vs_context_models_figure
from planner.frontier import context_axis, kv_context_frame, longest_context_that_fits
from planner.units import format_bytes, format_figure
from kvplan_app.markdown import escape_markdown, md, plotly_text
from kvplan_app.state import current_inputs
from kvplan_app.render import show_chart, show_table
from kvplan_app.i18n import num, planner_message, t, tn

# The model whose published 890 B/token table (docs/sources.md) the page shows.
PUBLISHED_MODEL = "deepseek-v4.1-flash"


def _fits_text(model, num_bytes: int) -> str:
    """Longest context fitting ``num_bytes``, said plainly when it passes the model's own maximum."""
    n = longest_context_that_fits(model, num_bytes)
    if model.max_context_tokens and n >= model.max_context_tokens:
        return t("all {tokens} (the model's maximum)", tokens=f"{model.max_context_tokens:,}")
    return f"{n:,}" if n < MAX_CONTEXT_TOKENS else t("at least {tokens}", tokens=f"{n:,}")


DEFAULT_MODELS = ("deepseek-v4.1-flash", "deepseek-v4-flash", "deepseek-llm-67b", "llama-3.1-70b")
MAX_CONTEXT_CHOICES = (128_000, 256_000, 512_000, 1_000_000, 2_000_000, 4_000_000, 10_000_000)
CURVE_POINTS = 80


def _tokens(n: int) -> str:
    return f"{n // 1_000_000}M" if n % 1_000_000 == 0 else f"{n // 1_000}k"


inputs = current_inputs()
st.title(t("KV cache vs context"))
st.caption(t("One sequence's KV cache in the engine's pool (native KV formats; window state kept outside the pool, "
             "as for DeepSeek V4.1-Flash, is not included). GB = 10^9 B on the left axis, GiB = 2^30 B on the right."))

user = accelerator_from_link(inputs.accelerator) if inputs.accelerator else None  # the plan's own accelerator
gpu_choices = list(GPUS) + ([user.id] if user else [])
if st.session_state.get("context_gpu") not in (None, *gpu_choices):
    st.session_state.pop("context_gpu")  # the plan's accelerator changed since
if "context_gpu" not in st.session_state:
    st.session_state["context_gpu"] = user.id if user else inputs.gpu_id if inputs.gpu_id in GPUS else "h200"
if "context_models" not in st.session_state:
    st.session_state["context_models"] = [m for m in dict.fromkeys([inputs.model_id, *DEFAULT_MODELS])
                                          if m in models()]  # an uploaded config is the Model page's, not a choice here
    st.session_state["context_max"] = min((c for c in MAX_CONTEXT_CHOICES if c >= inputs.context_tokens),
                                          default=MAX_CONTEXT_CHOICES[-1])

# The models on their own row: the default four chips fit at 1280 px.
model_ids = st.multiselect(t("Models"), list(models()), key="context_models", format_func=lambda m: models()[m].name)
c2, c3 = st.columns(2)
gpu_id = c2.selectbox(t("Accelerator (HBM line)"), gpu_choices, key="context_gpu",
                      format_func=lambda g: GPUS[g].name if g in GPUS else t("{name} (yours)", name=user.name))
max_context = c3.select_slider(t("Longest context"), MAX_CONTEXT_CHOICES, key="context_max", format_func=_tokens)

yours = user is not None and gpu_id == user.id
gpu = user.to_gpu_spec() if yours else get_gpu(gpu_id)
chosen = [models()[m] for m in model_ids]
contexts = context_axis(max_context, CURVE_POINTS, include=[inputs.context_tokens] if
                        inputs.context_tokens <= max_context else [])
frame = kv_context_frame(chosen, contexts)

# The plan's model on the chosen accelerator: the KV pool left after its weights and reserve.
lines = [(t("{gpu} HBM (reported)", gpu=plotly_text(gpu.name)) if gpu.memory_reported
          else t("{gpu} HBM (vendor figure)", gpu=plotly_text(gpu.name)),
          gpu.hbm_bytes)]
usable = None
try:
    on_gpu_inputs, notices = rebase(inputs, gpu_id="custom" if yours else gpu_id, hbm_gib=None,  # a measured
                                    accelerator=inputs.accelerator if yours else None)  # usable KV stays on its GPU
    for note in notices:
        st.info(escape_markdown(planner_message(note), keep="_"))
    on_gpu = plan(on_gpu_inputs)
    usable = on_gpu.usable_kv_bytes
    if usable > 0:
        lines.append((t("usable KV per GPU for {model}", model=plotly_text(on_gpu.model_name)), usable))
except PlanInputError as exc:
    st.warning(escape_markdown(planner_message(exc)))

marker = None
if inputs.model_id in model_ids and inputs.context_tokens <= max_context:
    marker = (inputs.context_tokens, get_model(inputs.model_id).estimate(inputs.context_tokens, "native").kv_bytes)
past_max = st.checkbox(t("Draw each curve past its model's maximum context (dashed)"), key="context_past_max")
st.session_state.setdefault("context_y_scale", "log")
y_scale = st.radio(t("GB axis"), ["log", "linear"], key="context_y_scale", horizontal=True,
                   format_func=lambda s: t("logarithmic") if s == "log" else t("linear"),
                   help=t("Logarithmic (the default): every model's curve shows its shape, even one a thousand times "
                          "smaller than another. Linear: distances in GB are in proportion, and a small model lies "
                          "flat along zero."))
show_chart(kv_vs_context_models_figure(frame, hbm_lines=lines, marker=marker, past_max=past_max,
                                       max_context_tokens={m.name: m.max_context_tokens for m in chosen},
                                       log_y=y_scale == "log", tr=t),
           key="context_chart")
st.caption(t("GB axis: logarithmic, so that the smallest model's curve is not flat along zero; choose linear to "
             "compare sizes in proportion.") if y_scale == "log" else
           t("GB axis: linear; a model much smaller than the others lies close to zero (choose logarithmic to see "
             "its curve)."))
st.download_button(t("Download the curves (CSV)"), to_csv_bytes(frame),
                   file_name="kvplan-kv-vs-context.csv", mime=CSV_MIME, key="context_csv")

# The two tables one under the other: side by side, their headers were cut at 1280 px.
with st.container():
    st.subheader(t("Where one sequence stops fitting"))
    rows = []
    for m in chosen:
        rows.append({
            t("Model"): m.name,
            t("KV per token at 1M tokens (B)"): num(format_figure(m.estimate(1_000_000, "native").kv_bytes_per_token,
                                                                  6)),
            t("Longest context in {gpu} HBM (tokens)", gpu=gpu.name): num(_fits_text(m, gpu.hbm_bytes)),
        })
        try:  # this model's own weights on the plan's GPUs per replica, the plan's reserve and utilization
            own = plan(rebase(inputs, model_id=m.id, gpu_id="custom" if yours else gpu_id,  # a user accelerator
                              accelerator=inputs.accelerator if yours else None,  # is planned as "custom"
                              hbm_gib=None, weights_gib=None, weight_format=None, kv_format="native")[0])
            fits = _fits_text(m, max(own.usable_kv_bytes, 0))
        except PlanInputError as exc:  # the reason, in words: a missing parameter count, or what else refused it
            fits = (t("unknown (no parameter count)") if exc.field == "weights_gib"
                    else t("not planned: {error}", error=planner_message(exc)))
        rows[-1][t("Longest context in usable KV (tokens)")] = num(fits)
    show_table(rows, hide_index=True, static=True)  # a few rows of words: they wrap, none is cut at 1280 px
    st.caption(num(t("{gpu}: {bytes} ({how}). Usable KV: each model's weights (catalog format) over {gpus} per "
                     "replica, the plan's reserve ({reserve} GiB) and utilization ({util}).", gpu=md(gpu.name),
                     bytes=format_bytes(gpu.hbm_bytes),
                     how=t("as the device reports it") if gpu.memory_reported else t("vendor figure"),
                     gpus=tn("{n} GPU", "{n} GPUs", inputs.gpus_per_replica, n=f"{inputs.gpus_per_replica:,}"),
                     reserve=f"{inputs.reserve_gib:g}",
                     util=f"{inputs.gpu_memory_utilization:g}")))
with st.container():
    st.subheader(t("DeepSeek V4.1-Flash: KV by context"))
    published = context_table(get_model(PUBLISHED_MODEL))
    show_table(published.rename(columns={"context_tokens": t("Context (tokens)"), "kv_bytes": t("KV (B)"),
                                         "kv_gb": t("KV (GB)"), "kv_gib": t("KV (GiB)"),
                                         "state_bytes": t("Window state outside the pool (B)")}),
               hide_index=True, key="context_published_table",
               column_config={t("Context (tokens)"): st.column_config.NumberColumn(format="localized"),
                              t("KV (B)"): st.column_config.NumberColumn(format="localized"),
                              t("Window state outside the pool (B)"): st.column_config.NumberColumn(format="localized")})
    st.caption(num(t("890 B per token (DeepSeek V4.1 report, quoted in docs/sources.md) x tokens: 100k -> 0.089 GB, "
                     "250k -> 0.2225 GB, 500k -> 0.445 GB, 1M -> 0.89 GB (0.829 GiB).")))
