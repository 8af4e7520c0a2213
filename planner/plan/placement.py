"""Where a plan's sessions sit: HBM, host RAM, SSD, or evicted / rejected (the placement rule, once, over numpy).

:func:`place_counts` decides the counts over numpy values (one plan: 0-d; a
frontier grid: every point); :func:`place_sessions` builds the one-GPU
:class:`TierPlacement` with bytes and the sentence that explains it. Tiers,
links and nodes: :mod:`planner.catalog.tiers`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field
from planner.message_field import Text
from planner.messages import msg

OverflowAction = Literal["none", "offload", "evict", "reject"]
"""What happens when HBM cannot hold every session's uncached tail:

* ``none``: every session's tail is in HBM.
* ``offload``: paused sessions' tails go to host RAM, then SSD; they come back
  by a reload (latency), the byte count is unchanged.
* ``evict``: host RAM and SSD are full too; the least recently used parked tails
  are dropped and recomputed (prefill) when their session resumes.
* ``reject``: sessions that must run at the same time do not fit in HBM (a
  running session's KV must be in HBM: offloading cannot serve it), or not one
  session fits; the excess is refused.
"""


class TierPlacement(BaseModel):
    """Where the bytes of ``sessions`` sessions sit on one GPU's tiers.

    ``hbm_bytes + host_ram_bytes + ssd_bytes + evicted_bytes == total_bytes``:
    offload moves bytes between tiers and never changes their count; evicted
    bytes are dropped and recomputed on resume.
    """

    model_config = ConfigDict(frozen=True)

    sessions: int = Field(description="sessions placed (target minus rejected)")
    sessions_rejected: int
    active_sessions: int = Field(description="sessions running a turn at any time (ceil(sessions x active fraction))")
    sessions_in_hbm: int
    sessions_in_host_ram: int = Field(description="parked sessions whose tail is in host RAM")
    sessions_on_ssd: int
    sessions_evicted: int
    prefix_copies: int = Field(description="shared prefixes stored in HBM")
    hbm_bytes: int
    host_ram_bytes: int
    ssd_bytes: int
    evicted_bytes: int = Field(description="bytes not stored anywhere: recomputed when their session resumes")
    total_bytes: int
    state_bytes_in_host_ram: int = Field(description="window state kept in host RAM (within its TTL)")
    hbm_capacity_bytes: int
    host_ram_capacity_bytes: int
    ssd_capacity_bytes: int
    action: OverflowAction
    message: Text


def _fraction(value):
    """``value`` clamped to [0, 1]; NaN counts as 1 (every session running, every state kept: the most bytes).

    Works on numbers and numpy arrays alike.

    >>> float(_fraction(1.5)), float(_fraction(-0.2)), float(_fraction(float("nan")))
    (1.0, 0.0, 1.0)
    """
    value = np.asarray(value, dtype=np.float64)
    return np.where(np.isnan(value), 1.0, np.minimum(np.maximum(value, 0.0), 1.0))


def _running(sessions, active_fraction):
    """Sessions running at once: ``ceil(sessions x active_fraction)`` (a hair of float noise forgiven)."""
    return np.maximum(np.ceil(sessions * active_fraction - 1e-9), 0.0)


@dataclass(frozen=True)
class PlacementCounts:
    """Where sessions sit, as counts (numpy arrays of one shape; 0-d for one plan).

    Attributes:
        admitted, rejected, active, in_hbm, parked: sessions (int64).
        in_host_ram, on_ssd, evicted: parked tails by tier (int64).
        prefix_copies: shared prefixes stored in HBM (int64).
        state_total_bytes: window states to keep (float64: running states plus
            paused ones within their TTL).
        state_host_bytes, state_ssd_bytes: where they sit (float64, bounded by the tiers).
    """

    admitted: np.ndarray
    rejected: np.ndarray
    active: np.ndarray
    in_hbm: np.ndarray
    parked: np.ndarray
    in_host_ram: np.ndarray
    on_ssd: np.ndarray
    evicted: np.ndarray
    prefix_copies: np.ndarray
    state_total_bytes: np.ndarray
    state_host_bytes: np.ndarray
    state_ssd_bytes: np.ndarray


def place_counts(sessions, *, hbm_sessions, active_fraction, num_prefixes, per_session_bytes, state_bytes,
                 state_alive_fraction, host_ram_bytes, ssd_bytes) -> PlacementCounts:
    """The placement of :func:`place_sessions` as counts, over numpy values (broadcast together).

    The one copy of the placement rule: :func:`place_sessions` (one GPU) and
    the frontier grid (every point at once) both call it.
    """
    sessions = np.maximum(np.asarray(sessions, dtype=np.int64), 0)
    hbm = np.asarray(hbm_sessions, dtype=np.int64)
    f = _fraction(active_fraction)
    alive = _fraction(state_alive_fraction)
    per = np.asarray(per_session_bytes, dtype=np.int64)
    # Most sessions whose running share fits in HBM: ceil(n * f) <= hbm_sessions.
    fits_all = _running(sessions, f) <= hbm
    if np.all(fits_all):  # the usual case (e.g. carrying what HBM holds): no step-down needed
        admitted = np.where(hbm <= 0, 0, sessions)
    else:
        with np.errstate(over="ignore", divide="ignore"):  # a huge quotient is never chosen: fits_all holds there
            most = np.minimum(sessions, np.floor(np.maximum(hbm, 0) / np.where(f > 0, f, 1.0) + 1e-9))
        admitted = np.where(hbm <= 0, 0, np.where(fits_all, sessions, most)).astype(np.int64)
        while True:  # float noise: step down until ceil(admitted * f) <= hbm
            over = (hbm > 0) & ~fits_all & (admitted > 0) & (_running(admitted, f) > hbm)
            if not np.any(over):
                break
            admitted = np.where(over, admitted - 1, admitted)
    rejected = sessions - admitted
    active = np.minimum(_running(admitted, f).astype(np.int64), admitted)
    in_hbm = np.minimum(admitted, np.maximum(hbm, 0))
    parked = admitted - in_hbm
    copies = np.minimum(np.int64(num_prefixes), in_hbm)
    state = np.asarray(state_bytes, dtype=np.float64)
    state_total = active * state + np.floor((admitted - active) * state * alive)
    host = np.asarray(host_ram_bytes, dtype=np.float64)
    ssd = np.asarray(ssd_bytes, dtype=np.float64)
    state_host = np.minimum(state_total, host)
    state_ssd = np.minimum(state_total - state_host, ssd)
    if np.any(parked):
        per_f = np.maximum(per, 1).astype(np.float64)
        n_host = np.where(per > 0, np.minimum(parked, (host - state_host) // per_f), parked).astype(np.int64)
        n_ssd = np.where(per > 0, np.minimum(parked - n_host, (ssd - state_ssd) // per_f), 0).astype(np.int64)
    else:  # nothing parked: no tier holds a tail
        n_host = n_ssd = np.zeros_like(parked)
    return PlacementCounts(admitted=admitted, rejected=rejected, active=active, in_hbm=in_hbm, parked=parked,
                           in_host_ram=n_host, on_ssd=n_ssd, evicted=parked - n_host - n_ssd, prefix_copies=copies,
                           state_total_bytes=state_total, state_host_bytes=state_host, state_ssd_bytes=state_ssd)


def place_sessions(
    sessions: int,
    *,
    hbm_sessions: int,
    active_fraction: float,
    usable_hbm_bytes: int,
    prefix_bytes: int,
    num_prefixes: int,
    per_session_bytes: int,
    state_bytes: int,
    state_alive_fraction: float,
    host_ram_bytes: int,
    ssd_bytes: int,
    counts: PlacementCounts | None = None,
) -> TierPlacement:
    """Place ``sessions`` sessions of one GPU on HBM, host RAM and SSD.

    Args:
        sessions: sessions the GPU should carry (running + paused).
        hbm_sessions: sessions whose tails fit in HBM at once (the plan's
            sessions per KV domain).
        active_fraction: share of its time a session is running a turn, in
            [0, 1] (1 without pauses).
        usable_hbm_bytes: the KV pool per GPU.
        prefix_bytes: one shared prefix.
        num_prefixes: distinct shared prefixes (each stored once, while at
            least one of its sessions is in HBM).
        per_session_bytes: one session's bytes in HBM (tail, output, window
            layers, and window state when kept in HBM).
        state_bytes: one session's window state kept in host RAM (0 when in
            HBM or absent).
        state_alive_fraction: share of paused sessions whose state is still
            within its TTL.
        host_ram_bytes, ssd_bytes: tier capacities per GPU.
        counts: :func:`place_counts` of these same arguments when the caller
            already has them (the plan's array phase), else computed here.

    Placement (:func:`place_counts`): HBM holds up to ``hbm_sessions``
    sessions (running ones first); host RAM holds the window states first
    (small, needed at every resume), then parked tails; SSD the next parked
    tails (and states that did not fit); what is left is evicted. Running
    sessions beyond ``hbm_sessions`` are rejected.
    """
    c = counts or place_counts(sessions, hbm_sessions=hbm_sessions, active_fraction=active_fraction,
                     num_prefixes=num_prefixes, per_session_bytes=per_session_bytes, state_bytes=state_bytes,
                     state_alive_fraction=state_alive_fraction, host_ram_bytes=host_ram_bytes, ssd_bytes=ssd_bytes)
    sessions = max(int(sessions), 0)
    f = float(_fraction(active_fraction))
    admitted, rejected, active = int(c.admitted), int(c.rejected), int(c.active)
    in_hbm, parked = int(c.in_hbm), int(c.parked)
    n_host, n_ssd, n_evicted = int(c.in_host_ram), int(c.on_ssd), int(c.evicted)
    copies = int(c.prefix_copies)
    state_host, state_ssd = int(c.state_host_bytes), int(c.state_ssd_bytes)
    state_evicted = int(c.state_total_bytes) - state_host - state_ssd
    hbm = copies * prefix_bytes + in_hbm * per_session_bytes
    host = state_host + n_host * per_session_bytes
    ssd = state_ssd + n_ssd * per_session_bytes
    evicted = state_evicted + n_evicted * per_session_bytes
    total = hbm + host + ssd + evicted

    if hbm_sessions <= 0:
        action: OverflowAction = "reject"
        message = msg("Reject: not one session's uncached tail fits in the HBM pool. Offloading cannot help, because a "
                      "running session's KV must be in HBM; evicting would only thrash. Shorten the context, raise "
                      "the prefix hit rate, add HBM or split the weights over more GPUs.")
    elif rejected:
        action = "reject"
        message = (msg("Reject {rejected:,} of {sessions:,} sessions: with an active share of {f:.3g}, {running:,} "
                       "would run at once but HBM holds {hbm_sessions:,}. Running sessions cannot be offloaded, so "
                       "the excess is refused.", rejected=rejected, sessions=sessions, f=f,
                       running=int(_running(sessions, f)), hbm_sessions=hbm_sessions))
    elif n_evicted or state_evicted:
        action = "evict"
        message = (msg("Evict: {parked:,} paused sessions are parked, host RAM and SSD hold {kept:,}; the "
                       "{n_evicted:,} least recently used tails are dropped and recomputed (prefill) when they resume.",
                       parked=parked, kept=n_host + n_ssd, n_evicted=n_evicted))
    elif parked:
        action = "offload"
        message = (msg("Offload: HBM holds {in_hbm:,} sessions; {parked:,} paused sessions are parked ({n_host:,} in "
                       "host RAM, {n_ssd:,} on SSD) and reloaded when they resume. Latency changes, the byte count "
                       "does not.", in_hbm=in_hbm, parked=parked, n_host=n_host, n_ssd=n_ssd))
    else:
        action = "none"
        message = ""
    return TierPlacement(
        sessions=admitted, sessions_rejected=rejected, active_sessions=active, sessions_in_hbm=in_hbm,
        sessions_in_host_ram=n_host, sessions_on_ssd=n_ssd, sessions_evicted=n_evicted, prefix_copies=copies,
        hbm_bytes=hbm, host_ram_bytes=host, ssd_bytes=ssd, evicted_bytes=evicted, total_bytes=total,
        state_bytes_in_host_ram=state_host, hbm_capacity_bytes=max(usable_hbm_bytes, 0),
        host_ram_capacity_bytes=host_ram_bytes, ssd_capacity_bytes=ssd_bytes, action=action, message=message,
    )
