"""Model page: a model's KV accounting, group by group, theory next to vLLM, capacity for a KV budget.

Thin: every figure comes from ``planner`` (models, engine, config_import);
this page gathers inputs, keeps the last valid model in ``st.session_state``
and renders. Widget keys start with ``model_``; link keys with ``m_``.
"""

import json

import streamlit as st

from planner.catalog.entries import GPUS, UPLOADED_PREFIX, get_model, models, session_models
from planner.hf.checkpoint import config_from_files
from planner.hf.config import MAX_CONFIG_BYTES, model_from_config, pattern_legend, report_rows
from planner.hf.weights import checkpoint_weights
from planner.engines.capacity import (
    BUDGET_MOVES,
    DEFAULT_BLOCK_SIZE,
    DEFAULT_MAX_NUM_BATCHED_TOKENS,
    VLLM_SOURCE,
    VLLMSettings,
    engine_frame,
    theory_vs_engine,
    vllm_capacity,
    vllm_max_model_len,
)
from planner.errors import PlanInputError
from planner.files.export import CSV_MIME, to_csv_bytes
from planner.kv.formats import FORMATS
from planner.messages import Message
from planner.kv.models import NATIVE, breakdown_frame, coefficient_check, how_computed
from planner.plan import plan
from planner.units import GiB, format_bytes, gib_to_bytes, parse_tokens
from kvplan_app.model_choices import model_label
from kvplan_app.uploads import MAX_UPLOADED_MODELS, UPLOADED_MODELS, file_uploader, uploaded_model_id
from kvplan_app.render import number_box, show_table
from kvplan_app.i18n import group_names_in_words, num, planner_message, t, tn, token_text, words
from kvplan_app.link_models import ModelLink
from kvplan_app.markdown import escape_markdown, file_name
from kvplan_app.notices import show_link_warnings
from kvplan_app.state import current_inputs, page_link, set_page_link, update_inputs
IMPORTED = "__imported__"

# This page's own KV budget per GPU: an example figure to replace with the engine's (vLLM logs it as
# "Available KV cache memory").
OWN_KV_BUDGET_GIB = 40.0
# This page's own context for a model whose maximum context is not known.
OWN_CONTEXT_TOKENS = 128_000


def _own_defaults(model) -> dict:
    """This page's own inputs for ``model``, owing nothing to the Plan page: native KV, TP 1, PP 1, the model's
    maximum context (else :data:`OWN_CONTEXT_TOKENS`), a KV budget of :data:`OWN_KV_BUDGET_GIB` per GPU."""
    return {"model_kv_format": NATIVE, "model_tp": 1, "model_pp": 1,
            "model_context": token_text(model.max_context_tokens or OWN_CONTEXT_TOKENS),
            "model_kv_budget_gib": OWN_KV_BUDGET_GIB}


def _use_own_defaults() -> None:
    """The reset button: this page's own inputs for the model chosen now."""
    st.session_state.update(_own_defaults(st.session_state.get("model_current") or get_model(
        st.session_state["model_catalog_id"])))
    st.session_state["model_origin"] = None
    st.session_state[FROM_LINK] = False


FROM_LINK = "model_inputs_from_link"  # the share link set some of the inputs (model, format, TP, PP, context)


def _from_plan(inputs) -> dict:
    """This page's inputs from the shared plan: its model, KV format, GPUs per replica as TP, context, and the
    plan's usable KV per GPU as the KV budget (a TP the model's heads cannot take falls back to 1)."""
    out = {"model_kv_format": inputs.kv_format, "model_context": token_text(inputs.context_tokens), "model_tp": 1}
    if inputs.model_id in models():  # an imported config is not a catalog choice here
        out["model_catalog_id"] = inputs.model_id
    try:
        get_model(inputs.model_id).estimate(inputs.context_tokens, inputs.kv_format, inputs.gpus_per_replica, 1)
        out["model_tp"] = inputs.gpus_per_replica
    except PlanInputError:
        pass
    try:
        out["model_kv_budget_gib"] = round(max(plan(inputs).usable_kv_bytes, 0) / GiB, 2)
    except PlanInputError:
        out["model_kv_budget_gib"] = 40.0
    return out


def _engine_missing(exc: PlanInputError) -> str:
    """One sentence: why the engine figure is missing and which input gives it."""
    if exc.field == "max_model_len":
        return t("vLLM's figures need max_model_len: this model's maximum context is not known. Type it under "
                 "'Engine settings (vLLM view) and KV budget' above.")
    if exc.field == "engine" and isinstance(exc.allowed, Message) and "what" in exc.allowed.values:
        return t("No vLLM figure for this model: vLLM pages full, sliding, chunked and MLA attention, and this "
                 "model's KV is {what}. The theory figures above hold.", what=words(exc.allowed.values["what"]))
    return t("No vLLM figure: {error}.", error=planner_message(exc))


def _shown_report(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The import report's rows in the page's language: headers, ``how`` and ``note``; config keys and values as
    read, the report's own words (a derived field's name, "merged", "40 entries") translated."""
    return [{t("field"): words(r["field"]), t("value"): words(r["value"]), t("how"): t(r["how"]),
             t("note"): planner_message(r["note"])} for r in rows]


st.title(t("Model: KV accounting"))
st.caption(t("Every figure is per GPU unless marked per replica. GB = 10^9 B, GiB = 2^30 B."))

# ---------------------------------------------------------------------------
# First run: widget state from the link (invalid values keep defaults, with a warning)
# ---------------------------------------------------------------------------
if "model_link_read" not in st.session_state:
    st.session_state["model_link_read"] = True
    link = page_link("model")  # read by the codec (kvplan_app.links.ModelLink): refused values warned about there
    for name, widget in (("model_id", "model_catalog_id"), ("kv_format", "model_kv_format"), ("tp", "model_tp"),
                         ("pp", "model_pp")):
        if getattr(link, name) is not None:
            st.session_state[widget] = getattr(link, name)
            st.session_state[FROM_LINK] = True
    if link.context_tokens is not None:
        st.session_state["model_context"] = f"{link.context_tokens:,}"
        st.session_state[FROM_LINK] = True
show_link_warnings()

plan_inputs = current_inputs()
plan_seen = (plan_inputs.model_id, plan_inputs.kv_format, plan_inputs.gpus_per_replica, plan_inputs.context_tokens,
             plan_inputs.gpu_id, plan_inputs.hbm_gib)
from_plan = _from_plan(plan_inputs)
plan_origin = (plan_inputs.model_id, plan_inputs.gpu_id, plan_inputs.gpus_per_replica, plan_inputs.context_tokens,
               from_plan["model_tp"], from_plan["model_kv_budget_gib"])
if st.session_state.get("model_plan_seen") not in (None, plan_seen):  # the plan changed on another page: follow it
    st.session_state.update(from_plan)
    st.session_state["model_origin"] = plan_origin
    st.session_state[FROM_LINK] = False
if "model_plan_seen" not in st.session_state and "model_origin" not in st.session_state:
    st.session_state["model_origin"] = plan_origin  # first visit: the widgets below start from the plan
st.session_state["model_plan_seen"] = plan_seen
defaults = {
    "model_source": "Catalog",
    **from_plan,
    "model_pp": 1,
    "model_block_size": DEFAULT_BLOCK_SIZE,
    "model_max_num_batched_tokens": DEFAULT_MAX_NUM_BATCHED_TOKENS,
    "model_hybrid_manager": True,
    "model_max_model_len": "",
    "model_config_text": "",
}
for key, value in defaults.items():
    st.session_state.setdefault(key, value)

# ---------------------------------------------------------------------------
# The model: catalog or imported config (a bad config keeps the previous model)
# ---------------------------------------------------------------------------
source = st.radio(t("Model source"), ["Catalog", "Import config.json"], horizontal=True, key="model_source",
                  format_func=t)
model = st.session_state.get("model_current")
if source == "Catalog":
    model_id = st.selectbox(t("Model"), list(models()), key="model_catalog_id", format_func=lambda m: models()[m].name)
    model = get_model(model_id)
    st.session_state["model_current"] = model
else:
    c1, c2 = st.columns(2)
    uploads = file_uploader(c1, t("Upload a config.json (with hf_quant_config.json if the checkpoint has one)"),
                            key="model_config_file", accept_multiple_files=True)  # the uploader says the real limit
    pasted = c2.text_area(t("…or paste it"), key="model_config_text", height=150,
                          placeholder='{"num_hidden_layers": 32, "num_attention_heads": 32, ...}')
    ignore_text = st.text_input(t("Accept config fields kvplan does not model (comma-separated)"),
                                key="model_ignore_fields", placeholder="cross_attention_layers",
                                help=t("A config field whose name speaks of the KV layout and that kvplan does not "
                                       "read is refused; name it here to accept it. The result then says so."))
    ignore_fields = tuple(f.strip() for f in ignore_text.split(",") if f.strip())[:20]
    files = [(u.name, u.getvalue()[: MAX_CONFIG_BYTES + 1]) for u in (uploads or [])]
    if not files and pasted.strip():
        files = [(t("pasted config.json"), pasted)]  # the name a pasted config goes by, in the page's language
    if files:
        try:
            config, name = config_from_files(files)
            # the id: a hash of what was read (config with its sidecars, the fields accepted), never shared by two
            imported = model_from_config(config, name=name, source=f"imported: {name}", ignore_fields=ignore_fields,
                                         model_id=uploaded_model_id(json.dumps([config, ignore_fields], sort_keys=True,
                                                                               default=str)))
            st.session_state["model_current"] = imported
            st.session_state["model_import_report"] = imported.config_report
            model = imported
        except PlanInputError as exc:
            shown = model.name if model is not None else t("none yet")
            st.error(escape_markdown(t("This config cannot be imported: {error}. Keeping the previous model ({model}).",
                                       error=planner_message(exc), model=shown)))
    else:
        st.info(t("Upload or paste a Hugging Face config.json. Until then the previous model stays."))
if model is None:
    model = get_model(st.session_state["model_catalog_id"])
    st.session_state["model_current"] = model


def _use_on_plan(imported) -> None:
    """The button's callback: keep the imported model for this session and make it the plan's model, with the
    weights typed beside it (a config.json has no parameter count)."""
    kept = {k: v for k, v in st.session_state.get(UPLOADED_MODELS, {}).items() if k != imported.id}
    kept[imported.id] = imported
    st.session_state[UPLOADED_MODELS] = dict(list(kept.items())[-MAX_UPLOADED_MODELS:])
    typed = st.session_state.get("model_weights_gib")
    weights = None if typed is None else float(typed)  # empty: the plan derives them from the config
    try:
        with session_models(st.session_state[UPLOADED_MODELS]):
            update_inputs(model_id=imported.id, weights_gib=weights)
        st.session_state["model_sent"] = imported.id
    except PlanInputError as exc:
        st.session_state["model_sent_error"] = planner_message(exc)


if source != "Catalog" and model.id.startswith(UPLOADED_PREFIX):
    with st.container(border=True):
        st.markdown(t("**Use {name} on the Plan, Frontier and Recommend pages**", name=escape_markdown(model.name)))
        u1, u2 = st.columns([1, 1], vertical_alignment="bottom")
        derived_gib = None  # the checkpoint's weights, class by class, as the plan derives them when none is typed
        if model.checkpoint_config is not None:
            try:
                derived_gib = checkpoint_weights(model.checkpoint_config).weight_bytes / GiB
            except PlanInputError:
                pass  # not derivable (the plan would name the missing field): the user types them
        number_box(u1, t("Weights of one replica (GiB)"), min_value=0.0, max_value=1_000_000.0, step=1.0,
                        format="%g", key="model_weights_gib", value=None,
                        placeholder=num(t("from the config: {gib} GiB", gib=f"{derived_gib:,.2f}"))
                        if derived_gib is not None else t("needed: not derivable from this config"),
                        help=t("Empty: the checkpoint's weights derived from the config, where they can be; else type "
                               "the size of the checkpoint's weights (e.g. the safetensors files' total) so the plan "
                               "can subtract them."))
        typed = st.session_state.get("model_weights_gib")
        u2.button(t("Use on the plan pages"), key="model_use_on_plan", on_click=_use_on_plan, args=(model,),
                  disabled=(derived_gib is None and not typed))
        if st.session_state.get("model_sent") == model.id:
            st.success(t("The plan now uses {name} (its choice reads \"uploaded: {name}\"); its figures come from the "
                         "same planner functions as a catalog model's.", name=escape_markdown(model.name)))
        if error := st.session_state.pop("model_sent_error", None):
            st.error(escape_markdown(error))
        st.caption(t("A share link cannot carry an uploaded config: opened elsewhere, its model is refused until the "
                     "same config.json is uploaded there."))

# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------
origin = st.session_state.get("model_origin")
if origin is not None:  # the inputs below came from the Plan page: say so, and offer this page's own
    o_model, o_gpu, o_gpus, o_context, o_tp, o_budget = origin
    o_gpu_name = GPUS[o_gpu].name if o_gpu in GPUS else t("a custom accelerator")
    if st.session_state.get(FROM_LINK):  # the link's TP and context, the plan's budget: say which is which
        note = t("These inputs start from the share link (TP, PP, KV format, context) and, for the KV budget, from "
                 "the Plan page: {gib} GiB per GPU, the usable KV of {plan_model} on {gpu}.",
                 gib=num(f"{o_budget:g}"), plan_model=model_label(o_model), gpu=o_gpu_name)
    else:
        note = t("These inputs start from the Plan page: TP {tp} (its GPUs per replica: {gpus}), context {tokens} "
                 "tokens, and a KV budget of {gib} GiB per GPU, the usable KV of {plan_model} on {gpu}.", tp=o_tp,
                 gpus=o_gpus, tokens=num(f"{o_context:,}"), gib=num(f"{o_budget:g}"), plan_model=model_label(o_model),
                 gpu=o_gpu_name)  # numbers localized one by one: a model name ("Llama 3.1 70B") is not a number
    if o_model != model.id:
        note += " " + t("That budget is what {plan_model}'s weights leave, not {model}'s.",
                        plan_model=model_label(o_model), model=model.name)
    st.info(escape_markdown(note))
    st.button(t("Use this page's own defaults"), key="model_own_defaults", on_click=_use_own_defaults,
              help=num(t("Native KV format, TP 1, PP 1, the model's maximum context (else {tokens} tokens) and a KV "
                         "budget of {gib} GiB per GPU (an example: type your engine's figure).",
                         tokens=f"{OWN_CONTEXT_TOKENS:,}", gib=f"{OWN_KV_BUDGET_GIB:g}")))
else:
    st.caption(num(t("Started from this page's own defaults: native KV format, TP 1, PP 1, the model's maximum context "
                     "(else {tokens} tokens) and a KV budget of {gib} GiB per GPU.",
                     tokens=f"{OWN_CONTEXT_TOKENS:,}", gib=f"{OWN_KV_BUDGET_GIB:g}")))
i1, i2, i3, i4 = st.columns([1.3, 1, 1, 1.3])
kv_format = i1.selectbox(t("KV format"), [NATIVE, *FORMATS], key="model_kv_format",
                         format_func=lambda f: t("native") if f == NATIVE else FORMATS[f].id,
                         help=" · ".join(f"{f.id}: {planner_message(f.label)}" for f in FORMATS.values()))
i1.caption(t("native = {label}", label=planner_message(model.native_format_label)))
tp = i2.number_input(t("Tensor parallel (TP)"), min_value=1, max_value=1024, step=1, key="model_tp")
pp = i3.number_input(t("Pipeline parallel (PP)"), min_value=1, max_value=1024, step=1, key="model_pp")
context_text = i4.text_input(t("Context tokens (e.g. 128k, 128K, 1m)"), key="model_context")

needs_max_len = model.max_context_tokens is None and not str(st.session_state.get("model_max_model_len", "")).strip()
with st.expander(t("Engine settings (vLLM view) and KV budget"), expanded=needs_max_len):
    e1, e2, e3 = st.columns(3)
    block_size = e1.number_input(t("Block size (tokens)"), min_value=1, max_value=4096, step=1, key="model_block_size")
    max_batched = e2.number_input(t("max_num_batched_tokens"), min_value=1, max_value=10**8, step=256,
                                  key="model_max_num_batched_tokens")
    hybrid = e3.checkbox(t("Hybrid KV cache manager"), key="model_hybrid_manager",
                         help=t("Hybrid KV cache manager on (off e.g. with a KV connector)"))
    b1, b2 = st.columns(2)
    budget_gib = number_box(b1, t("Available KV memory per GPU (GiB)"), min_value=0.0, max_value=1_000_000.0,
                                 step=1.0, format="%g", key="model_kv_budget_gib")
    max_len_text = b2.text_input(t("max_model_len (blank: the model's maximum context)"), key="model_max_model_len",
                                 placeholder=t("needed: this model's maximum context is not known")
                                 if model.max_context_tokens is None else token_text(model.max_context_tokens))

try:
    context = parse_tokens(context_text, minimum=1, maximum=10**9)
    est = model.estimate(context, kv_format, int(tp), int(pp))
    st.session_state["model_last_inputs"] = (context, kv_format, int(tp), int(pp))
except PlanInputError as exc:
    st.error(escape_markdown(planner_message(exc) + ". " + t("Showing the last valid inputs.")))
    context, kv_format, tp, pp = st.session_state.get("model_last_inputs", (1_000_000, NATIVE, 1, 1))
    for context, kv_format, tp, pp in ((context, kv_format, tp, pp), (1_000_000, NATIVE, 1, 1), (1, NATIVE, 1, 1)):
        try:  # the last inputs, else the defaults, else one token (a model too large for a million tokens)
            est = model.estimate(context, kv_format, tp, pp)
            break
        except PlanInputError:
            continue
tp, pp = est.tp, est.pp
# The link carries the page's inputs; an imported config cannot travel in a link, so its model key is dropped.
set_page_link("model", ModelLink(model_id=model.id if source == "Catalog" else None, kv_format=kv_format, tp=tp,
                                  pp=pp, context_tokens=context))

# ---------------------------------------------------------------------------
# Totals
# ---------------------------------------------------------------------------
st.subheader(escape_markdown(t("{model} at {tokens} tokens", model=model.name, tokens=num(f"{context:,}"))),
             anchor=False)  # no anchor made from an imported name
for note in model.notes if source != "Catalog" else ():
    st.warning(escape_markdown(planner_message(note), keep="_"))  # an accepted --ignore-field, beside the figures
if model.max_context_tokens is not None and context > model.max_context_tokens:
    st.warning(num(t("{tokens} tokens is more than this model's maximum context ({max}): the figures extrapolate its "
                     "layout.", tokens=f"{context:,}", max=f"{model.max_context_tokens:,}")))
m1, m2 = st.columns(2)
m1.metric(t("KV per GPU (pool)"), num(format_bytes(est.kv_bytes)))
m2.metric(t("KV per replica ({gpus})", gpus=tn("{n} GPU", "{n} GPUs", tp * pp, n=f"{tp * pp:,}")),
          num(format_bytes(est.kv_bytes_per_replica)))
m3, m4 = st.columns(2)
m3.metric(t("KV bytes per token per GPU"), num(f"{est.kv_bytes_per_token:,.6g} B"))
m4.metric(t("State per session"), num(format_bytes(est.pool_state_bytes + est.state_bytes)))
st.caption(num(t("{bytes} B per GPU (TP {tp}, PP {pp}: one GPU of the largest pipeline stage); basis: {basis}. "
                 "Per replica counts every layer once per TP rank (replicated heads and latents included).",
                 bytes=f"{est.kv_bytes:,}", tp=tp, pp=pp, basis=t(est.basis))
              + " " + (t("State per session: {pool_state} B in the pool (Mamba / linear attention, constant in length, "
                         "included above), {state} B outside it.", pool_state=f"{est.pool_state_bytes:,}",
                         state=f"{est.state_bytes:,}") if est.pool_state_bytes or est.state_bytes
                       else t("No per-session state outside the KV (no Mamba or linear-attention layers)."))))
if model.layer_pattern:
    st.caption(t("Layers: `{pattern}` ({legend})", pattern=model.layer_pattern.replace("`", "'"),  # a code span
                 legend=planner_message(pattern_legend(model.layer_pattern))))
if est.basis == "reported coefficient":
    chk = coefficient_check(model)
    verdict = t("explains it") if chk.matches else t("does not explain it (the shipped format differs)")
    st.caption(t("Growing KV priced by the published coefficient ({bytes} B/token, the source of truth); the "
                 "architecture below {verdict}: {explanation}.", bytes=num(f"{model.reported_kv_bytes_per_token:,.6g}"),
                 verdict=verdict, explanation=planner_message(group_names_in_words(chk.explanation))))

# ---------------------------------------------------------------------------
# Breakdown
# ---------------------------------------------------------------------------
st.subheader(t("Per-group breakdown (per GPU)"))
table = breakdown_frame(model, context, kv_format, tp, pp)
headers = {
    "group": t("Group"), "layers": t("Layers (model)"), "layers_per_gpu": t("Layers per GPU"),
    "kv_heads_per_gpu": t("KV heads per GPU"), "channels": t("Head dim / channels"), "kv_format": t("Format"),
    "entry_bytes": t("Entry (B)"), "tokens_per_entry": t("Tokens per entry"),
    "bytes_per_token": t("B per token (while growing)"), "entries": num(t("Entries at {tokens}", tokens=f"{context:,}")),
    "bytes": num(t("Bytes at {tokens}", tokens=f"{context:,}")), "growth": t("Capped or growing"),
    "in_pool": t("In the HBM pool"), "replicated_on_tp": t("Replicated on TP")}
# Three tables of a few columns each (one would scroll sideways at 1280 px); a missing value (no KV heads in a Mamba
# layer) shows as a dash, never None. The layers of each group are listed below them.
for title, part, key in (
        (t("Layout"), ["group", "layers", "layers_per_gpu", "kv_heads_per_gpu", "channels", "kv_format"],
         "model_breakdown"),
        (t("Per token"), ["group", "entry_bytes", "tokens_per_entry", "bytes_per_token", "growth"],
         "model_breakdown_token"),
        (num(t("At {tokens} tokens", tokens=f"{context:,}")), ["group", "entries", "bytes", "in_pool", "replicated_on_tp"],
         "model_breakdown_context")):
    st.markdown("**" + escape_markdown(title) + "**")
    shown_part = table[part].assign(**{c: table[c].map(words) for c in ("group", "growth") if c in part})
    state = table["role"] == "state"  # a per-session state: its bytes are per sequence, not per token
    if "bytes_per_token" in part:
        shown_part.loc[state, "bytes_per_token"] = None
    if "growth" in part:
        shown_part.loc[state, "growth"] = t("per session (constant)")
    counts = {headers[c]: st.column_config.NumberColumn(format="localized")  # 1,000,000 with separators
              for c in ("layers", "layers_per_gpu", "kv_heads_per_gpu", "entry_bytes", "tokens_per_entry",
                        "bytes_per_token", "entries", "bytes") if c in part}
    show_table(shown_part.rename(columns=headers), hide_index=True, key=key, placeholder="—", column_config=counts)
st.caption(t("Layers of each group: {groups}.", groups="; ".join(
    f"{words(g)}: {ids}" for g, ids in zip(table["group"], table["layer_ids"]))))
st.download_button(t("Download the breakdown (CSV)"), to_csv_bytes(table), mime=CSV_MIME, key="model_breakdown_csv",
                   file_name=file_name("kvplan-breakdown", model.id, context, suffix=".csv"),
                   help=t("Columns as docs/csv.md lists them in its section on the model breakdown (units in the names)."))

# ---------------------------------------------------------------------------
# Theory vs engine
# ---------------------------------------------------------------------------
st.subheader(t("Theory vs engine (vLLM), one sequence per GPU"))
max_len = None
try:
    if max_len_text.strip():
        max_len = parse_tokens(max_len_text, field="max_model_len", minimum=1, maximum=10**9)
    settings = VLLMSettings(block_size=int(block_size), max_num_batched_tokens=int(max_batched),
                            max_model_len=max_len,
                            hybrid_kv_cache_manager=bool(hybrid))
except PlanInputError as exc:
    st.error(escape_markdown(planner_message(exc) + ". " + t("Using vLLM's defaults.")))
    settings, max_len = VLLMSettings(), None
try:
    tve = theory_vs_engine(model, context, kv_format, tp, pp, settings)
    t1, t2 = st.columns(2)
    t1.metric(t("Theory (window-capped), per GPU"), num(format_bytes(tve.theory_bytes)))
    t2.metric(t("vLLM allocates, per GPU"), num(format_bytes(tve.engine_bytes)),
              delta=None if not tve.differs else num(f"{tve.engine_bytes - tve.theory_bytes:+,} B"), delta_color="off")
    if tve.differs:
        st.markdown(t("Why they differ:"))
    for reason in tve.reasons:
        st.caption("• " + escape_markdown(planner_message(group_names_in_words(reason)), keep="_"))
    if tve.types:
        engine_table = engine_frame(tve)
        headers = {"name": t("Group"), "kind": t("Kind"), "cap_tokens": t("Cap (tokens)"), "layers": t("Layers"),
                   "padding_layers": t("Padding"), "block_size": t("Block (tokens)"), "page_size_bytes": t("Page (B)"),
                   "blocks_per_layer": t("Blocks/layer"), "theory_bytes": t("Theory (B)"),
                   "engine_bytes": t("vLLM (B)"), "reason": t("Why")}
        # an st.table: eleven columns and a sentence per row wrap at 1280 px instead of scrolling out of view
        kinds = {"full": t("full attention"), "sliding": t("sliding window"), "chunked": t("chunked local attention"),
                 "mamba": t("Mamba state")}  # vLLM's page kinds, in words
        show_table(engine_table.assign(name=engine_table["name"].map(words),
                                       kind=engine_table["kind"].map(lambda k: kinds.get(k, k)), reason=[
            planner_message(group_names_in_words(kind.reason)) for kind in tve.types]).rename(columns=headers),
            hide_index=True, static=True)
except PlanInputError as exc:
    tve = None
    st.info(escape_markdown(_engine_missing(exc)))

# ---------------------------------------------------------------------------
# vLLM capacity for a KV budget
# ---------------------------------------------------------------------------
st.subheader(t("vLLM capacity for a KV budget (per GPU)"))
cap = None
try:
    budget = gib_to_bytes(float(budget_gib))
    cap = vllm_capacity(model, budget, max_len, kv_format, tp, pp, settings)
    fit = vllm_max_model_len(model, budget, kv_format, tp, pp, settings)
    c1, c2 = st.columns(2)
    c3, c4 = st.columns(2)
    c1.metric(t("KV blocks (num_gpu_blocks)"), num(f"{cap.num_blocks:,}"))
    c2.metric(t("GPU KV cache size"), num(t("{tokens} tokens", tokens=f"{cap.max_tokens:,}")))
    c3.metric(num(t("Maximum concurrency for {tokens} tokens per request", tokens=f"{cap.max_model_len:,}")),
              num(f"{cap.max_concurrency:,.2f}x"))
    c4.metric(t("Largest max_model_len for this budget"), num(t("{tokens} tokens", tokens=f"{fit.max_model_len:,}")))
    st.caption(t("Budget {bytes} per GPU.", bytes=num(format_bytes(cap.kv_budget_bytes))) + " "
               + planner_message(cap.note))
    if not cap.fits_one_request:
        st.warning(num(t("vLLM would refuse to start: one {tokens}-token request needs {bytes} of KV, more than the "
                         "budget.", tokens=f"{cap.max_model_len:,}", bytes=format_bytes(cap.needed_bytes))))
    st.caption(planner_message(BUDGET_MOVES))
except PlanInputError as exc:
    st.info(escape_markdown(_engine_missing(exc)))

# ---------------------------------------------------------------------------
# How this is computed, and sources
# ---------------------------------------------------------------------------
with st.expander(t("How this is computed")):
    for line in how_computed(model, context, kv_format, tp, pp):
        st.text(planner_message(group_names_in_words(line)))
    if tve is not None:
        st.text(num(t("Engine view: vLLM holds ceil(n / {block}) blocks per layer for full attention; a sliding window W "
                      "reserves cdiv(min(W - 1 + {batched}, max_model_len), {block}) + 1 blocks; a block of one layer "
                      "is block_size x entry bytes.", block=settings.block_size,
                      batched=f"{settings.max_num_batched_tokens:,}")))
        for kind in tve.types:
            st.text(num(t("{name}: ({layers} + {padding} padding) layers x {blocks} blocks x {page} B = {bytes} B",
                          name=words(kind.name), layers=kind.layers, padding=kind.padding_layers,
                          blocks=f"{kind.blocks_per_layer:,}", page=f"{kind.page_size_bytes:,}",
                          bytes=f"{kind.engine_bytes:,}")))
    if cap is not None:
        st.text(t("Capacity: {formula}.", formula=planner_message(cap.formula)))

with st.expander(t("Sources")):
    st.text(t("Model: {source}", source=planner_message(model.source)))
    for note in model.notes:
        st.text(planner_message(note))
    layout_formats = {g.kv_format.id: g.kv_format for g in model.layout(kv_format)}  # engine-internal ones too
    for fmt_id in sorted({g.kv_format for g in est.groups}):
        fmt = layout_formats.get(fmt_id) or FORMATS.get(fmt_id)
        st.text(t("Format {format}: {source}", format=fmt_id, source=fmt.source if fmt is not None else "—"))
    st.text(t("Engine view and capacity: {source}", source=planner_message(VLLM_SOURCE)))
    if model.config_report:
        # an st.table: its notes are sentences, wrapped rather than cut
        show_table(_shown_report(report_rows(model.config_report)), hide_index=True, static=True)

if source != "Catalog" and model.config_report:
    st.subheader(t("What the import read, derived, defaulted or ignored"))
    rows = report_rows(model.config_report)
    defaulted = [r["field"] for r in rows if r["how"] == "defaulted"]
    if defaulted:
        st.warning(escape_markdown(t("Defaulted (not in the config): {fields}. Check them before relying on the "
                                     "numbers.", fields=", ".join(defaulted))))
    show_table(_shown_report(rows), hide_index=True, key="model_import_report")
