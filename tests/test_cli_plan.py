"""``kvplan plan`` (flags and JSON keys) and ``kvplan frontier``: output, CSV, exit 2 on bad input."""

import csv
import json
import math

import pytest

from planner.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_plan_json_has_the_issue4_keys(capsys):
    code, out, _ = run(capsys, "plan", "--pause-mean-s", "30", "--ttl-s", "60", "--json")
    assert code == 0
    data = json.loads(out)
    for key in ("tiers", "miss_probability", "replay_tokens_per_turn", "replay_seconds_per_turn", "ttft_s",
                "replay_window_tokens", "state_reload_s", "reload_from_host_s", "reload_from_ssd_s", "recompute_s",
                "host_link_id", "host_link_bytes_per_s", "host_ram_bytes_per_gpu", "ssd_bytes_per_gpu",
                "overflow_action", "overflow_message", "prefix_copies"):
        assert key in data, key
    for key in ("hbm_bytes", "host_ram_bytes", "ssd_bytes", "evicted_bytes", "total_bytes", "action"):
        assert key in data["tiers"], key
    t = data["tiers"]
    assert t["hbm_bytes"] + t["host_ram_bytes"] + t["ssd_bytes"] + t["evicted_bytes"] == t["total_bytes"]
    # exp(-60 / 30) = exp(-2) = 0.1353; x 128 tokens = 17.32 tokens per turn
    assert data["miss_probability"] == pytest.approx(math.exp(-2))
    assert data["replay_tokens_per_turn"] == pytest.approx(128 * math.exp(-2))
    assert data["inputs"]["pause_mean_s"] == 30 and data["inputs"]["ttl_s"] == 60


def test_plan_new_flags_reach_the_inputs(capsys):
    code, out, _ = run(capsys, "plan", "--shared-prefixes", "3", "--pause-distribution", "fixed", "--pause-mean-s",
                       "90", "--ttl-s", "60", "--prefill-tokens-per-s", "10000", "--host-ram-gib", "128",
                       "--ssd-gib", "1000", "--host-link", "nvlink-c2c", "--ssd-link", "nvme-gen5",
                       "--target-sessions", "200", "--json")
    assert code == 0
    data = json.loads(out)
    i = data["inputs"]
    assert (i["shared_prefixes"], i["pause_distribution"], i["prefill_tokens_per_s"]) == (3, "fixed", 10_000)
    assert (i["host_ram_gib"], i["ssd_gib"], i["target_sessions_per_gpu"]) == (128, 1000, 200)
    assert data["host_link_id"] == "nvlink-c2c" and data["ssd_link_id"] == "nvme-gen5"
    assert data["host_ram_bytes_per_gpu"] == 128 * 2**30
    # fixed pause 90 s > TTL 60 s: every resume misses; 128 tokens / 10,000 tokens/s = 0.0128 s per turn
    assert data["miss_probability"] == 1.0
    assert data["replay_seconds_per_turn"] == pytest.approx(0.0128)
    assert data["prefix_copies"] == 3


def test_plan_text_mentions_misses_and_tiers(capsys):
    code, out, _ = run(capsys, "plan", "--pause-mean-s", "30")
    assert code == 0
    assert "miss probability" in out and "time to first token" in out and "tiers" in out and "recompute" in out


@pytest.mark.parametrize("argv", [
    ["--shared-prefixes", "0"], ["--shared-prefixes", "-2"], ["--shared-prefixes", "1.5"],
    ["--pause-mean-s", "-1"], ["--pause-mean-s", "nan"], ["--pause-mean-s", "1e40"],
    ["--pause-distribution", "gamma"], ["--ttl-s", "-1"], ["--ttl-s", "inf"],
    ["--prefill-tokens-per-s", "0"], ["--prefill-tokens-per-s", "NaN"], ["--prefill-tokens-per-s", "1e300"],
    ["--host-ram-gib", "-1"], ["--host-ram-gib", "1e30"], ["--ssd-gib", "nan"], ["--ssd-gib", "-0.5"],
    ["--host-link", "pcie9"], ["--ssd-link", "tape"], ["--target-sessions", "-1"], ["--target-sessions", "1e20"],
    ["--gpus-per-replica", "0"], ["--decode-tokens-per-s", "0"], ["--hit-rate", "nan"], ["--context", "0"],
])
def test_plan_bad_input_exit_2_one_line(capsys, argv):
    code, out, err = run(capsys, "plan", *argv)
    assert code == 2
    assert err.startswith("kvplan: error:") and err.count("\n") == 1


def test_frontier_json(capsys):
    code, out, _ = run(capsys, "frontier", "--model", "deepseek-v4.1-flash", "--gpus", "h100-sxm,h200,b200",
                       "--contexts", "128k,1m", "--hit-rates", "0,0.5,0.9,1", "--attention-parallelism", "dp", "--json")
    assert code == 0
    data = json.loads(out)
    assert len(data["rows"]) == 3 * 2 * 4
    assert set(data["columns"]) == set(data["rows"][0])
    # the default plan point, DP attention: H200, 1M tokens, shared prefix 0.5 -> 143 sessions at every hit rate;
    # at hit rate 1 no prompt prefill: 5 requests/s (test_plan_golden.py)
    rows = [r for r in data["rows"] if r["gpu_id"] == "h200" and r["context_tokens"] == 1_000_000]
    assert {r["sessions_per_gpu"] for r in rows} == {143}
    row = next(r for r in rows if r["hit_rate"] == 1)
    assert row["request_rate_per_s"] == pytest.approx(5.0)


def test_frontier_json_null_rate_without_output(capsys):
    code, out, _ = run(capsys, "frontier", "--output-tokens", "0", "--contexts", "1m", "--hit-rates", "0.5", "--json")
    assert code == 0
    assert all(r["request_rate_per_s"] is None for r in json.loads(out)["rows"])


def test_frontier_csv_file(capsys, tmp_path):
    path = tmp_path / "grid.csv"
    code, _, _ = run(capsys, "frontier", "--gpus", "h200,custom:96", "--contexts", "1m", "--hit-rates", "0,1",
                     "--hit-rate", "1", "--csv", str(path))
    assert code == 0
    rows = list(csv.DictReader(path.open()))
    assert len(rows) == 2 * 1 * 2 and "sessions_per_gpu" in rows[0] and "request_rate_per_s" in rows[0]


def test_frontier_text(capsys):
    code, out, _ = run(capsys, "frontier", "--gpus", "h200", "--contexts", "1m", "--hit-rates", "0.5",
                       "--attention-parallelism", "dp")
    assert code == 0 and "hit rate 0.5" in out and "143" in out and "dp attention" in out
    code, out, _ = run(capsys, "frontier", "--gpus", "h200", "--contexts", "1m", "--hit-rates", "0.5")
    assert code == 0 and "17.9" in out and "tp attention" in out  # 143 per replica / 8 GPUs = 17.875


@pytest.mark.parametrize("shared, sessions", [
    # docs/capacity.md worked example: 100 GiB = 107,374,182,400 B all usable, 1,000,000 tokens x 890 B. Half of the
    # context stored once: 445,000,000 B + 445,000,000 B per session -> floor(240.29) = 240; none: 890,000,000 B
    # per session -> floor(120.64) = 120
    ("0.5", 240), ("0", 120),
])
def test_frontier_shared_prefix_flag(capsys, tmp_path, shared, sessions):
    worked = ["frontier", "--model", "deepseek-v4.1-flash", "--gpu", "custom", "--hbm-gib", "100", "--gpus", "custom:100",
              "--gpu-memory-utilization", "1", "--weights-gib", "0", "--reserve-gib", "0", "--context", "1000000",
              "--contexts", "1000000", "--output-tokens", "0", "--gpus-per-replica", "1", "--hit-rates", "0,0.9",
              "--shared-prefix", shared]
    code, out, _ = run(capsys, *worked, "--json")
    assert code == 0
    rows = json.loads(out)["rows"]
    assert {(r["shared_prefix"], r["sessions_per_gpu"]) for r in rows} == {(float(shared), sessions)}
    code, out, _ = run(capsys, *worked)
    assert code == 0 and f"shared prefix {float(shared):g} of the context" in out
    path = tmp_path / "grid.csv"
    assert run(capsys, *worked, "--csv", str(path))[0] == 0
    assert {(float(r["shared_prefix"]), float(r["sessions_per_gpu"])) for r in csv.DictReader(path.open())} == {
        (float(shared), sessions)}


@pytest.mark.parametrize("argv", [
    ["--gpus", "h900"], ["--gpus", "custom:-1"], ["--gpus", ""], ["--contexts", "0"], ["--contexts", "1e99"],
    ["--hit-rates", "nan"], ["--hit-rates", "2"], ["--model", "gpt-9"], ["--output-tokens", "-1"],
    ["--pause-mean-s", "nan"], ["--gpu", "zz"], ["--kv-format", "fp7"], ["--attention-parallelism", "ep"],
])
def test_frontier_bad_input_exit_2(capsys, argv):
    code, _, err = run(capsys, "frontier", *argv)
    assert code == 2 and err.startswith("kvplan: error:")


_PLAN_SHAPES = [
    [],
    ["--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus-per-replica", "4", "--context", "128k", "--hit-rate", "0"],
    ["--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus-per-replica", "4", "--context", "96k",
     "--attention-parallelism", "dp", "--hit-rate", "0.3"],
    ["--measured-kv-bytes-per-token", "445", "--measured-usable-kv-gib", "80", "--pause-mean-s", "90",
     "--target-sessions", "400", "--gpus-per-replica", "2", "--attention-parallelism", "dp"],
    ["--model", "deepseek-v3", "--gpus-per-replica", "16", "--pipeline-parallel-size", "2", "--pause-mean-s", "30",
     "--ttl-s", "10", "--shared-prefixes", "3", "--state-in-hbm", "--output-tokens", "0"],
    ["--gpu", "custom", "--hbm-gib", "96", "--weights-gib", "10", "--measured-usable-kv-gib", "40",
     "--pause-distribution", "fixed", "--pause-mean-s", "120", "--host-ram-gib", "1", "--ssd-gib", "2",
     "--target-sessions", "5000"],
]


@pytest.mark.parametrize("flags", _PLAN_SHAPES)
def test_frontier_at_the_plans_own_point_equals_kvplan_plan(capsys, flags):
    """Every flag of `kvplan plan` is a flag of `kvplan frontier`; at the plan's point every figure is equal."""
    code, out, err = run(capsys, "plan", *flags, "--json")
    assert code == 0, err
    want = json.loads(out)
    code, out, err = run(capsys, "frontier", "--gpus", "h200,b200", "--contexts", "1m,2m", "--hit-rates", "0,0.9",
                         *flags, "--json")
    assert code == 0, err
    got = json.loads(out)
    assert got["inputs"] == want["inputs"]
    compared = 0
    for name, value in got["plan"].items():
        if name in want and not isinstance(want[name], (dict, list)):
            assert value == want[name], name
            compared += 1
    assert compared >= 20
    assert got["plan"]["usable_measured"] == (want["usable_kv_source"] == "measured")


def test_plan_text_states_the_usable_kv_assumptions(capsys):
    # custom accelerator of 100 GiB at utilization 0.9, 10 GiB of weights, 2 GiB reserve:
    # 100 x 0.9 - 10 - 2 = 78 GiB = 83,751,862,272 B = 83.8 GB; each term is printed beside the figure
    code, out, _ = run(capsys, "plan", "--gpu", "custom", "--hbm-gib", "100", "--gpu-memory-utilization", "0.9",
                       "--weights-gib", "10", "--reserve-gib", "2", "--gpus-per-replica", "1")
    assert code == 0
    line = next(l for l in out.splitlines() if l.startswith("  usable KV per GPU:"))
    assert line == ("  usable KV per GPU:   83.8 GB (78 GiB) = HBM 107.4 GB (100.0 GiB) x utilization 0.9 - weights "
                    "10.7 GB (10 GiB) - reserve 2.15 GB (2 GiB)")
    assert "(1 GPU per replica)" in out.splitlines()[0]
