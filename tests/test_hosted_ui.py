"""A shared dashboard shows visitors no error details, no links made from their text, and no crash on huge models.

* The shipped ``.streamlit/config.toml`` shows no exception details (``client.showErrorDetails = "none"``), and
  the router turns a page's unexpected error into one line with a reference id; the traceback goes to the log.
* Text from links and files never becomes a clickable link: GitHub-flavoured Markdown auto-links bare URLs,
  ``www.`` and e-mail addresses after resolving backslash escapes, so :func:`escape_markdown` puts such runs in
  code spans. ``tests/markdown_text.py`` reads a Markdown string the way remark-gfm does.
* A config inside the importer's ranges whose per-GPU bytes pass 2**64 renders, with one clear message.
"""

from __future__ import annotations

import logging
import re
import tomllib
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from kvplan_app.markdown import escape_markdown
from markdown_text import outside_code_spans, shown, visible_autolinks

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("text", [
    "Link parameter 'hit': 'https://evil.example/reset' is not allowed",
    "see www.evil.example or WWW.EVIL.EXAMPLE/x",
    "write to admin@evil.example today",
    "nested `https://a.example` and ``b`` and ```c```",
    "<img src=x onerror=alert(1)> ![x](http://e/x.png) [a](javascript:x) :red[b] $x$ **c**",
    "plain text, nothing to link: 1.5M tokens at 0.5",
])
def test_escaped_text_shows_as_typed_and_links_nothing(text):
    md = escape_markdown(text)
    assert visible_autolinks(md) == [], md
    assert shown(md) == text
    assert not re.search(r"(?<!\\)[<>\[\]()!$*]", outside_code_spans(md))


def test_the_shipped_config_shows_visitors_no_error_details():
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["client"]["showErrorDetails"] == "none"


def _app(params: dict) -> AppTest:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.query_params = dict(params)
    return at


def test_a_link_holding_a_url_warns_in_plain_text(monkeypatch):
    at = _app({"hit": "https://evil.example/reset", "model": "www.evil.example", "gpu": "a@evil.example"})
    at.run()
    assert not at.exception
    warnings = [w.value for w in at.warning]
    assert any("evil.example/reset" in w for w in warnings), warnings
    for w in warnings:
        assert visible_autolinks(w) == [], w


def test_an_unexpected_page_error_is_one_line_with_a_reference_and_the_traceback_goes_to_the_log(monkeypatch, caplog):
    import planner.plan

    def broken(*args, **kwargs):
        raise RuntimeError("secret detail /srv/kvplan/internal.py")

    monkeypatch.delenv("KVPLAN_DEBUG", raising=False)
    monkeypatch.setattr(planner.plan, "plan", broken)
    at = _app({})
    with caplog.at_level(logging.ERROR, logger="kvplan_app"):
        at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    ref = re.search(r"reference ([0-9a-f]{12})", errors[0])
    assert ref and "secret detail" not in errors[0] and "/srv" not in errors[0]
    logged = [r for r in caplog.records if ref.group(1) in r.getMessage()]
    assert logged and "secret detail" in "".join(logging.Formatter().formatException(r.exc_info) for r in logged)
    assert any(s.label == "Sessions per GPU" for s in at.metric) is False  # the page stopped at the error


def test_with_kvplan_debug_the_error_reaches_streamlit_too(monkeypatch):
    import planner.plan

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setenv("KVPLAN_DEBUG", "1")
    monkeypatch.setattr(planner.plan, "plan", broken)
    at = _app({})
    at.run()
    assert at.exception and len(at.error) == 1


# A config inside the importer's ranges: 100,000 layers x 1,000,000 KV heads x head_dim 1,000,000 in BF16 is
# 100,000 x 2 x 1,000,000 x 1,000,000 x 2 B = 4e17 B per token; at 1,000,000 tokens 4e23 B, past 2^63 B
# (9.22e18 B): no 64-bit table can hold it, and no machine either.
HUGE_CONFIG = {"model_type": "llama", "num_hidden_layers": 100_000, "num_attention_heads": 1_000_000,
               "num_key_value_heads": 1_000_000, "hidden_size": 1_000_000, "head_dim": 1_000_000,
               "max_position_embeddings": 131072, "torch_dtype": "bfloat16"}


def test_a_model_past_2_63_bytes_is_refused_with_one_message_and_the_page_renders():
    import json

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("kvplan_app/views/model.py")
    at.run()
    at.radio(key="model_source").set_value("Import config.json").run()
    at.text_area(key="model_config_text").set_value(json.dumps(HUGE_CONFIG)).run()
    assert not at.exception
    errors = [shown(e.value) for e in at.error]
    assert any("context_tokens" in e and "2^63 B" in e for e in errors), errors
    # it falls back to one token: 4e17 B = 400,000,000 GB (372,529,030 GiB rounded by format_bytes)
    assert next(m.value for m in at.metric if m.label.startswith("KV per GPU (pool)")).startswith("400,000,000.0 GB")
    for tp, ctx in ((1024, "1"), (1, "23")):  # 23 tokens x 4e17 = 9.2e18 B: just under 2^63 = 9.223e18 B
        at.number_input(key="model_tp").set_value(tp).run()
        at.text_input(key="model_context").set_value(ctx).run()
        assert not at.exception


def test_estimate_refuses_past_2_63_bytes_and_names_what_fits():
    from planner.hf.config import model_from_config
    from planner.errors import PlanInputError

    model = model_from_config(HUGE_CONFIG, name="huge")
    assert model.estimate(23).kv_bytes == 23 * 4 * 10**17  # 9.2e18 B < 2^63 - 1 = 9,223,372,036,854,775,807 B
    with pytest.raises(PlanInputError, match=r"context_tokens: 24 .*at most about 23 tokens"):
        model.estimate(24)  # 24 x 4e17 = 9.6e18 B > 2^63 B
