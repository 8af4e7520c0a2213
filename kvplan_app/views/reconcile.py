"""Reconcile: paste or upload a vLLM or SGLang start-up log; see the engine's figures beside kvplan's.

Logs are user input: size-capped (``planner.engines.logs.MAX_LOG_BYTES``), read
as text, rendered in dataframes and code blocks (never as Markdown or HTML).
Widgets use ``reconcile_`` keys; the arithmetic is in ``planner.engines.reconcile``.
"""

from __future__ import annotations

from importlib import resources

import pandas as pd
import streamlit as st

from planner.catalog.entries import models
from planner.engines.logs import MAX_LOG_BYTES, parse_engine_log
from planner.errors import PlanInputError
from planner.hf.config import MAX_CONFIG_BYTES, model_from_config, parse_config_text
from planner.engines.reconcile import NO_MODEL, pair_summary, reconcile
from kvplan_app.uploads import file_uploader
from kvplan_app.render import show_table
from kvplan_app.i18n import num, planner_message, t, tn
from kvplan_app.markdown import escape_markdown

FROM_LOG = "(the model the log names)"
EXAMPLE = ("vllm-21348-qwen3-235b-a22b-tp4.txt", "sglang-21348-qwen3-235b-a22b-tp4.txt")


def _example(name: str) -> str:
    return resources.files("planner.data.logs").joinpath(name).read_text(encoding="utf-8")


def _load_example() -> None:
    st.session_state["reconcile_log_a"], st.session_state["reconcile_log_b"] = (_example(n) for n in EXAMPLE)


st.title(t("Reconcile an engine log"))
st.caption(t("Paste what vLLM or SGLang printed at start-up. kvplan reads the KV-cache lines as printed, puts its own "
             "prediction for the same settings beside them (bytes per token per GPU, GB = 10^9 B and GiB = 2^30 B) "
             "and names the cause of each difference. Lines it cannot read are listed, never guessed."))
st.button(t("Load the example: Qwen3-235B-A22B at TP 4, vLLM vs SGLang (https://github.com/vllm-project/vllm/issues/21348)"),
          on_click=_load_example, key="reconcile_example")

c1, c2 = st.columns(2)
texts = []
for col, key, label in ((c1, "a", t("Log 1")), (c2, "b", t("Log 2 (optional, e.g. the other engine)"))):
    with col:
        up = file_uploader(st, t("{log}: upload", log=label), key=f"reconcile_file_{key}")
        text = st.text_area(t("{log}: paste", log=label), key=f"reconcile_log_{key}", height=200,
                            max_chars=MAX_LOG_BYTES)
        if up is not None:
            data = up.getvalue()
            if len(data) > MAX_LOG_BYTES:
                st.error(escape_markdown(up.name) + ": " + num(t("over {limit} bytes; upload the start-up part",
                                                                limit=f"{MAX_LOG_BYTES:,}")))
                data = b""
            text = data.decode("utf-8", errors="replace") or text
        texts.append(text)

m1, m2, m4, m3 = st.columns([2, 1, 1, 1])
model_ids = [FROM_LOG, *models()]
model_id = m1.selectbox(t("Model"), model_ids, key="reconcile_model",
                        format_func=lambda m: t(m) if m == FROM_LOG else models()[m].name)
tp = m2.number_input(t("TP size (0 = from the log, else 1)"), min_value=0, max_value=1024, value=0, step=1,
                     key="reconcile_tp")
pp = m4.number_input(t("PP size (0 = from the log, else 1)"), min_value=0, max_value=1024, value=0, step=1,
                     key="reconcile_pp")
kv_format = m3.selectbox(t("KV format"), ["from the log", "native", "bf16", "fp16", "fp8", "fp8-e5m2"],
                         key="reconcile_kv_format",
                         format_func=lambda f: t(f) if f in ("from the log", "native") else f)

chosen = None if model_id == FROM_LOG else models()[model_id]
config_up = file_uploader(st, t("Or a model config.json (replaces the model above)"), key="reconcile_config_file")
if config_up is not None:
    try:
        data = config_up.getvalue()[: MAX_CONFIG_BYTES + 1]  # parse_config_text refuses more, naming the limit
        chosen = model_from_config(parse_config_text(data, config_up.name), name=config_up.name,
                                   source=f"imported: {config_up.name}")
    except PlanInputError as exc:
        st.error(t("This config cannot be read: {error}. The model above is used.",
                   error=escape_markdown(planner_message(exc), keep="_")))

results = []
for i, text in enumerate(texts):
    if not text or not text.strip():
        continue
    try:
        log = parse_engine_log(text)
        rec = reconcile(log, chosen, tp=int(tp) or None, pp=int(pp) or None,
                        kv_format=None if kv_format == "from the log" else kv_format)
    except PlanInputError as exc:
        st.error(t("Log {n}", n=i + 1) + ": " + escape_markdown(planner_message(exc), keep="_"))
        continue
    results.append((i + 1, rec))

if not any(text and text.strip() for text in texts):
    st.info(t("Paste a log above, or load the example."))
if len(results) == 2:
    summary = pair_summary(results[0][1], results[1][1])
    if summary:
        st.success(escape_markdown(planner_message(summary), keep="_"))

for n, rec in results:
    st.subheader(t("Log {n}", n=n) + ": " + ("vLLM" if rec.engine == "vllm" else "SGLang"))
    head = [(s.name, f"{'—' if s.value is None else s.value} ({planner_message(s.source)})") for s in rec.settings]
    if rec.kv_bytes_per_token_per_gpu is not None:
        head.append((t("kvplan: bytes per token per GPU"), num(f"{rec.kv_bytes_per_token_per_gpu:,} B")))
    # a static table: a long model name (org/model-size-variant) wraps at 1280 px instead of being cut
    show_table(pd.DataFrame(head, columns=[t("Setting"), t("Value")]), hide_index=True, static=True)
    rows = pd.DataFrame([tuple(planner_message(c) if isinstance(c, str) else c
                               for c in (r.quantity, r.engine, r.kvplan, r.status, r.cause)) for r in rec.rows],
                        columns=[t("Quantity (per GPU)"), t("Engine printed"), "kvplan", t("Status"), t("Cause")])
    show_table(rows.astype(object).where(rows.notna(), "—"), hide_index=True, static=True)  # causes wrap, none cut
    for cause in rec.causes:
        st.markdown("- " + escape_markdown(planner_message(cause), keep="_"))
    for why in rec.refusals:
        st.warning(t("Not computed: ") + escape_markdown(planner_message(why), keep="_")
                   + (" " + t("Choose it under 'Model' above, or upload its config.json.") if why == NO_MODEL else ""))
    if rec.unread:
        with st.expander(num(tn("1 line mentions KV or memory but was not read",
                                "{n} lines mention KV or memory but were not read", rec.num_unread,
                                n=f"{rec.num_unread:,}"))):
            st.code("\n".join(f"{no}: {text}" for no, text in rec.unread), language=None)
