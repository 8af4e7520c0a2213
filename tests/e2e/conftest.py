"""Fixtures for the real-browser tests: a ``streamlit run app.py`` server and Debian's chromium via Playwright.

The server runs as a subprocess on a free port of 127.0.0.1 for the whole test
session; it is ready when ``/_stcore/health`` answers ``ok`` (the endpoint a
load balancer polls, see docs/hosting.md) and is stopped at the end. Its log is
printed when it fails to start.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness import CHROMIUM, CHROMIUM_ARGS, ROOT, SIZES, START_TIMEOUT_S, free_port, streamlit_server, wait_healthy  # noqa: E402,F401


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """Base URL of a running ``streamlit run app.py`` (no trailing slash)."""
    try:
        with streamlit_server(tmp_path_factory.mktemp("streamlit") / "server.log") as server:
            yield server.base
    except RuntimeError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium, headless, driven by Playwright's sync API."""
    from playwright.sync_api import sync_playwright

    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)  # every module's expect(...), not only those that set it: a loaded CI renders slowly
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context and page (own cookies, own Streamlit session); downloads allowed."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(60_000)  # generous: a loaded 2-core CI machine renders slowly
    pg = context.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs  # type: ignore[attr-defined]
    yield pg
    context.close()


@pytest.fixture(scope="module", params=list(SIZES))
def sized(request, browser):
    """One browser page per viewport size of :data:`harness.SIZES`, reused across a module's tests."""
    width, height = SIZES[request.param]
    ctx = browser.new_context(viewport={"width": width, "height": height})
    ctx.set_default_timeout(60_000)
    page = ctx.new_page()
    page.size_name = request.param  # type: ignore[attr-defined]
    yield page
    ctx.close()
