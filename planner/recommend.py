"""Recommend: the fewest GPUs (then the lowest cost) that meet a capacity target, searched with the array plan.

The search covers accelerators x GPUs per replica x attention parallelism x KV
format (x weight format). For each (GPUs per replica, attention, KV format,
weight format) one :func:`planner.frontier.frontier_grid` call evaluates the
plan on every accelerator at once (the frontier's array arithmetic, equal to
:func:`planner.plan.plan` point for point); no Python loop per plan. The hit
rate is the base plan's, or (``hit_rate_curve``) the one each configuration's
own KV pool measures on a trace; throughputs may be scaled per accelerator.

Target, for a whole deployment of identical replicas:

* ``sessions``: concurrent sessions; capacity = replicas x sessions per replica;
* ``requests_per_s``: requests per second; capacity = replicas x GPUs per
  replica x the plan's request rate per GPU (decode throughput and Little's law
  at ``session_decode_tokens_per_s``).

A **headroom target** ``h`` (default :data:`DEFAULT_HEADROOM`, 20 %) asks for
``required = target x (1 + h)``: replicas = ceil(required / capacity of one
replica), so every row, the top one included, has at least that headroom
(capacity / target - 1 >= h). Total GPUs = replicas x GPUs per replica; cost
per hour = total GPUs x the accelerator's price per GPU-hour (when given).
Rows rank by total GPUs, then cost, then headroom.

Each checked row states its assumptions in words (``assumptions``: hit rate,
shared prefix, attention parallelism, KV and weight formats) and carries the
**no-sharing answer** beside it: the same configuration with no shared prefix
(``shared_prefix = 0``), its replicas and total GPUs for the same required
capacity (``replicas_no_sharing``, ``total_gpus_no_sharing``; empty when not
one session fits). The Pareto front keeps the rows no other row beats on
both GPUs (or cost) and headroom.

Every returned row is verified by the scalar plan (:func:`planner.plan.plan`
on that row's inputs gives the same sessions per replica and rate) and checked to
be minimal: one GPU fewer (total - 1) leaves at most ``replicas - 1`` whole
replicas, whose capacity is below the required capacity; the row says so with the figure.

Attention parallelism (``tp`` or ``dp``) and the figures per replica come from
the plan itself (:mod:`planner.plan`): under ``tp`` a replica's GPUs split
each session's KV heads and sessions are counted per replica; under ``dp``
each GPU holds whole sessions. Pipeline parallel is not an axis (1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Mapping, Sequence

import numpy as np
import pandas as pd

from planner.plan import PlanInputs, kv_split, plan, rebase
from planner.traces.readers import Trace
from planner.traces.stack import (
    MAX_CAPACITY_BLOCKS,
    ReuseProfile,
    capacity_curve,
    check_ttl_s,
    require_hashes,
    reuse_profile,
)
from planner.catalog.entries import get_model
from planner.errors import PlanInputError
from planner.frontier import Accelerator, frontier_grid
from planner.kv.notes import past_maximum_note
from planner.units import format_figure
from planner.messages import Figure, msg

Target = Literal["sessions", "requests_per_s"]
ATTENTION_MODES = ("tp", "dp")
"""Attention parallelism the plan models (:data:`planner.plan.inputs.AttentionParallelism`)."""
DEFAULT_GPUS_PER_REPLICA = (1, 2, 4, 8)
MAX_CONFIGS = 200_000
"""Largest search accepted (accelerators x GPUs per replica x KV formats x weight formats)."""
MAX_TARGET = 1e12
MAX_REPLICAS = 10**9
DEFAULT_HEADROOM = 0.2
"""Headroom asked of every row by default: capacity at least 1.2 x the target."""
MAX_HEADROOM = 10.0
"""Largest headroom target accepted (capacity 11 x the target)."""

COLUMNS: tuple[str, ...] = (
    "rank", "accelerator", "gpu_id", "gpus_per_replica", "attention", "kv_format", "weight_format", "hit_rate",
    "shared_prefix", "replicas",
    "total_gpus", "sessions_per_replica", "sessions_per_gpu", "request_rate_per_gpu", "decode_tokens_per_s",
    "prefill_tokens_per_s", "capacity", "target", "required", "headroom",
    "price_per_gpu_hour", "cost_per_hour", "pareto", "verified", "one_fewer", "assumptions",
    "replicas_no_sharing", "total_gpus_no_sharing",
)
"""Column contract of :attr:`Recommendation.frame` (capacity and target in the target's unit)."""


@dataclass(frozen=True, eq=False)
class HitRateCurve:
    """A trace's measured prefix hit rate as a function of the cache's size (exact at every size asked for).

    The cache is one KV domain's pool: the usable KV of a GPU, counted in
    tokens at the configuration's own bytes per token per GPU (its TP and KV
    format). Hit rates are token hit rates of an LRU prefix cache
    (:func:`planner.traces.stack.capacity_curve`) with an optional TTL.
    """

    profile: ReuseProfile
    ttl_s: float | None = None

    def at_tokens(self, capacity_tokens: np.ndarray) -> np.ndarray:
        """Token hit rate at each capacity (tokens, any shape; whole blocks only count)."""
        tokens = np.asarray(capacity_tokens, dtype=np.float64)
        blocks = np.clip(np.floor(tokens / self.profile.block_tokens), 0, MAX_CAPACITY_BLOCKS).astype(np.int64)
        flat = capacity_curve(self.profile, blocks.ravel(), ttl_s=self.ttl_s)["token_hit_rate"].to_numpy()
        return flat.astype(np.float64).reshape(blocks.shape)


def trace_hit_rate_curve(trace: Trace, ttl_s: float | None = None) -> HitRateCurve:
    """The :class:`HitRateCurve` of a trace with prefix block hashes.

    Raises:
        PlanInputError: a trace without prefix hashes, or a bad TTL.
    """
    require_hashes(trace)
    return HitRateCurve(reuse_profile(trace), check_ttl_s(ttl_s))


@dataclass(frozen=True)
class Recommendation:
    """The ranked configurations that meet the target.

    Attributes:
        target_kind: "sessions" or "requests_per_s"; target: its value.
        frame: one row per feasible configuration (:data:`COLUMNS`), ranked.
        inputs: the plan inputs of the first ``verify`` rows (same order), for share links and ``kvplan plan``.
        searched: configurations evaluated; infeasible: those where nothing fits.
        refused: what was asked for but not searched, with the reason.
        notes: what the plan itself warns of for every row (context + output past the model's maximum
            context: the rows are computed, the model cannot serve them), as :func:`planner.plan.plan` does.
    """

    target_kind: str
    target: float
    headroom: float
    frame: pd.DataFrame
    inputs: tuple[PlanInputs, ...]
    searched: int
    infeasible: int
    refused: tuple[str, ...]
    notes: tuple[str, ...] = ()


def _check_target(kind: str, value: float) -> float:
    if kind not in ("sessions", "requests_per_s"):
        raise PlanInputError("target", kind, msg("sessions or requests_per_s"))
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value <= MAX_TARGET:
        raise PlanInputError(kind, value, msg("a finite number in (0, {max_target:,.0f}]", max_target=MAX_TARGET))
    return float(value)


def recommend(
    base: PlanInputs,
    accelerators: Sequence[Accelerator],
    *,
    target_kind: Target = "sessions",
    target: float,
    gpus_per_replica: Sequence[int] = DEFAULT_GPUS_PER_REPLICA,
    kv_formats: Sequence[str] = ("native",),
    weight_formats: Sequence[str | None] = (None,),
    attention: Sequence[str] = ATTENTION_MODES,
    prices: Mapping[str, float] | None = None,
    verify: int | None = None,
    hit_rate_curve: HitRateCurve | None = None,
    scale_throughput: bool = False,
    headroom: float = DEFAULT_HEADROOM,
) -> Recommendation:
    """Search configurations meeting ``target`` and rank them (fewest GPUs, then cost, then headroom).

    Args:
        base: every other plan input (model, context, hit rate, TTL, pauses, throughputs).
        accelerators: the accelerators to search (catalog, ``custom:N`` or user-defined).
        target_kind, target: concurrent sessions, or requests per second, for the deployment.
        gpus_per_replica: GPUs per replica to try (each in [1, 1024]).
        kv_formats, weight_formats: formats to try (``native`` / None = the model's).
        attention: attention parallelism to try (:data:`ATTENTION_MODES`; others are refused).
        prices: price per GPU-hour by accelerator id (overrides a user accelerator's own price).
        verify: check this many top rows with the scalar plan and build their inputs (None: every row).
        hit_rate_curve: a trace's hit rate vs cache size instead of ``base.hit_rate``: each configuration
            plans at the hit rate its own KV pool measures on the trace (the row's inputs carry it).
        scale_throughput: scale the base plan's decode throughput by HBM bandwidth and its prefill
            throughput by dense BF16 FLOP/s per accelerator, relative to ``base``'s accelerator (as the
            frontier does); the row's inputs carry the scaled figures.
        headroom: the headroom every row must have, a fraction in [0, :data:`MAX_HEADROOM`]: capacity at
            least ``target x (1 + headroom)``.

    Raises:
        PlanInputError: a bad target, an empty axis, an out-of-range value, a search over
            :data:`MAX_CONFIGS`, or a row the scalar plan contradicts.
    """
    target = _check_target(target_kind, target)
    if isinstance(headroom, bool) or not isinstance(headroom, (int, float)) or not math.isfinite(headroom) \
            or not 0 <= headroom <= MAX_HEADROOM:
        raise PlanInputError("headroom", headroom, msg("a fraction in [0, {most:g}] (0.2 = 20 %)", most=MAX_HEADROOM))
    headroom = float(headroom)
    required = target * (1.0 + headroom)
    gprs = sorted({int(g) for g in gpus_per_replica})
    if not gprs or gprs[0] < 1 or gprs[-1] > 1024:
        raise PlanInputError("gpus_per_replica", list(gpus_per_replica)[:5], msg("whole numbers in [1, 1,024]"))
    if not accelerators or not kv_formats or not weight_formats:
        raise PlanInputError("search", "an empty axis", msg("at least one accelerator, KV format and weight format"))
    modes = list(dict.fromkeys(attention))
    bad = [a for a in modes if a not in ATTENTION_MODES]
    if bad or not modes:
        raise PlanInputError("attention", bad[0] if bad else modes, msg("tp or dp (attention parallelism)"))
    refused: tuple[str, ...] = ()
    n_configs = len(accelerators) * len(gprs) * len(kv_formats) * len(weight_formats) * len(modes)
    if n_configs > MAX_CONFIGS:
        raise PlanInputError("search", n_configs, msg("at most {max_configs:,} configurations",
                                                      max_configs=MAX_CONFIGS))
    for acc_price in (prices or {}).values():
        if not (isinstance(acc_price, (int, float)) and math.isfinite(acc_price) and acc_price >= 0):
            raise PlanInputError("prices", acc_price, msg("finite numbers >= 0 per GPU-hour"))
    model = get_model(base.model_id)
    notes = tuple(n for n in (past_maximum_note(model, base.context_tokens + base.output_tokens),) if n)
    price = np.array([_price(a, prices) for a in accelerators], dtype=np.float64)
    names = [a.name for a in accelerators]
    ids = [a.user.id if a.user is not None else a.gpu_id for a in accelerators]

    parts, infeasible = [], 0
    for fmt in kv_formats:
        for wfmt in weight_formats:
            for mode in modes:
                for g in gprs:
                    try:
                        step = rebase(base, gpus_per_replica=g, pipeline_parallel_size=1, attention_parallelism=mode,
                                      kv_format=fmt, weight_format=wfmt, target_sessions_per_gpu=None)[0]
                        grid = frontier_grid(step, accelerators, [base.context_tokens], [base.hit_rate],
                                             model=model, scale_throughput=scale_throughput)
                        pick = np.zeros(len(accelerators), dtype=np.int64)
                        if hit_rate_curve is not None:
                            grid, pick = _on_the_curve(grid, step, accelerators, model, hit_rate_curve,
                                                       scale_throughput)
                    except PlanInputError:
                        infeasible += len(accelerators)  # a format this model cannot take
                        continue
                    parts.append(_rows(grid, pick, target_kind, required, g, mode, fmt, wfmt, price))
                    infeasible += len(accelerators) - len(parts[-1]["acc_index"])
    frame = pd.DataFrame({k: np.concatenate([p[k] for p in parts]) for k in parts[0]}) if parts else pd.DataFrame()
    if not frame.empty:
        frame.insert(1, "accelerator", np.array(names, dtype=object)[frame["acc_index"].to_numpy()])
        frame.insert(2, "gpu_id", np.array(ids, dtype=object)[frame["acc_index"].to_numpy()])
    if frame.empty:
        return Recommendation(target_kind, target, headroom, pd.DataFrame(columns=list(COLUMNS)), (), n_configs,
                              infeasible, refused, notes)
    frame["target"] = target
    frame["required"] = required
    frame["shared_prefix"] = base.shared_prefix
    frame["headroom"] = frame["capacity"] / target - 1.0
    frame["cost_per_hour"] = frame["total_gpus"] * frame["price_per_gpu_hour"]
    frame = frame.sort_values(["total_gpus", "cost_per_hour", "headroom"], ascending=[True, True, False],
                              na_position="last", kind="mergesort").reset_index(drop=True)
    frame["rank"] = np.arange(1, len(frame) + 1)
    frame["pareto"] = pareto_mask(frame["cost_per_hour"].to_numpy() if frame["cost_per_hour"].notna().all()
                                  else frame["total_gpus"].to_numpy(dtype=np.float64), frame["headroom"].to_numpy())
    shown = len(frame) if verify is None else min(int(verify), len(frame))
    inputs = tuple(_row_inputs(base, accelerators[int(r.acc_index)], r) for r in frame.head(shown).itertuples())
    frame["verified"], frame["one_fewer"] = _verify(frame, inputs, target_kind, required)
    frame["assumptions"] = pd.Series([assumptions(i) for i in inputs] + [""] * (len(frame) - len(inputs)),
                                     index=frame.index, dtype=object)
    no_sharing = [_no_sharing(i, target_kind, required) for i in inputs] + [(None, None)] * (len(frame) - len(inputs))
    frame["replicas_no_sharing"] = pd.array([r for r, _ in no_sharing], dtype="Int64")
    frame["total_gpus_no_sharing"] = pd.array([g for _, g in no_sharing], dtype="Int64")
    return Recommendation(target_kind, target, headroom, frame[list(COLUMNS)], inputs, n_configs, infeasible,
                          refused, notes)


def assumptions(inputs: PlanInputs) -> str:
    """What a row assumes, in words: hit rate, shared prefix, attention parallelism, KV and weight formats."""
    attention = (msg("tensor-parallel attention (each session's KV heads split over the replica's {tp} GPUs)",
                     tp=inputs.gpus_per_replica) if inputs.attention_parallelism == "tp" else
                 msg("data-parallel attention (each GPU holds whole sessions; SGLang --enable-dp-attention)"))
    return msg("hit rate {hit} (prefill and time to first token); shared prefix {shared} of the context, {tokens} "
               "tokens stored once per KV domain; {attention}; KV format {kv}; weights {weights}",
               hit=Figure(f"{inputs.hit_rate:g}"), shared=Figure(f"{inputs.shared_prefix:g}"),
               tokens=Figure(f"{math.floor(inputs.shared_prefix * inputs.context_tokens):,}"), attention=attention,
               kv=inputs.kv_format, weights=inputs.weight_format or msg("the catalogue's"))


def _no_sharing(inputs: PlanInputs, kind: str, required: float) -> tuple[int | None, int | None]:
    """Replicas and total GPUs of the same configuration with no shared prefix (None: not one session fits)."""
    r = plan(inputs.model_copy(update={"shared_prefix": 0.0}))
    per_replica = float(r.sessions_per_replica) if kind == "sessions" else \
        float(r.request_rate_per_s or 0.0) * inputs.gpus_per_replica
    if not per_replica > 0:
        return None, None
    replicas = math.ceil(required / per_replica)
    if replicas * per_replica < required:
        replicas += 1
    if replicas > MAX_REPLICAS:
        return None, None
    return replicas, replicas * inputs.gpus_per_replica


def _on_the_curve(grid, step: PlanInputs, accelerators, model, curve: HitRateCurve, scale: bool):
    """Re-evaluate ``grid`` with each accelerator at the hit rate its pool measures on the trace.

    Returns (grid over the distinct hit rates, index of each accelerator's hit rate on axis 2).
    """
    est = model.estimate(step.context_tokens, None if step.kv_format == "native" else step.kv_format,
                         kv_split(step).tp)
    per_token = float(est.kv_bytes_per_token)
    if not per_token > 0:
        raise PlanInputError("trace", "hit rate curve", msg("a model whose KV grows with context"))
    tokens = np.maximum(grid.usable_kv_bytes.astype(np.float64), 0.0) / per_token
    hits = curve.at_tokens(tokens)
    axis, pick = np.unique(hits, return_inverse=True)
    return (frontier_grid(step, accelerators, [step.context_tokens], axis, model=model, scale_throughput=scale),
            pick.reshape(-1))


def _rows(grid, pick, kind: str, target: float, g: int, mode: str, fmt: str, wfmt: str | None, price) -> dict:
    """Columns (numpy) of the configurations of one grid (accelerator i at hit rate index ``pick[i]``)."""
    a = np.arange(grid.shape[0])
    per_replica_sessions = grid.sessions_per_replica[a, 0, pick].astype(np.int64)
    rate = np.nan_to_num(grid.request_rate_per_s[a, 0, pick], nan=0.0)
    per_replica = per_replica_sessions.astype(np.float64) if kind == "sessions" else rate * g
    ok = per_replica > 0
    safe = np.where(ok, per_replica, 1.0)
    replicas = np.where(ok, np.ceil(target / safe), 0)
    # a float ceil can land one low at an exact multiple: make sure the capacity meets the target
    replicas = np.where(ok & (replicas * per_replica < target), replicas + 1, replicas)
    idx = np.nonzero(ok & (replicas <= MAX_REPLICAS))[0]
    n = len(idx)
    return {
        "acc_index": idx, "gpus_per_replica": np.full(n, g), "attention": np.full(n, mode, dtype=object),
        "kv_format": np.full(n, fmt, dtype=object), "weight_format": np.full(n, wfmt or "catalog", dtype=object),
        "replicas": replicas[idx].astype(np.int64), "total_gpus": (replicas[idx] * g).astype(np.int64),
        "hit_rate": grid.hit_rates[pick[idx]],
        "sessions_per_replica": per_replica_sessions[idx], "sessions_per_gpu": grid.sessions_per_gpu[idx, 0, pick[idx]],
        "request_rate_per_gpu": rate[idx], "capacity": replicas[idx] * per_replica[idx],
        "decode_tokens_per_s": grid.decode_tokens_per_s[idx], "prefill_tokens_per_s": grid.prefill_tokens_per_s[idx],
        "price_per_gpu_hour": price[idx],
    }


def _price(acc: Accelerator, prices: Mapping[str, float] | None) -> float:
    key = acc.user.id if acc.user is not None else acc.gpu_id
    if prices and key in prices:
        return float(prices[key])
    if acc.user is not None and acc.user.price_per_gpu_hour is not None:
        return acc.user.price_per_gpu_hour
    return math.nan


def pareto_mask(cost: np.ndarray, headroom: np.ndarray) -> np.ndarray:
    """Rows no other row beats: lower-or-equal cost with more headroom, or lower cost with equal headroom.

    >>> pareto_mask(np.array([2., 2., 3., 4.]), np.array([0.1, 0.3, 0.2, 0.5])).tolist()
    [False, True, False, True]
    """
    order = np.lexsort((-headroom, cost))
    keep = np.zeros(len(cost), dtype=bool)
    best = -np.inf
    for i in order:
        if headroom[i] > best:
            keep[i] = True
            best = headroom[i]
    return keep


def _row_inputs(base: PlanInputs, acc: Accelerator, row) -> PlanInputs:
    return rebase(base, **acc.plan_fields, gpus_per_replica=int(row.gpus_per_replica), pipeline_parallel_size=1,
                  hit_rate=float(row.hit_rate), decode_tokens_per_s=float(row.decode_tokens_per_s),
                  prefill_tokens_per_s=float(row.prefill_tokens_per_s),
                  attention_parallelism=row.attention, kv_format=row.kv_format, target_sessions_per_gpu=None,
                  weight_format=None if row.weight_format == "catalog" else row.weight_format)[0]


_ONE_FEWER = {
    (False, False): "{gpus:,} GPUs: {replicas:,} whole replicas = {capacity} {unit} < {target}: fails",
    (False, True): "{gpus:,} GPUs: {replicas:,} whole replica = {capacity} {unit} < {target}: fails",
    (True, False): "{gpus:,} GPU: {replicas:,} whole replicas = {capacity} {unit} < {target}: fails",
    (True, True): "{gpus:,} GPU: {replicas:,} whole replica = {capacity} {unit} < {target}: fails",
}
"""(one GPU?, one replica?) -> the sentence for a row with one GPU fewer (the count in the right number)."""


def _verify(frame: pd.DataFrame, inputs: Sequence[PlanInputs], kind: str, target: float):
    """Scalar plan per row: same figures, and one GPU fewer fails (``replicas - 1`` replicas fall short)."""
    verified, fewer = [], []
    for i, row in enumerate(frame.itertuples()):
        if i >= len(inputs):
            verified.append(False)
            fewer.append(msg("not checked"))
            continue
        r = plan(inputs[i])
        rate = float(r.request_rate_per_s or 0.0)
        per_replica = float(r.sessions_per_replica) if kind == "sessions" else rate * row.gpus_per_replica
        same = (r.sessions_per_replica == row.sessions_per_replica
                and math.isclose(rate, float(row.request_rate_per_gpu), rel_tol=1e-12, abs_tol=0.0))
        meets = row.replicas * per_replica >= target
        short = (row.replicas - 1) * per_replica
        if not (same and meets and short < target):
            raise PlanInputError("recommendation", f"{row.accelerator} x {row.gpus_per_replica}",
                                 msg("rows the scalar plan confirms (the array plan and the plan disagree: a bug)"))
        verified.append(True)
        unit = "sessions" if kind == "sessions" else "requests/s"
        gpus, reps = row.total_gpus - 1, row.replicas - 1
        fewer.append(msg(_ONE_FEWER[gpus == 1, reps == 1], gpus=gpus, replicas=reps,
                         capacity=Figure(format_figure(short, 6)), unit=msg(unit),
                         target=Figure(format_figure(target, 6))))
    return verified, pd.Series(fewer, index=frame.index, dtype=object)  # the messages (a str column keeps only text)
