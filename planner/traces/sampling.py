"""Sampled hit-rate curves for traces too large to profile exactly: spatial hash sampling (SHARDS).

Waldspurger, Park, Garthwaite and Ahmad, "Efficient MRC Construction with
SHARDS", FAST '15: keep a reference iff a fixed hash of its key falls below
``R x 2^64``. Every reference to a kept key is kept, so its reuse is exact
within the sample, and a stack distance ``d`` in the sample stands for about
``d / R`` in the full trace: the hit rate at capacity ``C`` is estimated by the
sample's hit rate at ``floor(R x C)``.

Adapted to prefix caches. The key is the block id: a chained hash names a
block *and its whole prefix*. A request keeps its sampled blocks in chain
order, as one request, and the leading-run rule applies over them (a kept
block hits only if every kept block before it in the request does); a first
reference still makes the rest of the request cold. Sampling whole requests
or whole prefix trees instead would not work on chat traffic: the Mooncake
conversation trace starts all 12,031 requests with the same block, so its
prefix tree is a single tree. What the adaptation drops is the leading-run
effect of *unsampled* blocks before a kept one; under LRU that effect is at
most the request's own length in blocks (an ancestor block is referenced
with every descendant), which the ``R`` scaling shrinks further.

Sampling happens while reading (``read_trace(..., sample_rate=R)``), so the
unsampled references never sit in memory. :func:`standard_error` gives the
error bar printed next to every sampled figure; ``docs/traces.md`` lists the
measured error on the bundled traces.
"""

from __future__ import annotations

import math

import numpy as np

from planner.traces.kernels import COLD
from planner.traces.stack import ReuseProfile
from planner.traces.trace import Trace

DEFAULT_SAMPLE_RATE: float = 0.01
"""Sampling rate used when ``--sample`` is given without a rate (SHARDS uses 0.001 to 0.01)."""


def standard_error(trace: Trace, profile: ReuseProfile, capacity_blocks: int | None) -> float:
    """Standard error of a sampled block hit rate at one capacity (no TTL), as a fraction.

    The sample is a cluster sample: each kept block id brings all its
    references. The ratio estimator's variance over clusters (Cochran,
    "Sampling Techniques", 3rd ed., 1977, eq. 6.13) with the finite-population
    correction ``1 - R``::

        se^2 = (1 - R) / (k (k - 1) rbar^2) * sum_i (h_i - p r_i)^2

    over the ``k`` kept blocks with ``r_i`` references and ``h_i`` hits, ``p``
    the estimated rate, ``rbar`` the mean ``r_i``. Exact profiles return 0.
    """
    if not profile.sampled or profile.num_block_refs == 0:
        return 0.0
    thr = None if capacity_blocks is None else int(profile.sampled_capacity(np.array([capacity_blocks]))[0])
    hit = profile.run_distance_blocks != COLD
    if thr is not None:
        hit &= profile.run_distance_blocks <= thr
    ids = trace.block_ids
    refs = np.bincount(ids, minlength=trace.id_space)
    hits = np.bincount(ids, weights=hit, minlength=trace.id_space)
    kept = refs > 0
    r, h = refs[kept].astype(np.float64), hits[kept]
    k = r.shape[0]
    if k < 2:
        return math.nan
    p = h.sum() / r.sum()
    rbar = r.mean()
    var = (1 - profile.sample_rate) / (k * (k - 1) * rbar**2) * float(((h - p * r) ** 2).sum())
    return math.sqrt(max(var, 0.0))


def sampling_note(trace: Trace, profile: ReuseProfile, capacity_blocks: int | None) -> str:
    """One line to print with a sampled result: the rate and the expected error (2 standard errors)."""
    se = standard_error(trace, profile, capacity_blocks)
    return (f"sampled: {profile.sample_rate:.4g} of distinct blocks (SHARDS spatial hash sampling, "
            f"{profile.num_block_refs:,} references kept); expected error about ±{2 * se:.4f} in hit rate "
            "(2 standard errors)")
