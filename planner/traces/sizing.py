"""KV bytes per cached token for a catalog model, for turning bytes into cache blocks.

The replay and curve functions take ``kv_bytes_per_token`` as a plain number;
this helper is how the CLI and the Traces page get it from the catalog.
"""

from __future__ import annotations

import math

import numpy as np

from planner.errors import PlanInputError
from planner.traces.trace import Trace
from planner.messages import msg


def typical_context_tokens(trace: Trace) -> int:
    """The trace's mean prompt length, rounded up to whole tokens (at least 1)."""
    if trace.num_requests == 0:
        return 1
    return max(1, math.ceil(float(np.mean(trace.input_tokens))))


def kv_bytes_per_token_for(model_id: str, context_tokens: int, kv_format: str | None = None, tp: int = 1) -> float:
    """Marginal KV bytes per token of ``model_id`` at ``context_tokens`` (per GPU at TP ``tp``).

    ``planner.catalog.entries.get_model(model_id).estimate(context_tokens, kv_format, tp).kv_bytes_per_token``:
    the reported coefficient when there is one (DeepSeek V4.1-Flash: 890 B),
    else the architecture's growing slope; window-capped layers add nothing
    once the context passes their window.

    Raises:
        PlanInputError: unknown model or format, or a model whose KV does not
            grow at this length (every layer capped by a window), so cached
            prefixes cannot be priced per token.
    """
    from planner.catalog.entries import get_model   # the catalog only when a model prices the blocks

    per_token = float(get_model(model_id).estimate(context_tokens, kv_format, tp).kv_bytes_per_token)
    if not per_token > 0:
        raise PlanInputError("model", model_id,
                             msg("a model whose KV grows with context at {context_tokens:,} tokens (every layer of "
                                 "this one is capped by a window); give the capacity in blocks instead",
                                 context_tokens=context_tokens))
    return per_token
