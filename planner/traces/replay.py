"""Reference replay: requests in arrival order through an LRU prefix cache with a TTL.

The straightforward simulation (a dict in LRU order, one pass per capacity)
that defines the semantics; :mod:`planner.traces.stack` computes the same hit
counts for every capacity at once and is checked against this one.

The cache, precisely:

* it holds whole blocks, at most ``capacity_blocks`` of them (None =
  unlimited); a request's partial last block takes a whole block;
* at a request's arrival time ``now``, expired entries are dropped first: an
  entry last used at ``t0`` is live iff ``now - t0 < ttl_s``, so an entry used
  exactly ``ttl_s`` earlier has expired (``ttl_s=0``: nothing persists, not
  even between requests with the same timestamp; ``ttl_s=None``: no TTL);
* the request's hit is the longest leading run of its blocks that are in the
  cache (block hashes chain over the prefix, Qin et al., Mooncake, FAST '25);
  a cached block after the first miss does not count;
* then all its blocks are inserted or refreshed with last-use time ``now``
  and moved to the most-recently-used end **tail block first** (so its first
  block ends most recently used), the order in which vLLM frees a finished
  request's blocks "so that the tail blocks are evicted first"
  (``vllm/v1/core/kv_cache_manager.py``, ``KVCacheManager.free``); when the
  cache is over capacity the least recently used block is evicted (a request
  longer than the cache evicts its own tail blocks and keeps its head);
* eviction policy ``sglang`` (:mod:`planner.traces.policy`): the cache is a
  prefix tree whose nodes are blocks at their prefix, and only leaves are
  evicted, the least recently touched first (SGLang's ``RadixCache.evict``);
  simulated here as a tree, independently of the stack pass's node mapping;
* block hit rate = hit blocks / block references; token hit rate = prompt
  tokens in hit blocks / all prompt tokens (a partial last block counts its
  real tokens; tokens not covered by a hash never hit).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from planner.traces.policy import DEFAULT_EVICTION_POLICY, check_eviction_policy
from planner.traces.trace import Trace
from planner.traces.checks import blocks_for_bytes, check_capacity_blocks, check_kv_bytes_per_token, check_ttl_s
from planner.traces.stack import CURVE_COLUMNS, Progress
from planner.errors import PlanInputError
from planner.units import GB, GiB
from planner.messages import msg

TIMELINE_COLUMNS: tuple[str, ...] = (
    "arrival_s", "input_tokens", "num_blocks", "hit_blocks", "hit_tokens", "cache_blocks", "cache_bytes",
)
"""Columns of :attr:`ReplayResult.timeline`, one row per request in arrival
order: arrival (s since the first), prompt tokens, hashed blocks, hit blocks,
hit tokens (ints), blocks in the cache just after the request was inserted
(int), and those blocks in bytes (float; NaN without ``kv_bytes_per_token``)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class ReplayResult:
    """One replay of a trace through a cache of one capacity and TTL.

    Attributes:
        trace_name: the trace's name.
        measurable: False when the trace has no prefix hashes (hit fields are then None).
        message: why hit rates are not measurable, or "".
        capacity_blocks: capacity, blocks (None = unlimited).
        ttl_s: TTL, seconds (None = none).
        block_tokens: tokens per block (None without hashes).
        kv_bytes_per_token: bytes per token used for byte figures, or None.
        num_requests, num_block_refs, num_unique_blocks, num_input_tokens: trace size.
        num_hit_blocks, num_hit_tokens: hits (None when not measurable).
        num_evicted_blocks: blocks evicted for capacity.
        num_expired_blocks: blocks dropped by the TTL.
        timeline: DataFrame with :data:`TIMELINE_COLUMNS`.
        eviction_policy: the cache's eviction policy (:data:`planner.traces.policy.EVICTION_POLICIES`).
    """

    trace_name: str
    measurable: bool
    message: str
    capacity_blocks: int | None
    ttl_s: float | None
    block_tokens: int | None
    kv_bytes_per_token: float | None
    num_requests: int
    num_block_refs: int
    num_unique_blocks: int
    num_input_tokens: int
    num_hit_blocks: int | None
    num_hit_tokens: int | None
    num_evicted_blocks: int
    num_expired_blocks: int
    timeline: pd.DataFrame
    eviction_policy: str = DEFAULT_EVICTION_POLICY

    @property
    def block_hit_rate(self) -> float | None:
        """Hit blocks / block references; None when not measurable."""
        if self.num_hit_blocks is None:
            return None
        return self.num_hit_blocks / self.num_block_refs if self.num_block_refs else 0.0

    @property
    def token_hit_rate(self) -> float | None:
        """Hit tokens / prompt tokens; None when not measurable."""
        if self.num_hit_tokens is None:
            return None
        return self.num_hit_tokens / self.num_input_tokens if self.num_input_tokens else 0.0

    @property
    def capacity_bytes(self) -> float | None:
        """Capacity in bytes (blocks x block tokens x bytes per token), or None."""
        if self.capacity_blocks is None or self.kv_bytes_per_token is None or self.block_tokens is None:
            return None
        return self.capacity_blocks * self.block_tokens * self.kv_bytes_per_token


NOT_MEASURABLE = ("This trace has lengths and arrival times only (no prefix block hashes): prefix-cache hit "
                  "rates are not measurable from it. Lengths, arrival rate and concurrency still are.")
"""The message of results on traces without prefix hashes."""


def resolve_capacity(trace: Trace, *, capacity_blocks: int | None = None, capacity_bytes: float | None = None,
                     kv_bytes_per_token: float | None = None) -> int | None:
    """A capacity in blocks from blocks or bytes (bytes need ``kv_bytes_per_token``).

    Raises:
        PlanInputError: both or a bad value given, or bytes without bytes per token.
    """
    if capacity_blocks is not None and capacity_bytes is not None:
        raise PlanInputError("capacity_bytes", capacity_bytes, msg("None when capacity_blocks is given (one or the "
                                                                   "other)"))
    if capacity_bytes is None:
        return check_capacity_blocks(capacity_blocks)
    if kv_bytes_per_token is None:
        raise PlanInputError("kv_bytes_per_token", None, msg("KV bytes per token, to turn capacity_bytes into blocks"))
    return blocks_for_bytes(capacity_bytes, kv_bytes_per_token, trace.block_tokens or 1)


def replay(trace: Trace, *, capacity_blocks: int | None = None, capacity_bytes: float | None = None,
           kv_bytes_per_token: float | None = None, ttl_s: float | None = None,
           progress: Progress | None = None, eviction_policy: str = DEFAULT_EVICTION_POLICY) -> ReplayResult:
    """Replay ``trace`` through one LRU prefix cache (semantics in the module docstring).

    Args:
        trace: any trace; without prefix hashes the result says hit rates are
            not measurable.
        capacity_blocks: capacity in blocks (None = unlimited), or
        capacity_bytes: capacity in bytes, converted to whole blocks of
            ``kv_bytes_per_token * block_tokens`` bytes.
        kv_bytes_per_token: KV bytes per token (from
            ``planner.catalog.entries.get_model(id).estimate(...)``): needed with
            ``capacity_bytes``, and fills the byte columns.
        ttl_s: TTL in seconds (None = no TTL; 0 = nothing persists).
        progress: optional callback ``(fraction, label)``, called about 50 times.
        eviction_policy: ``vllm`` (default) or ``sglang``.

    Returns:
        :class:`ReplayResult`. Time O(block references) (``sglang``: times
        log of the cache size), pure Python.

    Raises:
        PlanInputError: bad capacity, TTL or bytes per token.
    """
    cap = resolve_capacity(trace, capacity_blocks=capacity_blocks, capacity_bytes=capacity_bytes,
                           kv_bytes_per_token=kv_bytes_per_token)
    ttl = check_ttl_s(ttl_s)
    per_token = None if kv_bytes_per_token is None else check_kv_bytes_per_token(kv_bytes_per_token)
    policy = check_eviction_policy(eviction_policy)
    n = trace.num_requests
    hit_blocks = np.zeros(n, dtype=np.int64)
    hit_tokens = np.zeros(n, dtype=np.int64)
    cache_blocks = np.zeros(n, dtype=np.int64)
    evicted = expired = 0
    if trace.has_prefix_hashes and policy == "sglang":
        evicted, expired = _replay_radix(trace, cap, ttl, hit_blocks, hit_tokens, cache_blocks, progress)
    elif trace.has_prefix_hashes:
        bt = trace.block_tokens
        offsets = trace.block_offsets.tolist()
        ids = trace.block_ids.tolist()
        arrivals = trace.arrival_s.tolist()
        inputs = trace.input_tokens.tolist()
        cache: OrderedDict[int, float] = OrderedDict()   # block -> last use, LRU first
        step = max(1, n // 50)
        for i in range(n):
            if progress is not None and i % step == 0:
                progress(i / n, "replay")
            now = arrivals[i]
            if ttl is not None:
                # LRU order is last-use order (arrivals are sorted): expired entries lead.
                while cache:
                    last = next(iter(cache.values()))
                    if now - last >= ttl:
                        cache.popitem(last=False)
                        expired += 1
                    else:
                        break
            blocks = ids[offsets[i]:offsets[i + 1]]
            run = 0
            for b in blocks:
                if b not in cache:
                    break
                run += 1
            hit_blocks[i] = run
            hit_tokens[i] = min(run * bt, inputs[i])
            for b in reversed(blocks):          # tail first
                if b in cache:
                    cache.move_to_end(b)
                cache[b] = now
                if cap is not None and len(cache) > cap:
                    cache.popitem(last=False)
                    evicted += 1
            cache_blocks[i] = len(cache)
    if progress is not None:
        progress(1.0, "replay")
    block_bytes = per_token * trace.block_tokens if (per_token is not None and trace.block_tokens) else math.nan
    import pandas as pd

    timeline = pd.DataFrame({
        "arrival_s": trace.arrival_s,
        "input_tokens": trace.input_tokens,
        "num_blocks": trace.num_blocks,
        "hit_blocks": hit_blocks,
        "hit_tokens": hit_tokens,
        "cache_blocks": cache_blocks,
        "cache_bytes": cache_blocks * block_bytes,
    }, columns=list(TIMELINE_COLUMNS))
    measurable = trace.has_prefix_hashes
    return ReplayResult(
        trace_name=trace.name, measurable=measurable, message="" if measurable else NOT_MEASURABLE,
        capacity_blocks=cap, ttl_s=ttl, block_tokens=trace.block_tokens, kv_bytes_per_token=per_token,
        num_requests=n, num_block_refs=trace.num_block_refs, num_unique_blocks=trace.num_unique_blocks,
        num_input_tokens=int(trace.input_tokens.sum()),
        num_hit_blocks=int(hit_blocks.sum()) if measurable else None,
        num_hit_tokens=int(hit_tokens.sum()) if measurable else None,
        num_evicted_blocks=evicted, num_expired_blocks=expired, timeline=timeline, eviction_policy=policy,
    )


def reference_curve(trace: Trace, capacities_blocks: Sequence[int], *, ttl_s: float | None = None,
                    kv_bytes_per_token: float | None = None, progress: Progress | None = None,
                    eviction_policy: str = DEFAULT_EVICTION_POLICY) -> pd.DataFrame:
    """Hit rate versus capacity by one :func:`replay` per capacity (slow; for checking).

    Returns:
        DataFrame with :data:`planner.traces.stack.CURVE_COLUMNS`, one row per capacity.

    Raises:
        PlanInputError: no prefix hashes, or a bad capacity, TTL or bytes per token.
    """
    from planner.traces.stack import require_hashes

    require_hashes(trace)
    rows = []
    for k, c in enumerate(capacities_blocks):
        r = replay(trace, capacity_blocks=c, ttl_s=ttl_s, kv_bytes_per_token=kv_bytes_per_token,
                   eviction_policy=eviction_policy)
        cap_bytes = r.capacity_bytes if r.capacity_bytes is not None else math.nan
        rows.append({
            "capacity_blocks": r.capacity_blocks, "capacity_tokens": r.capacity_blocks * trace.block_tokens,
            "capacity_bytes": float(cap_bytes), "capacity_gb": cap_bytes / GB, "capacity_gib": cap_bytes / GiB,
            "hit_blocks": r.num_hit_blocks, "hit_tokens": r.num_hit_tokens,
            "block_hit_rate": r.block_hit_rate, "token_hit_rate": r.token_hit_rate,
        })
        if progress is not None:
            progress((k + 1) / len(capacities_blocks), f"replay at {c:,} blocks")
    import pandas as pd

    return pd.DataFrame(rows, columns=list(CURVE_COLUMNS))


def _replay_radix(trace: Trace, cap: int | None, ttl: float | None, hit_blocks: np.ndarray,
                  hit_tokens: np.ndarray, cache_blocks: np.ndarray, progress: Progress | None) -> tuple[int, int]:
    """SGLang's cache as a tree: only leaves are evicted, least recently touched first.

    A node is the pair (parent node, block id), numbered on first sight
    (node 0 is the root); ``stamp[node]`` is a global touch counter (a
    request stamps its tail first, so its head gets the highest stamp).
    Leaves wait in a heap keyed by stamp; stale entries are skipped. The TTL
    drops the leaves last used ``ttl`` or more seconds ago, repeatedly (a
    parent is never used less recently than its children). Fills the
    per-request arrays; returns (evicted, expired) block counts.
    """
    import heapq

    bt = trace.block_tokens
    offsets = trace.block_offsets.tolist()
    ids = trace.block_ids.tolist()
    arrivals = trace.arrival_s.tolist()
    inputs = trace.input_tokens.tolist()
    number: dict[tuple[int, int], int] = {}     # (parent node, block id) -> node
    parent_of: list[int] = [0]
    num_children: dict[int, int] = {0: 0}       # cached nodes (and the root) -> cached children
    stamp: dict[int, int] = {}
    last_use: dict[int, float] = {}
    heap: list[tuple[int, int]] = []            # (stamp, leaf)
    clock = evicted = expired = 0
    n = trace.num_requests
    step = max(1, n // 50)

    def oldest_leaf() -> int | None:
        while heap:
            s, leaf = heap[0]
            if stamp.get(leaf) == s and num_children[leaf] == 0:
                return leaf
            heapq.heappop(heap)
        return None

    def drop(node: int) -> None:
        heapq.heappop(heap)
        del stamp[node], last_use[node], num_children[node]
        parent = parent_of[node]
        num_children[parent] -= 1
        if parent and num_children[parent] == 0:
            heapq.heappush(heap, (stamp[parent], parent))

    for i in range(n):
        if progress is not None and i % step == 0:
            progress(i / n, "replay")
        now = arrivals[i]
        if ttl is not None:
            leaf = oldest_leaf()
            while leaf is not None and now - last_use[leaf] >= ttl:
                drop(leaf)
                expired += 1
                leaf = oldest_leaf()
        path, node, run, live = [], 0, 0, True
        for b in ids[offsets[i]:offsets[i + 1]]:
            key = (node, b)
            if key not in number:
                number[key] = len(parent_of)
                parent_of.append(node)
            node = number[key]
            path.append(node)
            if live and node in stamp:
                run += 1
            else:
                live = False
        hit_blocks[i] = run
        hit_tokens[i] = min(run * bt, inputs[i])
        for node in path:                 # new nodes join the tree, parents first
            if node not in stamp:
                num_children[node] = 0
                num_children[parent_of[node]] += 1
                stamp[node] = 0
        for node in reversed(path):       # tail first: the head ends most recently used
            clock += 1
            stamp[node] = clock
            last_use[node] = now
        if path and num_children[path[-1]] == 0:
            heapq.heappush(heap, (stamp[path[-1]], path[-1]))
        while cap is not None and len(stamp) > cap:
            drop(oldest_leaf())
            evicted += 1
        cache_blocks[i] = len(stamp)
    return evicted, expired
