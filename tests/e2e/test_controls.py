"""Pages that follow each other and precise controls, in Chromium.

* The Model page starts from the Plan page's model, KV format, GPUs per replica (as TP) and context.
* A value typed beside the HBM slider moves the slider and the numbers; in Spanish it is typed with a decimal comma
  and no number box shows a decimal point.
* The probe's "Run the probe" stays disabled until the CPU run is confirmed (on a server without a GPU).

Expected numbers: DeepSeek V4.1-Flash stores 890 B per token (its model card). With 200 GiB all for KV,
1M tokens, shared prefix 0.5 and no output tokens: prefix 500,000 x 890 = 445,000,000 B stored once, each session
its 445,000,000 B tail: (214,748,364,800 - 445,000,000) // 445,000,000 = 481 sessions per GPU.
"""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from harness import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

LINK = {"model": "deepseek-v4.1-flash", "gpu": "h200", "gpus": "1", "hbm": "100", "util": "1", "reserve": "0",
        "weights": "0", "ctx": "1000000", "out": "0", "hit": "0.5", "shared": "0.5"}


@pytest.fixture
def page1280(browser):
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)  # a loaded 2-core CI machine renders slowly
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(60_000)
    yield ctx.new_page()
    ctx.close()


def _sessions(page):
    return page.get_by_test_id("stMetric").filter(has_text="Sessions per GPU").get_by_test_id("stMetricValue")


def test_model_page_starts_from_the_plan(app_server, page1280):
    from playwright.sync_api import expect

    page = page1280
    link = {**LINK, "model": "llama-3.1-8b", "gpus": "2", "fmt": "fp8", "ctx": "128000"}
    page.goto(f"{app_server}/?" + urlencode(link))
    _sessions(page).wait_for()
    page.get_by_test_id("stSidebarNav").get_by_role("link", name="Model").click()
    expect(page.get_by_role("heading", name=re.compile("^Model"))).to_be_visible()
    expect(page.get_by_role("combobox", name="Model", exact=True)).to_have_value("Llama 3.1 8B")
    expect(page.get_by_role("combobox", name="KV format")).to_have_value("fp8")
    expect(page.get_by_role("spinbutton", name="Tensor parallel (TP)")).to_have_value("2")
    expect(page.get_by_role("textbox", name=re.compile("^Context"))).to_have_value("128,000")


def test_typed_hbm_moves_the_slider_and_the_numbers(app_server, page1280):
    from playwright.sync_api import expect

    page = page1280
    page.goto(f"{app_server}/?" + urlencode(LINK))
    expect(_sessions(page)).to_have_text("240")
    box = page.get_by_role("textbox", name="HBM (GiB), typed")
    box.fill("200")
    box.press("Enter")
    expect(_sessions(page)).to_have_text("481")
    expect(page.get_by_role("slider", name="HBM per GPU (GiB)")).to_have_value("200")


def test_a_bad_english_text_in_a_typed_box_is_one_error(app_server, page1280):
    """English "0,5" in the hit-rate box used to be read as 5 (clamped) or 05; now it is one error naming the field,
    the text and the range, and the figures stay those of the link."""
    from playwright.sync_api import expect

    page = page1280
    page.goto(f"{app_server}/?" + urlencode(LINK))
    expect(_sessions(page)).to_have_text("240")
    box = page.get_by_role("textbox", name="Hit rate, typed")
    box.fill("0,5")
    box.press("Enter")
    error = page.get_by_test_id("stAlertContentError")
    expect(error).to_have_count(1)
    expect(error).to_contain_text("Hit rate, typed: “0,5” is not a number in [0, 1]")
    expect(box).to_have_value("0,5")
    expect(_sessions(page)).to_have_text("240")


NUMBER_BOXES_JS = """() => [...document.querySelectorAll('[data-testid=stNumberInput] input, [data-testid=stTextInput] input')]
    .map(e => (e.getAttribute('aria-label') || '') + ' = ' + e.value)"""


def test_spanish_number_boxes_write_a_decimal_comma(app_server, page1280):
    """Under ?lang=es no number box shows a decimal point ("0.50"), and a typed decimal comma is read as English
    reads the point. Hand arithmetic: 200.5 GiB = 215,285,235,712 B all for KV; (215,285,235,712 - 445,000,000)
    // 445,000,000 = 482 sessions per GPU (482.79)."""
    from playwright.sync_api import expect

    page = page1280
    page.goto(f"{app_server}/?" + urlencode({**LINK, "lang": "es"}))
    sessions = page.get_by_test_id("stMetric").filter(has_text="Sesiones por GPU").get_by_test_id("stMetricValue")
    expect(sessions).to_have_text("240")
    for expander in page.get_by_test_id("stExpander").all():  # the boxes inside the assumptions too
        expander.locator("summary").click()
    expect(page.get_by_role("textbox", name="Pausa media entre turnos (s)")).to_be_visible()
    boxes = page.evaluate(NUMBER_BOXES_JS)
    assert len(boxes) > 10 and not [b for b in boxes if re.search(r"\d\.\d", b)], boxes
    expect(page.get_by_role("textbox", name="Prefijo compartido escrito")).to_have_value("0,50")
    box = page.get_by_role("textbox", name="HBM (GiB), escrita")
    box.fill("200,5")
    box.press("Enter")
    expect(sessions).to_have_text("482")
    expect(box).to_have_value("200,5")


def test_probe_button_waits_for_the_confirmation(app_server, page1280):
    from playwright.sync_api import expect

    page = page1280
    page.goto(f"{app_server}/probe")
    expect(page.get_by_role("heading", name=re.compile("^Live probe"))).to_be_visible()
    status = page.get_by_test_id("stAlert").filter(has_text=re.compile("torch is not installed|No GPU on this server|GPU: "))
    expect(status.first).to_be_visible()  # the page has looked for torch and a GPU
    text = status.first.inner_text()
    if "torch is not installed" in text:
        pytest.skip("no torch on this server: the probe cannot run here")
    if "No GPU on this server" not in text:
        pytest.skip("this server has a GPU: no CPU confirmation to give")
    run = page.get_by_role("button", name="Run the probe")
    confirm = page.get_by_text("Yes, run on this server's CPU")
    expect(confirm).to_be_visible()
    expect(run).to_be_disabled()
    confirm.click()
    expect(run).to_be_enabled()
