"""Frontier page (AppTest): renders, reacts to its slider and accelerator list, offers each grid as CSV."""

import base64
import json

import numpy as np

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
    # default plan with DP attention: V4.1-Flash on an H200, 1M tokens, shared prefix 0.5 -> 143 sessions per GPU
    # (test_plan_golden.py); hit rate 0.5: each request prefills 500,000 prompt tokens at 20,000 tokens/s = 25 s,
    # so 1 / (1,000 / 5,000 + 25) = 1 / 25.2 = 0.0397 requests/s per GPU
    assert _metric(at, "Sessions per GPU") == "143"
    assert _metric(at, "Request rate per GPU") == "0.0397 /s"
    assert any("143 sessions per GPU" in c.value and "Data-parallel" in c.value for c in at.caption)
    assert len(at.get("plotly_chart")) == 4
    assert not at.error


def test_tensor_parallel_default_says_so():
    at = _frontier_page()
    # TP attention over 8 GPUs: the replica holds 143 sessions, 143 / 8 = 17.875 per GPU (test_plan_golden.py)
    assert _metric(at, "Sessions per GPU") == "17.9"
    assert any("143 per replica" in c.value and "Tensor-parallel" in c.value for c in at.caption)


def test_moving_the_hit_rate_slider_changes_the_rate_not_sessions():
    at = _frontier_page(attn="dp")
    before = int(_metric(at, "Sessions per GPU").replace(",", ""))
    at.slider(key="frontier_hit_rate").set_value(0.9).run()
    assert not at.exception
    # hit 0.9 at the plan's shared prefix 0.5: the same 143 sessions (a hit rate holds no memory); each request
    # prefills 100,000 prompt tokens, 5 s: 1 / (0.2 + 5) = 0.192 requests/s (throughput below 143 / 25 s = 5.72)
    assert any("hit rate 0.90" in m.value for m in at.markdown)
    after = int(_metric(at, "Sessions per GPU").replace(",", ""))
    assert after == before == 143
    assert _metric(at, "Request rate per GPU") == "0.192 /s"


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
    assert any("'fgpus' = 'h900'" in w and "kvplan gpus" in w for w in _warnings(at))
    assert any("'fhit' = '7'" in w and "[0, 1]" in w for w in _warnings(at))


def _warnings(at):
    """Warning texts as shown (Markdown escapes removed)."""
    return [w.value.replace("\\", "") for w in at.warning]


def _figure(at, key):
    chart = next(c for c in at.get("plotly_chart") if c.proto.id.endswith(key) or key in c.proto.id)
    return json.loads(chart.proto.spec)


def _values(v):
    """A trace's x or y as a list (plotly writes numeric arrays as base64 ``bdata``)."""
    if isinstance(v, dict):
        return np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"]).tolist()
    return list(v)


def _lines(fig):
    return [{**tr, "x": _values(tr["x"]), "y": _values(tr["y"])} for tr in fig["data"]
            if tr.get("name") != "current plan" and tr.get("mode") == "lines"]


def _legend(fig) -> list[str]:
    """Labels written in the legend (above the plot): legend-only traces and named lines."""
    return ([tr["name"] for tr in fig["data"] if tr.get("name") and tr.get("showlegend")]
            + [sh["name"] for sh in fig["layout"].get("shapes", []) if sh.get("name") and sh.get("showlegend")])


def test_a_short_longest_context_stops_the_lines_and_says_where_the_plan_is():
    at = _frontier_page(attn="dp", fctx="32000", fgpus="h200")
    assert at.select_slider(key="frontier_max_context").value == 32_000
    heat = _figure(at, "frontier_fig_heat")
    assert max(_values(heat["data"][0]["y"])) == 32_000  # no cell stretched from 32k to the plan's 1M
    assert any("(beyond this chart)" in name for name in _legend(heat))
    for key in ("frontier_fig_context", "frontier_fig_rate"):
        fig = _figure(at, key)
        xs = [x for tr in _lines(fig) for x in tr["x"]]
        # every plotted context is computed and within the longest context: no segment from 32k to the plan's 1M
        assert xs and max(xs) == 32_000, key
        assert not [tr for tr in fig["data"] if tr.get("name") == "current plan"], key
        assert any("1,000,000 tokens (beyond this chart)" in name for name in _legend(fig)), key
    assert any("1,000,000 tokens" in c.value and "beyond the longest context" in c.value for c in at.caption)
    # the headline stays at the plan's own context: 143 sessions per GPU at 1M, hit 0.5 (test_plan_golden.py)
    assert _metric(at, "Sessions per GPU") == "143"
    assert any("1,000,000 tokens" in m.value for m in at.markdown)


def test_a_line_within_one_decade_still_has_y_ticks():
    fig = _figure(_frontier_page(attn="dp", fctx="32000", fgpus="h200"), "frontier_fig_rate")
    assert fig["layout"]["yaxis"]["dtick"] == "D2"  # a flat rate line: 1-2-5 ticks, not a bare axis


def test_link_context_keeps_its_value_and_reads_token_suffixes():
    at = _frontier_page(fctx="131072")
    assert not at.warning
    assert at.select_slider(key="frontier_max_context").value == 131_072
    assert max(x for tr in _lines(_figure(at, "frontier_fig_context")) for x in tr["x"]) == 131_072
    at = _frontier_page(fctx="128k")
    assert not at.warning
    assert at.select_slider(key="frontier_max_context").value == 128_000


def test_bad_context_link_names_value_and_range():
    at = _frontier_page(fctx="12 parsecs")
    assert any("'fctx' = '12 parsecs'" in w and "10,000,000" in w for w in _warnings(at))


def test_a_bad_accelerator_in_the_list_drops_only_itself():
    at = _frontier_page(fgpus="bogus,h200")
    assert at.multiselect(key="frontier_gpus").value == ["h200"]
    assert len(at.warning) == 1 and "'bogus'" in _warnings(at)[0] and "h200" not in _warnings(at)[0]


def test_another_hit_rate_puts_the_diamond_at_the_plans_own_point():
    at = _frontier_page(attn="dp", fhit="0.8")
    fig = _figure(at, "frontier_fig_context")
    plan = [tr for tr in fig["data"] if tr.get("name") == "current plan"]
    # the plan: 1M tokens, hit 0.5 -> 143 sessions per GPU (test_plan_golden.py), not the hit-0.8 line
    assert plan and plan[0]["x"] == [1_000_000] and plan[0]["y"] == [143]
    assert any("hit rate 0.50" in name for name in _legend(fig))
    assert any("hit rate 0.80" in c.value and "its own hit rate 0.50" in c.value for c in at.caption)


def test_hit_rate_chart_is_log_so_hit_rate_one_does_not_flatten_the_rest():
    fig = _figure(_frontier_page(attn="dp"), "frontier_fig_hit")
    assert fig["layout"]["yaxis"]["type"] == "log"
    assert fig["layout"]["yaxis"]["dtick"] == 1  # 10 to over 1,000 sessions: one tick a decade
    plan = [tr for tr in fig["data"] if tr.get("name") == "current plan"]
    assert plan[0]["x"] == [0.5] and plan[0]["y"] == [143]


WORKED_LINK = {"model": "deepseek-v4.1-flash", "gpu": "custom", "hbm": "100", "util": "1", "weights": "0",
               "reserve": "0", "ctx": "1000000", "out": "0", "gpus": "1", "hit": "0.5", "shared": "0"}
"""docs/capacity.md's worked example on one GPU, with no shared prefix on the Plan page."""


def test_the_frontiers_own_shared_prefix_moves_sessions_and_goes_in_its_link():
    at = _frontier_page(**WORKED_LINK)
    # no sharing: each session holds 1,000,000 x 890 B = 890,000,000 B of 100 GiB = 107,374,182,400 B:
    # floor(120.64) = 120 sessions (docs/capacity.md)
    assert at.slider(key="frontier_shared_prefix").value == 0.0
    assert _metric(at, "Sessions per GPU") == "120"
    at.slider(key="frontier_shared_prefix").set_value(0.5).run()
    assert not at.exception
    # half the context stored once: 445,000,000 B + 445,000,000 B per session -> floor(240.29) = 240, the Plan
    # page's figure at shared prefix 0.5 (tests/test_capacity.py)
    assert _metric(at, "Sessions per GPU") == "240"
    assert any("shared prefix 0.50" in m.value for m in at.markdown)
    assert any("(the plan, at 0.00, holds 120)" in c.value for c in at.caption)
    assert at.session_state["plan_inputs"].shared_prefix == 0.0  # the Plan page's input is left as it was
    assert at.query_params["fshared"] == "0.5"


def test_a_link_restores_the_frontiers_shared_prefix():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.query_params.update({**WORKED_LINK, "page": "frontier", "fshared": "0.5"})
    at.run()
    assert not at.exception and not at.warning
    assert at.slider(key="frontier_shared_prefix").value == 0.5
    assert _metric(at, "Sessions per GPU") == "240"


def test_a_context_past_the_models_maximum_is_said():
    # Llama 3.1 70B: max_position_embeddings = 131,072 (its config.json on Hugging Face); the plan's 1,000,000 tokens
    # + the default 1,000 output tokens = 1,001,000 tokens, which it cannot serve (as the Plan page says)
    at = _frontier_page(model="llama-3.1-70b", ctx="1000000", fgpus="h200")
    past = [w for w in _warnings(at) if "exceeds Llama 3.1 70B's maximum context (131,072 tokens)" in w]
    assert len(past) == 1 and "Context + output (1,001,000 tokens)" in past[0], _warnings(at)
    # a plan that fits, under the charts' 1M: the charts mark the maximum themselves, no warning
    at = _frontier_page(model="llama-3.1-70b", ctx="32000", fgpus="h200", fctx="1000000")
    assert not [w for w in _warnings(at) if "maximum context" in w], _warnings(at)
    # 32,000 + 1,000 and 128,000 + 1,000 tokens both fit in 131,072: nothing said
    at = _frontier_page(model="llama-3.1-70b", ctx="32000", fgpus="h200", fctx="128000")
    assert not [w for w in _warnings(at) if "maximum context" in w]
