"""Real-browser end-to-end tests: Debian's chromium, driven by Playwright, against ``streamlit run app.py``.

What only a browser shows: the link in the address bar, Streamlit clearing the
query string on a page switch (and the router putting it back), a slider moved
with the keyboard, a real file download, and that text from a link is shown as
text and never run as script.

Expected numbers (docs/sources.md, docs/capacity.md): DeepSeek V4.1-Flash stores 890 B per token.
With 100 GiB all for KV (utilization 1, no reserve, no weights), 1M tokens and
shared prefix h: the prefix floor(h x 1M) tokens is stored once, each session adds
the rest of its context (no output tokens):

* h = 0.50: prefix 445,000,000 B, tail 445,000,000 B;
  (107,374,182,400 - 445,000,000) // 445,000,000 = 240 sessions per GPU;
* h = 0.51: prefix 510,000 x 890 = 453,900,000 B, tail 490,000 x 890 = 436,100,000 B;
  (107,374,182,400 - 453,900,000) // 436,100,000 = 245.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit

import pytest


ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

LINK = {"model": "deepseek-v4.1-flash", "gpu": "h200", "gpus": "1", "hbm": "100", "util": "1", "reserve": "0",
        "weights": "0", "ctx": "1000000", "out": "0", "hit": "0.5", "shared": "0.5"}
CLI_FLAGS = ["--model", "deepseek-v4.1-flash", "--gpu", "h200", "--gpus-per-replica", "1", "--hbm-gib", "100",
             "--gpu-memory-utilization", "1", "--reserve-gib", "0", "--weights-gib", "0", "--context", "1000000",
             "--output-tokens", "0"]


def _query(page) -> dict[str, str]:
    return dict(parse_qsl(urlsplit(page.evaluate("window.location.href")).query))


def _wait_for(predicate, what: str, timeout_s: float = 15.0):
    """Poll ``predicate`` until it returns a truthy value (Streamlit updates the URL asynchronously)."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def _sessions(page):
    metric = page.get_by_test_id("stMetric").filter(has_text="Sessions per GPU")
    return metric.get_by_test_id("stMetricValue")


def _open(page, base: str, params: dict[str, str], path: str = "/") -> None:
    page.goto(base + path + "?" + urlencode(params))
    _sessions(page).wait_for()


def _cli_csv(shared: str) -> bytes:
    done = subprocess.run([sys.executable, "-c", "import sys; from planner.cli import main; sys.exit(main())",
                           "plan", *CLI_FLAGS, "--hit-rate", "0.5", "--shared-prefix", shared, "--csv", "-"],
                          capture_output=True, check=True, cwd=ROOT)
    return done.stdout


def test_health_endpoint_answers_ok(app_server):
    with urllib.request.urlopen(f"{app_server}/_stcore/health", timeout=5) as r:
        assert r.status == 200 and r.read() == b"ok"


def test_share_link_slider_and_csv_download(app_server, page, tmp_path):
    from playwright.sync_api import expect

    # 1. A share link shows the linked numbers.
    _open(page, app_server, LINK)
    expect(_sessions(page)).to_have_text("240")
    _wait_for(lambda: "fmt" in _query(page), "the canonical link (every field) in the address bar")
    for key, value in LINK.items():
        assert _query(page)[key] == value

    # 2. The shared-prefix slider, moved with the keyboard: the numbers and the URL follow.
    thumb = page.get_by_role("slider", name="Shared prefix")
    thumb.focus()
    thumb.press("ArrowRight")  # step 0.01
    expect(_sessions(page)).to_have_text("245")
    _wait_for(lambda: _query(page).get("shared") == "0.51", "shared=0.51 in the address bar")
    share = page.get_by_test_id("stSidebar").get_by_test_id("stCode")
    expect(share).to_contain_text("shared=0.51")
    assert share.inner_text().strip().startswith(app_server + "/?")

    # 3. The downloaded CSV has the bytes of `kvplan plan --csv -` for the same inputs.
    with page.expect_download() as info:
        page.get_by_role("button", name="Download plan CSV").click()
    downloaded = Path(info.value.path()).read_bytes()
    assert downloaded == _cli_csv("0.51")
    rows = downloaded.decode("utf-8").splitlines()
    assert len(rows) == 2 and dict(zip(rows[0].split(","), rows[1].split(",")))["sessions_per_gpu"] == "245"

    # 4. A screenshot for the record.
    shot = tmp_path / "plan.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


def test_page_switches_keep_the_link_and_the_share_link_reopens_the_page(app_server, page, browser):
    from playwright.sync_api import expect

    _open(page, app_server, {**LINK, "shared": "0.51"})
    expect(_sessions(page)).to_have_text("245")
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Model").click()
    expect(page.get_by_role("heading", name=re.compile("^Model"))).to_be_visible()
    # Streamlit clears the query on a page switch; the router writes the session's inputs back.
    _wait_for(lambda: _query(page).get("shared") == "0.51" and _query(page).get("gpus") == "1",
              "the plan's parameters back in the URL after the page switch")
    share = page.get_by_test_id("stSidebar").get_by_test_id("stCode")
    expect(share).to_contain_text(app_server + "/model?")
    link = share.inner_text().strip()
    assert urlsplit(link).path == "/model" and "page=" not in link

    other = browser.new_context().new_page()  # a colleague opens the link
    try:
        other.goto(link)
        expect(other.get_by_role("heading", name=re.compile("^Model"))).to_be_visible(timeout=60_000)
        _wait_for(lambda: _query(other).get("shared") == "0.51" and "page" not in _query(other),
                  "the linked plan in the colleague's URL, page= consumed")
    finally:
        other.context.close()

    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Plan").click()
    expect(_sessions(page)).to_have_text("245")
    assert _query(page)["shared"] == "0.51"


def test_a_tampered_link_shows_text_never_runs_it(app_server, page):
    from playwright.sync_api import expect

    params = {**LINK, "hit": "2", "model": "<script>window.__kvplan_xss=1</script>",
              "<img src=x onerror=window.__kvplan_xss2=1>": "1"}
    _open(page, app_server, params)
    alerts = page.get_by_test_id("stAlert")
    expect(alerts.filter(has_text="'hit' = '2' is invalid")).to_be_visible()
    expect(alerts.filter(has_text="<script>window.__kvplan_xss=1</script>")).to_be_visible()  # shown as text
    expect(alerts.filter(has_text="<img src=x")).to_be_visible()
    # hit falls back to 0.5 and the model to the default: the linked plan's 240 sessions.
    expect(_sessions(page)).to_have_text("240")
    assert page.evaluate("typeof window.__kvplan_xss") == "undefined"
    assert page.evaluate("typeof window.__kvplan_xss2") == "undefined"
    assert page.locator("script", has_text="__kvplan_xss").count() == 0
    assert page.locator("img[src='x']").count() == 0
    assert page.dialogs == []  # type: ignore[attr-defined]
    _wait_for(lambda: _query(page).get("model") == "deepseek-v4.1-flash", "the URL cleaned of the bad values")
    assert _query(page)["hit"] == "0.5"
    assert not any("<" in k or "<" in v for k, v in _query(page).items())
