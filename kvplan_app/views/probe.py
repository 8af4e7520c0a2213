"""Probe page: allocate the quantized KV pool on this server's GPU (or, by choice, its CPU) and
measure its real bytes, or read a ProbeResult JSON measured on another machine.

Thin: the probe, its validation and the measured plan come from ``planner.probe``
and ``planner.plan``; the plan's inputs are shared through ``kvplan_app.state``.
Widget keys start with ``probe_``.
"""

import importlib
from datetime import datetime, timezone

import streamlit as st

from planner.plan import format_sessions, plan, rebase
from planner.catalog.entries import models
from planner.errors import PlanInputError
from planner.kv.models import NATIVE
from planner.probe import (
    MAX_RESULT_FILE_BYTES,
    PROBE_FORMATS,
    ProbeBusyError,
    ProbeError,
    device_status,
    load_probe_result,
    plan_pool,
    run_probe,
)
from planner.probe.apply import formats_frame, groups_frame, measured_model
from planner.probe.layout import MAX_PROBE_TOKENS
from planner.probe.result import tokens_fit_text
from planner.units import GiB, format_bytes, parse_tokens
from kvplan_app.uploads import file_uploader
from kvplan_app.render import show_table
from kvplan_app.i18n import num, planner_message, t, token_text
from planner.messages import msg
from kvplan_app.jobs import JobError, JobsBusyError, check_probe_pool, run_job, session_owner
from kvplan_app.markdown import escape_markdown, md
from kvplan_app.notices import show_error, show_link_warnings
from kvplan_app.state import current_inputs, update_inputs

UI_TIME_LIMIT_S = 60.0
# A probe started from the page stops after this many seconds.

st.title(t("Live probe: the KV pool's real bytes"))
show_link_warnings()
last = current_inputs()


@st.cache_resource(show_spinner="Looking for torch and a GPU…")
def _status():
    return device_status()


def _check_again() -> None:
    """Look for torch again: a ``pip install`` into this server's environment is seen without a restart."""
    importlib.invalidate_caches()
    _status.clear()


status = _status()
if not status.torch:
    st.session_state["probe_torch_missing_seen"] = True
elif st.session_state.get("probe_torch_missing_seen") and "probe_torch_found_at" not in st.session_state:
    st.session_state["probe_torch_found_at"] = datetime.now(timezone.utc).strftime("%H:%M:%S UTC")
if "probe_torch_found_at" in st.session_state:
    st.success(t("torch {version} became available at {time}. Reload this page (F5) to start from a clean state; if "
                 "the probe then fails to import torch, restart the server (`kvplan serve`, or `streamlit run app.py`).",
                 version=status.torch_version, time=st.session_state["probe_torch_found_at"]))
if not status.torch:
    st.info(t("torch is not installed on this server, so the probe cannot run here. To run it here: "
              "`pip install 'kvplan[probe]'` in the server's environment, then press '{button}' "
              "(or restart the server if it is still not found). Or run `kvplan probe --model … --tokens … --json` "
              "on a GPU machine and upload its result below.", button=t("Check for torch again")))
    st.button(t("Check for torch again"), key="probe_recheck", on_click=_check_again)
elif not status.cuda:
    st.info(t("No GPU on this server: torch {version} sees no CUDA device. Upload a ProbeResult JSON measured on a "
              "GPU machine, or run the probe on this server's CPU (host memory), if you choose to.",
              version=status.torch_version))
else:
    st.success(t("GPU: {name} (torch {torch}, CUDA {cuda}).", name=status.gpu_name, torch=status.torch_version,
                 cuda=status.cuda_version))

run_tab, upload_tab = st.tabs([t("Run here"), t("Upload a result")])

with run_tab:
    if not status.torch:
        st.caption(t("Unavailable: torch is not installed here."))
    else:
        formats = [NATIVE, *PROBE_FORMATS]
        st.session_state.setdefault("probe_model_id", last.model_id)
        st.session_state.setdefault("probe_kv_format", last.kv_format if last.kv_format in formats else NATIVE)
        st.session_state.setdefault("probe_tokens", token_text(last.context_tokens))
        # No GPU: the probe runs on the CPU only after the user agrees; the button stays disabled until then.
        cpu_ok = st.checkbox(t("Yes, run on this server's CPU (it allocates host memory)"), key="probe_cpu_ok") \
            if not status.cuda else True
        with st.form("probe_form"):
            c1, c2, c3 = st.columns(3)
            model_id = c1.selectbox(t("Model"), list(models()), key="probe_model_id",
                                    format_func=lambda m: models()[m].name)
            kv_format = c2.selectbox(t("KV format"), formats, key="probe_kv_format",
                                     format_func=lambda f: t("native (as the model ships)") if f == NATIVE else f)
            tokens_text = c3.text_input(t("Tokens in the pool (e.g. 1m, 128k)"), key="probe_tokens")
            d1, d2, d3 = st.columns(3)
            devices = (["cuda"] if status.cuda else []) + ["cpu"]
            device = d1.radio(t("Device"), devices, key="probe_device", horizontal=True,
                              format_func=lambda d: f"GPU ({status.gpu_name})" if d == "cuda" else t("CPU (host memory)"))
            block_size = d2.number_input(t("Block size (tokens)"), min_value=1, max_value=4096, value=16, step=1,
                                         key="probe_block_size")
            fraction = d3.slider(t("Most of the free memory to use"), min_value=0.05, max_value=0.9, value=0.5,
                                 step=0.05, key="probe_max_fraction")
            submitted = st.form_submit_button(t("Run the probe"), type="primary", disabled=not cpu_ok,
                                              help=None if cpu_ok else t("Tick the box above to run on the CPU."))
        if submitted:
            if device == "cpu" and not cpu_ok:
                st.warning(t("Tick the box to run the probe on this server's CPU."))
            else:
                bar = st.progress(0.0, text="queued")
                try:
                    tokens = parse_tokens(tokens_text, field="tokens", maximum=MAX_PROBE_TOKENS)
                    layout = plan_pool(model_id, tokens, kv_format, int(block_size))  # refused before queueing
                    check_probe_pool(layout.pool_bytes, device)   # a CPU pool: at most a share of host memory
                    # in a worker process of the server's bounded pool (kvplan_app/jobs.py): its memory cap and
                    # time limit bound the probe, and this server's interpreter stays free for other sessions
                    result = run_job(run_probe, dict(
                        model_id=model_id, num_tokens=tokens, kv_format=kv_format, device=device,
                        block_size=int(block_size), max_fraction=float(fraction), time_limit_s=UI_TIME_LIMIT_S,
                        lock_timeout_s=0), with_progress=True, imports=("torch",), owner=session_owner(), on_update=lambda f, stage, queued: bar.progress(
                            min(1.0, max(0.0, f)), text=num(t("Jobs ahead in the queue: {ahead}", ahead=queued))
                            if queued else t(stage)))
                    st.session_state["probe_result"] = (result, t("measured here on {device}", device=result.device))
                except PlanInputError as exc:
                    show_error(exc)
                except (ProbeBusyError, JobsBusyError) as exc:
                    st.warning(escape_markdown(planner_message(exc.args[0] if exc.args else exc)))
                except (ProbeError, JobError) as exc:
                    st.error(escape_markdown(planner_message(exc.args[0] if exc.args else exc)))
                finally:
                    bar.empty()

with upload_tab:
    up = file_uploader(st, t("ProbeResult JSON (from `kvplan probe … --json`)"), key="probe_upload",
                       help=num(t("At most {limit} bytes; every figure is checked.", limit=f"{MAX_RESULT_FILE_BYTES:,}")))
    if up is not None and st.session_state.get("probe_upload_seen") != up.file_id:
        try:
            if up.size > MAX_RESULT_FILE_BYTES:
                raise PlanInputError("file", f"{up.size:,} bytes", msg("at most {limit:,} bytes", limit=MAX_RESULT_FILE_BYTES))
            uploaded = load_probe_result(up.getvalue())
        except PlanInputError as exc:
            st.session_state["probe_upload_error"] = t("{file} not loaded: {why}", file=up.name,
                                                        why=planner_message(exc))
        else:
            st.session_state["probe_result"] = (uploaded, t("uploaded: {file}", file=up.name))
            st.session_state.pop("probe_upload_error", None)
        st.session_state["probe_upload_seen"] = up.file_id
    if up is not None and st.session_state.get("probe_upload_error"):
        st.error(escape_markdown(st.session_state["probe_upload_error"]))


def _ratio_words(ratio: float) -> str:
    """Measured over predicted, in words: "same as the planner" or "1.02x the planner's"."""
    return t("same as the planner") if ratio == 1 else t("{ratio}x the planner's", ratio=num(f"{ratio:,.4g}"))


def show(result, source: str) -> None:
    """The probe's figures, its tables and the measured coefficient next to the plan."""
    st.subheader(num(t("{model}, {kv_format}, {tokens} tokens", model=models()[result.model_id].name,
                       kv_format=md(result.kv_format), tokens=f"{result.num_tokens:,}")), anchor=False)
    cuda = f", CUDA {result.cuda_version}" if result.cuda_version else ""
    st.caption(escape_markdown(t("{source} · {device}: {name} · torch {torch}{cuda} · {time} UTC · fill {fill} · block "
                                 "{block} tokens", source=source, device=result.device, name=result.device_name,
                                 torch=result.torch_version, cuda=cuda, time=f"{result.timestamp:%Y-%m-%d %H:%M}",
                                 fill=result.fill, block=result.block_size)))
    m1, m2 = st.columns(2)  # two per row: "17,456,896 tokens" is never cut at 1280 px
    m3, m4 = st.columns(2)
    m1.metric(t("Planner: bytes per token"), num(f"{result.predicted_bytes_per_token:,.6g} B"),
              help=num(t("{bytes} B for {tokens} tokens; whole blocks: {pool} B", bytes=f"{result.predicted_bytes:,}",
                         tokens=f"{result.num_tokens:,}", pool=f"{result.pool_bytes:,}")))
    m2.metric(t("Measured: bytes per token"), num(f"{result.measured_bytes_per_token:,.6g} B"),
              delta=None if result.measured_over_predicted is None
              else _ratio_words(result.measured_over_predicted), delta_color="off",
              help=num(t("torch.cuda.memory_allocated delta: {bytes} B", bytes=f"{result.measured_bytes:,}")
                       if result.device == "cuda" else
                       t("the pool tensors' storage bytes: {bytes} B", bytes=f"{result.measured_bytes:,}")))
    m3.metric(t("Allocator and page overhead"), num(f"{result.allocator_overhead_bytes:+,} B"),
              help=num(t("mem_get_info delta {bytes} B minus measured", bytes=f"{result.resident_bytes:,}")
                       if result.device == "cuda" else
                       t("process RSS delta {bytes} B minus measured", bytes=f"{result.resident_bytes:,}")))
    m4.metric(t("KV cache size in free memory"), planner_message(tokens_fit_text(result.tokens_fit_free)),
              help=num(t("the largest pool of this layout (whole blocks, windows capped) in free {free}; under the "
                         "{cap} cap with scratch: {fit}", free=format_bytes(result.free_bytes),
                         cap=f"{result.max_fraction:g}", fit=planner_message(tokens_fit_text(result.tokens_fit_cap)))))
    st.caption(num(t("Released afterwards: {released} (residual {residual} B). Pool {pool}; device total {total}, "
                     "free {free} before the probe.", released=t("yes") if result.released else t("NO"),
                     residual=f"{result.residual_bytes:+,}", pool=format_bytes(result.pool_bytes),
                     total=format_bytes(result.total_bytes), free=format_bytes(result.free_bytes))))
    show_table(groups_frame(result), hide_index=True, column_config={
        "group": t("Group"), "role": t("Role"), "format": t("Format"), "layers": t("Layers"), "blocks": t("Blocks"),
        "entries_per_block": t("Entries per block"), "entry_bytes": t("Entry (B)"), "entries": t("Entries"),
        "planner_bytes": t("Planner (B)"), "pool_bytes": t("Pool (B)")})
    if result.quality:
        show_table(formats_frame(result), hide_index=True,
                   column_config={"format": t("Format"), "channels": t("Channels"), "role": t("Role"),
                                  "rel_rmse": st.column_config.NumberColumn(t("Relative RMS error"), format="%.4f"),
                                  "max_abs_error": t("Largest absolute error"),
                                  "quantize_gbps": t("Quantize (GB/s)"), "dequantize_gbps": t("Dequantize (GB/s)"),
                                  "copy_gbps": t("Plain copy (GB/s)"),
                                  "quantize_over_copy": st.column_config.NumberColumn(t("Quantize vs copy"),
                                                                                      format="percent"),
                                  "dequantize_over_copy": st.column_config.NumberColumn(t("Dequantize vs copy"),
                                                                                        format="percent")})
        st.caption(t("Round-trip error on synthetic KV (normal values, one outlier channel in 64 at 10x). "
                     "Throughput: GB/s of source bytes, best of N, next to a plain copy of the same bytes "
                     "in the same run."))
    for note in result.notes:
        st.caption(escape_markdown(note))
    st.download_button(t("Download this result (JSON)"), result.to_json(), key="probe_download",
                       file_name=f"probe-{result.model_id}-{result.kv_format}-{result.num_tokens}.json",
                       mime="application/json")

    st.subheader(t("In the plan"))
    try:
        measured_model(result)  # refuses pools whose bytes / tokens is not a per-token slope
    except PlanInputError as exc:
        show_error(exc)
        return
    ours = plan(rebase(last, measured_kv_bytes_per_token=None)[0])
    applied = (last.measured_kv_bytes_per_token == result.measured_bytes_per_token
               and (last.measured_kv_model_id, last.measured_kv_format) == (result.model_id, result.kv_format))
    u1, u2 = st.columns(2)
    if u1.button(t("Use the measured bytes per token in the plan"), key="probe_apply", disabled=applied):
        update_inputs(model_id=result.model_id, kv_format=result.kv_format,
                      measured_kv_bytes_per_token=result.measured_bytes_per_token,
                      measured_kv_model_id=result.model_id, measured_kv_format=result.kv_format)
        st.rerun()
    if u2.button(t("Use the probe's free GPU memory ({bytes}) as usable KV per GPU",
                   bytes=num(format_bytes(result.free_bytes))),
                 key="probe_apply_usable", help=t("Only for a CUDA probe: a CPU probe's free memory is host RAM."),
                 disabled=result.device != "cuda" or last.measured_usable_kv_gib == result.free_bytes / GiB):
        update_inputs(measured_usable_kv_gib=result.free_bytes / GiB)
        st.rerun()
    if last.measured_kv_bytes_per_token is not None or last.measured_usable_kv_gib is not None:
        if st.button(t("Back to the planner's arithmetic"), key="probe_clear"):
            update_inputs(measured_kv_bytes_per_token=None, measured_usable_kv_gib=None)
            st.rerun()
    now = plan(last)
    p1, p2 = st.columns(2)
    p1.metric(t("Planner ({model}, {kv_format}): KV bytes per token", model=models()[last.model_id].name,
                kv_format=md(last.kv_format)), num(f"{ours.kv_bytes_per_token:,.6g} B"))
    p1.metric(t("Sessions per GPU (planner arithmetic)"), format_sessions(ours.sessions_per_gpu))
    p2.metric(t("Plan now ({source}): KV bytes per token", source=t(now.kv_source)),
              num(f"{now.kv_bytes_per_token:,.6g} B"))
    change = now.sessions_per_replica - ours.sessions_per_replica
    p2.metric(t("Sessions per GPU (plan now, usable KV {source})", source=t(now.usable_kv_source)),
              num(format_sessions(now.sessions_per_gpu)),
              delta=None if change == 0 else num(t("{change} per replica", change=f"{change:+,}")), delta_color="off")
    st.caption(t("Measured figures travel in the share link (mkv, musable, with what they measured: mkv_model, "
                 "mkv_fmt, mu_gpu, ...) and in plan files; they are dropped, with a notice, when the model, format or "
                 "GPU changes. The Plan page marks them as measured and offers to go back to the planner's "
                 "arithmetic."))


if "probe_result" in st.session_state:
    show(*st.session_state["probe_result"])
else:
    st.caption(t("No probe yet: run one here or upload a result."))
