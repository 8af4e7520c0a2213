"""Model page (AppTest): renders, reacts to the KV format, keeps the previous model on a bad config."""

import json

from streamlit.testing.v1 import AppTest


def _metric(at, label_start):
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def _model_page(gpus: str = "1"):
    """The Model page, from a plan link of ``gpus`` GPUs per replica (the page starts with TP = that)."""
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.query_params["gpus"] = gpus
    at.run()
    at.switch_page("kvplan_app/views/model.py")
    at.run()
    assert not at.exception, at.exception
    return at


# Llama-3.1-8B geometry (32 layers, 8 KV heads, head_dim 4096 / 32 = 128), as in its config.json.
LLAMA_8B_CONFIG = {
    "model_type": "llama", "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
    "hidden_size": 4096, "max_position_embeddings": 131072, "torch_dtype": "bfloat16",
}


def test_renders_v41_default():
    at = _model_page()
    # 890 B/token x 1,000,000 tokens = 890,000,000 B = 0.89 GB = 0.829 GiB (docs/sources.md)
    assert _metric(at, "KV per GPU (pool)") == "0.89 GB (0.829 GiB)"
    assert any("breakdown" in s.value.lower() for s in at.subheader)
    assert len(at.dataframe) >= 1


def test_starts_from_the_plan():
    at = AppTest.from_file("../app.py", default_timeout=60)
    for key, value in {"model": "llama-3.1-8b", "gpus": "2", "fmt": "fp8", "ctx": "128000", "gpu": "h200",
                       "util": "1", "reserve": "0", "weights": "0", "hbm": "100"}.items():
        at.query_params[key] = value
    at.run()
    at.switch_page("kvplan_app/views/model.py").run()
    assert not at.exception, at.exception
    assert at.selectbox(key="model_catalog_id").value == "llama-3.1-8b"
    assert at.selectbox(key="model_kv_format").value == "fp8"
    assert at.number_input(key="model_tp").value == 2
    assert at.text_input(key="model_context").value == "128,000"
    # usable KV = 100 GiB x utilization 1 - weights 0 - reserve 0 = 100 GiB: the budget, not a fixed 40 GiB
    assert at.session_state["model_kv_budget_gib"] == 100.0


def test_changing_format_changes_total():
    at = _model_page()
    at.selectbox(key="model_catalog_id").set_value("llama-3.1-8b").run()
    at.text_input(key="model_context").set_value("2048").run()
    # bf16: 131,072 B/token x 2,048 = 268,435,456 B = 0.268 GB (0.25 GiB)
    assert _metric(at, "KV per GPU (pool)") == "0.268 GB (0.25 GiB)"
    at.selectbox(key="model_kv_format").set_value("fp8").run()
    assert not at.exception
    # fp8: half of bf16 = 134,217,728 B = 0.134 GB (0.125 GiB)
    assert _metric(at, "KV per GPU (pool)") == "0.134 GB (0.125 GiB)"


def test_malformed_config_shows_error_and_keeps_previous_model():
    at = _model_page()
    at.radio(key="model_source").set_value("Import config.json").run()
    at.text_area(key="model_config_text").set_value(json.dumps(LLAMA_8B_CONFIG)).run()
    at.text_input(key="model_context").set_value("2048").run()
    assert not at.exception
    good = _metric(at, "KV per GPU (pool)")
    assert good == "0.268 GB (0.25 GiB)"  # 131,072 B/token x 2,048 in BF16 (defaulted)
    assert any("defaulted" in w.value.lower() for w in at.warning)
    at.text_area(key="model_config_text").set_value('{"num_hidden_layers": 32,').run()
    assert not at.exception
    assert any("JSON" in e.value.replace("\\", "") for e in at.error)
    assert _metric(at, "KV per GPU (pool)") == good


def test_contradictory_config_names_the_field():
    at = _model_page()
    at.radio(key="model_source").set_value("Import config.json").run()
    bad = dict(LLAMA_8B_CONFIG, num_key_value_heads=5)  # 5 does not divide 32 heads
    at.text_area(key="model_config_text").set_value(json.dumps(bad)).run()
    assert not at.exception
    # messages are Markdown-escaped (shown as text): compare without the backslashes
    assert any("num_key_value_heads" in e.value.replace("\\", "") for e in at.error)


def test_engine_and_capacity_blocks_render_for_llama():
    at = _model_page()
    at.selectbox(key="model_catalog_id").set_value("llama-3.1-8b").run()
    at.text_input(key="model_max_model_len").set_value("20000").run()
    at.text_input(key="model_kv_budget_gib_text").set_value("3.8125").run()
    assert not at.exception
    # 3.8125 GiB // (16 x 4,096 B x 32 layers = 2 MiB) = 1,952 blocks (github.com/vllm-project/vllm/issues/10517)
    assert _metric(at, "KV blocks") == "1,952"
    assert _metric(at, "GPU KV cache size") == "31,232 tokens"
    assert _metric(at, "Maximum concurrency for 20,000") == "1.56x"


def test_inputs_go_to_the_link_and_tp_changes_per_gpu_bytes():
    at = _model_page()
    at.selectbox(key="model_catalog_id").set_value("llama-3.1-70b").run()
    at.text_input(key="model_context").set_value("2048").run()
    # TP 1: 327,680 x 2,048 = 671,088,640 B = 0.671 GB (0.625 GiB)
    assert _metric(at, "KV per GPU (pool)") == "0.671 GB (0.625 GiB)"
    at.number_input(key="model_tp").set_value(32).run()
    assert not at.exception
    # TP 32: 1 head per GPU: 40,960 x 2,048 = 83,886,080 B = 0.0839 GB (0.0781 GiB); per replica x 32
    assert _metric(at, "KV per GPU (pool)") == "0.0839 GB (0.0781 GiB)"
    assert _metric(at, "KV per replica (32 GPUs)") == "2.68 GB (2.5 GiB)"
    assert at.query_params["m_tp"] == ["32"] or at.query_params["m_tp"] == "32"
    assert at.query_params["m_model"] in (["llama-3.1-70b"], "llama-3.1-70b")


def test_hybrid_shows_its_state_and_layer_pattern():
    # Nemotron-H 8B at the default context: 24 Mamba2 layers x 4,255,744 B = 102,137,856 B of state
    # (tests/test_hybrids.py derives it), shown as its own figure, with the per-layer pattern.
    at = _model_page()
    at.selectbox(key="model_catalog_id").set_value("nemotron-h-8b").run()
    assert not at.exception, at.exception
    assert _metric(at, "State per session").startswith("0.102 GB")
    assert any("M-M-M-MF" in c.value for c in at.caption)


def test_state_sentence_only_for_models_with_state():
    # DeepSeek V3 (MLA) has no Mamba or linear-attention layer: the caption said "0 B in the pool (Mamba ...)"
    at = _model_page()
    for model, has_state in (("deepseek-v3", False), ("nemotron-h-8b", True)):
        at.selectbox(key="model_catalog_id").set_value(model).run()
        assert not at.exception, at.exception
        text = " ".join(c.value for c in at.caption)
        assert ("in the pool (Mamba" in text) is has_state, model
        assert ("No per-session state outside the KV" in text) is (not has_state), model


def _plan_link_then_model_page(params):
    at = AppTest.from_file("../app.py", default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    at.switch_page("kvplan_app/views/model.py").run()
    assert not at.exception, at.exception
    return at


def test_says_the_plan_gave_its_inputs_and_offers_its_own():
    at = _plan_link_then_model_page({"model": "llama-3.1-70b", "gpus": "4", "ctx": "32000", "gpu": "h100-sxm"})
    notice = " ".join(i.value for i in at.info)
    assert "start from the Plan page" in notice and "TP 4" in notice and "H100" in notice, notice
    assert "weights leave" not in notice  # the same model: its own leftover memory
    at.selectbox(key="model_catalog_id").set_value("qwen3-8b").run()
    notice = " ".join(i.value for i in at.info)
    # the budget is the 70B's leftover memory: said in words, never silently a Qwen3 8B figure
    assert "That budget is what Llama 3.1 70B's weights leave, not Qwen3 8B's." in notice.replace("\\", ""), notice
    at.button(key="model_own_defaults").click().run()
    assert not at.exception, at.exception
    assert at.number_input(key="model_tp").value == 1
    assert at.number_input(key="model_pp").value == 1
    assert at.session_state["model_kv_budget_gib"] == 40.0
    # Qwen3 8B config.json: max_position_embeddings 40960 (planner/data/models/qwen3-8b.config.json, from its
    # Hugging Face repository): the page's own context is the model's maximum
    assert at.text_input(key="model_context").value == "40,960"
    assert not any("start from the Plan page" in i.value for i in at.info)
    assert any("own defaults" in c.value for c in at.caption)


def test_imported_config_goes_to_plan_frontier_and_recommend():
    # 100 GiB of HBM, all of it usable, no reserve, one GPU, 128,000-token sessions, no prefix sharing
    at = _plan_link_then_model_page({"gpu": "custom", "hbm": "100", "util": "1", "reserve": "0", "gpus": "1",
                                     "ctx": "128000", "hit": "0", "model": "llama-3.1-8b"})
    at.radio(key="model_source").set_value("Import config.json").run()
    at.text_area(key="model_config_text").set_value(json.dumps(LLAMA_8B_CONFIG)).run()
    assert at.button(key="model_use_on_plan").disabled  # no weights typed yet: a config has no parameter count
    at.text_input(key="model_weights_gib_text").set_value("16.0").run()
    at.button(key="model_use_on_plan").click().run()
    assert not at.exception, at.exception
    assert any("uploaded: pasted config.json" in s.value.replace("\\", "") for s in at.success)
    at.switch_page("kvplan_app/views/plan.py").run()
    assert not at.exception, at.exception
    box = at.selectbox(key="plan_model_id")
    assert box.value.startswith("uploaded-")
    assert "uploaded: pasted config.json" in box.options
    # By hand: Llama-3.1-8B geometry in BF16 = 2 x 32 layers x 8 heads x 128 x 2 B = 131,072 B/token;
    # a 128,000-token session = 16,777,216,000 B; usable = (100 - 16) GiB = 90,194,313,216 B;
    # floor(90,194,313,216 / 16,777,216,000) = floor(5.376) = 5 sessions per GPU.
    assert any(m.value == "5" for m in at.metric), [(m.label, m.value) for m in at.metric]
    assert any("cannot carry" in w.value for w in at.sidebar.warning)
    at.switch_page("kvplan_app/views/frontier.py").run()
    assert not at.exception, at.exception
    assert any("uploaded: pasted config.json" in c.value.replace("\\", "") for c in at.caption)  # escaped Markdown
    at.switch_page("kvplan_app/views/recommend.py").run()
    assert not at.exception, at.exception
    assert any("uploaded: pasted config.json" in c.value.replace("\\", "") for c in at.caption)  # escaped Markdown


def test_a_link_naming_an_uploaded_config_is_refused_elsewhere():
    # a fresh session has no upload: the link's model is refused with a warning naming it, the default is shown
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.query_params["model"] = "uploaded-0123456789ab"
    at.run()
    assert not at.exception, at.exception
    assert any("uploaded-0123456789ab" in w.value.replace("\\", "") for w in at.warning)
    assert at.selectbox(key="plan_model_id").value == "deepseek-v4.1-flash"


def test_imported_hybrids_zamba2_plamo2_kimi_linear():
    # The registry's golden configs (tests/test_registry.py derives each figure by hand from vLLM's source), pasted
    # into the Model page at 2,048 tokens, BF16 (defaulted):
    # Zamba2-2.7B: 184,320 B/token x 2,048 + 37,089,792 B of Mamba2 state = 414,577,152 B = 0.415 GB (0.386 GiB);
    # PLaMo 2 1B: 4,096 B/token x 2,048 (the window) + 4,390,912 B = 12,779,520 B = 0.0128 GB (0.0119 GiB);
    # tiny-random Kimi-Linear: 192 B/token x 2,048 + 420,864 B of KDA state = 814,080 B = 0.000814 GB (0.000758 GiB).
    from pathlib import Path
    configs = Path(__file__).resolve().parent / "data" / "configs"
    zamba2 = json.loads((configs / "zamba2-2.7b-instruct-v2.partial.config.json").read_text())
    zamba2.update({"num_attention_heads": 32, "num_hidden_layers": 54, "num_key_value_heads": 32, "num_mem_blocks": 2})
    plamo2 = {**json.loads((configs / "plamo-2-1b.config.json").read_text()), "architectures": ["Plamo2ForCausalLM"]}
    kimi = json.loads((configs / "tiny-random-kimi-linear.partial.config.json").read_text())
    at = _model_page()
    at.radio(key="model_source").set_value("Import config.json").run()
    at.text_input(key="model_context").set_value("2048").run()
    for config, pool in ((zamba2, "0.415 GB (0.386 GiB)"), (plamo2, "0.0128 GB (0.0119 GiB)"),
                         (kimi, "0.000814 GB (0.000758 GiB)")):
        at.text_area(key="model_config_text").set_value(json.dumps(config)).run()
        assert not at.exception, at.exception
        assert not at.error, [e.value for e in at.error]
        assert _metric(at, "KV per GPU (pool)") == pool


def test_state_rows_have_no_per_token_figure():
    # MiniMax-M1 (tests/data/configs): 70 lightning-attention layers keep one state per sequence (vLLM
    # linear_attention_state_shape); that state is bytes per session, so the per-token table shows none for it.
    from pathlib import Path
    config = (Path(__file__).parent / "data" / "configs" / "minimax-m1.config.json").read_text()
    at = _model_page()
    at.radio(key="model_source").set_value("Import config.json").run()
    at.text_area(key="model_config_text").set_value(config).run()
    assert not at.exception and not at.error
    per_token = next(d.value for d in at.dataframe if "B per token (while growing)" in d.value.columns)
    state = per_token[per_token["Group"] == "lightning attention state"]
    assert len(state) == 1 and state["B per token (while growing)"].isna().all()
    assert state["Capped or growing"].tolist() == ["per session (constant)"]
    full = per_token[per_token["Group"] == "full attention"]
    assert full["B per token (while growing)"].tolist() == [40_960]  # 10 layers x 2 x 8 x 128 x 2 B


def test_a_link_with_model_inputs_is_not_credited_to_the_plan():
    # /model?m_tp=1&m_ctx=128000 with the default plan (8 GPUs per replica, 1,000,000 tokens): the boxes take the
    # link's TP 1 and 128,000 tokens, and the banner says so instead of claiming the plan's TP 8 and context
    at = AppTest.from_file("../app.py", default_timeout=60)
    for key, value in {"page": "model", "m_tp": "1", "m_ctx": "128000"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    assert at.number_input(key="model_tp").value == 1
    notice = " ".join(i.value for i in at.info)
    assert "start from the share link" in notice and "TP 8" not in notice and "1,000,000" not in notice, notice


def test_an_imported_config_with_derivable_weights_goes_to_the_plan_without_typing_them():
    # Llama-3.1-8B's full config.json (the catalogue's copy): its BF16 weights derive class by class,
    # 6,979,321,856 linear weights x 2 B + 2 x 128,256 x 4,096 x 2 B + norms 532,480 + rotary 33,554,432
    # = 16,094,076,928 B = 14.99 GiB (tests/test_checkpoint_weights.py; vLLM logs "Model loading took 14.99 GiB")
    from pathlib import Path
    config = (Path(__file__).resolve().parents[1] / "planner" / "data" / "models" / "llama-3.1-8b.config.json")
    at = _plan_link_then_model_page({"gpus": "1"})
    at.radio(key="model_source").set_value("Import config.json").run()
    at.text_area(key="model_config_text").set_value(config.read_text()).run()
    box = at.text_input(key="model_weights_gib_text")
    assert box.value in ("", None) and box.placeholder == "from the config: 14.99 GiB"
    assert not at.button(key="model_use_on_plan").disabled
    at.button(key="model_use_on_plan").click().run()
    assert not at.exception, at.exception
    assert any("The plan now uses" in s.value for s in at.success)
