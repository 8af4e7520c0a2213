"""A trace replayed across N replicas, each with its own LRU prefix cache, under a routing policy.

Every replica has the same capacity (blocks), TTL and eviction policy
(:mod:`planner.traces.policy`), with the single-cache semantics of
:mod:`planner.traces.replay`. Routing policies
(:data:`ROUTING_POLICIES`):

* ``random``: a fixed hash of the request's position in the trace
  (SplitMix64, so runs repeat exactly), modulo N;
* ``round-robin``: request ``i`` goes to replica ``i mod N``;
* ``session``: a hash of the request's session or conversation id when the
  trace has one; otherwise of its *conversation block*, the first block past
  the prefix every request of the trace shares (a global system prompt), so
  the turns of one conversation meet on one replica. The Mooncake
  conversation trace starts all 12,031 requests with the same block, so the
  first block alone would send every request to one replica;
* ``prefix``: the replica whose cache holds the longest leading run of the
  request's blocks (live under the TTL), ties to the replica that has been
  sent the fewest requests so far, then the lowest index; as llm-d's
  precise prefix-cache scorer and SGLang's cache-aware router route. As in
  SGLang's router (sgl-router README: ``--cache-threshold``, default 0.5), a
  best match covering less than :data:`PREFIX_MATCH_THRESHOLD` of the
  request's blocks is no reason to stick: the request goes to the least
  loaded replica (SGLang picks the one with the smallest tree; here, the
  fewest requests so far). Without this, a prefix every request shares (a
  system prompt) would pull all traffic onto the first replica.

The first three do not look at cache state, so each replica's request stream
is fixed before any replay: one stack-distance pass per replica
(:func:`planner.traces.stack.reuse_profile`) gives its exact hits, and one
replica is exactly the single cache. ``prefix`` routing depends on what each
cache holds at each arrival, which a one-pass method cannot know in advance,
so it is simulated request by request (an ``OrderedDict`` per replica,
O(N x blocks) per request).

Load imbalance = the most requests any replica receives / the mean (1 =
perfectly even).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from planner.errors import PlanInputError
from planner.traces.kernels import gather_requests, splitmix64
from planner.traces.checks import check_capacity_blocks, check_ttl_s
from planner.traces.policy import DEFAULT_EVICTION_POLICY, check_eviction_policy, radix_node_ids
from planner.traces.stack import Progress, require_hashes, reuse_profile
from planner.traces.trace import Trace
from planner.messages import msg

ROUTING_POLICIES: tuple[str, ...] = ("random", "round-robin", "session", "prefix")
"""Routing policy ids, in help order."""

PREFIX_MATCH_THRESHOLD: float = 0.5
"""Least share of a request's blocks the best replica must hold for prefix routing to follow it
(SGLang router's ``cache_threshold`` default, sgl-router README)."""

MAX_REPLICAS: int = 1024
"""Most replicas one fleet replay takes."""

FLEET_COLUMNS: tuple[str, ...] = (
    "replicas", "routing", "method", "eviction_policy", "capacity_blocks", "block_hit_rate", "token_hit_rate",
    "min_replica_block_hit_rate", "max_replica_block_hit_rate", "load_imbalance",
)
"""Columns of :func:`fleet_table`: replicas (int), routing (policy id), method
("stack distances" or "simulation"), eviction policy id, capacity per replica in blocks (NaN =
unlimited), aggregate block- and token-weighted hit rates, the lowest and
highest replica's block hit rate (fractions), load imbalance (max / mean
requests per replica)."""


@dataclass(frozen=True, kw_only=True)
class FleetResult:
    """Hits of one trace on N replicas under one routing policy.

    Attributes:
        num_replicas: N.
        routing: the policy (:data:`ROUTING_POLICIES`).
        method: "stack distances" (routing independent of cache state) or "simulation".
        capacity_blocks: capacity of each replica, blocks (None = unlimited).
        ttl_s: TTL, seconds (None = none).
        num_block_refs, num_input_tokens: the whole trace.
        replica_requests, replica_block_refs, replica_hit_blocks, replica_hit_tokens:
            per replica, length N.
        eviction_policy: each replica's eviction policy (:mod:`planner.traces.policy`).
    """

    num_replicas: int
    routing: str
    method: str
    capacity_blocks: int | None
    ttl_s: float | None
    num_block_refs: int
    num_input_tokens: int
    replica_requests: tuple[int, ...]
    replica_block_refs: tuple[int, ...]
    replica_hit_blocks: tuple[int, ...]
    replica_hit_tokens: tuple[int, ...]
    eviction_policy: str = DEFAULT_EVICTION_POLICY

    @property
    def num_hit_blocks(self) -> int:
        """Hit blocks over all replicas."""
        return sum(self.replica_hit_blocks)

    @property
    def num_hit_tokens(self) -> int:
        """Hit tokens over all replicas."""
        return sum(self.replica_hit_tokens)

    @property
    def block_hit_rate(self) -> float:
        """Aggregate hit blocks / block references."""
        return self.num_hit_blocks / self.num_block_refs if self.num_block_refs else 0.0

    @property
    def token_hit_rate(self) -> float:
        """Aggregate hit tokens / prompt tokens."""
        return self.num_hit_tokens / self.num_input_tokens if self.num_input_tokens else 0.0

    @property
    def replica_block_hit_rates(self) -> tuple[float, ...]:
        """Each replica's hit blocks / its block references (0 for a replica with none)."""
        return tuple(h / r if r else 0.0 for h, r in zip(self.replica_hit_blocks, self.replica_block_refs))

    @property
    def load_imbalance(self) -> float:
        """Most requests on one replica / mean requests per replica (1 = even)."""
        total = sum(self.replica_requests)
        return max(self.replica_requests) * self.num_replicas / total if total else 1.0


def check_replicas(value: object) -> int:
    """A replica count: a whole number in [1, 1024].

    Raises:
        PlanInputError: anything else.
    """
    if isinstance(value, np.integer):
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_REPLICAS:
        raise PlanInputError("replicas", value, msg("a whole number of replicas in [1, {max_replicas:,}]",
                                                    max_replicas=MAX_REPLICAS))
    return value


def check_routing(value: object) -> str:
    """A routing policy id.

    Raises:
        PlanInputError: not one of :data:`ROUTING_POLICIES`.
    """
    if value not in ROUTING_POLICIES:
        raise PlanInputError("routing", value, msg("one of {choices}", choices=", ".join(ROUTING_POLICIES)))
    return str(value)


def conversation_keys(trace: Trace) -> np.ndarray:
    """Shape (num_requests,), int64: the session key of each request (see the module docstring).

    The trace's session ids when it has them; else the id of the first block
    past the prefix shared by every request (a request no longer than that
    prefix: its last block; a request without blocks: ``-1 - index``).
    """
    if trace.session_ids is not None:
        return np.asarray(trace.session_ids, dtype=np.int64)
    counts = trace.num_blocks
    starts = trace.block_offsets[:-1]
    depth = 0
    while True:
        deep = counts > depth
        if not deep.any():
            break
        at = trace.block_ids[starts[deep] + depth]
        if (at != at[0]).any() or not deep.all():
            break
        depth += 1
    keys = -1 - np.arange(trace.num_requests, dtype=np.int64)
    has = counts > 0
    pick = np.minimum(depth, counts[has] - 1)
    keys[has] = trace.block_ids[starts[has] + pick]
    return keys


def assign_replicas(trace: Trace, num_replicas: int, routing: str) -> np.ndarray:
    """Replica of each request for a state-independent policy: shape (num_requests,), int64 in [0, N).

    Raises:
        PlanInputError: bad N, or ``prefix`` (it depends on cache state: :func:`fleet_hits` simulates it).
    """
    n = check_replicas(num_replicas)
    routing = check_routing(routing)
    if routing == "prefix":
        raise PlanInputError("routing", routing, msg("a state-independent policy (random, round-robin, session)"))
    index = np.arange(trace.num_requests, dtype=np.int64)
    if routing == "round-robin":
        return index % n
    keys = index if routing == "random" else conversation_keys(trace)
    return (splitmix64(keys) % np.uint64(n)).astype(np.int64)


def subtrace(trace: Trace, requests: np.ndarray) -> Trace:
    """The requests at the given (increasing) indices of an exact trace, as a trace of their own (same
    block ids; ``unique_blocks`` stays the whole trace's)."""
    offsets, ids = gather_requests(trace.block_offsets, trace.block_ids, requests.astype(np.int64))
    return Trace(name=trace.name, format=trace.format, block_tokens=trace.block_tokens,
                 arrival_s=trace.arrival_s[requests], input_tokens=trace.input_tokens[requests],
                 output_tokens=trace.output_tokens[requests], block_offsets=offsets, block_ids=ids,
                 id_space=trace.id_space, unique_blocks=trace.unique_blocks)


def radix_trace(trace: Trace) -> Trace:
    """The trace with each block id replaced by its radix-tree node (:func:`planner.traces.policy.radix_node_ids`),
    so that tail-first LRU over it is SGLang's leaf-only LRU."""
    nodes, num_nodes = radix_node_ids(trace.block_offsets, trace.block_ids)
    return Trace(name=trace.name, format=trace.format, block_tokens=trace.block_tokens,
                 arrival_s=trace.arrival_s, input_tokens=trace.input_tokens, output_tokens=trace.output_tokens,
                 block_offsets=trace.block_offsets, block_ids=nodes, id_space=num_nodes, unique_blocks=num_nodes,
                 session_ids=trace.session_ids, unhashed_tokens=trace.unhashed_tokens)


def partition_hits(trace: Trace, requests: np.ndarray, capacity_blocks: int | None, ttl_s: float | None,
                   eviction_policy: str = DEFAULT_EVICTION_POLICY) -> tuple[int, int, int, int]:
    """One replica's (requests, block references, hit blocks, hit tokens): the stack pass over the
    requests at the given increasing indices of ``trace`` (already radix-keyed for ``sglang``)."""
    if requests.size == 0:
        return 0, 0, 0, 0
    sub = trace if requests.size == trace.num_requests else subtrace(trace, requests)
    h = reuse_profile(sub, with_ages=ttl_s is not None).hits(capacity_blocks, ttl_s)
    return int(requests.size), h.num_block_refs, h.num_hit_blocks, h.num_hit_tokens


def fleet_hits(trace: Trace, num_replicas: int, routing: str, *, capacity_blocks: int | None = None,
               ttl_s: float | None = None, eviction_policy: str = DEFAULT_EVICTION_POLICY) -> FleetResult:
    """Replay ``trace`` on ``num_replicas`` caches of ``capacity_blocks`` each under ``routing``.

    One replica is the single cache (stack distances) whatever the policy.

    Raises:
        PlanInputError: no prefix hashes, a sampled trace, or a bad N,
            policy, capacity, TTL or eviction policy.
    """
    require_hashes(trace)
    n = check_replicas(num_replicas)
    routing = check_routing(routing)
    cap = check_capacity_blocks(capacity_blocks)
    ttl = check_ttl_s(ttl_s)
    policy = check_eviction_policy(eviction_policy)
    if trace.sample_rate < 1.0:
        raise PlanInputError("sample_rate", trace.sample_rate, msg("1 (every block) for fleets: routing keys and "
                                                                   "prefix matches need the whole trace"))
    keyed = radix_trace(trace) if policy == "sglang" else trace
    if routing == "prefix" and n > 1:
        return _simulate_prefix(keyed, n, cap, ttl, policy)
    replica = np.zeros(trace.num_requests, dtype=np.int64) if n == 1 else assign_replicas(trace, n, routing)
    parts = [partition_hits(keyed, np.flatnonzero(replica == r), cap, ttl) for r in range(n)]
    return fleet_result(trace, n, routing, cap, ttl, policy, parts)


def fleet_result(trace: Trace, n: int, routing: str, cap: int | None, ttl: float | None, policy: str,
                 parts: Sequence[tuple[int, int, int, int]]) -> FleetResult:
    """A stack-distance :class:`FleetResult` from each replica's :func:`partition_hits`."""
    reqs, refs, hit_b, hit_t = (tuple(int(p[k]) for p in parts) for k in range(4))
    return FleetResult(num_replicas=n, routing=routing, method="stack distances", capacity_blocks=cap, ttl_s=ttl,
                       num_block_refs=trace.num_block_refs, num_input_tokens=trace.token_denominator(),
                       replica_requests=reqs, replica_block_refs=refs, replica_hit_blocks=hit_b,
                       replica_hit_tokens=hit_t, eviction_policy=policy)


def _simulate_prefix(trace: Trace, n: int, cap: int | None, ttl: float | None,
                     policy: str = DEFAULT_EVICTION_POLICY) -> FleetResult:
    """Request-by-request replay with prefix-aware routing (semantics of ``planner.traces.replay``)."""
    bt = trace.block_tokens
    offsets = trace.block_offsets.tolist()
    ids = trace.block_ids.tolist()
    arrivals = trace.arrival_s.tolist()
    inputs = trace.input_tokens.tolist()
    caches: list[OrderedDict[int, float]] = [OrderedDict() for _ in range(n)]
    reqs, refs, hit_b, hit_t = [0] * n, [0] * n, [0] * n, [0] * n
    for i in range(trace.num_requests):
        now = arrivals[i]
        blocks = ids[offsets[i]:offsets[i + 1]]
        best, best_run = 0, -1
        for r, cache in enumerate(caches):
            if ttl is not None:
                while cache:
                    if now - next(iter(cache.values())) >= ttl:
                        cache.popitem(last=False)
                    else:
                        break
            run = 0
            for b in blocks:
                if b not in cache:
                    break
                run += 1
            if run > best_run or (run == best_run and reqs[r] < reqs[best]):
                best, best_run = r, run
        if blocks and best_run < PREFIX_MATCH_THRESHOLD * len(blocks):
            least = min(range(n), key=reqs.__getitem__)
            if least != best:   # the least loaded replica's own leading run
                cache, run = caches[least], 0
                for b in blocks:
                    if b not in cache:
                        break
                    run += 1
                best, best_run = least, run
        cache = caches[best]
        reqs[best] += 1
        refs[best] += len(blocks)
        hit_b[best] += best_run
        hit_t[best] += min(best_run * bt, inputs[i])
        for b in reversed(blocks):      # tail first (planner.traces.policy)
            if b in cache:
                cache.move_to_end(b)
            cache[b] = now
            if cap is not None and len(cache) > cap:
                cache.popitem(last=False)
    return FleetResult(num_replicas=n, routing="prefix", method="simulation", capacity_blocks=cap, ttl_s=ttl,
                       num_block_refs=trace.num_block_refs, num_input_tokens=int(trace.input_tokens.sum()),
                       replica_requests=tuple(reqs), replica_block_refs=tuple(refs),
                       replica_hit_blocks=tuple(hit_b), replica_hit_tokens=tuple(hit_t), eviction_policy=policy)


def fleet_table(trace: Trace, replicas: Sequence[int], routings: Sequence[str], *,
                capacity_blocks: int | None = None, ttl_s: float | None = None,
                progress: Progress | None = None, eviction_policy: str = DEFAULT_EVICTION_POLICY,
                ) -> tuple[pd.DataFrame, list[FleetResult]]:
    """Hit rate vs number of replicas, one row per (replicas, routing).

    Returns:
        ``(DataFrame with FLEET_COLUMNS, the FleetResult of each row)``.

    Raises:
        PlanInputError: as :func:`fleet_hits`, or empty lists.
    """
    if not replicas or not routings:
        raise PlanInputError("replicas", list(replicas), msg("at least one replica count and one routing policy"))
    results = []
    todo = [(int(n), check_routing(p)) for p in routings for n in replicas]
    for k, (n, p) in enumerate(todo):
        if progress is not None:
            progress(k / len(todo), f"{n} replicas, {p} routing")
        results.append(fleet_hits(trace, n, p, capacity_blocks=capacity_blocks, ttl_s=ttl_s,
                                  eviction_policy=eviction_policy))
    if progress is not None:
        progress(1.0, "fleet")
    return fleet_frame(results), results


def fleet_frame(results: Sequence[FleetResult]) -> pd.DataFrame:
    """The :data:`FLEET_COLUMNS` table of some fleet results, one row each."""
    import pandas as pd

    return pd.DataFrame({
        "replicas": [r.num_replicas for r in results],
        "routing": [r.routing for r in results],
        "method": [r.method for r in results],
        "eviction_policy": [r.eviction_policy for r in results],
        "capacity_blocks": [np.nan if r.capacity_blocks is None else r.capacity_blocks for r in results],
        "block_hit_rate": [r.block_hit_rate for r in results],
        "token_hit_rate": [r.token_hit_rate for r in results],
        "min_replica_block_hit_rate": [min(r.replica_block_hit_rates) for r in results],
        "max_replica_block_hit_rate": [max(r.replica_block_hit_rates) for r in results],
        "load_imbalance": [r.load_imbalance for r in results],
    }, columns=list(FLEET_COLUMNS))
