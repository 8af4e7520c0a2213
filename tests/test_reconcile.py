"""Engine logs: the engines' own numbers come back exactly, kvplan's prediction beside them, the cause named.

Logs are excerpts from public threads (tests/data/logs/SOURCES.md). Golden
values are derived by hand in the comments; none is recomputed with the code.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from planner.catalog.entries import get_model
from planner.cli import main
from planner.engines.logs import MAX_LOG_BYTES, parse_engine_log
from planner.errors import PlanInputError
from planner.engines.reconcile import HYBRID_QUIRK, pair_summary, reconcile

LOGS = Path(__file__).parent / "data" / "logs"


def _log(name: str):
    return parse_engine_log((LOGS / name).read_text(encoding="utf-8"))


def _row(rec, quantity: str):
    return next(r for r in rec.rows if r.quantity.startswith(quantity))


# --- parsing: numbers as printed -------------------------------------------------


def test_vllm_21348_numbers_back_exactly():
    log = _log("vllm-21348-qwen3-235b-a22b-tp4.txt")
    assert log.engine == "vllm"
    assert log.first("gpu_kv_cache_tokens").value == 178_880  # "GPU KV cache size: 178,880 tokens"
    budget = log.first("kv_budget")
    assert budget.value == 8.11 and budget.printed == "8.11 GiB"
    # 8.11 GiB printed with two decimals: [8.105, 8.115] x 2**30 = [8,702,677,483.5, 8,713,414,901.8] B
    assert budget.bytes_lo == 8_702_677_483 and budget.bytes_hi == 8_713_414_902
    assert log.first("tp").value == 4 and log.first("kv_connector").value == "LMCacheConnectorV1"


def test_sglang_21348_numbers_back_exactly():
    log = _log("sglang-21348-qwen3-235b-a22b-tp4.txt")
    assert log.engine == "sglang"
    assert log.first("sglang_tokens").value == 367_404
    assert log.first("k_size").printed == "8.23 GB" and log.first("v_size").value == 8.23
    assert log.first("mem_fraction_static").value == 0.93 and log.first("tp").value == 4
    assert len(log.all("tp")) == 1  # two patterns on one line give one reading


def test_vllm_v0_blocks_and_concurrency():
    log = _log("vllm-10517-llama-3.1-8b-29k.txt")
    assert log.first("num_gpu_blocks").value == 1_478 and log.first("num_cpu_blocks").value == 2_048
    assert log.first("max_concurrency").value == 0.82 and log.first("concurrency_tokens").value == 29_000
    assert log.first("error_kv_tokens").value == 23_648 and log.first("kv_budget").printed == "2.89 GiB"


def test_sglang_new_format_with_dtype():
    log = _log("sglang-18263-qwen3-30b-a3b.txt")
    assert log.first("sglang_kv_dtype").value == "bfloat16" and log.first("sglang_tokens").value == 1_669_816
    assert log.first("k_size").value == 76.44


def test_unparsed_lines_listed_never_guessed():
    log = _log("vllm-12569-llama-3.1-70b-w8a8.txt")
    unread = dict(log.unread)
    assert "Using cache directory" in unread[4]  # mentions "cache", matches no pattern: listed verbatim
    assert 5 not in unread  # "Dynamo bytecode transform time" has no KV word: ignored
    assert log.first("num_gpu_blocks").value == 1_381


def test_log_is_size_capped_and_never_executed():
    with pytest.raises(PlanInputError, match="log"):
        parse_engine_log("x" * (MAX_LOG_BYTES + 1))
    with pytest.raises(PlanInputError):
        parse_engine_log(b"GPU KV cache size: 1 tokens")  # bytes, not text
    # a non-default args dict is matched key by key, never evaluated
    log = parse_engine_log("non-default args: {'max_model_len': 4096, 'model': __import__('os').system('x')}")
    assert log.first("max_model_len").value == 4096 and log.first("model") is None
    # very long lines are cut, binary noise does not crash
    log = parse_engine_log("\x00\x1b[31m" + "9" * 100_000 + " GPU KV cache size: 5 tokens\n")
    assert log.first("gpu_kv_cache_tokens") is None


def test_mixed_and_unknown_logs_refused():
    mixed = parse_engine_log("GPU KV cache size: 16 tokens\nKV Cache is allocated. #tokens: 5, K size: 1 GB, V size: 1 GB")
    assert mixed.engine == "mixed"
    with pytest.raises(PlanInputError, match="one engine per log"):
        reconcile(mixed, get_model("llama-3.1-8b"))
    with pytest.raises(PlanInputError):
        reconcile(parse_engine_log("hello"), get_model("llama-3.1-8b"))


# --- reconciliation ----------------------------------------------------------------


def test_qwen3_235b_tp4_pair_same_bytes_per_token_only_budgets_differ():
    vllm = reconcile(_log("vllm-21348-qwen3-235b-a22b-tp4.txt"))
    sgl = reconcile(_log("sglang-21348-qwen3-235b-a22b-tp4.txt"))
    # Qwen3-235B-A22B: 94 layers, 4 KV heads, head_dim 128, bf16; TP4 -> one KV head per GPU:
    # 2 x 94 x 1 x 128 x 2 = 48,128 B per token per GPU (model named in both logs, TP 4 from the commands)
    assert vllm.model_id == sgl.model_id == "qwen3-235b-a22b"
    assert vllm.kv_bytes_per_token_per_gpu == sgl.kv_bytes_per_token_per_gpu == 48_128
    # SGLang: 367,404 x 48,128 = 17,682,419,712 B = 16.468 GiB; K = V = 8.234 GiB, printed "8.23 GB" (GiB)
    assert _row(sgl, "KV pool per GPU").status == "match"
    assert any("GB for GiB" in c for c in sgl.causes) and any("K and V separately" in c for c in sgl.causes)
    summary = pair_summary(vllm, sgl)
    assert summary.startswith("Both engines store 48,128 B per token per GPU; only the budgets differ")
    # 367,404 / 178,880 = 2.054 -> "2.05x"
    assert "178,880" in summary and "367,404" in summary and "(2.05x)" in summary
    # vLLM: "8.11 GiB" is [8.105, 8.115] GiB = [8,702,677,483, 8,713,414,902] B; // (94 x 16 x 512 B = 770,048 B)
    # = 11,301..11,315 blocks = 180,816..181,040 tokens; it reports 178,880 = 11,180 blocks: the residual
    # 8.11 GiB - 178,880 x 48,128 B = 98,909,552 B (0.0921 GiB, 1.1 %) is reported as unexplained, not hidden
    tokens = _row(vllm, "GPU KV cache size")
    assert tokens.kvplan == "180,816 to 181,040"
    assert tokens.status == "differs" and "does not explain" in tokens.cause and "0.0921 GiB" in tokens.cause
    assert vllm.best_fit_format in ("native", "bf16")  # fp8 would be 24,064 B: twice the tokens


def test_llama_31_8b_10517_blocks_and_concurrency_match():
    rec = reconcile(_log("vllm-10517-llama-3.1-8b-20k.txt"), get_model("llama-3.1-8b"))
    # Llama-3.1-8B: 2 x 32 x 8 x 128 x 2 = 131,072 B/token; block = 16 x 131,072 = 2,097,152 B.
    # 3.81 GiB printed: [3.805, 3.815] GiB / 2 MiB = [1,948.2, 1,953.3] -> 1,948..1,953 blocks; engine 1,952
    assert rec.kv_bytes_per_token_per_gpu == 131_072
    assert _row(rec, "GPU blocks").status == "match" and _row(rec, "GPU blocks").kvplan == "1,948 to 1,953"
    # 1,952 blocks / ceil(20,000 / 16) = 1,250 blocks per request = 1.5616 -> "1.56x"
    conc = _row(rec, "Maximum concurrency")
    assert conc.status == "match" and "1.56x" in conc.kvplan and "not a cap" in conc.cause
    # "Loading model weights took 14.9888 GB" is bytes / 2**30: GiB labelled GB
    assert any("GiB labelled GB" in c for c in rec.causes)
    assert any("re-profiles" in c for c in rec.causes)  # the budget moves with max_model_len


def test_10517_29k_error_line_reconciled():
    rec = reconcile(_log("vllm-10517-llama-3.1-8b-29k.txt"), get_model("llama-3.1-8b"))
    # 1,478 blocks x 16 = 23,648 tokens, the figure of the start-up error
    assert _row(rec, "tokens the KV cache can store").status == "match"
    # 1,478 / ceil(29,000 / 16) = 1,478 / 1,813 = 0.815 -> "0.82x"
    assert _row(rec, "Maximum concurrency").status == "match"


def test_llama_70b_concurrency_from_blocks():
    rec = reconcile(_log("vllm-12569-llama-3.1-70b-w8a8.txt"), get_model("llama-3.1-70b"))
    # 1,381 blocks / (2,048 / 16 = 128) = 10.789 -> "10.79x"; 2 x 80 x 8 x 128 x 2 = 327,680 B/token
    assert rec.kv_bytes_per_token_per_gpu == 327_680
    assert _row(rec, "Maximum concurrency").status == "match"
    # 1,381 x 16 x 327,680 = 7,240,417,280 B = 7.24 GB (6.74 GiB)
    assert "7.24 GB (6.74 GiB)" in _row(rec, "GPU blocks").kvplan


def test_hybrid_token_count_quirk_named_without_a_model():
    rec = reconcile(_log("vllm-40691-qwen3.5-hybrid.txt"))
    # 290,864 / 32,768 = 8.88x, but the log says 33.04x
    quirk = _row(rec, "GPU KV cache size / max_model_len")
    assert quirk.engine == "8.88x" and quirk.status == "differs" and HYBRID_QUIRK in rec.causes
    assert any("--model" in x for x in rec.refusals)


def test_consistent_concurrency_is_not_called_a_quirk():
    rec = reconcile(_log("vllm-dynamo-3643-hybrid-manager-off.txt"))
    # 739,536 / 430,000 = 1.7199 -> "1.72x": consistent
    assert HYBRID_QUIRK not in rec.causes
    assert any("hybrid KV cache manager is off" in c for c in rec.causes)


def test_concurrency_line_alone_says_not_a_cap():
    rec = reconcile(_log("vllm-8031-concurrency.txt"), get_model("llama-3.1-8b"))
    assert any("not a cap" in c for c in rec.causes)


def test_unknown_kv_dtype_refused_not_guessed():
    log = parse_engine_log("kv_cache_dtype=weird8\nGPU KV cache size: 16 tokens")
    rec = reconcile(log, get_model("llama-3.1-8b"))
    assert rec.kv_bytes_per_token_per_gpu is None and any("weird8" in x for x in rec.refusals)


def test_fp8_kv_dtype_from_log():
    log = parse_engine_log("vllm serve x --kv-cache-dtype fp8\nAvailable KV cache memory: 1.00 GiB\n"
                           "GPU KV cache size: 16,384 tokens")
    rec = reconcile(log, get_model("llama-3.1-8b"))
    # fp8: 2 x 32 x 8 x 128 x 1 = 65,536 B/token; 1 GiB / (16 x 65,536) = 1,024 blocks = 16,384 tokens
    assert rec.kv_bytes_per_token_per_gpu == 65_536
    assert _row(rec, "GPU KV cache size").status == "match"


# --- CLI ---------------------------------------------------------------------------


def test_cli_pair(capsys):
    rc = main(["reconcile", str(LOGS / "vllm-21348-qwen3-235b-a22b-tp4.txt"),
               str(LOGS / "sglang-21348-qwen3-235b-a22b-tp4.txt")])
    out = capsys.readouterr().out
    assert rc == 0 and "Both engines store 48,128 B per token per GPU" in out


def test_cli_bad_inputs(capsys, tmp_path):
    assert main(["reconcile", str(tmp_path / "missing.txt")]) == 2
    big = tmp_path / "big.txt"
    big.write_bytes(b"x" * (MAX_LOG_BYTES + 1))
    assert main(["reconcile", str(big)]) == 2
    assert main(["reconcile", str(LOGS / "vllm-8031-concurrency.txt"), "--model", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 3 and "kvplan: error:" in err


def test_cli_config_and_json(capsys):
    config = Path(__file__).parents[1] / "planner" / "data" / "models" / "qwen3-235b-a22b.config.json"
    rc = main(["reconcile", str(LOGS / "sglang-21348-qwen3-235b-a22b-tp4.txt"), "--config", str(config), "--json"])
    out = json.loads(capsys.readouterr().out)
    # the same 94 layers x 4 KV heads x 128 from an uploaded config.json: 48,128 B per token per GPU at TP 4
    assert rc == 0 and out["logs"][0]["kv_bytes_per_token_per_gpu"] == 48_128 and out["summary"] is None
    assert main(["reconcile", str(LOGS / "vllm-8031-concurrency.txt"), "--tp", "0"]) == 2


def test_tp_override_changes_the_prediction():
    rec = reconcile(_log("sglang-21348-qwen3-235b-a22b-tp4.txt"), tp=8)
    # TP 8 > 4 KV heads: each rank still holds one head (replicated), 2 x 94 x 1 x 128 x 2 = 48,128 B
    assert rec.kv_bytes_per_token_per_gpu == 48_128 and rec.settings[1].source == "given"
    assert rec.settings[0].source.startswith("matched from line 1 of the log")
    rec = reconcile(_log("sglang-21348-qwen3-235b-a22b-tp4.txt"), tp=2)
    # TP 2: two heads per rank, 96,256 B; the log's K+V then disagrees (half the tokens would fit)
    assert rec.kv_bytes_per_token_per_gpu == 96_256 and _row(rec, "KV pool per GPU").status == "differs"


def test_one_line_per_rank_named_not_averaged():
    # the Dynamo thread's log prints one "GPU KV cache size" per rank: 739,536 and 735,440 tokens
    log = parse_engine_log("GPU KV cache size: 739,536 tokens\nGPU KV cache size: 735,440 tokens\n"
                           "Maximum concurrency for 430,000 tokens per request: 1.72x")
    rec = reconcile(log)
    assert any("printed 2 times" in c and "739,536, 735,440" in c for c in rec.causes)
    assert _row(rec, "GPU KV cache size").engine == "739,536"
