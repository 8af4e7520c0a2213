"""The dashboard as a person sees it, in Chromium at 1280x800 and 1920x1080.

* The Plan page answers the question on the first screen: its inputs (model,
  GPU, context, hit rate, HBM), sessions per GPU and per replica, request rate,
  KV per session and the chart placing the plan, all within the viewport.
* On every page: no text cut short (a metric, label, select or table cell whose
  ``scrollWidth`` exceeds its ``clientWidth``), no chart legend over an axis
  title or tick label, and every chart labels the plan's point.

Screenshots of every page at both sizes go to ``$KVPLAN_SCREENSHOTS`` (a CI
artifact folder) when it is set, else to pytest's temporary folder.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from harness import CHROMIUM, settle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

PAGES = {"plan": "", "model": "model", "traces": "traces", "frontier": "frontier", "context": "context",
         "recommend": "recommend", "reconcile": "reconcile", "probe": "probe"}
"""Page name -> URL path."""

FIRST_SCREEN_LABELS = ("Model", "GPU", "Context (tokens per session)", "Prefix hit rate", "Shared prefix",
                       "HBM per GPU (GiB)")
HEADLINE_METRICS = ("Sessions per GPU", "Sessions per replica", "Request rate per GPU", "KV per session in HBM")

CUT_TEXT_JS = """() => {
  const sel = ['[data-testid=stMetricValue]', '[data-testid=stMetricLabel]', '[data-testid=stWidgetLabel]',
               '[data-testid=stMetricValue] *', '[data-testid=stMetricLabel] *', '[data-testid=stWidgetLabel] *',
               '[data-testid=stSelectbox] input', '[data-testid=stMultiSelect] [data-baseweb=tag] *',
               '[data-testid=stNumberInput] input', '[data-testid=stTextInput] input',
               '[data-testid=stTable] th', '[data-testid=stTable] td',
               '[data-testid=stCaptionContainer]', '[data-testid=stExpander] summary *'].join(',');
  const text = e => (e.tagName === 'INPUT' ? e.value : e.innerText) || '';
  return [...document.querySelectorAll(sel)]
    .filter(e => e.offsetParent !== null && text(e).trim())
    .filter(e => e.scrollWidth > e.clientWidth + 1)
    .map(e => text(e).trim().slice(0, 80));
}"""

LEGEND_OVERLAP_JS = """() => {
  const out = [];
  const hit = (a, b) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  document.querySelectorAll('.js-plotly-plot').forEach((plot, i) => {
    const legend = plot.querySelector('.legend .bg') || plot.querySelector('.legend');
    if (!legend) return;
    const box = legend.getBoundingClientRect();
    if (box.width === 0) return;
    plot.querySelectorAll('.xtitle, .ytitle, .xtick text, .ytick text, .y2title, .colorbar').forEach(el => {
      const r = el.getBoundingClientRect();
      if (r.width > 0 && hit(box, r)) out.push(`chart ${i}: legend over '${(el.textContent || '').slice(0, 40)}'`);
    });
  });
  return out;
}"""

PLAN_LABELS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter(p => p.getBoundingClientRect().width > 0)
  .map(p => [...p.querySelectorAll('.annotation-text, .legendtext')].some(t => /plan/i.test(t.textContent)))"""


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """Where screenshots go: ``$KVPLAN_SCREENSHOTS`` or a temporary folder."""
    folder = Path(os.environ.get("KVPLAN_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def screenshot(page, path: Path) -> None:
    """The whole page: the viewport is stretched to the app's scroll height for the shot, then put back."""
    size = page.viewport_size
    height = page.evaluate("() => (document.querySelector('[data-testid=stMain]') || document.body).scrollHeight")
    page.set_viewport_size({"width": size["width"], "height": max(size["height"], min(int(height), 12_000))})
    page.wait_for_timeout(500)  # plotly relayouts on resize
    page.screenshot(path=str(path))
    page.set_viewport_size(size)


def open_page(page, base: str, path: str, query: str = "") -> None:
    page.goto(f"{base}/{path}" + (f"?{query}" if query else ""))
    settle(page)


def test_plan_first_screen_answers_the_question(app_server, browser):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(60_000)
    try:
        page = ctx.new_page()
        open_page(page, app_server, "")
        below = []
        for label in FIRST_SCREEN_LABELS:
            box = page.get_by_test_id("stWidgetLabel").filter(has_text=re.compile("^" + re.escape(label))).first \
                .bounding_box()
            if box is None or box["y"] + box["height"] > 800:
                below.append(f"input '{label}' at {box}")
        for label in HEADLINE_METRICS:
            box = page.get_by_test_id("stMetric").filter(has_text=label).first.bounding_box()
            if box is None or box["y"] + box["height"] > 800:
                below.append(f"metric '{label}' at {box}")
        chart = page.locator(".js-plotly-plot").first.bounding_box()
        if chart is None or chart["y"] + chart["height"] > 800:
            below.append(f"chart at {chart}")
        assert not below, "below the first screen at 1280x800: " + "; ".join(below)
        kv = page.get_by_test_id("stMetric").filter(has_text="KV per session in HBM").get_by_test_id("stMetricValue")
        assert re.fullmatch(r"[\d.,]+ GB \([\d.,]+ GiB\)", kv.inner_text().strip())
    finally:
        ctx.close()


@pytest.mark.parametrize("name", list(PAGES))
def test_every_page_reads_without_cut_text_or_covered_axes(app_server, sized, shots, name):
    page = sized
    open_page(page, app_server, PAGES[name])
    problems = [f"cut: {t!r}" for t in page.evaluate(CUT_TEXT_JS)]
    problems += page.evaluate(LEGEND_OVERLAP_JS)
    unlabelled = [i for i, ok in enumerate(page.evaluate(PLAN_LABELS_JS)) if not ok]
    problems += [f"chart {i}: the plan is not labelled" for i in unlabelled]
    screenshot(page, shots / f"{name}-{page.size_name}-en.png")
    assert not problems, f"{name} at {page.size_name}: " + "; ".join(problems)


ENGLISH_ONLY_JS = """english => {
  const sel = ['[data-testid=stWidgetLabel]', '[data-testid=stMetricLabel]', '[data-testid=stExpander] summary',
               'h1', 'h2', 'h3', '[data-testid=stSidebarNav] a', '[data-testid=stCaptionContainer]'].join(',');
  const seen = [...document.querySelectorAll(sel)].filter(e => e.offsetParent !== null)
    .map(e => (e.innerText || '').trim()).filter(Boolean);
  return seen.filter(text => english.some(en => text === en || text.startsWith(en + ' ')));
}"""


@pytest.mark.parametrize("name", list(PAGES))
def test_spanish_pages_have_no_english_label_left(app_server, sized, shots, name):
    """``?lang=es``: no label, metric, heading, expander or caption shows an English catalogue string."""
    from babel.messages.pofile import read_po

    with open(Path(__file__).resolve().parents[2] / "kvplan_app/locales/es/LC_MESSAGES/kvplan.po", "rb") as f:
        catalogue = read_po(f)
    page = sized
    open_page(page, app_server, PAGES[name], "lang=es")
    english = sorted({m.id for m in catalogue if isinstance(m.id, str) and m.id and not m.context and m.id != m.string
                      and len(m.id) > 3 and "{" not in m.id}, key=len, reverse=True)
    left = page.evaluate(ENGLISH_ONLY_JS, english)
    assert not left, f"{name} in Spanish at {page.size_name} still shows: {left}"
    problems = [f"cut: {t!r}" for t in page.evaluate(CUT_TEXT_JS)]
    assert not problems, f"{name} in Spanish at {page.size_name}: " + "; ".join(problems)
    share = page.get_by_test_id("stSidebar").get_by_test_id("stCode").inner_text()
    screenshot(page, shots / f"{name}-{page.size_name}-es.png")
    assert "lang=es" in share
