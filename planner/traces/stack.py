"""Hit rate at every cache capacity (and TTL) from one pass: LRU stack distances.

Mattson, Gecsei, Slutz and Traiger, "Evaluation techniques for storage
hierarchies", IBM Systems Journal 9(2), 1970: under LRU, a reference hits in a
cache of ``C`` blocks if and only if its *stack distance* ``d`` (the number of
distinct blocks referenced since the previous reference to the same block,
itself included) is at most ``C`` (the inclusion property). One pass over the
trace therefore gives the hit count at every capacity.

The order in which a request touches its blocks is the engine's eviction
order (:mod:`planner.traces.policy`): a request's lookups see the stack as it
was before the request, then its blocks are touched tail first (vLLM's
``KVCacheManager.free``; SGLang's leaf-only LRU over radix-tree nodes is the
same order over nodes). Any fixed touch order keeps the inclusion property.

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

Computing the distances: online, with a Fenwick tree over reference
positions holding a 1 at the last reference of each block (Bennett and
Kruskal, 1975; Almási, Caşcaval and Padua, 2002), O(log n) per reference,
compiled with numba (:mod:`planner.traces.kernels`). Memory: 16 bytes per
reference for the result (int32 distance, float64 age; 4 without ages), 4 for
the tree while it runs, 8 per possible block id.

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
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from planner.errors import PlanInputError
from planner.traces.checks import (
    MAX_CAPACITY_BLOCKS, blocks_for_bytes, check_capacities, check_capacity_blocks, check_kv_bytes_per_token,
    check_ttl_s,
)
from planner.traces.kernels import COLD, MAX_REFS, DistanceState
from planner.traces.policy import DEFAULT_EVICTION_POLICY, check_eviction_policy, radix_node_ids
from planner.traces.trace import Progress, Trace
from planner.units import GB, GiB
from planner.messages import msg


PROGRESS_STEPS: int = 50
"""Slices of requests one stack-distance pass runs in (a progress report after each)."""

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
        num_block_refs: block references (of the sample, when sampled).
        num_unique_blocks: distinct blocks (of the sample, when sampled).
        num_input_tokens: the token denominator: prompt tokens of all requests
            (when sampled: the sampled blocks' tokens plus ``sample_rate`` x
            the tokens no hash covers).
        run_distance_blocks: shape (num_block_refs,), int32: the smallest
            capacity, in blocks, at which the reference hits with no TTL
            (:data:`COLD` if it never can); in sampled blocks when sampled.
        run_age_s: shape (num_block_refs,), float64, or None when profiled
            without ages: the reference hits under TTL ``ttl_s`` iff
            ``run_age_s < ttl_s`` (``inf`` if it never can).
        partial_refs: shape (k,), int64, increasing: the references whose
            block is partial (a request's last block, short of ``block_tokens``).
        partial_tokens: shape (k,), int64: real tokens in those blocks (every
            other block holds ``block_tokens``).
        sample_rate: fraction of blocks kept by spatial hash sampling (1 =
            exact); a capacity of ``C`` blocks is evaluated as
            ``floor(C * sample_rate)`` sampled blocks (SHARDS, Waldspurger et
            al., FAST '15).
        adjust_blocks, adjust_tokens: SHARDS-adj (ibid., section 4.2): the
            expected sampled references (tokens) ``R x all`` less those
            actually sampled, counted as hits at the smallest distance so a
            heavy block that the hash kept or dropped does not bias the curve
            (0 when exact).
        eviction_policy: the cache's eviction policy
            (:data:`planner.traces.policy.EVICTION_POLICIES`).
    """

    trace_name: str
    block_tokens: int
    num_requests: int
    num_block_refs: int
    num_unique_blocks: int
    num_input_tokens: int
    run_distance_blocks: np.ndarray
    run_age_s: np.ndarray | None
    partial_refs: np.ndarray
    partial_tokens: np.ndarray
    sample_rate: float = 1.0
    adjust_blocks: float = 0.0
    adjust_tokens: float = 0.0
    eviction_policy: str = DEFAULT_EVICTION_POLICY

    @property
    def sampled(self) -> bool:
        """True when the profile comes from a hash-sampled trace (figures are estimates)."""
        return self.sample_rate < 1.0

    @property
    def ref_tokens(self) -> np.ndarray:
        """Shape (num_block_refs,), int64: real prompt tokens in each referenced block (built on demand)."""
        tokens = np.full(self.num_block_refs, self.block_tokens, dtype=np.int64)
        tokens[self.partial_refs] = self.partial_tokens
        return tokens

    @property
    def saturation_blocks(self) -> int:
        """Smallest capacity (blocks) with the unlimited-capacity hit count, no TTL (0 if nothing hits).

        Sampled: the sampled saturation scaled up by ``1 / sample_rate``.
        """
        finite = self.run_distance_blocks[self.run_distance_blocks != COLD]
        top = int(finite.max()) if finite.size else 0
        return top if not self.sampled else int(math.ceil((top + 1) / self.sample_rate))

    def sampled_capacity(self, capacities_blocks: np.ndarray) -> np.ndarray:
        """Capacities in blocks -> the thresholds compared with run distances (same array when exact)."""
        caps = np.asarray(capacities_blocks, dtype=np.int64)
        if self.sampled:
            caps = np.floor(caps.astype(np.float64) * self.sample_rate).astype(np.int64)
        return np.minimum(caps, COLD - 1)     # every finite distance is below COLD

    def _mask(self, capacity_blocks: int | None, ttl_s: float | None) -> np.ndarray:
        mask = self.run_distance_blocks != COLD
        if capacity_blocks is not None:
            mask &= self.run_distance_blocks <= int(self.sampled_capacity(np.array([capacity_blocks]))[0])
        if ttl_s is not None:
            mask &= self.ages() < ttl_s
        return mask

    def ages(self) -> np.ndarray:
        """``run_age_s``.

        Raises:
            PlanInputError: the profile was computed without ages.
        """
        if self.run_age_s is None:
            raise PlanInputError("ttl_s", "a TTL", msg("no TTL for a profile computed without ages "
                                                       "(reuse_profile(trace, with_ages=True))"))
        return self.run_age_s

    def rates(self, hit_blocks: np.ndarray, hit_tokens: np.ndarray,
              adjusted: np.ndarray | bool) -> tuple[np.ndarray, np.ndarray]:
        """Block and token hit rates from hit counts; where ``adjusted``, add the SHARDS-adj references."""
        hb = np.asarray(hit_blocks, dtype=np.float64) + self.adjust_blocks * np.asarray(adjusted)
        ht = np.asarray(hit_tokens, dtype=np.float64) + self.adjust_tokens * np.asarray(adjusted)
        nb = self.num_block_refs + self.adjust_blocks
        nt = self.num_input_tokens + self.adjust_tokens
        return (np.clip(hb, 0, None) / nb if nb > 0 else 0.0 * hb,
                np.clip(ht, 0, None) / nt if nt > 0 else 0.0 * ht)

    def _hit_tokens(self, mask: np.ndarray) -> int:
        """Tokens in the references selected by ``mask``: full blocks less each partial block's shortfall."""
        short = self.block_tokens - self.partial_tokens
        return int(np.count_nonzero(mask)) * self.block_tokens - int(short[mask[self.partial_refs]].sum())

    def hits(self, capacity_blocks: int | None = None, ttl_s: float | None = None) -> HitRates:
        """Hit counts at one capacity (blocks; None = unlimited) and TTL (s; None = none).

        Raises:
            PlanInputError: bad capacity or TTL.
        """
        capacity_blocks = check_capacity_blocks(capacity_blocks)
        ttl_s = check_ttl_s(ttl_s)
        mask = self._mask(capacity_blocks, ttl_s)
        hit_blocks, hit_tokens = int(np.count_nonzero(mask)), self._hit_tokens(mask)
        adjusted = (capacity_blocks is None or self.sampled_capacity(np.array([capacity_blocks]))[0] >= 1) \
            and (ttl_s is None or ttl_s > 0)
        block_rate, token_rate = self.rates(hit_blocks, hit_tokens, adjusted)
        return HitRates(
            capacity_blocks=capacity_blocks, ttl_s=ttl_s, num_requests=self.num_requests,
            num_block_refs=self.num_block_refs, num_unique_blocks=self.num_unique_blocks,
            num_hit_blocks=hit_blocks, num_input_tokens=self.num_input_tokens,
            num_hit_tokens=hit_tokens, sample_rate=self.sample_rate, eviction_policy=self.eviction_policy,
            sampled_block_hit_rate=float(block_rate), sampled_token_hit_rate=float(token_rate),
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
        sample_rate: 1 for exact counts; below 1 the counts are of a
            hash-sampled trace and the rates are estimates.
        sampled_block_hit_rate, sampled_token_hit_rate: the estimates (sampled only).
        eviction_policy: the cache's eviction policy
            (:data:`planner.traces.policy.EVICTION_POLICIES`).
    """

    capacity_blocks: int | None
    ttl_s: float | None
    num_requests: int
    num_block_refs: int
    num_unique_blocks: int
    num_hit_blocks: int
    num_input_tokens: int
    num_hit_tokens: int
    sample_rate: float = 1.0
    sampled_block_hit_rate: float | None = None
    sampled_token_hit_rate: float | None = None
    eviction_policy: str = DEFAULT_EVICTION_POLICY

    @property
    def block_hit_rate(self) -> float:
        """Hit blocks / block references (0 for an empty trace); sampled: the SHARDS-adj estimate."""
        if self.sample_rate < 1.0 and self.sampled_block_hit_rate is not None:
            return self.sampled_block_hit_rate
        return self.num_hit_blocks / self.num_block_refs if self.num_block_refs else 0.0

    @property
    def token_hit_rate(self) -> float:
        """Hit tokens / prompt tokens (0 for an empty trace); sampled: the SHARDS-adj estimate."""
        if self.sample_rate < 1.0 and self.sampled_token_hit_rate is not None:
            return self.sampled_token_hit_rate
        return self.num_hit_tokens / self.num_input_tokens if self.num_input_tokens else 0.0


def require_hashes(trace: Trace) -> None:
    """Raise unless hit rates are measurable on ``trace``.

    Raises:
        PlanInputError: the trace has no prefix block hashes (Azure traces).
    """
    if not trace.has_prefix_hashes:
        raise PlanInputError("trace", trace.name,
                             msg("a trace with prefix block hashes (Mooncake, or JSONL with hash_ids): this one has "
                                 "lengths only, so hit rates are not measurable"))


def reuse_profile(trace: Trace, progress: Progress | None = None, *, with_ages: bool = True,
                  eviction_policy: str = DEFAULT_EVICTION_POLICY) -> ReuseProfile:
    """Stack distances, ages and their leading-run maxima for every block reference.

    One pass, O(n log n) (n = block references) with a Fenwick tree
    (:func:`planner.traces.kernels.run_distances`); memory: the result's 16
    bytes per reference plus 4 (tree) while it runs, and 8 per distinct block.

    Args:
        trace: a trace with prefix hashes (hash-sampled when
            ``trace.sample_rate < 1``: the profile is then an estimate).
        progress: optional callback ``(fraction, label)``, called about 50 times.
        with_ages: also compute run ages (8 bytes per reference), needed for any TTL.
        eviction_policy: ``vllm`` (default) or ``sglang``
            (:mod:`planner.traces.policy`); ``sglang`` first maps blocks to
            radix-tree nodes (4 more bytes per reference).

    Raises:
        PlanInputError: the trace has no prefix hashes, more than
            :data:`planner.traces.kernels.MAX_REFS` block references, an
            unknown policy, or ``sglang`` on a sampled trace.
    """
    require_hashes(trace)
    policy = check_eviction_policy(eviction_policy)
    n = trace.num_block_refs
    if n > MAX_REFS:
        raise PlanInputError("trace", f"{n:,} block references",
                             msg("at most {max_refs:,} for an exact curve; sample it (--sample-rate)",
                                 max_refs=MAX_REFS))
    ids, id_space, unique = trace.block_ids, trace.id_space, trace.num_unique_blocks
    if n and (int(ids.min()) < 0 or int(ids.max()) >= trace.id_space):   # the compiled loop does not bound-check
        raise PlanInputError("trace.block_ids", f"[{int(ids.min())}, {int(ids.max())}]",
                             msg("ids in [0, id_space = {id_space:,})", id_space=trace.id_space))
    if policy == "sglang":
        if trace.sample_rate < 1.0:
            raise PlanInputError("eviction_policy", policy, msg("vllm for a sampled trace (radix-tree nodes need "
                                                                "every block of each prefix)"))
        ids, id_space = radix_node_ids(trace.block_offsets, ids)
        unique = id_space
    state = DistanceState(n, id_space, with_ages)
    num_requests = trace.num_requests
    step = max(1, num_requests // PROGRESS_STEPS)
    for lo in range(0, num_requests, step):
        if progress is not None:
            progress(lo / num_requests, "stack distances")
        state.advance(trace.block_offsets, ids, trace.arrival_s, lo, min(num_requests, lo + step))
    if progress is not None:
        progress(1.0, "stack distances")
    run_dist, run_age = state.run_dist, (state.run_age if with_ages else None)
    del state
    partial_refs, partial_tokens = trace.partial_blocks()
    for a in (run_dist, run_age, partial_refs, partial_tokens):
        if a is not None:
            a.flags.writeable = False
    return ReuseProfile(
        trace_name=trace.name, block_tokens=int(trace.block_tokens), num_requests=trace.num_requests,
        num_block_refs=n, num_unique_blocks=unique, eviction_policy=policy,
        num_input_tokens=trace.token_denominator(), run_distance_blocks=run_dist, run_age_s=run_age,
        partial_refs=partial_refs, partial_tokens=partial_tokens, sample_rate=trace.sample_rate,
        adjust_blocks=trace.sample_rate * trace.unsampled_block_refs - n if trace.sample_rate < 1 else 0.0,
        adjust_tokens=(trace.sample_rate * trace.unsampled_hashed_tokens - trace.token_denominator()
                       + trace.sample_rate * trace.unhashed_tokens) if trace.sample_rate < 1 else 0.0,
    )


def _sorted_hits(keys: np.ndarray, profile: ReuseProfile, mask: np.ndarray,
                 thresholds: np.ndarray, side: str) -> tuple[np.ndarray, np.ndarray]:
    """Hit blocks and tokens at each threshold: references in ``mask`` whose key is <= (side right)
    or < (side left) the threshold. Sorts a copy of the keys (8 B per reference), not an argsort."""
    sel = keys[mask]
    sel.sort()
    hit_blocks = np.searchsorted(sel, thresholds, side=side).astype(np.int64)
    pmask = mask[profile.partial_refs]
    pkeys = keys[profile.partial_refs][pmask]
    short = (profile.block_tokens - profile.partial_tokens)[pmask]
    porder = np.argsort(pkeys, kind="stable")
    short_cum = np.concatenate([[0], np.cumsum(short[porder])])
    pidx = np.searchsorted(pkeys[porder], thresholds, side=side)
    hit_tokens = hit_blocks * profile.block_tokens - short_cum[pidx]
    return hit_blocks, hit_tokens.astype(np.int64)


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
    """Hit rate versus capacity, exact at every capacity asked for: :func:`capacity_curve_columns` as a DataFrame.

    Args:
        profile: from :func:`reuse_profile`.
        capacities_blocks: capacities in blocks (default :func:`default_capacities`).
        ttl_s: TTL in seconds (None = no TTL).
        kv_bytes_per_token: KV bytes per token, to show capacities in bytes
            (from ``planner.catalog.entries.get_model(id).estimate(...)``); None leaves
            the byte columns NaN.

    Returns:
        DataFrame with :data:`CURVE_COLUMNS`, one row per capacity, in the given order.

    Raises:
        PlanInputError: a bad capacity, TTL or ``kv_bytes_per_token``.
    """
    import pandas as pd

    return pd.DataFrame(capacity_curve_columns(profile, capacities_blocks, ttl_s=ttl_s,
                                               kv_bytes_per_token=kv_bytes_per_token), columns=list(CURVE_COLUMNS))


def capacity_curve_columns(profile: ReuseProfile, capacities_blocks: Sequence[int] | np.ndarray | None = None, *,
                           ttl_s: float | None = None, kv_bytes_per_token: float | None = None) -> dict[str, np.ndarray]:
    """:func:`capacity_curve`'s columns (:data:`CURVE_COLUMNS` -> shape (k,) arrays), without pandas.

    Raises:
        PlanInputError: a bad capacity, TTL or ``kv_bytes_per_token``.
    """
    ttl_s = check_ttl_s(ttl_s)
    caps = default_capacities(profile) if capacities_blocks is None else check_capacities(capacities_blocks)
    per_token = None if kv_bytes_per_token is None else check_kv_bytes_per_token(kv_bytes_per_token)
    mask = profile._mask(None, ttl_s)
    hit_blocks, hit_tokens = _sorted_hits(profile.run_distance_blocks, profile, mask,
                                          profile.sampled_capacity(caps), "right")
    block_rate, token_rate = profile.rates(hit_blocks, hit_tokens,
                                           (profile.sampled_capacity(caps) >= 1) & (ttl_s is None or ttl_s > 0))
    cap_tokens = caps * profile.block_tokens
    cap_bytes = cap_tokens * per_token if per_token is not None else np.full(caps.shape, np.nan)
    return {
        "capacity_blocks": caps,
        "capacity_tokens": cap_tokens,
        "capacity_bytes": cap_bytes.astype(np.float64),
        "capacity_gb": cap_bytes / GB,
        "capacity_gib": cap_bytes / GiB,
        "hit_blocks": hit_blocks,
        "hit_tokens": hit_tokens,
        "block_hit_rate": block_rate,
        "token_hit_rate": token_rate,
    }


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
    idx, hit_tokens = _sorted_hits(profile.ages(), profile, mask, ttl_arr, "left")   # ages strictly below
    idx = np.where(np.isinf(ttl_arr), int(np.count_nonzero(mask)), idx)                # no TTL: every warm one
    hit_tokens = np.where(np.isinf(ttl_arr), profile._hit_tokens(mask), hit_tokens)
    cap_ok = capacity_blocks is None or profile.sampled_capacity(np.array([capacity_blocks]))[0] >= 1
    block_rate, token_rate = profile.rates(idx, hit_tokens, (ttl_arr > 0) & cap_ok)
    import pandas as pd

    return pd.DataFrame({
        "ttl_s": ttl_arr,
        "hit_blocks": idx.astype(np.int64),
        "hit_tokens": hit_tokens,
        "block_hit_rate": block_rate,
        "token_hit_rate": token_rate,
    }, columns=list(TTL_CURVE_COLUMNS))
