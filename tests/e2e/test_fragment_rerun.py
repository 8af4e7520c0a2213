"""A slider step on the Plan page reruns only the part of the page it moves (``st.fragment``), over the real
server: the step's run draws the sliders, the new figure and the share link, and nothing above the sliders (the
title, the model and GPU boxes), which the browser then keeps as they are. Spoken over Streamlit's websocket
protocol as the front end speaks it (``harness.ProtocolClient``): no browser is needed to see what the server sends.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest

from harness import BASE_LINK, METRIC, ProtocolClient, expected_sessions

pytestmark = pytest.mark.browser  # a real server, as the browser tests


async def _step(base: str):
    import websockets

    url = base.replace("http://", "ws://", 1) + "/_stcore/stream"
    async with websockets.connect(url, subprotocols=["streamlit"], max_size=None) as ws:
        c = ProtocolClient(ws)
        await c.rerun(urlencode({**BASE_LINK, "hbm": "100"}))
        await c.until(lambda p: p.finished and p.slider_id and p.figure(), 120)
        opened = list(c.page.drawn)
        c.page.drawn.clear()
        c.page.metrics.clear()
        runs = c.page.finished
        await c.rerun(c.page.query, [(c.page.slider_id, 0.51)], c.page.slider_fragment)
        await c.until(lambda p: p.finished > runs, 120)
        return opened, c.page


def test_a_slider_step_redraws_the_answer_and_the_link_not_the_page(app_server):
    # its own thread: the sync Playwright of the other browser tests may hold this thread's event loop
    with ThreadPoolExecutor(1) as pool:
        opened, page = pool.submit(asyncio.run, _step(app_server)).result()
    # what no slider moves, drawn on opening: the title, the model and GPU boxes, the KV table (a dataframe)
    fixed = ("heading: KV-cache plan", "selectbox: Model", "selectbox: GPU", "heading: KV cache by context",
             "dataframe")
    for what in fixed:
        assert any(d.startswith(what) for d in opened), (what, opened)
    assert page.slider_fragment, "the shared-prefix slider is drawn by a fragment"
    # the step: its figure (tests/e2e/harness.py: 100 GiB all for KV, shared prefix 0.51) and its link ...
    assert page.figure() == expected_sessions(100, 0.51)
    assert any(k.startswith(METRIC) for k in page.metrics)
    assert dict(parse_qsl(urlsplit(page.share_link).query))["shared"] == "0.51"
    assert dict(parse_qsl(page.query))["shared"] == "0.51"
    # ... and none of those
    assert not [d for d in page.drawn if d.startswith(fixed)], page.drawn
