"""An engine's start-up log beside kvplan's prediction for the same settings, with the cause of each difference.

Everything is normalised to bytes per token per GPU and shown in GB and GiB.
The engine's figures come back exactly as printed (:mod:`planner.engines.logs`);
kvplan's come from :mod:`planner.engines.capacity` (vLLM's blocks, tokens and
concurrency for a KV budget) and the model's layout (bytes per token on one GPU
at the log's TP and KV dtype). A printed size is rounded to the digits shown,
so a figure "matches" when it lies inside that rounding interval.

Causes named (each only when the log shows it):

* GiB labelled GB: SGLang's ``K size: 8.23 GB`` is ``8.23 * 1024**3`` bytes
  (``GB = 1024 * 1024 * 1024`` in ``python/sglang/srt/mem_cache/memory_pool.py``);
  vLLM V0's ``Loading model weights took ... GB`` is bytes / 2**30;
* K and V listed separately (SGLang): the pool is K + V;
* budget vs per-token cost: two engines with the same bytes per token hold
  different token counts only because their budgets differ;
* profiling-dependent budget (vLLM): :data:`planner.engines.capacity.BUDGET_MOVES`;
* "Maximum concurrency" is not a cap: :data:`planner.engines.capacity.NOT_A_HARD_CAP`;
* hybrid token-count quirk (vLLM, https://github.com/vllm-project/vllm/issues/40691): for hybrid models "GPU KV
  cache size" is ``num_blocks // num_kv_cache_groups * smallest block size``,
  which need not equal concurrency x max_model_len;
* block rounding: tokens come in whole blocks (``num_blocks * block_size``).

Each vLLM release's own formulas are mirrored (``vllm/v1/core/kv_cache_utils.py``):

* "Maximum concurrency": V0 (``vllm/executor/executor_base.py``, ``initialize_cache``) and the first V1
  releases (the ``# GPU blocks`` era, https://github.com/vllm-project/vllm/pull/13596) print
  ``num_blocks * block_size / max_model_len``; V1 with KV-cache groups prints
  ``num_blocks / blocks_per_request`` (``get_max_concurrency_for_kv_cache_config``);
* "GPU KV cache size": ``num_blocks * block_size`` (one group), then ``num_blocks // num_kv_cache_groups *
  block_size`` (hybrid allocator, e.g. vllm-project/vllm@001cabc and v0.19.0), then ``int(max_concurrency *
  max_model_len)`` (``_report_kv_cache_config`` after the hybrid token-count fix). For one KV-cache group the
  three agree; for a hybrid, the log's own concurrency line tells which one the release used;
* the start-up error (``check_enough_kv_cache_memory``): the KV one ``max_model_len`` request needs
  (``max_memory_usage_bytes`` summed over the layers / groups) against the budget, and the estimated maximum
  model length (``estimate_max_model_len``: the largest length whose need fits, by binary search);
* pipeline parallelism: each stage's worker prints its own "Available KV cache memory"; the engine keeps the
  smallest block count of all workers (``get_kv_cache_configs`` / ``unify_kv_cache_configs``), so the
  binding rank is compared.

SGLang (``python/sglang/srt/mem_cache/memory_pool.py``): a pool of ``size`` tokens allocates
``size + page_size`` rows (the padded slot 0 takes padded tokens' writes), and prints K and V sizes in
GiB labelled GB. A sliding-window model has two pools (``SWAKVPool``): the sliding-window layers' and the
full-attention layers'; each "KV Cache is allocated" line is attributed to the layers whose bytes per token it
fits, never to all layers by default. DeepSeek V3.2's pool (``NSATokenToKVPool``) holds the MLA latent and the
indexer keys.

A residual kvplan cannot explain is reported as such, with its size.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, replace

from planner.catalog.entries import models
from planner.engines.capacity import (BUDGET_MOVES, NOT_A_HARD_CAP, VLLMSettings, vllm_capacity,
                                      vllm_max_model_len)
from planner.engines.logs import EngineLog, Reading
from planner.engines.vllm_paging import MAMBA_CACHE_MODES, paging, pp_partition
from planner.errors import PlanInputError
from planner.kv.kinds import FullAttentionGroup, MLAGroup
from planner.kv.models import ModelSpec
from planner.units import GiB, format_bytes
from planner.messages import Figure, msg

KV_DTYPES: dict[str, str | None] = {
    "auto": None, "bfloat16": "bf16", "bf16": "bf16", "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "fp8": "fp8", "fp8_e4m3": "fp8", "float8_e4m3fn": "fp8", "fp8_e5m2": "fp8-e5m2", "float8_e5m2": "fp8-e5m2",
}
"""Engine KV dtype names -> kvplan format ids ("auto" = the model's own dtype)."""

CANDIDATE_FORMATS = ("bf16", "fp8")
"""KV formats tried when the log's figures do not fit the stated one exactly."""

GIB_AS_GB = msg("SGLang prints GB for GiB: its sizes are divided by 1024**3 (GB = 1024 * 1024 * 1024 in "
             "sglang/srt/mem_cache/memory_pool.py), so '8.23 GB' is 8.23 GiB = 8.84 GB.")
NO_MODEL = msg("no model: the log names none that kvplan knows, and none was given")
"""Refusal when no model is known; the CLI adds its flag (``--model``), the dashboard its own control."""
K_AND_V = msg("SGLang lists K and V separately: the KV pool is K + V, twice the K size for equal K and V widths.")
SGLANG_BUDGET = msg("SGLang's pool is what mem_fraction_static of the free memory before loading leaves after the "
                    "weights (profile_max_num_token; the rest is for activations and CUDA graphs): a budget, not a "
                    "per-token cost.")
SGLANG_PADDING = msg("SGLang allocates size + page_size rows per pool (slot 0 takes padded tokens' writes): the "
                   "printed sizes are (#tokens + page_size) x bytes per token.")
SGLANG_SWA = msg("SGLang keeps two pools for a sliding-window model (SWAKVPool): the sliding-window layers' pool and "
                 "the full-attention layers' pool; each 'KV Cache is allocated' line is one of them, attributed here by "
                 "its bytes per token.")
PP_STAGES = msg("vLLM splits the layers over pipeline stages with get_pp_indices (vllm/distributed/utils.py): "
                "L // PP each, the remainder one each to the stages before the last, or VLLM_PP_LAYER_PARTITION; "
                "each stage's budget is priced with its own layers.")
PP_BINDING = msg("One 'Available KV cache memory' line per pipeline stage: vLLM keeps the smallest block count of "
                 "all workers, so the rank with the fewest blocks binds the pool (each rank is priced with its "
                 "stage's layers when the model's layers are known, else with the largest stage's, ceil(L / PP)).")
SGLANG_MAMBA = msg("SGLang's Mamba pool holds max_mamba_cache_size + 1 slots per state layer (MambaPool): the conv "
                   "state in the model dtype and the SSM state in --mamba-ssm-dtype (float32 by default), split over "
                   "TP like the layer's heads.")
HYBRID_QUIRK = msg("For hybrid models vLLM reports 'GPU KV cache size' as num_blocks // num_kv_cache_groups x the "
                "smallest block size, while 'Maximum concurrency' counts the blocks one full-length request needs "
                "across all groups; the two need not agree (vLLM, https://github.com/vllm-project/vllm/issues/40691).")


@dataclass(frozen=True)
class Setting:
    """One setting used for the prediction and where it came from ("log line 3", "given", "assumed: ...")."""

    name: str
    value: object
    source: str


@dataclass(frozen=True)
class ReconcileRow:
    """One quantity, engine vs kvplan (all per GPU).

    Attributes:
        quantity: what is compared.
        engine: the engine's figure as printed (and in GB and GiB for sizes).
        kvplan: kvplan's figure for the same settings ("" when kvplan has none).
        status: "match" (inside the printed rounding), "differs", "engine only".
        cause: why they differ, or what the figure means.
    """

    quantity: str
    engine: str
    kvplan: str
    status: str
    cause: str


@dataclass(frozen=True)
class Reconciliation:
    """A log reconciled with kvplan.

    Attributes:
        engine: "vllm" or "sglang".
        model_id: the model kvplan predicted for (None: no prediction).
        settings: TP, PP, KV format, block size, max_model_len, with sources.
        kv_bytes_per_token_per_gpu: kvplan's bytes per token on one GPU.
        implied_bytes_per_token: (lo, hi) the log's own budget / tokens allows.
        pool_bytes: (lo, hi) the engine's KV pool per GPU as printed.
        pool_tokens: tokens in the engine's pool (per GPU; a token spans all ranks under TP).
        best_fit_format: the KV format whose bytes per token fit the log best.
        rows: side-by-side rows; causes: named causes, one sentence each.
        unread: lines read as unread, verbatim; refusals: what could not be computed and why.
    """

    engine: str
    model_id: str | None
    settings: tuple[Setting, ...]
    kv_bytes_per_token_per_gpu: int | None
    implied_bytes_per_token: tuple[float, float] | None
    pool_bytes: tuple[int, int] | None
    pool_tokens: int | None
    best_fit_format: str | None
    rows: tuple[ReconcileRow, ...]
    causes: tuple[str, ...]
    unread: tuple[tuple[int, str], ...]
    num_unread: int
    refusals: tuple[str, ...]


def model_from_log(log: EngineLog) -> ModelSpec | None:
    """The catalog model whose id starts the log's model name (``/x/Qwen3-235B-A22B-FP8`` -> qwen3-235b-a22b), or None."""
    found = log.first("model")
    if found is None:
        return None
    name = re.sub(r"[^a-z0-9]", "", str(found.value).rsplit("/", 1)[-1].lower().removeprefix("meta-"))
    for mid in sorted(models(), key=len, reverse=True):
        if name.startswith(re.sub(r"[^a-z0-9]", "", mid)):
            return models()[mid]
    return None


def _pool_token_bytes(model: ModelSpec, fmt: str | None, tp: int, pp: int) -> int:
    """Bytes one token takes in a full-attention / MLA pool on one GPU (every layer of the largest stage).

    Raises:
        PlanInputError: a layout with other kinds of layers (windows, compressed entries, state).
    """
    groups = [g for g in model.layout(fmt) if g.in_pool]
    if not groups or not all(isinstance(g, (FullAttentionGroup, MLAGroup)) for g in groups):
        raise PlanInputError("model", model.id, msg("a full-attention or MLA model for a per-token pool figure "
                                                    "(sliding, compressed or state layers are pooled per engine)"))
    return sum(g.entry_bytes(tp) * g.layers_per_gpu(pp) for g in groups)


def token_layer_sets(model: ModelSpec, fmt: str | None, tp: int, pp: int) -> dict[str, int]:
    """Bytes per token on one GPU of each set of layers an SGLang pool may hold.

    ``"all layers"``: every in-pool layer that stores one entry per token (attention, MLA latents, indexer
    keys), windows included (a plain pool stores them at full length); ``"full-attention layers"`` and
    ``"sliding-window layers"``: the two pools of a sliding-window model. Empty when no layer stores one entry
    per token (compressed entries and state are not pooled per token).
    """
    per_token = [g for g in model.layout(fmt) if g.in_pool and g.role != "state" and g.tokens_per_entry == 1]
    if not per_token:
        return {}
    full = sum(g.entry_bytes(tp) * g.layers_per_gpu(pp) for g in per_token if g.cap_tokens is None)
    windowed = sum(g.entry_bytes(tp) * g.layers_per_gpu(pp) for g in per_token if g.cap_tokens is not None)
    if full and not windowed and any(g.in_pool and g.role == "state" for g in model.layout(fmt)):
        return {"full-attention layers": full}  # Mamba / linear-attention hybrid: state lives in its own pool
    sets = {"all layers": full + windowed}
    if windowed and full:
        sets["full-attention layers"] = full
        sets["sliding-window layers"] = windowed
    return sets


def _set_word(name: str) -> str:
    return {"all layers": msg("all layers"), "full-attention layers": msg("full-attention layers"),
            "sliding-window layers": msg("sliding-window layers")}[name]


def _setting(name: str, given: object, found: Reading | None, default: object, why: str) -> Setting:
    if given is not None:
        return Setting(name, given, msg("given"))
    if found is not None:
        return Setting(name, found.value, msg("log line {line_no}", line_no=found.line_no))
    return Setting(name, default, msg("assumed: {why}", why=why))


def _gib(r: Reading) -> str:
    size = Figure(format_bytes(r.bytes_mid))
    return (msg("{printed} = {size}", printed=r.printed, size=size) if r.printed.endswith("GiB") else
            msg("{printed} (GiB labelled GB) = {size}", printed=r.printed, size=size))


def _range(lo: int, hi: int) -> str:
    return f"{lo:,}" if lo == hi else msg("{lo:,} to {hi:,}", lo=lo, hi=hi)


def _status(ok: bool) -> str:
    return msg("match") if ok else msg("differs")


def reconcile(log: EngineLog, model: ModelSpec | None = None, *, tp: int | None = None, pp: int | None = None,
              kv_format: str | None = None, block_size: int | None = None,
              max_model_len: int | None = None) -> Reconciliation:
    """Put a parsed start-up log beside kvplan's prediction for the same settings.

    Args:
        log: :func:`planner.engines.logs.parse_engine_log` output.
        model: the model (default: the catalog model named in the log, if any).
        tp, pp, kv_format, block_size, max_model_len: override what the log
            echoes (defaults when absent: TP 1, PP 1, the model's own KV dtype,
            block 16, the concurrency line's length).

    Raises:
        PlanInputError: a log from no engine kvplan reads, or from both at once.
    """
    if log.engine == "unknown":  # named by its own first line: what the user pasted
        raise PlanInputError("log", log.first_line,
                             msg("a vLLM or an SGLang start-up log (no line of this text is from either engine)"))
    if log.engine != "vllm" and log.engine != "sglang":
        raise PlanInputError("log", log.engine, msg("a vLLM or an SGLang start-up log (one engine per log)"))
    named = log.first("model")
    if model is not None:
        model_s = Setting("model", model.id, msg("given"))
    else:
        model = model_from_log(log)
        model_s = Setting("model", model.id if model else None,
                          msg("matched from line {line} of the log ({value})", line=named.line_no,
                              value=str(named.value)[:80]) if model
                          else msg("none: the log names no catalog model") if named is None
                          else msg("none: line {line} names no catalog model", line=named.line_no))
    tp_s = _setting("tp", tp, log.first("tp"), 1, msg("no TP size in the log"))
    pp_s = _setting("pp", pp, log.first("pp"), 1, msg("no PP size in the log"))
    dtype = log.first("sglang_kv_dtype") or log.first("kv_cache_dtype")
    fmt_s = _setting("kv_format", kv_format, dtype, "auto", msg("no KV dtype in the log: the model's own"))
    settings = [model_s, tp_s, pp_s, fmt_s]
    attn_tp = int(tp_s.value)
    dp = log.first("dp")
    if log.engine == "sglang" and log.first("dp_attention") and dp is not None and tp is None:
        attn_tp = max(1, int(tp_s.value) // max(1, int(dp.value)))
        settings.append(Setting("attention_tp", attn_tp, msg("TP {tp} / DP {dp} with --enable-dp-attention (log line "
                                                             "{line_no})", tp=tp_s.value, dp=dp.value,
                                                             line_no=dp.line_no)))
    refusals: list[str] = []
    causes: list[str] = []
    fmt: str | None = None
    if fmt_s.source.startswith("given"):
        fmt = None if kv_format in (None, "native", "auto") else str(kv_format)
    elif str(fmt_s.value).lower() in KV_DTYPES:
        fmt = KV_DTYPES[str(fmt_s.value).lower()]
    else:
        refusals.append(msg("KV dtype {dtype!r} is not one kvplan maps to a format: pass the KV format",
                            dtype=fmt_s.value))
        model = None
    per_token = None
    if model is None:
        refusals.append(NO_MODEL)
    elif all(isinstance(g, (FullAttentionGroup, MLAGroup)) and g.cap_tokens is None
             for g in model.layout(fmt) if g.in_pool):  # windows, state, indexer keys: pooled per engine
        per_token = _pool_token_bytes(model, fmt, attn_tp, int(pp_s.value))
    if log.engine == "sglang":
        page = log.first("page_size")
        page_s = _setting("page_size", None, page, 1, msg("SGLang's default"))
        settings.append(page_s)
        sets = token_layer_sets(model, fmt, attn_tp, int(pp_s.value)) if model is not None else {}
        if model is not None and not sets:
            refusals.append(msg("{model}: no layer of this model stores one entry per token; SGLang's pools of it "
                                "are not predicted", model=model.id))
        state = sglang_state_bytes(model, fmt, attn_tp, int(pp_s.value), log) if model is not None else None
        rows, pool, tokens = _sglang_rows(log, sets, int(page_s.value), causes, state)
        block, stage_pp = 1, int(pp_s.value)
    else:
        bs = _setting("block_size", block_size, log.first("block_size"), 16, msg("vLLM's default"))
        mml = _setting("max_model_len", max_model_len,
                       log.first("concurrency_tokens") or log.first("error_max_seq_len") or log.first("max_model_len"),
                       None, msg("not in the log: the model's maximum"))
        mnbt = _setting("max_num_batched_tokens", None, log.first("max_num_batched_tokens"), 8192,
                        msg("vLLM's default on large GPUs (it only matters for sliding windows)"))
        settings += [bs, mml, mnbt]
        mamba = _mamba_cache_mode(log) if model is not None and any(
            g.in_pool and g.role == "state" for g in model.layout(fmt)) else None
        if mamba is not None:
            settings.append(mamba)
            if mamba.value not in MAMBA_CACHE_MODES:
                refusals.append(msg("vLLM mamba_cache_mode {mode!r} (a state page per block of the sequence) is not "
                                    "modelled", mode=mamba.value))
                model, per_token, mamba = None, None, None
        block = int(bs.value)
        rows, pool, tokens, (model, stage_pp, per_token) = _vllm_rows(
            log, model, fmt, attn_tp, int(pp_s.value), block, mml.value, int(mnbt.value), per_token, causes, refusals,
            mamba.value if mamba is not None else "none")
    implied = None
    if pool and tokens:
        implied = (pool[0] / (tokens + block), pool[1] / tokens)
    best = None
    if implied and model is not None and per_token is not None:
        best, fit_rows = _best_fit(model, fmt, attn_tp, stage_pp, implied, per_token)
        rows += fit_rows
    binding = log.engine == "vllm" and len({r.rank for r in log.all("kv_budget")}) > 1
    causes += [msg("{key} is printed {times} times with different values ({values}): typically one line per rank; the "
                   "first is compared.", key=key, times=len(found), values=", ".join(r.printed for r in found[:4]))
               for key, found in log.conflicts().items()
               if key in ("gpu_kv_cache_tokens", "num_gpu_blocks", "max_concurrency")
               or (key == "kv_budget" and not binding)]
    return Reconciliation(engine=log.engine, model_id=model.id if model else None, settings=tuple(settings),
                          kv_bytes_per_token_per_gpu=per_token, implied_bytes_per_token=implied, pool_bytes=pool,
                          pool_tokens=tokens, best_fit_format=best, rows=tuple(rows),
                          causes=tuple(dict.fromkeys(causes)), unread=log.unread, num_unread=log.num_unread,
                          refusals=tuple(dict.fromkeys(refusals)))


def _first_rank(found: tuple[Reading, ...]) -> tuple[Reading, ...]:
    """Readings of the first rank that printed them (all of them when no line names a rank)."""
    if not found:
        return found
    ranks = [r.rank for r in found]
    keep = next((x for x in ranks if x in ("", "TP0", "DP0 TP0", "PP0 TP0")), ranks[0])
    return tuple(r for r in found if r.rank == keep)


SGLANG_SSM_DTYPES = {"float32": 4, "bfloat16": 2, "float16": 2}
"""SGLang's ``--mamba-ssm-dtype`` choices and their bytes (default float32: sgl-project/sglang docs, Qwen3-Next
usage, https://github.com/sgl-project/sglang/pull/15337)."""


def sglang_state_bytes(model: ModelSpec, fmt: str | None, tp: int, pp: int, log: EngineLog):
    """Bytes of one SGLang Mamba slot on one GPU: ``(conv, ssm, ssm dtype, its source)``, or None without state layers.

    SGLang's ``MambaPool`` (``python/sglang/srt/mem_cache/memory_pool.py``) allocates, per state layer of the
    rank, ``size + 1`` slots of the conv state (model dtype) and of the temporal (SSM) state in
    ``--mamba-ssm-dtype`` (default float32), with the same TP split as vLLM's state shapes.
    """
    groups = [g for g in model.layout(fmt) if g.in_pool and g.role == "state" and getattr(g, "num_units", 0)]
    if not groups:
        return None
    found = log.first("sglang_mamba_ssm_dtype")
    dtype = str(found.value) if found and str(found.value) in SGLANG_SSM_DTYPES else "float32"
    source = msg("log line {line_no}", line_no=found.line_no) if found and str(found.value) in SGLANG_SSM_DTYPES else msg(
        "SGLang's default --mamba-ssm-dtype")
    conv = sum(g.layers_per_gpu(pp) * g.entry_bytes(tp) for g in groups if "conv" in g.name)
    ssm = sum(g.layers_per_gpu(pp) * g.units_per_gpu(tp) * g.elements_per_unit * SGLANG_SSM_DTYPES[dtype]
              for g in groups if "conv" not in g.name)
    return conv, ssm, dtype, source


def _sglang_running_row(log: EngineLog, printed: int, tokens: int, context_len: int) -> ReconcileRow:
    """SGLang's printed max_running_requests beside its rule at the printed pool and context length
    (:meth:`planner.engines.sglang_admission.SGLangAdmission.max_running_requests`)."""
    from planner.engines.sglang_admission import REQUEST_POOL_MAX, REQUEST_POOL_MIN, SGLangAdmission

    flag = log.first("sglang_max_running_flag")
    dp = log.first("dp") if log.first("dp_attention") else None
    dp_size = int(dp.value) if dp else 1
    pred = int(SGLangAdmission(full_bytes_per_token=1).max_running_requests(
        tokens, context_len, int(flag.value) if flag else None, dp_size))
    if flag:
        how = msg("min(--max-running-requests {flag:,} // DP {dp}, {tokens:,} // 2) = {pred:,}",
                  flag=int(flag.value), dp=dp_size, tokens=tokens, pred=pred)
    else:
        how = msg("min(clamp(int({tokens:,} / {context:,} x 512), {lo:,}, {hi:,}), {tokens:,} // 2) = {pred:,}",
                  tokens=tokens, context=context_len, pred=pred, lo=REQUEST_POOL_MIN, hi=REQUEST_POOL_MAX)
    if printed == pred:
        cause = msg("SGLang's rule at the printed pool and context length")
    elif printed == pred + 1 and not flag:
        cause = msg("differs by 1: releases of early 2025 sized the request pool one larger (max(..., {lo:,}) + 1)",
                    lo=REQUEST_POOL_MIN)
    else:
        cause = msg("differs by {n:,}: not explained by SGLang's rule (a speculative or Mamba cap, or a patched "
                    "build)", n=abs(printed - pred))
    return ReconcileRow(msg("max_running_requests"), f"{printed:,}", how, _status(printed == pred), cause)


def _sglang_pool_row(before: Reading, after: Reading, mfs: float, printed: int, cell: int, page: int) -> ReconcileRow:
    """max_total_num_tokens from the log's own memory lines by SGLang's rule (``profile_max_num_token``):
    ``rest = free after loading - free before loading x (1 - mem_fraction_static)``, ``// cell_size``, aligned to
    the page; the printed GiB's rounding gives a range."""
    lo = int(after.bytes_lo - before.bytes_hi * (1 - mfs)) // cell // page * page
    hi = int(after.bytes_hi - before.bytes_lo * (1 - mfs)) // cell // page * page
    how = msg("({after} - {before} x (1 - {mfs:g})) // {cell:,} B = {range} tokens",
              after=Figure(f"{after.bytes_mid / GiB:.2f} GiB"), before=Figure(f"{before.bytes_mid / GiB:.2f} GiB"),
              mfs=mfs, cell=cell, range=_range(lo, hi))
    ok = lo <= printed <= hi
    return ReconcileRow(msg("max_total_num_tokens from the log's memory lines"), f"{printed:,}", how, _status(ok),
                        SGLANG_BUDGET if ok else msg("outside the printed rounding: the pool was capped or sized "
                                                     "otherwise (--max-total-tokens, a draft model, a patched build)"))


def _sglang_rows(log: EngineLog, sets: dict[str, int], page: int, causes: list[str], state=None):
    rows: list[ReconcileRow] = []
    allocs = []  # one per distinct "KV Cache is allocated" line (ranks print the same pools): (tokens, lo, hi, shown)
    tok_lines = {r.line_no: r for r in log.all("sglang_tokens")}
    for line_no, tok in tok_lines.items():
        k = next((r for r in log.all("k_size") if r.line_no == line_no), None)
        v = next((r for r in log.all("v_size") if r.line_no == line_no), None)
        kv = next((r for r in log.all("kv_size") if r.line_no == line_no), None)
        if k and v:
            causes += [GIB_AS_GB, K_AND_V]
            allocs.append((tok, k.bytes_lo + v.bytes_lo, k.bytes_hi + v.bytes_hi,
                           f"K {k.printed} + V {v.printed} = {format_bytes((k.bytes_mid or 0) + (v.bytes_mid or 0))}"))
        elif kv:
            causes.append(GIB_AS_GB)
            allocs.append((tok, kv.bytes_lo, kv.bytes_hi, _gib(kv)))
    seen = set()
    allocs = [a for a in allocs if not ((a[0].value, a[1]) in seen or seen.add((a[0].value, a[1])))]
    total_r = log.first("max_total_num_tokens")
    pool = (allocs[0][1], allocs[0][2]) if len(allocs) == 1 else None
    tokens = int(allocs[0][0].value) if len(allocs) == 1 else (int(total_r.value) if total_r else None)
    if total_r and not allocs:
        rows.append(ReconcileRow(msg("tokens in the KV pool"), f"{int(total_r.value):,}", "", msg("engine only"),
                                 msg("per GPU; under TP every rank holds its share of the same tokens")))
    running, ctx = log.first("sglang_max_running"), log.first("context_len")
    if running and total_r and ctx and (log.first("sglang_max_running_flag") or not log.first("mamba_slots")):
        rows.append(_sglang_running_row(log, int(running.value), int(total_r.value), int(ctx.value)))
    before, after = log.first("sglang_free_before_load"), log.first("sglang_free_after_load")
    mfs = log.first("mem_fraction_static")
    if before and after and mfs and total_r and set(sets) == {"all layers"} and not log.first("mamba_slots"):
        rows.append(_sglang_pool_row(before, after, float(mfs.value), int(total_r.value), sets["all layers"], page))
    if len(allocs) > 1 or log.first("sglang_swa_tokens"):
        causes.append(SGLANG_SWA)
    for tok, lo, hi, shown in allocs:
        n = int(tok.value)
        fits = {name: (n + page) * b for name, b in sets.items() if lo <= (n + page) * b <= hi}
        if sets:
            causes.append(SGLANG_PADDING)
        if fits:
            name = next(iter(fits))
            pred = fits[name]
            rows.append(ReconcileRow(
                msg("KV pool per GPU ({layers})", layers=_set_word(name)), msg("{shown}; #tokens {n:,}", shown=shown, n=n),
                msg("({n:,} + {page}) tokens x {per_token:,} B = {size}", n=n, page=page, per_token=sets[name],
                    size=Figure(format_bytes(pred))), msg("match"),
                msg("equal within the printed rounding: the pool of the {layers}", layers=_set_word(name))))
        elif sets:
            name = next(iter(sets)) if len(allocs) == 1 else min(sets, key=lambda x: abs((n + page) * sets[x] - (lo + hi) / 2))
            pred = (n + page) * sets[name]
            rows.append(ReconcileRow(
                msg("KV pool per GPU ({layers})", layers=_set_word(name)), msg("{shown}; #tokens {n:,}", shown=shown, n=n),
                msg("({n:,} + {page}) tokens x {per_token:,} B = {size}", n=n, page=page, per_token=sets[name],
                    size=Figure(format_bytes(pred))), msg("differs"),
                msg("differs by {size}: not explained by the per-token cost",
                    size=Figure(format_bytes(abs(pred - (lo + hi) // 2))))))
        else:
            rows.append(ReconcileRow(msg("KV pool per GPU"), msg("{shown}; #tokens {n:,}", shown=shown, n=n), "",
                                     msg("engine only"), msg("no per-token prediction")))
    swa_mem = _first_rank(log.all("swa_pool_mem"))
    if swa_mem and len(allocs) > 1:
        lo = sum(a[1] for a in allocs)
        hi = sum(a[2] for a in allocs)
        r = swa_mem[0]
        ok = r.bytes_lo <= (lo + hi) // 2 <= r.bytes_hi
        rows.append(ReconcileRow(msg("SWAKVPool mem usage (both pools)"), _gib(r),
                                 msg("sum of the pools' K and V sizes = {size}", size=Figure(format_bytes((lo + hi) // 2))),
                                 _status(ok), msg("the two pools of a sliding-window model, per GPU")))
    for key, label in (("sglang_swa_tokens", msg("tokens in the sliding-window layers' pool")),
                       ("sglang_full_tokens", msg("tokens in the full-attention layers' pool"))):
        r = log.first(key)
        if r:
            rows.append(ReconcileRow(label, f"{int(r.value):,}", "", msg("engine only"),
                                     msg("SGLang sizes the two pools by --swa-full-tokens-ratio")))
    slots = log.first("mamba_slots")
    if slots:
        conv, ssm = log.first("mamba_conv_size"), log.first("mamba_ssm_size")
        rows.append(ReconcileRow(msg("Mamba state slots"), f"{int(slots.value):,}", "", msg("engine only"),
                                 msg("one slot per running request: a per-sequence state pool, not per-token KV; "
                                     "conv {conv}, SSM {ssm}", conv=_gib(conv) if conv else "—",
                                     ssm=_gib(ssm) if ssm else "—")))
        if state is not None:
            n = int(slots.value)
            causes.append(SGLANG_MAMBA)
            for r, per_slot, label, how in (
                    (conv, state[0], msg("Mamba conv state per GPU"), msg("model dtype")),
                    (ssm, state[1], msg("Mamba SSM state per GPU"),
                     msg("{dtype}, {source}", dtype=state[2], source=state[3]))):
                if r is None:
                    continue
                pred = (n + 1) * per_slot
                ok = r.bytes_lo <= pred <= r.bytes_hi
                rows.append(ReconcileRow(
                    label, _gib(r),
                    msg("({n:,} + 1) slots x {per_slot:,} B ({how}) = {size}", n=n, per_slot=per_slot, how=how,
                        size=Figure(format_bytes(pred))),
                    _status(ok), SGLANG_MAMBA if ok else msg("differs by {size}: not explained by the state shapes",
                                                             size=Figure(format_bytes(abs(pred - r.bytes_mid))))))
    for key, label in (("available_gpu_mem", msg("free GPU memory after the pool")), ("weights", msg("weights per GPU"))):
        r = log.first(key)
        if r:
            causes.append(GIB_AS_GB)
            rows.append(ReconcileRow(label, _gib(r), "", msg("engine only"), msg("as printed; SGLang's GB are GiB")))
    mfs = log.first("mem_fraction_static")
    if mfs:
        causes.append(SGLANG_BUDGET)
        rows.append(ReconcileRow(msg("mem_fraction_static"), mfs.printed, "", msg("engine only"), SGLANG_BUDGET))
    return rows, pool, tokens


def _older_concurrency(log: EngineLog) -> bool:
    """True for releases whose concurrency line is ``num_blocks * block_size / max_model_len`` (V0, first V1)."""
    return bool(log.first("num_gpu_blocks") or log.first("num_cpu_blocks"))


def _mamba_cache_mode(log: EngineLog) -> Setting:
    """vLLM's ``mamba_cache_mode`` for a Mamba / linear-attention hybrid: as printed, else ``"align"`` when the
    log turns prefix caching on (vLLM's mode for hybrids with prefix caching), else ``"none"``."""
    found = log.first("mamba_cache_mode")
    if found is not None:
        return Setting("mamba_cache_mode", str(found.value), msg("log line {line_no}", line_no=found.line_no))
    on = log.first("prefix_caching")
    flag = log.first("prefix_caching_flag")
    if (on is not None and on.value == "True") or (flag is not None and not str(flag.value).startswith("--no-")):
        where = on if on is not None and on.value == "True" else flag
        return Setting("mamba_cache_mode", "align",
                       msg("derived: prefix caching on (log line {line_no}): vLLM's 'align' mode, 2 state pages "
                           "per request", line_no=where.line_no))
    return Setting("mamba_cache_mode", "none", msg("assumed: prefix caching not turned on in the log"))


def _vllm_rows(log, model, fmt, tp, pp, block, mml, max_batched, per_token, causes, refusals, mamba_mode="none"):
    rows: list[ReconcileRow] = []
    budgets = log.all("kv_budget")
    budgets += stage_budgets_from_profiling(log, budgets)
    err_budget = log.first("error_budget")
    tokens_r, blocks_r = log.first("gpu_kv_cache_tokens"), log.first("num_gpu_blocks")
    conc, conc_m = log.first("max_concurrency"), log.first("concurrency_tokens")
    tokens = int(tokens_r.value) if tokens_r else (int(blocks_r.value) * block if blocks_r else None)
    hybrid_on = not (log.first("hybrid_manager_off") or log.first("kv_connector"))
    s = VLLMSettings(block_size=block, max_num_batched_tokens=max_batched, hybrid_kv_cache_manager=hybrid_on,
                     mamba_cache_mode=mamba_mode)
    m_len = int(mml) if mml is not None else None
    cap_of = None
    if model is not None:
        probe_len = m_len or model.max_context_tokens or block  # blocks and tokens do not depend on it

        def cap_of(budget_bytes: int):
            return vllm_capacity(model, budget_bytes, probe_len, fmt, tp, pp, s)
        try:
            cap_of(0)  # refuses a layout vLLM paging is not modelled for
        except PlanInputError as exc:
            refusals.append(msg("{error}", error=exc))
            cap_of = None
    # the binding rank: the budget line whose block count is smallest (one line per PP stage / rank), each
    # stage priced with its own layers (vLLM's get_pp_indices split) when the model's layers are known
    budget = budgets[0] if budgets else None
    if cap_of is not None and len({r.rank for r in budgets}) > 1:
        by_rank = {}
        for r in budgets:
            by_rank.setdefault(r.rank, r)
        stages = _stage_models(log, model, pp, refusals) if pp > 1 else None

        def blocks_of(r):
            k = _pp_index(r.rank)
            if stages is not None and k is not None and k < len(stages):
                return vllm_capacity(stages[k][0], r.bytes_lo, probe_len, fmt, tp, 1, s).num_blocks
            return cap_of(r.bytes_lo).num_blocks
        budget = min(by_rank.values(), key=blocks_of)
        causes.append(PP_BINDING)
        k = _pp_index(budget.rank)
        if stages is not None and k is not None and k < len(stages):
            causes.append(PP_STAGES)
            rows.append(ReconcileRow(msg("pipeline stages' layers"), msg("{n} stages", n=len(stages)),
                                     ", ".join(f"PP{i} {n}" for i, (_, n) in enumerate(stages)), msg("engine only"),
                                     PP_STAGES))
            model, pp = stages[k][0], 1  # the binding stage's own layers price everything below
            if per_token is not None:
                per_token = _pool_token_bytes(model, fmt, tp, 1)
        rows.append(ReconcileRow(msg("binding rank"), msg("{rank}: {printed}", rank=budget.rank or "—",
                                                          printed=budget.printed),
                                 msg("{n} ranks' budgets: {values}", n=len(by_rank),
                                     values=", ".join(f"{r.rank or '—'} {r.printed}" for r in by_rank.values())),
                                 msg("engine only"), PP_BINDING))
    if budget is None and err_budget is not None:
        budget = err_budget
    pool = (budget.bytes_lo, budget.bytes_hi) if budget else None
    if budget:
        causes.append(BUDGET_MOVES)
        rows.append(ReconcileRow(msg("KV budget per GPU"), _gib(budget), msg("taken from the log"), msg("engine only"),
                                 msg("what profiling left after weights, activation peak and CUDA graphs")))
    negative = budget is not None and budget.bytes_hi < 0
    if negative and cap_of is not None:
        # V0 (vllm/worker/worker.py, determine_num_available_blocks): a negative budget gives max(n, 0) = 0 blocks
        rows.append(ReconcileRow(msg("GPU blocks"), blocks_r.printed if blocks_r else "—", "0",
                                 _status(bool(blocks_r) and int(blocks_r.value) == 0),
                                 msg("a negative budget: profiling left no memory for the KV cache; vLLM keeps "
                                     "max(blocks, 0) = 0 and cannot serve")))
        pool = None
    caps = [cap_of(b) for b in pool] if (cap_of is not None and pool) else None
    cpu_r = log.first("num_cpu_blocks")
    if cpu_r and cap_of is not None:
        swap = log.first("swap_space")
        swap_gib = float(swap.value) if swap else 4.0
        block_bytes = cap_of(0).bytes_per_block
        pred_cpu = int(swap_gib * GiB) // block_bytes
        rows.append(ReconcileRow(msg("CPU blocks (swap space)"), cpu_r.printed,
                                 msg("{swap} GiB // {block_bytes:,} B per block = {blocks:,}", swap=f"{swap_gib:g}",
                                     block_bytes=block_bytes, blocks=pred_cpu),
                                 _status(pred_cpu == int(cpu_r.value)),
                                 msg("V0 sizes the CPU swap pool as swap_space // bytes per block (swap_space: {why})",
                                     why=msg("log line {line_no}", line_no=swap.line_no) if swap else
                                     msg("vLLM's default, 4 GiB"))))
    groups = caps[0].num_kv_groups if caps else None
    if caps:
        b_lo, b_hi = caps[0].num_blocks, caps[1].num_blocks
        why = msg("budget // {block_bytes:,} B per block ({layers} layers x {page:,} B)",
                  block_bytes=caps[0].bytes_per_block, layers=caps[0].num_layers_per_block, page=caps[0].page_size_bytes)
        if blocks_r:
            rows.append(ReconcileRow(msg("GPU blocks"), blocks_r.printed, _range(b_lo, b_hi),
                                     _status(b_lo <= blocks_r.value <= b_hi), why))
        if tokens_r:
            by_conc = groups is not None and groups > 1 and _tokens_from_concurrency(tokens_r, conc, conc_m)
            if by_conc:
                t_lo = int(caps[0].max_concurrency * caps[0].max_model_len)
                t_hi = int(caps[1].max_concurrency * caps[1].max_model_len)
                formula = msg("int(maximum concurrency x max_model_len), this release's formula for a hybrid")
            else:
                t_lo, t_hi = caps[0].max_tokens, caps[1].max_tokens
                formula = (msg("num_blocks // {groups} KV-cache groups x {block} tokens, this release's formula for "
                               "a hybrid", groups=groups, block=caps[0].block_size) if groups and groups > 1 else
                           msg("block rounding: {block}-token blocks", block=caps[0].block_size))
            ok = t_lo <= tokens_r.value <= t_hi
            if ok or per_token is None:
                cause = msg("{formula}; {why}", formula=formula, why=why)
            else:
                gap = (budget.bytes_mid or 0) - int(tokens_r.value) * per_token
                cause = msg("the printed budget holds {tokens:,} tokens at {per_token:,} B; the engine reports {reported:,}: "
                            "{gap} ({share:.1%}) of the printed budget holds no blocks. kvplan's arithmetic does not "
                            "explain this residual (the printed budget may come from another rank or step than the pool "
                            "size)", tokens=t_lo, per_token=per_token, reported=int(tokens_r.value),
                            gap=Figure(format_bytes(gap)), share=gap / max(budget.bytes_mid, 1))
                if tp > 1 and groups == 1 and len({r.rank for r in budgets}) <= 1 and not budget.rank:
                    # V1 prints both lines once per worker and keeps the smallest worker's blocks
                    # (get_kv_cache_config per worker, then unify_kv_cache_configs); a quoted pair may mix workers
                    b = int(tokens_r.value) // caps[0].block_size
                    lo_b, hi_b = b * caps[0].bytes_per_block, (b + 1) * caps[0].bytes_per_block
                    cause = msg("{cause}. With TP {tp} every worker prints its own 'Available KV cache memory' and, in "
                                "V1 releases that size each worker's pool separately, its own 'GPU KV cache size'; "
                                "the engine keeps the smallest worker's blocks. {reported:,} tokens = {blocks:,} blocks "
                                "of {block_bytes:,} B fit a budget of {lo:.4f} to {hi:.4f} GiB: a worker printing "
                                "that budget would explain the line exactly, but the log quotes one budget line, so "
                                "this stays unexplained.", cause=cause, tp=tp, reported=int(tokens_r.value), blocks=b,
                                block_bytes=caps[0].bytes_per_block, lo=lo_b / GiB, hi=hi_b / GiB)
            rows.append(ReconcileRow(msg("GPU KV cache size (tokens)"), tokens_r.printed, _range(t_lo, t_hi),
                                     _status(ok), cause))
    elif blocks_r and tokens_r is None and not negative:
        kv = ""
        if cap_of is not None:
            c = cap_of(0)
            kv = msg("{blocks:,} x {block_bytes:,} B per block = {size} of KV", blocks=int(blocks_r.value),
                     block_bytes=c.bytes_per_block, size=Figure(format_bytes(int(blocks_r.value) * c.bytes_per_block)))
        rows.append(ReconcileRow(msg("GPU blocks"), blocks_r.printed, kv, msg("engine only"),
                                 msg("= {tokens:,} tokens at {block} tokens per block; the log prints no budget, so "
                                     "the blocks cannot be checked against one", tokens=int(blocks_r.value) * block,
                                     block=block)))
    elif tokens_r:
        kv = ""
        if per_token is not None:
            kv = msg("{tokens:,} tokens x {per_token:,} B = {size} of KV per GPU", tokens=int(tokens_r.value),
                     per_token=per_token, size=Figure(format_bytes(int(tokens_r.value) * per_token)))
        rows.append(ReconcileRow(msg("GPU KV cache size (tokens)"), tokens_r.printed, kv, msg("engine only"),
                                 msg("the log prints no budget, so the tokens cannot be checked against one")))
    if conc and conc_m:
        causes.append(NOT_A_HARD_CAP)
        kv, status = "", msg("engine only")
        c_len = int(conc_m.value)
        engine_blocks = int(blocks_r.value) if blocks_r else None
        blocks_range = None
        if cap_of is not None and engine_blocks is None and tokens_r:
            c0 = vllm_capacity(model, 0, c_len, fmt, tp, pp, s)
            if c0.num_kv_groups == 1:
                engine_blocks = int(tokens_r.value) // c0.block_size
            elif not _tokens_from_concurrency(tokens_r, conc, conc_m):
                # the release printed num_blocks // groups x block: num_blocks is one of `groups` values
                lo_b = int(tokens_r.value) // c0.block_size * c0.num_kv_groups
                blocks_range = (lo_b, lo_b + c0.num_kv_groups - 1)
        if cap_of is not None and blocks_range is not None:
            c0 = vllm_capacity(model, 0, c_len, fmt, tp, pp, s)
            lo, hi = (b / c0.blocks_per_request for b in blocks_range)
            kv = msg("{lo_b:,} to {hi_b:,} blocks (tokens // {block} x {groups} groups) / {per_request:,} blocks per "
                     "request = {lo:.2f}x to {hi:.2f}x", lo_b=blocks_range[0], hi_b=blocks_range[1],
                     block=c0.block_size, groups=c0.num_kv_groups, per_request=c0.blocks_per_request, lo=lo, hi=hi)
            status = _status(lo - 0.0051 <= float(conc.value) <= hi + 0.0051)
        elif cap_of is not None and engine_blocks is not None:
            c0 = vllm_capacity(model, 0, c_len, fmt, tp, pp, s)
            if _older_concurrency(log):
                pred = engine_blocks * block / c_len
                kv = msg("{blocks:,} blocks x {block} / {m:,} tokens = {ratio:.2f}x (V0 and first V1 releases)",
                         blocks=engine_blocks, block=block, m=c_len, ratio=pred)
            else:
                pred = engine_blocks / c0.blocks_per_request
                kv = msg("{blocks:,} / {per_request:,} blocks per request = {ratio:.2f}x", blocks=engine_blocks,
                         per_request=c0.blocks_per_request, ratio=pred)
            status = _status(abs(pred - float(conc.value)) <= 0.0051)
        elif caps and m_len == c_len:
            lo, hi = caps[0].max_concurrency, caps[1].max_concurrency
            kv = msg("{lo:.2f}x to {hi:.2f}x ({blocks} blocks / {per_request:,} blocks per request)", lo=lo, hi=hi,
                     blocks=_range(caps[0].num_blocks, caps[1].num_blocks), per_request=caps[0].blocks_per_request)
            status = _status(lo - 0.0051 <= float(conc.value) <= hi + 0.0051)
        rows.append(ReconcileRow(msg("Maximum concurrency for {tokens:,} tokens", tokens=c_len), f"{conc.printed}x", kv,
                                 status, NOT_A_HARD_CAP))
        if tokens_r:
            ratio = int(tokens_r.value) / c_len
            if abs(ratio - float(conc.value)) > 0.0051 + 1e-9:
                causes.append(HYBRID_QUIRK)
                rows.append(ReconcileRow(msg("GPU KV cache size / max_model_len"), f"{ratio:.2f}x", "",
                                         msg("engine formula"), msg("the log's own concurrency is {printed}x. "
                                                                    "{hybrid_quirk}", printed=conc.printed,
                                                                    hybrid_quirk=HYBRID_QUIRK)))
    err_len, err_tok = log.first("error_max_seq_len"), log.first("error_kv_tokens")
    if err_len and err_tok:
        kv = (msg("{blocks:,} blocks x {block} = {tokens:,}", blocks=int(blocks_r.value), block=block,
                  tokens=int(blocks_r.value) * block) if blocks_r else "")
        ok = bool(blocks_r) and int(blocks_r.value) * block == err_tok.value
        if not blocks_r and cap_of is not None:
            c0 = cap_of(0)
            n_blocks = int(err_tok.value) // block
            kv = msg("{tokens:,} tokens = {blocks:,} blocks x {block_bytes:,} B = {size} of KV per GPU; one "
                     "{m:,}-token request needs {need:,} blocks", tokens=int(err_tok.value), blocks=n_blocks,
                     block_bytes=c0.bytes_per_block, size=Figure(format_bytes(n_blocks * c0.bytes_per_block)),
                     m=int(err_len.value), need=vllm_capacity(model, 0, int(err_len.value), fmt, tp, pp, s).blocks_per_request)
        rows.append(ReconcileRow(msg("tokens the KV cache can store (start-up error)"), err_tok.printed, kv,
                                 (msg("match") if ok else msg("engine only")),
                                 msg("max_model_len {printed} needs more than the pool: vLLM refuses to start",
                                     printed=err_len.printed)))
    need_r, est_r = log.first("error_needed"), log.first("error_estimated_max_len")
    if err_len and need_r:
        kv, status = "", msg("engine only")
        if cap_of is not None:
            c = vllm_capacity(model, 0, int(err_len.value), fmt, tp, pp, s)
            kv = msg("{size} for one {m:,}-token request", size=Figure(format_bytes(c.needed_bytes)),
                     m=int(err_len.value))
            status = _status(need_r.bytes_lo <= c.needed_bytes <= need_r.bytes_hi)
        rows.append(ReconcileRow(msg("KV one max_model_len request needs (start-up error)"), _gib(need_r), kv, status,
                                 msg("max_memory_usage_bytes summed over the layers: vLLM refuses to start when it "
                                     "exceeds the budget")))
    if est_r and err_budget:
        kv, status = "", msg("engine only")
        if cap_of is not None:
            fit = [vllm_max_model_len(model, b, fmt, tp, pp, s, upper_bound=int(err_len.value) if err_len else None)
                   for b in (err_budget.bytes_lo, err_budget.bytes_hi)]
            kv = _range(fit[0].max_model_len, fit[1].max_model_len)
            status = _status(fit[0].max_model_len <= est_r.value <= fit[1].max_model_len)
        rows.append(ReconcileRow(msg("estimated maximum model length (start-up error)"), est_r.printed, kv, status,
                                 msg("the largest max_model_len whose one request fits the printed budget "
                                     "(binary search, as vLLM's estimate_max_model_len)")))
    pad_r = log.first("padding_layers")
    if pad_r and cap_of is not None:
        pg = paging(model, fmt, tp, pp, s)
        pad = (sum(n * pg.group_size - t.layers for t, n in zip(pg.types, pg.groups_per_type))
               if pg.layout == "hybrid" else 0)
        rows.append(ReconcileRow(msg("padding layers (KV-cache groups)"), pad_r.printed,
                                 msg("{pad} ({groups} groups of {size} layers)", pad=pad, groups=pg.num_kv_groups,
                                     size=pg.group_size),
                                 _status(pad == int(pad_r.value)),
                                 msg("each layer type fills whole KV-cache groups; the last one is padded "
                                     "(_get_kv_cache_groups_uniform_page_size)")))
    weights = log.first("weights")
    if weights:
        if weights.printed.endswith(" GB"):
            # V0's 'Loading model weights took X GB' and early V1's 'Model loading took X GB': both bytes / 2**30
            causes.append(msg("vLLM printed the weights as '{printed}': its model runner's load_model divides bytes "
                              "by 2**30, so the figure is GiB labelled GB.", printed=weights.printed))
        rows.append(ReconcileRow(msg("weights per GPU"), _gib(weights), "", msg("engine only"), msg("as printed")))
    if log.first("hybrid_manager_off") or log.first("kv_connector"):
        why = msg("a KV connector is set") if log.first("kv_connector") else msg("the log says so")
        has_windows = model is not None and any(not isinstance(g, (FullAttentionGroup, MLAGroup))
                                                for g in model.layout(fmt) if g.in_pool)
        effect = (msg("; this model has such layers") if has_windows else
                  msg("; no effect on a full-attention model") if model is not None else "")
        causes.append(msg("vLLM's hybrid KV cache manager is off ({why}): sliding-window and chunked layers store full "
                          "KV{effect}", why=why, effect=effect))
    return rows, pool, tokens, (model, pp, per_token)


def stage_budgets_from_profiling(log: EngineLog, printed: tuple[Reading, ...]) -> tuple[Reading, ...]:
    """The KV budget of every worker whose 'Available KV cache memory' line the log lacks but whose memory-profiling
    line it has: vLLM V1 prints the budget at INFO on the first worker only and each worker's
    "Total non KV cache memory" at DEBUG (``vllm/v1/worker/gpu_worker.py``, ``determine_available_memory``:
    available = requested - non-KV memory, requested = total_memory x gpu_memory_utilization). Both printed figures are
    rounded to 2 decimals (``format_gib``), so the budget is a range: total +- 0.005 GiB x utilization, non-KV +-
    0.005 GiB. Empty when the log lacks the total or the utilization.

    >>> from planner.engines.logs import parse_engine_log
    >>> log = parse_engine_log("'gpu_memory_utilization': 0.95\\n(Worker pid=1) DEBUG [gpu_worker.py:284] worker init "
    ...     "memory snapshot: torch_peak=0.0GiB, total_memory=79.19GiB\\n(Worker_PP1 pid=2) DEBUG [gpu_worker.py:435] "
    ...     "Memory profiling takes 9.5 seconds. Total non KV cache memory: 9.6GiB; weights memory: 7.51GiB.")
    >>> b = stage_budgets_from_profiling(log, ())[0]
    >>> b.rank, round(b.value, 4), b.printed
    ('PP1', 65.6305, '79.19 GiB x 0.95 - 9.6 GiB')
    """
    total, util = log.first("total_gpu_memory"), log.first("gpu_memory_utilization")
    if total is None or util is None:
        return ()
    have = {r.rank for r in printed}
    u = float(util.value)
    out: list[Reading] = []
    for r in log.all("non_kv_memory"):
        if not r.rank or r.rank in have or any(o.rank == r.rank for o in out):
            continue
        value = float(total.value) * u - float(r.value)
        lo = math.floor(((float(total.value) - 0.005) * u - (float(r.value) + 0.005)) * GiB)
        hi = math.ceil(((float(total.value) + 0.005) * u - (float(r.value) - 0.005)) * GiB)
        out.append(Reading("kv_budget", value, f"{total.value:g} GiB x {u:g} - {float(r.value):g} GiB", r.line_no,
                           "vllm", lo, hi, r.rank))
    return tuple(out)


def _pp_index(rank: str) -> int | None:
    """The pipeline stage of a rank prefix ("PP1", "TP0 PP1"), or None."""
    m = re.search(r"\bPP(\d+)\b", rank or "")
    return int(m.group(1)) if m else None


def _stage_models(log: EngineLog, model: ModelSpec, pp: int, refusals: list[str]):
    """``(model restricted to the stage's layers, its layer count)`` for each pipeline stage, or None when the
    layers a group holds are not known (then every rank is priced with the largest stage, ceil(L / PP))."""
    total = model.num_hidden_layers
    if not total or pp > total:
        return None
    found = log.first("pp_partition")
    given = None
    if found is not None:
        try:
            given = tuple(int(x) for x in str(found.value).replace(" ", "").split(",") if x)
        except ValueError:
            given = None
    try:
        parts = pp_partition(total, pp, given)
    except PlanInputError as exc:
        refusals.append(msg("{error}", error=exc))
        return None
    stages, start = [], 0
    for n in parts:
        groups = []
        for g in model.groups:
            if g.layer_ids:
                ids = tuple(i for i in g.layer_ids if start <= i < start + n)
                groups.append(replace(g, num_layers=len(ids), layer_ids=ids))
            elif g.num_layers == total:
                groups.append(replace(g, num_layers=n))
            else:
                return None  # a group over some layers, not known which: not split by stage
        stages.append((replace(model, groups=tuple(g for g in groups if g.num_layers)), n))
        start += n
    return stages


def _tokens_from_concurrency(tokens_r: Reading, conc: Reading | None, conc_m: Reading | None) -> bool:
    """True when the log's "GPU KV cache size" is ``int(concurrency x max_model_len)`` (recent vLLM), told by
    the log's own two lines: tokens / max_model_len rounds to the printed concurrency."""
    if conc is None or conc_m is None:
        return False
    return abs(int(tokens_r.value) / int(conc_m.value) - float(conc.value)) <= 0.005 + 1e-9


def _best_fit(model, fmt, tp, pp, implied, per_token):
    """Bytes per token of the stated and candidate KV formats beside the log's implied range."""
    lo, hi = implied
    mid = (lo + hi) / 2
    cands = {fmt or "native": per_token}
    for f in CANDIDATE_FORMATS:
        try:
            cands.setdefault(f, _pool_token_bytes(model, f, tp, pp))
        except PlanInputError:
            continue
    best = min(cands, key=lambda f: abs(cands[f] - mid))
    exact = lo <= per_token <= hi
    shown = None  # "native: 48,128 B; fp8: 24,064 B", a Message per part (a user interface translates each)
    for f, b in cands.items():
        part = msg("{format}: {bytes:,} B", format=_format_word(f), bytes=b)
        shown = part if shown is None else msg("{list}; {item}", list=shown, item=part)
    rows = [ReconcileRow(msg("bytes per token per GPU"), msg("{lo:,.0f} to {hi:,.0f} B (budget / tokens)", lo=lo, hi=hi),
                         msg("{per_token:,} B ({shown})", per_token=per_token, shown=shown), (msg("match") if exact else msg("differs")),
                         msg("the log's budget and token count imply this range{nearest}", nearest="" if exact else
                             msg("; the nearest KV format is {best} ({off:.1%} off)", best=_format_word(best),
                                 off=abs(cands[best] - mid) / mid)))]
    return best, rows


def _format_word(fmt: str) -> str:
    """A KV format id as shown in a sentence: "native" is a word (a Message), other ids are names."""
    return msg("native") if fmt == "native" else fmt


def pair_summary(a: Reconciliation, b: Reconciliation, tolerance: float = 0.02) -> str | None:
    """One sentence for two logs of the same model: same per-token cost and different budgets, or None.

    Each log's implied bytes per token must lie within ``tolerance`` of kvplan's
    figure (and its best fit be the stated format); otherwise no claim is made.
    """
    if a.kv_bytes_per_token_per_gpu is None or a.kv_bytes_per_token_per_gpu != b.kv_bytes_per_token_per_gpu:
        return None
    pt = a.kv_bytes_per_token_per_gpu
    for r in (a, b):
        if r.implied_bytes_per_token is None or r.pool_bytes is None or not r.pool_tokens:
            return None
        lo, hi = r.implied_bytes_per_token
        if not (lo * (1 - tolerance) <= pt <= hi * (1 + tolerance)):
            return None
    ga, gb = (sum(r.pool_bytes) // 2 for r in (a, b))
    names = {"vllm": "vLLM", "sglang": "SGLang"}
    return (msg("Both engines store {pt:,} B per token per GPU; only the budgets differ: {names} {size} holds "
                "{pool_tokens:,} tokens, {names2} {size2} holds {pool_tokens2:,} tokens per GPU ({value:.2f}x).",
                pt=pt, names=names[a.engine], size=Figure(format_bytes(ga)), pool_tokens=a.pool_tokens,
                names2=names[b.engine], size2=Figure(format_bytes(gb)), pool_tokens2=b.pool_tokens,
                value=b.pool_tokens / a.pool_tokens))
