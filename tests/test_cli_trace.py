"""``kvplan trace``: JSON keys and values, sweeps, lengths-only traces, one-line errors."""

from __future__ import annotations

import json

import pytest

from planner.cli import main
from planner.traces import load_sample, reuse_profile


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_point_matches_the_stack_distance_profile(capsys):
    code, out, _ = run(capsys, "trace", "sample:conversation", "--capacity-blocks", "20000", "--ttl-s", "300",
                       "--json")
    assert code == 0
    data = json.loads(out)
    for key in ("requests", "block_hit_rate", "token_hit_rate", "malformed_rows", "capacity_blocks", "ttl_s"):
        assert key in data
    assert (data["requests"], data["block_refs"], data["unique_blocks"]) == (12_031, 288_500, 182_790)
    assert data["malformed_rows"] == 0 and data["hit_rates_measurable"] is True
    hits = reuse_profile(load_sample("conversation")).hits(20_000, 300)
    assert data["block_hit_rate"] == pytest.approx(hits.block_hit_rate)
    assert data["token_hit_rate"] == pytest.approx(hits.token_hit_rate)
    assert data["capacity_bytes"] is None and "curve" not in data


def test_capacity_gib_with_model(capsys):
    # DeepSeek V4.1-Flash: 890 B/token x 512 tokens = 455,680 B per block;
    # 1 GiB = 1,073,741,824 B / 455,680 = 2,356.35 -> 2,356 blocks = 1,073,582,080 B
    code, out, _ = run(capsys, "trace", "sample:synthetic", "--model", "deepseek-v4.1-flash",
                       "--capacity-gib", "1", "--json")
    data = json.loads(out)
    assert code == 0 and data["kv_bytes_per_token"] == 890 and data["block_bytes"] == 455_680
    assert data["capacity_blocks"] == 2_356 and data["capacity_bytes"] == 1_073_582_080
    assert data["capacity_gib"] == pytest.approx(1_073_582_080 / 2**30)


def test_sweep_curve(capsys):
    code, out, err = run(capsys, "trace", "sample:synthetic", "--model", "llama-3.1-8b", "--sweep", "--json")
    assert code == 0
    data = json.loads(out)
    curve = data["curve"]
    assert len(curve) > 10
    assert set(curve[0]) == {"capacity_blocks", "capacity_bytes", "capacity_gb", "capacity_gib",
                             "block_hit_rate", "token_hit_rate"}
    rates = [row["block_hit_rate"] for row in curve]
    assert rates == sorted(rates) and rates[0] == 0
    # the last point is saturation: every repeat hits, 1 - 43,924 / 121,877 (no capacity given: unlimited)
    assert rates[-1] == pytest.approx(1 - 43_924 / 121_877) == data["block_hit_rate"]
    # Llama 3.1 8B: 131,072 B/token x 512 = 67,108,864 B = 64 MiB per block
    row = curve[5]
    assert row["capacity_bytes"] == row["capacity_blocks"] * 67_108_864
    assert row["capacity_gib"] == pytest.approx(row["capacity_blocks"] / 16)
    assert "computing the hit-rate curve" in err


def test_azure_says_not_measurable(capsys):
    code, out, _ = run(capsys, "trace", "sample:azure-conv", "--sweep", "--json")
    data = json.loads(out)
    assert code == 0 and data["requests"] == 19_366
    assert data["hit_rates_measurable"] is False and data["block_hit_rate"] is None
    assert data["token_hit_rate"] is None and data["curve"] is None
    assert "not measurable" in data["message"]
    code, out, _ = run(capsys, "trace", "sample:azure-code")
    assert code == 0 and "not measurable" in out and "concurrency" in out


def test_malformed_rows_reported(capsys, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text('{"timestamp_s": 0, "input_length": 32, "output_length": 4, "hash_ids": [1, 2]}\n'
                    "oops\n"
                    '{"timestamp_s": 2, "input_length": 32, "output_length": 4, "hash_ids": [1, 2]}\n')
    code, out, _ = run(capsys, "trace", str(path), "--block-tokens", "16", "--json")
    data = json.loads(out)
    assert code == 0 and data["format"] == "jsonl" and data["requests"] == 2
    assert data["malformed_rows"] == 1 and data["malformed_examples"][0]["line"] == 2
    assert data["block_hit_rate"] == 0.5        # 2 hits of 4 block references
    code, out, _ = run(capsys, "trace", str(path), "--block-tokens", "16")
    assert "1 of 3 rows malformed" in out and "line 2" in out


def test_human_output(capsys):
    code, out, _ = run(capsys, "trace", "sample:conversation", "--model", "deepseek-v4.1-flash",
                       "--capacity-gib", "50", "--ttl-s", "600")
    assert code == 0
    assert "block hit rate" in out and "GiB" in out and "12,031 requests" in out


@pytest.mark.parametrize("argv, needle", [
    (["sample:synthetic", "--capacity-gib", "3"], "--model"),
    (["sample:nope"], "sample:conversation"),
    (["does/not/exist.jsonl"], "readable file"),
    (["sample:conversation", "--block-tokens", "16"], "block_tokens"),
    (["sample:conversation", "--model", "no-such-model"], "model"),
    (["sample:conversation", "--model", "mistral-7b-v0.1"], "window"),
    (["sample:conversation", "--ttl-s", "-1"], "--ttl-s"),
    (["sample:conversation", "--format", "parquet"], "--format"),
    (["sample:conversation", "--capacity-blocks", "1.5"], "--capacity-blocks"),
    (["sample:conversation", "--capacity-blocks", "4", "--capacity-gib", "1"], "not allowed with"),
])
def test_bad_input_exits_2_with_one_line(capsys, argv, needle):
    code, out, err = run(capsys, "trace", *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("kvplan: error:") and needle in err


def test_jsonl_without_block_tokens(capsys, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text('{"timestamp_s": 0, "input_length": 32, "output_length": 4, "hash_ids": [1, 2]}\n')
    code, _, err = run(capsys, "trace", str(path))
    assert code == 2 and "block_tokens" in err
