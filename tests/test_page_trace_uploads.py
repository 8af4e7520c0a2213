"""Traces page (AppTest): prompts with a tokenizer, a KV-event stream with a metrics snapshot, and saved curves'
eviction policy, read as ``kvplan trace`` reads them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

pytest.importorskip("tokenizers", reason="the prompts extra (pip install 'kvplan[prompts]')")

from tests.test_trace_prompts import PROMPTS, WORDS  # noqa: E402  the CLI test's file and vocabulary

DATA = Path(__file__).parent / "data"


def _tokenizer_bytes(tmp_path) -> bytes:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tok = Tokenizer(WordLevel({w: i for i, w in enumerate(WORDS)}, unk_token="[UNK]"))
    tok.pre_tokenizer = Whitespace()
    tok.save(str(tmp_path / "tokenizer.json"))
    return (tmp_path / "tokenizer.json").read_bytes()


def _metric(at, label_start):
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def _upload_page(kind):
    at = AppTest.from_file("../app.py", default_timeout=90)
    at.run()
    at.switch_page("kvplan_app/views/traces.py")
    at.run()
    at.selectbox(key="traces_sample").set_value("Upload a trace").run()
    at.radio(key="traces_upload_kind").set_value(kind).run()
    assert not at.exception, at.exception
    return at


def test_prompts_and_tokenizer_give_the_cli_tests_hit_rates(tmp_path):
    at = _upload_page("prompts")
    captions = " ".join(c.value for c in at.caption)
    assert "LoRA adapters, images" in captions        # what the hash ignores, said before any upload
    at.number_input(key="traces_prompt_block_tokens").set_value(4).run()
    rows = "\n".join(json.dumps(r) for r in PROMPTS).encode()
    at.file_uploader(key="traces_upload").set_value(("prompts.jsonl", rows, "application/json")).run()
    assert any("tokenizer.json" in i.value for i in at.info)     # waits for the tokenizer
    at.file_uploader(key="traces_tokenizer_upload").set_value(
        ("tokenizer.json", _tokenizer_bytes(tmp_path), "application/json")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    # tests/test_trace_prompts.py derives them by hand: 4-token blocks, 3 of 7 block lookups hit, 12 of 31
    # prompt tokens (the cache at the plan's usable KV holds all 4 distinct blocks: unlimited).
    assert _metric(at, "Requests") == "4"
    assert _metric(at, "Block hit rate") == f"{3 / 7:.1%}" == "42.9%"
    assert _metric(at, "Token hit rate") == f"{12 / 31:.1%}" == "38.7%"
    captions = " ".join(c.value for c in at.caption)
    assert "Eviction: LRU, tail blocks evicted first (vLLM)" in captions
    assert "Fields ignored: lora" in captions.replace("\\", "")   # the row field ignored, named in the notes


def test_kv_events_beside_the_engines_counters():
    at = _upload_page("kv-events")
    at.file_uploader(key="traces_upload").set_value(
        ("events.jsonl", (DATA / "vllm_kv_events.jsonl").read_bytes(), "application/json")).run()
    at.file_uploader(key="traces_metrics_upload").set_value(
        ("metrics.prom", (DATA / "vllm_metrics.prom").read_bytes(), "text/plain")).run()
    assert not at.exception, at.exception
    assert not at.error, [e.value for e in at.error]
    # tests/test_trace_kv_events.py: the replay hits 4 of 9 blocks (16 of 36 tokens); the counters 40 of 100 tokens
    assert _metric(at, "Engine's counters") == "40.0%"
    assert _metric(at, "Replay, unlimited cache") == "44.4%" == _metric(at, "Replay, usable KV")
    assert _metric(at, "Token hit rate") == "44.4%"


def test_saved_curves_show_their_policy(tmp_path):
    from planner.cli import main

    path = tmp_path / "curve.json"
    assert main(["trace", "sample:synthetic", "--sweep", "--eviction-policy", "sglang", "--save", str(path)]) == 0
    at = AppTest.from_file("../app.py", default_timeout=90)
    at.run()
    at.switch_page("kvplan_app/views/traces.py")
    at.run()
    at.selectbox(key="traces_sample").set_value("Load a saved curve").run()
    at.file_uploader(key="traces_curve_upload").set_value(("curve.json", path.read_bytes(), "application/json")).run()
    assert not at.exception, at.exception
    assert "Eviction: LRU over radix-tree leaves (SGLang). Blocks of 512 tokens." in [c.value for c in at.caption]
    old = json.loads(path.read_text())
    old["kvplan_curve"] = 1
    del old["settings"]["eviction_policy"]
    at.file_uploader(key="traces_curve_upload").set_value(("old.json", json.dumps(old).encode(), "x")).run()
    assert not at.exception and not at.error
    assert any("not recorded (a version-1 curve file" in c.value for c in at.caption)


def test_a_bad_tokenizer_is_one_error_naming_the_upload(tmp_path):
    at = _upload_page("prompts")
    rows = "\n".join(json.dumps(r) for r in PROMPTS).encode()
    at.file_uploader(key="traces_upload").set_value(("prompts.jsonl", rows, "application/json")).run()
    at.file_uploader(key="traces_tokenizer_upload").set_value(("tokenizer.json", b"{}", "application/json")).run()
    assert not at.exception, at.exception
    errors = [e.value.replace("\\", "") for e in at.error]    # shown as text: markdown escaped
    assert len(errors) == 1 and "tokenizer" in errors[0] and "'tokenizer.json'" in errors[0], errors
    assert "/" not in errors[0].split("is not allowed")[0]    # no server path
