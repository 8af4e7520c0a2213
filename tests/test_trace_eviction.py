"""Eviction order of the prefix cache (planner.traces.policy): tail first (vLLM), leaf-only (SGLang).

Golden values are derived by hand in the comments; the stack pass is checked against
simple simulators written here, independently of planner.traces.replay.
"""

from __future__ import annotations

import heapq
import io
import json
from collections import OrderedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.errors import PlanInputError
from planner.traces import fleet_hits, read_trace, replay, reuse_profile
from planner.traces.policy import EVICTION_POLICIES, radix_node_ids

BT = 4


def trace_of(requests):
    """A JSONL trace: (arrival s, block ids) per request, every block full (BT tokens)."""
    rows = [json.dumps({"timestamp_s": t, "input_length": len(ids) * BT, "output_length": 1, "hash_ids": ids})
            for t, ids in requests]
    return read_trace(io.BytesIO("\n".join(rows).encode()), format="jsonl", block_tokens=BT)


def lru_tail_first(requests, capacity):
    """Plain LRU (an OrderedDict, least recent first): lookups on the cache as it was before the
    request, then its blocks touched tail first. Returns hit blocks."""
    cache: OrderedDict[int, None] = OrderedDict()
    hits = 0
    for _, ids in requests:
        for b in ids:
            if b not in cache:
                break
            hits += 1
        for b in reversed(ids):
            cache[b] = None
            cache.move_to_end(b)
            if len(cache) > capacity:
                cache.popitem(last=False)
    return hits


def leaf_only_lru(requests, capacity):
    """SGLang-like: a tree of (prefix, block) nodes; evict the least recently used *leaf* only.
    Recency: a counter, the request's tail stamped first. Returns hit blocks."""
    stamp: dict[tuple, int] = {}
    clock = hits = 0
    for _, ids in requests:
        path = [tuple(ids[:k + 1]) for k in range(len(ids))]
        for node in path:
            if node not in stamp:
                break
            hits += 1
        for node in reversed(path):
            clock += 1
            stamp[node] = clock
        while len(stamp) > capacity:
            leaves = [n for n in stamp if not any(m[:-1] == n for m in stamp)]
            del stamp[min(leaves, key=stamp.__getitem__)]
    return hits


def test_three_requests_at_two_blocks_hit_one_in_five():
    # Requests [1, 2], [3], [1, 2] at capacity 2. 5 block lookups in all.
    # r0: 1 and 2 miss (2 lookups); touched tail first: 2, then 1, so 2 is least recently used. Cache {2, 1}.
    # r1: 3 misses (1 lookup); inserting 3 evicts the least recently used, 2 (the tail). Cache {1, 3}.
    # r2: 1 hits, 2 misses (the leading run stops): 1 hit. Block hit rate 1 / 5 = 0.2.
    # (Head first, as before, r1 would have evicted 1 and r2 would miss at once: 0.)
    t = trace_of([(0, [1, 2]), (1, [3]), (2, [1, 2])])
    for policy in EVICTION_POLICIES:
        r = replay(t, capacity_blocks=2, eviction_policy=policy)
        h = reuse_profile(t, eviction_policy=policy).hits(2)
        assert r.num_hit_blocks == h.num_hit_blocks == 1 and r.num_block_refs == 5
        assert h.block_hit_rate == pytest.approx(0.2) and h.eviction_policy == policy
        # tokens: one hit block of 4 tokens out of 5 x 4 = 20 prompt tokens
        assert h.token_hit_rate == pytest.approx(0.2)


def test_the_policies_differ_when_one_id_follows_two_prefixes():
    # [1, 2] then [2] then [3] at capacity 2. vLLM keys blocks by id: r0 leaves 2 older than 1;
    # r1 looks up 2 (hit) and touches it, so 1 is now least recent; r2's 3 evicts 1. Then [1, 2] misses.
    # SGLang: r1's [2] is another node (2 at the root), so the tree holds 1 -> 2, and root -> 2;
    # r1 inserts root->2 (3 nodes > 2): the least recent leaf is 1->2 (r0's tail); r2's 3 evicts
    # the next least recent leaf, 1 (now a leaf, stamped by r0 before r1). r3 = [1, 2] misses either way.
    reqs = [(0, [1, 2]), (1, [2]), (2, [3]), (3, [2])]
    t = trace_of(reqs)
    # vllm: r1 hits 2 (cached by r0): 1 hit; r3: cache after r2 = {2, 3}: 2 hits: total 2.
    assert reuse_profile(t, eviction_policy="vllm").hits(2).num_hit_blocks == 2
    # sglang: r1's root->2 is a new node: miss; after r2 the cache is {root->2, root->3}; r3 hits: total 1.
    assert reuse_profile(t, eviction_policy="sglang").hits(2).num_hit_blocks == 1


def test_radix_nodes_are_block_ids_at_their_prefix():
    # requests [5, 6], [5, 7], [6]: nodes 5, 5->6, 5->7, and root->6 (not 5->6).
    nodes, num = radix_node_ids([0, 2, 4, 5], __import__("numpy").array([5, 6, 5, 7, 6]))
    assert num == 4
    assert nodes[0] == nodes[2] and len({int(nodes[1]), int(nodes[3]), int(nodes[4])}) == 3


requests_strategy = st.lists(
    st.lists(st.integers(0, 7), min_size=0, max_size=5, unique=True), min_size=1, max_size=14,
).map(lambda rs: [(float(k), ids) for k, ids in enumerate(rs)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests_strategy)
def test_one_pass_equals_an_independent_lru_at_every_capacity(requests):
    # the stack property: one pass gives, at each capacity, what a separate LRU run gives
    requests = [(t, ids) for t, ids in requests if ids] or [(0.0, [0])]
    t = trace_of(requests)
    vllm = reuse_profile(t, eviction_policy="vllm")
    sglang = reuse_profile(t, eviction_policy="sglang")
    for cap in (0, 1, 2, 3, 5, 8, 40):
        assert vllm.hits(cap).num_hit_blocks == lru_tail_first(requests, cap)
        assert sglang.hits(cap).num_hit_blocks == leaf_only_lru(requests, cap)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests_strategy, st.sampled_from([None, 0, 1, 3]), st.sampled_from([None, 1.0, 2.5]))
def test_fleet_of_one_and_replay_agree_for_each_policy(requests, cap, ttl):
    requests = [(t, ids) for t, ids in requests if ids] or [(0.0, [0])]
    t = trace_of(requests)
    for policy in EVICTION_POLICIES:
        ref = replay(t, capacity_blocks=cap, ttl_s=ttl, eviction_policy=policy)
        for routing in ("random", "prefix"):
            f = fleet_hits(t, 1, routing, capacity_blocks=cap, ttl_s=ttl, eviction_policy=policy)
            assert (f.num_hit_blocks, f.num_hit_tokens) == (ref.num_hit_blocks, ref.num_hit_tokens)
            assert f.eviction_policy == policy


def test_unknown_policy_is_refused_naming_the_field():
    t = trace_of([(0, [1])])
    with pytest.raises(PlanInputError, match="eviction_policy.*lru.*vllm, sglang"):
        reuse_profile(t, eviction_policy="lru")


def test_sglang_refuses_a_sampled_trace():
    rows = [json.dumps({"timestamp_s": k, "input_length": 8, "output_length": 1, "hash_ids": [k, k + 1]})
            for k in range(50)]
    t = read_trace(io.BytesIO("\n".join(rows).encode()), format="jsonl", block_tokens=BT, sample_rate=0.5)
    with pytest.raises(PlanInputError, match="eviction_policy"):
        reuse_profile(t, eviction_policy="sglang")


def test_chained_traces_give_the_same_numbers_under_both_policies():
    t = read_trace("sample:synthetic")
    a, b = reuse_profile(t, with_ages=False), reuse_profile(t, with_ages=False, eviction_policy="sglang")
    for cap in (1, 100, 5_000):
        assert a.hits(cap).num_hit_blocks == b.hits(cap).num_hit_blocks


def test_cli_names_the_policy_beside_the_hit_rate(capsys, tmp_path):
    from planner.cli import main

    path = tmp_path / "three.jsonl"
    path.write_text("\n".join(json.dumps({"timestamp_s": t, "input_length": len(ids) * BT, "output_length": 1,
                                          "hash_ids": ids}) for t, ids in [(0, [1, 2]), (1, [3]), (2, [1, 2])]))
    for policy in EVICTION_POLICIES:
        assert main(["trace", str(path), "--block-tokens", str(BT), "--capacity-blocks", "2",
                     "--eviction-policy", policy, "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        # hand-derived in test_three_requests_at_two_blocks_hit_one_in_five: 1 hit of 5 lookups
        assert data["eviction_policy"] == policy and data["block_hit_rate"] == pytest.approx(0.2)
    assert main(["trace", str(path), "--block-tokens", str(BT), "--capacity-blocks", "2"]) == 0
    assert "eviction: LRU, tail blocks evicted first (vLLM)" in capsys.readouterr().out
    assert main(["trace", str(path), "--block-tokens", str(BT), "--eviction-policy", "fifo"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--eviction-policy" in err and "fifo" in err
