"""A fresh user's first runs of kvplan: each figure says what it means, each error names its field.

Expected values are worked by hand next to each number.
"""

import json

from planner.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_kv_sliding_window_states_the_cap(capsys):
    # mistralai/Mistral-7B-v0.1 config.json: 32 layers, 8 KV heads, head_dim 4096 / 32 = 128,
    # sliding_window 4096, bf16: 32 x 8 x 128 x 2 (K, V) x 2 B = 131,072 B/token inside the window;
    # 4,096 x 131,072 = 536,870,912 B for any context past 4,096 tokens, 0 B per extra token.
    code, out, _ = run(capsys, "kv", "--model", "mistral-7b-v0.1", "--context", "32k")
    assert code == 0
    assert "131,072 B/token inside the 4,096-token window" in out
    assert "caps the KV at 4,096 tokens (0 B/token past it)" in out
    code, out, _ = run(capsys, "kv", "--model", "mistral-7b-v0.1", "--context", "32k", "--json")
    d = json.loads(out)
    assert (d["window_tokens"], d["kv_bytes_per_token_in_window"], d["kv_bytes_per_token_past_window"]) \
        == (4096, 131072, 0)
    assert d["kv_bytes"] == 536_870_912


def test_models_and_kv_word_the_window_alike(capsys):
    _, out, _ = run(capsys, "models", "--json")
    row = next(r for r in json.loads(out) if r["id"] == "mistral-7b-v0.1")
    assert (row["window_tokens"], row["kv_bytes_per_token_in_window"]) == (4096, 131072)
    _, out, _ = run(capsys, "kv", "--model", "mistral-7b-v0.1", "--context", "32k", "--json")
    assert json.loads(out)["window_note"] == row["window_note"]
    assert "131,072 B/token inside the 4,096-token window" in row["window_note"]


def test_kv_context_past_model_maximum_is_said(capsys):
    # nvidia/Nemotron-H-8B-Base-8K: max_position_embeddings 8192.
    argv = ["kv", "--model", "nemotron-h-8b", "--context", "128k", "--kv-budget-gib", "40"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    assert "exceeds Nemotron-H 8B (Mamba2 hybrid)'s maximum context (8,192 tokens)" in out
    assert "8,192-token requests" in out
    code, out, _ = run(capsys, *argv, "--json")
    notes = json.loads(out)["notes"]
    assert len(notes) == 2 and "128,000 tokens" in notes[0]


def test_count_flags_name_what_they_count(capsys):
    code, _, err = run(capsys, "recommend", "--sessions", "-1")
    assert code == 2 and "a whole number of sessions in [1," in err and "tokens" not in err
    code, _, err = run(capsys, "kv", "--model", "llama-3.1-8b", "--tp", "0")
    assert code == 2 and "a whole number of GPUs in [1, 1,024]" in err


def test_kv_context_has_the_plans_range(capsys):
    from planner.plan import PlanInputs, field_range

    # PlanInputs.context_tokens: [1, 100,000,000]; kv took [0, 1e9] before.
    assert field_range(PlanInputs, "context_tokens") == "a whole number in [1, 100,000,000]"
    for bad in ("0", "100000001"):
        code, _, err = run(capsys, "kv", "--model", "llama-3.1-8b", "--context", bad)
        assert code == 2 and "[1, 100,000,000]" in err, err


def test_config_not_json_names_file_and_position(capsys, tmp_path):
    p = tmp_path / "passwd"
    p.write_text("root:x:0:0:root:/root:/bin/bash\n")
    code, _, err = run(capsys, "kv", "--config", str(p))
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert str(p) in err and "line 1, column 1" in err and "malformed JSON" not in err


def test_binary_config_and_plan_are_not_utf8_json(capsys, tmp_path):
    p = tmp_path / "blob.json"
    p.write_bytes(b"\xfe\xff\x00{\x00}")  # a UTF-16-BE byte-order mark: json.loads guessed utf-16-be
    for argv in (["kv", "--config", str(p)], ["plan", "--plan", str(p)]):
        code, _, err = run(capsys, *argv)
        assert code == 2 and "not UTF-8 JSON text" in err and str(p) in err and "codec" not in err


def test_numbers_in_messages_have_separators(capsys):
    code, _, err = run(capsys, "plan", "--hbm-gib", "1e12")
    assert code == 2 and "1,000,000,000,000 is not allowed" in err and "(0, 100,000]" in err
    code, _, err = run(capsys, "kv", "--model", "llama-3.1-8b", "--kv-budget-gib", "1e12")
    assert code == 2 and "[0, 1,000,000]" in err and "e+06" not in err


def test_hbm_far_above_the_device_is_kept_with_a_note(capsys):
    # H200 SXM reports 143,771 MiB (nvidia-smi) = 140.4 GiB; 100,000 GiB / 140.4 GiB = 712x.
    argv = ["plan", "--gpu", "h200", "--hbm-gib", "100000", "--model", "llama-3.1-8b", "--context", "128k"]
    code, out, _ = run(capsys, *argv)
    assert code == 0 and "712 x the NVIDIA H200 SXM's reported memory" in out
    code, out, _ = run(capsys, *argv, "--json")
    assert "712 x" in json.loads(out)["message"]
    code, out, _ = run(capsys, "plan", "--gpu", "h200", "--hbm-gib", "141", "--model", "llama-3.1-8b", "--json")
    assert " x the " not in json.loads(out)["message"]


def test_sessions_per_gpu_never_scientific(capsys):
    # 1M-token Llama 3.1 8B sessions on TP 8 with 100,000 GiB per GPU: a fractional per-GPU share past 1,000
    # (11,771 sessions per replica / 8 GPUs = 1,471.4) that "{:.3g}" printed as 1.47e+03.
    code, out, _ = run(capsys, "plan", "--gpu", "h200", "--hbm-gib", "100000", "--model", "llama-3.1-8b")
    assert code == 0
    line = next(x for x in out.splitlines() if "sessions per GPU:" in x)
    assert "e+" not in line and "1,471" in line


def test_parallelism_note_follows_the_model(capsys):
    from planner.plan import PlanInputs, plan

    # Llama 3.1 70B config.json: num_key_value_heads 8 (GQA), no MLA: TP 8 splits 8 heads, 1 per GPU.
    gqa = plan(PlanInputs(model_id="llama-3.1-70b", gpu_id="h200", gpus_per_replica=8)).parallelism_note
    assert "split the 8 KV heads (1 per GPU)" in gqa and "latent" not in gqa
    # DeepSeek-V3 config.json: kv_lora_rank 512 + qk_rope_head_dim 64, one latent per token (MLA): replicated.
    mla = plan(PlanInputs(model_id="deepseek-v3", gpu_id="h200", gpus_per_replica=8)).parallelism_note
    assert "replicate the one-head entries (MLA latent)" in mla and "KV heads" not in mla
    one = plan(PlanInputs(model_id="llama-3.1-8b", gpu_id="h200", gpus_per_replica=1,
                          weight_format="bf16")).parallelism_note
    assert "1 GPUs" not in one and "TP 1 ranks" not in one


def test_counts_agree_with_their_nouns(capsys):
    from planner.catalog.entries import get_model
    from planner.kv.models import how_computed
    from planner.plan.inputs import weights_setting

    lines = how_computed(get_model("llama-3.1-8b"), 1000, None, 1, 1)
    assert "per replica (1 GPU)" in lines[-1]
    assert weights_setting("llama-3.1-8b", "fp8", None, 1).endswith("/ 1 GPU")
    # 4 x B200 at dp, 1 replica of 4 GPUs; the check row "3 GPUs: 0 whole replicas".
    code, out, _ = run(capsys, "recommend", "--model", "llama-3.1-8b", "--sessions", "10", "--top", "20")
    assert code == 0 and "1 replicas of" not in out and "of 1," not in out and "1 whole replicas" not in out


def test_readme_llama_70b_example_states_its_hit_rate(capsys):
    # Llama 3.1 70B config.json: 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 327,680 B/token; TP 4: 81,920 B
    # per GPU. Usable KV per GPU on 4 x H100 is 36.8 GiB (the plan's note). Shared prefix 0: (128,000 + 1,000) x
    # 81,920 B = 9.84 GiB per session, floor(36.8 / 9.84) = 3. Shared prefix 0.5: prefix 64,000 x 81,920 B = 4.88 GiB
    # once, each session (64,000 + 1,000) x 81,920 B = 4.96 GiB: floor((36.8 - 4.88) / 4.96) = 6.
    from pathlib import Path

    readme = " ".join(Path(__file__).resolve().parents[1].joinpath("README.md").read_text().split())
    assert "128k with no prefix sharing (`--shared-prefix 0`): 3 sessions per replica under `tp`" in readme
    assert "at the default shared prefix 0.5, 6 under `tp`" in readme
    for shared, want in (("0", 3), ("0.5", 6)):
        code, out, _ = run(capsys, "plan", "--model", "llama-3.1-70b", "--gpu", "h100-sxm", "--gpus-per-replica",
                           "4", "--context", "128k", "--shared-prefix", shared, "--json")
        assert code == 0 and json.loads(out)["sessions_per_replica"] == want


# Llama 3.1 70B's maximum context: max_position_embeddings = 131,072 in its config.json
# (https://huggingface.co/meta-llama/Llama-3.1-70B/blob/main/config.json). A 1m context plus the default 1,000 output
# tokens (PlanInputs.output_tokens) is 1,001,000 tokens; 128k + 1,000 = 129,000 tokens fits.
PAST_70B = "Context + output (1,001,000 tokens) exceeds Llama 3.1 70B's maximum context (131,072 tokens)"


def test_recommend_says_the_model_cannot_serve_the_context(capsys):
    argv = ["recommend", "--model", "llama-3.1-70b", "--context", "1m", "--sessions", "1000", "--gpus", "b200"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    lines = out.splitlines()
    assert PAST_70B in lines[1] and "the model cannot serve it" in lines[1]  # at the top, before the first row
    code, out, _ = run(capsys, *argv, "--json")
    notes = json.loads(out)["notes"]
    assert code == 0 and len(notes) == 1 and PAST_70B in notes[0]
    code, out, _ = run(capsys, "recommend", "--model", "llama-3.1-70b", "--context", "128k", "--sessions", "1000",
                       "--gpus", "b200", "--json")
    assert code == 0 and json.loads(out)["notes"] == []


def test_frontier_says_which_contexts_the_model_cannot_serve(capsys):
    argv = ["frontier", "--model", "llama-3.1-70b", "--gpus", "h100-sxm,h200", "--contexts", "32k,128k",
            "--hit-rates", "0,0.5"]
    code, out, _ = run(capsys, *argv)
    assert code == 0
    notes = [line for line in out.splitlines() if line.startswith("note:")]
    # the plan's own 1,000,000-token row only: 32k and 128k (+ 1,000 output) fit in 131,072 tokens
    assert len(notes) == 1 and PAST_70B in notes[0] and "the model cannot serve it" in notes[0]
    code, out, _ = run(capsys, *argv, "--json")
    notes = json.loads(out)["notes"]
    assert code == 0 and len(notes) == 1 and PAST_70B in notes[0]
    code, out, _ = run(capsys, *argv[:-4], "--context", "128k", "--contexts", "32k", "--hit-rates", "0", "--json")
    assert code == 0 and json.loads(out)["notes"] == []
