"""How much of each request a trace shares with *other* concurrent sessions: the plan's shared prefix, measured.

A prefix-cache hit rate counts every reused token, a session's own earlier
turns included. Those save prefill work, never memory: a session's own history
is resident once per session. The plan's **shared prefix** is the other kind:
tokens common to many concurrent sessions (a system prompt, tool schemas),
stored once. This module measures it from a trace's block tree.

Definitions (docs/traces.md, "Shared prefix"):

* **Block tree.** Each request's ``hash_ids`` are a path from the root: a
  chained hash names a block *and everything before it*, so two requests share
  their first ``L`` blocks exactly when their first ``L`` ids are equal, and
  the common blocks are always a prefix.
* **Concurrent.** Requests ``r`` and ``q`` are concurrent when their arrivals
  are at most ``window_s`` apart (default :data:`DEFAULT_WINDOW_S`, 60 s, the
  plan's default window-state TTL): both sessions are then plausibly resident
  together. The trace has no end times, so arrivals are what is compared.
* **Another session.** With ``session_id`` in the trace, ``q`` is another
  session when its id differs from ``r``'s. Without ids, ``q`` is another
  session unless one request's block path is a prefix of the other's (a later
  turn of a conversation re-reads the earlier turn whole: that is own history).
* **Shared tokens of a request** ``r``: ``block_tokens x max L(r, q)`` over the
  concurrent requests ``q`` of other sessions, capped at ``r``'s hashed prompt
  tokens (0 when there is none).
* **Shared prefix of the trace** = shared tokens / prompt tokens, summed over
  every request: the figure the plan's ``shared_prefix`` means. Beside it,
  the **hit rate** of an unlimited LRU prefix cache (no TTL) counts every
  reused token (:meth:`planner.traces.stack.ReuseProfile.hits`).

Both figures carry the mean prompt length they were measured at
(:attr:`SharingMeasure.mean_prompt_tokens`): a share measured on 12k-token
prompts says little about a 1M-token context (:func:`context_mismatch`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planner.errors import PlanInputError
from planner.messages import msg
from planner.traces.stack import require_hashes, reuse_profile
from planner.plan.measured import CONTEXT_RATIO_WARNING, context_mismatch  # noqa: F401 (re-exported)
from planner.traces.trace import Trace

DEFAULT_WINDOW_S = 60.0
"""Arrivals at most this far apart are concurrent (s): the plan's default window-state TTL."""
MAX_WINDOW_S = 86_400.0
"""Longest concurrency window accepted (one day)."""
MAX_PADDED_CELLS = 100_000_000
"""Largest requests x longest path (blocks) measured: the block paths are compared as one padded array."""


@dataclass(frozen=True)
class SharingMeasure:
    """A trace's shared prefix and hit rate, and what they were measured at.

    Attributes:
        shared_prefix: shared tokens / prompt tokens (see the module docstring).
        hit_rate: token hit rate of an unlimited LRU prefix cache with no TTL (every reused token).
        mean_prompt_tokens: mean prompt length of the trace (tokens): the context the figures hold for.
        window_s: the concurrency window used.
        num_requests: requests measured; shared_tokens, input_tokens: the sums behind ``shared_prefix``.
        sessions_from: "session_id" or "block paths" (how another session was told apart).
    """

    shared_prefix: float
    hit_rate: float
    mean_prompt_tokens: float
    window_s: float
    num_requests: int
    shared_tokens: int
    input_tokens: int
    sessions_from: str


def _paths(trace: Trace) -> tuple[np.ndarray, np.ndarray]:
    """Block paths as one array padded with -1 (requests x longest path), and each path's length."""
    offsets = trace.block_offsets
    lengths = np.diff(offsets).astype(np.int64)
    width = int(lengths.max(initial=0))
    if len(lengths) * max(width, 1) > MAX_PADDED_CELLS:
        raise PlanInputError("trace", f"{len(lengths):,} requests x {width:,} blocks",
                             msg("at most {cells:,} request-blocks for the shared-prefix measurement (sample the "
                                 "trace by time first)", cells=MAX_PADDED_CELLS))
    paths = np.full((len(lengths), max(width, 1)), -1, dtype=np.int64)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    cols = np.arange(len(trace.block_ids)) - np.repeat(offsets[:-1], lengths)
    paths[rows, cols] = trace.block_ids
    return paths, lengths


def shared_prefix_tokens(trace: Trace, window_s: float = DEFAULT_WINDOW_S) -> np.ndarray:
    """Shared tokens of each request (int64, one per request; see the module docstring).

    Raises:
        PlanInputError: a trace without prefix hashes, a hash-sampled trace, a bad window, or a trace too large.
    """
    require_hashes(trace)
    if trace.sample_rate < 1.0:
        raise PlanInputError("trace", f"sampled at {trace.sample_rate:g}",
                             msg("a whole trace (the shared prefix compares every request's blocks)"))
    if not (isinstance(window_s, (int, float)) and 0 <= window_s <= MAX_WINDOW_S):
        raise PlanInputError("window_s", window_s, msg("a number of seconds in [0, {most:,.0f}]", most=MAX_WINDOW_S))
    paths, lengths = _paths(trace)
    arrival = np.asarray(trace.arrival_s, dtype=np.float64)
    sessions = trace.session_ids
    bt = int(trace.block_tokens)
    hashed = np.minimum(lengths * bt, np.asarray(trace.input_tokens, dtype=np.int64))
    lo = np.searchsorted(arrival, arrival - window_s, side="left")
    hi = np.searchsorted(arrival, arrival + window_s, side="right")
    shared = np.zeros(len(lengths), dtype=np.int64)
    for r in range(len(lengths)):
        n = int(lengths[r])
        if n == 0:
            continue
        q = np.arange(lo[r], hi[r])
        q = q[q != r]
        if q.size == 0:
            continue
        same = paths[q, :n] == paths[r, :n]
        common = np.where(same.all(axis=1), n, np.argmin(same, axis=1))  # chained ids: a common prefix
        if sessions is not None:
            other = sessions[q] != sessions[r]
        else:  # one path a prefix of the other: a later turn of the same conversation
            other = common < np.minimum(lengths[q], n)
        if other.any():
            shared[r] = min(int(common[other].max()) * bt, int(hashed[r]))
    return shared


def measure_sharing(trace: Trace, window_s: float = DEFAULT_WINDOW_S) -> SharingMeasure:
    """The trace's shared prefix beside its (unlimited-cache) hit rate, with the prompt length they hold for."""
    shared = shared_prefix_tokens(trace, window_s)
    inputs = int(np.asarray(trace.input_tokens, dtype=np.int64).sum())
    hits = reuse_profile(trace, with_ages=False).hits(None, None)
    return SharingMeasure(
        shared_prefix=float(shared.sum() / inputs) if inputs else 0.0, hit_rate=float(hits.token_hit_rate),
        mean_prompt_tokens=float(np.mean(trace.input_tokens)) if len(trace.input_tokens) else 0.0,
        window_s=float(window_s), num_requests=len(shared), shared_tokens=int(shared.sum()), input_tokens=inputs,
        sessions_from="session_id" if trace.session_ids is not None else "block paths")
