"""A refused input is seen where the user looks, in Chromium at 1280x800.

The Plan page keeps its last valid plan when a typed value is refused; the refusal must be in the first
viewport, next to the inputs and above the figures it explains (it was under two expanders, below the fold,
and the unchanged figures read as if the plan had updated).
"""

from __future__ import annotations

import pytest

from harness import CHROMIUM, settle
from test_glance import open_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_refused_context_is_shown_in_the_first_viewport(app_server, browser, lang):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(60_000)
    try:
        page = ctx.new_page()
        open_page(page, app_server, "", "lang=es" if lang == "es" else "")
        box = page.get_by_test_id("stTextInput").first.locator("input")
        box.fill("1,5M")  # ambiguous: 1.5M or 15M; refused with one line
        box.press("Enter")
        settle(page)
        alert = page.get_by_test_id("stAlertContentError").first
        alert.wait_for()
        assert "1,5M" in alert.inner_text()
        where = alert.bounding_box()
        assert where is not None and where["y"] + where["height"] <= 800, f"the refusal is at {where}"
        headline = page.get_by_test_id("stMetric").first.bounding_box()
        assert headline is not None and where["y"] < headline["y"], "the refusal is below the figures"
    finally:
        ctx.close()
