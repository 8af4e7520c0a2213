"""The engine's record: a vLLM KV-event stream replayed, beside the engine's prefix-cache counters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.cli import main
from planner.errors import PlanInputError
from planner.traces import reuse_profile
from planner.traces.kv_events import read_kv_events, read_prefix_cache_counters

DATA = Path(__file__).parent / "data"
EVENTS = DATA / "vllm_kv_events.jsonl"     # hand-made, in the shapes of vllm/distributed/kv_events.py
METRICS = DATA / "vllm_metrics.prom"


def test_events_rebuild_requests_by_their_parent_chain():
    # ts 0: BlockStored [101, 102] (no parent)      -> request [101, 102]: 2 lookups, 0 hits
    # ts 1: BlockStored [103], parent 102           -> request [101, 102, 103]: 3 lookups, 2 hits
    # ts 2: BlockRemoved [103]; BlockStored [201]   -> request [201]: 1 lookup, 0 hits (the removal is the
    #        engine's; the replay, unlimited here, still holds 103, but nothing asks for it)
    # ts 3: BlockStored [104], parent 102           -> request [101, 102, 104]: 3 lookups, 2 hits
    # lookups 9, hits 4: 4/9; every block holds 4 tokens, so the token rate is 16/36 = 4/9 too.
    trace = read_kv_events(str(EVENTS))
    assert trace.block_tokens == 4 and trace.num_requests == 4 and trace.num_block_refs == 9
    assert trace.num_unique_blocks == 5
    h = reuse_profile(trace).hits()
    assert (h.num_hit_blocks, h.num_hit_tokens) == (4, 16) and h.block_hit_rate == pytest.approx(4 / 9)
    assert any("removed 1 blocks" in n for n in trace.notes)


def test_counters_sum_the_total_samples():
    c = read_prefix_cache_counters(str(METRICS))
    # 40 hit tokens of 100 queried: 0.4
    assert (c.queries_tokens, c.hits_tokens) == (100.0, 40.0) and c.token_hit_rate == pytest.approx(0.4)


def test_cli_shows_the_engine_beside_the_replay(capsys):
    assert main(["trace", str(EVENTS), "--kv-events", "--metrics", str(METRICS), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["format"] == "kv-events" and data["block_hit_rate"] == pytest.approx(4 / 9)
    assert data["engine_counters"]["token_hit_rate"] == pytest.approx(0.4)
    assert main(["trace", str(EVENTS), "--kv-events", "--metrics", str(METRICS)]) == 0
    out = capsys.readouterr().out
    assert "engine's counters: token hit rate 40.0% (replay above: 44.4%)" in out


def test_metrics_without_counters_is_one_clear_error(tmp_path, capsys):
    bad = tmp_path / "m.prom"
    bad.write_text("vllm:num_requests_running 3\n")
    with pytest.raises(PlanInputError, match="metrics.*prefix_cache_queries"):
        read_prefix_cache_counters(str(bad))
    assert main(["trace", str(EVENTS), "--kv-events", "--metrics", str(bad)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_mixed_block_sizes_are_refused(tmp_path):
    path = tmp_path / "e.jsonl"
    path.write_text('[0, [["BlockStored", [1], null, [1, 2, 3, 4], 4]], 0]\n'
                    '[1, [["BlockStored", [2], 1, [1, 2, 3, 4, 5, 6, 7, 8], 8]], 0]\n')
    with pytest.raises(PlanInputError, match="block_size"):
        read_kv_events(str(path))
