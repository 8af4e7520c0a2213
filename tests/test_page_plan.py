"""Plan page (AppTest): renders, reacts to the shared-prefix and hit-rate sliders, keeps the last valid plan."""

from streamlit.testing.v1 import AppTest


def _metric(at, label_start):
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def _app():
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.run()
    assert not at.exception
    return at


def test_renders_v41_at_one_million_tokens():
    at = _app()
    assert _metric(at, "KV per GPU at 1,000,000 tokens") == "0.89 GB (0.829 GiB)"
    # tensor-parallel attention (the default): V4.1's one-head entries are replicated on the 8 TP ranks, so the
    # replica holds 143 sessions (test_plan_golden.py), 143 / 8 = 17.875 per GPU; the page says which it assumed
    assert _metric(at, "Sessions per replica (TP attention)") == "143"
    assert _metric(at, "Sessions per GPU (TP attention)") == "17.9"
    assert any("tensor-parallel attention" in c.value for c in at.caption)


def test_data_parallel_attention_is_said_next_to_the_figures():
    at = _app()
    at.selectbox(key="plan_attention_parallelism").set_value("dp").run()
    assert not at.exception
    assert _metric(at, "Sessions per GPU (DP attention)") == "143"
    assert _metric(at, "Sessions per replica (DP attention)") == "1,144"  # 143 x 8
    assert any("data-parallel attention" in c.value for c in at.caption)


def test_raising_the_shared_prefix_raises_sessions_and_the_hit_rate_shortens_ttft():
    at = _app()
    before = int(_metric(at, "Sessions per replica").replace(",", ""))
    at.slider(key="plan_shared_prefix").set_value(0.9).run()
    assert not at.exception
    after = int(_metric(at, "Sessions per replica").replace(",", ""))
    assert after > before
    ttft = at.session_state["plan_inputs"]
    from planner.plan import plan

    slow = plan(ttft).ttft_s
    at.slider(key="plan_hit_rate").set_value(0.9).run()
    assert int(_metric(at, "Sessions per replica").replace(",", "")) == after  # the hit rate holds no memory
    assert plan(at.session_state["plan_inputs"]).ttft_s < slow


def test_bad_context_shows_error_and_keeps_last_plan():
    at = _app()
    at.slider(key="plan_hit_rate").set_value(0.8).run()
    good = _metric(at, "Sessions per GPU")
    at.text_input(key="plan_context_tokens").set_value("a lot").run()
    assert not at.exception
    assert any("context_tokens" in e.value for e in at.error)
    assert _metric(at, "Sessions per GPU") == good


def test_hbm_slider_changes_usable_kv():
    at = _app()
    before = _metric(at, "Usable KV")
    at.slider(key="plan_hbm_gib").set_value(200.0).run()
    assert not at.exception
    assert _metric(at, "Usable KV") != before


def test_switching_model_drops_a_measured_figure_with_a_notice():
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.query_params["mkv"] = "445"  # an old link: the figure is bound to the link's own model (V4.1-Flash, native)
    at.run()
    assert not at.exception
    assert _metric(at, "KV per GPU at 1,000,000 tokens (measured)") == "0.445 GB (0.414 GiB)"  # 445 x 1M
    at.selectbox(key="plan_model_id").set_value("llama-3.1-8b").run()
    assert not at.exception
    assert any("not applied" in i.value and "deepseek-v4.1-flash" in i.value.replace("\\", "") for i in at.info)
    assert all("(measured)" not in m.label for m in at.metric)
    assert at.session_state["plan_inputs"].measured_kv_bytes_per_token is None


def test_hbm_caption_prints_the_bytes_the_plan_uses():
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.query_params["gpu"] = "h100-sxm"
    at.run()
    assert not at.exception
    # nvidia-smi reports 81,559 MiB on an H100 SXM5 (catalog source); 81,559 x 1,048,576 = 85,520,809,984 B = 85.52 GB.
    # The slider shows it rounded to 79.6 GiB (= 85.47 GB); the caption must print the plan's figure, not the slider's.
    captions = " ".join(c.value for c in at.caption)
    assert "HBM 85.52 GB" in captions, captions
    assert "85.47" not in captions


def test_engine_choice_shows_admission_flags_and_the_other_parallelism():
    at = _app()
    # the defaults (V4.1-Flash on 8 x H200): 17.9 per GPU under TP attention, 143 under DP attention
    # (test_launch_flags.py derives both); the page says so with the flag that gets it
    assert any("Under DP attention this plan holds 143 sessions per GPU (1,144 per replica)" in i.value for i in at.info)
    assert any("Choose a serving engine" in c.value for c in at.caption)  # (the sidebar's share link is a code block)
    assert not any(c.value.startswith(("vllm serve", "python -m sglang")) for c in at.code)
    at.selectbox(key="plan_model_id").set_value("gpt-oss-20b").run()
    at.selectbox(key="plan_engine").set_value("vllm").run()
    assert not at.exception
    code = [c.value for c in at.code if c.value.startswith("vllm serve MODEL")]
    assert code and "--tensor-parallel-size 8" in code[0] and "--max-num-seqs" in code[0]
    assert any("vLLM's admission figure" in c.value for c in at.caption)
    at.selectbox(key="plan_engine").set_value("sglang").run()
    assert any(c.value.startswith("python -m sglang.launch_server") for c in at.code)
    # SGLang's admission drives the headline, in words, and its flag carries the figure
    assert any("SGLang's admission figure" in c.value for c in at.caption)
    assert any("--max-running-requests is SGLang's admission figure" in c.value for c in at.caption)


def _other_parallelism_note(lang: str) -> str:
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.query_params["hbm"] = "74.6"  # V4.1-Flash at 1M tokens: one session per replica under TP, one per GPU under DP
    if lang == "es":
        at.query_params["lang"] = "es"
    at.run()
    assert not at.exception
    assert _metric(at, "Sesiones por réplica" if lang == "es" else "Sessions per replica") == "1"
    return " ".join(i.value for i in at.info)


def test_one_session_is_singular_in_both_languages():
    # 74.6 GiB leaves 0.879 GiB of KV per GPU: under TP one session spans the 8 GPUs of the replica, under DP each
    # GPU holds one whole session (8 per replica), and the page says so in the singular
    assert "holds 1 session per GPU (8 per replica)" in _other_parallelism_note("en")
    assert "admite 1 sesión por GPU (8 por réplica)" in _other_parallelism_note("es")


def test_one_share_link_that_follows_a_slider_step():
    """The Plan page draws the sidebar's share link from the fragment that holds its sliders (so that a step, which
    reruns only that fragment in a browser, moves the link too); the router draws it on the other pages. Exactly one
    link either way, carrying the slider's new value."""
    at = _app()
    assert len(at.sidebar.code) == 1
    at.slider(key="plan_shared_prefix").set_value(0.73).run()
    assert not at.exception
    assert [c.value.count("shared=0.73") for c in at.sidebar.code] == [1]
    at.switch_page("kvplan_app/views/model.py").run()
    assert not at.exception
    assert len(at.sidebar.code) == 1 and "shared=0.73" in at.sidebar.code[0].value


def test_a_huge_typed_hbm_keeps_the_headline_in_fixed_point():
    # 99,999 GiB typed: usable KV = 99,999 x 0.9 - weights - reserve is tens of thousands of GB; "{:,.3g}" printed it
    # "9.66e+04 GB (8.99e+04 GiB)". Three significant digits stay, written whole.
    from kvplan_app.render import TEXT_SUFFIX
    at = _app()
    at.text_input(key="plan_hbm_gib_typed" + TEXT_SUFFIX).set_value("99999").run()
    assert not at.exception and not at.error
    usable = next(m for m in at.metric if m.label.startswith("Usable KV per GPU"))
    assert "e+" not in usable.label and "e+" not in usable.value, (usable.label, usable.value)
    assert usable.value.endswith(" GB") and "," in usable.value


def test_a_tp_refusal_says_which_box_to_change():
    # Llama 3.1 8B has 32 attention heads: vLLM refuses TP 3 (32 % 3 != 0). The error keeps the last valid plan and
    # names the GPUs-per-replica box, the TP the refusal is about.
    at = _app()
    at.selectbox(key="plan_model_id").set_value("llama-3.1-8b").run()
    at.number_input(key="plan_gpus_per_replica").set_value(3).run()
    assert not at.exception
    from markdown_text import shown
    errors = [shown(e.value) for e in at.error]
    assert any("attention heads (32)" in e and "GPUs per replica" in e for e in errors), errors
