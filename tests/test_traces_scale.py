"""Production-size traces and fleets: compressed and Parquet readers, chunked reads, fleets of replicas,
SHARDS sampling, saved curves, and the command line that ties them together.

Hand-built traces carry their answers in comments; facts about the bundled
Mooncake traces are the ones tests/test_traces.py derives from the release.
"""

from __future__ import annotations

import gzip
import io
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import planner.traces.sources as sources
from planner.cli import main
from planner.errors import PlanInputError
from planner.traces import read_jsonl, read_trace, replay, reuse_profile
from planner.traces.curvefile import load_curve
from planner.traces.fleet import _simulate_prefix, assign_replicas, conversation_keys, fleet_hits, fleet_table
from planner.traces.samples import sample_bytes
from planner.traces.sampling import standard_error

BT = 4


def jsonl(rows: list[dict]) -> bytes:
    return ("\n".join(json.dumps(r) for r in rows) + "\n").encode()


def trace_of(requests, **kw):
    rows = [{"timestamp_s": t, "input_length": len(ids) * BT, "output_length": 1, "hash_ids": ids}
            for t, ids in requests]
    return read_jsonl(jsonl(rows), block_tokens=BT, **kw)


def same_trace(a, b) -> None:
    for name in ("arrival_s", "input_tokens", "output_tokens", "block_offsets", "block_ids"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert a.num_unique_blocks == b.num_unique_blocks


# ---------------------------------------------------------------------------
# Readers: compression, Parquet, chunks, size caps, the import graph
# ---------------------------------------------------------------------------

def test_gzip_zstd_and_parquet_read_the_same_trace(tmp_path):
    raw = sample_bytes("synthetic")
    plain = read_trace(raw)
    (tmp_path / "t.jsonl.gz").write_bytes(gzip.compress(raw))
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(raw)
    (tmp_path / "t.jsonl.zst").write_bytes(sink.getvalue().to_pybytes())
    rows = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "t.parquet")
    for name in ("t.jsonl.gz", "t.jsonl.zst", "t.parquet"):
        t = read_trace(str(tmp_path / name), max_bytes=None)
        assert t.format == "mooncake"
        same_trace(plain, t)
    # 3,993 requests, 121,877 block references, 43,924 distinct (bundled synthetic trace)
    assert (plain.num_requests, plain.num_block_refs, plain.num_unique_blocks) == (3_993, 121_877, 43_924)


def test_small_chunks_give_the_same_trace_and_exact_line_numbers(monkeypatch):
    rows = [{"timestamp_s": k, "input_length": 8, "output_length": 1, "hash_ids": [k % 3, 10 + k]} for k in range(40)]
    text = jsonl(rows).decode().splitlines()
    text[22] = '{"timestamp_s": 22, "input_length": -1, "output_length": 1, "hash_ids": [1]}'   # line 23
    text[30] = "not json"                                                                       # line 31
    data = ("\n".join(text) + "\n").encode()
    whole = read_jsonl(data, block_tokens=BT)
    monkeypatch.setattr(sources, "CHUNK_BYTES", 200)   # about three rows per chunk
    chunked = read_jsonl(data, block_tokens=BT)
    same_trace(whole, chunked)
    assert chunked.malformed.num_malformed == 2 and chunked.num_requests == 38
    assert [line for line, _ in chunked.malformed.examples] == [23, 31]
    assert "input_length is -1" in chunked.malformed.examples[0][1]


def test_size_caps_apply_to_uploads_not_to_local_paths(tmp_path):
    raw = sample_bytes("synthetic")          # 2,050,123 B? any size above the 1,000 B cap below
    path = tmp_path / "t.jsonl"
    path.write_bytes(raw)
    assert read_trace(str(path), max_bytes=None).num_requests == 3_993
    with pytest.raises(PlanInputError, match="at most 1,000 B"):
        read_trace(raw, max_bytes=1_000)
    with pytest.raises(PlanInputError, match="decompresses"):   # a small gzip upload that expands past the cap
        read_trace(gzip.compress(raw), max_bytes=len(raw) // 2)


def test_no_import_cycles_in_planner_traces():
    # module-level imports between planner.traces modules form a DAG (readers no longer imports samples)
    import ast
    import pathlib

    folder = pathlib.Path(sources.__file__).parent
    graph = {}
    for path in folder.glob("*.py"):
        mod = f"planner.traces.{path.stem}"
        deps = set()
        for node in ast.parse(path.read_text()).body:      # module level only
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("planner.traces."):
                deps.add(node.module)
        graph[mod] = deps
    assert "planner.traces.samples" not in graph["planner.traces.readers"]
    done, stack = set(), []

    def visit(m):
        assert m not in stack, " -> ".join(stack + [m])
        if m in done:
            return
        stack.append(m)
        for d in graph.get(m, ()):
            visit(d)
        stack.pop()
        done.add(m)

    for m in graph:
        visit(m)


def test_dense_ids_are_kept_and_sparse_ids_remapped():
    small = trace_of([(0, [0, 1]), (1, [0, 5])])
    assert small.block_ids.tolist() == [0, 1, 0, 5] and small.id_space == 6 and small.num_unique_blocks == 3
    big = trace_of([(0, [2**40, -7]), (1, [2**40, 3])])    # outside int32: remapped by sorted value
    assert big.block_ids.tolist() == [2, 0, 2, 1] and big.id_space == 3


# ---------------------------------------------------------------------------
# Fleets
# ---------------------------------------------------------------------------

A, B, C = 1, 2, 3


def test_round_robin_hand_worked():
    # A, A, A, A on 2 replicas: r0, r2 -> replica 0; r1, r3 -> replica 1; r2 and r3 hit: 2 of 4 blocks
    t = trace_of([(0, [A]), (1, [A]), (2, [A]), (3, [A])])
    r = fleet_hits(t, 2, "round-robin")
    assert (r.num_hit_blocks, r.replica_requests, r.load_imbalance) == (2, (2, 2), 1.0)
    assert assign_replicas(t, 2, "round-robin").tolist() == [0, 1, 0, 1]


def test_prefix_routing_hand_worked():
    # [A, B] -> replica 0 (all empty; tie, fewest requests, lowest index); [C] -> no match anywhere,
    # least loaded: replica 1; [A, B] -> replica 0 holds the 2-block run (2 >= 0.5 x 2): 2 hits of 5 refs
    t = trace_of([(0, [A, B]), (1, [C]), (2, [A, B])])
    r = fleet_hits(t, 2, "prefix")
    assert r.method == "simulation"
    assert (r.replica_requests, r.replica_hit_blocks, r.num_block_refs) == ((2, 1), (2, 0), 5)


def test_session_key_skips_the_prefix_every_request_shares():
    # every request starts with block 9 (a system prompt): the key is the next block
    t = trace_of([(0, [9, A]), (1, [9, B]), (2, [9, A, C]), (3, [9])])
    assert conversation_keys(t).tolist() == [A, B, A, 9]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.sampled_from([0.0, 1.0, 2.5]), st.lists(st.integers(0, 6), min_size=1, max_size=4,
                                                                        unique=True)), min_size=1, max_size=10),
       st.sampled_from([None, 0, 1, 3]), st.sampled_from([None, 1.0, 5.0]))
def test_one_replica_is_the_single_cache_for_every_policy(requests, cap, ttl):
    t = trace_of(sorted(requests, key=lambda r: r[0]))
    ref = replay(t, capacity_blocks=cap, ttl_s=ttl)
    for policy in ("random", "round-robin", "session", "prefix"):
        r = fleet_hits(t, 1, policy, capacity_blocks=cap, ttl_s=ttl)
        assert (r.num_hit_blocks, r.num_hit_tokens) == (ref.num_hit_blocks, ref.num_hit_tokens)
    sim = _simulate_prefix(t, 1, cap, ttl)       # the simulator itself, on one replica
    assert (sim.num_hit_blocks, sim.num_hit_tokens) == (ref.num_hit_blocks, ref.num_hit_tokens)


def test_fleet_table_on_the_conversation_trace():
    t = read_trace("sample:conversation")
    frame, results = fleet_table(t, [1, 16], ["random", "session"])
    single = reuse_profile(t).hits()
    one = frame[frame.replicas == 1]
    assert (one.block_hit_rate == single.block_hit_rate).all()
    rate = {(r.num_replicas, r.routing): r.block_hit_rate for r in results}
    assert rate[16, "random"] < rate[16, "session"]
    assert all(len(r.replica_requests) == r.num_replicas for r in results)


@pytest.mark.parametrize("kwargs", [dict(num_replicas=0, routing="random"), dict(num_replicas=2, routing="nearest"),
                                    dict(num_replicas=True, routing="random")])
def test_bad_fleet_inputs(kwargs):
    with pytest.raises(PlanInputError):
        fleet_hits(trace_of([(0, [A])]), **kwargs)


# ---------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------

def test_rate_one_is_exact_and_bad_rates_refused():
    exact = reuse_profile(read_trace("sample:synthetic"))
    assert not exact.sampled and exact.hits().block_hit_rate == pytest.approx(1 - 43_924 / 121_877)
    for bad in (0, -0.1, 1.5, float("nan"), True):
        with pytest.raises(PlanInputError, match="sample_rate"):
            read_trace("sample:synthetic", sample_rate=bad)


def test_sampled_estimate_within_its_error_bar():
    # SHARDS at 10 %: a fixed hash keeps about a tenth of the distinct blocks and all their references
    t = read_trace("sample:synthetic", sample_rate=0.1)
    p = reuse_profile(t)
    assert p.sampled and 0.05 * 121_877 < t.num_block_refs < 0.15 * 121_877
    exact = 1 - 43_924 / 121_877                        # 0.6396
    se = standard_error(t, p, None)
    assert 0 < se < 0.05
    assert abs(p.hits().block_hit_rate - exact) < 0.01  # measured 0.0028 (docs/traces.md)


def test_sampled_capacity_scales_by_the_rate():
    t = read_trace("sample:conversation", sample_rate=0.5)
    p = reuse_profile(t)
    # capacity 1,000 blocks is evaluated as floor(1,000 x 0.5) = 500 sampled blocks
    assert p.sampled_capacity(np.array([1_000, 3])).tolist() == [500, 1]


# ---------------------------------------------------------------------------
# Command line: fleets, sampling, saved curves, any-size files
# ---------------------------------------------------------------------------

def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_fleet_acceptance(capsys):
    code, out, _ = run(capsys, "trace", "sample:conversation", "--replicas", "1,4,16", "--routing", "random,session",
                       "--json")
    assert code == 0
    data = json.loads(out)
    rows = {(r["replicas"], r["routing"]): r for r in data["fleet"]}
    assert rows[1, "random"]["block_hit_rate"] == data["block_hit_rate"] == rows[1, "session"]["block_hit_rate"]
    assert data["block_hit_rate"] == pytest.approx(1 - 182_790 / 288_500)
    assert rows[16, "random"]["block_hit_rate"] < rows[16, "session"]["block_hit_rate"]
    assert {r["method"] for r in data["fleet"]} == {"stack distances"}


def test_cli_sampled_result_says_rate_and_error(capsys):
    code, out, _ = run(capsys, "trace", "sample:synthetic", "--sample-rate", "0.1")
    assert code == 0
    assert "sampled: 0.1 of distinct blocks" in out and "expected error about ±" in out
    code, out, _ = run(capsys, "trace", "sample:synthetic", "--sample-rate", "0.1", "--json")
    sampling = json.loads(out)["sampling"]
    assert sampling["sample_rate"] == 0.1 and 0 < sampling["expected_error"] < 0.1


def test_cli_save_and_load_curve(capsys, tmp_path):
    path = tmp_path / "curve.json"
    code, out, err = run(capsys, "trace", "sample:synthetic", "--sweep", "--save", str(path), "--json")
    assert code == 0 and "curve saved" in err
    saved = load_curve(path.read_bytes())
    curve = json.loads(out)["curve"]
    assert saved.curve["capacity_blocks"].tolist() == [r["capacity_blocks"] for r in curve]
    assert saved.block_tokens == 512 and saved.sample_rate is None and saved.trace["requests"] == 3_993
    top = curve[-1]["capacity_blocks"]
    assert saved.at(top + 10)[1] == pytest.approx(1 - 43_924 / 121_877)   # past saturation: every repeat hits
    assert saved.at(-1) == (0, 0.0, 0.0)
    assert saved.version == 2 and saved.eviction_policy == "vllm"
    path2 = tmp_path / "curve-sglang.json"
    code, _, _ = run(capsys, "trace", "sample:synthetic", "--sweep", "--eviction-policy", "sglang", "--save", str(path2))
    assert code == 0 and load_curve(path2.read_bytes()).eviction_policy == "sglang"


def test_version_1_curve_files_still_load():
    # a file as kvplan wrote it before the policy was recorded (settings without eviction_policy)
    doc = {"kvplan_curve": 1, "trace": {"name": "old", "block_tokens": 16}, "settings": {"ttl_s": None, "model": None,
           "kv_bytes_per_token": None}, "sampling": None,
           "curve": [{"capacity_blocks": 0, "block_hit_rate": 0.0, "token_hit_rate": 0.0},
                     {"capacity_blocks": 10, "block_hit_rate": 0.25, "token_hit_rate": 0.3}]}
    saved = load_curve(json.dumps(doc))
    assert saved.version == 1 and saved.eviction_policy is None and saved.block_tokens == 16
    assert saved.at(12) == (10, 0.25, 0.3)


@pytest.mark.parametrize("doc, field", [
    ({}, "kvplan_curve"),
    ({"kvplan_curve": 3}, "kvplan_curve"),
    ({"kvplan_curve": True}, "kvplan_curve"),
    ({"kvplan_curve": 2, "trace": {"block_tokens": 16}, "settings": {"ttl_s": None}, "sampling": None,
      "curve": []}, "eviction_policy"),
    ({"kvplan_curve": 2, "trace": {"block_tokens": 16}, "settings": {"ttl_s": None, "eviction_policy": "fifo"},
      "sampling": None, "curve": []}, "eviction_policy"),
    ({"kvplan_curve": 1, "trace": {"block_tokens": 0}}, "trace.block_tokens"),
    ({"kvplan_curve": 1, "trace": {"block_tokens": 16}, "settings": {"ttl_s": None}, "sampling": None,
      "curve": [{"capacity_blocks": 0, "block_hit_rate": 1.5, "token_hit_rate": 0}]}, "block_hit_rate"),
    ({"kvplan_curve": 1, "trace": {"block_tokens": 16}, "settings": {"ttl_s": None}, "sampling": None,
      "curve": [{"capacity_blocks": 5, "block_hit_rate": 0, "token_hit_rate": 0},
                {"capacity_blocks": 5, "block_hit_rate": 0, "token_hit_rate": 0}]}, "increasing"),
])
def test_bad_curve_files_name_the_field(doc, field):
    with pytest.raises(PlanInputError, match=field):
        load_curve(json.dumps(doc))


def test_cli_reads_a_gzip_file_past_the_upload_cap(capsys, tmp_path, monkeypatch):
    raw = sample_bytes("conversation")
    path = tmp_path / "conv.jsonl.gz"
    path.write_bytes(gzip.compress(raw))
    monkeypatch.setattr(sources, "MAX_TRACE_BYTES", 1_000)    # the cap is for uploads; the CLI has none
    code, out, _ = run(capsys, "trace", str(path), "--json")
    assert code == 0 and json.loads(out)["block_refs"] == 288_500


def test_cli_one_line_errors(capsys):
    assert main(["trace", "sample:synthetic", "--routing", "random"]) == 2
    assert "--replicas" in capsys.readouterr().err
    assert main(["trace", "sample:synthetic", "--save", "x.json"]) == 2
    assert "--sweep" in capsys.readouterr().err
    assert main(["trace", "sample:synthetic", "--replicas", "0"]) == 2
    assert "whole numbers of replicas in [1, 1,024]" in capsys.readouterr().err
    assert main(["trace", "sample:synthetic", "--replicas", "2", "--routing", "nearest"]) == 2
    assert "random, round-robin, session, prefix" in capsys.readouterr().err


def test_upload_like_file_objects_still_read():
    raw = sample_bytes("synthetic")
    t = read_trace(io.BytesIO(raw))
    assert t.num_requests == 3_993


def test_session_ids_route_sessions_together():
    # two sessions that share no first block: "a" = requests 0 and 2, 7 = request 1 (an integer id);
    # session routing keys on the id, so 0 and 2 meet on one replica and request 2 hits both blocks
    rows = [{"timestamp_s": 0, "input_length": 8, "output_length": 1, "hash_ids": [A, B], "session_id": "a"},
            {"timestamp_s": 1, "input_length": 4, "output_length": 1, "hash_ids": [C], "session_id": 7},
            {"timestamp_s": 2, "input_length": 8, "output_length": 1, "hash_ids": [A, B], "session_id": "a"}]
    t = read_jsonl(jsonl(rows), block_tokens=BT)
    assert t.session_ids.tolist() == [0, 1, 0]
    for n in (2, 3, 8):
        assert fleet_hits(t, n, "session").num_hit_blocks == 2
    bad = read_jsonl(jsonl(rows[:2] + [{**rows[2], "session_id": ""}]), block_tokens=BT)
    assert bad.malformed.num_malformed == 1 and "session_id" in bad.malformed.examples[0][1]
    partial = read_jsonl(jsonl(rows[:2] + [{k: v for k, v in rows[2].items() if k != "session_id"}]), block_tokens=BT)
    assert partial.session_ids is None and any("session_id is missing on 1 rows" in n for n in partial.notes)


def test_copies_end_to_end_keep_the_hit_rate_in_every_container(capsys, tmp_path):
    # bench/make_traces.py's construction at small scale: the conversation trace three times, ids and times
    # shifted per copy, as JSONL, gzip JSONL and Parquet: unlimited-cache rate 1 - 182,790 / 288,500 = 0.3664
    import importlib.util
    import pathlib

    spec = importlib.util.spec_from_file_location(
        "make_traces", pathlib.Path(__file__).parent.parent / "bench" / "make_traces.py")
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    rows = make.conversation_rows()
    make.write_copies(rows, 3, str(tmp_path / "x3.jsonl"))
    make.write_copies(rows, 3, str(tmp_path / "x3.jsonl.gz"), opener=gzip.open)
    make.write_parquet_copies(rows, 3, str(tmp_path / "x3.parquet"))
    seen = []
    for name in ("x3.jsonl", "x3.jsonl.gz", "x3.parquet"):
        assert main(["trace", str(tmp_path / name), "--sweep", "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert (data["requests"], data["block_refs"], data["unique_blocks"]) == (3 * 12_031, 3 * 288_500, 3 * 182_790)
        seen.append((data["block_hit_rate"], data["token_hit_rate"], [r["block_hit_rate"] for r in data["curve"]]))
    assert seen[0] == seen[1] == seen[2]
    assert round(seen[0][0], 4) == 0.3664 and seen[0][0] == pytest.approx(1 - 182_790 / 288_500)


def test_fleets_refuse_a_sampled_trace(capsys):
    with pytest.raises(PlanInputError, match="sample_rate"):
        fleet_hits(read_trace("sample:synthetic", sample_rate=0.5), 4, "random")
    assert main(["trace", "sample:synthetic", "--sample-rate", "0.5", "--replicas", "1,4"]) == 2
    assert "sample_rate" in capsys.readouterr().err
