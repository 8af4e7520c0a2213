"""Traces page (AppTest): the eviction policy is chosen on the page and named beside the hit rates."""

from streamlit.testing.v1 import AppTest


def _traces_page():
    at = AppTest.from_file("../app.py", default_timeout=90)
    at.run()
    at.switch_page("kvplan_app/views/traces.py")
    at.run()
    assert not at.exception, at.exception
    return at


def _token_hit(at):
    return next(m.value for m in at.metric if m.label.startswith("Token hit rate"))


def test_policy_named_beside_the_hit_rate_and_chained_trace_equal_under_both():
    at = _traces_page()
    captions = " ".join(c.value for c in at.caption)
    assert "Eviction: LRU, tail blocks evicted first (vLLM)" in captions
    vllm = _token_hit(at)
    at.selectbox(key="traces_eviction_policy").set_value("sglang").run()
    assert not at.exception, at.exception
    assert "Eviction: LRU over radix-tree leaves (SGLang)" in " ".join(c.value for c in at.caption)
    # the bundled conversation trace's hash_ids chain on the prefix: radix nodes are its blocks,
    # so leaf-only LRU and tail-first LRU hold the same blocks at every step (planner.traces.policy)
    assert _token_hit(at) == vllm
