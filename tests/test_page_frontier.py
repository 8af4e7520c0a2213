"""Frontier page (AppTest): renders, reacts to its slider and accelerator list, offers each grid as CSV."""

from streamlit.testing.v1 import AppTest


def _metric(at, label_start):
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}: {[m.label for m in at.metric]}")


def _frontier_page(**link):
    at = AppTest.from_file("../app.py", default_timeout=120)
    for key, value in link.items():
        at.query_params[key] = value
    at.run()
    at.switch_page("kvplan_app/views/frontier.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_renders_with_the_plan_marked():
    at = _frontier_page(attn="dp")
    # default plan with DP attention: V4.1-Flash on an H200, 1M tokens, hit 0.5 -> 143 sessions per GPU
    # (test_plan_golden.py)
    assert _metric(at, "Sessions per GPU at hit rate 0.50") == "143"
    assert _metric(at, "Request rate per GPU") == "5 /s"
    assert any("143 sessions per GPU" in c.value and "Data-parallel" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 4
    assert not at.error


def test_tensor_parallel_default_says_so():
    at = _frontier_page()
    # TP attention over 8 GPUs: the replica holds 143 sessions, 143 / 8 = 17.875 per GPU (test_plan_golden.py)
    assert _metric(at, "Sessions per GPU at hit rate 0.50") == "17.9"
    assert any("143 per replica" in c.value and "Tensor-parallel" in c.value for c in at.caption)


def test_moving_the_hit_rate_slider_changes_sessions():
    at = _frontier_page(attn="dp")
    before = int(_metric(at, "Sessions per GPU at hit rate").replace(",", ""))
    at.slider(key="frontier_hit_rate").set_value(0.9).run()
    assert not at.exception
    # hit 0.9: prefix 900,000 x 890 = 801,000,000 B; per session (1,001,000 - 900,000) x 890 = 89,890,000 B;
    # floor((64,531,854,438 - 801,000,000) / 89,890,000) = floor(708.99) = 708
    after = int(_metric(at, "Sessions per GPU at hit rate 0.90").replace(",", ""))
    assert after == 708 and after > before


def test_accelerator_list_and_heatmap_choice():
    at = _frontier_page()
    at.multiselect(key="frontier_gpus").set_value(["h100-sxm", "b200", "l4"]).run()
    assert not at.exception
    at.selectbox(key="frontier_heatmap_gpu").set_value("b200").run()
    assert not at.exception
    at.checkbox(key="frontier_scale").uncheck().run()
    assert not at.exception


def test_each_figure_offers_its_grid_as_csv():
    at = _frontier_page()
    keys = {b.key for b in at.get("download_button")}
    assert {"frontier_csv_context", "frontier_csv_hit", "frontier_csv_rate", "frontier_csv_heat"} <= keys


def test_no_output_tokens_says_rate_is_undefined():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.run()
    at.number_input(key="plan_output_tokens").set_value(0).run()
    at.switch_page("kvplan_app/views/frontier.py").run()
    assert not at.exception
    assert _metric(at, "Request rate per GPU") == "undefined (no output tokens)"


def test_a_shared_link_restores_the_frontier_inputs():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.query_params.update({"page": "frontier", "fgpus": "l4,b200", "fhit": "0.8", "fscale": "0"})
    at.run()
    assert not at.exception and not at.warning
    assert at.multiselect(key="frontier_gpus").value == ["l4", "b200"]
    assert at.slider(key="frontier_hit_rate").value == 0.8
    assert at.checkbox(key="frontier_scale").value is False


def test_a_bad_link_value_warns_and_keeps_the_default():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.query_params.update({"page": "frontier", "fgpus": "h900", "fhit": "7"})
    at.run()
    assert not at.exception
    assert at.multiselect(key="frontier_gpus").value == ["h200", "h100-sxm", "b200"]
    assert at.slider(key="frontier_hit_rate").value == 0.5
    assert any("fgpus" in w.value for w in at.warning)
