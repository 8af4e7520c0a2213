"""Stable page URLs, in Chromium, on a server nobody has opened yet.

Page URLs (docs/hosting.md): ``/`` is the Plan page (``/plan`` and the older
``/planner`` open it too), ``/model``, ``/traces``, ``/frontier``,
``/context``, ``/probe``. The first request of this module's server is a
direct link, as after a restart. The share link names the page in its path;
older links with ``?page=model`` keep working.

Expected numbers as in ``test_browser.py``: DeepSeek V4.1-Flash, 890 B per
token, 100 GiB all for KV, 1M tokens, shared prefix 0.51 ->
(107,374,182,400 - 453,900,000) // 436,100,000 = 245 sessions per GPU.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from harness import CHROMIUM, streamlit_server

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

LINK = {"model": "deepseek-v4.1-flash", "gpu": "h200", "gpus": "1", "hbm": "100", "util": "1", "reserve": "0",
        "weights": "0", "ctx": "1000000", "out": "0", "hit": "0.5", "shared": "0.51"}
HEADINGS = {"model": "Model", "traces": "Traces", "frontier": "Frontier", "context": "KV cache vs context",
            "probe": "Live probe"}


@pytest.fixture(scope="module")
def fresh_server(tmp_path_factory):
    """A server of its own: its first request is this module's first link."""
    with streamlit_server(tmp_path_factory.mktemp("links") / "server.log") as server:
        yield server.base


def _query(page) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(page.url).query))


def _share(page):
    return page.get_by_test_id("stSidebar").get_by_test_id("stCode")


def _heading(page, text: str):
    return page.get_by_role("heading", name=re.compile("^" + re.escape(text)), level=1)


def test_direct_links_open_first_thing_after_a_start(fresh_server, browser):
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(60_000)
    try:
        page = ctx.new_page()
        for path, title in HEADINGS.items():
            page.goto(f"{fresh_server}/{path}?" + urlencode(LINK))
            expect(_heading(page, title)).to_be_visible()
            nav = page.get_by_test_id("stSidebarNav")
            expect(nav.get_by_role("link", name="Plan")).to_be_visible()  # the router's sidebar, not file names
            expect(_share(page)).to_contain_text(f"{fresh_server}/{path}?")
            expect(_share(page)).to_contain_text("shared=0.51")
            assert urlsplit(page.url).path == f"/{path}"
            assert _query(page)["shared"] == "0.51"
        for alias in ("plan", "planner", ""):
            page.goto(f"{fresh_server}/{alias}?" + urlencode(LINK))
            metric = page.get_by_test_id("stMetric").filter(has_text="Sessions per GPU")
            expect(metric.get_by_test_id("stMetricValue")).to_have_text("245")
            expect(page.get_by_text("Page not found")).to_have_count(0)
            expect(_share(page)).to_contain_text(f"{fresh_server}/?")
    finally:
        ctx.close()


def test_share_link_round_trip_and_old_page_links(fresh_server, browser):
    from playwright.sync_api import expect

    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(60_000)
    try:
        page = ctx.new_page()
        page.goto(f"{fresh_server}/?" + urlencode({**LINK, "page": "frontier"}))  # an older share link
        expect(_heading(page, "Frontier")).to_be_visible()
        expect(_share(page)).to_contain_text(f"{fresh_server}/frontier?")
        link = _share(page).inner_text().strip()
        assert "page=" not in link and "shared=0.51" in link
        other = ctx.browser.new_context().new_page()  # a colleague opens the link
        try:
            other.goto(link)
            expect(_heading(other, "Frontier")).to_be_visible(timeout=60_000)
            assert urlsplit(other.url).path == "/frontier" and _query(other)["shared"] == "0.51"
        finally:
            other.context.close()
    finally:
        ctx.close()
