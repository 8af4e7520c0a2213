"""Measured hit rates from request traces: readers, replay, stack-distance curves.

Hand-built traces carry their answers next to the numbers, with the arithmetic
in a comment. Facts about the bundled traces come from their upstream
description (planner/data/traces/README.md, adapted from the trace README).
"""

from __future__ import annotations

import doctest
import io
import json
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import planner.traces.readers as readers_mod
import planner.traces.stack as stack_mod
from planner.errors import PlanInputError
from planner.traces import (
    MAX_TRACE_BYTES, arrivals_per_minute, blocks_for_bytes, capacity_curve, concurrency, load_sample, read_azure,
    read_jsonl, read_mooncake, read_trace, reference_curve, replay, reuse_profile, summarize, ttl_curve,
)
from kvplan_app.charts.traces import (
    arrivals_figure, cache_bytes_figure, capacity_curve_figure, concurrency_figure, lengths_figure, ttl_curve_figure,
)
from planner.traces.sizing import kv_bytes_per_token_for, typical_context_tokens

BT = 4  # tokens per block in the hand-built traces


def jsonl(rows: list[dict]) -> bytes:
    return "\n".join(json.dumps(r) for r in rows).encode()


def trace_of(requests: list[tuple[float, list[int]]], *, input_tokens: list[int] | None = None):
    """A generic-JSONL trace: (arrival s, hash_ids) per request; full blocks of BT tokens unless given."""
    rows = []
    for k, (t, ids) in enumerate(requests):
        n_in = input_tokens[k] if input_tokens else len(ids) * BT
        rows.append({"timestamp_s": t, "input_length": n_in, "output_length": 1, "hash_ids": ids})
    return read_jsonl(jsonl(rows), block_tokens=BT)


def both(trace, capacity_blocks=None, ttl_s=None):
    """(reference replay, stack-distance profile) hit counts; they must agree."""
    r = replay(trace, capacity_blocks=capacity_blocks, ttl_s=ttl_s)
    h = reuse_profile(trace).hits(capacity_blocks, ttl_s)
    assert (r.num_hit_blocks, r.num_hit_tokens) == (h.num_hit_blocks, h.num_hit_tokens)
    return r


# ---------------------------------------------------------------------------
# Hand-built traces with known answers
# ---------------------------------------------------------------------------

A, B, C, D, E, X = 1, 2, 3, 4, 5, 6


def test_lru_evicts_least_recently_used_not_first_inserted():
    # capacity 2: A, B, A(hit; B is now LRU), C (evicts B, not A), A (hit), B (miss: evicted)
    # FIFO would have evicted A at C and missed the 5th request instead.
    trace = trace_of([(0, [A]), (1, [B]), (2, [A]), (3, [C]), (4, [A]), (5, [B])])
    r = both(trace, capacity_blocks=2)
    assert r.timeline["hit_blocks"].tolist() == [0, 0, 1, 0, 1, 0]
    assert r.num_hit_blocks == 2 and r.block_hit_rate == pytest.approx(2 / 6)
    assert r.num_evicted_blocks == 2             # B at the 4th request, C at the 6th
    assert r.timeline["cache_blocks"].tolist() == [1, 2, 2, 2, 2, 2]


def test_ttl_exactly_ttl_apart_is_a_miss():
    # TTL 60 s; A at 0, 59.5 (59.5 < 60: hit), 119.5 (119.5 - 59.5 = 60.0 exactly: expired, miss),
    # 179 (179 - 119.5 = 59.5: hit). 2 hits of 4.
    trace = trace_of([(0, [A]), (59.5, [A]), (119.5, [A]), (179, [A])])
    r = both(trace, ttl_s=60)
    assert r.timeline["hit_blocks"].tolist() == [0, 1, 0, 1]
    assert r.num_expired_blocks == 1
    # no TTL: 3 hits of 4
    assert both(trace).num_hit_blocks == 3


def test_ttl_zero_never_persists_even_at_the_same_timestamp():
    trace = trace_of([(0, [A]), (0, [A]), (0, [A])])
    assert both(trace, ttl_s=0).num_hit_blocks == 0
    assert both(trace, ttl_s=1e-9).num_hit_blocks == 2       # age 0 < any positive TTL


def test_ttl_in_milliseconds_boundary():
    rows = [{"timestamp_ms": 0, "input_length": 4, "output_length": 1, "hash_ids": [A]},
            {"timestamp_ms": 30_000, "input_length": 4, "output_length": 1, "hash_ids": [A]}]
    trace = read_jsonl(jsonl(rows), block_tokens=BT)
    assert both(trace, ttl_s=30).num_hit_blocks == 0       # exactly 30 s apart
    assert both(trace, ttl_s=30.001).num_hit_blocks == 1


def test_partial_last_block_counts_real_tokens():
    # BT = 4. r0: 10 tokens = blocks A, B (full) + C (2 tokens). r1: same 10 tokens: hits A, B, C = 10 tokens.
    # r2: 12 tokens, A, B then D (its own 3rd block): hits A, B = 8 tokens.
    # blocks: 5 hits / 9 refs; tokens: (10 + 8) / (10 + 10 + 12) = 18 / 32 = 0.5625
    trace = trace_of([(0, [A, B, C]), (1, [A, B, C]), (2, [A, B, D])], input_tokens=[10, 10, 12])
    r = both(trace)
    assert r.timeline["hit_tokens"].tolist() == [0, 10, 8]
    assert r.num_hit_blocks == 5 and r.block_hit_rate == pytest.approx(5 / 9)
    assert r.num_hit_tokens == 18 and r.token_hit_rate == pytest.approx(0.5625)
    assert trace.ref_tokens().tolist() == [4, 4, 2, 4, 4, 2, 4, 4, 4]


def test_partial_block_takes_a_whole_cache_block():
    # 3 blocks (10 tokens) need capacity 3 even though 10 tokens < 3 x 4. At capacity 2 the
    # request touches its blocks tail first (C, B, A): A's touch evicts C, its own tail, so the
    # repeat hits A and B and misses C: 2 hits.
    trace = trace_of([(0, [A, B, C]), (1, [A, B, C])], input_tokens=[10, 10])
    assert both(trace, capacity_blocks=2).num_hit_blocks == 2
    assert both(trace, capacity_blocks=3).num_hit_blocks == 3


def test_middle_block_cached_but_not_first_is_no_hit():
    # r0 caches A, B, C. r1 = [D, B]: B is cached but D is not, so nothing hits.
    # r2 = [A, E]: leading run A only: 1 hit.
    trace = trace_of([(0, [A, B, C]), (1, [D, B]), (2, [A, E])])
    r = both(trace)
    assert r.timeline["hit_blocks"].tolist() == [0, 0, 1]


def test_unhashed_tail_tokens_never_hit():
    # 9 tokens with BT = 4 but only 2 hashes (engines that hash full blocks only): tokens 8..8 are unhashed.
    # repeat hits 2 blocks = 8 tokens of 9; token rate 8 / 18.
    trace = trace_of([(0, [A, B]), (1, [A, B])], input_tokens=[9, 9])
    r = both(trace)
    assert r.num_hit_tokens == 8 and r.token_hit_rate == pytest.approx(8 / 18)


def test_capacity_from_bytes():
    # 890 B/token x 512 tokens = 455,680 B per block; 100 GB / 455,680 = 219,452.2 -> 219,452 blocks
    assert blocks_for_bytes(100 * 10**9, 890, 512) == 219_452
    trace = trace_of([(0, [A]), (1, [B]), (2, [A])])
    # 8 B/token x 4 tokens = 32 B per block: 63 B holds 1 block -> A evicted by B -> 0 hits; 64 B holds 2 -> 1 hit
    assert replay(trace, capacity_bytes=63, kv_bytes_per_token=8).num_hit_blocks == 0
    r = replay(trace, capacity_bytes=64, kv_bytes_per_token=8)
    assert r.capacity_blocks == 2 and r.num_hit_blocks == 1 and r.capacity_bytes == 64
    assert r.timeline["cache_bytes"].tolist() == [32, 64, 64]
    with pytest.raises(PlanInputError, match="kv_bytes_per_token"):
        replay(trace, capacity_bytes=64)
    with pytest.raises(PlanInputError, match="capacity_bytes"):
        replay(trace, capacity_bytes=64, capacity_blocks=2, kv_bytes_per_token=8)


@pytest.mark.parametrize("kwargs", [{"capacity_blocks": -1}, {"capacity_blocks": 1.5}, {"ttl_s": -1},
                                    {"ttl_s": math.nan}, {"capacity_blocks": True}, {"ttl_s": "60"}])
def test_bad_replay_inputs(kwargs):
    trace = trace_of([(0, [A])])
    with pytest.raises(PlanInputError):
        replay(trace, **kwargs)


def test_out_of_order_rows_are_sorted_and_noted():
    # arrivals 5, 0: sorted to 0, 5 and shifted to start at 0.
    trace = trace_of([(5, [A]), (0, [A, B])])
    assert trace.arrival_s.tolist() == [0.0, 5.0]
    assert trace.input_tokens.tolist() == [8, 4]
    assert any("not in arrival order" in n for n in trace.notes)
    assert replay(trace).num_hit_blocks == 1      # [A, B] first, then [A] hits


# ---------------------------------------------------------------------------
# Readers: malformed rows, limits, formats
# ---------------------------------------------------------------------------

def test_malformed_rows_counted_with_lines_and_reasons():
    good = {"timestamp_s": 0, "input_length": 8, "output_length": 1, "hash_ids": [1, 2]}
    lines = [
        json.dumps(good),                                                                    # 1 ok
        "{not json",                                                                         # 2 bad JSON
        "[1, 2]",                                                                            # 3 not an object
        json.dumps({"timestamp_s": 1, "output_length": 1, "hash_ids": []}),                  # 4 no input_length
        "",                                                                                  # 5 blank: skipped
        json.dumps({"timestamp_s": 1, "input_length": 8, "output_length": -3, "hash_ids": [1]}),  # 6 negative
        json.dumps({"timestamp_s": 1, "input_length": 4, "output_length": 1, "hash_ids": [1, 2]}),  # 7 2 > ceil(4/4)
        json.dumps({"timestamp_s": 1, "input_length": 8, "output_length": 1, "hash_ids": [3, 3]}),  # 8 repeated
        json.dumps({"timestamp_ms": 1, "timestamp_s": 1, "input_length": 8, "output_length": 1}),  # 9 both times
        json.dumps({"timestamp_s": 2, "input_length": 8.0, "output_length": 1, "hash_ids": [1, 9]}),  # 10 ok (8.0)
    ]
    trace = read_jsonl("\n".join(lines).encode(), block_tokens=4)
    m = trace.malformed
    # 9 non-blank rows, 7 malformed (lines 2, 3, 4, 6, 7, 8, 9), 2 kept
    assert (m.num_rows, m.num_malformed, trace.num_requests) == (9, 7, 2)
    assert [line for line, _ in m.examples] == [2, 3, 4, 6, 7]      # first 5
    reasons = dict(m.examples)
    assert "not valid JSON" in reasons[2] and "not an object" in reasons[3]
    assert "missing input_length" in reasons[4] and "outside" in reasons[6] and "at most 1 blocks" in reasons[7]
    assert "7 of 9 rows malformed" in m.summary() and "line 2:" in m.summary()
    assert replay(trace).num_hit_blocks == 1    # [1, 2] then [1, 9]: 1 hit


def test_mooncake_malformed_and_types():
    rows = [
        '{"timestamp": 0, "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}',
        '{"timestamp": 3000, "input_length": 1000, "output_length": 5}',                      # no hash_ids
        '{"timestamp": "soon", "input_length": 1000, "output_length": 5, "hash_ids": [0, 1]}',  # bad time
        '{"timestamp": 3000, "input_length": true, "output_length": 5, "hash_ids": [0]}',      # bool length
        '{"timestamp": 3000, "input_length": 1000, "output_length": 5, "hash_ids": [0, "x"]}',  # non-int id
        '{"timestamp": 6000, "input_length": 1024, "output_length": 5, "hash_ids": [0, 1]}',
    ]
    trace = read_mooncake("\n".join(rows).encode())
    assert trace.num_requests == 2 and trace.malformed.num_malformed == 4
    assert [line for line, _ in trace.malformed.examples] == [2, 3, 4, 5]
    assert trace.arrival_s.tolist() == [0.0, 6.0]            # ms -> s
    assert trace.block_tokens == 512
    # second request: 1024 tokens, both blocks hit: token rate 1024 / 2024
    r = replay(trace)
    assert r.num_hit_tokens == 1024 and r.token_hit_rate == pytest.approx(1024 / 2024)


def test_azure_malformed_and_not_measurable():
    text = ("TIMESTAMP,ContextTokens,GeneratedTokens\n"
            "2023-11-16 18:15:46.6805900,374,44\n"
            "2023-11-16 18:15:50.9951690,396\n"                   # 2 fields
            "yesterday,10,10\n"                                   # bad timestamp
            "2023-11-16 18:15:51.0000000,abc,10\n"                # bad length
            "2023-11-16 18:15:52.6805900,100,0\n")
    trace = read_azure(io.StringIO(text))
    assert trace.num_requests == 2 and trace.malformed.num_malformed == 3
    assert [line for line, _ in trace.malformed.examples] == [3, 4, 5]
    assert trace.arrival_s.tolist() == [0.0, 6.0]             # 52.68059 - 46.68059 s, 100 ns digits kept
    assert not trace.has_prefix_hashes and any("cannot be measured" in n for n in trace.notes)
    r = replay(trace)
    assert not r.measurable and r.block_hit_rate is None and r.token_hit_rate is None
    assert "not measurable" in r.message
    with pytest.raises(PlanInputError, match="not measurable"):
        reuse_profile(trace)


def test_azure_header_required():
    with pytest.raises(PlanInputError, match="missing GeneratedTokens"):
        read_azure(b"TIMESTAMP,ContextTokens\n2023-11-16 18:15:46,3\n")


def test_timestamp_parser_keeps_100ns_and_offsets():
    assert readers_mod.parse_timestamp_ns("1970-01-01 00:00:01.0000001") == 1_000_000_100
    # 00:00:00+01:00 is 23:00:00 UTC the day before: -3,600 s
    assert readers_mod.parse_timestamp_ns("1970-01-01 00:00:00+01:00") == -3_600 * 10**9


def test_size_limit_raises():
    assert MAX_TRACE_BYTES == 64_000_000           # 64 MB (10^6 B each)
    with pytest.raises(PlanInputError, match="at most 10 B"):
        read_jsonl(b'{"timestamp_s": 0}' * 2, max_bytes=10)
    with pytest.raises(PlanInputError, match="at most 10 B"):
        read_mooncake(io.BytesIO(b"x" * 11), max_bytes=10)


def test_no_good_rows_raises_with_first_reason():
    with pytest.raises(PlanInputError, match="line 1"):
        read_jsonl(b"{bad\n", block_tokens=4)


def test_hash_ids_need_block_tokens():
    with pytest.raises(PlanInputError, match="block_tokens"):
        read_jsonl(jsonl([{"timestamp_s": 0, "input_length": 4, "output_length": 1, "hash_ids": [1]}]))
    with pytest.raises(PlanInputError, match="block_tokens"):
        read_jsonl(b"", block_tokens=0)


def test_lengths_only_jsonl_and_mixed_hashes():
    plain = read_jsonl(jsonl([{"timestamp_s": 0, "input_length": 4, "output_length": 1}]))
    assert not plain.has_prefix_hashes and plain.block_tokens is None
    mixed = read_jsonl(jsonl([{"timestamp_s": 0, "input_length": 4, "output_length": 1, "hash_ids": [1]},
                              {"timestamp_s": 1, "input_length": 4, "output_length": 1}]), block_tokens=4)
    assert mixed.num_requests == 1 and mixed.malformed.examples == ((2, "missing hash_ids (other rows have them)"),)


def test_not_utf8_and_missing_file(tmp_path):
    with pytest.raises(PlanInputError, match="UTF-8"):
        read_jsonl(b"\xff\xfe\x00", block_tokens=4)
    with pytest.raises(PlanInputError, match="readable file"):
        read_jsonl(tmp_path / "nope.jsonl", block_tokens=4)


def test_read_trace_detects_formats(tmp_path):
    p = tmp_path / "mine.jsonl"
    p.write_bytes(jsonl([{"timestamp_s": 0, "input_length": 4, "output_length": 1, "hash_ids": [7]}]))
    t = read_trace(p, block_tokens=4)
    assert (t.format, t.name, t.num_requests) == ("jsonl", "mine.jsonl", 1)
    assert read_trace(b'{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}').format == "mooncake"
    assert read_trace(b"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,3,4\n").format == "azure"
    assert read_trace("sample:synthetic").num_requests == 3_993
    with pytest.raises(PlanInputError, match="sample:conversation"):
        read_trace("sample:nope")
    with pytest.raises(PlanInputError, match="512"):
        read_trace(b'{"timestamp": 0, "input_length": 1, "output_length": 1, "hash_ids": [1]}',
                   format="mooncake", block_tokens=16)
    with pytest.raises(PlanInputError, match="format"):
        read_trace(b"", format="parquet")


# ---------------------------------------------------------------------------
# Bundled samples (facts from planner/data/traces/README.md)
# ---------------------------------------------------------------------------

def test_bundled_conversation_facts():
    t = load_sample("conversation")
    assert (t.num_requests, t.num_block_refs, t.num_unique_blocks) == (12_031, 288_500, 182_790)
    assert t.duration_s == pytest.approx(3_536.999)                      # 0 .. 3,536,999 ms
    assert t.malformed.num_malformed == 0 and t.block_tokens == 512
    assert int(t.input_tokens.sum()) == int(t.ref_tokens().sum())        # len(hash_ids) == ceil(n / 512)
    s = summarize(t)
    assert s.num_distinct_arrival_times == 1_180 and s.peak_requests_per_minute == 247
    assert s.mean_rate_per_s == pytest.approx(3.40, abs=0.005)           # 12,031 / 3,537 s
    assert (s.input_tokens.p50, s.input_tokens.max, s.output_tokens.max) == (6_909, 126_195, 2_000)
    assert s.working_set_tokens == 93_588_480                            # 182,790 x 512 = 93.6M tokens


def test_bundled_conversation_unlimited_cache_hits_every_repeat():
    # README: reuse counted at any position equals reuse counted as a leading run, so with no
    # capacity or TTL limit every non-first reference hits: 288,500 - 182,790 = 105,710 hits.
    p = reuse_profile(load_sample("conversation"))
    h = p.hits()
    assert h.num_hit_blocks == 105_710
    assert h.block_hit_rate == pytest.approx(1 - 182_790 / 288_500)
    # the fast path equals the reference replay at a finite capacity and TTL too
    r = replay(load_sample("conversation"), capacity_blocks=20_000, ttl_s=300)
    assert (r.num_hit_blocks, r.num_hit_tokens) == (p.hits(20_000, 300).num_hit_blocks, p.hits(20_000, 300).num_hit_tokens)


def test_bundled_synthetic_and_azure_facts():
    s = load_sample("synthetic")
    assert (s.num_requests, s.num_block_refs, s.num_unique_blocks) == (3_993, 121_877, 43_924)
    assert reuse_profile(s).hits().num_hit_blocks == 121_877 - 43_924      # 77,953
    conv, code = load_sample("azure-conv"), load_sample("azure-code")
    assert (conv.num_requests, code.num_requests) == (19_366, 8_819)
    assert conv.duration_s == pytest.approx(3_501.7, abs=0.05)              # 18:15:46.68 .. 19:14:08.40
    assert not conv.has_prefix_hashes and summarize(conv).input_tokens.max == 14_050


def test_samples_are_read_from_the_package_not_shared():
    import planner.traces.samples as samples

    assert "/work/shared" not in open(samples.__file__).read()
    assert samples.sample_bytes("azure-code").startswith(b"TIMESTAMP,ContextTokens,GeneratedTokens")


# ---------------------------------------------------------------------------
# Curves
# ---------------------------------------------------------------------------

def test_curve_matches_reference_on_bundled_synthetic_at_some_capacities():
    trace = load_sample("synthetic")
    caps = [0, 1, 100, 5_000, 43_924]
    fast = capacity_curve(reuse_profile(trace), caps)
    ref = reference_curve(trace, caps)
    assert fast["hit_blocks"].tolist() == ref["hit_blocks"].tolist()
    assert fast["hit_tokens"].tolist() == ref["hit_tokens"].tolist()
    assert fast["hit_blocks"].iloc[0] == 0 and fast["hit_blocks"].iloc[-1] == 77_953


def test_curve_columns_and_bytes():
    trace = trace_of([(0, [A, B]), (1, [A, B]), (2, [C]), (3, [A, B])])
    curve = capacity_curve(reuse_profile(trace), [0, 1, 2, 3], kv_bytes_per_token=2**20 / 4)
    assert list(curve.columns) == list(stack_mod.CURVE_COLUMNS)
    # Touches are tail first (B, then A), lookups see the cache before the request.
    # Capacity 1: r0 leaves {A}; r1 hits A, misses B (1), leaves {A}; r2 misses C, leaves {C};
    # r3 misses A: 1 hit. Capacity 2: r0 leaves B older than A; r1 hits A, B (2); r2's C evicts
    # B (the tail); r3 hits A, misses B: 3 hits. Capacity 3: r1 and r3 hit both: 4 hits.
    assert curve["hit_blocks"].tolist() == [0, 1, 3, 4]
    # 1 block = 4 tokens x 2^18 B = 2^20 B = 1 MiB: capacity 2 = 2 MiB = 2,097,152 B
    assert curve["capacity_bytes"].tolist() == [0, 2**20, 2**21, 3 * 2**20]
    assert curve["capacity_gib"].iloc[2] == pytest.approx(2 / 1024)
    assert curve["capacity_gb"].iloc[2] == pytest.approx(0.002097152)


def test_ttl_curve():
    # A at 0, 10, 100: ages 10 and 90. TTL 10: 0 hits (10 is not < 10); TTL 50: 1; TTL 90: 1; 91: 2; none: 2
    trace = trace_of([(0, [A]), (10, [A]), (100, [A])])
    df = ttl_curve(reuse_profile(trace), [10, 50, 90, 91, math.inf])
    assert list(df.columns) == list(stack_mod.TTL_CURVE_COLUMNS)
    assert df["hit_blocks"].tolist() == [0, 1, 1, 2, 2]


def test_fenwick_stack_distances_brute_force():
    # One block per request, so run distance = stack distance: the distinct blocks
    # referenced since the previous reference to the same block, itself included.
    from planner.traces.kernels import COLD, run_distances

    rng = np.random.default_rng(7)
    for n in (1, 2, 17, 300):
        ids = rng.integers(0, max(1, n // 3), n)
        brute = []
        for t in range(n):
            prev = [s for s in range(t) if ids[s] == ids[t]]
            brute.append(len(set(ids[prev[-1] + 1:t + 1].tolist())) if prev else COLD)
        offsets = np.arange(n + 1, dtype=np.int64)
        dist, _ = run_distances(offsets, ids, np.arange(n, dtype=np.float64), int(ids.max()) + 1)
        assert dist.tolist() == brute


def test_doctests():
    import planner.traces.checks as checks_mod
    import planner.traces.load as load_mod

    for mod in (stack_mod, readers_mod, load_mod, checks_mod):
        assert doctest.testmod(mod).failed == 0


# ---------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------

@st.composite
def chained_traces(draw, max_requests: int = 12):
    """Prefix-closed traces: each request extends a prefix of an earlier one with fresh blocks,
    as chained hashes do (an ID implies its whole prefix)."""
    requests, paths, next_id, t = [], [], 0, 0.0
    for _ in range(draw(st.integers(1, max_requests))):
        prefix: list[int] = []
        if paths and draw(st.booleans()):
            base = draw(st.sampled_from(paths))
            prefix = base[:draw(st.integers(0, len(base)))]
        fresh = draw(st.integers(0 if prefix else 1, 4))
        ids = prefix + list(range(next_id, next_id + fresh))
        next_id += fresh
        paths.append(ids)
        t += draw(st.sampled_from([0.0, 0.5, 1.0, 3.0, 10.0]))
        requests.append((t, ids))
    partial = [len(ids) * BT - draw(st.integers(0, BT - 1)) for _, ids in requests]
    return trace_of(requests, input_tokens=partial)


@st.composite
def any_traces(draw):
    """Arbitrary traces: IDs from a small alphabet, distinct within a request, in any order."""
    requests, t = [], 0.0
    for _ in range(draw(st.integers(1, 12))):
        ids = draw(st.lists(st.integers(0, 8), min_size=1, max_size=5, unique=True))
        t += draw(st.sampled_from([0.0, 1.0, 2.0, 7.5]))
        requests.append((t, ids))
    return trace_of(requests)


PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(chained_traces())
def test_no_ttl_hit_rate_never_falls_as_capacity_grows(trace):
    hits = [replay(trace, capacity_blocks=c).num_hit_blocks for c in range(0, trace.num_block_refs + 2)]
    assert hits == sorted(hits)


@PROPS
@given(chained_traces())
def test_unlimited_cache_no_ttl_hit_rate_is_one_minus_unique_over_total(trace):
    r = replay(trace)
    assert r.block_hit_rate == pytest.approx(1 - trace.num_unique_blocks / trace.num_block_refs)


@PROPS
@given(st.one_of(chained_traces(), any_traces()), st.sampled_from([None, 0.0, 1.0, 2.5, 9.0]))
def test_stack_distance_curve_equals_reference_at_every_capacity(trace, ttl_s):
    caps = list(range(0, trace.num_block_refs + 2)) + [None]
    profile = reuse_profile(trace)
    fast = capacity_curve(profile, caps[:-1], ttl_s=ttl_s)
    ref = [replay(trace, capacity_blocks=c, ttl_s=ttl_s) for c in caps]
    assert fast["hit_blocks"].tolist() == [r.num_hit_blocks for r in ref[:-1]]
    assert fast["hit_tokens"].tolist() == [r.num_hit_tokens for r in ref[:-1]]
    unlimited = profile.hits(None, ttl_s)
    assert (unlimited.num_hit_blocks, unlimited.num_hit_tokens) == (ref[-1].num_hit_blocks, ref[-1].num_hit_tokens)


@PROPS
@given(any_traces(), st.integers(0, 6))
def test_ttl_curve_equals_reference(trace, cap):
    ttls = [0.0, 0.5, 1.0, 2.0, 7.5, 20.0, math.inf]
    df = ttl_curve(reuse_profile(trace), ttls, capacity_blocks=cap)
    assert df["hit_blocks"].tolist() == [replay(trace, capacity_blocks=cap, ttl_s=t).num_hit_blocks for t in ttls]


# ---------------------------------------------------------------------------
# Arrivals, concurrency, sizing, figures
# ---------------------------------------------------------------------------

def test_concurrency_hand_worked():
    # 10 tokens/s: r0 at 0 with 20 output tokens is active [0, 2); r1 at 1 with 10: [1, 2); r2 at 2 with 10: [2, 3).
    # after t=0: 1; t=1: 2; t=2: r0, r1 end and r2 starts -> 1; t=3: 0. Mean = (2 + 1 + 1) s / 3 s = 4/3.
    rows = [{"timestamp_s": t, "input_length": 4, "output_length": o} for t, o in ((0, 20), (1, 10), (2, 10))]
    c = concurrency(read_jsonl(jsonl(rows)), session_decode_tokens_per_s=10)
    assert c.frame["time_s"].tolist() == [0, 1, 2, 3]
    assert c.frame["concurrent_requests"].tolist() == [1, 2, 1, 0]
    assert c.peak_concurrent_requests == 2 and c.mean_concurrent_requests == pytest.approx(4 / 3)
    # with prefill at 4 tokens/s each request is 1 s longer: r0 [0, 3), r1 [1, 3), r2 [2, 4) -> peak 3
    assert concurrency(read_jsonl(jsonl(rows)), session_decode_tokens_per_s=10,
                       prefill_tokens_per_s=4).peak_concurrent_requests == 3
    with pytest.raises(PlanInputError, match="session_decode_tokens_per_s"):
        concurrency(read_jsonl(jsonl(rows)), session_decode_tokens_per_s=0)


def test_arrivals_per_minute():
    rows = [{"timestamp_s": t, "input_length": 4, "output_length": 1} for t in (0, 59.9, 60, 150)]
    df = arrivals_per_minute(read_jsonl(jsonl(rows)))
    assert df["requests"].tolist() == [2, 1, 1] and df["input_tokens"].tolist() == [8, 4, 4]


def test_kv_bytes_per_token_for_models():
    assert kv_bytes_per_token_for("deepseek-v4.1-flash", 12_000) == 890        # reported coefficient
    # Llama 3.1 8B: 2 x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B/token
    assert kv_bytes_per_token_for("llama-3.1-8b", 12_000) == 131_072
    with pytest.raises(PlanInputError, match="window"):
        kv_bytes_per_token_for("mistral-7b-v0.1", 12_000)                    # all layers capped at 4,096
    assert typical_context_tokens(load_sample("conversation")) == 12_036     # mean 12,035.06 rounded up


def test_figures_build_and_label_units():
    trace = load_sample("synthetic")
    p = reuse_profile(trace)
    curve = capacity_curve(p, kv_bytes_per_token=890)
    fig = capacity_curve_figure(curve, usable_kv_bytes=100 * 10**9, usable_label="usable KV")
    assert [t.name for t in fig.data] == ["token-weighted", "block-weighted"]
    assert all("GB<br>" in t and t.endswith("GiB") for t in fig.layout.xaxis.ticktext)
    # 100 GB = 93.1 GiB: the usable-KV line is named in the legend, never written on the plot
    assert [sh.name for sh in fig.layout.shapes if sh.showlegend] == ["usable KV: 100.0 GB (93.1 GiB)"]
    assert not fig.layout.annotations
    blocks_only = capacity_curve_figure(capacity_curve(p))
    assert blocks_only.layout.xaxis.title.text == "cache capacity (blocks)"
    assert ttl_curve_figure(ttl_curve(p)).data[0].x[-1] == "no TTL"
    r = replay(trace, capacity_blocks=10_000, kv_bytes_per_token=890)
    assert len(cache_bytes_figure(r.timeline, capacity_bytes=r.capacity_bytes).data) == 1
    assert len(concurrency_figure(concurrency(trace, session_decode_tokens_per_s=50)).data) == 1
    assert len(arrivals_figure(arrivals_per_minute(trace)).data) == 1
    assert len(lengths_figure(trace.input_tokens, trace.output_tokens).data) == 2


def test_upload_like_objects_and_import_hygiene():
    class Upload(io.BytesIO):          # what Streamlit's UploadedFile offers: read(), name, size
        name = "mine.jsonl"
        size = 10**9

    with pytest.raises(PlanInputError, match="64 MB"):
        read_jsonl(Upload(b""), block_tokens=4)
    small = Upload(jsonl([{"timestamp_s": 0, "input_length": 4, "output_length": 1, "hash_ids": [1]}]))
    small.size = 10
    assert read_jsonl(small, block_tokens=4).name == "mine.jsonl"
    # planner.traces (figures and CLI included) imports neither streamlit nor torch
    import subprocess
    import sys

    code = ("import sys, planner.traces, kvplan_app.charts.traces, planner.cli.trace; "
            "sys.exit(1 if {'torch', 'streamlit'} & set(sys.modules) else 0)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_detected_mooncake_ignores_the_generic_block_size():
    # The Traces page passes its generic-JSONL block size (16) with format "detect"; a Mooncake file keeps 512.
    from planner.traces import read_trace

    line = b'{"timestamp": 0, "input_length": 600, "output_length": 10, "hash_ids": [1, 2]}\n'
    trace = read_trace(line, block_tokens=16)
    assert (trace.format, trace.block_tokens) == ("mooncake", 512)


@pytest.mark.parametrize("damage", ["magic only", "footer only", "pages overwritten"])
def test_a_damaged_parquet_file_is_refused_with_one_line(damage):
    # pyarrow raises ArrowInvalid / OSError for these; the reader must turn each into the trace's own refusal
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    from planner.errors import PlanInputError
    from planner.traces import read_trace

    table = pa.table({"timestamp": list(range(2_000)), "input_length": [600] * 2_000,
                      "output_length": [10] * 2_000, "hash_ids": [[1, 2]] * 2_000})
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="none")
    good = buf.getvalue()
    data = {"magic only": b"PAR1",
            "footer only": b"PAR1" + b"x" * 100 + b"PAR1",
            "pages overwritten": good[:4] + b"\xff" * (len(good) // 2 - 4) + good[len(good) // 2:]}[damage]
    with pytest.raises(PlanInputError) as err:
        read_trace(data)
    assert str(err.value).startswith("trace: ") and "Parquet" in str(err.value) and "\n" not in str(err.value)


def test_detect_trusts_a_jsonl_file_name_over_the_csv_fallback():
    # a .jsonl upload whose first line is not JSON was refused as "expected a CSV header ..." (the Azure reader)
    from planner.errors import PlanInputError
    from planner.traces import read_trace

    with pytest.raises(PlanInputError) as err:
        read_trace(b"hola mundo\n", name="bad.jsonl")
    assert "not valid JSON" in str(err.value) and "CSV" not in str(err.value)
    with pytest.raises(PlanInputError) as err:
        read_trace(b"hola mundo\n", name="bad.csv")
    assert "CSV header" in str(err.value)
