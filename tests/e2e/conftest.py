"""Fixtures for the real-browser tests: a ``streamlit run app.py`` server and Debian's chromium via Playwright.

The server runs as a subprocess on a free port of 127.0.0.1 for the whole test
session; it is ready when ``/_stcore/health`` answers ``ok`` (the endpoint a
load balancer polls, see docs/hosting.md) and is stopped at the end. Its log is
printed when it fails to start.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
"""Debian's chromium; Playwright's own browser download is not used."""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
START_TIMEOUT_S = 45.0
"""Longest wait for the server's health endpoint."""


def free_port() -> int:
    """A TCP port nothing listens on now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_healthy(url: str, proc: subprocess.Popen, timeout_s: float = START_TIMEOUT_S) -> str:
    """Poll ``url`` until it answers 200; returns the body. Fails when the server exits or time runs out."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"streamlit exited with code {proc.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return r.read().decode()
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {timeout_s:g} s")


@pytest.fixture(scope="session")
def app_server(tmp_path_factory):
    """Base URL of a running ``streamlit run app.py`` (no trailing slash)."""
    port = free_port()
    log_path = tmp_path_factory.mktemp("streamlit") / "server.log"
    env = {**os.environ, "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false", "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.headless", "true",
           "--server.port", str(port), "--server.address", "127.0.0.1", "--server.fileWatcherType", "none"]
    with open(log_path, "w") as log:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(f"{base}/_stcore/health", proc)
    except Exception:
        proc.kill()
        proc.wait()
        pytest.fail(f"streamlit did not start; log:\n{log_path.read_text()[-3000:]}")
    yield base
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def browser():
    """Debian's chromium, headless, driven by Playwright's sync API."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    """A fresh browser context and page (own cookies, own Streamlit session); downloads allowed."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(20_000)
    pg = context.new_page()
    dialogs: list[str] = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs  # type: ignore[attr-defined]
    yield pg
    context.close()
