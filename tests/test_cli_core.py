"""The kvplan command line: JSON keys, and exit code 2 with one stderr line on bad input."""

import json

import pytest

from planner.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_kv_json_v41_one_million(capsys):
    code, out, _ = run(capsys, "kv", "--model", "deepseek-v4.1-flash", "--context", "1000000", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["kv_bytes"] == 890_000_000
    assert data["kv_bytes_per_token"] == 890
    assert data["context_tokens"] == 1_000_000
    assert data["state_bytes"] == 2_703_360  # 40 x 128 x 528
    assert data["kv_gb"] == pytest.approx(0.89)
    assert data["kv_gib"] == pytest.approx(0.8288770914)
    assert data["kv_format"] == "native"


def test_kv_bytes_per_token(capsys):
    # 890 B/token x 100,000 = 89,000,000 B
    code, out, _ = run(capsys, "kv", "--bytes-per-token", "890", "--context", "100000", "--json")
    assert code == 0 and json.loads(out)["kv_bytes"] == 89_000_000


def test_kv_llama_70b_640_mib(capsys):
    # llama.cpp: Llama-3-70B f16 at 2,048 tokens = 640 MiB; 2 x 80 x 8 x 128 x 2 B x 2,048 = 671,088,640 B
    code, out, _ = run(capsys, "kv", "--model", "llama-3.1-70b", "--context", "2048", "--kv-format", "fp16", "--json")
    assert json.loads(out)["kv_bytes"] == 640 * 2**20


def test_plan_json_keys(capsys):
    code, out, _ = run(capsys, "plan", "--model", "deepseek-v4.1-flash", "--gpu", "h200", "--attention-parallelism", "dp",
                       "--json")
    assert code == 0
    data = json.loads(out)
    for key in ("usable_kv_bytes", "shared_prefix_bytes", "per_session_bytes", "sessions_per_gpu",
                "request_rate_per_s", "inputs"):
        assert key in data
    assert data["sessions_per_gpu"] == 143
    assert data["inputs"]["model_id"] == "deepseek-v4.1-flash"


def test_models_and_gpus_json(capsys):
    code, out, _ = run(capsys, "models", "--json")
    ids = [m["id"] for m in json.loads(out)]
    assert len(ids) >= 15 and "deepseek-v4.1-flash" in ids and all(m["source"] for m in json.loads(out))
    code, out, _ = run(capsys, "gpus", "--json")
    gpus = {g["id"]: g for g in json.loads(out)}
    assert gpus["h200"]["hbm_bytes"] == 143_771 * 2**20


@pytest.mark.parametrize("argv", [
    ["plan", "--hit-rate", "2"],
    ["plan", "--hit-rate", "nan"],
    ["plan", "--hbm-gib", "-1"],
    ["plan", "--hbm-gib", "0"],
    ["plan", "--context", "0"],
    ["plan", "--context", "1e99"],
    ["plan", "--gpus-per-replica", "0"],
    ["plan", "--model", "nope"],
    ["plan", "--gpu", "nope"],
    ["plan", "--kv-format", "fp7"],
    ["kv", "--model", "deepseek-v4.1-flash", "--context", "-5"],
    ["kv", "--bytes-per-token", "0"],
    ["kv", "--bytes-per-token", "inf"],
    ["kv", "--model", "llama-3.1-8b", "--tp", "0"],
    ["kv"],
    ["nonsense"],
])
def test_bad_input_exit_2_one_line(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.strip().count("\n") == 0 and err.startswith("kvplan: error:")


def test_kv_config_missing_file(capsys, tmp_path):
    code, _, err = run(capsys, "kv", "--config", str(tmp_path / "absent.json"))
    assert code == 2 and "config" in err


def test_kv_config_malformed(capsys, tmp_path):
    p = tmp_path / "config.json"
    p.write_text("{not json")
    code, _, err = run(capsys, "kv", "--config", str(p))
    assert code == 2 and "JSON" in err


def test_plan_measured_flags(capsys):
    # measured 900 B/token in the 100 GiB golden case: floor((107,374,182,400 - 450,000,000) / 450,000,000) = 237
    code, out, _ = run(capsys, "plan", "--gpu", "custom", "--hbm-gib", "100", "--gpu-memory-utilization", "1",
                       "--weights-gib", "0", "--reserve-gib", "0", "--gpus-per-replica", "1", "--output-tokens", "0",
                       "--measured-kv-bytes-per-token", "900", "--json")
    data = json.loads(out)
    assert (code, data["sessions_per_gpu"], data["kv_source"]) == (0, 237, "measured")
    code, _, err = run(capsys, "plan", "--measured-kv-bytes-per-token", "nan")
    assert code == 2 and "measured" in err


def test_readme_examples_take_token_suffixes(capsys):
    # README: `kvplan kv --bytes-per-token 890 --context 1m`: 890 x 1,000,000 = 890,000,000 B (1M would be 2**20)
    code, out, _ = run(capsys, "kv", "--bytes-per-token", "890", "--context", "1m", "--json")
    assert code == 0 and json.loads(out)["kv_bytes"] == 890_000_000
    # 128k = 128,000 tokens (decimal suffix)
    code, out, _ = run(capsys, "plan", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus-per-replica", "2",
                       "--context", "128k", "--json")
    assert code == 0 and json.loads(out)["inputs"]["context_tokens"] == 128_000


def test_json_and_csv_on_stdout_together_refused(capsys):
    code, out, err = run(capsys, "plan", "--json", "--csv", "-")
    assert code == 2 and out == "" and err.count("\n") == 1 and "csv" in err


def test_trace_on_a_directory_is_a_one_line_error(capsys, tmp_path):
    code, _, err = run(capsys, "trace", str(tmp_path))
    assert code == 2 and err.count("\n") == 1 and "regular file" in err
