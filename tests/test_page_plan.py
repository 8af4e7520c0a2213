"""Plan page (AppTest): renders, reacts to the hit-rate slider, keeps the last valid plan."""

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
    assert _metric(at, "KV at 1,000,000 tokens") == "0.89 GB (0.829 GiB)"
    assert _metric(at, "Sessions per GPU") == "143"


def test_raising_hit_rate_raises_sessions():
    at = _app()
    before = int(_metric(at, "Sessions per GPU").replace(",", ""))
    at.slider(key="plan_hit_rate").set_value(0.9).run()
    assert not at.exception
    after = int(_metric(at, "Sessions per GPU").replace(",", ""))
    assert after > before


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
