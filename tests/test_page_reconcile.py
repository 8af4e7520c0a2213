"""Reconcile page (AppTest): the vllm#21348 example pair, a pasted log, bad input kept as text."""

from markdown_text import shown
from streamlit.testing.v1 import AppTest


def _page():
    at = AppTest.from_file("../app.py", default_timeout=120)
    at.run()
    at.switch_page("kvplan_app/views/reconcile.py")
    at.run()
    assert not at.exception, at.exception
    return at


def test_example_pair_says_same_bytes_per_token_only_budgets_differ():
    at = _page()
    at.button(key="reconcile_example").click().run()
    assert not at.exception, at.exception
    # Qwen3-235B-A22B at TP 4: 2 x 94 x 1 x 128 x 2 = 48,128 B per token per GPU in both engines
    assert any("Both engines store 48,128 B per token per GPU" in s.value.replace("\\", "") for s in at.success)
    rows = [d.value for d in at.table if "Engine printed" in d.value.columns]  # st.table: the causes wrap
    assert len(rows) == 2
    # st.table draws its cells as Markdown, so they hold escaped text: compared as a reader sees them
    assert "178,880" in [shown(v) for v in rows[0]["Engine printed"]]
    assert [shown(v) for v in rows[1]["Status"]].count("match") >= 2


def test_pasted_log_with_markup_stays_text():
    at = _page()
    at.text_area(key="reconcile_log_a").set_value(
        "<script>alert(1)</script> kv cache [x](javascript:alert(1))\n# GPU blocks: 1381\n"
        "Maximum concurrency for 2048 tokens per request: 10.79x").run()
    assert not at.exception, at.exception
    at.selectbox(key="reconcile_model").set_value("llama-3.1-70b").run()
    rows = next(d.value for d in at.table if "Engine printed" in d.value.columns)
    # 1,381 blocks / (2,048 / 16) = 10.79x
    assert "match" in rows["Status"].tolist()
    assert all("<script>" not in m.value for m in at.markdown)


def test_a_log_from_no_engine_is_an_error_not_a_crash():
    at = _page()
    at.text_area(key="reconcile_log_a").set_value("hello world").run()
    assert not at.exception and at.error
    # named by what was pasted, and no "paste a log above" hint under the error (a log was pasted)
    assert "'hello world'" in at.error[0].value.replace("\\", "")
    assert "no line of this text is from either engine" in at.error[0].value
    assert not any("Paste a log above" in i.value for i in at.info)
