"""A model's KV bytes at many lengths at once (numpy int64), for the plan's array core.

The model's own methods (:meth:`planner.kv.models.ModelSpec.growing_bytes`,
``capped_bytes``, ``state_bytes_outside_pool``) are the truth; these helpers call them once
per distinct length, or use a closed form checked against them first.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from planner.kv.models import ModelSpec

# ---------------------------------------------------------------------------

_PROBE_TOKENS = (0, 1, 7, 16, 129, 1_000_003)
"""Lengths at which the closed form of growing bytes is checked against the model before use."""
_DIRECT_SIZE = 64
"""Arrays of at most this many lengths are priced by the model's own method, one call per length."""


def _growing_closed_form(model: ModelSpec, x: np.ndarray, kv_format: str, tp: int, pp: int) -> np.ndarray | None:
    """``model.growing_bytes`` in closed form over int64 ``x``, or None when no closed form is known."""
    if model.uses_coefficient(kv_format):
        coef = model.coefficient_bytes_per_token(pp)
        return np.ceil(coef * x.astype(np.float64)).astype(np.int64)
    out = np.zeros(x.shape, dtype=np.int64)
    for g in model.layout(kv_format):
        if g.capped or not g.in_pool:
            continue
        r = int(g.tokens_per_entry)
        out += (x // r) * np.int64(g.bytes_for(r, tp, pp))
    return out


def log_token_grid(max_tokens: int, num_points: int, *, min_tokens: int = 1_000,
                   include: Sequence[int] = ()) -> np.ndarray:
    """Log-spaced whole token counts from ``min_tokens`` to ``max_tokens`` (both in; at least
    ``min_tokens + 1`` at the top), at least two points, plus ``include``: unique, sorted, int64.
    The one context grid of the curves, the frontier and the charts.

    >>> log_token_grid(100_000, 3, include=[4_096]).tolist()
    [1000, 4096, 10000, 100000]
    """
    hi = max(int(max_tokens), min_tokens + 1)
    grid = np.round(np.geomspace(min_tokens, hi, max(num_points, 2))).astype(np.int64)
    return np.unique(np.concatenate([grid, np.asarray([int(x) for x in include], dtype=np.int64)]))


def growing_bytes_array(model: ModelSpec, tokens, kv_format: str, tp: int = 1, pp: int = 1) -> np.ndarray:
    """``model.growing_bytes(n, kv_format, tp, pp)`` for every ``n`` in ``tokens`` (int64), per GPU.

    A few lengths (at most :data:`_DIRECT_SIZE`, e.g. one plan): one model call
    each. More: closed form (a coefficient: ``ceil(coef * n)``, the same double
    multiply; a layout: ``(n // r) * bytes_for(r)`` per growing group), checked
    against the model on a few lengths first; one model call per distinct
    length if a group disagrees. ``tests/test_frontier.py`` checks the closed
    form against the model for every catalog model.
    """
    x = np.asarray(tokens, dtype=np.int64)
    if x.size <= _DIRECT_SIZE:  # a few lengths: the model's own arithmetic, one call each
        return per_length(model.growing_bytes, x, kv_format, tp, pp)
    probe = np.array(_PROBE_TOKENS, dtype=np.int64)
    closed = _growing_closed_form(model, probe, kv_format, tp, pp)
    if closed is not None and all(int(c) == model.growing_bytes(int(p), kv_format, tp, pp)
                                  for c, p in zip(closed, probe)):
        return _growing_closed_form(model, x, kv_format, tp, pp)
    return per_length(model.growing_bytes, x, kv_format, tp, pp)


def per_length(fn: Callable[[int, str, int, int], int], tokens, kv_format: str, tp: int = 1,
               pp: int = 1) -> np.ndarray:
    """``fn(n, kv_format, tp, pp)`` (a model's bytes method, e.g. ``model.capped_bytes``) for every
    ``n`` in ``tokens`` (int64 bytes): one call per distinct length."""
    x = np.asarray(tokens, dtype=np.int64)
    if x.ndim == 0:
        return np.int64(fn(int(x), kv_format, tp, pp))
    uniq, inv = np.unique(x, return_inverse=True)
    vals = np.array([fn(int(u), kv_format, tp, pp) for u in uniq], dtype=np.int64)
    return vals[inv].reshape(x.shape)
