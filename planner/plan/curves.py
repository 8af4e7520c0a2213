"""One plan along the context axis: every other input held, :func:`planner.plan.plan` at each length.

The Plan page's chart places the plan on this curve. The curve is the arithmetic of
``plan()`` itself (:func:`planner.plan.result.plan_arrays`) evaluated once over an
array of lengths, so measured figures, engine admission and the rate limit are the
plan's own: the curve passes through the plan's numbers by construction.

Column contract of :func:`sessions_by_context` (one row per length):
``context_tokens, sessions_per_gpu, sessions_per_replica, per_session_bytes,
request_rate_per_s``.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from planner.plan import MAX_CONTEXT_TOKENS, PlanInputs
from planner.plan.result import plan_arrays
from planner.errors import PlanInputError
from planner.kv.models import ModelSpec
from planner.plan.lengths import log_token_grid
from planner.messages import msg

CURVE_COLUMNS: tuple[str, ...] = ("context_tokens", "sessions_per_gpu", "sessions_per_replica", "per_session_bytes",
                                  "request_rate_per_s")
"""Columns of :func:`sessions_by_context`."""

MAX_CURVE_POINTS = 400
"""Most context lengths one curve evaluates."""


def curve_contexts(max_tokens: int, *, min_tokens: int = 1_000, num_points: int = 48,
                   include: Sequence[int] = ()) -> np.ndarray:
    """Log-spaced whole token counts from ``min_tokens`` to ``max_tokens`` (both in), plus ``include``, sorted.

    >>> curve_contexts(100_000, num_points=3).tolist()
    [1000, 10000, 100000]
    """
    return log_token_grid(max_tokens, num_points, min_tokens=min_tokens, include=include)


def memory_inputs(inputs: PlanInputs) -> PlanInputs:
    """The plan with what never changes memory set aside: the prefix hit rate (0) and the prompt length the
    figures were measured at (None, a warning only).

    The hit rate sets prefill work, request rate and time to first token, never memory
    (``PlanInputs.hit_rate``; :func:`planner.plan.core.evaluate` prices memory before it reads it), so
    ``sessions_per_gpu``, ``sessions_per_replica`` and ``per_session_bytes`` of :func:`sessions_by_context` are
    the same for ``inputs`` and ``memory_inputs(inputs)``: a page keys a cached curve on it, and a hit-rate
    slider step redraws nothing. ``request_rate_per_s`` is the hit rate 0's.
    """
    return inputs.model_copy(update={"hit_rate": 0.0, "figures_measured_at_tokens": None})


def sessions_by_context(inputs: PlanInputs, contexts: Sequence[int] | np.ndarray,
                        model: ModelSpec | None = None) -> pd.DataFrame:
    """Sessions per GPU and per replica, per-session bytes and request rate at each context length.

    Args:
        inputs: the plan (validated); only ``context_tokens`` changes along the curve.
        contexts: token counts in [1, MAX_CONTEXT_TOKENS], at most :data:`MAX_CURVE_POINTS`.
        model: the model instead of the catalog's ``inputs.model_id`` (an imported config), as in ``plan()``.

    Returns:
        A frame with :data:`CURVE_COLUMNS`; ``sessions_per_gpu`` is a float (a share of a session under TP
        attention, where a session spans the replica's GPUs); ``request_rate_per_s`` is NaN where
        the plan's rate is undefined (no output tokens).

    Raises:
        PlanInputError: a length out of range, too many lengths, or what ``plan()`` raises.
    """
    ctx = np.asarray(contexts, dtype=np.int64).ravel()
    if ctx.size == 0 or ctx.size > MAX_CURVE_POINTS:
        raise PlanInputError("contexts", int(ctx.size), msg("1 to {max_curve_points} context lengths",
                                                            max_curve_points=MAX_CURVE_POINTS))
    if ctx.min() < 1 or ctx.max() > MAX_CONTEXT_TOKENS:
        raise PlanInputError("contexts", int(ctx.max()), msg("token counts in [1, {max_context_tokens:,}]",
                                                             max_context_tokens=MAX_CONTEXT_TOKENS))
    # one evaluation over every length: the scalar plan's own arithmetic (plan_arrays), on an array
    a, _, _, _, _ = plan_arrays(inputs, model, ctx)
    per_gpu = a.sessions if a.split.domain_gpus == 1 else a.sessions_per_gpu
    return pd.DataFrame({
        "context_tokens": ctx,
        "sessions_per_gpu": np.broadcast_to(per_gpu, ctx.shape).astype(np.float64),
        "sessions_per_replica": np.broadcast_to(a.sessions_per_replica, ctx.shape).astype(np.int64),
        "per_session_bytes": np.broadcast_to(a.per_session_bytes, ctx.shape).astype(np.int64),
        "request_rate_per_s": np.broadcast_to(a.request_rate_per_s, ctx.shape).astype(np.float64),
    })
