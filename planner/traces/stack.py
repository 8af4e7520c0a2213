"""Hit rate at every cache capacity (and TTL) from one pass: LRU stack distances.

Mattson, Gecsei, Slutz and Traiger, "Evaluation techniques for storage
hierarchies", IBM Systems Journal 9(2), 1970: under LRU, a reference hits in a
cache of ``C`` blocks if and only if its *stack distance* ``d`` (the number of
distinct blocks referenced since the previous reference to the same block,
itself included) is at most ``C`` (the inclusion property). One pass over the
trace therefore gives the hit count at every capacity.

Prefix caches add the leading-run rule: a request hits only the longest leading
run of its blocks that are cached (block hashes chain over the prefix; Qin et
al., Mooncake, FAST '25). So block ``j`` of a request is a hit at capacity
``C`` only if blocks ``0..j`` all are: its *run distance* is the running
maximum of the stack distances over the request's first ``j+1`` blocks, and it
hits iff run distance <= C.

TTL composes the same way. With arrivals in time order, LRU order is also
last-access-time order, so the live cache after purging expired entries is the
intersection of two recency prefixes: the ``C`` most recently used blocks and
the blocks used less than ``ttl_s`` ago. A block hits iff ``d <= C`` and its
*age* (seconds since its previous reference) is ``< ttl_s``; the running
maximum of ages over the leading run applies as for distances.

Computing the distances. With ``prev[t]`` the previous reference to the block
referenced at ``t`` (flattened reference order), the distinct blocks strictly
between ``prev[t]`` and ``t`` are the positions ``s`` there that are the last
reference to their block before ``t``; each non-last position ``s`` has a next
reference ``u < t`` with ``prev[u] = s > prev[t]``. Hence::

    d[t] = t - prev[t] - #{u < t : prev[u] > prev[t]}

The count is the classic per-element inversion count: the Fenwick-tree-over-
last-access-times method (Bennett and Kruskal, 1975; Almási, Caşcaval and
Padua, 2002) computes it online in O(log n) per reference. Here it is computed
offline, bit by bit from the most significant (a wavelet tree), with O(n)
numpy work per bit: O(n log n) in total, vectorized.

Conventions (the same as :func:`planner.traces.replay.replay`, which checks
them by brute force):

* the hit denominator for blocks is every block reference; for tokens it is
  every prompt token (tokens not covered by a hash never hit);
* a partial last block occupies a whole cache block but counts only its real
  tokens in token-weighted figures;
* TTL: an entry last used at ``t0`` is live at ``t`` iff ``t - t0 < ttl_s``:
  exactly ``ttl_s`` apart is a miss; ``ttl_s=0`` means never persisted;
  ``ttl_s=None`` means no TTL.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from planner.errors import PlanInputError
from planner.traces.readers import Trace
from planner.units import GB, GiB

Progress = Callable[[float, str], None]
"""Progress callback: ``(fraction done in [0, 1], what is being done)``."""

COLD: int = np.iinfo(np.int64).max
"""Run distance of a block that can never hit (first reference, or after one): int64 max."""

MAX_CAPACITY_BLOCKS: int = 10**15
"""Largest capacity accepted, blocks."""

CURVE_COLUMNS: tuple[str, ...] = (
    "capacity_blocks", "capacity_tokens", "capacity_bytes", "capacity_gb", "capacity_gib",
    "hit_blocks", "hit_tokens", "block_hit_rate", "token_hit_rate",
)
"""Columns of :func:`capacity_curve`: capacity in blocks (int), tokens (int,
blocks x block tokens), bytes (float, blocks x block bytes; NaN without
``kv_bytes_per_token``), GB (10**9 B) and GiB (2**30 B); hit blocks and hit
tokens (int); block- and token-weighted hit rates (fractions in [0, 1])."""

TTL_CURVE_COLUMNS: tuple[str, ...] = ("ttl_s", "hit_blocks", "hit_tokens", "block_hit_rate", "token_hit_rate")
"""Columns of :func:`ttl_curve`: TTL in seconds (``inf`` = no TTL), hit blocks
and tokens (int), hit rates (fractions)."""


def check_capacity_blocks(value: object, name: str = "capacity_blocks") -> int | None:
    """Validate a capacity in blocks: None (unlimited) or an integer in [0, 1e15].

    Raises:
        PlanInputError: anything else.
    """
    if value is None:
        return None
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        value = int(value)
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_CAPACITY_BLOCKS:
        raise PlanInputError(name, value, f"None (unlimited) or a whole number of blocks in [0, {MAX_CAPACITY_BLOCKS:,}]")
    return value


def _check_capacities(capacities_blocks: Sequence[int] | np.ndarray) -> np.ndarray:
    """Validate many capacities at once (vectorized for integer arrays)."""
    arr = np.asarray(capacities_blocks)
    if arr.ndim == 1 and arr.dtype.kind in "iu" and \
            (arr.size == 0 or (int(arr.min()) >= 0 and int(arr.max()) <= MAX_CAPACITY_BLOCKS)):
        return arr.astype(np.int64)
    return np.asarray([check_capacity_blocks(c) for c in capacities_blocks], dtype=np.int64)


def check_ttl_s(value: object, name: str = "ttl_s") -> float | None:
    """Validate a TTL: None (no TTL) or a number of seconds >= 0 (``inf`` means no TTL).

    Raises:
        PlanInputError: negative, NaN or not a number.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise PlanInputError(name, value, "None (no TTL) or a number of seconds >= 0")
    v = float(value)
    if math.isnan(v) or v < 0:
        raise PlanInputError(name, value, "None (no TTL) or a number of seconds >= 0")
    return None if math.isinf(v) else v


def check_kv_bytes_per_token(value: object) -> float:
    """Validate KV bytes per token: a finite number > 0.

    Raises:
        PlanInputError: anything else.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(value)) or float(value) <= 0:
        raise PlanInputError("kv_bytes_per_token", value, "a finite number of bytes > 0")
    return float(value)


def blocks_for_bytes(capacity_bytes: float, kv_bytes_per_token: float, block_tokens: int) -> int:
    """Whole cache blocks that fit in ``capacity_bytes``: ``floor(bytes / (kv_bytes_per_token * block_tokens))``.

    >>> blocks_for_bytes(100 * 10**9, 890.0, 512)  # 1e11 / 455,680 B per block = 219,452.2
    219452

    Raises:
        PlanInputError: negative or non-finite bytes, or bad ``kv_bytes_per_token``.
    """
    per_token = check_kv_bytes_per_token(kv_bytes_per_token)
    if isinstance(capacity_bytes, bool) or not isinstance(capacity_bytes, (int, float, np.integer, np.floating)) \
            or not math.isfinite(float(capacity_bytes)) or capacity_bytes < 0:
        raise PlanInputError("capacity_bytes", capacity_bytes, "a finite number of bytes >= 0")
    return int(min(MAX_CAPACITY_BLOCKS, math.floor(float(capacity_bytes) / (per_token * block_tokens))))


# ---------------------------------------------------------------------------
# Vectorized kernels
# ---------------------------------------------------------------------------


def count_earlier_greater(values: np.ndarray, progress: Progress | None = None) -> np.ndarray:
    """For each ``t``, the number of ``s < t`` with ``values[s] > values[t]``.

    Offline, bit by bit from the most significant bit (a wavelet tree): the
    elements are kept ordered by (value's higher bits, index); at each bit an
    element with bit 0 counts the earlier elements of its group with bit 1, then
    each group is stably split into its 0s and 1s. O(n) numpy work per bit.

    Args:
        values: shape (n,), non-negative integers.
        progress: optional callback, called once per bit.

    Returns:
        Shape (n,), int64.

    >>> count_earlier_greater(np.array([3, 1, 2, 0, 2])).tolist()
    [0, 1, 1, 3, 1]
    """
    v = np.asarray(values, dtype=np.int64)
    n = v.shape[0]
    counts = np.zeros(n, dtype=np.int64)
    if n == 0:
        return counts
    if v.min() < 0:
        raise ValueError("values must be non-negative")
    num_bits = int(v.max()).bit_length()
    order = np.arange(n, dtype=np.int64)
    positions = np.arange(n, dtype=np.int64)
    for k, b in enumerate(range(num_bits - 1, -1, -1)):
        vo = v[order]
        bit = (vo >> b) & 1
        hi = vo >> (b + 1)
        starts_mask = np.empty(n, dtype=bool)
        starts_mask[0] = True
        np.not_equal(hi[1:], hi[:-1], out=starts_mask[1:])
        starts = np.flatnonzero(starts_mask)
        group = np.cumsum(starts_mask) - 1
        group_start = starts[group]
        ones_incl = np.cumsum(bit)
        ones_excl = ones_incl - bit
        ones_before = ones_excl - ones_excl[starts][group]   # earlier 1s in this group
        zero = bit == 0
        counts[order[zero]] += ones_before[zero]
        # Stable split of each group: 0s first, then 1s.
        zeros_before = (positions - group_start) - ones_before
        ends = np.append(starts[1:], n)
        zeros_in_group = (ends - starts) - (ones_incl[ends - 1] - ones_excl[starts])
        new_pos = np.where(zero, group_start + zeros_before, group_start + zeros_in_group[group] + ones_before)
        new_order = np.empty_like(order)
        new_order[new_pos] = order
        order = new_order
        if progress is not None:
            progress((k + 1) / num_bits, "stack distances")
    return counts


def _segment_cummax_int(values: np.ndarray, segment: np.ndarray, bound: int) -> np.ndarray:
    """Running maximum within segments (``segment`` non-decreasing); values in [0, bound)."""
    offset = segment.astype(np.int64) * bound
    return np.maximum.accumulate(values + offset) - offset


# ---------------------------------------------------------------------------
# Profile
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True, eq=False)
class ReuseProfile:
    """Per-reference run distances and ages of a trace: every hit count follows from them.

    Attributes:
        trace_name: the trace's name.
        block_tokens: tokens per block.
        num_requests: requests.
        num_block_refs: block references.
        num_unique_blocks: distinct blocks.
        num_input_tokens: prompt tokens of all requests (the token denominator).
        run_distance_blocks: shape (num_block_refs,), int64: the smallest
            capacity, in blocks, at which the reference hits with no TTL
            (:data:`COLD` if it never can).
        run_age_s: shape (num_block_refs,), float64: the reference hits under
            TTL ``ttl_s`` iff ``run_age_s < ttl_s`` (``inf`` if it never can).
        ref_tokens: shape (num_block_refs,), int64: real tokens in each block.
    """

    trace_name: str
    block_tokens: int
    num_requests: int
    num_block_refs: int
    num_unique_blocks: int
    num_input_tokens: int
    run_distance_blocks: np.ndarray
    run_age_s: np.ndarray
    ref_tokens: np.ndarray

    @property
    def saturation_blocks(self) -> int:
        """Smallest capacity (blocks) with the unlimited-capacity hit count, no TTL (0 if nothing hits)."""
        finite = self.run_distance_blocks[self.run_distance_blocks != COLD]
        return int(finite.max()) if finite.size else 0

    def _mask(self, capacity_blocks: int | None, ttl_s: float | None) -> np.ndarray:
        mask = self.run_distance_blocks != COLD
        if capacity_blocks is not None:
            mask &= self.run_distance_blocks <= capacity_blocks
        if ttl_s is not None:
            mask &= self.run_age_s < ttl_s
        return mask

    def hits(self, capacity_blocks: int | None = None, ttl_s: float | None = None) -> HitRates:
        """Hit counts at one capacity (blocks; None = unlimited) and TTL (s; None = none).

        Raises:
            PlanInputError: bad capacity or TTL.
        """
        capacity_blocks = check_capacity_blocks(capacity_blocks)
        ttl_s = check_ttl_s(ttl_s)
        mask = self._mask(capacity_blocks, ttl_s)
        return HitRates(
            capacity_blocks=capacity_blocks, ttl_s=ttl_s, num_requests=self.num_requests,
            num_block_refs=self.num_block_refs, num_unique_blocks=self.num_unique_blocks,
            num_hit_blocks=int(np.count_nonzero(mask)), num_input_tokens=self.num_input_tokens,
            num_hit_tokens=int(self.ref_tokens[mask].sum()),
        )


@dataclass(frozen=True, kw_only=True)
class HitRates:
    """Prefix-cache hits of a trace at one capacity and TTL.

    Attributes:
        capacity_blocks: cache capacity, blocks (None = unlimited).
        ttl_s: TTL, seconds (None = no TTL).
        num_requests, num_block_refs, num_unique_blocks: trace size.
        num_hit_blocks: block references that hit.
        num_input_tokens: prompt tokens (denominator of the token hit rate).
        num_hit_tokens: prompt tokens in hit blocks.
    """

    capacity_blocks: int | None
    ttl_s: float | None
    num_requests: int
    num_block_refs: int
    num_unique_blocks: int
    num_hit_blocks: int
    num_input_tokens: int
    num_hit_tokens: int

    @property
    def block_hit_rate(self) -> float:
        """Hit blocks / block references (0 for an empty trace)."""
        return self.num_hit_blocks / self.num_block_refs if self.num_block_refs else 0.0

    @property
    def token_hit_rate(self) -> float:
        """Hit tokens / prompt tokens (0 for an empty trace)."""
        return self.num_hit_tokens / self.num_input_tokens if self.num_input_tokens else 0.0


def require_hashes(trace: Trace) -> None:
    """Raise unless hit rates are measurable on ``trace``.

    Raises:
        PlanInputError: the trace has no prefix block hashes (Azure traces).
    """
    if not trace.has_prefix_hashes:
        raise PlanInputError("trace", trace.name,
                             "a trace with prefix block hashes (Mooncake, or JSONL with hash_ids): "
                             "this one has lengths only, so hit rates are not measurable")


def reuse_profile(trace: Trace, progress: Progress | None = None) -> ReuseProfile:
    """Stack distances, ages and their leading-run maxima for every block reference.

    One pass: O(n log n) vectorized (n = block references); the Mooncake
    conversation trace (288,500 references) takes a fraction of a second.

    Args:
        trace: a trace with prefix hashes.
        progress: optional callback ``(fraction, label)``.

    Raises:
        PlanInputError: the trace has no prefix hashes.
    """
    require_hashes(trace)
    ids = trace.block_ids
    n = ids.shape[0]
    counts = trace.num_blocks
    req = np.repeat(np.arange(trace.num_requests, dtype=np.int64), counts)
    ref_time = trace.arrival_s[req]
    # Previous reference to the same block (-1 for a first reference).
    order = np.argsort(ids, kind="stable")
    same = ids[order[1:]] == ids[order[:-1]]
    prev = np.full(n, -1, dtype=np.int64)
    prev[order[1:][same]] = order[:-1][same]
    if progress is not None:
        progress(0.0, "stack distances")
    # Only warm references matter on both sides of the count (a first reference has
    # prev = -1, never greater); their prev positions are distinct, so rank them densely.
    warm = prev >= 0
    warm_at = np.flatnonzero(warm)
    marked = np.zeros(n, dtype=bool)
    marked[prev[warm_at]] = True
    rank = (np.cumsum(marked) - 1)[prev[warm_at]]
    later_newer = np.zeros(n, dtype=np.int64)
    later_newer[warm_at] = count_earlier_greater(rank, progress)
    t = np.arange(n, dtype=np.int64)
    cold_mark = n + 1                      # larger than any distance (<= n)
    dist = np.where(warm, t - prev - later_newer, cold_mark)
    run_dist = _segment_cummax_int(dist, req, cold_mark + 1)
    run_dist = np.where(run_dist == cold_mark, COLD, run_dist)
    # Ages: exact float differences, the same arithmetic as the reference replay.
    age = np.full(n, np.inf)
    age[warm] = ref_time[warm] - ref_time[prev[warm]]
    uniq, rank = np.unique(age, return_inverse=True)
    run_rank = _segment_cummax_int(rank.reshape(-1).astype(np.int64), req, uniq.shape[0])
    run_age = uniq[run_rank]
    if progress is not None:
        progress(1.0, "stack distances")
    for a in (run_dist, run_age):
        a.flags.writeable = False
    return ReuseProfile(
        trace_name=trace.name, block_tokens=int(trace.block_tokens), num_requests=trace.num_requests,
        num_block_refs=n, num_unique_blocks=trace.num_unique_blocks,
        num_input_tokens=int(trace.input_tokens.sum()), run_distance_blocks=run_dist, run_age_s=run_age,
        ref_tokens=trace.ref_tokens(),
    )


def default_capacities(profile: ReuseProfile, num_points: int = 64) -> np.ndarray:
    """A capacity grid in blocks: 0, then about ``num_points`` geometric steps up to saturation.

    Returns:
        Shape (k,), int64, increasing, from 0 to ``profile.saturation_blocks``.
    """
    top = max(1, profile.saturation_blocks)
    grid = np.unique(np.round(np.geomspace(1, top, num_points)).astype(np.int64))
    return np.concatenate([[0], grid[grid > 0]])


def capacity_curve(profile: ReuseProfile, capacities_blocks: Sequence[int] | np.ndarray | None = None, *,
                   ttl_s: float | None = None, kv_bytes_per_token: float | None = None) -> pd.DataFrame:
    """Hit rate versus capacity, exact at every capacity asked for.

    Args:
        profile: from :func:`reuse_profile`.
        capacities_blocks: capacities in blocks (default :func:`default_capacities`).
        ttl_s: TTL in seconds (None = no TTL).
        kv_bytes_per_token: KV bytes per token, to show capacities in bytes
            (from ``planner.catalog.get_model(id).estimate(...)``); None leaves
            the byte columns NaN.

    Returns:
        DataFrame with :data:`CURVE_COLUMNS`, one row per capacity, in the given order.

    Raises:
        PlanInputError: a bad capacity, TTL or ``kv_bytes_per_token``.
    """
    ttl_s = check_ttl_s(ttl_s)
    caps = default_capacities(profile) if capacities_blocks is None else _check_capacities(capacities_blocks)
    per_token = None if kv_bytes_per_token is None else check_kv_bytes_per_token(kv_bytes_per_token)
    mask = profile._mask(None, ttl_s)
    rd = profile.run_distance_blocks[mask]
    order = np.argsort(rd, kind="stable")
    rd_sorted = rd[order]
    tok_cum = np.concatenate([[0], np.cumsum(profile.ref_tokens[mask][order])])
    idx = np.searchsorted(rd_sorted, caps, side="right")
    hit_blocks = idx.astype(np.int64)
    hit_tokens = tok_cum[idx].astype(np.int64)
    cap_tokens = caps * profile.block_tokens
    cap_bytes = cap_tokens * per_token if per_token is not None else np.full(caps.shape, np.nan)
    return pd.DataFrame({
        "capacity_blocks": caps,
        "capacity_tokens": cap_tokens,
        "capacity_bytes": cap_bytes.astype(np.float64),
        "capacity_gb": cap_bytes / GB,
        "capacity_gib": cap_bytes / GiB,
        "hit_blocks": hit_blocks,
        "hit_tokens": hit_tokens,
        "block_hit_rate": hit_blocks / profile.num_block_refs if profile.num_block_refs else 0.0,
        "token_hit_rate": hit_tokens / profile.num_input_tokens if profile.num_input_tokens else 0.0,
    }, columns=list(CURVE_COLUMNS))


DEFAULT_TTLS_S: tuple[float, ...] = (0.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1200.0, 1800.0, 3600.0, math.inf)
"""TTL grid of :func:`ttl_curve`, seconds (``inf`` = no TTL)."""


def ttl_curve(profile: ReuseProfile, ttls_s: Sequence[float] | None = None, *,
              capacity_blocks: int | None = None) -> pd.DataFrame:
    """Hit rate versus TTL at one capacity, exact at every TTL asked for.

    Args:
        profile: from :func:`reuse_profile`.
        ttls_s: TTLs in seconds (``inf`` = no TTL; default :data:`DEFAULT_TTLS_S`).
        capacity_blocks: capacity in blocks (None = unlimited).

    Returns:
        DataFrame with :data:`TTL_CURVE_COLUMNS`, one row per TTL.

    Raises:
        PlanInputError: a bad TTL or capacity.
    """
    ttls = DEFAULT_TTLS_S if ttls_s is None else tuple(ttls_s)
    ttls_checked = [check_ttl_s(t) for t in ttls]
    ttl_arr = np.array([math.inf if t is None else t for t in ttls_checked], dtype=np.float64)
    mask = profile._mask(check_capacity_blocks(capacity_blocks), None)
    ages = profile.run_age_s[mask]
    order = np.argsort(ages, kind="stable")
    ages_sorted = ages[order]
    tok_cum = np.concatenate([[0], np.cumsum(profile.ref_tokens[mask][order])])
    idx = np.searchsorted(ages_sorted, ttl_arr, side="left")      # ages strictly below the TTL
    idx = np.where(np.isinf(ttl_arr), ages_sorted.shape[0], idx)   # no TTL: every warm reference
    hit_tokens = tok_cum[idx].astype(np.int64)
    return pd.DataFrame({
        "ttl_s": ttl_arr,
        "hit_blocks": idx.astype(np.int64),
        "hit_tokens": hit_tokens,
        "block_hit_rate": idx / profile.num_block_refs if profile.num_block_refs else 0.0,
        "token_hit_rate": hit_tokens / profile.num_input_tokens if profile.num_input_tokens else 0.0,
    }, columns=list(TTL_CURVE_COLUMNS))
