"""Streamlit's own uploader words in the page's language, in Chromium.

Streamlit 1.67 writes "Upload", "<limit>MB per file • <TYPES>" and, while a file is dragged over the drop zone,
"Drag and drop a file here" in English. Under ``?lang=es`` every uploader on every page must *show* Spanish:
the text a person sees is each visible text node (font size above 0) plus the ``::before`` / ``::after``
content of its element, read with ``getComputedStyle``; the English words are hidden. In English the same
reading finds Streamlit's words (the check sees text at all).

The limits shown are those the pages check (planner.hf.config.MAX_CONFIG_BYTES = 1,000,000 B -> 1 MB;
planner.engines.logs.MAX_LOG_BYTES = 2,000,000 B -> 2 MB; planner.probe.result.MAX_RESULT_FILE_BYTES =
1,000,000 B -> 1 MB; plan files 64 KiB -> 1 MB; planner.traces.MAX_TRACE_BYTES = 64 MB;
planner.traces.curvefile.MAX_CURVE_FILE_BYTES = 5 MB).
"""

from __future__ import annotations

import re

import pytest

from harness import CHROMIUM

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

SHOWN_TEXT_JS = """zone => {
  const parts = [];
  const pseudo = c => (c && c !== 'none' && c !== 'normal') ? c.replace(/^"|"$/g, '') : '';
  const walk = el => {
    const cs = getComputedStyle(el);
    if (cs.display === 'none' || cs.visibility === 'hidden' || cs.opacity === '0') return;
    const before = pseudo(getComputedStyle(el, '::before').content);
    if (before) parts.push(before);
    for (const n of el.childNodes) {
      if (n.nodeType === 3 && n.textContent.trim() && parseFloat(cs.fontSize) > 0) parts.push(n.textContent.trim());
      if (n.nodeType === 1 && n.tagName !== 'INPUT' && n.getAttribute('data-testid') !== 'stIconMaterial') walk(n);
    }
    const after = pseudo(getComputedStyle(el, '::after').content);
    if (after) parts.push(after);
  };
  walk(zone);
  return parts.join(' | ');
}"""

ENGLISH = re.compile(r"Upload|per file|Drag and drop|Browse files|Limit")


def _open(page, base: str, path: str, query: str) -> None:
    page.goto(f"{base}/{path}?{query}")
    page.get_by_test_id("stSidebar").get_by_test_id("stCode").wait_for()
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000)


def _pick(page, label: str, option: str) -> None:
    page.get_by_test_id("stSelectbox").filter(has_text=label).first.click()
    page.get_by_role("option", name=option).click()


SETUPS = {
    "plan": ("", None, ["1 MB por archivo • JSON"] * 2),  # a plan file, a config.json
    "model": ("model", lambda p: p.get_by_text("Importar config.json").click(), ["1 MB por archivo • JSON"]),
    "traces (trace)": ("traces", lambda p: _pick(p, "Traza", "Subir una traza"),
                       ["64 MB por archivo • JSONL, JSON, CSV, PARQUET, GZ, ZST"]),
    "traces (curve)": ("traces", lambda p: _pick(p, "Traza", "Cargar una curva guardada"), ["5 MB por archivo • JSON"]),
    "reconcile": ("reconcile", None, ["2 MB por archivo • TXT, LOG"] * 2 + ["1 MB por archivo • JSON"]),  # two logs, a config
    "probe": ("probe", None, ["1 MB por archivo • JSON"]),
}
"""Case -> (URL path, what a person does to show the uploader, the instructions each uploader shows)."""


@pytest.fixture
def page1280(browser):
    from playwright.sync_api import expect

    expect.set_options(timeout=60_000)
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.set_default_timeout(60_000)
    yield ctx.new_page()
    ctx.close()


@pytest.mark.parametrize("case", list(SETUPS))
def test_uploader_words_are_spanish_under_lang_es(app_server, page1280, case):
    page = page1280
    path, show, instructions = SETUPS[case]
    _open(page, app_server, path, "lang=es")
    if show is not None:
        show(page)
    zones = page.get_by_test_id("stFileUploaderDropzone")
    zones.nth(len(instructions) - 1).wait_for(state="attached")
    page.wait_for_function("() => !document.querySelector('[data-testid=stStatusWidget]')", timeout=60_000)
    shown = [zones.nth(i).evaluate(SHOWN_TEXT_JS) for i in range(zones.count())]
    assert shown == [f"Subir | {line}" for line in instructions], f"{case}: {shown}"

    # While a file is dragged over a drop zone: the hint in Spanish, the English hidden.
    zone = zones.first
    data = page.evaluate_handle("() => { const d = new DataTransfer(); d.items.add(new File(['x'], 'a.json')); "
                                "return d; }")
    zone.dispatch_event("dragenter", {"dataTransfer": data})
    page.wait_for_function("z => z.querySelector(':scope > div:not([data-testid])')", arg=zone.element_handle())
    dragging = zone.evaluate(SHOWN_TEXT_JS)
    assert "Suelta el archivo aquí" in dragging and not ENGLISH.search(dragging), f"{case} while dragging: {dragging}"


def test_uploader_words_stay_english_in_english(app_server, page1280):
    """The same reading sees Streamlit's own words when no translation applies."""
    page = page1280
    _open(page, app_server, "reconcile", "")
    shown = page.get_by_test_id("stFileUploaderDropzone").first.evaluate(SHOWN_TEXT_JS)
    assert shown == "Upload | 2MB per file | • TXT, LOG"  # two text nodes
