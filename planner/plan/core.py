"""The plan's arithmetic, written once over numpy values.

:func:`evaluate` computes every phase of a plan (usable KV, sessions, misses
and replay, tiers, request rate) on numpy arrays that broadcast together. The
scalar :func:`planner.plan.plan` calls it with 0-d arrays; the frontier grid
(:func:`planner.frontier.frontier_grid`) calls it with an accelerator axis, a
context axis and a hit-rate axis. There is no second copy of any formula.

The session model of docs/capacity.md (sessions first, then the replay penalty), with context
``N`` tokens, shared prefix ``s`` (a fraction of ``N`` common to many concurrent
sessions, stored once per KV domain per distinct prefix), prefix hit rate ``h``
(every reused token, a session's own history included: it saves prefill work,
never memory), ``T`` output tokens and ``K`` distinct shared prefixes:

* KV domain: the GPUs that hold one session's KV together. Under
  ``attention_parallelism="tp"`` the replica (its TP ranks split KV heads,
  ``max(1, H_kv // TP)`` each, as vLLM ``ModelConfig.get_num_kv_heads``; MLA
  latents replicated); under ``"dp"`` one pipeline of ``PP`` GPUs at TP 1.
  Every byte figure is per GPU (the GPU of the largest pipeline stage);
  session counts are per domain;
* ``usable_kv_bytes = floor(hbm_bytes * gpu_memory_utilization) - weights_bytes_per_gpu - reserve_bytes``
  (weights: total parameters / GPUs per replica), or the measured figure;
* ``per_session_bytes = growing(N+T) - growing(floor(s*N)) + capped(N+T) + state_in_hbm * state(N+T)``;
* sessions per domain ``= floor((usable - K * shared) / per_session)`` when at
  least ``K`` sessions fit, else ``floor(usable / (shared + per_session))``:
  the *steady state* (windows only, the upper bound);
* with ``engine="sglang"``: ``min(pool_tokens // (N+T), max_running_requests)``
  (:class:`planner.engines.sglang_admission.SGLangAdmission`; a sliding-window pool
  holds each request's window plus one prefill chunk);
* with ``engine="vllm"`` the sessions are vLLM's *admission figure* instead:
  ``floor(num_blocks / blocks_per_request(N+T))``, full-length requests it admits at
  once (:class:`planner.engines.capacity.VLLMAdmission`; a sliding-window layer
  reserves its window plus one prefill chunk); the steady state stays beside it
  (``steady_sessions``). Every figure after this line (rates, tiers, the frontier,
  recommend, the CSV) follows the sessions chosen here;
* ``miss_probability = P(pause > TTL)``; a miss replays ``min(W, N)`` tokens
  at ``prefill_tokens_per_s``; a hit reloads the window state over the host link;
* tiers: :func:`planner.catalog.tiers.place_counts`;
* each request prefills the prompt tokens the cache does not hold,
  ``prefill_tokens_per_request = N - floor(h*N)``, at ``prefill_tokens_per_s``:
  it adds to the time to first token and to the GPU seconds of a request;
* ``request_rate_per_s = min(1 / gpu_seconds_per_request, sessions_per_gpu /
  time_per_request_s)`` (Little's law), per GPU.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from planner.catalog.tiers import reload_seconds
from planner.engines.capacity import VLLMAdmission, vllm_admission
from planner.engines.sglang_admission import SGLangAdmission, sglang_admission
from planner.errors import MISSING, PlanInputError
from planner.hf.weights import checkpoint_weights, weights_refusal_reason
from planner.messages import msg
from planner.kv.models import ModelSpec
from planner.plan.inputs import MAX_SESSIONS_PER_GPU, PlanInputs
from planner.plan.lengths import growing_bytes_array, per_length
from planner.plan.placement import PlacementCounts, place_counts
from planner.units import cdiv, gib_to_bytes


# ---------------------------------------------------------------------------
# Parallel layout
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class KVSplit:
    """How a replica's GPUs hold attention KV.

    Attributes:
        tp: tensor-parallel degree the KV is split at (1 under ``dp``).
        pp: pipeline stages (layers split in both modes).
        domain_gpus: GPUs holding one session's KV together (``G`` under ``tp``, ``PP`` under ``dp``).
        domains_per_replica: ``gpus_per_replica / domain_gpus``.
    """

    tp: int
    pp: int
    domain_gpus: int
    domains_per_replica: int


def kv_split(inputs: PlanInputs) -> KVSplit:
    """The :class:`KVSplit` of these inputs (``TP = gpus_per_replica / pipeline_parallel_size``).

    >>> from planner.plan.inputs import PlanInputs
    >>> kv_split(PlanInputs(gpus_per_replica=8))
    KVSplit(tp=8, pp=1, domain_gpus=8, domains_per_replica=1)
    >>> kv_split(PlanInputs(gpus_per_replica=8, attention_parallelism="dp"))
    KVSplit(tp=1, pp=1, domain_gpus=1, domains_per_replica=8)
    """
    g, pp = inputs.gpus_per_replica, inputs.pipeline_parallel_size
    if inputs.attention_parallelism == "tp":
        return KVSplit(tp=g // pp, pp=pp, domain_gpus=g, domains_per_replica=1)
    return KVSplit(tp=1, pp=pp, domain_gpus=pp, domains_per_replica=g // pp)


# ---------------------------------------------------------------------------
# Phases
# ---------------------------------------------------------------------------


def sessions_that_fit(usable_bytes, prefix_bytes, per_session_bytes, num_prefixes=1):
    """Sessions whose tails fit in ``usable_bytes`` next to the shared prefixes (numpy values, int64).

    Each of ``num_prefixes`` prefixes is stored once while at least one of its
    sessions is resident. With room for every prefix and one session each,
    ``(usable - K * prefix) // per_session``; otherwise fewer sessions than
    prefixes fit and each brings its own: ``usable // (prefix + per_session)``.
    Capped at :data:`MAX_SESSIONS_PER_GPU` when sessions cost nothing of their own.

    >>> int(sessions_that_fit(107_374_182_400, 445_000_000, 445_000_000))   # the golden V4.1 case
    240
    >>> int(sessions_that_fit(10, 3, 2, num_prefixes=3))   # 3 x (3 + 2) > 10: each session brings its prefix
    2
    """
    usable = np.asarray(usable_bytes, dtype=np.int64)
    shared = np.asarray(prefix_bytes, dtype=np.int64)
    per = np.asarray(per_session_bytes, dtype=np.int64)
    k = np.int64(num_prefixes)
    unit = shared + per
    room = np.maximum(usable, 0)
    every_prefix = (room // k) >= unit  # usable >= K * unit, without overflowing K * unit
    k_shared = np.minimum(shared, room // k) * k  # K * shared where every prefix fits (bounded by usable)
    s_all = np.where(per > 0, (room - k_shared) // np.maximum(per, 1), MAX_SESSIONS_PER_GPU)
    s_few = room // np.maximum(unit, 1)
    s = np.where(every_prefix, s_all, s_few)
    s = np.where(unit == 0, MAX_SESSIONS_PER_GPU, s)
    s = np.where(usable <= 0, 0, s)
    return np.minimum(s, MAX_SESSIONS_PER_GPU).astype(np.int64)


def miss_probability(pause_mean_s, ttl_s, distribution: str = "exponential"):
    """P(pause > TTL): the chance a resumed session finds its window state expired (numpy values).

    Exponential pauses with mean ``m``: ``P(X > TTL) = exp(-TTL / m)``. A fixed
    pause ``m``: 1 when ``m > TTL``, else 0 (a state is still there at exactly
    its TTL). No pause (``m = 0``): 0. ``TTL = 0`` with any pause: 1 (never
    persisted, as vLLM).

    >>> round(float(miss_probability(60, 60)), 6), float(miss_probability(30, 60, "fixed"))
    (0.367879, 0.0)
    """
    m = np.asarray(pause_mean_s, dtype=np.float64)
    ttl = np.asarray(ttl_s, dtype=np.float64)
    if distribution == "fixed":
        p = np.where(m > ttl, 1.0, 0.0)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            p = np.exp(-ttl / np.where(m > 0, m, 1.0))
    return np.where(m <= 0, 0.0, p)


def state_alive_fraction(pause_mean_s, ttl_s, distribution: str = "exponential"):
    """Share of paused sessions whose window state is still held: ``E[min(X, TTL)] / E[X]`` (numpy values).

    Exponential: ``1 - exp(-TTL/m)``; fixed: ``min(m, TTL) / m``; no pause: 1.
    """
    m = np.asarray(pause_mean_s, dtype=np.float64)
    ttl = np.asarray(ttl_s, dtype=np.float64)
    safe = np.where(m > 0, m, 1.0)
    with np.errstate(over="ignore"):  # TTL / a denormal pause: -inf, so every state expired
        a = np.minimum(m, ttl) / safe if distribution == "fixed" else -np.expm1(-ttl / safe)
    return np.where(m <= 0, 1.0, a)


def replay_window_tokens(model: ModelSpec, kv_format: str | None = None) -> int:
    """The window W a miss replays: the widest out-of-pool window ring (0 when none).

    DeepSeek V4.1-Flash: 128 (the per-layer SWA ring kept in host RAM).
    """
    windows = [g.cap_tokens or 0 for g in model.layout(kv_format) if not g.in_pool]
    return max(windows, default=0)


def weights_per_gpu(inputs: PlanInputs, model: ModelSpec) -> int:
    """Weight bytes on each GPU: one replica's weights / gpus_per_replica (rounded up).

    The catalog prices total parameters (all experts), never active ones. A model without a parameter
    count (an imported config.json) takes its checkpoint's weights, class by class
    (:func:`planner.hf.weights.checkpoint_weights`, the whole model at TP 1); where they cannot be derived,
    ``weights_gib`` is needed and its absence is refused, naming the field the config lacks.
    """
    if inputs.weights_gib is not None:
        return cdiv(gib_to_bytes(inputs.weights_gib), inputs.gpus_per_replica)
    if model.total_params is None:
        if inputs.weight_format is not None:
            raise PlanInputError("weights_gib", MISSING, msg(
                "the weights of one replica in GiB (--weights-gib): weight format {fmt} needs a parameter count, "
                "and {id} carries none", fmt=inputs.weight_format, id=model.name))
        if model.checkpoint_config is not None:
            try:
                return cdiv(checkpoint_weights(model.checkpoint_config).weight_bytes, inputs.gpus_per_replica)
            except PlanInputError as exc:
                raise PlanInputError("weights_gib", MISSING, msg(
                    "the weights of one replica in GiB (--weights-gib): {id}'s checkpoint weights cannot be "
                    "derived from its config ({why})", id=model.name, why=weights_refusal_reason(exc))) from None
        raise PlanInputError("weights_gib", MISSING, msg("the weights of one replica in GiB (--weights-gib): {id} carries "
                                                      "no parameter count (a config.json gives none), so its weights "
                                                      "cannot be derived", id=model.name))  # the name the user knows
    return cdiv(model.weights_bytes(inputs.weight_format), inputs.gpus_per_replica)


@dataclass(frozen=True)
class HardwareArrays:
    """Per-accelerator figures (numpy values broadcasting with the other axes).

    Attributes:
        hbm_bytes: HBM per GPU (int64).
        measured_usable_bytes: measured usable KV per GPU (int64), -1 where not measured.
        host_link_bytes_per_s, ssd_link_bytes_per_s: link bandwidths (float64).
        host_ram_bytes, ssd_bytes: tier capacities per GPU (int64).
        decode_tokens_per_s, prefill_tokens_per_s: throughputs per GPU (float64).
    """

    hbm_bytes: np.ndarray
    measured_usable_bytes: np.ndarray
    host_link_bytes_per_s: np.ndarray
    ssd_link_bytes_per_s: np.ndarray
    host_ram_bytes: np.ndarray
    ssd_bytes: np.ndarray
    decode_tokens_per_s: np.ndarray
    prefill_tokens_per_s: np.ndarray


@dataclass(frozen=True)
class PlanArrays:
    """Every figure of :func:`evaluate`, as numpy arrays broadcast over the inputs' axes.

    Bytes are int64 per GPU; sessions per KV domain (``sessions``), per GPU
    (``sessions_per_gpu``, float64: a share under ``tp``) and per replica
    (int64); seconds and rates float64 (NaN rates when there is no output).
    """

    split: KVSplit
    usable_kv_bytes: np.ndarray
    usable_measured: np.ndarray
    prefix_tokens: np.ndarray
    shared_prefix_bytes: np.ndarray
    growing_total_bytes: np.ndarray
    capped_bytes: np.ndarray
    state_bytes: np.ndarray
    per_session_bytes: np.ndarray
    sessions: np.ndarray
    sessions_per_gpu: np.ndarray
    sessions_per_replica: np.ndarray
    parked_state: np.ndarray
    miss_probability: np.ndarray
    state_alive_fraction: np.ndarray
    replay_window_tokens: int
    replay_tokens_per_miss: np.ndarray
    replay_tokens_per_turn: np.ndarray
    replay_seconds_per_miss: np.ndarray
    replay_seconds_per_turn: np.ndarray
    state_reload_s: np.ndarray
    active_fraction: np.ndarray
    target_sessions: np.ndarray
    reload_from_host_s: np.ndarray
    reload_from_ssd_s: np.ndarray
    recompute_s: np.ndarray
    restore_s: np.ndarray
    ttft_s: np.ndarray
    time_per_request_s: np.ndarray
    gpu_seconds_per_request: np.ndarray
    replay_share_of_gpu_time: np.ndarray
    prompt_prefill_tokens: np.ndarray
    prompt_prefill_s: np.ndarray
    new_session_prefill_s: np.ndarray
    request_rate_per_s: np.ndarray
    limited_by_sessions: np.ndarray
    weights_bytes_per_gpu: int
    reserve_bytes: int
    placement: PlacementCounts | None
    steady_sessions: np.ndarray | None = None
    admission: Admission | None = None


@dataclass(frozen=True)
class Admission:
    """Which figure a plan's sessions follow, and the engine arithmetic behind it.

    Attributes:
        basis: "steady state" (kvplan's windows-only model) or "engine admission".
        vllm: vLLM's admission arithmetic when it drives the sessions, else None.
        sglang: SGLang's admission arithmetic when it drives the sessions, else None.
        reason: why the steady state drives them with an engine named ("" otherwise).
    """

    basis: Literal["steady state", "engine admission"]
    vllm: VLLMAdmission | None = None
    sglang: SGLangAdmission | None = None
    reason: str = ""


def engine_admission(inputs: PlanInputs, model: ModelSpec, kv_format: str, split: KVSplit,
                     request_tokens: int = 1) -> Admission:
    """The admission model of ``inputs.engine`` for this layout (per KV domain, at TP ``split.tp``), for requests
    of ``request_tokens`` tokens (context + output): under PP the pipeline stage vLLM's paging binds on is chosen
    at that length (:func:`planner.engines.capacity.vllm_admission`'s ``num_tokens``).

    vLLM: :func:`planner.engines.capacity.vllm_admission` at its defaults (block
    size 16, ``max_num_batched_tokens`` 8192; the launch flags set both). SGLang:
    :func:`planner.engines.sglang_admission.sglang_admission` at its defaults (page
    size 1, chunked prefill 8192, ``--swa-full-tokens-ratio`` 0.8). Layouts an
    engine's pools are not modelled for keep the steady state, with the reason.
    """
    if inputs.engine is None:
        return Admission("steady state")
    if inputs.engine == "sglang":
        try:
            return Admission("engine admission", sglang=sglang_admission(model, kv_format, split.tp, split.pp))
        except PlanInputError as exc:
            return Admission("steady state", reason=msg("SGLang's admission is modelled for {what}",
                                                         what=exc.allowed))
    try:
        return Admission("engine admission", vllm=vllm_admission(model, kv_format, split.tp, split.pp,
                                                                 num_tokens=max(int(request_tokens), 1)))
    except PlanInputError as exc:
        return Admission("steady state", reason=msg("vLLM's admission is modelled for {what}",
                                                     what=exc.allowed))


def admitted_sessions(adm, usable_bytes, request_tokens):
    """``floor(num_blocks / blocks_per_request(request_tokens))`` over numpy values (int64).

    ``adm``: one :class:`VLLMAdmission`, or a function of the request length giving the admission whose binding
    pipeline stage is chosen at that length (a frontier grid's context axis: each length its own stage).
    """
    usable = np.asarray(usable_bytes, dtype=np.int64)
    tokens = np.asarray(request_tokens, dtype=np.int64)
    uniq, inverse = np.unique(tokens, return_inverse=True)
    per_length = [adm(int(m)) if callable(adm) else adm for m in uniq]
    per_request = np.array([a.blocks_per_request(int(m)) for a, m in zip(per_length, uniq)],
                           dtype=np.int64)[inverse].reshape(tokens.shape)
    per_block = np.array([a.bytes_per_block for a in per_length], dtype=np.int64)[inverse].reshape(tokens.shape)
    num_blocks = np.maximum(usable, 0) // per_block
    return (num_blocks // per_request).astype(np.int64)


def evaluate(inputs: PlanInputs, model: ModelSpec, kv_format: str, hw: HardwareArrays, context_tokens,
             shared_prefix, hit_rate) -> PlanArrays:
    """Every phase of the plan over numpy values that broadcast together.

    Args:
        inputs: every input not given as an array here.
        model: the model that prices KV (measured coefficient applied, see
            :func:`planner.plan.result.effective_model`), in ``kv_format``.
        hw: per-accelerator figures.
        context_tokens: int64 values in [1, MAX_CONTEXT_TOKENS].
        shared_prefix: float64 values in [0, 1]: the share of the context stored once per prefix (memory).
        hit_rate: float64 values in [0, 1]: the share of each prompt read from cache (prefill work, TTFT).
    """
    split = kv_split(inputs)
    tp, pp = split.tp, split.pp
    fmt = kv_format
    n = np.asarray(context_tokens, dtype=np.int64)
    s_frac = np.asarray(shared_prefix, dtype=np.float64)
    h = np.asarray(hit_rate, dtype=np.float64)
    t = inputs.output_tokens
    k = inputs.shared_prefixes

    # -- 1. memory: usable KV, then sessions ----------------------------------
    weights = weights_per_gpu(inputs, model)
    reserve = gib_to_bytes(inputs.reserve_gib)
    hbm = np.asarray(hw.hbm_bytes, dtype=np.int64)
    computed = np.floor(hbm * inputs.gpu_memory_utilization).astype(np.int64) - weights - reserve
    measured = np.asarray(hw.measured_usable_bytes, dtype=np.int64)
    usable = np.where(measured >= 0, measured, computed)

    total = n + t
    prefix = np.floor(s_frac * n).astype(np.int64)
    shared = growing_bytes_array(model, prefix, fmt, tp, pp)
    growing_total = growing_bytes_array(model, total, fmt, tp, pp)
    capped = per_length(model.capped_bytes, total, fmt, tp, pp)
    state = per_length(model.state_bytes_outside_pool, total, fmt, tp, pp)
    per = growing_total - shared + capped + (state if inputs.state_in_hbm else 0)
    steady = sessions_that_fit(usable, shared, per, k)
    # the binding PP stage is chosen at the plan's request length (each length of a grid its own)
    admission = engine_admission(inputs, model, fmt, split, int(total) if total.ndim == 0
                                 else inputs.context_tokens + t)
    if admission.vllm is not None:
        def at_length(m: int) -> VLLMAdmission:
            return admission.vllm if split.pp == 1 else vllm_admission(model, fmt, split.tp, split.pp, num_tokens=m)

        sessions = np.minimum(admitted_sessions(at_length, usable, total), MAX_SESSIONS_PER_GPU)
    elif admission.sglang is not None:
        sessions = np.minimum(admission.sglang.admitted(usable, total), MAX_SESSIONS_PER_GPU)
    else:
        sessions = steady
    per_gpu = sessions / np.float64(split.domain_gpus)
    per_replica = sessions * np.int64(split.domains_per_replica)

    # -- 2. misses and replay ---------------------------------------------------
    pause = inputs.pause_mean_s
    prefill = np.asarray(hw.prefill_tokens_per_s, dtype=np.float64)
    parked_state = (not inputs.state_in_hbm) & (state > 0)
    window = replay_window_tokens(model, fmt)
    p_miss = np.where(parked_state, miss_probability(pause, inputs.ttl_s, inputs.pause_distribution), 0.0)
    alive = np.where(parked_state, state_alive_fraction(pause, inputs.ttl_s, inputs.pause_distribution), 1.0)
    replay_per_miss = np.where(parked_state, np.minimum(window, n), 0)
    replay_tokens_turn = p_miss * replay_per_miss
    replay_s_miss = replay_per_miss / prefill
    replay_s_turn = np.where(p_miss > 0, p_miss * replay_s_miss, 0.0)  # no miss, no replay (never 0 x a huge figure)
    host_bw = np.asarray(hw.host_link_bytes_per_s, dtype=np.float64)
    state_reload = np.where(parked_state, reload_seconds(state, host_bw), 0.0)
    ring_restore = np.where(parked_state & (pause > 0), (1.0 - p_miss) * state_reload + replay_s_turn, 0.0)
    decode_s = t / inputs.session_decode_tokens_per_s
    turn = ring_restore + decode_s
    active = turn / (turn + pause) if pause > 0 else np.ones_like(turn)

    # -- 3. tiers ------------------------------------------------------------------
    reload_host = reload_seconds(per, host_bw)
    reload_ssd = reload_seconds(per, np.minimum(host_bw, np.asarray(hw.ssd_link_bytes_per_s, dtype=np.float64)))
    tail_recompute_tokens = n - prefix + t
    recompute = tail_recompute_tokens / prefill
    counts = None
    tail_restore = recompute_tokens_turn = 0.0
    if inputs.target_sessions_per_gpu is None:
        # carrying what HBM holds: place_counts admits every session into HBM and parks none
        # (tests/test_tiers.py), so no tail is restored; the placement itself is built for one plan only
        target = sessions
    else:
        target = np.int64(min(inputs.target_sessions_per_gpu * split.domain_gpus, MAX_SESSIONS_PER_GPU))
        counts = place_counts(target, hbm_sessions=sessions, active_fraction=active, num_prefixes=k,
                              per_session_bytes=per, state_bytes=np.where(parked_state, state, 0),
                              state_alive_fraction=alive, host_ram_bytes=hw.host_ram_bytes, ssd_bytes=hw.ssd_bytes)
        paused = counts.admitted - counts.active
        some_parked = (paused > 0) & (pause > 0)
        safe_paused = np.where(some_parked, paused, 1)
        tail_restore = np.where(some_parked, (counts.in_host_ram * reload_host + counts.on_ssd * reload_ssd
                                              + counts.evicted * recompute) / safe_paused, 0.0)
        recompute_tokens_turn = np.where(some_parked, counts.evicted * tail_recompute_tokens / safe_paused, 0.0)
    restore = ring_restore + tail_restore
    prompt_prefill_tokens = n - np.floor(h * n).astype(np.int64)  # the prompt tokens no cache holds
    prompt_prefill_s = prompt_prefill_tokens / prefill
    ttft = restore + prompt_prefill_s + 1.0 / inputs.session_decode_tokens_per_s

    # -- 4. request rate -------------------------------------------------------------
    decode = np.asarray(hw.decode_tokens_per_s, dtype=np.float64)
    shape = np.broadcast(usable, shared, restore, decode, prefill, prompt_prefill_s).shape
    if t == 0:
        nan = np.full(shape, np.nan)
        time_per_request = gpu_seconds = rate = nan
        replay_share = np.zeros(shape)
        by_sessions_limit = np.zeros(shape, dtype=bool)
    else:
        time_per_request = restore + prompt_prefill_s + decode_s
        extra_prefill_s = (prompt_prefill_tokens + replay_tokens_turn + recompute_tokens_turn) / prefill
        gpu_seconds = t / decode + extra_prefill_s
        replay_share = replay_s_turn / gpu_seconds
        # decode / T exactly when nothing is replayed (the no-miss figure, to the last bit)
        by_throughput = np.where(extra_prefill_s == 0, decode / t, 1.0 / gpu_seconds)
        by_sessions = per_gpu / time_per_request
        rate = np.minimum(by_throughput, by_sessions)
        by_sessions_limit = by_throughput > by_sessions

    return PlanArrays(
        split=split, usable_kv_bytes=usable, usable_measured=measured >= 0, prefix_tokens=prefix,
        shared_prefix_bytes=shared, growing_total_bytes=growing_total, capped_bytes=capped, state_bytes=state,
        per_session_bytes=per, sessions=sessions, sessions_per_gpu=per_gpu, sessions_per_replica=per_replica,
        parked_state=parked_state, miss_probability=p_miss, state_alive_fraction=alive, replay_window_tokens=window,
        replay_tokens_per_miss=replay_per_miss, replay_tokens_per_turn=replay_tokens_turn,
        replay_seconds_per_miss=replay_s_miss, replay_seconds_per_turn=replay_s_turn, state_reload_s=state_reload,
        active_fraction=active, target_sessions=np.asarray(target), reload_from_host_s=reload_host,
        reload_from_ssd_s=reload_ssd, recompute_s=recompute, restore_s=restore, ttft_s=ttft,
        time_per_request_s=time_per_request, gpu_seconds_per_request=gpu_seconds,
        replay_share_of_gpu_time=replay_share, prompt_prefill_tokens=prompt_prefill_tokens,
        prompt_prefill_s=prompt_prefill_s, new_session_prefill_s=(n - prefix) / prefill,
        request_rate_per_s=rate, limited_by_sessions=by_sessions_limit, weights_bytes_per_gpu=weights,
        reserve_bytes=reserve, placement=counts, steady_sessions=steady, admission=admission,
    )
