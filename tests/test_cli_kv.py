"""``kvplan kv``: --config, --tp/--pp, --engine vllm, --block-size, --kv-budget-gib/--max-model-len.

Expected values are worked by hand next to each number.
"""

import json
import os

import pytest

from planner.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def kv_json(capsys, *argv):
    code, out, err = run(capsys, "kv", *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def write(tmp_path, cfg, name="config.json"):
    p = tmp_path / name
    p.write_text(json.dumps(cfg) if not isinstance(cfg, str) else cfg)
    return str(p)


QWEN3_4B = {"model_type": "qwen3", "num_hidden_layers": 36, "num_attention_heads": 32, "num_key_value_heads": 8,
            "head_dim": 128, "hidden_size": 2560, "max_position_embeddings": 40960}


def test_groups_list_with_bytes(capsys):
    # Gemma 2 9B at 8,192: sliding 21 x 8,192 x 4,096 = 704,643,072; full 21 x 8,192 x 8,192 = 1,409,286,144
    data = kv_json(capsys, "--model", "gemma-2-9b", "--context", "8192")
    groups = {g["name"]: g for g in data["groups"]}
    assert groups["sliding window 4,096"]["bytes"] == 704_643_072
    assert groups["full attention"]["bytes"] == 1_409_286_144
    assert data["kv_bytes"] == 2_113_929_216
    assert data["per"] == "GPU" and data["pp"] == 1


def test_config_qwen3_4b(capsys, tmp_path):
    # 2 x 36 x 8 x 128 x 2 = 147,456 B/token (head_dim read, not hidden_size / heads = 80)
    data = kv_json(capsys, "--config", write(tmp_path, QWEN3_4B), "--context", "1000")
    assert data["kv_bytes_per_token"] == 147_456 and data["kv_bytes"] == 147_456_000


def test_config_with_format(capsys, tmp_path):
    # fp8: half of 147,456
    data = kv_json(capsys, "--config", write(tmp_path, QWEN3_4B), "--kv-format", "fp8", "--context", "1")
    assert data["kv_bytes_per_token"] == 73_728


def test_tp_and_pp(capsys):
    # Llama-3.1-70B TP 32: 80 x 1 head x 512 = 40,960 B/token per GPU; per replica x 32 = 1,310,720
    data = kv_json(capsys, "--model", "llama-3.1-70b", "--tp", "32", "--context", "1")
    assert data["kv_bytes_per_token"] == 40_960 and data["kv_bytes_per_replica"] == 1_310_720
    assert data["per"].startswith("GPU")
    # Llama-3.1-8B PP 2: 16 layers x 4,096 = 65,536 B/token on the largest stage
    data = kv_json(capsys, "--model", "llama-3.1-8b", "--pp", "2", "--context", "1")
    assert data["kv_bytes_per_token"] == 65_536 and data["pp"] == 2


def test_kv_budget_llama_issue_10517(capsys):
    # 3.8125 GiB = 1,952 blocks of 2 MiB (16 x 4,096 B x 32 layers): 31,232 tokens; 1,952 / 1,250 = 1.5616
    data = kv_json(capsys, "--model", "llama-3.1-8b", "--context", "20000", "--kv-budget-gib", "3.8125",
                   "--max-model-len", "20000")
    assert data["num_blocks"] == 1_952
    assert data["max_tokens"] == 31_232
    assert data["max_concurrency"] == 1.5616
    assert data["largest_max_model_len"] == 31_232
    assert "not a cap" in data["max_concurrency_note"]


def test_kv_budget_llama_3_8b_a100(capsys):
    # 5,691 blocks x 2 MiB = 11,934,892,032 B = 11.115234375 GiB; concurrency 5,691 / 512 = 11.115234375
    data = kv_json(capsys, "--model", "llama-3.1-8b", "--context", "8192", "--kv-budget-gib", "11.115234375",
                   "--max-model-len", "8192")
    assert data["num_blocks"] == 5_691 and f"{data['max_concurrency']:.2f}" == "11.12"


def test_block_size(capsys):
    # block 32: 4 MiB per block id -> 3.8125 GiB = 976 blocks, 31,232 tokens
    data = kv_json(capsys, "--model", "llama-3.1-8b", "--kv-budget-gib", "3.8125", "--max-model-len", "20000",
                   "--block-size", "32", "--context", "20000")
    assert data["num_blocks"] == 976 and data["max_tokens"] == 31_232


def test_engine_vllm(capsys):
    # gpt-oss-120b at 100,000: theory 3,691,118,592; vLLM 3,993,698,304 (sliding reserves 521 blocks per layer)
    data = kv_json(capsys, "--model", "gpt-oss-120b", "--context", "100000", "--engine", "vllm")
    eng = data["engine"]
    assert eng["theory_bytes"] == data["kv_bytes"] == 3_691_118_592
    assert eng["engine_bytes"] == 3_993_698_304 and eng["differs"] and eng["reasons"]
    # hybrid manager off: 36 x 6,250 x 32,768 = 7,372,800,000
    data = kv_json(capsys, "--model", "gpt-oss-120b", "--context", "100000", "--engine", "vllm",
                   "--no-hybrid-kv-cache-manager")
    assert data["engine"]["engine_bytes"] == 7_372_800_000


def test_engine_v41_not_modelled(capsys):
    data = kv_json(capsys, "--model", "deepseek-v4.1-flash", "--engine", "vllm")
    assert data["engine"]["engine_bytes"] == data["kv_bytes"] == 890_000_000
    assert any("not modelled" in r for r in data["engine"]["reasons"])


def test_text_output_says_per_gpu(capsys):
    code, out, _ = run(capsys, "kv", "--model", "llama-3.1-70b", "--tp", "8", "--context", "2048", "--engine", "vllm",
                       "--kv-budget-gib", "10", "--max-model-len", "8192")
    assert code == 0
    assert "per GPU" in out and "per replica" in out and "not a hard cap" in out


def test_config_linear_attention_tp(capsys, tmp_path):
    # Qwen3-Next shape at TP 4, 1 token: full 12 layers x 1 head (ceil(2/4) = 1) x (256 + 256) x 2 B = 12,288 B;
    # state per linear layer: conv 3 x ceil(8,192/4) = 2,048 channels x 2 B = 12,288, recurrent
    # 8 heads (32/4) x 128 x 128 x 2 B = 262,144 -> 36 x 274,432 = 9,879,552. Total 9,891,840.
    cfg = {"model_type": "qwen3_next", "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2,
           "head_dim": 256, "hidden_size": 2048, "full_attention_interval": 4, "linear_num_key_heads": 16,
           "linear_num_value_heads": 32, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
           "linear_conv_kernel_dim": 4, "max_position_embeddings": 262144}
    data = kv_json(capsys, "--config", write(tmp_path, cfg), "--context", "1", "--tp", "4")
    assert data["kv_bytes"] == 9_891_840


@pytest.mark.parametrize("argv", [
    ["--model", "llama-3.1-8b", "--pp", "0"],
    ["--model", "llama-3.1-8b", "--pp", "33"],                      # 32 layers
    ["--model", "llama-3.1-8b", "--pp", "nan"],
    ["--model", "llama-3.1-8b", "--block-size", "0"],
    ["--model", "llama-3.1-8b", "--kv-budget-gib", "-1"],
    ["--model", "llama-3.1-8b", "--kv-budget-gib", "nan"],
    ["--model", "llama-3.1-8b", "--kv-budget-gib", "1e99"],
    ["--model", "llama-3.1-8b", "--kv-budget-gib", "10", "--max-model-len", "0"],
    ["--model", "llama-3.1-8b", "--engine", "sglang"],
    ["--model", "llama-3.1-8b", "--engine", "vllm", "--context", "5000", "--max-model-len", "4096"],
    ["--model", "deepseek-v4.1-flash", "--kv-budget-gib", "10"],   # compressed entries: not paged here
    ["--bytes-per-token", "890", "--pp", "2"],                      # layers unknown
    ["--model", "llama-3.1-8b", "--tp", "1.5"],
])
def test_bad_input_exit_2_one_line(capsys, argv):
    code, out, err = run(capsys, "kv", *argv)
    assert code == 2
    assert err.startswith("kvplan: error:") and err.strip().count("\n") == 0


@pytest.mark.parametrize("cfg, field", [
    ("{not json", "config"),
    ({"num_hidden_layers": 32}, "num_attention_heads"),
    ({**QWEN3_4B, "num_key_value_heads": 5}, "num_key_value_heads"),
    ({**QWEN3_4B, "num_key_value_heads": [8] * 35}, "num_key_value_heads"),
    ({**QWEN3_4B, "layer_types": ["mamba"] * 36}, "mamba_expand"),  # a Mamba layer without its state shape
    ({**QWEN3_4B, "layer_types": ["kda"] * 36}, "layer_types[0]"),   # an unknown layer kind
])
def test_bad_config_exit_2_names_the_field(capsys, tmp_path, cfg, field):
    code, _, err = run(capsys, "kv", "--config", write(tmp_path, cfg))
    assert code == 2 and field in err and err.strip().count("\n") == 0


def test_cli_unknown_layout_field_and_architecture_exit_2_with_one_line(tmp_path):
    # a config with a layout field no reader reads, then an unknown architecture: exit 2, one line naming each
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    base = {"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 32, "num_attention_heads": 32,
            "num_key_value_heads": 8, "hidden_size": 4096, "max_position_embeddings": 8192}
    cases = (({**base, "cross_attention_layers": [3, 8]}, "config.cross_attention_layers"),
             ({**base, "architectures": ["NotAModelForCausalLM"]}, "config.architectures"))
    for cfg, needle in cases:
        path = tmp_path / "config.json"
        path.write_text(json.dumps(cfg))
        proc = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(path), "--context", "1000"],
                              capture_output=True, text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
        assert proc.returncode == 2
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], proc.stderr
    # accepted by name: exit 0, and the number says so; 2 x 32 x 8 x 128 x 2 B = 131,072 B/token
    path.write_text(json.dumps({**base, "cross_attention_layers": [3, 8]}))
    proc = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(path), "--context", "1000",
                           "--ignore-field", "cross_attention_layers", "--json"],
                          capture_output=True, text=True, cwd=root, env={**os.environ, "PYTHONPATH": str(root)})
    out = json.loads(proc.stdout)
    assert proc.returncode == 0 and out["kv_bytes_per_token"] == 131_072
    assert out["ignored_fields"] == ["cross_attention_layers"]


def test_window_sentence_prints_a_large_per_token_figure_whole(tmp_path):
    # A Mistral-architecture config written here: 64 layers, 64 KV heads of 8,192 / 64 = 128, a 4,096-token window on
    # every layer (vLLM MistralForCausalLM = LlamaForCausalLM; cache_config.sliding_window applies to all layers).
    # 2 x 64 x 64 x 128 x 2 B = 2,097,152 B/token inside the window, 0 past it. "{:,.6g}" printed "2.09715e+06".
    import json
    import subprocess
    import sys
    from pathlib import Path
    cfg = {"architectures": ["MistralForCausalLM"], "model_type": "mistral", "num_hidden_layers": 64,
           "num_attention_heads": 64, "num_key_value_heads": 64, "hidden_size": 8_192, "sliding_window": 4_096,
           "max_position_embeddings": 32_768}
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    out = subprocess.run([sys.executable, "-m", "planner.cli", "kv", "--config", str(path), "--context", "8192"],
                         capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1], check=True).stdout
    assert "2,097,152 B/token inside the 4,096-token window" in out
    assert "e+06" not in out


def test_zero_per_token_past_every_window_says_why(capsys):
    # Mistral 7B v0.1: a 4,096-token window on all 32 layers; at 32,000 tokens another token adds 0 B, and the pool
    # holds 32 x 4,096 x 2 x 8 x 128 x 2 B = 536,870,912 B. The 0 is explained on its own line.
    from planner.cli import main
    assert main(["kv", "--model", "mistral-7b-v0.1", "--context", "32k"]) == 0
    out = capsys.readouterr().out
    assert "KV bytes per token: 0 B per GPU at this length" in out and "window is full" in out
    assert "536,870,912 B" in out


def test_zero_per_token_of_an_attention_free_model_names_state_not_windows(capsys):
    # state-spaces/mamba-2.8b-hf: no attention layer, so no per-token KV; the pool is the Mamba state alone
    from pathlib import Path
    from planner.cli import main
    path = Path(__file__).parent / "data" / "configs" / "mamba-2.8b-hf.config.json"
    assert main(["kv", "--config", str(path), "--context", "4096"]) == 0
    out = capsys.readouterr().out
    assert "no layer keeps per-token KV" in out and "window" not in out.split("\n")[1]


def test_chunked_local_attention_is_not_called_a_sliding_window(capsys):
    # Llama 4 Scout: 36 chunked-local layers (8,192-token chunks) and 12 global ones; the capped-layers line says so
    from pathlib import Path
    from planner.cli import main
    path = Path(__file__).parent / "data" / "configs" / "llama-4-scout-17b-16e-instruct.partial.config.json"
    assert main(["kv", "--config", str(path), "--context", "32k"]) == 0
    out = capsys.readouterr().out
    assert "chunked / window:" in out and "sliding window:" not in out


def test_native_format_is_resolved_in_the_header_and_json(capsys, tmp_path):
    # "native" is a word, not a format: the header says what it resolved to. QWEN3_4B carries no KV dtype and no
    # quantization config, so vLLM's kv_cache_dtype "auto" follows the model dtype: 2 bytes, shown as bf16
    path = write(tmp_path, QWEN3_4B)
    code, out, _ = run(capsys, "kv", "--config", path, "--context", "1024")
    assert code == 0
    assert "KV format native = bf16 (the checkpoint's or the engine's 'auto')" in out.splitlines()[0]
    assert kv_json(capsys, "--config", path, "--context", "1024")["native_kv_format"].startswith("bf16 ")
    # an explicit format is printed as given
    code, out, _ = run(capsys, "kv", "--config", path, "--context", "1024", "--kv-format", "fp8")
    assert "KV format fp8," in out.splitlines()[0]


def test_native_format_of_a_model_without_attention_kv_says_so(capsys):
    # falcon-mamba-7b: every layer is Mamba (state only), so "native" resolves to no KV format at all, never "None"
    code, out, _ = run(capsys, "kv", "--config", os.path.join(os.path.dirname(__file__), "data", "configs",
                                                              "falcon-mamba-7b.config.json"), "--context", "1000")
    assert code == 0
    assert "KV format native = none: no layer keeps attention KV," in out.splitlines()[0]


def test_pp_refusal_names_the_config_not_an_internal_id(capsys, tmp_path):
    # Qwen3-4B shape: 36 layers, so at most 36 pipeline stages; the refusal names the file the user gave
    code, _, err = run(capsys, "kv", "--config", write(tmp_path, QWEN3_4B, "qwen3-4b.json"), "--pp", "64")
    assert code == 2
    assert "at most 36 (one layer per pipeline stage; qwen3-4b.json has 36)" in err and "custom" not in err


def test_a_defaulted_field_is_said_beside_the_figure(capsys, tmp_path):
    # Qwen3-4B shape without num_key_value_heads: vLLM's config class defaults it to num_attention_heads (MHA):
    # 2 x 36 x 32 x 128 x 2 B = 589,824 B/token, and the text says so on the line after the figure
    cfg = {k: v for k, v in QWEN3_4B.items() if k != "num_key_value_heads"}
    path = write(tmp_path, cfg)
    code, out, _ = run(capsys, "kv", "--config", path, "--context", "1000")
    lines = out.splitlines()
    assert code == 0 and "KV bytes per token: 589,824 B" in lines[1]
    assert lines[2] == "  assumed:            num_key_value_heads = 32 (absent or null: MHA, one KV head per attention head)"
    assert kv_json(capsys, "--config", path, "--context", "1000")["assumed_fields"] == [
        "num_key_value_heads = 32 (absent or null: MHA, one KV head per attention head)"]
    # the full config says nothing is assumed (its KV format is named on the first line, not here)
    assert kv_json(capsys, "--config", write(tmp_path, QWEN3_4B, "full.json"), "--context", "1000")["assumed_fields"] == []
