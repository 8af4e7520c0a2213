"""Traces page (AppTest): renders the bundled traces, says plainly when hit rates are not measurable,
and hands its measured hit rate to the Plan page."""

from streamlit.testing.v1 import AppTest

from planner.plan import make_inputs, plan
from planner.traces import blocks_for_bytes, kv_bytes_per_token_for, load_sample, reuse_profile, typical_context_tokens


def _metric(at, label_start):
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def _traces_page():
    at = AppTest.from_file("../app.py", default_timeout=60)
    at.run()
    at.switch_page("kvplan_app/views/traces.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_renders_conversation_at_usable_kv():
    at = _traces_page()
    assert _metric(at, "Requests") == "12,031"
    # the page's figure equals the library's: default plan (V4.1-Flash on H200), no TTL
    result = plan(make_inputs())
    trace = load_sample("conversation")
    per_token = kv_bytes_per_token_for(result.inputs.model_id, typical_context_tokens(trace))
    blocks = blocks_for_bytes(result.usable_kv_bytes, per_token, 512)
    expected = reuse_profile(trace).hits(blocks).token_hit_rate
    assert _metric(at, "Token hit rate") == f"{expected:.1%}"
    assert "GiB" in _metric(at, "Cache (usable KV per GPU)")
    assert len(at.get("plotly_chart")) >= 3


def test_ttl_lowers_the_hit_rate():
    at = _traces_page()
    before = float(_metric(at, "Token hit rate").rstrip("%"))
    at.select_slider(key="traces_ttl").set_value(60.0).run()
    assert not at.exception, at.exception
    after = float(_metric(at, "Token hit rate").rstrip("%"))
    assert after < before


def test_azure_says_not_measurable():
    at = _traces_page()
    at.selectbox(key="traces_sample").set_value("azure-code").run()
    assert not at.exception, at.exception
    assert _metric(at, "Requests") == "8,819"
    assert any("not measurable" in i.value for i in at.info)
    assert not [m for m in at.metric if m.label.startswith("Token hit rate")]


def test_use_this_hit_rate_sets_the_plan():
    at = _traces_page()
    at.selectbox(key="traces_sample").set_value("synthetic").run()
    result = plan(make_inputs())
    trace = load_sample("synthetic")
    blocks = blocks_for_bytes(result.usable_kv_bytes, kv_bytes_per_token_for(result.inputs.model_id, 15_326), 512)
    expected = round(reuse_profile(trace).hits(blocks).token_hit_rate, 2)   # 0.6512 -> 0.65
    # the shared prefix beside it, from the block tree (planner.traces.sharing), and the prompt length measured at
    from planner.traces.sharing import measure_sharing

    sharing = measure_sharing(trace)
    shared = round(sharing.shared_prefix, 2)
    assert _metric(at, "Shared prefix") == f"{sharing.shared_prefix:.1%}"
    assert "Use these figures" in at.button(key="traces_use_hit_rate").label
    at.button(key="traces_use_hit_rate").click().run()
    assert not at.exception, at.exception
    inputs = at.session_state["plan_inputs"]
    assert inputs.hit_rate == expected == 0.65 and inputs.shared_prefix == shared
    assert inputs.figures_measured_at_tokens == round(sharing.mean_prompt_tokens) == 15_325
    at.switch_page("kvplan_app/views/plan.py")
    at.run()
    assert not at.exception, at.exception
    assert at.slider(key="plan_hit_rate").value == expected
    assert at.slider(key="plan_shared_prefix").value == shared
    # measured on 15,325-token prompts, applied to the plan's 1,000,000 tokens: 65 x longer, more than 4 x apart
    assert any("measured on prompts of 15,325 tokens" in w.value for w in at.warning)
    # the link carries the prompt length; a context within 4 x of it (32,000 / 15,325 = 2.1): no warning
    for ctx, warned in (("32000", False), ("1000000", True)):
        again = AppTest.from_file("../app.py", default_timeout=60)
        for k, v in {"hit": "0.65", "shared": str(shared), "measured_at": "15325", "ctx": ctx}.items():
            again.query_params[k] = v
        again.run()
        assert not again.exception, again.exception
        assert any("measured on prompts" in w.value for w in again.warning) == warned


def test_model_change_is_shared_with_the_plan():
    at = _traces_page()
    at.selectbox(key="traces_model_id").set_value("llama-3.1-8b").run()
    assert not at.exception, at.exception
    assert at.session_state["plan_inputs"].model_id == "llama-3.1-8b"


def test_upload_choice_waits_for_a_file():
    at = _traces_page()
    at.selectbox(key="traces_sample").set_value("Upload a trace").run()
    assert not at.exception, at.exception
    assert any("Upload a trace" in i.value for i in at.info)


def test_fleet_section_chart_csv_and_use_hit_rate():
    at = _traces_page()
    at.multiselect(key="traces_fleet_replicas").set_value([1, 16]).run()
    at.multiselect(key="traces_fleet_routing").set_value(["random", "session"]).run()
    assert not at.exception, at.exception
    at.selectbox(key="traces_fleet_pick_n").set_value(16).run()
    at.selectbox(key="traces_fleet_pick_policy").set_value("session").run()
    at.button(key="traces_fleet_use").click().run()
    assert not at.exception, at.exception
    # session affinity at 16 replicas keeps the conversation trace's reuse: the library's figure, rounded to 0.01
    from planner.traces.fleet import fleet_hits

    trace = load_sample("conversation")
    result = plan(make_inputs())
    per_token = kv_bytes_per_token_for(result.inputs.model_id, typical_context_tokens(trace))
    blocks = blocks_for_bytes(result.usable_kv_bytes, per_token, 512)
    expected = round(fleet_hits(trace, 16, "session", capacity_blocks=blocks).token_hit_rate, 2)
    assert any(f"{expected:.2f}" in s.value for s in at.success)


def test_saved_curve_loads(tmp_path):
    import json as _json

    from planner.cli import main

    path = tmp_path / "curve.json"
    assert main(["trace", "sample:synthetic", "--sweep", "--save", str(path)]) == 0
    at = _traces_page()
    at.selectbox(key="traces_sample").set_value("Load a saved curve").run()
    at.file_uploader(key="traces_curve_upload").set_value(("curve.json", path.read_bytes(), "application/json")).run()
    assert not at.exception, at.exception
    assert _metric(at, "Token hit rate").endswith("%")
    at.file_uploader(key="traces_curve_upload").set_value(("bad.json", _json.dumps({"x": 1}).encode(), "x")).run()
    assert not at.exception and at.error
