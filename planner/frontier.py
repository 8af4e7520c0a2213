"""Frontiers: sessions per GPU and request rate over accelerators x contexts x hit rates, vectorized.

One call evaluates the plan at every point of a grid (accelerators on axis
0, context lengths on axis 1, prefix hit rates on axis 2; the base plan's
``shared_prefix`` throughout, so sessions do not change along the hit-rate
axis: a hit rate saves prefill work and time to first token, never memory)
with the same code
as the scalar :func:`planner.plan.plan`: :func:`planner.plan.core.evaluate`
over numpy arrays, never a Python loop per point. The grid keeps every other
input of the base plan, measured figures included: a measured KV bytes per
token applies everywhere (same model and format); a measured usable KV only on
the accelerator it was measured on (:func:`planner.plan.rebase` decides).

With ``scale_throughput`` the decode and prefill throughputs of each
accelerator are the base plan's scaled by HBM bandwidth (decode) and dense
BF16 FLOP/s (prefill) relative to the base plan's accelerator;
:meth:`FrontierGrid.inputs_at` gives the scalar inputs of any point, and a
property test checks ``plan(inputs_at(...))`` equals the grid everywhere.

Column contract of :meth:`FrontierGrid.frame` (one row per point):
``accelerator, gpu_id, hbm_bytes, usable_kv_bytes, context_tokens, hit_rate,
shared_prefix_bytes, per_session_bytes, sessions_per_gpu, sessions_per_replica,
request_rate_per_s, rate_limit, ttft_s``. Figures per GPU as in
:class:`planner.plan.PlanResult`; ``sessions_per_gpu`` is a share under
``attention_parallelism = tp``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Mapping, Sequence

import numpy as np
import pandas as pd

from planner.catalog.accelerators import UserAccelerator, accelerator_from_link
from planner.catalog.entries import GPUS, GPUSpec, get_gpu
from planner.errors import PlanInputError
from planner.kv.models import ModelSpec
from planner.kv.notes import past_maximum_note
from planner.monotone import largest_fitting
from planner.plan.core import PlanArrays, evaluate, miss_probability
from planner.plan.lengths import growing_bytes_array, log_token_grid, per_length
from planner.plan.hardware import hardware_arrays, resolve_hardware, resolve_hbm, user_accelerator
from planner.plan.inputs import MAX_CONTEXT_TOKENS, PlanInputs, make_inputs
from planner.plan.rebase import rebase
from planner.plan.result import effective_model
from planner.units import parse_tokens, to_gb, to_gib
from planner.messages import msg

FRAME_COLUMNS: tuple[str, ...] = (
    "accelerator", "gpu_id", "hbm_bytes", "usable_kv_bytes", "context_tokens", "hit_rate", "shared_prefix",
    "shared_prefix_bytes", "per_session_bytes", "sessions_per_gpu", "sessions_per_replica", "request_rate_per_s",
    "rate_limit", "ttft_s",
)
"""Columns of :meth:`FrontierGrid.frame` (units in the names; rates per second, times in seconds)."""

MAX_GRID_POINTS = 10_000_000
"""Largest grid accepted (accelerators x contexts x hit rates). Computing a grid takes about 90 B per point at
its peak (int64 and float64 arrays per point and their temporaries: 10,000,000 points raised a process's peak RSS
from 114 to 956 MiB), so the largest grid stays under 1 GiB; its rows are written in chunks
(:meth:`FrontierGrid.frames`), never as one table (a whole-grid DataFrame is about 155 B per point more, and its
CSV or JSON text 200-300 B per point)."""
FRAME_CHUNK_ROWS = 250_000
"""Rows per chunk of :meth:`FrontierGrid.frames` (about 40 MB of DataFrame)."""


@dataclass(frozen=True)
class Accelerator:
    """One line of a frontier: a catalog accelerator, or ``custom`` with an HBM size.

    Attributes:
        gpu_id: catalog id or "custom" (a user-defined accelerator is "custom" with ``user``).
        hbm_gib: HBM per GPU in GiB; None = the device's reported total.
        label: display name (default: the catalog name, or "custom N GiB").
        user: a user-defined accelerator (:mod:`planner.catalog.accelerators`).
    """

    gpu_id: str
    hbm_gib: float | None = None
    label: str = ""
    user: UserAccelerator | None = None

    @classmethod
    def of_user(cls, acc: UserAccelerator) -> "Accelerator":
        """A user-defined accelerator as a frontier line (``gpu_id`` "custom", described by ``acc``)."""
        return cls("custom", None, "", acc)

    @property
    def id(self) -> str:
        """The catalog id, the user accelerator's id, or "custom"."""
        return self.user.id if self.user is not None else self.gpu_id

    @property
    def spec(self) -> GPUSpec | None:
        """Catalog-shaped figures (HBM, bandwidth, FLOP/s), or None for a bare custom size."""
        return self.user.to_gpu_spec() if self.user is not None else GPUS.get(self.gpu_id)

    @property
    def plan_fields(self) -> dict:
        """The PlanInputs fields that put a plan on this accelerator."""
        return {"gpu_id": self.gpu_id, "hbm_gib": self.hbm_gib,
                "accelerator": self.user.to_link() if self.user is not None else None}

    @property
    def name(self) -> str:
        """The label, or a name built from the id and HBM size."""
        if self.label:
            return self.label
        if self.user is not None:
            return self.user.name if self.hbm_gib is None else f"{self.user.name} ({self.hbm_gib:g} GiB)"
        base = GPUS[self.gpu_id].name if self.gpu_id in GPUS else "custom"
        return base if self.hbm_gib is None else f"{base} ({self.hbm_gib:g} GiB)"

    def hbm_bytes(self) -> int:
        """HBM bytes, as :func:`planner.plan.resolve_hbm` resolves them.

        Raises:
            PlanInputError: unknown id, a size out of range, or custom without a size.
        """
        if self.hbm_gib is not None:
            make_inputs(hbm_gib=self.hbm_gib)  # the one range check (PlanInputs.hbm_gib)
        return resolve_hbm(self.gpu_id, self.hbm_gib, self.user)[0]


def parse_accelerators(text: str, user: Mapping[str, UserAccelerator] | None = None) -> list[Accelerator]:
    """Accelerators from "h100-sxm,h200,custom:96" (custom:N = N GiB of HBM; the ids of ``user`` too).

    Raises:
        PlanInputError: empty list, unknown id or a bad size.
    """
    out: list[Accelerator] = []
    user = user or {}
    for item in str(text).split(","):
        item = item.strip()
        if not item:
            continue
        if item in user:
            out.append(Accelerator.of_user(user[item]))
            continue
        if item not in GPUS and user and not item.startswith("custom:"):
            raise PlanInputError("gpus", item, msg("a catalog id (kvplan gpus), custom:N or one of your accelerators: "
                                                   "{choices}", choices=", ".join(user)))
        if item.startswith("custom:"):
            raw = item.split(":", 1)[1]
            try:
                gib = float(raw)
            except ValueError:
                raise PlanInputError("gpus", item, msg("custom:N with N GiB in (0, 100,000]")) from None
            acc = Accelerator("custom", gib)
        else:
            get_gpu(item)
            acc = Accelerator(item)
        acc.hbm_bytes()
        out.append(acc)
    if not out:
        raise PlanInputError("gpus", text, msg("a comma-separated list of accelerator ids (kvplan gpus) or custom:N"))
    return out


def parse_contexts(text: str) -> np.ndarray:
    """Context lengths from "128k,1m,1e6" (sorted, unique; suffixes as :func:`planner.units.parse_tokens`).

    Raises:
        PlanInputError: empty, or a length outside [1, MAX_CONTEXT_TOKENS].
    """
    values = [parse_tokens(x, field="contexts", maximum=MAX_CONTEXT_TOKENS) for x in str(text).split(",") if x.strip()]
    if not values:
        raise PlanInputError("contexts", text, msg("a comma-separated list of token counts (e.g. 128k,1m)"))
    return np.unique(np.array(values, dtype=np.int64))


def parse_hit_rates(text: str) -> np.ndarray:
    """Hit rates from "0,0.5,0.9" (sorted, unique, each in [0, 1]).

    Raises:
        PlanInputError: empty, not a number, NaN or outside [0, 1].
    """
    values = []
    for x in str(text).split(","):
        if not x.strip():
            continue
        try:
            v = float(x)
        except ValueError:
            raise PlanInputError("hit_rates", x.strip(), msg("numbers in [0, 1]")) from None
        if not (math.isfinite(v) and 0 <= v <= 1):
            raise PlanInputError("hit_rates", x.strip(), msg("numbers in [0, 1]"))
        values.append(v)
    if not values:
        raise PlanInputError("hit_rates", text, msg("a comma-separated list of numbers in [0, 1]"))
    return np.unique(np.array(values, dtype=np.float64))


def accelerators_for(gpu_ids: Sequence[str], base: PlanInputs) -> list[Accelerator]:
    """Accelerators for these ids; the base plan's own accelerator keeps its HBM setting."""
    out = []
    for g in gpu_ids:
        if g == "custom" and base.accelerator is not None:
            continue  # the plan's user-defined accelerator is its custom GPU (appended below)
        out.append(Accelerator(g, base.hbm_gib if g == base.gpu_id else None))
    if base.accelerator is not None:
        out.append(Accelerator("custom", base.hbm_gib, "", accelerator_from_link(base.accelerator)))
    elif base.gpu_id == "custom" and "custom" not in gpu_ids:
        out.append(Accelerator("custom", base.hbm_gib))
    return out


# ---------------------------------------------------------------------------
# The grid
# ---------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class FrontierGrid:
    """Plans over accelerators (axis 0) x context lengths (axis 1) x hit rates (axis 2).

    Attributes:
        inputs: the base plan (every input not on an axis).
        shared_prefix: the share of the context stored once per replica at every point (the base plan's unless
            :func:`frontier_grid` was given another).
        accelerators: axis 0.
        contexts: axis 1, tokens (int64).
        hit_rates: axis 2 (float64).
        hbm_bytes, usable_kv_bytes: per accelerator (int64).
        decode_tokens_per_s, prefill_tokens_per_s: per accelerator (scaled or not).
        shared_prefix_bytes, per_session_bytes: (contexts, hit rates), int64, per GPU.
        sessions_per_gpu: (accelerators, contexts, hit rates), float64 (a share under ``tp``).
        sessions_per_replica: same shape, int64.
        request_rate_per_s: same shape, float64; NaN when there are no output tokens.
        limited_by_sessions: same shape, bool.
        ttft_s: same shape, float64.
        miss_probability: P(pause > TTL) for a parked window state (one figure for the grid).
        scale_throughput: whether throughputs were scaled per accelerator.
        arrays: every figure of :func:`planner.plan.core.evaluate`, broadcast.
        model: the model the grid was planned with (its maximum context for :meth:`past_maximum_notes`).
    """

    inputs: PlanInputs
    shared_prefix: float
    accelerators: tuple[Accelerator, ...]
    contexts: np.ndarray
    hit_rates: np.ndarray
    hbm_bytes: np.ndarray
    usable_kv_bytes: np.ndarray
    decode_tokens_per_s: np.ndarray
    prefill_tokens_per_s: np.ndarray
    shared_prefix_bytes: np.ndarray
    per_session_bytes: np.ndarray
    sessions_per_gpu: np.ndarray
    sessions_per_replica: np.ndarray
    request_rate_per_s: np.ndarray
    limited_by_sessions: np.ndarray
    ttft_s: np.ndarray
    miss_probability: float
    scale_throughput: bool
    arrays: PlanArrays
    model: ModelSpec | None = None

    @property
    def shape(self) -> tuple[int, int, int]:
        """(accelerators, contexts, hit rates)."""
        return self.sessions_per_gpu.shape

    def inputs_at(self, gpu_index: int, context_index: int, hit_index: int) -> PlanInputs:
        """The scalar plan inputs of one grid point (``plan(inputs_at(...))`` equals the grid there).

        A measured usable KV is dropped on accelerators it was not measured on (:func:`planner.plan.rebase`).
        """
        acc = self.accelerators[gpu_index]
        return rebase(self.inputs, **acc.plan_fields,
                      context_tokens=int(self.contexts[context_index]), hit_rate=float(self.hit_rates[hit_index]),
                      shared_prefix=self.shared_prefix,
                      decode_tokens_per_s=float(self.decode_tokens_per_s[gpu_index]),
                      prefill_tokens_per_s=float(self.prefill_tokens_per_s[gpu_index]))[0]

    def frame(self, gpu: slice | list[int] | None = None, context: slice | list[int] | None = None,
              hit: slice | list[int] | None = None) -> pd.DataFrame:
        """Long DataFrame of (a slice of) the grid with :data:`FRAME_COLUMNS`."""
        gi = np.arange(self.shape[0])[gpu if gpu is not None else slice(None)]
        ci = np.arange(self.shape[1])[context if context is not None else slice(None)]
        hi = np.arange(self.shape[2])[hit if hit is not None else slice(None)]
        G, C, H = np.meshgrid(gi, ci, hi, indexing="ij")
        G, C, H = G.ravel(), C.ravel(), H.ravel()
        names = [a.name for a in self.accelerators]
        ids = [a.id for a in self.accelerators]
        rate = self.request_rate_per_s[G, C, H]
        codes = np.where(np.isnan(rate), 0, np.where(self.limited_by_sessions[G, C, H], 1, 2))
        return pd.DataFrame({
            "accelerator": _labels(names, G), "gpu_id": _labels(ids, G), "hbm_bytes": self.hbm_bytes[G],
            "usable_kv_bytes": self.usable_kv_bytes[G], "context_tokens": self.contexts[C],
            "hit_rate": self.hit_rates[H], "shared_prefix": np.full(H.size, self.shared_prefix),
            "shared_prefix_bytes": self.shared_prefix_bytes[C, H],
            "per_session_bytes": self.per_session_bytes[C, H], "sessions_per_gpu": self.sessions_per_gpu[G, C, H],
            "sessions_per_replica": self.sessions_per_replica[G, C, H], "request_rate_per_s": rate,
            "rate_limit": pd.Categorical.from_codes(codes, ["none", "sessions", "decode throughput"]),
            "ttft_s": self.ttft_s[G, C, H],
        }, columns=list(FRAME_COLUMNS))

    def frames(self, max_rows: int | None = None) -> Iterator[pd.DataFrame]:
        """The rows of :meth:`frame`, in the same order, as DataFrames of at most ``max_rows`` rows
        (default :data:`FRAME_CHUNK_ROWS`): memory stays bounded whatever the grid's size."""
        rows = max(1, int(max_rows or FRAME_CHUNK_ROWS))
        num_gpus, num_contexts, num_hits = self.shape
        if num_hits <= rows:
            step = max(1, rows // num_hits)
            for g in range(num_gpus):
                for c in range(0, num_contexts, step):
                    yield self.frame(gpu=[g], context=slice(c, c + step))
            return
        for g in range(num_gpus):
            for c in range(num_contexts):
                for h in range(0, num_hits, rows):
                    yield self.frame(gpu=[g], context=[c], hit=slice(h, h + rows))

    def past_maximum_note(self, context_index: int, what: str = msg("Context + output")) -> str:
        """The plan's own sentence (:func:`planner.kv.notes.past_maximum_note` on context + output, ``what``
        naming them) when the context at ``context_index`` passes the model's maximum context, else ""."""
        if self.model is None:
            return ""
        return past_maximum_note(self.model, int(self.contexts[context_index]) + self.inputs.output_tokens, what)

    def past_maximum_notes(self) -> tuple[str, ...]:
        """One sentence per context on axis 1 the model cannot serve (its points are computed all the same)."""
        return tuple(n for n in (self.past_maximum_note(i) for i in range(self.shape[1])) if n)

    def nearest_context(self, tokens: int) -> int:
        """Index of the context length nearest to ``tokens``."""
        return int(np.argmin(np.abs(self.contexts - int(tokens))))

    def nearest_hit_rate(self, hit_rate: float) -> int:
        """Index of the hit rate nearest to ``hit_rate``."""
        return int(np.argmin(np.abs(self.hit_rates - float(hit_rate))))


def _labels(values: list[str], index: np.ndarray) -> pd.Categorical | np.ndarray:
    """``values[index]`` as a categorical column (fast for 10**5 rows); plain objects if labels repeat."""
    if len(set(values)) == len(values):
        return pd.Categorical.from_codes(index, values)
    return np.array(values, dtype=object)[index]


def frontier_grid(
    base: PlanInputs,
    accelerators: Sequence[Accelerator | str],
    contexts: Sequence[int] | np.ndarray,
    hit_rates: Sequence[float] | np.ndarray,
    *,
    model: ModelSpec | None = None,
    scale_throughput: bool = False,
    shared_prefix: float | None = None,
) -> FrontierGrid:
    """Evaluate the plan at every (accelerator, context, hit rate), with the scalar plan's code.

    Args:
        base: every other input (model, format, parallelism, weights, reserve,
            utilization, output tokens, prefixes, pauses, TTL, tiers,
            throughputs, measured figures).
        accelerators: :class:`Accelerator` or catalog ids.
        contexts: token counts in [1, MAX_CONTEXT_TOKENS].
        hit_rates: fractions in [0, 1].
        model: a model instead of the catalog's ``base.model_id``.
        scale_throughput: scale decode by HBM bandwidth and prefill by BF16
            FLOP/s relative to ``base.gpu_id`` (custom accelerators: unscaled).
        shared_prefix: the share of the context stored once per replica, in
            [0, 1], instead of ``base.shared_prefix`` (it moves sessions; the
            hit rates move prefill and time to first token only).

    Raises:
        PlanInputError: unknown ids, empty axes, out-of-range values, a grid
            over :data:`MAX_GRID_POINTS`, a measured figure bound to another
            model or format.
    """
    accs = tuple(a if isinstance(a, Accelerator) else Accelerator(a) for a in accelerators)
    ctx = np.asarray(contexts, dtype=np.int64).ravel()
    hits = np.asarray(hit_rates, dtype=np.float64).ravel()
    if not accs:
        raise PlanInputError("gpus", [], msg("at least one accelerator"))
    if ctx.size == 0 or ctx.min() < 1 or ctx.max() > MAX_CONTEXT_TOKENS:
        raise PlanInputError("contexts", ctx.tolist()[:5], msg("token counts in [1, {max_context_tokens:,}]",
                                                               max_context_tokens=MAX_CONTEXT_TOKENS))
    if hits.size == 0 or not np.all(np.isfinite(hits)) or hits.min() < 0 or hits.max() > 1:
        raise PlanInputError("hit_rates", hits.tolist()[:5], msg("numbers in [0, 1]"))
    if shared_prefix is None:
        shared_prefix = base.shared_prefix
    elif not (isinstance(shared_prefix, (int, float)) and math.isfinite(shared_prefix) and 0 <= shared_prefix <= 1):
        raise PlanInputError("shared_prefix", shared_prefix, msg("a fraction of the context in [0, 1]"))
    shared_prefix = float(shared_prefix)
    if len(accs) * ctx.size * hits.size > MAX_GRID_POINTS:
        raise PlanInputError("grid", f"{len(accs):,} x {ctx.size:,} x {hits.size:,} = "
                                     f"{len(accs) * ctx.size * hits.size:,} points",
                             msg("at most {max_grid_points:,} points (accelerators x contexts x hit rates)",
                                 max_grid_points=MAX_GRID_POINTS))
    given_model = model
    model, fmt, _ = effective_model(base, model)
    model.layout(fmt)  # raises for a format the model cannot take

    # -- per accelerator (axis 0): the scalar plan's hardware resolution, once each --------
    for a in accs:
        a.hbm_bytes()
    hardware = [resolve_hardware(base, a.gpu_id, a.hbm_gib, a.plan_fields["accelerator"], model=given_model)
                for a in accs]
    decode = np.full(len(accs), base.decode_tokens_per_s, dtype=np.float64)
    prefill = np.full(len(accs), base.prefill_tokens_per_s, dtype=np.float64)
    base_user = user_accelerator(base)
    ref = base_user.to_gpu_spec() if base_user is not None else GPUS.get(base.gpu_id)
    if scale_throughput and ref is not None:
        for i, a in enumerate(accs):
            g = a.spec
            if g is not None:
                decode[i] = base.decode_tokens_per_s * (g.hbm_bandwidth_bytes_per_s / ref.hbm_bandwidth_bytes_per_s)
                prefill[i] = base.prefill_tokens_per_s * (g.bf16_dense_flops / ref.bf16_dense_flops)
    hw = hardware_arrays(hardware, decode, prefill, shape=(len(accs), 1, 1))

    a = evaluate(base, model, fmt, hw, ctx[None, :, None], shared_prefix, hits[None, None, :])
    shape = (len(accs), ctx.size, hits.size)

    def full(x: np.ndarray) -> np.ndarray:
        return np.broadcast_to(x, shape)

    p_miss = float(miss_probability(base.pause_mean_s, base.ttl_s, base.pause_distribution))
    return FrontierGrid(
        inputs=base, shared_prefix=shared_prefix, accelerators=accs, contexts=ctx, hit_rates=hits, hbm_bytes=hw.hbm_bytes.reshape(-1),
        usable_kv_bytes=np.broadcast_to(a.usable_kv_bytes, (len(accs), 1, 1)).reshape(-1),
        decode_tokens_per_s=decode, prefill_tokens_per_s=prefill,
        shared_prefix_bytes=np.broadcast_to(a.shared_prefix_bytes, (1, ctx.size, hits.size))[0],
        per_session_bytes=np.broadcast_to(a.per_session_bytes, (1, ctx.size, hits.size))[0],
        sessions_per_gpu=full(a.sessions_per_gpu), sessions_per_replica=full(a.sessions_per_replica),
        request_rate_per_s=full(a.request_rate_per_s), limited_by_sessions=full(a.limited_by_sessions),
        ttft_s=full(a.ttft_s), miss_probability=p_miss, scale_throughput=scale_throughput, arrays=a, model=model,
    )


def with_points(grid_values: np.ndarray, *points: float) -> np.ndarray:
    """A sorted, unique axis with ``points`` added (so the plan lies on the grid)."""
    return np.unique(np.concatenate([np.asarray(grid_values), np.asarray(points, dtype=np.asarray(grid_values).dtype)]))


def context_axis(max_tokens: int, num_points: int = 60, *, min_tokens: int = 1_000, include: Sequence[int] = ()) -> np.ndarray:
    """Log-spaced whole token counts from ``min_tokens`` to ``max_tokens`` (plus ``include``): :func:`log_token_grid`."""
    return log_token_grid(max_tokens, num_points, min_tokens=min_tokens, include=include)


def hit_rate_axis(num_points: int = 101, *, include: Sequence[float] = ()) -> np.ndarray:
    """Evenly spaced hit rates from 0 to 1 (plus ``include``)."""
    grid = np.round(np.linspace(0.0, 1.0, max(num_points, 2)), 12)
    return with_points(grid, *[float(x) for x in include]) if include else grid


# ---------------------------------------------------------------------------
# KV bytes vs context for several models (the "GB vs context" page)
# ---------------------------------------------------------------------------

KV_CONTEXT_COLUMNS: tuple[str, ...] = ("model_id", "model", "context_tokens", "kv_bytes", "kv_gb", "kv_gib")
"""Columns of :func:`kv_context_frame`."""


def kv_context_frame(model_list: Sequence[ModelSpec], contexts: Sequence[int] | np.ndarray,
                     kv_format: str = "native") -> pd.DataFrame:
    """KV bytes of one sequence (pool bytes: growing + window-capped) per model and context.

    ``kv_bytes`` equals ``model.estimate(n, kv_format).kv_bytes``; out-of-pool
    state (host-RAM window rings) is not included, as in the estimate.
    """
    ctx = np.asarray(contexts, dtype=np.int64).ravel()
    parts = []
    for m in model_list:
        kv = growing_bytes_array(m, ctx, kv_format) + per_length(m.capped_bytes, ctx, kv_format)
        parts.append(pd.DataFrame({"model_id": m.id, "model": m.name, "context_tokens": ctx, "kv_bytes": kv}))
    frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["model_id", "model",
                                                                                     "context_tokens", "kv_bytes"])
    frame["kv_gb"] = to_gb(frame["kv_bytes"].astype(np.float64))
    frame["kv_gib"] = to_gib(frame["kv_bytes"].astype(np.float64))
    return frame[list(KV_CONTEXT_COLUMNS)]


def longest_context_that_fits(model: ModelSpec, num_bytes: int, kv_format: str = "native",
                              max_tokens: int = MAX_CONTEXT_TOKENS) -> int:
    """Longest context whose one-sequence KV (``estimate().kv_bytes``) fits in ``num_bytes``.

    KV bytes never fall as the context grows, so a bisection
    (:func:`planner.monotone.largest_fitting`) finds the crossing; 0 when not
    even one token fits, ``max_tokens`` when all fit.

    >>> from planner.catalog.entries import get_model
    >>> longest_context_that_fits(get_model("deepseek-v4.1-flash"), 890_000_000)  # 1M x 890 B
    1000000
    """
    if num_bytes <= 0:
        return 0
    return largest_fitting(lambda n: model.estimate(n, kv_format).kv_bytes <= num_bytes, 1, max_tokens)
