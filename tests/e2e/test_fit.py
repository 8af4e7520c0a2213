"""Text that a page draws outside the DOM's reach is not cut either: multiselect chips and table headers.

In Chromium at 1280x800 and 1920x1080, English and Spanish, on every page:

* **Chips.** Streamlit 1.67's multiselect puts its chips on one line that scrolls sideways: a chip past the
  box's edge is cut (the box's ``scrollWidth`` exceeds its ``clientWidth``), as is a chip whose own text
  is shortened (its span's ``scrollWidth`` exceeds its ``clientWidth``).
* **Tables.** ``st.dataframe`` draws on a canvas, so ``scrollWidth`` does not see a header. The column widths
  come from the grid component's own ``columns`` (glide-data-grid, found from the canvas through React's
  fiber); each header's text is measured with canvas ``measureText`` in the grid's header font, plus the
  cell padding on both sides, against its column's width. A grid that scrolls sideways hides its
  right-hand columns: that counts as cut too.

Labels and placeholders: a checkbox's label, a widget label or an expander title whose text box is
narrower than its text, and an empty box whose placeholder is wider than the room inside it.

Charts number in the page's language: plotly's separators of every chart shown are ``.,`` in English and
``,.`` in Spanish (decimal comma, thousands point), read from the chart's own ``_fullLayout``.

Every expander is opened first. The Reconcile page is checked with its bundled example loaded (its tables
appear only then).
"""

from __future__ import annotations

import pytest

from harness import CHROMIUM, settle

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium"),
]

PAGES = {"plan": "", "model": "model", "traces": "traces", "frontier": "frontier", "context": "context",
         "recommend": "recommend", "reconcile": "reconcile", "probe": "probe"}

SHOWN = "const shown = e => e.checkVisibility();  // false inside a closed expander, a hidden tab, a <template>"

CUT_CHIPS_JS = """() => {
  """ + SHOWN + """
  const out = [];
  document.querySelectorAll('[data-testid=stMultiSelect]').forEach(m => {
    if (!shown(m)) return;
    const label = ((m.querySelector('[data-testid=stWidgetLabel]') || {}).innerText || '').trim();
    m.querySelectorAll('[data-testid=stMultiSelectTagsContainer]').forEach(box => {
      if (!shown(box)) return;  // Streamlit keeps a copy in a <template>
      if (box.scrollWidth > box.clientWidth + 1)
        out.push(`${label}: chips ${box.scrollWidth}px wide in a ${box.clientWidth}px box`);
      box.querySelectorAll('[data-tag] > span, [data-baseweb=tag] span').forEach(s => {
        if (s.scrollWidth > s.clientWidth + 1) out.push(`${label}: chip '${s.textContent}' shortened`);
      });
    });
  });
  return out;
}"""

CUT_HEADERS_JS = """() => {
  """ + SHOWN + """
  const out = [];
  const ctx = document.createElement('canvas').getContext('2d');
  document.querySelectorAll('[data-testid=stDataFrame]').forEach((d, i) => {
    if (!shown(d)) return;
    const canvas = d.querySelector('canvas[data-testid=data-grid-canvas]');
    if (!canvas) { out.push(`table ${i}: no grid canvas`); return; }
    const key = Object.keys(canvas).find(k => k.startsWith('__reactFiber'));
    let f = key && canvas[key], cols = null, theme = null;
    for (let depth = 0; f && depth < 60 && !cols; depth++, f = f.return) {
      const p = f.memoizedProps || {};
      if (Array.isArray(p.columns) && p.columns.length
          && p.columns.every(c => typeof c.width === 'number' && 'title' in c)) { cols = p.columns; theme = p.theme; }
    }
    if (!cols) { out.push(`table ${i}: column widths not found`); return; }
    ctx.font = theme && theme.headerFontStyle && theme.fontFamily ? `${theme.headerFontStyle} ${theme.fontFamily}`
      : '600 14px "Source Sans", sans-serif';
    const pad = 2 * ((theme && theme.cellHorizontalPadding) || 8);
    cols.forEach(c => {
      const need = Math.ceil(ctx.measureText(c.title || '').width) + pad;
      if (c.title && need > c.width + 1) out.push(`table ${i}: header '${c.title}' needs ${need}px, has ${Math.round(c.width)}px`);
    });
    const s = d.querySelector('.dvn-scroller');
    if (s && s.scrollWidth > s.clientWidth + 1) {
      let x = 0; const hidden = [];
      cols.forEach(c => { if (x + c.width > s.clientWidth + 1) hidden.push(c.title); x += c.width; });
      out.push(`table ${i}: ${s.scrollWidth}px of columns in ${s.clientWidth}px, cut: ${hidden.join(' | ')}`);
    }
  });
  return out;
}"""


CUT_LABELS_JS = """() => {
  """ + SHOWN + """
  const out = [];
  const ctx = document.createElement('canvas').getContext('2d');
  const text = e => (e.innerText || '').trim();
  // a checkbox's or toggle's label (its text box may end in an ellipsis), a widget label, an expander's title
  document.querySelectorAll('[data-testid=stCheckbox] label *, [data-testid=stWidgetLabel] *, '
                            + '[data-testid=stExpander] summary *').forEach(e => {
    if (!shown(e) || !text(e)) return;
    if (e.scrollWidth > e.clientWidth + 1) out.push(`label '${text(e).slice(0, 60)}' cut`);
  });
  // an empty box's placeholder, measured in the box's own font against the room inside its padding
  document.querySelectorAll('input[placeholder]').forEach(e => {
    if (!shown(e) || e.value || !e.placeholder) return;
    const st = getComputedStyle(e);
    ctx.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
    const room = e.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
    const need = ctx.measureText(e.placeholder).width;
    if (need > room + 1) out.push(`placeholder '${e.placeholder}' needs ${Math.ceil(need)}px, has ${Math.floor(room)}px`);
  });
  return out;
}"""


CHART_SEPARATORS_JS = """() => [...document.querySelectorAll('.js-plotly-plot')].filter(p => p.checkVisibility())
  .map(p => p._fullLayout ? p._fullLayout.separators : 'not drawn')"""


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("name", list(PAGES))
def test_no_chip_or_table_header_is_cut_and_charts_number_in_the_language(app_server, sized, name, lang):
    page = sized
    page.goto(f"{app_server}/{PAGES[name]}" + ("?lang=es" if lang == "es" else ""))
    settle(page)
    if name == "reconcile":
        page.get_by_role("button", name="Load the example" if lang == "en" else "Cargar el ejemplo").first.click()
        page.locator("[data-testid=stTable], [data-testid=stDataFrame]").first.wait_for()  # its tables wrap: st.table
        settle(page)
    summaries = page.locator("[data-testid=stExpander] summary")  # what an expander holds is checked open
    for i in range(summaries.count()):
        summaries.nth(i).click()
    settle(page)
    frames = page.get_by_test_id("stDataFrame")
    for i in range(frames.count()):  # a grid far below the fold may draw its canvas only once scrolled to
        if frames.nth(i).is_visible():
            frames.nth(i).scroll_into_view_if_needed()
            frames.nth(i).locator("canvas[data-testid=data-grid-canvas]").wait_for(state="attached")
    page.wait_for_timeout(300)
    problems = page.evaluate(CUT_CHIPS_JS) + page.evaluate(CUT_HEADERS_JS) + page.evaluate(CUT_LABELS_JS)
    want = ",." if lang == "es" else ".,"
    problems += [f"chart {i}: separators {got!r}, not {want!r}" for i, got in enumerate(page.evaluate(CHART_SEPARATORS_JS))
                 if got != want]
    assert not problems, f"{name} ({lang}) at {page.size_name}: " + "; ".join(problems)
