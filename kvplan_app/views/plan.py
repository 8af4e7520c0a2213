"""Plan page: a model on an accelerator, sliders for HBM, prefix hit rate and shared prefix."""

import hashlib
import json
import math

import streamlit as st

from planner.plan import (
    MAX_HBM_GIB,
    MAX_SECONDS,
    MAX_TIER_GIB,
    PlanInputs,
    context_table,
    effective_model,
    format_sessions,
    plan,
    plan_frame,
    rebase,
)
from planner.catalog.accelerators import accelerator_from_dict, accelerator_from_link
from planner.catalog.entries import GPUS, get_gpu, get_model
from planner.errors import PlanInputError
from planner.hf.checkpoint import config_from_files
from planner.hf.config import CONFIG_MODEL_PREFIX, MAX_CONFIG_BYTES, plan_model_from_config
from planner.plan.curves import curve_contexts, memory_inputs, sessions_by_context
from kvplan_app.charts.figures import PLAN_FIGURE_TEXTS, kv_vs_context_figure, plan_sessions_figure
from planner.kv.formats import FORMATS
from planner.kv.models import NATIVE, WEIGHT_BYTES_PER_PARAM
from planner.catalog.tiers import AUTO, HOST_LINKS, LINKS, SSD_LINKS, node_for
from planner.units import GiB, format_bytes, format_duration, format_figure, parse_tokens, to_gb, to_gib
from planner.files.export import CSV_MIME, to_csv_bytes
from planner.files.planfile import MAX_PLAN_FILE_BYTES, dumps, loads
from planner.plan.measured import context_mismatch
from kvplan_app.uploads import file_uploader
from kvplan_app.render import number_box, number_slider, separators, show_chart, show_table
from planner.messages import msg
from kvplan_app.i18n import group_names_in_words, language, num, planner_message, t, tn, token_text
from kvplan_app.link_models import plan_widget_reset_notes
from kvplan_app.model_choices import model_ids as model_choice_ids, model_labels
from kvplan_app.markdown import escape_markdown, file_name, md
from kvplan_app.notices import show_link_warnings, show_notices
from kvplan_app.router import page_errors
from kvplan_app.share import render_share_link_in, share_link_slot
from kvplan_app.state import add_notices, current_inputs, load_inputs, set_inputs, update_inputs

YOURS = "yours"  # the GPU choice that opens the user-defined accelerator form
LAST_CONFIG_PLAN = "plan_config_last_valid"  # (model, key, weights) of the last config whose plan was shown


def _model_or_none(model_id: str):
    """The model for a widget's help text; an uploaded config no longer in this session gives the default's."""
    try:
        return get_model(model_id)
    except PlanInputError:
        return get_model(PlanInputs().model_id)


def _acc_defaults(acc) -> dict:
    """Form state for a user-defined accelerator (a linked one, else an example to edit)."""
    if acc is None:
        return {"plan_acc_id": "my-gpu", "plan_acc_name": "My accelerator", "plan_acc_mem": 98_304.0,
                "plan_acc_mem_unit": "MiB", "plan_acc_bw": 4_000.0, "plan_acc_tf": 989.0, "plan_acc_hl": 0.0,
                "plan_acc_price": 0.0}
    return {"plan_acc_id": acc.id, "plan_acc_name": acc.name, "plan_acc_mem": float(acc.hbm_bytes),
            "plan_acc_mem_unit": "bytes", "plan_acc_bw": acc.hbm_bandwidth_bytes_per_s / 1e9,
            "plan_acc_tf": acc.bf16_dense_flops / 1e12,
            "plan_acc_hl": (acc.host_link_bytes_per_s or 0.0) / 1e9, "plan_acc_price": acc.price_per_gpu_hour or 0.0}


def _accelerator_form():
    """(UserAccelerator, None) from the form, or (None, PlanInputError) naming the bad field."""
    with st.expander(t("Your accelerator (travels in the share link)"), expanded=True):
        a1, a2, a3, a4 = st.columns(4)
        acc_id = a1.text_input(t("Id (slug)"), key="plan_acc_id", max_chars=40)
        name = a2.text_input(t("Name"), key="plan_acc_name", max_chars=60)
        mem = number_box(a3, t("Memory as the device reports it"), min_value=0.0, format="%g", key="plan_acc_mem",
                              help=t("nvidia-smi prints MiB; rocm-smi can print bytes"))
        unit = a4.selectbox(t("Unit"), ["MiB", "GiB", "bytes"], key="plan_acc_mem_unit",
                            format_func=lambda u: t("bytes") if u == "bytes" else u)
        b1, b2, b3, b4 = st.columns(4)
        bw = number_box(b1, t("HBM bandwidth (GB/s)"), min_value=0.0, format="%g", key="plan_acc_bw")
        tf = number_box(b2, t("Dense BF16 TFLOP/s"), min_value=0.0, format="%g", key="plan_acc_tf")
        hl = number_box(b3, t("Host link GB/s (0 = the plan's)"), min_value=0.0, format="%g", key="plan_acc_hl")
        price = number_box(b4, t("Price per GPU-hour (0 = not priced)"), min_value=0.0, format="%g", key="plan_acc_price")
    entry = {"id": acc_id, "name": name, "hbm_bandwidth_gb_s": bw, "bf16_dense_tflops": tf}
    whole = int(mem) if float(mem).is_integer() else mem
    entry.update({"bytes": {"memory_bytes": whole}, "MiB": {"memory_mib": whole}, "GiB": {"memory_gib": mem}}[unit])
    if hl > 0:
        entry["host_link_gb_s"] = hl
    if price > 0:
        entry["price_per_gpu_hour"] = price
    try:
        return accelerator_from_dict(entry), None
    except PlanInputError as exc:
        return None, exc


st.title(t("KV-cache plan"))
show_link_warnings()
last = current_inputs()

# Widget state starts from the last valid plan (the link on first load).
defaults = {
    "plan_model_id": last.model_id,
    "plan_gpu_id": YOURS if last.accelerator else last.gpu_id,
    **_acc_defaults(accelerator_from_link(last.accelerator) if last.accelerator else None),
    "plan_gpus_per_replica": last.gpus_per_replica,
    "plan_attention_parallelism": last.attention_parallelism,
    "plan_engine": last.engine or "none",
    "plan_pipeline_parallel_size": last.pipeline_parallel_size,
    "plan_context_tokens": token_text(last.context_tokens),
    "plan_output_tokens": last.output_tokens,
    "plan_kv_format": last.kv_format,
    "plan_hit_rate": float(last.hit_rate),
    "plan_shared_prefix": float(last.shared_prefix),
    "plan_gpu_memory_utilization": float(last.gpu_memory_utilization),
    "plan_reserve_gib": float(last.reserve_gib),
    "plan_weight_format": last.weight_format or "catalog",
    "plan_state_in_hbm": last.state_in_hbm,
    "plan_decode_tokens_per_s": float(last.decode_tokens_per_s),
    "plan_session_decode_tokens_per_s": float(last.session_decode_tokens_per_s),
    "plan_shared_prefixes": last.shared_prefixes,
    "plan_pause_mean_s": float(last.pause_mean_s),
    "plan_pause_distribution": last.pause_distribution,
    "plan_ttl_s": float(last.ttl_s),
    "plan_prefill_tokens_per_s": float(last.prefill_tokens_per_s),
    "plan_host_ram_gib": last.host_ram_gib,
    "plan_ssd_gib": last.ssd_gib,
    "plan_host_link": last.host_link,
    "plan_ssd_link": last.ssd_link,
    "plan_target_sessions_per_gpu": last.target_sessions_per_gpu,
}
for key, value in defaults.items():
    if key not in st.session_state:
        st.session_state[key] = value
        st.session_state.pop(f"{key}_range", None)  # re-seeded: its range may widen again
        st.session_state.pop(f"{key}_typed", None)  # and the typed box beside it follows


# Figures are cached as resources (one object shared by the sessions, never changed: localized_figure and
# guarded_figure copy before a change): cache_data would unpickle, hence re-validate, the figure on every hit.
@st.cache_resource(max_entries=64, show_spinner=False)
def plan_figure(inputs, sessions: float, per_session_bytes: int, max_context_tokens: int | None, lang: str,
                config_key: str = "", _model=None):
    """The headline chart: sessions per GPU along context for this plan (cached: a slider step redraws once).

    ``inputs``: the plan's :func:`memory_inputs`, so that a hit-rate step finds the chart drawn (the curve's
    sessions and per-session bytes, all the chart shows of it, do not depend on the hit rate).
    ``_model``: an imported config's model (not hashed; ``config_key``, its text's digest, stands for it)."""
    right = max(max_context_tokens or 1_000_000, inputs.context_tokens)
    frame = sessions_by_context(inputs, curve_contexts(right, include=[inputs.context_tokens]), _model)
    return plan_sessions_figure(frame, plan_context_tokens=inputs.context_tokens, plan_sessions=sessions,
                                per_session_bytes=per_session_bytes, max_context_tokens=max_context_tokens,
                                texts={k: t(v) for k, v in PLAN_FIGURE_TEXTS.items()},
                                separators=separators(lang), localize=num)


@st.cache_resource(max_entries=64, show_spinner=False)
def kv_figure(model, kv_format: str, marker_tokens: int, max_tokens: int, lang: str):
    """The KV-vs-context chart of one sequence (cached on the model itself, hashed by value, and the language)."""
    return kv_vs_context_figure(model, kv_format=kv_format, marker_tokens=marker_tokens, max_tokens=max_tokens, tr=t)


def widened(key: str, lo: float, hi: float) -> tuple[float, float]:
    """A widget's range, widened when it is seeded so that it holds a linked value (a link may carry any valid one).

    Fixed until the widget is seeded again: a range that changes between runs resets the widget.
    """
    value = st.session_state[key]
    return st.session_state.setdefault(f"{key}_range", (min(lo, value), max(hi, value)))


TYPED = ("plan_hbm_gib", "plan_hit_rate", "plan_shared_prefix")
# Sliders with a typed number box beside them (key ``<slider key>_typed``).


def _slider_moved(key: str) -> None:
    """The slider moved: the typed box follows."""
    st.session_state[f"{key}_typed"] = st.session_state[key]
    if key == "plan_hbm_gib":
        st.session_state["plan_hbm_set"] = True


def _typed(key: str) -> None:
    """A value typed beside a slider: the slider follows (its range widens to hold the value)."""
    value = st.session_state[f"{key}_typed"]
    if value is None:
        st.session_state[f"{key}_typed"] = st.session_state[key]
        return
    lo, hi = st.session_state.get(f"{key}_range", (value, value))
    if not lo <= value <= hi:
        st.session_state.pop(f"{key}_range", None)
    st.session_state[key] = float(value)
    if key == "plan_hbm_gib":
        st.session_state["plan_hbm_set"] = True


def _load_plan_file() -> None:
    """Apply an uploaded plan file before the widgets are created (a callback), or say why not."""
    up = st.session_state.get("plan_upload_json")
    if up is None:
        return
    try:
        if up.size > MAX_PLAN_FILE_BYTES:
            raise PlanInputError("plan file: size", f"{up.size:,} bytes",
                                 msg("at most {limit:,} bytes", limit=MAX_PLAN_FILE_BYTES))
        loaded = loads(up.getvalue(), up.name)
        plan(loaded.inputs)  # catalog ids and combinations the file format cannot check
    except PlanInputError as exc:
        st.session_state["plan_upload_message"] = ("error", t("Plan file {file} not loaded: {error}", file=up.name,
                                                              error=planner_message(exc)))
        return
    load_inputs(loaded.inputs)
    st.session_state["plan_upload_message"] = (
        "success", t("Loaded {file} (schema {schema}, written by kvplan {version}).", file=up.name,
                     schema=loaded.schema_version, version=loaded.kvplan_version)
        + (" " + planner_message(loaded.notice) if loaded.notice else ""))

model_ids = model_choice_ids(st.session_state.get("plan_model_id", ""))  # the catalog, then configs uploaded here
gpu_ids = list(GPUS) + ["custom", YOURS]
c1, c2, c3, c3b = st.columns([1.2, 1.2, 0.8, 1])
model_id = c1.selectbox(t("Model"), model_ids, key="plan_model_id", format_func=model_labels(model_ids).get)
gpu_choice = c2.selectbox(t("GPU"), gpu_ids, key="plan_gpu_id",
                          format_func=lambda g: GPUS[g].name if g in GPUS else
                          t("Custom HBM size") if g == "custom" else t("Your own accelerator"))
gpus = c3.number_input(t("GPUs per replica"), min_value=1, max_value=1024, step=1, key="plan_gpus_per_replica",
                       help=t("GPUs that split one replica's weights, 1 to 1,024."))
ATTENTION_WORDS = {"tp": t("TP: split KV heads"), "dp": t("DP: whole sessions")}
attention = c3b.selectbox(t("Attention parallelism"), list(ATTENTION_WORDS), key="plan_attention_parallelism",
                          format_func=ATTENTION_WORDS.get,
                          help=t("tp (vLLM, SGLang default): each session spans the replica's GPUs, which split its "
                                 "KV heads (MLA latents are replicated); sessions are counted per replica. dp (SGLang "
                                 "--enable-dp-attention): each GPU holds whole sessions."))

user_acc, user_acc_error = _accelerator_form() if gpu_choice == YOURS else (None, None)
# A user-defined accelerator plans as gpu 'custom' described by it (memory as reported, bandwidth, host link, price).
gpu_id = "custom" if gpu_choice == YOURS else gpu_choice
hbm_key = user_acc.to_link() if user_acc else gpu_choice

# HBM: the device's reported total (a link without hbm) until the user moves the slider; a plan that sets hbm
# (link, plan file, another page) seeds the slider with its exact value, which then round-trips.
device_gib = (get_gpu(gpu_id).hbm_bytes / GiB if gpu_id in GPUS else user_acc.hbm_bytes / GiB if user_acc
              else 80.0)
if "plan_hbm_gib" not in st.session_state:
    st.session_state["plan_hbm_gib"] = float(last.hbm_gib) if last.hbm_gib is not None else round(device_gib, 1)
    st.session_state["plan_hbm_set"] = last.hbm_gib is not None
    st.session_state["plan_hbm_for_gpu"] = hbm_key
    st.session_state.pop("plan_hbm_gib_range", None)
    st.session_state.pop("plan_hbm_gib_typed", None)
elif st.session_state.get("plan_hbm_for_gpu") != hbm_key:  # another GPU: its own total and slider range
    st.session_state["plan_hbm_gib"] = round(device_gib, 1)
    st.session_state["plan_hbm_set"] = False
    st.session_state["plan_hbm_for_gpu"] = hbm_key
    st.session_state.pop("plan_hbm_gib_range", None)
    st.session_state.pop("plan_hbm_gib_typed", None)
for key in TYPED:  # the typed box beside each slider shows the slider's value
    st.session_state.setdefault(f"{key}_typed", st.session_state[key])

c4, c5, c6 = st.columns(3)
context_text = c4.text_input(t("Context (tokens per session)"), key="plan_context_tokens",
                             help=t("Prompt + history per session: 1,000,000, 1m, 128k or 1e6. Suffixes as vLLM reads them: lower case x 1,000 (32k = 32,000), upper case x 1,024 (32K = 32,768)."))
output_tokens = c5.number_input(t("Output tokens per request"), min_value=0, max_value=100_000_000, step=100,
                                key="plan_output_tokens")
kv_format = c6.selectbox(t("KV format"), [NATIVE, *FORMATS], key="plan_kv_format",
                         format_func=lambda f: t("native (the model's own)") if f == NATIVE else FORMATS[f].id,
                         help=f"{t('native')}: {planner_message(_model_or_none(model_id).native_format_label)}. "
                              + " · ".join(f"{f.id}: {planner_message(f.label)}" for f in FORMATS.values()))

# The page top to bottom. A slider step reruns only `_answer` (a fragment), which draws the sliders, the answer, the
# details and the downloads into the places kept for them here: the browser redraws those, not the whole page.
answer_box = st.container()  # the sliders and the answer: the body of `_answer`, called into it below

with st.expander(t("Parallelism, memory and throughput assumptions")):
    a1, a2, a3 = st.columns(3)
    util = number_slider(a1, t("GPU memory utilization"), *widened("plan_gpu_memory_utilization", 0.05, 1.0),
                         step=0.01, key="plan_gpu_memory_utilization")
    reserve = number_box(a2, t("Runtime reserve per GPU (GiB)"), *widened("plan_reserve_gib", 0.0, 1024.0), step=0.5, format="%g",
                              key="plan_reserve_gib")
    catalog_weights = _model_or_none(model_id).weight_format
    weight_format = a3.selectbox(t("Weight format"), ["catalog", *WEIGHT_BYTES_PER_PARAM], key="plan_weight_format",
                                 format_func=lambda w: t("catalog ({format})", format=catalog_weights)
                                 if w == "catalog" else w)
    b1, b2, b3 = st.columns(3)
    decode_tps = number_box(b1, t("Decode throughput per GPU (tokens/s)"), *widened("plan_decode_tokens_per_s", 1.0, 1e9),
                                 step=100.0, format="%g", key="plan_decode_tokens_per_s")
    session_tps = number_box(b2, t("Decode speed per session (tokens/s)"),
                                  *widened("plan_session_decode_tokens_per_s", 0.1, 1e7),
                                  step=1.0, format="%g", key="plan_session_decode_tokens_per_s")
    state_in_hbm = b3.checkbox(t("Window state in HBM"), key="plan_state_in_hbm",
                               help=t("Keep window state in HBM (not host RAM)"))
    pp = b1.number_input(t("Pipeline stages (split layers)"), min_value=1, max_value=1024, step=1,
                         key="plan_pipeline_parallel_size", help=t("Must divide the GPUs per replica; TP = GPUs / stages."))
    ENGINE_WORDS = {"none": t("kvplan (steady state)"), "vllm": "vLLM", "sglang": "SGLang"}
    engine = b2.selectbox(t("Serving engine"), list(ENGINE_WORDS), key="plan_engine", format_func=ENGINE_WORDS.get,
                          help=t("With an engine, the headline is the sessions it would admit at full length (vLLM: "
                                 "its maximum concurrency, blocks per full-length request; SGLang: its token pool / "
                                 "(context + output tokens), bounded by its max_running_requests) and the page prints "
                                 "its launch flags; kvplan's steady state stays beside it as the upper bound."))

with st.expander(t("Misses, replay and tiers")):
    node = node_for(gpu_id)
    r1, r2, r3, r4 = st.columns(4)
    prefixes = r1.number_input(t("Distinct shared prefixes per GPU"), min_value=1, max_value=1_000_000, step=1,
                               key="plan_shared_prefixes", help=t("Each is stored once; sessions share them."))
    pause = number_box(r2, t("Mean pause between turns (s)"), min_value=0.0, max_value=MAX_SECONDS, step=5.0, format="%g",
                            key="plan_pause_mean_s", help=t("Tool calls, approvals, background jobs. 0 = no pauses."))
    pause_dist = r3.selectbox(t("Pause distribution"), ["exponential", "fixed"], key="plan_pause_distribution", format_func=t)
    ttl = number_box(r4, t("Window-state TTL in host RAM (s)"), min_value=0.0, max_value=MAX_SECONDS, step=10.0, format="%g",
                          key="plan_ttl_s", help=t("DeepSeek V4.1: minute-level. 0 = never persisted (vLLM always replays)."))
    t1, t2, t3, t4 = st.columns(4)
    prefill_tps = number_box(t1, t("Prefill throughput per GPU (tokens/s)"), *widened("plan_prefill_tokens_per_s", 1.0, 1e9),
                                  step=1000.0, format="%g", key="plan_prefill_tokens_per_s", help=t("Prices replay and recompute (assumed)."))
    host_gib = number_box(t2, t("Host RAM per GPU (GiB)"), min_value=0.0, max_value=MAX_TIER_GIB, value=None,
                               step=1.0, format="%g", key="plan_host_ram_gib",
                               placeholder=num(t("node: {gib} GiB", gib=f"{node.host_ram_bytes_per_gpu / GiB:,.0f}")),
                               help=t("Node RAM / GPUs per node. Empty = {node}.", node=node.name))
    ssd_gib = number_box(t3, t("SSD per GPU (GiB)"), min_value=0.0, max_value=MAX_TIER_GIB, value=None,
                              step=1.0, format="%g", key="plan_ssd_gib", placeholder=num(t("node: {gib} GiB", gib=f"{node.ssd_bytes_per_gpu / GiB:,.0f}")),
                              help=t("Node SSD / GPUs per node. Empty = {node}.", node=node.name))
    target = t4.number_input(t("Sessions to carry per GPU"), min_value=0, max_value=1_000_000_000, value=None, step=1,
                             key="plan_target_sessions_per_gpu", placeholder=t("what HBM holds"),
                             help=t("Running + paused; beyond HBM, paused sessions are parked in host RAM / SSD."))
    l1, l2 = st.columns(2)
    host_link = l1.selectbox(t("Host RAM link"), [AUTO, *HOST_LINKS], key="plan_host_link",
                             format_func=lambda k: f"auto ({LINKS[node.host_link].name})" if k == AUTO else LINKS[k].name)
    ssd_link = l2.selectbox(t("SSD link"), [AUTO, *SSD_LINKS], key="plan_ssd_link",
                            format_func=lambda k: f"auto ({LINKS[node.ssd_link].name})" if k == AUTO else LINKS[k].name)

with st.expander(t("Plan a config.json instead (not carried by the share link)"),
                 expanded=bool(st.session_state.get("plan_config_file"))):
    f1, f2 = st.columns([2, 1])
    config_upload = file_uploader(f1, t("Upload a config.json (with hf_quant_config.json if the checkpoint has one)"),
                                  key="plan_config_file", accept_multiple_files=True,
                                  help=t("Read as `kvplan kv --config` reads it; the model above is set aside while "
                                         "a config is loaded."))
    config_weights = number_box(f2, t("Weights of one replica (GiB)"), min_value=0.0, max_value=10_000_000.0,
                                     value=None, step=1.0, format="%g", key="plan_config_weights_gib",
                                     placeholder=t("from the config"),
                                     help=t("Empty: the weights come from the config (the checkpoint's tensors, class "
                                            "by class, as the engine loads them); needed only where they cannot be "
                                            "derived, and the plan then names the missing field."))
page_config_model, page_config_key, config_error = None, "", None
config_files = [(u.name, u.getvalue()[: MAX_CONFIG_BYTES + 1]) for u in (config_upload or [])]
if not config_files:  # the upload was removed: no earlier config is the "last valid plan" any more
    st.session_state.pop(LAST_CONFIG_PLAN, None)
else:
    try:
        # one config.json and the sidecars vLLM reads beside it (hf_quant_config.json), as `kvplan plan --config DIR`
        config, config_name = config_from_files(config_files)
        page_config_model = plan_model_from_config(config, config_name)
        page_config_key = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()
    except PlanInputError as exc:
        config_error = exc

details = st.container()  # notices about the plan, then its details
kv_box = st.expander(t("KV cache of one sequence vs context"))
left, right = st.container(), st.container()  # one above the other: the table's five columns fit at 1280 px
with right:
    st.subheader(t("Export"))
    # The files are written when downloaded (a callable), not on every rerun: the bytes of `kvplan plan --csv`, of
    # the plan as the last run of `_answer` left it (a slider step reruns only that, not these buttons).
    shown_plan: dict = {}
    named = page_config_model.id if page_config_model is not None else model_id  # the model the plan prices
    st.download_button(t("Download plan CSV"), lambda: to_csv_bytes(plan_frame(shown_plan["result"])),
                       file_name=file_name("kvplan", named, gpu_id, suffix=".csv"), mime=CSV_MIME,
                       key="plan_download_csv")
    st.download_button(t("Download plan JSON"), lambda: dumps(shown_plan["inputs"]),
                       file_name=file_name("kvplan", named, gpu_id, suffix=".json"),
                       mime="application/json", key="plan_download_json",
                       help=t("Every input of this plan (docs/plan-files.md); `kvplan plan --plan FILE` reads it."))
    file_uploader(st, t("Load plan JSON"), key="plan_upload_json", on_change=_load_plan_file,
                  help=t("A plan file of at most {kib} KiB.", kib=MAX_PLAN_FILE_BYTES // 1024))
    if (upload_message := st.session_state.pop("plan_upload_message", None)) is not None:
        kind, text = upload_message
        (st.success if kind == "success" else st.error)(escape_markdown(text))


def _hbm_caption(hbm_bytes: float, hbm_set: bool) -> str:
    """The caption under the sliders, from the HBM bytes the plan itself uses (``PlanResult.hbm_bytes`` once the plan
    is computed): the slider's rounded GiB would print another figure than the arithmetic."""
    lo_hbm, hi_hbm = st.session_state["plan_hbm_gib_range"]
    return (num(t("HBM {gb} GB, slider {lo} to {hi} GiB", gb=f"{to_gb(hbm_bytes):,.2f}", lo=f"{lo_hbm:,.0f}",
                  hi=f"{hi_hbm:,.0f}") + " · "
                + (t("{capacity} on the data sheet", capacity=get_gpu(gpu_id).vendor_capacity) if gpu_id in GPUS
                   else t("yours, as the device reports it") if user_acc else t("custom"))
                + ("" if hbm_set else t(", the device's reported total"))))


def _slider_row():
    """The HBM, hit-rate and shared-prefix sliders with their typed boxes; returns (hbm_gib, hbm_set, hit_rate,
    shared_prefix, hbm_slot)."""
    # HBM slider over this GPU's range (whole GiB; a custom size 1 to 1,024 GiB), the typed box for any exact value.
    hbm_slider_max = float(max(math.ceil(device_gib), 2)) if gpu_id in GPUS or user_acc else 1024.0
    s1, s1n, s2, s2n = st.columns([2.6, 1.2, 2.6, 1.2])
    hbm_gib = number_slider(s1, t("HBM per GPU (GiB)"), *widened("plan_hbm_gib", 1.0, hbm_slider_max), step=0.1,
                            key="plan_hbm_gib", decimals=1, on_change=_slider_moved, args=("plan_hbm_gib",))
    number_box(s1n, t("HBM (GiB), typed"), min_value=0.1, max_value=MAX_HBM_GIB, step=1.0, format="%.1f",
               key="plan_hbm_gib_typed", on_change=_typed, args=("plan_hbm_gib",))
    hbm_set = (gpu_id not in GPUS and user_acc is None) or bool(st.session_state.get("plan_hbm_set"))
    hit_rate = number_slider(s2, t("Prefix hit rate"), 0.0, 1.0, step=0.01, key="plan_hit_rate",  # "0,50" in Spanish
                             on_change=_slider_moved, args=("plan_hit_rate",),
                             help=t("The share of each prompt read from cache, a session's own history included: it "
                                    "saves prefill work and time to first token, never memory."))
    number_box(s2n, t("Hit rate, typed"), min_value=0.0, max_value=1.0, step=0.01, format="%.2f",
               key="plan_hit_rate_typed", on_change=_typed, args=("plan_hit_rate",))
    p1, p1n, p2 = st.columns([2.6, 1.2, 3.8])
    shared_prefix = number_slider(p1, t("Shared prefix"), 0.0, 1.0, step=0.01, key="plan_shared_prefix",
                                  on_change=_slider_moved, args=("plan_shared_prefix",),
                                  help=t("The share of the context common to many concurrent sessions (system prompt, "
                                         "tool schemas), stored once per distinct prefix: it sets memory, hence "
                                         "sessions."))
    number_box(p1n, t("Shared prefix, typed"), min_value=0.0, max_value=1.0, step=0.01, format="%.2f",
               key="plan_shared_prefix_typed", on_change=_typed, args=("plan_shared_prefix",))
    with p2:  # beside the shared prefix: what each input moves (one line), then the HBM the plan uses
        st.caption(t("Hit rate: prefill work and time to first token. Shared prefix: memory, hence sessions."))
        hbm_slot = st.empty()  # filled with the plan's own HBM bytes once the plan is computed
    hbm_slot.caption(_hbm_caption(hbm_gib * GiB if hbm_set else device_gib * GiB, hbm_set))
    return hbm_gib, hbm_set, hit_rate, shared_prefix, hbm_slot


def _last_valid_plan(last):
    """The plan shown under a refused input: the last config's plan while a config upload is on the page (a bad
    file uploaded over a good one keeps the good one's figures), else the last valid plan of the inputs.

    Returns (inputs, result, config model or None, config key)."""
    kept = st.session_state.get(LAST_CONFIG_PLAN) if config_files else None
    if kept is not None:
        kept_model, kept_key, kept_weights = kept
        try:
            inputs, _ = rebase(last, model_id=kept_model.id,
                               weights_gib=None if kept_weights is None else float(kept_weights))
            return inputs, plan(inputs, kept_model), kept_model, kept_key
        except PlanInputError:  # the inputs moved since: the catalog plan, as with no config
            st.session_state.pop(LAST_CONFIG_PLAN, None)
    return last, plan(last), None, ""


@st.fragment
def _answer(share_slot):
    """The sliders and everything they move: a slider step reruns this alone (the page's other inputs, above, are
    fixed between whole-page runs: moving any of them reruns the page). Its body is ``answer_box``
    (the sliders, alerts and the headline); it writes into ``details``, the plan the download buttons write
    (``shown_plan``) and the sidebar's share link (``share_slot``, so the link follows every step). Returns (model, KV format, inputs) for the parts of the page no slider moves, or None
    after an unexpected error (shown as one line by :func:`kvplan_app.router.page_errors`)."""
    with page_errors("home"):
        return _answer_run(share_slot)


def _answer_run(share_slot):
    """The body of :func:`_answer`."""
    last = current_inputs()  # read again on every run: a fragment rerun follows the plan the last step set
    hbm_gib, hbm_set, hit_rate, shared_prefix, hbm_slot = _slider_row()
    alerts = st.container()  # a refused input, next to the inputs and above the answer (in the first viewport)
    headline = st.container()  # the answer, above the assumptions: filled once the plan is computed
    config_model, config_key = page_config_model, page_config_key
    # Untouched, the slider means "the device's reported total", to the byte (no hbm in the link).
    hbm_choice = float(hbm_gib) if hbm_set else None
    try:
        # rebase decides what survives the change (measured figures, weights in GiB): one rule for pages and CLI
        if user_acc_error is not None:
            raise user_acc_error
        inputs, notices = rebase(
            last, model_id=model_id, gpu_id=gpu_id, accelerator=user_acc.to_link() if user_acc else None,
            gpus_per_replica=int(gpus), attention_parallelism=attention, engine=None if engine == "none" else engine,
            pipeline_parallel_size=int(pp), hbm_gib=hbm_choice,
            gpu_memory_utilization=float(util), reserve_gib=float(reserve),
            weight_format=None if weight_format == "catalog" else weight_format,
            context_tokens=parse_tokens(context_text), output_tokens=int(output_tokens), hit_rate=float(hit_rate),
            shared_prefix=float(shared_prefix),
            # measured figures keep the prompt length they were measured at until either is moved by hand
            figures_measured_at_tokens=last.figures_measured_at_tokens
            if (float(hit_rate), float(shared_prefix)) == (last.hit_rate, last.shared_prefix) else None,
            kv_format=kv_format, state_in_hbm=bool(state_in_hbm), decode_tokens_per_s=float(decode_tps),
            session_decode_tokens_per_s=float(session_tps),
            shared_prefixes=int(prefixes), pause_mean_s=float(pause), pause_distribution=pause_dist, ttl_s=float(ttl),
            prefill_tokens_per_s=float(prefill_tps), host_ram_gib=None if host_gib is None else float(host_gib),
            ssd_gib=None if ssd_gib is None else float(ssd_gib), host_link=host_link, ssd_link=ssd_link,
            target_sessions_per_gpu=None if target is None else int(target),
        )
        result = plan(inputs)
        hbm_slot.caption(_hbm_caption(result.hbm_bytes, hbm_set))
        set_inputs(inputs)
        add_notices(notices)
        if config_error is not None:
            raise config_error
        if config_model is not None:  # the link keeps the catalog plan; the config's plan is shown
            inputs, _ = rebase(inputs, model_id=config_model.id,
                               weights_gib=None if config_weights is None else float(config_weights))
            result = plan(inputs, config_model)
            # the config's plan is the last valid one until the upload is removed: a later bad upload keeps it
            st.session_state[LAST_CONFIG_PLAN] = (config_model, config_key, config_weights)
        # A widget Streamlit recreated sends its starting value, not the plan's: never a silent change of the link.
        add_notices(plan_widget_reset_notes(last, inputs, {
            "model_id": model_ids[0], "gpu_id": gpu_ids[0], "gpus_per_replica": 1, "attention_parallelism": "tp",
            "engine": None,
            "output_tokens": 0, "kv_format": NATIVE, "hit_rate": 0.0, "shared_prefix": 0.0, "hbm_gib": st.session_state["plan_hbm_gib_range"][0],
            "pipeline_parallel_size": 1, "shared_prefixes": 1, "pause_mean_s": 0.0, "ttl_s": 0.0,
            "state_in_hbm": False}))
    except PlanInputError as exc:  # may quote what the user typed: shown as text
        hint = (" " + t("Set 'GPUs per replica' to a TP size the engine accepts for this model.")
                if exc.field == "tp" else "")  # the TP a refusal names is the GPUs-per-replica box
        alerts.error(escape_markdown(planner_message(exc) + ". " + t("Showing the last valid plan.") + hint, keep="_"))
        inputs, result, config_model, config_key = _last_valid_plan(last)
    with details:  # notices about this plan, above its details
        show_notices()
    if config_model is not None:  # above the headline: the figures are the config's, not the selected model's
        alerts.info(escape_markdown(t("Planning the imported {name}; the share link carries the catalog model {model}, not "
                                  "the config.", name=config_model.name, model=model_labels([model_id])[model_id])))
        for note in config_model.notes:  # caveats of the imported figures (unchecked architecture, fields ignored)
            alerts.warning(escape_markdown(planner_message(note), keep="_"))
    elif config_files:  # the upload has no valid plan yet: the figures below are not the config's, say whose they are
        alerts.warning(escape_markdown(t("The uploaded config has no valid plan yet: the figures below are the "
                                         "catalog model {model}'s, not the config's.",
                                         model=model_labels([inputs.model_id])[inputs.model_id])))

    model, priced_format, _ = effective_model(inputs, config_model)
    if (far := context_mismatch(inputs.figures_measured_at_tokens, inputs.context_tokens)):
        alerts.warning(planner_message(far))  # beside the inputs it is about, above the answer
    with details:
        if result.message:
            st.warning(escape_markdown(planner_message(result.message), keep="_"))
        if result.kv_source == "measured" or result.usable_kv_source == "measured":
            measured = []
            if result.kv_source == "measured":
                measured.append(num(t("KV bytes per token = {bytes} B (measured on {model}, {kv_format})",
                                      bytes=f"{inputs.measured_kv_bytes_per_token:,.6g}", model=md(inputs.measured_kv_model_id),
                                      kv_format=md(inputs.measured_kv_format))))
            if result.usable_kv_source == "measured":
                measured.append(t("usable KV per GPU = {bytes} (measured on {gpu})",
                                  bytes=num(format_bytes(result.usable_kv_bytes)), gpu=md(inputs.measured_usable_kv_gpu_id)))
            st.info(t("This plan uses measured figures: ") + "; ".join(measured) + ".")
            if st.button(t("Use the planner's arithmetic instead"), key="plan_clear_measured"):
                update_inputs(measured_kv_bytes_per_token=None, measured_usable_kv_gib=None)
                st.rerun()

    attention_label = inputs.attention_parallelism.upper()


    note = planner_message(group_names_in_words(result.parallelism_note))  # the planner's sentence, numbers already per language
    with headline:
        numbers, chart = st.columns([1.4, 1])
        h1, h2 = numbers.columns(2)
        h1.metric(t("Sessions per GPU ({attention} attention)", attention=attention_label), num(format_sessions(result.sessions_per_gpu)),
                  help=note)
        h2.metric(t("Sessions per replica ({attention} attention)", attention=attention_label), num(f"{result.sessions_per_replica:,}"),
                  help=t("{gpus} per replica.", gpus=tn("{n} GPU", "{n} GPUs", inputs.gpus_per_replica,
                                                       n=f"{inputs.gpus_per_replica:,}")) + " " + note)
        h3, h4 = numbers.columns(2)
        h3.metric(t("Request rate per GPU"), t("undefined (no output tokens)") if result.request_rate_per_s is None
                  else num(f"{format_figure(result.request_rate_per_s, 3)} /s"), help=t("Limited by {limit}.", limit=t(result.request_rate_limit)))
        h4.metric(t("Usable KV per GPU") + (t(" (measured)") if result.usable_kv_source == "measured" else "")
                  + num(f" ({format_figure(to_gib(max(result.usable_kv_bytes, 0)), 3)} GiB)"),
                  num(f"{format_figure(to_gb(max(result.usable_kv_bytes, 0)), 3)} GB"),
                  help=num(format_bytes(max(result.usable_kv_bytes, 0))) + ": " + t("HBM x utilization - weights - reserve."))
        numbers.metric(t("KV per session in HBM"), num(format_bytes(result.per_session_bytes)),
                       help=t("Per GPU: the uncached tail plus output tokens")
                            + (t(" plus window state") if inputs.state_in_hbm and result.state_bytes_per_session else "")
                            + t("; the shared prefix is stored once."))
        if result.sessions_note:  # which figure the headline is (engine admission or steady state), said once
            numbers.caption(planner_message(result.sessions_note))
        with chart:
            show_chart(plan_figure(memory_inputs(inputs), result.sessions_per_gpu, result.per_session_bytes,
                              model.max_context_tokens, language(), config_key, config_model), key="plan_chart")
        o = result.other_parallelism
        if o is not None:  # the other attention parallelism holds a different count: say so and how to get it
            st.info(num(t("Under {attention} attention this plan holds {sessions} per GPU ({per_replica} per "
                          "replica): {how}.", attention=o.attention_parallelism.upper(),
                          sessions=tn("{n} session", "{n} sessions", o.sessions_per_gpu,
                                      n=format_sessions(o.sessions_per_gpu)),
                          per_replica=f"{o.sessions_per_replica:,}", how=planner_message(o.how))))
        if result.launch_flags is not None:
            st.caption(t("Launch flags that realise this plan ({engine}; MODEL is your checkpoint):",
                         engine=ENGINE_WORDS[result.launch_flags.engine]))
            st.code(result.launch_flags.text(multiline=True), language="bash")
            for flag_note in result.launch_flags.notes:
                st.caption(planner_message(flag_note))
        else:
            st.caption(t("Choose a serving engine (in the parallelism and memory assumptions) for the launch flags that "
                         "realise this plan."))

    with details:
        context_kv = model.estimate(inputs.context_tokens, priced_format, result.tensor_parallel_size,
                                    inputs.pipeline_parallel_size)
        st.subheader(t("Details"))
        st.caption(t("Assumes") + " " + note[0].lower() + note[1:])  # the planner's own sentence
        m0, m1 = st.columns(2)  # two per row: "0.89 GB (0.829 GiB)" must never be cut short (3 per row was, at 1280 px)
        m2, m3 = st.columns(2)
        m0.metric(num(t("KV per GPU at {tokens} tokens", tokens=f"{inputs.context_tokens:,}"))
                  + (t(" (measured)") if result.kv_source == "measured" else ""), num(format_bytes(context_kv.kv_bytes)))
        m1.metric(t("KV per session with output (no sharing)"), num(format_bytes(result.session_kv_bytes)))
        m2.metric(num(t("Shared prefix (stored once): {tokens} tokens", tokens=f"{result.prefix_tokens:,}")),
                  num(format_bytes(result.shared_prefix_bytes)))
        m3.metric(t("Usable KV per GPU") + (t(" (measured)") if result.usable_kv_source == "measured" else ""),
                  num(format_bytes(max(result.usable_kv_bytes, 0))))
        st.caption(num(
            t("Per session in HBM: {bytes} (uncached tail of {tail} + {output}",
              bytes=format_bytes(result.per_session_bytes),
              tail=tn("{n} token", "{n} tokens", result.tail_tokens, n=f"{result.tail_tokens:,}"),
              output=tn("{n} output token", "{n} output tokens", inputs.output_tokens, n=f"{inputs.output_tokens:,}"))
            + (t(" + window state {bytes}", bytes=format_bytes(result.state_bytes_per_session))
               if inputs.state_in_hbm and result.state_bytes_per_session else "")
            + t("). KV bytes per token: {bpt} B. Weights per GPU: {weights}. HBM: {hbm} ({source}). Rate limited by {limit}.",
                bpt=f"{result.kv_bytes_per_token:,.6g}", weights=format_bytes(result.weights_bytes_per_gpu),
                hbm=format_bytes(result.hbm_bytes), source=t(result.hbm_source), limit=t(result.request_rate_limit))
        ))
        if result.state_bytes_per_session and not inputs.state_in_hbm:
            st.caption(num(t("Window state in host RAM: {each} per session, {total} for {sessions}.",
                             each=format_bytes(result.state_bytes_per_session), total=format_bytes(result.host_state_bytes),
                             sessions=tn("{n} session", "{n} sessions", result.sessions_per_domain,
                                         n=f"{result.sessions_per_domain:,}"))))

        n1, n2 = st.columns(2)  # two per row: the labels fit at 1280 px in every language
        n3, n4 = st.columns(2)
        n5, _ = st.columns(2)
        n1.metric(t("Miss probability (window state expired)"), num(format_figure(result.miss_probability, 3)),
                  help=num(t("P(pause > TTL), {distribution} pauses of mean {pause}, TTL {ttl}",
                             distribution=t(inputs.pause_distribution), pause=format_duration(inputs.pause_mean_s),
                             ttl=format_duration(inputs.ttl_s))))
        n2.metric(t("Replay per turn"), num(format_duration(result.replay_seconds_per_turn)),
                  help=num(t("{expected} tokens expected ({per_miss} per miss) at {rate} tokens/s",
                             expected=format_figure(result.replay_tokens_per_turn, 3), per_miss=f"{result.replay_window_tokens:,}",
                             rate=f"{inputs.prefill_tokens_per_s:,.0f}")))
        n3.metric(t("Time to first token (resumed turn)"), num(format_duration(result.ttft_s)),
                  help=num(t("prefill of the {tokens} prompt tokens the cache misses (hit rate {hit}) + restore (state "
                             "reload or replay, parked tail) + one decode step",
                             tokens=f"{result.prompt_prefill_tokens:,}", hit=f"{inputs.hit_rate:.2f}")))
        n4.metric(t("Parked session: reload from host RAM"), num(format_duration(result.reload_from_host_s)),
                  help=num(t("{bytes} over {link}", bytes=format_bytes(result.parked_session_bytes), link=result.host_link_id)))
        n5.metric(t("Parked session: recompute"), num(format_duration(result.recompute_s)),
                  help=num(t("{tokens} tokens at {rate} tokens/s", tokens=f"{result.tail_tokens + inputs.output_tokens:,}", rate=f"{inputs.prefill_tokens_per_s:,.0f}")))
        if result.tiers is not None:
            tiers = result.tiers
            st.caption(num(t(
                "Bytes per tier for {sessions} ({running} running): HBM {hbm} · host RAM {host} of {host_total} · SSD {ssd} "
                "of {ssd_total} · evicted {evicted} · total {total}. Parked session back from SSD: {reload} ({link}); fastest "
                "recovery: {fastest}.",
                sessions=tn("{n} session", "{n} sessions", int(tiers.sessions), n=f"{tiers.sessions:,}"),
                running=f"{tiers.active_sessions:,}", hbm=format_bytes(tiers.hbm_bytes), host=format_bytes(tiers.host_ram_bytes),
                host_total=format_bytes(result.host_ram_bytes_per_gpu), ssd=format_bytes(tiers.ssd_bytes),
                ssd_total=format_bytes(result.ssd_bytes_per_gpu), evicted=format_bytes(tiers.evicted_bytes),
                total=format_bytes(tiers.total_bytes), reload=format_duration(result.reload_from_ssd_s), link=result.ssd_link_id,
                fastest=t(result.fastest_recovery))))
            if result.overflow_message:
                (st.warning if result.overflow_action in ("reject", "evict") else st.info)(
                    escape_markdown(planner_message(result.overflow_message), keep="_"))
    shown_plan.update(inputs=inputs, result=result)  # what the download buttons write
    render_share_link_in(share_slot)
    return model, priced_format, inputs


with answer_box:  # the fragment's own place (its widgets drawn in its body, not into another container)
    answered = _answer(share_link_slot())
if answered is not None:  # else an unexpected error, already shown
    model, priced_format, inputs = answered
    with kv_box:
        show_chart(
            kv_figure(model, priced_format, inputs.context_tokens,
                      max(model.max_context_tokens or 1_000_000, inputs.context_tokens), language()),
            key="plan_kv_chart",
        )
    with left:
        st.subheader(t("KV cache by context (one sequence)"))
        table = context_table(model, kv_format=priced_format)
        show_table(table.rename(columns={"context_tokens": t("Context (tokens)"), "kv_bytes": t("KV (B)"),
                                         "kv_gb": t("KV (GB)"), "kv_gib": t("KV (GiB)"),
                                         "state_bytes": t("State outside the pool (B)")}),
                   hide_index=True, column_config={t("KV (B)"): st.column_config.NumberColumn(format="localized"),
                                                   t("Context (tokens)"): st.column_config.NumberColumn(format="localized"),
                                                   t("State outside the pool (B)"):
                                                       st.column_config.NumberColumn(format="localized")})
    with right:
        st.caption(t("Source: {source}", source=md(planner_message(model.source))))
        for note in (model.notes if not model.id.startswith(CONFIG_MODEL_PREFIX) else ()):  # a config's: above
            st.caption(escape_markdown(planner_message(note), keep="_"))
