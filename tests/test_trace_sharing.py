"""The shared prefix measured from a trace's block tree, beside the hit rate (planner/traces/sharing.py)."""

from __future__ import annotations

import json

import pytest

from planner.errors import PlanInputError
from planner.traces import load_sample, read_jsonl
from planner.traces.sharing import context_mismatch, measure_sharing, shared_prefix_tokens


def _trace(rows, **kw):
    text = "\n".join(json.dumps(r) for r in rows).encode()
    return read_jsonl(text, block_tokens=512, **kw)


ROWS = [
    # conversation A, turn 1 and turn 2 (turn 2 re-reads turn 1 whole: its own history)
    {"timestamp_s": 0, "input_length": 1536, "output_length": 10, "hash_ids": [1, 2, 3]},
    {"timestamp_s": 10, "input_length": 2560, "output_length": 10, "hash_ids": [1, 2, 3, 4, 5]},
    # conversation B shares the 2-block system prompt [1, 2], then diverges
    {"timestamp_s": 20, "input_length": 1536, "output_length": 10, "hash_ids": [1, 2, 6]},
    # conversation C: the same system prompt, 180 s after B, nobody else within 60 s
    {"timestamp_s": 200, "input_length": 1536, "output_length": 10, "hash_ids": [1, 2, 7]},
]


def test_own_history_is_a_hit_not_a_shared_prefix():
    # Shared tokens, window 60 s: r0 shares [1, 2] with B (A's turn 2 extends it: own history) -> 2 x 512 = 1,024;
    # r1 likewise 1,024; r2 shares [1, 2] with r0 and r1 -> 1,024; r3 has no concurrent request -> 0.
    # Shared prefix = 3,072 / (1,536 + 2,560 + 1,536 + 1,536 = 7,168) = 0.428571.
    # Hit rate, unlimited LRU cache: r1 hits 3 blocks, r2 and r3 hit 2 each: 7 x 512 = 3,584 / 7,168 = 0.5.
    trace = _trace(ROWS)
    assert shared_prefix_tokens(trace).tolist() == [1024, 1024, 1024, 0]
    m = measure_sharing(trace)
    assert m.shared_prefix == pytest.approx(3072 / 7168) and m.hit_rate == pytest.approx(0.5)
    assert m.mean_prompt_tokens == pytest.approx(7168 / 4) and m.sessions_from == "block paths"
    # a wider window makes C concurrent with B: r3 shares [1, 2] too
    assert shared_prefix_tokens(trace, window_s=200).tolist() == [1024, 1024, 1024, 1024]


def test_session_ids_tell_sessions_apart():
    # with ids, A's two turns are one session whatever their paths; B is another: r0, r1 share [1, 2] with B
    rows = [{**r, "session_id": s} for r, s in zip(ROWS, ["a", "a", "b", "c"])]
    assert shared_prefix_tokens(_trace(rows)).tolist() == [1024, 1024, 1024, 0]
    # the same session id on B as well: nobody else is concurrent with A or B
    rows = [{**r, "session_id": s} for r, s in zip(ROWS, ["a", "a", "a", "c"])]
    assert shared_prefix_tokens(_trace(rows)).tolist() == [0, 0, 0, 0]


def test_the_bundled_conversation_trace_reports_both_figures():
    # measured here, not derived: the unlimited-cache token hit rate (every reused token) is well above the
    # shared prefix (blocks other concurrent conversations also hold) -- most hits are own history
    m = measure_sharing(load_sample("conversation"))
    assert 0 < m.shared_prefix < m.hit_rate < 1
    assert m.num_requests == 12_031 and round(m.mean_prompt_tokens) == 12_035


def test_a_trace_without_hashes_is_refused():
    rows = [{k: v for k, v in r.items() if k != "hash_ids"} for r in ROWS]
    with pytest.raises(PlanInputError):
        measure_sharing(_trace(rows))


def test_a_far_context_is_warned_about():
    # more than 4 x apart either way
    assert context_mismatch(12_000, 1_000_000) and context_mismatch(12_000, 2_000)
    assert not context_mismatch(12_000, 48_000) and not context_mismatch(12_000, 3_000)
    assert not context_mismatch(None, 1_000_000)
